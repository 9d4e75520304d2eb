/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in (tests/kshim/README). */
#include <asm/extable.h>

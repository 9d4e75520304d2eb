/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in (tests/kshim/README): 6.1's value. */
#ifndef KSHIM_ASM_EXTABLE_FIXUP_TYPES_H
#define KSHIM_ASM_EXTABLE_FIXUP_TYPES_H
#define EX_TYPE_BPF	3
#endif

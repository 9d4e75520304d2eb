/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in (tests/kshim/README): the test defines it. */
#ifndef KSHIM_LINUX_UACCESS_H
#define KSHIM_LINUX_UACCESS_H
#include <stddef.h>
long copy_from_kernel_nofault(void *dst, const void *src, size_t size);
#endif

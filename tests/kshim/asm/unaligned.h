/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in (tests/kshim/README): only the u64 reads used. */
#ifndef KSHIM_ASM_UNALIGNED_H
#define KSHIM_ASM_UNALIGNED_H
#include <stdint.h>
#include <string.h>
static inline uint64_t kshim_get_unaligned_u64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}
#define get_unaligned(p) kshim_get_unaligned_u64(p)
#endif

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Error texts: strerror, and the likely cause of a failed arena creation. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *lbpfa_strerror(int err, char *buf, size_t len)
{
	if (err < 0)
		err = -err;
	/* The GNU strerror_r (we build with _GNU_SOURCE) may return a static string. */
	return strerror_r(err, buf, len);
}

#define KNOWN_FLAGS (BPF_ARENA_F_MMAPABLE | BPF_ARENA_F_SEGV_ON_FAULT | BPF_ARENA_F_NO_USER_CONV)

/*
 * The upstream rules (kernel/bpf/arena.c, arena_map_alloc()) in the order the
 * kernel applies them, so the first matching one is the cause.
 */
const char *lbpfa_create_hint(int err, const struct lbpfa_params *p)
{
	__u64 bytes = (__u64)p->page_cnt * lbpfa_page_size();

	switch (-err) {
	case EINVAL:
		if (!p->page_cnt)
			return "page_cnt is 0";
		if (p->map_flags & ~KNOWN_FLAGS)
			return "map_flags holds a flag that arena maps do not accept "
			       "(only BPF_F_SEGV_ON_FAULT and BPF_F_NO_USER_CONV; BPF_F_MMAPABLE is implied)";
		if (p->map_extra & (lbpfa_page_size() - 1))
			return "map_extra (the fixed user address) is not page aligned";
		if (!bpf_arena_kernel_has_native() && !lbpfa_module_present())
			return "this kernel has no BPF arena (map type 33): load the bpf_arena module";
		return "the kernel rejected the arena's attributes";
	case E2BIG:
		if (bytes > BPF_ARENA_MAX_BYTES)
			return "page_cnt pages exceed the 4 GiB arena limit";
		return "the arena is too big";
	case ERANGE:
		return "the range [map_extra, map_extra + size) crosses a 4 GiB boundary";
	case EPERM:
	case EACCES:
		return "creating an arena needs CAP_BPF (or CAP_SYS_ADMIN)";
	case ENOMEM:
		return "out of memory (or of kernel address space: an arena reserves 4 GiB)";
	case EOPNOTSUPP:
		return "the kernel's BPF JIT does not support arena on this architecture";
	default:
		return "the kernel refused";
	}
}

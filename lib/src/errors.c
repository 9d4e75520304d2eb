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
 * kernel applies them, so the first matching one is the cause; in the
 * caller's numbers.  Written into buf (BA_HINT_LEN bytes).
 */
const char *lbpfa_create_hint(int err, const struct lbpfa_params *p, char *buf, size_t len)
{
	__u64 page = lbpfa_page_size(), bytes = (__u64)p->page_cnt * page;

	switch (-err) {
	case EINVAL:
		if (!p->page_cnt)
			return "0 pages: an arena has at least 1";
		if (p->map_flags & ~KNOWN_FLAGS) {
			snprintf(buf, len, "map_flags 0x%x holds 0x%x, which arena maps do not "
				 "accept (only BPF_F_SEGV_ON_FAULT and BPF_F_NO_USER_CONV; "
				 "BPF_F_MMAPABLE is implied)", p->map_flags,
				 p->map_flags & ~KNOWN_FLAGS);
			return buf;
		}
		if (p->map_extra & (page - 1)) {
			snprintf(buf, len, "the fixed user address (map_extra) 0x%llx is not a "
				 "multiple of the page size (%llu)", (unsigned long long)p->map_extra,
				 (unsigned long long)page);
			return buf;
		}
		if (lbpfa_no_arena_text(buf, len))
			return buf;
		return "the kernel rejected the arena's attributes";
	case E2BIG:
		if (bytes > BPF_ARENA_MAX_BYTES) {
			snprintf(buf, len, "%u pages (%llu MiB) exceed the 4 GiB limit of an arena "
				 "(%llu pages)", p->page_cnt, (unsigned long long)(bytes >> 20),
				 (unsigned long long)(BPF_ARENA_MAX_BYTES / page));
			return buf;
		}
		return "the arena is too big";
	case ERANGE:
		snprintf(buf, len, "the range [0x%llx, 0x%llx) of the fixed user address "
			 "(map_extra) crosses a 4 GiB boundary", (unsigned long long)p->map_extra,
			 (unsigned long long)(p->map_extra + bytes));
		return buf;
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

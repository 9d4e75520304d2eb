/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htab.h: what htab.bpf.c and htab.c share: the table's layout in the arena
 * and the argument struct of the SEC("syscall") programs.  Every pointer
 * stored in the arena is a user address, so user space follows it as it is;
 * bpf_arena.h makes __arena and the casts empty in user space.
 */
#ifndef HTAB_H
#define HTAB_H

#include <linux/types.h>
#include "bpf_arena.h"

#define HTAB_BUCKETS 256	/* the bucket heads fill half a page */

struct htab_elem {
	struct arena_list_node node;	/* first: a node pointer is the element's */
	__u64 key;
	__u64 value;
};

struct htab {
	__u64 count;			/* elements in the table */
	struct arena_list_head buckets[HTAB_BUCKETS];
};

/* The programs' context: bpf_prog_test_run_opts() copies it in and back out. */
struct htab_args {
	__u64 key;
	__u64 value;	/* in: htab_update; out: htab_lookup */
	__u64 table;	/* out: user address of struct htab */
};

/* Fibonacci hashing: the top 8 bits of key * 2^64/phi pick the bucket. */
static inline __u32 htab_bucket(__u64 key)
{
	return (__u32)((key * 0x9E3779B97F4A7C15ULL) >> 56);
}

/* What the programs return (run.retval). */
enum { HTAB_OK = 0, HTAB_NOMEM = 1, HTAB_NOENT = 2 };

#endif

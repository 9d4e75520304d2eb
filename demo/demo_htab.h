/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The demo's hash table, shared by the BPF program (demo/htab.bpf.c) and
 * user space (demo/bpf_arena_demo.c).  All of it lives in the arena, and every
 * pointer stored in it is a user address, so user space follows the pointers
 * the program wrote with plain C.  (bpf_arena.h makes __arena empty outside
 * BPF.)
 */
#ifndef DEMO_HTAB_H
#define DEMO_HTAB_H

#include <linux/types.h>
#include "bpf_arena.h"

#define DEMO_KEYS	32	/* keys 1..DEMO_KEYS, value key * key */
#define DEMO_BITS	3
#define DEMO_BUCKETS	(1U << DEMO_BITS)

/* Knuth's multiplicative hash: the top DEMO_BITS bits of key * 2^32/phi. */
static inline __u32 demo_bucket_of(__u32 key)
{
	return (key * 2654435761U) >> (32 - DEMO_BITS);
}

struct demo_elem {
	struct demo_elem __arena *next;	/* next in the bucket's chain, or NULL */
	__u32 key;
	__u32 bucket;
	__u64 value;
};
typedef struct demo_elem __arena demo_elem_t;

struct demo_htab {
	demo_elem_t * __arena *buckets;	/* n_buckets chain heads */
	__u32 n_buckets;
	__u32 count;			/* elements inserted */
	__u64 sum;			/* of all values */
};

/* The program's context (bpf_prog_test_run_opts ctx_in, copied back). */
struct demo_args {
	__u64 keys;	/* in: how many keys to insert (1..DEMO_KEYS) */
	__u64 htab;	/* out: user address of struct demo_htab */
	__u64 err;	/* out: 0, or the step that failed (DEMO_ERR_*) */
};

enum { DEMO_ERR_ALLOC_HTAB = 1, DEMO_ERR_ALLOC_BUCKETS, DEMO_ERR_ALLOC_ELEM, DEMO_ERR_ARGS };

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the BPF test programs (tests/progs/NAME.bpf.c) and
 * tests/arena_prog_test.c: the context structs the SEC("syscall") programs
 * get through bpf_prog_test_run_opts(ctx_in) (copied back to ctx_out), and
 * the data structures both sides walk.  Pointers in them are user addresses.
 */
#ifndef ARENA_PROG_COMMON_H
#define ARENA_PROG_COMMON_H

#include <linux/types.h>
#include "bpf_arena.h"

/* Error codes the programs return through ctx->err (0: fine). */
enum { ERR_ALLOC = 1, ERR_STATE = 2, ERR_WALK = 3 };

/* arena_list.bpf.c */
struct list_elem {
	struct arena_list_node node;
	__u64 value;
};

struct list_args {
	__u64 cnt;	/* in: elements to add */
	__u64 head;	/* in (list_sum): head built by user space; out (add): the program's */
	__s64 sum;	/* out: sum of values walked */
	__u64 n;	/* out: elements walked */
	__u64 err;	/* out */
};

/* arena_htab.bpf.c */
#define HTAB_KEYS	1000
#define HTAB_ROUNDS	10	/* each key is updated HTAB_ROUNDS + 1 times */

struct htab_bucket {
	struct arena_list_head head;
};
typedef struct htab_bucket __arena htab_bucket_t;

struct htab {
	htab_bucket_t *buckets;
	int n_buckets;
};

struct hashtab_elem {
	int hash;
	int key;
	int value;
	struct arena_list_node hash_node;
};
typedef struct hashtab_elem __arena hashtab_elem_t;

struct htab_args {
	__u64 htab;	/* out: user address of struct htab */
	__u64 err;	/* out */
};

/* verifier_arena*.bpf.c, arena_fault.bpf.c */
struct fault_args {
	__u64 addr;	/* in */
	__u64 addr2;	/* in */
	__u64 addr3;	/* in */
	__u64 val;	/* out */
	__u64 val2;	/* out */
	__u64 val3;	/* out */
};

#endif

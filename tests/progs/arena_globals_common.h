/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by tests/progs/arena_globals*.bpf.c and tests/arena_globals_test.c: the
 * SEC("syscall") context structs (bpf_prog_test_run_opts ctx_in/ctx_out) and
 * constants.  Pointers in them are user addresses.
 */
#ifndef ARENA_GLOBALS_COMMON_H
#define ARENA_GLOBALS_COMMON_H

#include <linux/types.h>

/* arena_globals.bpf.c: map_extra in the object (64 bits: __ulong, libbpf >= 1.4) */
#define AG_MAP_EXTRA	(1ULL << 44)
#define AG_PAGES	64
#define AG_ZERO_N	1024	/* __u64 zero_arr[]: 8 KiB, two pages */
#define AG_INIT_VAL	5

#include "bpf_arena.h"

/* a list element (arena_globals.bpf.c) */
struct ag_elem {
	struct arena_list_node node;
	__u64 value;
};

/* Error codes the programs return through ctx->err (0: fine). */
enum { AG_ERR_ALLOC = 1, AG_ERR_STATE = 2, AG_ERR_WALK = 3, AG_ERR_VALUE = 4 };

struct ag_args {
	__u64 in;	/* in */
	__u64 idx;	/* in */
	__u64 val;	/* out */
	__u64 sum;	/* out */
	__u64 n;	/* out */
	__u64 err;	/* out */
	__u64 addr;	/* out */
};

/* arena_globals_htab.bpf.c */
#define AGH_PAGES	256
#define AGH_ARR_SZ	100000	/* char __arena arr1[100000], as upstream */
#define AGH_KEYS	1000
#define AGH_ROUNDS	2	/* each key is updated AGH_ROUNDS + 1 times */

#endif

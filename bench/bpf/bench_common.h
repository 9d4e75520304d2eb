/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by bench/bpf/bench_arena.bpf.c and bench/arena_bench.c. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <linux/types.h>

#define BENCH_ARENA_PAGES	8192	/* 32 MiB: 100k list elements, htab, 512-page allocs */
#define BENCH_HTAB_KEYS		1000

struct bench_args {
	__u64 cnt;	/* in: iterations */
	__u64 pages;	/* in: pages per alloc (alloc_free) */
	__u64 n;	/* out: iterations done / elements walked */
	__u64 err;	/* out: 0 or ERR_* */
};

#endif

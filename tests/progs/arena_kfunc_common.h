/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by tests/progs/arena_reserve.bpf.c, arena_kfunc_any_ctx.bpf.c,
 * arena_any_ctx_alloc.bpf.c and their tests (tests/arena_reserve_test.c,
 * tests/arena_kfunc_any_ctx_test.c, tests/arena_any_ctx_alloc_test.c).
 */
#ifndef ARENA_KFUNC_COMMON_H
#define ARENA_KFUNC_COMMON_H

#define KF_PG		4096ULL
/* As upstream's verifier_arena.c: 2 pages right below a 4 GiB boundary. */
#define RESV_PAGES	2
#define RESV_MAP_EXTRA	((1ULL << 44) | (0xffffffffULL - RESV_PAGES * KF_PG + 1))
#define RESV_BASE	RESV_MAP_EXTRA

/* arena_kfunc_any_ctx.bpf.c: a 4096-page arena at a fixed address. */
#define ANY_PAGES	4096
#define ANY_MAP_EXTRA	(1ULL << 45)

/* What the any-context programs count (in .bss, read by the test). */
struct any_stats {
	__u64 runs;
	__u64 allocs;		/* non-NULL results */
	__u64 fails;		/* NULL results */
	__u64 bad_data;		/* a fresh page was not zero, or a write did not stick */
	__u64 nested_calls;	/* calls made from inside the arena's locked section */
	__u64 nested_allocs;	/* ... that returned a page (must stay 0) */
	__s64 nested_reserve;	/* last nested reserve's result */
};

/* What arena_any_ctx_alloc.bpf.c counts (in .bss, read by the test). */
struct rv_stats {
	__u64 runs;
	__u64 allocs;
	__u64 fails;
	__u64 bad_data;
	__u64 kept_pages;
	__u64 memalloc_runs;	/* calls made with PF_MEMALLOC set */
	__u64 memalloc_pages;	/* pages those calls got */
	__u64 control_pages;	/* pages the control (no PF_MEMALLOC) got */
	__u64 min_stack_left;	/* bytes between the program's frame and the task stack's end */
	__u64 hits[24];		/* per attach point: runs that got pages */
};

#endif /* ARENA_KFUNC_COMMON_H */

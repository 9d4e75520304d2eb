/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_KFUNC_H
#define BPF_ARENA_KFUNC_H

#include <linux/types.h>

enum arena_kfunc_id {
	ARENA_KFUNC_ALLOC,	/* bpf_arena_alloc_pages (upstream prototype) */
	ARENA_KFUNC_FREE,	/* bpf_arena_free_pages */
	ARENA_KFUNC_ALLOC_PH,	/* bpf_arena_alloc_pages_ph (sleepable programs call it) */
	ARENA_KFUNC_FREE_PH,
	ARENA_KFUNC_ALLOC_MAP,	/* bpf_arena_alloc_pages_map (map known at run time) */
	ARENA_KFUNC_FREE_MAP,
	ARENA_KFUNC_RESERVE,	/* bpf_arena_reserve_pages (upstream 6.17 prototype) */
	ARENA_KFUNC_RESERVE_PH,	/* any program */
	/* Non-sleepable programs (arena_nosleep.c): */
	ARENA_KFUNC_ALLOC_NOSLEEP_PH,	/* XDP, TC, SYSCALL: pool, then GFP_NOWAIT */
	ARENA_KFUNC_ALLOC_ANY_PH,	/* tracing, struct_ops: the pool only */
	ARENA_KFUNC_FREE_NOSLEEP_PH,	/* any non-sleepable program: deferred unmap */
	/*
	 * Open-coded number iterators (bpf_for/bpf_repeat, upstream 6.4): in
	 * the module's BTF for libbpf only, never registered; the lowering
	 * replaces each call with inline code (rewrite/lower.c).
	 */
	ARENA_KFUNC_ITER_NEW,
	ARENA_KFUNC_ITER_NEXT,
	ARENA_KFUNC_ITER_DESTROY,
	ARENA_KFUNC_NR
};

/* The function's id in the module's BTF; 0 if the module has no BTF. */
u32 arena_kfunc_btf_id(enum arena_kfunc_id which);
/* Registers the placeholders; without module BTF only warns. */
int arena_kfunc_init(void);
/*
 * Module parameter kfuncs_sleepable_only: true restores 6.12's rule (the
 * arena kfuncs only in sleepable programs).
 */
bool arena_kfuncs_sleepable_only(void);

#endif /* BPF_ARENA_KFUNC_H */

/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_KFUNC_H
#define BPF_ARENA_KFUNC_H

#include <linux/types.h>

enum arena_kfunc_id {
	ARENA_KFUNC_ALLOC,	/* bpf_arena_alloc_pages (upstream prototype) */
	ARENA_KFUNC_FREE,	/* bpf_arena_free_pages */
	ARENA_KFUNC_ALLOC_PH,	/* bpf_arena_alloc_pages_ph (what programs call) */
	ARENA_KFUNC_FREE_PH,
	ARENA_KFUNC_ALLOC_MAP,	/* bpf_arena_alloc_pages_map (map known at run time) */
	ARENA_KFUNC_FREE_MAP,
	ARENA_KFUNC_NR
};

/* The function's id in the module's BTF; 0 if the module has no BTF. */
u32 arena_kfunc_btf_id(enum arena_kfunc_id which);
/* Registers the placeholders; without module BTF only warns. */
int arena_kfunc_init(void);

#endif /* BPF_ARENA_KFUNC_H */

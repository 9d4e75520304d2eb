/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: the LOWERING pass, run on a program before the stock verifier.
 *
 * bpfa_lower() types every register and stack slot from the instructions alone
 * (arena pointer or not), then rewrites arena casts, 64-bit ALU on arena pointers,
 * accesses through arena pointers (into the placeholders of docs/PLACEHOLDERS.md),
 * arena map / arena global ld_imm64 and the arena kfunc calls.  Jump, call and
 * callback offsets are fixed for the grown program.  Plain C: no libc beyond
 * memset/memcpy, no allocation but through env, O(1) stack.
 */
#ifndef BPFA_LOWER_H
#define BPFA_LOWER_H

#include "insn.h"

#define BPFA_MAX_INSNS	1000000		/* BPF_COMPLEXITY_LIMIT_INSNS */
#define BPFA_MSG_LEN	320

enum bpfa_ld_kind { BPFA_LD_OTHER, BPFA_LD_ARENA_MAP, BPFA_LD_ARENA_VALUE };
enum bpfa_kf_kind {
	BPFA_KF_OTHER, BPFA_KF_ALLOC, BPFA_KF_FREE, BPFA_KF_RESERVE,
	/* bpf_iter_num_new/next/destroy (bpf_for, bpf_repeat): replaced by inline code */
	BPFA_KF_ITER_NEW, BPFA_KF_ITER_NEXT, BPFA_KF_ITER_DESTROY,
};


struct bpfa_lower_env {
	void *ctx;
	void *(*zalloc)(void *ctx, size_t size);	/* zeroed memory or NULL */
	void (*free)(void *ctx, void *p);
	/*
	 * insn[0..1] is an ld_imm64 whose src_reg is BPF_PSEUDO_MAP_FD/IDX/VALUE/IDX_VALUE:
	 * does it name the arena?  ARENA_MAP is only valid for MAP_FD/MAP_IDX,
	 * ARENA_VALUE only for MAP_VALUE/MAP_IDX_VALUE (else the lowering fails).
	 */
	enum bpfa_ld_kind (*classify_ldimm64)(void *ctx, const struct bpf_insn *insn);
	/* BPF_JMP|BPF_CALL with src_reg BPF_PSEUDO_KFUNC_CALL: an arena kfunc? */
	enum bpfa_kf_kind (*classify_kfunc)(void *ctx, const struct bpf_insn *insn);
	/*
	 * insn[0..1] is an ld_imm64 BPF_PSEUDO_BTF_ID (a typed ksym; for a
	 * function, libbpf's bpf_ksym_exists()): does it name one of the
	 * module's iterator functions?  Those become the constant 1, since 6.1
	 * has no ld_imm64 of a function ("isn't KIND_VAR").  May be NULL.
	 */
	enum bpfa_kf_kind (*classify_ksym)(void *ctx, const struct bpf_insn *insn);
	/*
	 * insn[0..1] is an ld_imm64 BPF_PSEUDO_MAP_FD/IDX: the map's key and
	 * value sizes, true if known.  May be NULL (then unknown): the
	 * iterator checks (lower_iter_state.c) only take them as bounds of
	 * what a helper reads through a stack pointer.
	 */
	bool (*map_sizes)(void *ctx, const struct bpf_insn *insn, __u32 *key, __u32 *value);
	__u64 user_vm_start, arena_size;	/* arena global: user_vm_start + off, off < size */
	bool no_user_conv;			/* arena has BPF_F_NO_USER_CONV */
	bool sleepable;				/* the arena kfuncs may be called */
	__s32 companion_fd;			/* imm of the placeholders' MAP_VALUE ld_imm64 */
	/*
	 * map_view: an arena ld_imm64 MAP_FD/MAP_IDX becomes ld_imm64 MAP_FD
	 * view_fd (a real map pointer for the verifier, module/prog_view.c);
	 * otherwise the constant 0.
	 */
	bool map_view;
	__s32 view_fd;
	__s32 kf_alloc_ph_id, kf_free_ph_id;	/* BTF ids the kfunc calls are switched to */
	__s32 kf_alloc_map_id, kf_free_map_id;	/* ... when R1 is not the arena map */
	__s32 kf_reserve_ph_id;
};

struct bpfa_lower_result {
	struct bpf_insn *insns;		/* env->zalloc'ed, caller frees with env->free */
	__u32 len;
	__u32 *new_idx;			/* old index -> new index, old len + 1 entries */
	__u32 placeholders;		/* placeholders emitted */
	bool uses_arena;		/* an arena ld_imm64, cast or kfunc was found */
	/*
	 * An arena kfunc gets a map pointer that is not the program's arena
	 * nor a field of its context: 6.12 refuses it as untrusted once its
	 * type checked out; the caller does (first such call at untrusted_insn).
	 */
	bool untrusted_map_arg;
	__u32 untrusted_insn;
	__u32 err_insn;			/* original index of the error */
	char msg[BPFA_MSG_LEN];		/* "bpf_arena: insn N: ...\n" on error */
};

/*
 * Returns 0 (res->insns/len/new_idx set, owned by the caller) or -EINVAL, -EACCES,
 * -ERANGE (6.12's errnos where 6.12 has the refusal), -E2BIG, -ENOMEM with res->err_insn and res->msg set and nothing to free.  new_idx[i] is
 * where original instruction i's sequence starts (the second half of an ld_imm64
 * maps to its first half + 1); new_idx[len] is the new length.
 */
int bpfa_lower(const struct bpfa_lower_env *env, const struct bpf_insn *insns, __u32 len,
	       struct bpfa_lower_result *res);

#endif /* BPFA_LOWER_H */

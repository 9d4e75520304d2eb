/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: the LOOP pass (docs/LOOPS.md), run on a LOWERED program.
 *
 * Upstream's modern loops (may_goto: can_loop / cond_break; open-coded
 * iterators: bpf_for / bpf_repeat) do not exist on 6.1.  The lowering
 * inlines the iterator kfuncs and marks each bpf_iter_num_next()
 * (insn.h); bpfa_loops() outlines each loop holding a may_goto or a
 * mark in the lowered program into a GLOBAL function driven by bpf_loop()
 * (the design
 * and its safety argument: docs/LOOPS.md) and builds the BTF and func_info
 * the stock verifier needs for it.  Plain C like lower.c: no libc beyond
 * memset/memcpy/snprintf, no allocation but through env.
 */
#ifndef BPFA_LOOPS_H
#define BPFA_LOOPS_H

#include "insn.h"

/* The pass's own size limit (per-instruction state is kept). */
#define BPFA_LOOPS_MAX_INSNS	65536
#define BPFA_LOOPS_MSG_LEN	224
#define BPFA_LOOPS_MAX_OUT	1000000		/* BPF_COMPLEXITY_LIMIT_INSNS */
#define BPFA_LOOPS_MAX_DEPTH	4		/* loops nested in loops */

/*
 * A loop mark: a may_goto (can_loop/cond_break) or the mark of an inlined
 * bpf_iter_num_next (bpf_for/bpf_repeat).  Both make the loop around them
 * outlined; only may_goto spends the budget and can leave the loop.
 */
static inline bool bpfa_is_loop_mark(const struct bpf_insn *insn)
{
	return insn->code == BPFA_MAY_GOTO_CODE;
}

static inline bool bpfa_is_may_goto(const struct bpf_insn *insn)
{
	return insn->code == BPFA_MAY_GOTO_CODE && insn->src_reg == 0;
}

static inline bool bpfa_is_iter_mark(const struct bpf_insn *insn)
{
	return insn->code == BPFA_MAY_GOTO_CODE && insn->src_reg == BPFA_ITER_MARK_SRC;
}

/* Does this (lowered or original) program contain may_goto?  Cheap scan. */
bool bpfa_loops_needed(const struct bpf_insn *insns, __u32 len);

struct bpfa_loops_env {
	void *ctx;
	void *(*zalloc)(void *ctx, size_t size);	/* zeroed memory or NULL */
	void (*free)(void *ctx, void *p);
	/* The lowering's old -> new map (old_len + 1 entries), to name original insns. */
	const __u32 *new_idx;
	__u32 old_len;
	/*
	 * The program's BTF, when it came with func_info/line_info (has_btf): the
	 * loaded blob (validated by the kernel, read-only), its func_info and
	 * line_info records already moved to the lowered program (rec_size
	 * strides).  has_btf without btf: refused.
	 */
	bool has_btf;
	const void *btf;
	__u32 btf_size;
	const void *func_info;
	__u32 func_info_cnt, func_info_rec_size;
	const void *line_info;
	__u32 line_info_cnt, line_info_rec_size;
	/* The kernel's nr_cpu_ids (0: unknown): bounds bpf_get_smp_processor_id(). */
	__u32 nr_cpu_ids;
	/*
	 * How a loop body, a global function, may receive main's context
	 * (docs/LOOPS.md "The context in a loop"): ctx_struct names the struct
	 * 6.1 matches a global function's context argument against
	 * (btf_get_prog_ctx_type(): "__sk_buff", "xdp_md", ...); ctx_mem: the
	 * program type's context is plain memory its verifier checks at run
	 * time (syscall programs: no convert_ctx_access); neither: a loop may
	 * not use the context (refused by name).
	 */
	const char *ctx_struct;
	bool ctx_mem;
};

/*
 * Where each output instruction came from, for the translation of the
 * verifier's log into the user's numbers (module/prog_log.c): the input
 * (lowered) instruction it copies or was emitted for, and flags.
 */
#define BPFA_SRC_IDX_MASK	0x0fffffffu
#define BPFA_SRC_ADDED		(1u << 31)	/* emitted by the pass: not a copy */
#define BPFA_SRC_BODY		(1u << 30)	/* first insn of a loop's body function */
#define BPFA_SRC_CB		(1u << 29)	/* first insn of a loop's bpf_loop callback */
#define BPFA_SRC_ITER		(1u << 28)	/* with BODY or CB: a bpf_for/bpf_repeat loop */

struct bpfa_loops_result {
	struct bpf_insn *insns;		/* env->zalloc'ed */
	__u32 len;
	/*
	 * len entries, env->zalloc'ed: output insn -> lowered insn (the index
	 * is BPFA_SRC_IDX_MASK's bits; with BODY or CB: the loop's head) and
	 * BPFA_SRC_* flags.
	 */
	__u32 *src;
	void *btf;			/* generated BTF blob (env->zalloc'ed) */
	__u32 btf_size;
	struct bpf_func_info *func_info;	/* one per subprogram, env->zalloc'ed */
	__u32 func_info_cnt;
	struct bpf_line_info *line_info;	/* env->zalloc'ed, NULL if the input had none */
	__u32 line_info_cnt;
	__u32 loops;			/* loops outlined */
	__u32 err_insn;			/* ORIGINAL index of the error */
	char msg[BPFA_LOOPS_MSG_LEN];	/* "bpf_arena: insn N: ...\n" on error */
};

/*
 * Outlines the may_goto loops of the lowered program insns[0..len).
 * Returns 0 with res->insns/len/btf/func_info set (caller frees each with
 * env->free), or -EINVAL / -E2BIG / -ENOMEM with res->msg set and nothing to
 * free.  Call only when bpfa_loops_needed().
 */
int bpfa_loops(const struct bpfa_loops_env *env, const struct bpf_insn *insns, __u32 len,
	       struct bpfa_loops_result *res);

/*
 * The name of the FUNC type_id in res->btf into buf (size bytes); false if
 * none.  Walks on from where the previous call with cur stopped (zeroed at
 * first): names asked in increasing type_id cost one walk of the BTF.
 */
struct bpfa_btf_cursor {
	__u32 id, pos;
};
bool bpfa_loops_func_name_at(const struct bpfa_loops_result *res, struct bpfa_btf_cursor *cur,
			     __u32 type_id, char *buf, __u32 size);

/* Frees what a successful bpfa_loops() returned. */
void bpfa_loops_free(const struct bpfa_loops_env *env, struct bpfa_loops_result *res);

#endif /* BPFA_LOOPS_H */

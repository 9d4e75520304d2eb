/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: what the files of the lowering share, and nothing else
 * includes.  The phases, each in its own file, run in this order on one
 * struct lctx (lower.c bpfa_lower()):
 *
 *   lower_structure.c     ld_imm64 pairs, blocks, subprograms, call sites;
 *   lower_classify.c      on the way, what each instruction becomes
 *                         whatever the types
 *   lower_dataflow.c      arena pointers, by a forward dataflow; the final
 *                         pass decides the rewrites that depend on them
 *   lower_iter_state.c    the number iterators used as upstream allows
 *   lower_emit.c          the grown program, offsets fixed, with
 *   lower_placeholders.c  the placeholders of docs/PLACEHOLDERS.md and
 *   lower_iter.c          the inline bpf_iter_num_* sequences
 */
#ifndef BPFA_LOWER_INTERNAL_H
#define BPFA_LOWER_INTERNAL_H

#include "cfg.h"
#include "lower.h"

#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/errno.h>
#else
#include <stdio.h>
#include <stdarg.h>
#include <errno.h>
#endif

/*
 * The abstract state at a block start (lower_dataflow.c).  Here because
 * lower_structure.c sizes the per-block array once it knows the blocks.
 */
struct lstate {
	__u64 stk[2];			/* 2 bits per slot; slot k covers [-8k - 8, -8k) */
	__u32 regs;
	__u32 map;			/* bit r: r holds the arena map on every path */
	/*
	 * Bit r: r holds the program's context (r1 at the main entry) on every
	 * path; bit 16 + r: r was loaded (8 bytes) from the context on every
	 * path: the pointers 6.12 calls trusted (an iterator's ctx->map).
	 */
	__u32 tr;
};

/* Per-instruction flags. */
#define F_SECOND	0x01		/* second half of an ld_imm64 */
#define F_LEADER	0x02		/* starts a basic block */
#define F_SUBSTART	0x04		/* starts a subprogram */
#define F_CALLBACK	0x08		/* a BPF_PSEUDO_FUNC target */

/* Per-instruction rewrites. */
enum {
	A_NONE, A_CAST_KERN, A_CAST_USER, A_CAST_USER_NC, A_ALU32, A_LOAD, A_STX, A_ST,
	A_ATOMIC, A_AFETCH, A_CMPXCHG, A_LD_MAP, A_LD_VALUE, A_KF_ALLOC, A_KF_FREE,
	A_KF_ALLOC_MAP, A_KF_FREE_MAP, A_KF_RESERVE, A_ITER_NEW, A_ITER_NEXT, A_ITER_DESTROY,
	A_KSYM_ONE, A_NR
};

/* Lengths of the inline iterator sequences (lower_emit_iter()). */
#define ITER_NEW_LEN	17
#define ITER_NEXT_LEN	14

#define RET_VIS		0x80

struct lctx {
	const struct bpfa_lower_env *env;
	const struct bpf_insn *in;
	__u32 len;
	struct bpfa_lower_result *res;
	__u8 *fl;		/* per insn: F_* */
	__u8 *act;		/* per insn: A_* */
	__u32 *blk;		/* per insn: its block */
	__u32 nblk;
	__u32 *bstart;		/* per block: first insn */
	__u32 *bsub;		/* per block: its subprogram */
	struct lstate *bst;	/* per block: state at its start */
	__u32 *work;		/* blocks to (re)compute */
	__u32 nwork;
	__u8 *inq;		/* per block: in work */
	__u32 nsub;
	__u32 *sentry;		/* per subprogram: entry block */
	__u8 *sret;		/* per subprogram: join of r0 at its exits | RET_VIS */
	__u32 *coff;		/* per subprogram: its call sites in cblk[coff[s]..coff[s + 1]) */
	__u32 *cblk;		/* blocks holding bpf-to-bpf calls, by callee */
	bool final;
	int err;
};

/* lower.c: the first error wins; later calls return it and change nothing. */
BPFA_PRINTF(4, 5) int lower_err(struct lctx *c, int err, __u32 idx, const char *fmt, ...);
void *lower_zalloc(struct lctx *c, size_t n, size_t size);

/* lower_classify.c: sets act[i] for what needs no types; 0 or the error. */
int lower_classify(struct lctx *c, __u32 i);

/* lower_structure.c: flags, blocks, subprograms and call sites; 0 or the error. */
int lower_structure(struct lctx *c);

/* lower_dataflow.c: to the fixpoint, then the final pass; 0 or the error. */
int lower_dataflow(struct lctx *c);

/* lower_iter_state.c: the number iterators' rules, as upstream's; 0 or the error. */
int lower_iter_state(struct lctx *c);

/* lower_emit.c: res->insns, len and new_idx; 0 or the error. */
int lower_emit(struct lctx *c);

/* lower_placeholders.c: the companion ld_imm64 (2 slots), also R1 of the arena kfuncs. */
void lower_emit_companion(const struct lctx *c, struct bpf_insn *o, __u8 reg);
/* The form of insn for rewrite a (A_CAST_USER, A_LOAD .. A_CMPXCHG): BPFA_PH_LEN_* slots. */
void lower_emit_placeholder(const struct lctx *c, const struct bpf_insn *insn, __u8 a,
			    struct bpf_insn *o);

/* lower_iter.c: an inline iterator call, ITER_NEW_LEN, ITER_NEXT_LEN or 1 slots. */
void lower_emit_iter(__u8 a, struct bpf_insn *o);

/* wX = wY: the kept slot of every form, and the lowered casts. */
static inline struct bpf_insn lower_mov32_reg(__u8 dst, __u8 src)
{
	return bpfa_insn(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0);
}

#endif /* BPFA_LOWER_INTERNAL_H */

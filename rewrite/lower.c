// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the lowering (see lower.h, docs/PLACEHOLDERS.md, docs/DESIGN.md "Lowering").
 *
 * 1. Structure: ld_imm64 pairs, subprograms (bpf-to-bpf call and callback targets),
 *    jump targets, basic blocks; the state-independent rewrites (casts, arena
 *    ld_imm64, arena kfuncs) are classified here.
 * 2. Types: a forward dataflow to a fixpoint.  Abstract value per register r0-r9
 *    and per 8-byte slot of the current frame: NONE, ARENA, MAP (the arena map) or
 *    MIXED.  States are stored only at block starts (24 bytes each); a block is
 *    recomputed from its start.  Subprograms are context-insensitive: a callee's
 *    entry r1-r5 is the join of its callers', a call's r0 the join of the callee's
 *    exits.  "FP" bits track registers that may point into the current frame, so
 *    that stores through them (or, once a stack pointer was stored somewhere, through
 *    any non-arena pointer) and calls that get them weaken every slot: a slot is
 *    ARENA only if it is on every path (an arena pointer seen as NONE only makes the
 *    verifier reject the raw access; the reverse would be a guess).
 * 3. A final pass over every reached block decides the state-dependent rewrites and
 *    reports errors in instruction order; then the program is emitted with jump,
 *    call and callback offsets fixed.
 */
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
 * Values form a lattice whose join is bitwise OR (2 bits per register or
 * slot): V_CONST is the bottom (a constant scalar, or a register or slot no
 * path has written yet: the verifier lets neither be dereferenced, so it
 * never decides what an access is); V_NONE "not an arena pointer"; V_ARENA
 * "arena pointer"; V_MIXED both.  A constant that meets an arena pointer
 * therefore stays an arena pointer: `p = NULL` on one path and an arena
 * pointer on another, dereferenced after `if (p)`, is an arena access, as
 * the (path-sensitive) upstream verifier sees it.  Should the constant
 * really reach the access, the raised access touches arena offset (u32)K,
 * which is safe: an intended superset of upstream.
 */
#define V_CONST	0
#define V_NONE	1
#define V_ARENA	2
#define V_MIXED	3

#define ST_VAL_MASK	0x000fffffu	/* 2 bits per register r0-r9 */
#define ST_FP_SHIFT	20		/* 1 bit per register r0-r9: may point to this frame */
#define ST_ARGFP	(0x1fu << (ST_FP_SHIFT + 1))	/* r1-r5 */
#define ST_ESC		(1u << 30)	/* a pointer to this frame was stored somewhere */
#define ST_VIS		(1u << 31)	/* state reached */
#define M2_64		0x5555555555555555ull

#define NSLOTS		64		/* 512 bytes of stack */

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

#define TR_TRUSTED	16

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

/* Lengths of the inline iterator sequences (emit_iter()). */
#define ITER_NEW_LEN	17
#define ITER_NEXT_LEN	14

static const __u8 act_len[A_NR] = {
	[A_NONE] = 1, [A_CAST_KERN] = 1, [A_CAST_USER] = BPFA_PH_LEN_CAST_USER,
	[A_CAST_USER_NC] = 1, [A_ALU32] = 1, [A_LOAD] = BPFA_PH_LEN_LOAD,
	[A_STX] = BPFA_PH_LEN_STX, [A_ST] = BPFA_PH_LEN_ST, [A_ATOMIC] = BPFA_PH_LEN_ATOMIC,
	[A_AFETCH] = BPFA_PH_LEN_ATOMIC_FETCH, [A_CMPXCHG] = BPFA_PH_LEN_CMPXCHG,
	[A_LD_MAP] = 1, [A_LD_VALUE] = 1, [A_KF_ALLOC] = 3, [A_KF_FREE] = 3,
	[A_KF_ALLOC_MAP] = 1, [A_KF_FREE_MAP] = 1,
	[A_KF_RESERVE] = 3,
	[A_ITER_NEW] = ITER_NEW_LEN, [A_ITER_NEXT] = ITER_NEXT_LEN, [A_ITER_DESTROY] = 1,
	[A_KSYM_ONE] = 1,
};

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

static BPFA_PRINTF(4, 5) int lerr(struct lctx *c, int err, __u32 idx, const char *fmt, ...)
{
	va_list ap;

	if (c->err)
		return c->err;
	c->err = err;
	c->res->err_insn = idx;
	va_start(ap, fmt);
	bpfa_vmsg(c->res->msg, sizeof(c->res->msg), idx, fmt, ap);
	va_end(ap);
	return err;
}

static void *lalloc(struct lctx *c, size_t n, size_t size)
{
	return bpfa_zalloc_n(c->env->zalloc, c->env->ctx, n, size);
}

static void lfree(struct lctx *c, void *p)
{
	if (p)
		c->env->free(c->env->ctx, p);
}

/* ---- abstract state ---- */

static __u64 join2(__u64 a, __u64 b)
{
	return a | b;
}

static __u32 get(const struct lstate *st, __u8 r)
{
	return r <= 9 ? st->regs >> (2 * r) & 3 : V_NONE;
}

static bool isfp(const struct lstate *st, __u8 r)
{
	if (r == BPF_REG_10)
		return true;
	return r <= 9 && (st->regs >> (ST_FP_SHIFT + r) & 1);
}

static void setr(struct lstate *st, __u8 r, __u32 v, bool fp)
{
	if (r > 9)
		return;
	st->regs &= ~(3u << (2 * r) | 1u << (ST_FP_SHIFT + r));
	st->regs |= v << (2 * r) | (__u32)fp << (ST_FP_SHIFT + r);
	st->map &= ~(1u << r);
	st->tr &= ~(1u << r | 1u << (TR_TRUSTED + r));
}

static __u32 sval(const struct lstate *st, __u32 k)
{
	return st->stk[k >> 5] >> (2 * (k & 31)) & 3;
}

static void set_sval(struct lstate *st, __u32 k, __u32 v)
{
	__u32 sh = 2 * (k & 31);

	st->stk[k >> 5] = (st->stk[k >> 5] & ~(3ull << sh)) | (__u64)v << sh;
}

/* The slot of an aligned 8-byte access at r10 + off, or -1. */
static int dw_slot(__s16 off)
{
	if (off > -8 || off < -512 || off % 8)
		return -1;
	return -off / 8 - 1;
}

/* Bytes [off, off + size) of the frame lose what was spilled there. */
static void stack_none(struct lstate *st, __s32 off, __u32 size)
{
	__s32 lo = off, hi = off + (__s32)size - 1, k;

	if (hi < -512 || lo >= 0)
		return;
	if (lo < -512)
		lo = -512;
	if (hi > -1)
		hi = -1;
	for (k = (-hi - 1) / 8; k <= (-lo - 1) / 8; k++)
		set_sval(st, k, V_NONE);
}

/* Every slot may have been overwritten by a value of type v. */
static void stack_weaken(struct lstate *st, __u32 v)
{
	st->stk[0] = join2(st->stk[0], v * M2_64);
	st->stk[1] = join2(st->stk[1], v * M2_64);
}

static bool state_join(struct lstate *dst, const struct lstate *src)
{
	__u32 a = dst->regs, b = src->regs, r, map, tr;
	__u64 s0, s1;

	if (!(a & ST_VIS)) {
		*dst = *src;
		dst->regs |= ST_VIS;
		return true;
	}
	r = a | b | ST_VIS;
	map = dst->map & src->map;
	tr = dst->tr & src->tr;
	s0 = join2(dst->stk[0], src->stk[0]);
	s1 = join2(dst->stk[1], src->stk[1]);
	if (r == a && map == dst->map && tr == dst->tr && s0 == dst->stk[0] &&
	    s1 == dst->stk[1])
		return false;
	dst->regs = r;
	dst->map = map;
	dst->tr = tr;
	dst->stk[0] = s0;
	dst->stk[1] = s1;
	return true;
}

static void enqueue(struct lctx *c, __u32 b)
{
	if (c->inq[b])
		return;
	c->inq[b] = 1;
	c->work[c->nwork++] = b;
}

static void join_into(struct lctx *c, __u32 b, const struct lstate *st)
{
	if (!c->final && state_join(&c->bst[b], st))
		enqueue(c, b);
}

static __u32 join_val(__u32 a, __u32 b)
{
	return a | b;
}

static void ret_update(struct lctx *c, __u32 sub, __u32 v)
{
	__u8 old = c->sret[sub];
	__u32 i;

	if (c->final)
		return;
	if (old & RET_VIS)
		v = join_val(old & 3, v);
	if ((old & RET_VIS) && (old & 3) == v)
		return;
	c->sret[sub] = RET_VIS | v;
	for (i = c->coff[sub]; i < c->coff[sub + 1]; i++)
		enqueue(c, c->cblk[i]);
}

/* ---- transfer functions ---- */

static void mark(struct lctx *c, __u32 i, __u8 a)
{
	if (c->final) {
		c->act[i] = a;
		if (a != A_ALU32)
			c->res->placeholders++;
	}
}

static void mixed_err(struct lctx *c, __u32 i)
{
	if (c->final)
		lerr(c, -EINVAL, i, "same insn cannot be used with different pointers");
}

static bool is_arith_op(__u8 op)
{
	switch (op) {
	case BPF_ADD: case BPF_SUB: case BPF_MUL: case BPF_DIV: case BPF_OR: case BPF_AND:
	case BPF_LSH: case BPF_RSH: case BPF_NEG: case BPF_MOD: case BPF_XOR: case BPF_ARSH:
		return true;
	}
	return false;
}

static void xfer_alu(struct lctx *c, struct lstate *st, __u32 i, const struct bpf_insn *insn)
{
	__u8 op = BPF_OP(insn->code), dst = insn->dst_reg, src = insn->src_reg;
	bool x = BPF_SRC(insn->code) == BPF_X;
	__u32 dv = get(st, dst), sv = x ? get(st, src) : V_NONE;

	if (BPF_CLASS(insn->code) == BPF_ALU) {
		/* A 32-bit copy is a scalar; other ALU32 ops keep an arena pointer. */
		if (op == BPF_MOV && !x)
			dv = V_CONST;
		else if (op == BPF_MOV || (dv != V_ARENA && dv != V_MIXED))
			dv = V_NONE;
		setr(st, dst, dv, false);
		return;
	}
	if (op == BPF_MOV) {
		switch (c->act[i]) {
		case A_CAST_KERN:
			setr(st, dst, V_ARENA, false);
			return;
		case A_NONE:
			if (x && insn->off == 0) {
				__u32 tr = st->tr;

				setr(st, dst, sv, isfp(st, src));
				if (st->map & (1u << src))
					st->map |= 1u << dst;
				if (tr & (1u << src))
					st->tr |= 1u << dst;
				if (tr & (1u << (TR_TRUSTED + src)))
					st->tr |= 1u << (TR_TRUSTED + dst);
				return;
			}
			if (!x) {
				setr(st, dst, V_CONST, false);
				return;
			}
		}
		setr(st, dst, V_NONE, false);
		return;
	}
	if (!is_arith_op(op)) {
		setr(st, dst, V_NONE, isfp(st, dst));
		return;
	}
	/*
	 * CO-RE makes `&arena->map` an ADD of the relocated offset 0; the
	 * verifier refuses any other arithmetic on a map pointer, so the
	 * register still holds the arena map whenever the program loads.
	 */
	if (op == BPF_ADD && (st->map & (1u << dst))) {
		setr(st, dst, V_NONE, false);
		st->map |= 1u << dst;
		return;
	}
	if (dv == V_ARENA ||
	    ((dv == V_NONE || dv == V_CONST) && op == BPF_ADD && x && sv == V_ARENA)) {
		mark(c, i, A_ALU32);
		setr(st, dst, V_ARENA, false);
		return;
	}
	if (dv == V_MIXED || (op == BPF_ADD && x && sv == V_MIXED)) {
		mixed_err(c, i);
		setr(st, dst, V_MIXED, false);
		return;
	}
	setr(st, dst, V_NONE, isfp(st, dst) || (x && isfp(st, src)));
}

static void xfer_ldx(struct lctx *c, struct lstate *st, __u32 i, const struct bpf_insn *insn)
{
	__u8 mode = BPF_MODE(insn->code), base = insn->src_reg;
	__u32 v = V_NONE, bv;
	bool ctx_field;
	int k;

	if (base == BPF_REG_10) {
		k = dw_slot(insn->off);
		if (mode == BPF_MEM && BPF_SIZE(insn->code) == BPF_DW && k >= 0)
			v = sval(st, k);
		setr(st, insn->dst_reg, v, false);
		return;
	}
	bv = get(st, base);
	ctx_field = base <= 9 && (st->tr & (1u << base)) && mode == BPF_MEM &&
		    BPF_SIZE(insn->code) == BPF_DW;
	if (c->final && (mode == BPF_MEM || mode == BPFA_MODE_MEMSX)) {
		if (bv == V_MIXED)
			mixed_err(c, i);
		else if (bv == V_ARENA && mode == BPFA_MODE_MEMSX)
			lerr(c, -EINVAL, i, "sign extending loads from arena are not supported yet");
		else if (bv == V_ARENA && insn->dst_reg <= 9)
			mark(c, i, A_LOAD);
	}
	setr(st, insn->dst_reg, V_NONE, false);
	if (ctx_field && insn->dst_reg <= 9)
		st->tr |= 1u << (TR_TRUSTED + insn->dst_reg);
}

static void xfer_atomic_arena(struct lctx *c, __u32 i, const struct bpf_insn *insn)
{
	__u8 size = BPF_SIZE(insn->code);

	if (!c->final || (size != BPF_W && size != BPF_DW) || insn->src_reg > 9)
		return;		/* the verifier rejects it */
	switch (insn->imm) {
	case BPF_ADD: case BPF_OR: case BPF_AND: case BPF_XOR:
		mark(c, i, A_ATOMIC);
		break;
	case BPF_ADD | BPF_FETCH: case BPF_XCHG:
		mark(c, i, A_AFETCH);
		break;
	case BPF_CMPXCHG:
		mark(c, i, A_CMPXCHG);
		break;
	case BPF_AND | BPF_FETCH: case BPF_OR | BPF_FETCH: case BPF_XOR | BPF_FETCH:
		/* 6.12's text and errno (check_atomic()). */
		lerr(c, -EACCES, i, "BPF_ATOMIC stores into R%d arena is not allowed",
		     insn->dst_reg);
		break;
	}
}

static void xfer_store(struct lctx *c, struct lstate *st, __u32 i, const struct bpf_insn *insn)
{
	__u8 mode = BPF_MODE(insn->code), base = insn->dst_reg, src = insn->src_reg;
	__u32 size, bv;
	bool stx = BPF_CLASS(insn->code) == BPF_STX;
	bool atomic = stx && mode == BPF_ATOMIC;
	__u32 vv = stx && !atomic ? get(st, src) : V_NONE;
	bool vfp = stx && isfp(st, src);
	int k;

	switch (BPF_SIZE(insn->code)) {
	case BPF_B:
		size = 1;
		break;
	case BPF_H:
		size = 2;
		break;
	case BPF_W:
		size = 4;
		break;
	default:
		size = 8;
		break;
	}
	if (mode != BPF_MEM && !atomic)
		return;		/* the verifier rejects it */
	if (base == BPF_REG_10) {
		k = dw_slot(insn->off);
		if (stx && !atomic && size == 8 && k >= 0)
			set_sval(st, k, vv);
		else
			stack_none(st, insn->off, size);
	} else {
		bv = get(st, base);
		if (bv == V_ARENA) {
			if (atomic)
				xfer_atomic_arena(c, i, insn);
			else if (c->final && stx && src == BPF_REG_10)
				lerr(c, -EINVAL, i, "storing R10 into arena is not supported");
			else if (c->final && (!stx || src <= 9))
				mark(c, i, stx ? A_STX : A_ST);
		} else if (bv == V_MIXED) {
			mixed_err(c, i);
		} else if (isfp(st, base) || (st->regs & ST_ESC)) {
			stack_weaken(st, size == 8 ? vv : V_NONE);
		}
	}
	if (atomic && (insn->imm & BPF_FETCH))
		setr(st, insn->imm == BPF_CMPXCHG ? BPF_REG_0 : src, V_NONE, false);
	if (vfp)
		st->regs |= ST_ESC;
}

/* After any call: r0-r5 are scalars; a callee given a frame pointer may write it. */
static void clobber_call(struct lstate *st, __u32 r0)
{
	__u8 r;

	if (st->regs & (ST_ARGFP | ST_ESC))
		stack_weaken(st, V_NONE);
	/* r1-r5 are NOT_INIT for the verifier: nothing can use them. */
	for (r = 1; r <= 5; r++)
		setr(st, r, V_CONST, false);
	setr(st, BPF_REG_0, r0, false);
}

/*
 * An inlined iterator call (emit_iter()): exactly what its sequence writes.
 * r1 (the iterator) stays; r0 of bpf_iter_num_next() may point to this
 * frame (r0 = r1).  The iterator's 8 bytes get scalars, but the stack is not
 * weakened: r1's offset is unknown here, and weakening every slot would turn
 * the arena pointers a bpf_for loop keeps spilled into mixed ones.  Only a
 * program 6.12 refuses (one that reads an iterator's slot as a pointer)
 * could see a slot typed as before; the verifier checks what it does.
 */
static void xfer_iter(struct lctx *c, struct lstate *st, __u32 i)
{
	__u8 a = c->act[i];
	bool fp = isfp(st, BPF_REG_1);

	if (c->final && !fp)
		lerr(c, -EINVAL, i, "arg#0 expected pointer to an iterator on stack");
	if (a == A_ITER_DESTROY)
		return;
	setr(st, BPF_REG_2, V_NONE, false);
	setr(st, BPF_REG_3, V_NONE, false);
	if (a == A_ITER_NEW)
		setr(st, BPF_REG_4, V_NONE, false);
	setr(st, BPF_REG_0, V_NONE, a == A_ITER_NEXT && fp);
}

static void xfer_call(struct lctx *c, struct lstate *st, __u32 i)
{
	__u8 a = c->act[i];

	if (a == A_ITER_NEW || a == A_ITER_NEXT || a == A_ITER_DESTROY) {
		xfer_iter(c, st, i);
		return;
	}

	if (c->final && (a == A_KF_ALLOC || a == A_KF_FREE || a == A_KF_RESERVE)) {
		const char *name = a == A_KF_ALLOC ? "bpf_arena_alloc_pages" :
			a == A_KF_FREE ? "bpf_arena_free_pages" : "bpf_arena_reserve_pages";

		/* 6.12's check and errno (check_kfunc_call()). */
		if (!c->env->sleepable) {
			lerr(c, -EACCES, i, "program must be sleepable to call sleepable kfunc %s",
			     name);
		} else if (!(st->map & (1u << BPF_REG_1)) && a == A_KF_RESERVE) {
			/* No run-time-map variant of reserve (kfunc.c). */
			lerr(c, -EINVAL, i, "R1 of %s must be the arena map", name);
		} else if (!(st->map & (1u << BPF_REG_1))) {
			/*
			 * A map known only at run time: the kfunc takes a
			 * struct bpf_map * the verifier type-checks and checks
			 * at run time that it is an arena (kfunc.c).  6.12 also
			 * wants it trusted; 6.1's verifier cannot tell, so the
			 * context fields are (the caller refuses the rest once
			 * the verifier has checked the type, as 6.12 orders it).
			 */
			c->act[i] = a == A_KF_ALLOC ? A_KF_ALLOC_MAP : A_KF_FREE_MAP;
			if (!(st->tr & (1u << (TR_TRUSTED + BPF_REG_1))) &&
			    !c->res->untrusted_map_arg) {
				c->res->untrusted_map_arg = true;
				c->res->untrusted_insn = i;
			}
		}
	}
	clobber_call(st, V_NONE);
}

/* A bpf-to-bpf call: false if the callee has not returned (yet). */
static bool xfer_pcall(struct lctx *c, struct lstate *st, __u32 i)
{
	__u32 t = i + c->in[i].imm + 1, sub = c->bsub[c->blk[t]];
	struct lstate e;

	memset(&e, 0, sizeof(e));
	e.regs = (st->regs & (0x3ffu << 2)) | ST_VIS;	/* r1-r5 */
	e.map = st->map & 0x3eu;
	e.tr = st->tr & (0x3eu | 0x3eu << TR_TRUSTED);
	join_into(c, c->sentry[sub], &e);
	if (!(c->sret[sub] & RET_VIS))
		return false;
	clobber_call(st, c->sret[sub] & 3);
	return true;
}

static void xfer(struct lctx *c, struct lstate *st, __u32 i)
{
	const struct bpf_insn *insn = &c->in[i];

	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		xfer_alu(c, st, i, insn);
		break;
	case BPF_LDX:
		xfer_ldx(c, st, i, insn);
		break;
	case BPF_ST:
	case BPF_STX:
		xfer_store(c, st, i, insn);
		break;
	case BPF_LD:
		if (bpfa_is_ldimm64(insn)) {
			/* Constants (the lowered arena map and globals are too) or pointers. */
			bool k = insn->src_reg == 0 || c->act[i] == A_LD_MAP ||
				 c->act[i] == A_LD_VALUE || c->act[i] == A_KSYM_ONE;

			setr(st, insn->dst_reg, k ? V_CONST : V_NONE, false);
			if (c->act[i] == A_LD_MAP && insn->dst_reg <= 9)
				st->map |= 1u << insn->dst_reg;
		} else {	/* LD_ABS / LD_IND */
			clobber_call(st, V_NONE);
		}
		break;
	default:	/* helper and kfunc calls */
		xfer_call(c, st, i);
		break;
	}
}

static void run_block(struct lctx *c, __u32 b)
{
	struct lstate st = c->bst[b];
	__u32 i = c->bstart[b], next;
	const struct bpf_insn *insn;

	for (;;) {
		insn = &c->in[i];
		next = bpfa_next(c->in, i);
		if (bpfa_is_exit(insn)) {
			ret_update(c, c->bsub[b], get(&st, BPF_REG_0));
			return;
		}
		if (bpfa_is_jump(insn)) {
			join_into(c, c->blk[bpfa_jump_target(c->in, i)], &st);
			if (!bpfa_is_ja(insn))
				join_into(c, c->blk[next], &st);
			return;
		}
		if (bpfa_is_pcall(insn)) {
			if (!xfer_pcall(c, &st, i))
				return;
		} else {
			xfer(c, &st, i);
			if (c->err)
				return;
		}
		i = next;	/* < len and in this subprogram: checked in structure() */
		if (c->fl[i] & F_LEADER) {
			join_into(c, c->blk[i], &st);
			return;
		}
	}
}

/* ---- structure ---- */

static int check_target(struct lctx *c, __u32 i, __s64 t)
{
	if (t < 0 || t >= c->len)
		return lerr(c, -EINVAL, i, "jump or call to insn %lld is out of the program",
			    (long long)t);
	if (c->fl[t] & F_SECOND)
		return lerr(c, -EINVAL, i, "jump or call into the middle of ld_imm64 at insn %lld",
			    (long long)t - 1);
	return 0;
}

static int classify(struct lctx *c, __u32 i)
{
	const struct bpfa_lower_env *env = c->env;
	const struct bpf_insn *insn = &c->in[i];
	__u8 src = insn->src_reg;

	if (bpfa_is_ldimm64(insn)) {
		bool val = src == BPF_PSEUDO_MAP_VALUE || src == BPF_PSEUDO_MAP_IDX_VALUE;
		enum bpfa_ld_kind k = BPFA_LD_OTHER;
		__u32 off = (__u32)insn[1].imm;

		if (src == BPF_PSEUDO_BTF_ID && env->classify_ksym &&
		    env->classify_ksym(env->ctx, insn) != BPFA_KF_OTHER) {
			c->act[i] = A_KSYM_ONE;
			return 0;
		}

		if ((val || src == BPF_PSEUDO_MAP_FD || src == BPF_PSEUDO_MAP_IDX) &&
		    env->classify_ldimm64)
			k = env->classify_ldimm64(env->ctx, insn);
		if (k == BPFA_LD_OTHER)
			return 0;
		c->res->uses_arena = true;
		if ((k == BPFA_LD_ARENA_MAP && val) || (k == BPFA_LD_ARENA_VALUE && !val) ||
		    (k != BPFA_LD_ARENA_MAP && k != BPFA_LD_ARENA_VALUE))
			return lerr(c, -EINVAL, i, "invalid reference to the arena map");
		/* 6.12: arena_map_direct_value_addr() allows off == size; ERANGE past it. */
		if (k == BPFA_LD_ARENA_VALUE && off > env->arena_size)
			return lerr(c, -ERANGE, i,
				    "invalid access to map value pointer, value_size=0 off=%u", off);
		c->act[i] = k == BPFA_LD_ARENA_MAP ? A_LD_MAP : A_LD_VALUE;
		return 0;
	}
	if (insn->code == (BPF_JMP | BPF_CALL) && src == BPF_PSEUDO_KFUNC_CALL) {
		enum bpfa_kf_kind k = BPFA_KF_OTHER;

		if (env->classify_kfunc)
			k = env->classify_kfunc(env->ctx, insn);
		if (k == BPFA_KF_ALLOC || k == BPFA_KF_FREE || k == BPFA_KF_RESERVE) {
			c->act[i] = k == BPFA_KF_ALLOC ? A_KF_ALLOC :
				    k == BPFA_KF_FREE ? A_KF_FREE : A_KF_RESERVE;
			c->res->uses_arena = true;
		} else if (k == BPFA_KF_ITER_NEW || k == BPFA_KF_ITER_NEXT ||
			   k == BPFA_KF_ITER_DESTROY) {
			c->act[i] = k == BPFA_KF_ITER_NEW ? A_ITER_NEW :
				    k == BPFA_KF_ITER_NEXT ? A_ITER_NEXT : A_ITER_DESTROY;
		}
		return 0;
	}
	/*
	 * may_goto as upstream checks it (6.12 check_cond_jmp_op(); later
	 * kernels allow off 0, and so does the loop pass).  src_reg 1 is the
	 * lowering's own iterator mark: a program must not forge it.
	 */
	if (insn->code == BPFA_MAY_GOTO_CODE &&
	    (insn->src_reg || insn->dst_reg || insn->imm))
		return lerr(c, -EINVAL, i, "invalid may_goto imm %d", insn->imm);
	if (!bpfa_is_cast(insn))
		return 0;
	c->res->uses_arena = true;
	if (insn->dst_reg > 9 || insn->src_reg > 9)
		return lerr(c, -EINVAL, i, "addr_space_cast of R%u into R%u is not allowed",
			    insn->src_reg, insn->dst_reg);
	if (insn->off == BPFA_CAST_OFF && insn->imm == BPFA_CAST_KERN_IMM) {
		c->act[i] = A_CAST_KERN;
	} else if ((insn->off == BPFA_CAST_OFF && insn->imm == BPFA_CAST_USER_IMM) ||
		   (insn->off == BPFA_CAST_V1_USER_OFF && insn->imm == BPFA_CAST_V1_USER_IMM)) {
		c->act[i] = env->no_user_conv ? A_CAST_USER_NC : A_CAST_USER;
		if (!env->no_user_conv)
			c->res->placeholders++;
	} else {
		return lerr(c, -EINVAL, i,
			    "addr_space_cast insn can only convert between address space 1 and 0");
	}
	return 0;
}

static int structure(struct lctx *c)
{
	const struct bpf_insn *in = c->in;
	__u32 i, t, b, s, n = c->len, next;
	__u8 *fl = c->fl;
	__s64 bad;

	bad = bpfa_mark_ldimm64(in, n, fl, F_SECOND, true);
	if (bad >= 0)
		return lerr(c, -EINVAL, (__u32)bad, "invalid ld_imm64");
	fl[0] |= F_LEADER | F_SUBSTART;
	for (i = 0; i < n; i++) {
		const struct bpf_insn *insn = &in[i];

		if (fl[i] & F_SECOND)
			continue;
		if (classify(c, i))
			return c->err;
		if (bpfa_is_pfunc(insn) || bpfa_is_pcall(insn)) {
			if (check_target(c, i, (__s64)i + 1 + insn->imm))
				return c->err;
			t = i + 1 + insn->imm;
			fl[t] |= F_LEADER | F_SUBSTART;
			if (!bpfa_is_pcall(insn))
				fl[t] |= F_CALLBACK;
		} else if (bpfa_is_jump(insn)) {
			if (check_target(c, i, (__s64)i + 1 + bpfa_jump_disp(insn)))
				return c->err;
			fl[bpfa_jump_target(in, i)] |= F_LEADER;
			if (i + 1 < n)
				fl[i + 1] |= F_LEADER;
		} else if (bpfa_is_exit(insn) && i + 1 < n) {
			fl[i + 1] |= F_LEADER;
		}
	}
	for (i = 0; i < n; i++) {
		if (fl[i] & F_LEADER)
			c->nblk++;
		if (fl[i] & F_SUBSTART)
			c->nsub++;
	}
	c->bstart = lalloc(c, c->nblk, sizeof(__u32));
	c->bsub = lalloc(c, c->nblk, sizeof(__u32));
	c->bst = lalloc(c, c->nblk, sizeof(struct lstate));
	c->work = lalloc(c, c->nblk, sizeof(__u32));
	c->inq = lalloc(c, c->nblk, 1);
	c->sentry = lalloc(c, c->nsub, sizeof(__u32));
	c->sret = lalloc(c, c->nsub, 1);
	c->coff = lalloc(c, c->nsub + 1, sizeof(__u32));
	if (!c->bstart || !c->bsub || !c->bst || !c->work || !c->inq || !c->sentry || !c->sret ||
	    !c->coff)
		return lerr(c, -ENOMEM, 0, "out of memory");
	for (i = 0, b = 0, s = 0; i < n; i++) {
		if (fl[i] & F_LEADER) {
			if (i && (fl[i] & F_SUBSTART))
				s++;
			if (i)
				b++;
			c->bstart[b] = i;
			c->bsub[b] = s;
			if (fl[i] & F_SUBSTART)
				c->sentry[s] = b;
		}
		c->blk[i] = b;
	}
	/* Jumps stay in their subprogram; only exit and ja end one. */
	for (i = 0; i < n; i = next) {
		const struct bpf_insn *insn = &in[i];

		next = bpfa_next(in, i);
		if (bpfa_is_jump(insn)) {
			t = bpfa_jump_target(in, i);
			if (c->bsub[c->blk[t]] != c->bsub[c->blk[i]])
				return lerr(c, -EINVAL, i, "jump to insn %u in another subprogram", t);
			if (bpfa_is_ja(insn))
				continue;
		}
		if (bpfa_is_exit(insn))
			continue;
		if (next >= n || (fl[next] & F_SUBSTART))
			return lerr(c, -EINVAL, i, "falls through past the end of its subprogram");
		if (bpfa_is_pcall(insn))
			c->coff[c->bsub[c->blk[i + 1 + insn->imm]]]++;
	}
	for (s = 0, t = 0; s <= c->nsub; s++) {
		t += c->coff[s];
		c->coff[s] = t;		/* end of s's call sites, start after filling */
	}
	c->cblk = lalloc(c, t, sizeof(__u32));
	if (!c->cblk)
		return lerr(c, -ENOMEM, 0, "out of memory");
	for (i = 0; i < n; i = next) {
		next = bpfa_next(in, i);
		if (bpfa_is_pcall(&in[i])) {
			s = c->bsub[c->blk[i + 1 + in[i].imm]];
			c->cblk[--c->coff[s]] = c->blk[i];
		}
	}
	return 0;
}

static int analyse(struct lctx *c)
{
	struct lstate e;
	__u32 s, b;

	memset(&e, 0, sizeof(e));
	/* Entry: r1 is the context; callbacks get scalars and pointers in r1-r5. */
	e.regs = ST_VIS | V_NONE << (2 * BPF_REG_1);
	e.tr = 1u << BPF_REG_1;
	join_into(c, c->sentry[0], &e);
	e.tr = 0;
	e.regs = ST_VIS | 0x155u << (2 * BPF_REG_1);	/* r1-r5: V_NONE */
	for (s = 1; s < c->nsub; s++)
		if (c->fl[c->bstart[c->sentry[s]]] & F_CALLBACK)
			join_into(c, c->sentry[s], &e);
	while (c->nwork) {
		b = c->work[--c->nwork];
		c->inq[b] = 0;
		run_block(c, b);
	}
	c->final = true;
	for (b = 0; b < c->nblk && !c->err; b++)
		if (c->bst[b].regs & ST_VIS)
			run_block(c, b);
	return c->err;
}

/* ---- emission ---- */

static int fix_jump(struct lctx *c, __u32 i, struct bpf_insn *o)
{
	const __u32 *ni = c->res->new_idx;
	__s64 d = (__s64)ni[bpfa_jump_target(c->in, i)] - ni[i] - 1;

	if (o->code == (BPF_JMP32 | BPF_JA)) {
		o->imm = (__s32)d;
		return 0;
	}
	if (d < -32768 || d > 32767)
		return lerr(c, -EINVAL, i, "jump out of range after arena lowering");
	o->off = (__s16)d;
	return 0;
}

static void emit_companion(const struct lctx *c, struct bpf_insn *o, __u8 reg)
{
	o[0] = bpfa_insn(BPF_LD | BPF_IMM | BPF_DW, reg, BPF_PSEUDO_MAP_VALUE, 0,
			 c->env->companion_fd);
	o[1] = bpfa_insn(0, 0, 0, 0, 0);
}

static struct bpf_insn mov32_reg(__u8 dst, __u8 src)
{
	return bpfa_insn(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0);
}

/* Placeholders of PLACEHOLDERS.md; o[0] is the kept wS = wS (wX = wY). */
static void emit_ph(const struct lctx *c, const struct bpf_insn *insn, __u8 a, struct bpf_insn *o)
{
	const __u8 x32 = BPF_ALU | BPF_XOR | BPF_K, x64 = BPF_ALU64 | BPF_XOR | BPF_K;
	const __u8 m64k = BPF_ALU64 | BPF_MOV | BPF_K, m64x = BPF_ALU64 | BPF_MOV | BPF_X;
	__u8 size = BPF_SIZE(insn->code), d = insn->dst_reg, s = insn->src_reg;
	__u32 k1, k2 = BPFA_K2_MAGIC;

	switch (a) {
	case A_CAST_USER:	/* rD = cast_user(rS) */
		o[0] = mov32_reg(d, s);
		o[1] = bpfa_insn(m64k, d, 0, 0, (__s32)bpfa_k1(BPFA_PH_CAST_USER, BPF_DW, 0, 0));
		o[2] = bpfa_insn(m64k, d, 0, 0, (__s32)BPFA_K2_MAGIC);
		emit_companion(c, &o[3], d);
		o[5] = bpfa_insn(BPF_LDX | BPF_MEM | BPF_DW, d, d, 0, 0);
		return;
	case A_LOAD:		/* rD = *(size *)(rS + off) */
		o[0] = mov32_reg(s, s);
		o[1] = bpfa_insn(m64k, d, 0, 0, (__s32)bpfa_k1(BPFA_PH_LOAD, size, 0, insn->off));
		emit_companion(c, &o[2], d);
		o[4] = bpfa_insn(BPF_LDX | BPF_MEM | size, d, d, 0, 0);
		return;
	case A_AFETCH:		/* atomic (rD + off), rS */
		o[0] = mov32_reg(d, d);
		k1 = bpfa_k1(BPFA_PH_ATOMIC_FETCH, size, insn->imm == BPF_XCHG, insn->off);
		o[1] = bpfa_insn(x64, s, 0, 0, (__s32)k1);
		emit_companion(c, &o[2], s);
		o[4] = bpfa_insn(BPF_LDX | BPF_MEM | BPF_DW, s, s, 0, 0);
		return;
	case A_CMPXCHG:
		o[0] = mov32_reg(d, d);
		k1 = bpfa_k1(BPFA_PH_CMPXCHG, size, 0, insn->off);
		o[1] = bpfa_insn(x64, s, 0, 0, (__s32)k1);
		o[2] = o[1];
		o[3] = bpfa_insn(x64, BPF_REG_0, 0, 0, (__s32)BPFA_K2_MAGIC);
		emit_companion(c, &o[4], BPF_REG_0);
		o[6] = bpfa_insn(BPF_LDX | BPF_MEM | size, BPF_REG_0, BPF_REG_0, 0, 0);
		return;
	case A_STX:
		k1 = bpfa_k1(BPFA_PH_STX, size, 0, insn->off);
		break;
	case A_ST:
		k1 = bpfa_k1(BPFA_PH_ST, size, 0, insn->off);
		k2 = (__u32)insn->imm;
		s = d;
		break;
	default:		/* A_ATOMIC */
		k1 = bpfa_k1(BPFA_PH_ATOMIC, size, 0, insn->off);
		k2 |= (__u32)insn->imm;
		break;
	}
	/* STX, ST, ATOMIC: wD ^= K1; wD ^= K2; wD ^= K1 ^ K2; rV = rV */
	o[0] = mov32_reg(d, d);
	o[1] = bpfa_insn(x32, d, 0, 0, (__s32)k1);
	o[2] = bpfa_insn(x32, d, 0, 0, (__s32)k2);
	o[3] = bpfa_insn(x32, d, 0, 0, (__s32)(k1 ^ k2));
	o[4] = bpfa_insn(m64x, s, s, 0, 0);
}

/*
 * The open-coded number iterators, inline, with upstream's semantics
 * (kernel/bpf/bpf_iter.c, 6.4+; state: s32 cur at +0, s32 end at +4, the
 * ints taken from the low 32 bits of the argument registers):
 *
 * bpf_iter_num_new(it = r1, start = w2, end = w3):
 *   start > end: cur = end = 0, -EINVAL; end - start > BPF_MAX_LOOPS (as
 *   s64): cur = end = 0, -E2BIG; else cur = start - 1, end = end, 0.
 * bpf_iter_num_next(it = r1):
 *   (s64)(s32)(cur + 1) >= end: cur = end = 0, NULL; else ++cur, &cur.
 *   It starts with the iterator mark (insn.h): the loop pass outlines
 *   the loop around it into a bpf_loop() callback (docs/LOOPS.md), because
 *   6.1's verifier cannot converge on the loop; every iteration is one
 *   next(), so the loop runs at most BPF_MAX_LOOPS + 1 bodies as upstream.
 * bpf_iter_num_destroy(it = r1): cur = end = 0.
 *
 * r1 stays; r2-r4 are scratch (a call leaves r1-r5 unreadable upstream).
 */
static void emit_iter(__u8 a, struct bpf_insn *o)
{
	const __u8 a64k = BPF_ALU64 | BPF_K, a64x = BPF_ALU64 | BPF_X;
	const __u8 stw = BPF_STX | BPF_MEM | BPF_W, ldw = BPF_LDX | BPF_MEM | BPF_W;
	const __u8 r0 = BPF_REG_0, r1 = BPF_REG_1, r2 = BPF_REG_2, r3 = BPF_REG_3;

	if (a == A_ITER_DESTROY) {
		o[0] = bpfa_insn(BPF_ST | BPF_MEM | BPF_DW, r1, 0, 0, 0);
		return;
	}
	if (a == A_ITER_NEW) {
		o[0] = bpfa_insn(a64k | BPF_LSH, r2, 0, 0, 32);
		o[1] = bpfa_insn(a64k | BPF_ARSH, r2, 0, 0, 32);
		o[2] = bpfa_insn(a64k | BPF_LSH, r3, 0, 0, 32);
		o[3] = bpfa_insn(a64k | BPF_ARSH, r3, 0, 0, 32);
		o[4] = bpfa_insn(a64k | BPF_MOV, r0, 0, 0, -EINVAL);
		o[5] = bpfa_insn(BPF_JMP | BPF_JSGT | BPF_X, r2, r3, 7, 0);	/* -> 13 */
		o[6] = bpfa_insn(a64x | BPF_MOV, BPF_REG_4, r3, 0, 0);
		o[7] = bpfa_insn(a64x | BPF_SUB, BPF_REG_4, r2, 0, 0);
		o[8] = bpfa_insn(a64k | BPF_MOV, r0, 0, 0, -E2BIG);
		o[9] = bpfa_insn(BPF_JMP | BPF_JSGT | BPF_K, BPF_REG_4, 0, 3,
				 (__s32)BPFA_MAX_LOOPS);				/* -> 13 */
		o[10] = bpfa_insn(a64k | BPF_MOV, r0, 0, 0, 0);
		o[11] = bpfa_insn(a64k | BPF_ADD, r2, 0, 0, -1);
		o[12] = bpfa_insn(BPF_JMP | BPF_JA, 0, 0, 2, 0);		/* -> 15 */
		o[13] = bpfa_insn(a64k | BPF_MOV, r2, 0, 0, 0);
		o[14] = bpfa_insn(a64k | BPF_MOV, r3, 0, 0, 0);
		o[15] = bpfa_insn(stw, r1, r2, 0, 0);
		o[16] = bpfa_insn(stw, r1, r3, 4, 0);
		return;
	}
	o[0] = bpfa_insn(BPFA_MAY_GOTO_CODE, 0, BPFA_ITER_MARK_SRC, 0, 0);
	o[1] = bpfa_insn(ldw, r2, r1, 0, 0);
	o[2] = bpfa_insn(BPF_ALU | BPF_K | BPF_ADD, r2, 0, 0, 1);
	o[3] = bpfa_insn(a64k | BPF_LSH, r2, 0, 0, 32);
	o[4] = bpfa_insn(a64k | BPF_ARSH, r2, 0, 0, 32);
	o[5] = bpfa_insn(ldw, r3, r1, 4, 0);
	o[6] = bpfa_insn(a64k | BPF_LSH, r3, 0, 0, 32);
	o[7] = bpfa_insn(a64k | BPF_ARSH, r3, 0, 0, 32);
	o[8] = bpfa_insn(BPF_JMP | BPF_JSGE | BPF_X, r2, r3, 3, 0);		/* -> 12 */
	o[9] = bpfa_insn(stw, r1, r2, 0, 0);
	o[10] = bpfa_insn(a64x | BPF_MOV, r0, r1, 0, 0);
	o[11] = bpfa_insn(BPF_JMP | BPF_JA, 0, 0, 2, 0);			/* -> 14 */
	/* The loop pass knows these two by their shape (loops.c is_next_null()). */
	o[12] = bpfa_insn(BPF_ST | BPF_MEM | BPF_DW, r1, 0, 0, 0);
	o[13] = bpfa_insn(a64k | BPF_MOV, r0, 0, 0, 0);
}

static int emit(struct lctx *c)
{
	const struct bpfa_lower_env *env = c->env;
	struct bpfa_lower_result *res = c->res;
	__u32 i, n = c->len, *ni;
	struct bpf_insn *o;
	__u64 total = 0;
	__u64 v;

	ni = lalloc(c, n + 1, sizeof(__u32));
	if (!ni)
		return lerr(c, -ENOMEM, 0, "out of memory");
	res->new_idx = ni;
	for (i = 0; i < n; i++) {
		ni[i] = (__u32)total;
		total += (c->fl[i] & F_SECOND) ? 1 : act_len[c->act[i]];
		if (total > BPFA_MAX_INSNS)
			return lerr(c, -E2BIG, i,
				    "program is too large after arena lowering (more than %u insns)",
				    BPFA_MAX_INSNS);
	}
	ni[n] = (__u32)total;
	res->len = (__u32)total;
	res->insns = lalloc(c, total, sizeof(struct bpf_insn));
	if (!res->insns)
		return lerr(c, -ENOMEM, 0, "out of memory");
	for (i = 0; i < n; i++) {
		const struct bpf_insn *insn = &c->in[i];
		__u8 a = c->act[i];

		if (c->fl[i] & F_SECOND)
			continue;
		o = &res->insns[ni[i]];
		switch (a) {
		case A_NONE:
			o[0] = *insn;
			if (bpfa_is_ldimm64(insn)) {
				o[1] = insn[1];
				if (bpfa_is_pfunc(insn))
					o->imm = (__s32)(ni[i + 1 + insn->imm] - ni[i] - 1);
			} else if (bpfa_is_pcall(insn)) {
				o->imm = (__s32)(ni[i + 1 + insn->imm] - ni[i] - 1);
			} else if (bpfa_is_jump(insn) && fix_jump(c, i, o)) {
				return c->err;
			}
			break;
		case A_CAST_KERN:
		case A_CAST_USER_NC:
		case A_ALU32:
			if (a == A_ALU32) {
				o[0] = *insn;
				o->code = (insn->code & ~0x07) | BPF_ALU;
			} else {
				o[0] = mov32_reg(insn->dst_reg, insn->src_reg);
			}
			break;
		case A_LD_MAP:
		case A_LD_VALUE:
			if (a == A_LD_MAP && env->map_view) {
				bpfa_ldimm64(o, insn->dst_reg, BPF_PSEUDO_MAP_FD,
					     (__u32)env->view_fd, 0);
				break;
			}
			v = a == A_LD_MAP ? 0 : env->user_vm_start + (__u32)insn[1].imm;
			bpfa_ldimm64(o, insn->dst_reg, 0, v, 0);
			break;
		case A_KF_ALLOC:
		case A_KF_FREE:
		case A_KF_RESERVE:
			emit_companion(c, o, BPF_REG_1);
			o[2] = *insn;
			o[2].imm = a == A_KF_ALLOC ? env->kf_alloc_ph_id :
				   a == A_KF_FREE ? env->kf_free_ph_id : env->kf_reserve_ph_id;
			break;
		case A_KF_ALLOC_MAP:
		case A_KF_FREE_MAP:
			o[0] = *insn;
			o[0].imm = a == A_KF_ALLOC_MAP ? env->kf_alloc_map_id : env->kf_free_map_id;
			break;
		case A_ITER_NEW:
		case A_ITER_NEXT:
		case A_ITER_DESTROY:
			emit_iter(a, o);
			break;
		case A_KSYM_ONE:
			/* bpf_ksym_exists(bpf_iter_num_*): present, as on 6.4+. */
			bpfa_ldimm64(o, insn->dst_reg, 0, 1, 0);
			break;
		default:
			emit_ph(c, insn, a, o);
			break;
		}
	}
	return 0;
}

int bpfa_lower(const struct bpfa_lower_env *env, const struct bpf_insn *insns, __u32 len,
	       struct bpfa_lower_result *res)
{
	struct lctx c;

	memset(res, 0, sizeof(*res));
	memset(&c, 0, sizeof(c));
	c.env = env;
	c.in = insns;
	c.len = len;
	c.res = res;
	if (!len)
		return lerr(&c, -EINVAL, 0, "empty program");
	if (len > BPFA_MAX_INSNS)
		return lerr(&c, -E2BIG, 0, "program has more than %u insns", BPFA_MAX_INSNS);
	c.fl = lalloc(&c, len, 1);
	c.act = lalloc(&c, len, 1);
	c.blk = lalloc(&c, len, sizeof(__u32));
	if (!c.fl || !c.act || !c.blk)
		lerr(&c, -ENOMEM, 0, "out of memory");
	if (!c.err && !structure(&c) && !analyse(&c))
		emit(&c);
	lfree(&c, c.fl);
	lfree(&c, c.act);
	lfree(&c, c.blk);
	lfree(&c, c.bstart);
	lfree(&c, c.bsub);
	lfree(&c, c.bst);
	lfree(&c, c.work);
	lfree(&c, c.inq);
	lfree(&c, c.sentry);
	lfree(&c, c.sret);
	lfree(&c, c.coff);
	lfree(&c, c.cblk);
	if (c.err) {
		lfree(&c, res->insns);
		lfree(&c, res->new_idx);
		res->insns = NULL;
		res->new_idx = NULL;
		res->len = 0;
		res->placeholders = 0;
	}
	return c.err;
}

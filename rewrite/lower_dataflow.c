// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the lowering's dataflow (lower_internal.h, lower.c phases
 * 2 and 3): which registers and stack slots hold arena pointers, the arena
 * map or the program's context, from the instructions alone.  Run to a
 * fixpoint over the blocks, then once more over every reached block with
 * `final` set: that pass marks the accesses and ALU ops on arena pointers
 * for rewriting and reports errors in instruction order.
 */
#include "lower_internal.h"

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

#define TR_TRUSTED	16

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
		lower_err(c, -EINVAL, i, "same insn cannot be used with different pointers");
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
			lower_err(c, -EINVAL, i,
				  "sign extending loads from arena are not supported yet");
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
		lower_err(c, -EACCES, i, "BPF_ATOMIC stores into R%d arena is not allowed",
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
				lower_err(c, -EINVAL, i, "storing R10 into arena is not supported");
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
 * An inlined iterator call (lower_emit_iter()): exactly what its sequence writes.
 * r1 (the iterator) stays; r0 of bpf_iter_num_next() may point to this
 * frame (r0 = r1).  The iterator's 8 bytes get scalars, but the stack is not
 * weakened: r1's offset is unknown here, and weakening every slot would turn
 * the arena pointers a bpf_for loop keeps spilled into mixed ones.  Only a
 * program that reads an iterator's slot other than through next() could
 * see a slot typed as before, and lower_iter_state.c refuses it, as 6.12
 * does (and checks that r1 points to this frame's stack).
 */
static void xfer_iter(struct lctx *c, struct lstate *st, __u32 i)
{
	__u8 a = c->act[i];
	bool fp = isfp(st, BPF_REG_1);

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
			lower_err(c, -EACCES, i,
				  "program must be sleepable to call sleepable kfunc %s", name);
		} else if (!(st->map & (1u << BPF_REG_1)) && a == A_KF_RESERVE) {
			/* No run-time-map variant of reserve (kfunc.c). */
			lower_err(c, -EINVAL, i, "R1 of %s must be the arena map", name);
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

/* ---- the fixpoint and the final pass ---- */

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
		i = next;	/* < len and in this subprogram: checked in lower_structure() */
		if (c->fl[i] & F_LEADER) {
			join_into(c, c->blk[i], &st);
			return;
		}
	}
}

int lower_dataflow(struct lctx *c)
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

// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the loop pass (loops.h; design and safety: docs/LOOPS.md).
 *
 * Handled today (the rest is refused with a message naming the loop):
 * a program of ONE function without BTF, whose may_goto loops are single-entry
 * intervals [H, B] (every back edge targets H, nothing enters but at H), touch
 * no stack inside the loop, and carry scalars (arena pointers are scalars after
 * the lowering) or ld_imm64 map pointers.  Each such loop becomes
 *
 *   main:  save carried regs in the frame region R; bpf_loop(8M, cb, R);
 *          if no exit yet: body(R); dispatch on the exit code
 *   cb:    r1 = r2; call body; r0 = r0 != 0; exit               (static)
 *   body:  copy in; the loop's insns; back edge: copy out, return 0;
 *          exit j: copy out, frame.exit = j, return 1            (GLOBAL)
 *
 * and may_goto becomes a test-and-decrement of a budget slot.  The pass's type
 * analysis decides only what the translation MEANS (which registers are
 * carried as bits, which re-derived); the stock verifier decides safety.
 */
#include "loops.h"

#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/btf.h>
#else
#include <stdio.h>
#include <stdarg.h>
#include <errno.h>
#include <linux/btf.h>
#endif

#define NREGS		10
#define MAX_LOOPS	16
#define MAX_EXITS	16
#define EXIT_RET	0xffffffffu	/* exit edge through an `exit` insn */

/* Register types: kind in bits 28-31, payload below. */
#define T_UNINIT	0u
#define T_BITS		(1u << 28)	/* any value, carried as its bits */
#define T_CTX		(2u << 28)	/* the program's r1 at entry */
#define T_FP		(3u << 28)	/* r10 + (s16)payload */
#define T_MAP		(4u << 28)	/* the value of the ld_imm64 at insn payload */
#define T_MAYBE		(5u << 28)	/* written on some paths only */
#define T_KIND(t)	((t) & 0xf0000000u)
#define T_FPOFF(t)	((__s16)(__u16)((t) & 0xffff))

/* Stack layout below the function's own depth D (docs/LOOPS.md). */
#define OFF_BUDGET(d)	(-(__s32)(d) - 8)
#define OFF_EXIT(d)	(-(__s32)(d) - 16)
#define OFF_REG(d, r)	(-(__s32)(d) - 24 - 8 * (__s32)(r))
#define OFF_CTX(d)	(-(__s32)(d) - 104)
#define OFF_FPSAVE(d)	(-(__s32)(d) - 112)
#define R_LO(d)		(-(__s32)(d) - 96)
#define R_LEN		96
#define RESERVED	112
#define STACK_MAX	512
#define ROUND32(x)	(((x) + 31) & ~31u)
/* Every refusal of the pass starts with this. */
#define MG		"may_goto (can_loop/cond_break) "
/* The frame region seen by the body, as offsets from its start. */
#define FR_REG(r)	(OFF_REG(0, r) - R_LO(0))
#define FR_EXIT		(OFF_EXIT(0) - R_LO(0))
#define FR_BUDGET	(OFF_BUDGET(0) - R_LO(0))

struct loop {
	__u32 h, b;			/* the interval [h, b] */
	__u32 nexits;
	__u32 exit_t[MAX_EXITS];	/* target insn, or EXIT_RET */
	__u32 exit_ty[MAX_EXITS][NREGS];	/* join of the edge types */
	__u16 exit_live[MAX_EXITS];
	bool exit_typed[MAX_EXITS];	/* a reachable edge contributed its types */
	__u32 forced;			/* exit code taken when none was reported */
	/* emission */
	__u32 cb_lbl, body_lbl, back_lbl, exit_lbl[MAX_EXITS], cb_pos, body_pos;
};

enum { FX_OFF, FX_IMM, FX_CALL };

struct fix {
	__u32 at, lbl;
	__u8 kind;
};

struct pctx {
	const struct bpfa_loops_env *env;
	const struct bpf_insn *in;
	__u32 len;
	struct bpfa_loops_result *res;
	__u8 *second;		/* per insn: second half of ld_imm64 */
	__u8 *substart;		/* per insn: a subprogram or callback starts here */
	__u8 *vis;		/* per insn: state reached */
	__u32 *ty;		/* per insn: NREGS in-state types */
	__u16 *live;		/* per insn: live-in registers */
	__u16 *llive;		/* per insn of the loop being checked: live-in, uses in it only */
	__u8 *inloop;		/* per insn: loop index + 1, or 0 */
	__u32 *work;
	struct loop loops[MAX_LOOPS];
	__u32 nloops;
	__u32 depth;		/* the function's own stack depth D, multiple of 8 */
	__u32 main_end;		/* main is [0, main_end); subprograms follow */
	__u32 nsubs;		/* subprograms and callbacks after main */
	/* emission */
	struct bpf_insn *o;
	__u32 n, cap;
	struct fix *fx;
	__u32 nfx, capfx;
	__u32 *lpos;		/* label -> position; ~0u unset */
	__u32 nlbl, caplbl;
	int err;
};

static __u32 orig_idx(const struct pctx *c, __u32 i)
{
	const __u32 *ni = c->env->new_idx;
	__u32 lo = 0, hi = c->env->old_len;

	if (!ni)
		return i;
	/* The largest old index whose sequence starts at or before i. */
	while (lo < hi) {
		__u32 mid = lo + (hi - lo + 1) / 2;

		if (ni[mid] <= i)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static void vset_msg(struct bpfa_loops_result *res, __u32 idx, const char *fmt, va_list ap)
{
	char *msg = res->msg;
	size_t n, size = sizeof(res->msg);

	res->err_insn = idx;
	snprintf(msg, size, "bpf_arena: insn %u: ", idx);
	n = strlen(msg);
	vsnprintf(msg + n, size - n, fmt, ap);
	n = strlen(msg);
	if (n + 1 < size) {
		msg[n] = '\n';
		msg[n + 1] = '\0';
	} else {
		msg[size - 2] = '\n';
	}
}

static BPFA_PRINTF(4, 5) int perr(struct pctx *c, int err, __u32 i, const char *fmt, ...)
{
	va_list ap;

	if (c->err)
		return c->err;
	c->err = err;
	va_start(ap, fmt);
	vset_msg(c->res, orig_idx(c, i), fmt, ap);
	va_end(ap);
	return err;
}

static BPFA_PRINTF(3, 4) int set_msg(struct bpfa_loops_result *res, __u32 i, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_msg(res, i, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void *palloc(struct pctx *c, size_t n, size_t size)
{
	return c->env->zalloc(c->env->ctx, (n ? n : 1) * size);
}

static void pfree(struct pctx *c, void *p)
{
	if (p)
		c->env->free(c->env->ctx, p);
}

bool bpfa_loops_needed(const struct bpf_insn *insns, __u32 len)
{
	__u32 i;

	for (i = 0; i < len; i++) {
		if (bpfa_is_ldimm64(&insns[i])) {
			i++;
			continue;
		}
		if (bpfa_is_may_goto(&insns[i]))
			return true;
	}
	return false;
}

int bpfa_loops_precheck(const struct bpf_insn *insns, __u32 len,
			bool (*is_iter_kfunc)(void *ctx, const struct bpf_insn *insn), void *ctx,
			struct bpfa_loops_result *res)
{
	__u32 i;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < len; i++) {
		const struct bpf_insn *insn = &insns[i];

		if (bpfa_is_ldimm64(insn)) {
			i++;
			continue;
		}
		if (insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_KFUNC_CALL &&
		    is_iter_kfunc && is_iter_kfunc(ctx, insn))
			return set_msg(res, i,
				       "open-coded iterator kfunc (bpf_for/bpf_repeat: bpf_iter_num_*) is not supported on this kernel yet (docs/LOOPS.md)");
	}
	return 0;
}

/* ---- structure ---- */

static bool is_exit(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_EXIT) || insn->code == (BPF_JMP32 | BPF_EXIT);
}

static bool is_ja(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_JA) || insn->code == (BPF_JMP32 | BPF_JA);
}

static __u32 next_of(const struct pctx *c, __u32 i)
{
	return i + (bpfa_is_ldimm64(&c->in[i]) ? 2 : 1);
}

static __u32 target_of(const struct pctx *c, __u32 i)
{
	return (__u32)((__s64)i + 1 + bpfa_jump_disp(&c->in[i]));
}

/* Successors of i: up to two, returns their number. */
static int succs(const struct pctx *c, __u32 i, __u32 s[2])
{
	const struct bpf_insn *insn = &c->in[i];

	if (is_exit(insn))
		return 0;
	if (bpfa_is_jump(insn)) {
		s[0] = target_of(c, i);
		if (is_ja(insn))
			return 1;
		s[1] = i + 1;
		return 2;
	}
	s[0] = next_of(c, i);
	return 1;
}

static bool is_pcall(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL;
}

static bool is_pfunc(const struct bpf_insn *insn)
{
	return bpfa_is_ldimm64(insn) && insn->src_reg == BPF_PSEUDO_FUNC;
}

static int structure(struct pctx *c)
{
	__u32 i, s[2];
	__s64 t;
	int k, ns;

	c->main_end = c->len;
	for (i = 0; i < c->len; i++) {
		if (bpfa_is_ldimm64(&c->in[i])) {
			if (i + 1 >= c->len)
				return perr(c, -EINVAL, i, "invalid ld_imm64");
			c->second[++i] = 1;
		}
	}
	for (i = 0; i < c->len; i++) {
		if (c->second[i] || (!is_pcall(&c->in[i]) && !is_pfunc(&c->in[i])))
			continue;
		t = (__s64)i + 1 + c->in[i].imm;
		if (t <= 0 || t >= c->len || c->second[t])
			return perr(c, -EINVAL, i, "call to insn %lld out of the program",
				    (long long)t);
		if (!c->substart[t])
			c->nsubs++;
		c->substart[t] = 1;
		if (t < c->main_end)
			c->main_end = (__u32)t;
	}
	for (i = 0; i < c->len; i++) {
		if (c->second[i])
			continue;
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++) {
			if (s[k] >= c->len)
				return perr(c, -EINVAL, i, "jump or fall-through out of the program");
			if (c->second[s[k]])
				return perr(c, -EINVAL, i, "jump into the middle of ld_imm64");
		}
	}
	return 0;
}

/* ---- types (forward) ---- */

static __u32 tjoin(__u32 a, __u32 b)
{
	if (a == b)
		return a;
	if (a == T_UNINIT || b == T_UNINIT || a == T_MAYBE || b == T_MAYBE)
		return T_MAYBE;
	return T_BITS;
}

static void xfer(const struct pctx *c, __u32 i, __u32 *t)
{
	const struct bpf_insn *insn = &c->in[i];
	__u8 cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);
	__u8 d = insn->dst_reg, s = insn->src_reg;
	__u32 r;

	switch (cls) {
	case BPF_ALU64:
		if (d >= NREGS)
			return;
		if (op == BPF_MOV && BPF_SRC(insn->code) == BPF_X && insn->off == 0) {
			t[d] = s == BPF_REG_10 ? T_FP : s < NREGS ? t[s] : T_BITS;
			return;
		}
		if (T_KIND(t[d]) == T_FP && BPF_SRC(insn->code) == BPF_K &&
		    (op == BPF_ADD || op == BPF_SUB)) {
			__s64 off = T_FPOFF(t[d]) + (op == BPF_ADD ? (__s64)insn->imm : -(__s64)insn->imm);

			t[d] = off >= -STACK_MAX && off <= 0 ? T_FP | (__u16)(__s16)off : T_BITS;
			return;
		}
		t[d] = T_BITS;
		return;
	case BPF_ALU:
	case BPF_LDX:
		if (d < NREGS)
			t[d] = T_BITS;
		return;
	case BPF_STX:
		if (BPF_MODE(insn->code) == BPF_ATOMIC && (insn->imm & BPF_FETCH)) {
			r = insn->imm == BPF_CMPXCHG ? BPF_REG_0 : s;
			if (r < NREGS)
				t[r] = T_BITS;
		}
		return;
	case BPF_LD:
		if (bpfa_is_ldimm64(insn)) {
			if (d >= NREGS)
				return;
			if (s == BPF_PSEUDO_MAP_FD || s == BPF_PSEUDO_MAP_IDX ||
			    s == BPF_PSEUDO_MAP_VALUE || s == BPF_PSEUDO_MAP_IDX_VALUE)
				t[d] = T_MAP | i;
			else
				t[d] = T_BITS;
			return;
		}
		break;	/* LD_ABS / LD_IND: like a call */
	case BPF_JMP:
	case BPF_JMP32:
		if (op != BPF_CALL)
			return;
		break;
	default:
		return;
	}
	for (r = 1; r <= 5; r++)
		t[r] = T_UNINIT;
	t[0] = T_BITS;
}

static int types(struct pctx *c)
{
	__u32 nw = 0, i, s[2], t[NREGS], r;
	int k, ns;

	for (r = 0; r < NREGS; r++)
		c->ty[r] = r == BPF_REG_1 ? T_CTX : T_UNINIT;
	c->vis[0] = 1;
	c->work[nw++] = 0;
	while (nw) {
		i = c->work[--nw];
		c->vis[i] &= ~2;
		memcpy(t, &c->ty[i * NREGS], sizeof(t));
		xfer(c, i, t);
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++) {
			__u32 *d = &c->ty[s[k] * NREGS];
			bool changed = false;

			if (!(c->vis[s[k]] & 1)) {
				memcpy(d, t, sizeof(t));
				c->vis[s[k]] |= 1;
				changed = true;
			} else {
				for (r = 0; r < NREGS; r++) {
					__u32 j = tjoin(d[r], t[r]);

					changed |= j != d[r];
					d[r] = j;
				}
			}
			if (changed && !(c->vis[s[k]] & 2)) {
				c->vis[s[k]] |= 2;
				c->work[nw++] = s[k];
			}
		}
	}
	return 0;
}

/* ---- liveness (backward) ---- */

static __u16 rbit(__u8 r)
{
	return r < NREGS ? (__u16)(1u << r) : 0;
}

static void use_def(const struct pctx *c, __u32 i, __u16 *use, __u16 *def)
{
	const struct bpf_insn *insn = &c->in[i];
	__u8 cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);
	__u8 d = insn->dst_reg, s = insn->src_reg;
	bool x = BPF_SRC(insn->code) == BPF_X;

	*use = 0;
	*def = 0;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (x)
			*use |= rbit(s);
		if (op != BPF_MOV)
			*use |= rbit(d);
		*def = rbit(d);
		return;
	case BPF_LDX:
		*use = rbit(s);
		*def = rbit(d);
		return;
	case BPF_ST:
		*use = rbit(d);
		return;
	case BPF_STX:
		*use = rbit(d) | rbit(s);
		if (BPF_MODE(insn->code) == BPF_ATOMIC && (insn->imm & BPF_FETCH)) {
			if (insn->imm == BPF_CMPXCHG) {
				*use |= rbit(0);
				*def = rbit(0);
			} else {
				*def = rbit(s);
			}
		}
		return;
	case BPF_LD:
		if (bpfa_is_ldimm64(insn)) {
			*def = rbit(d);
			return;
		}
		*use = rbit(6) | (BPF_MODE(insn->code) == BPF_IND ? rbit(s) : 0);
		*def = 0x3f;
		return;
	case BPF_JMP:
	case BPF_JMP32:
		if (op == BPF_CALL) {
			*use = 0x3e;
			*def = 0x3f;
		} else if (op == BPF_EXIT) {
			*use = rbit(0);
		} else if (!is_ja(insn) && !bpfa_is_may_goto(insn)) {
			*use = rbit(d) | (x ? rbit(s) : 0);
		}
		return;
	}
}

/*
 * Live-in registers of [lo, hi] into live[]; a successor outside the range
 * counts with its live[] entry if outside_live, as nothing otherwise.
 */
static void liveness(struct pctx *c, __u16 *live, __u32 lo, __u32 hi, bool outside_live)
{
	bool changed = true;
	__u32 i, s[2];
	__u16 use, def, out;
	int k, ns;

	while (changed) {
		changed = false;
		for (i = hi + 1; i-- > lo;) {
			if (c->second[i])
				continue;
			ns = succs(c, i, s);
			for (out = 0, k = 0; k < ns; k++)
				if (outside_live || (s[k] >= lo && s[k] <= hi))
					out |= live[s[k]];
			use_def(c, i, &use, &def);
			out = use | (out & ~def);
			if (out != live[i]) {
				live[i] = out;
				changed = true;
			}
		}
	}
}

/* ---- loops ---- */

static bool mentions_fp(const struct pctx *c, __u32 i)
{
	const struct bpf_insn *insn = &c->in[i];
	__u8 cls = BPF_CLASS(insn->code);
	const __u32 *t = &c->ty[i * NREGS];

	if (bpfa_is_ldimm64(insn) || ((cls == BPF_JMP || cls == BPF_JMP32) &&
				      (BPF_OP(insn->code) == BPF_CALL || is_exit(insn))))
		return false;
	if (insn->dst_reg == BPF_REG_10 || insn->src_reg == BPF_REG_10)
		return true;
	return (insn->dst_reg < NREGS && T_KIND(t[insn->dst_reg]) == T_FP) ||
	       (insn->src_reg < NREGS && T_KIND(t[insn->src_reg]) == T_FP &&
		BPF_SRC(insn->code) == BPF_X);
}

static int add_exit(struct pctx *c, struct loop *l, __u32 from, __u32 t, const __u32 *ty)
{
	__u32 j, r;

	for (j = 0; j < l->nexits && l->exit_t[j] != t; j++)
		;
	if (j == l->nexits) {
		if (j == MAX_EXITS)
			return perr(c, -EINVAL, from, MG "loop at insn %u has more than %d exits",
				    orig_idx(c, l->h), MAX_EXITS);
		l->nexits++;
		l->exit_t[j] = t;
		l->exit_live[j] = t == EXIT_RET ? rbit(0) : c->live[t];
		for (r = 0; r < NREGS; r++)
			l->exit_ty[j][r] = T_BITS;	/* edges from dead code only */
	}
	if (!ty)
		return 0;
	if (!l->exit_typed[j]) {
		l->exit_typed[j] = true;
		memcpy(l->exit_ty[j], ty, sizeof(l->exit_ty[j]));
		return 0;
	}
	for (r = 0; r < NREGS; r++)
		l->exit_ty[j][r] = tjoin(l->exit_ty[j][r], ty[r]);
	return 0;
}

static const char *kind_name(__u32 t)
{
	switch (T_KIND(t)) {
	case T_CTX:
		return "the context pointer";
	case T_FP:
		return "a stack pointer";
	default:
		return "a value that may be uninitialised";
	}
}

static int check_loop(struct pctx *c, struct loop *l)
{
	__u32 i, s[2], r, t[NREGS], hl = orig_idx(c, l->h);
	bool reached;
	int k, ns;

	/* Single entry; every back edge to h; no stack; nothing outside the pass. */
	for (i = 0; i < c->len; i++) {
		if (c->second[i])
			continue;
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++) {
			bool in_i = i >= l->h && i <= l->b, in_s = s[k] >= l->h && s[k] <= l->b;

			if (!in_i && in_s && s[k] != l->h)
				return perr(c, -EINVAL, i,
					    MG "loop at insn %u is entered other than at its head: not supported on this kernel yet",
					    hl);
			if (in_i && in_s && s[k] <= i && s[k] != l->h)
				return perr(c, -EINVAL, i,
					    MG "loop at insn %u contains a nested loop: not supported on this kernel yet",
					    hl);
		}
		if (i < l->h || i > l->b)
			continue;
		if (mentions_fp(c, i))
			return perr(c, -EINVAL, i,
				    MG "loop at insn %u uses the stack: not supported on this kernel yet",
				    hl);
		if (BPF_CLASS(c->in[i].code) == BPF_LD && !bpfa_is_ldimm64(&c->in[i]))
			return perr(c, -EINVAL, i,
				    MG "loop at insn %u contains LD_ABS/LD_IND: not supported",
				    hl);
		if (c->in[i].code == (BPF_JMP | BPF_CALL) && c->in[i].src_reg == 0 &&
		    c->in[i].imm == BPF_FUNC_tail_call)
			return perr(c, -EINVAL, i,
				    MG "loop at insn %u contains a tail call: not supported", hl);
	}
	/*
	 * What crosses the head: scalars (carried) or ld_imm64 values
	 * (re-derived).  The context or a stack pointer may only pass by, for
	 * use after the loop: the driver re-derives it at the exits.
	 */
	memset(c->llive + l->h, 0, (l->b - l->h + 1) * sizeof(*c->llive));
	liveness(c, c->llive, l->h, l->b, false);
	for (r = 0; r < NREGS; r++) {
		__u32 ty = c->ty[l->h * NREGS + r];

		/*
		 * Liveness counts r1-r5 as used by every call: a register no path
		 * wrote is not carried (if the loop does read it, the verifier
		 * refuses the body as it would the original).  One written on some
		 * paths only is refused: its value could not be told apart.
		 */
		if (!(c->live[l->h] & rbit(r)) || T_KIND(ty) == T_BITS || T_KIND(ty) == T_MAP ||
		    T_KIND(ty) == T_UNINIT)
			continue;
		if (!(c->llive[l->h] & rbit(r)))
			continue;
		return perr(c, -EINVAL, l->h,
			    MG "loop at insn %u: R%u holds %s at the loop head, which cannot cross an iteration on this kernel yet",
			    hl, r, kind_name(ty));
	}
	/* Exits. */
	for (i = l->h; i <= l->b; i++) {
		if (c->second[i])
			continue;
		reached = c->vis[i] & 1;

		if (is_exit(&c->in[i])) {
			if (add_exit(c, l, i, EXIT_RET, reached ? &c->ty[i * NREGS] : NULL))
				return c->err;
			continue;
		}
		memcpy(t, &c->ty[i * NREGS], sizeof(t));
		if (!bpfa_is_jump(&c->in[i]))
			xfer(c, i, t);
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++)
			if ((s[k] < l->h || s[k] > l->b) &&
			    add_exit(c, l, i, s[k], reached ? t : NULL))
				return c->err;
	}
	if (!l->nexits)
		return perr(c, -EINVAL, l->h, MG "loop at insn %u has no exit", hl);
	/* At an exit: unwritten registers are not restored, half-written ones refused. */
	for (k = 0; k < (int)l->nexits; k++)
		for (r = 0; r < NREGS; r++)
			if ((l->exit_live[k] & rbit(r)) && T_KIND(l->exit_ty[k][r]) == T_MAYBE)
				return perr(c, -EINVAL, l->h,
					    MG "loop at insn %u: R%u may be uninitialised where the loop exits",
					    hl, r);
	/* The forced exit: the first may_goto's budget exit. */
	l->forced = 1;
	for (i = l->h; i <= l->b; i++) {
		if (c->second[i] || !bpfa_is_may_goto(&c->in[i]))
			continue;
		for (k = 0; k < (int)l->nexits; k++)
			if (l->exit_t[k] == target_of(c, i))
				l->forced = k + 1;
		break;
	}
	return 0;
}

static int find_loops(struct pctx *c)
{
	__u32 m, j, t;
	struct loop *l;

	for (m = 0; m < c->len; m++) {
		__u32 h = ~0u, b = 0;

		if (c->second[m] || !bpfa_is_may_goto(&c->in[m]) || c->inloop[m])
			continue;
		if (m >= c->main_end)
			return perr(c, -EINVAL, m,
				    MG "in a subprogram or callback is not supported on this kernel yet");
		/* The back edges around m. */
		for (j = m; j < c->len; j++) {
			if (c->second[j] || !bpfa_is_jump(&c->in[j]))
				continue;
			t = target_of(c, j);
			if (t <= m && t <= j) {
				h = t < h ? t : h;
				b = j > b ? j : b;
			}
		}
		if (h == ~0u)
			continue;	/* not in a loop: translated in place */
		if (b >= c->main_end)
			return perr(c, -EINVAL, m, MG "loop crossing into a subprogram");
		for (j = h; j <= b; j++)
			if (c->inloop[j])
				return perr(c, -EINVAL, m,
					    MG "loops that overlap are not supported on this kernel yet");
		if (c->nloops == MAX_LOOPS)
			return perr(c, -EINVAL, m, MG "loops: more than %d in one program", MAX_LOOPS);
		l = &c->loops[c->nloops++];
		memset(l, 0, sizeof(*l));
		l->h = h;
		l->b = b;
		for (j = h; j <= b; j++)
			c->inloop[j] = (__u8)c->nloops;
		if (check_loop(c, l))
			return c->err;
	}
	return 0;
}

/* The function's own stack depth: every r10-derived offset it forms. */
static int stack_depth(struct pctx *c)
{
	__s32 lo = 0, off;
	__u32 i;

	for (i = 0; i < c->len; i++) {
		const struct bpf_insn *insn = &c->in[i];
		const __u32 *t = &c->ty[i * NREGS];
		__u8 cls = BPF_CLASS(insn->code);

		if (i >= c->main_end)
			break;
		if (c->second[i] || !(c->vis[i] & 1))
			continue;
		if (cls == BPF_LDX || cls == BPF_STX || cls == BPF_ST) {
			__u8 base = cls == BPF_LDX ? insn->src_reg : insn->dst_reg;

			if (base == BPF_REG_10)
				off = insn->off;
			else if (base < NREGS && T_KIND(t[base]) == T_FP)
				off = T_FPOFF(t[base]) + insn->off;
			else
				off = 0;
			lo = off < lo ? off : lo;
		}
		if ((cls == BPF_ALU64 || cls == BPF_ALU) && BPF_OP(insn->code) != BPF_MOV &&
		    ((insn->dst_reg < NREGS && T_KIND(t[insn->dst_reg]) == T_FP &&
		      !(cls == BPF_ALU64 && BPF_SRC(insn->code) == BPF_K &&
			(BPF_OP(insn->code) == BPF_ADD || BPF_OP(insn->code) == BPF_SUB))) ||
		     (BPF_SRC(insn->code) == BPF_X &&
		      (insn->src_reg == BPF_REG_10 ||
		       (insn->src_reg < NREGS && T_KIND(t[insn->src_reg]) == T_FP)))))
			return perr(c, -EINVAL, i,
				    MG "in a program with a variable stack offset is not supported on this kernel yet");
		if (insn->dst_reg < NREGS && T_KIND(t[insn->dst_reg]) == T_FP &&
		    T_FPOFF(t[insn->dst_reg]) < lo)
			lo = T_FPOFF(t[insn->dst_reg]);
	}
	c->depth = (__u32)((-lo + 7) & ~7);
	/* 6.1 sums the frames of main, callback and body, each rounded to 32. */
	if (ROUND32(c->depth + RESERVED) + 32 + ROUND32(RESERVED) > STACK_MAX)
		return perr(c, -E2BIG, 0,
			    MG "needs %u bytes of stack below the program's %u: too many for this kernel",
			    RESERVED, c->depth);
	return 0;
}

/* ---- emission ---- */

static bool grow(struct pctx *c, void **p, __u32 *cap, __u32 need, size_t size)
{
	__u32 ncap;
	void *np;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : 256;
	while (ncap < need)
		ncap *= 2;
	np = palloc(c, ncap, size);
	if (!np) {
		perr(c, -ENOMEM, 0, "out of memory");
		return false;
	}
	if (*p) {
		memcpy(np, *p, (size_t)*cap * size);
		pfree(c, *p);
	}
	*p = np;
	*cap = ncap;
	return true;
}

static void put(struct pctx *c, struct bpf_insn insn)
{
	if (c->err)
		return;
	if (c->n >= BPFA_LOOPS_MAX_OUT) {
		perr(c, -E2BIG, 0, "program too large after the may_goto loop translation");
		return;
	}
	if (!grow(c, (void **)&c->o, &c->cap, c->n + 1, sizeof(*c->o)))
		return;
	c->o[c->n++] = insn;
}

static __u32 new_label(struct pctx *c)
{
	if (!grow(c, (void **)&c->lpos, &c->caplbl, c->nlbl + 1, sizeof(*c->lpos)))
		return 0;
	c->lpos[c->nlbl] = ~0u;
	return c->nlbl++;
}

static void set_label(struct pctx *c, __u32 l)
{
	if (!c->err)
		c->lpos[l] = c->n;
}

/* insn whose offset (kind) is fixed to reach label l. */
static void put_fix(struct pctx *c, struct bpf_insn insn, __u32 l, __u8 kind)
{
	if (c->err || !grow(c, (void **)&c->fx, &c->capfx, c->nfx + 1, sizeof(*c->fx)))
		return;
	c->fx[c->nfx].at = c->n;
	c->fx[c->nfx].lbl = l;
	c->fx[c->nfx].kind = kind;
	c->nfx++;
	put(c, insn);
}

static struct bpf_insn I(__u8 code, __u8 d, __u8 s, __s16 off, __s32 imm)
{
	return bpfa_insn(code, d, s, off, imm);
}

#define STX_DW(d, s, off)	I(BPF_STX | BPF_MEM | BPF_DW, d, s, off, 0)
#define LDX_DW(d, s, off)	I(BPF_LDX | BPF_MEM | BPF_DW, d, s, off, 0)
#define ST_DW(d, off, imm)	I(BPF_ST | BPF_MEM | BPF_DW, d, 0, off, imm)
#define MOV_K(d, imm)		I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, imm)
#define MOV_X(d, s)		I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, imm)		I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, imm)
#define EXIT_I()		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define JA_I()			I(BPF_JMP | BPF_JA, 0, 0, 0, 0)

static void put_ldimm64_copy(struct pctx *c, __u32 i)
{
	put(c, c->in[i]);
	put(c, c->in[i + 1]);
}

/* may_goto +off at insn m, on the budget slot of a frame of depth d. */
static void put_may_goto(struct pctx *c, __u32 m, __u32 d, __u32 target_lbl)
{
	__u16 live = c->live[m];
	__u8 r;

	for (r = 0; r < NREGS && (live & rbit(r)); r++)
		;
	if (r == NREGS) {
		perr(c, -EINVAL, m, MG "with every register live: no room for the budget test");
		return;
	}
	put(c, LDX_DW(r, BPF_REG_10, (__s16)OFF_BUDGET(d)));
	put_fix(c, I(BPF_JMP | BPF_JEQ | BPF_K, r, 0, 0, 0), target_lbl, FX_OFF);
	put(c, ADD_K(r, -1));
	put(c, STX_DW(BPF_REG_10, r, (__s16)OFF_BUDGET(d)));
}

/* A copy of insn i (not ld_imm64 second halves), its jump aimed at lbl. */
static void put_insn(struct pctx *c, __u32 i, __u32 lbl)
{
	const struct bpf_insn *insn = &c->in[i];

	if (is_pfunc(insn) || is_pcall(insn)) {
		/* Subprograms are copied with main: their label is their insn. */
		put_fix(c, *insn, (__u32)(i + 1 + insn->imm), FX_CALL);
		if (is_pfunc(insn))
			put(c, insn[1]);
		return;
	}
	if (bpfa_is_ldimm64(insn)) {
		put_ldimm64_copy(c, i);
		return;
	}
	if (bpfa_is_jump(insn)) {
		put_fix(c, *insn, lbl, insn->code == (BPF_JMP32 | BPF_JA) ? FX_IMM : FX_OFF);
		return;
	}
	put(c, *insn);
}

/* Registers carried as bits across an edge: live there, typed T_BITS. */
static __u16 carried(__u16 live, const __u32 *ty)
{
	__u16 m = 0;
	__u8 r;

	for (r = 0; r < NREGS; r++)
		if ((live & rbit(r)) && T_KIND(ty[r]) == T_BITS)
			m |= rbit(r);
	return m;
}

/* Body: save m into own slots, copy them and the budget to *frame; r0 = ret. */
static void put_copy_out(struct pctx *c, __u16 m, __s32 exit_code)
{
	__u8 r;

	for (r = 0; r < NREGS; r++)
		if (m & rbit(r))
			put(c, STX_DW(BPF_REG_10, r, (__s16)OFF_REG(0, r)));
	put(c, LDX_DW(BPF_REG_1, BPF_REG_10, (__s16)OFF_FPSAVE(0)));
	for (r = 0; r < NREGS; r++) {
		if (!(m & rbit(r)))
			continue;
		put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)OFF_REG(0, r)));
		put(c, STX_DW(BPF_REG_1, BPF_REG_0, (__s16)FR_REG(r)));
	}
	put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)OFF_BUDGET(0)));
	put(c, STX_DW(BPF_REG_1, BPF_REG_0, (__s16)FR_BUDGET));
	if (exit_code)
		put(c, ST_DW(BPF_REG_1, (__s16)FR_EXIT, exit_code));
	put(c, MOV_K(BPF_REG_0, exit_code ? 1 : 0));
	put(c, EXIT_I());
}

/* Re-derives r (typed ty, not carried) in a frame of depth d. */
static void put_rederive(struct pctx *c, __u8 r, __u32 ty, __u32 d)
{
	switch (T_KIND(ty)) {
	case T_MAP: {
		struct bpf_insn ld = c->in[ty & 0x0fffffff];

		ld.dst_reg = r;
		put(c, ld);
		put(c, c->in[(ty & 0x0fffffff) + 1]);
		break;
	}
	case T_CTX:
		put(c, LDX_DW(r, BPF_REG_10, (__s16)OFF_CTX(d)));
		break;
	case T_FP:
		put(c, MOV_X(r, BPF_REG_10));
		put(c, ADD_K(r, T_FPOFF(ty)));
		break;
	}
}

static void put_body(struct pctx *c, const struct loop *l, __u32 body_lbl, const __u32 *exit_lbl,
		     __u32 back_lbl)
{
	const __u32 *hty = &c->ty[l->h * NREGS];
	__u16 hm = carried(c->live[l->h], hty);
	__u32 i, t, j, lbl;
	__u8 r;

	set_label(c, body_lbl);
	/* The frame argument is PTR_TO_MEM_OR_NULL: never NULL from the callers. */
	put(c, I(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_1, 0, 2, 0));
	put(c, MOV_K(BPF_REG_0, 1));
	put(c, EXIT_I());
	put(c, STX_DW(BPF_REG_10, BPF_REG_1, (__s16)OFF_FPSAVE(0)));
	put(c, LDX_DW(BPF_REG_0, BPF_REG_1, (__s16)FR_BUDGET));
	put(c, STX_DW(BPF_REG_10, BPF_REG_0, (__s16)OFF_BUDGET(0)));
	for (r = NREGS; r-- > 0;) {	/* r1, the frame pointer, last */
		if (!(c->live[l->h] & rbit(r)) || r == BPF_REG_1)
			continue;
		if (hm & rbit(r))
			put(c, LDX_DW(r, BPF_REG_1, (__s16)FR_REG(r)));
		else if (T_KIND(hty[r]) == T_MAP)
			put_rederive(c, r, hty[r], 0);
	}
	/* ctx and stack pointers only pass by (check_loop()): not in the body. */
	if (c->live[l->h] & rbit(1)) {
		if (hm & rbit(1))
			put(c, LDX_DW(BPF_REG_1, BPF_REG_1, (__s16)FR_REG(1)));
		else if (T_KIND(hty[1]) == T_MAP)
			put_rederive(c, BPF_REG_1, hty[1], 0);
	}
	/* The loop, falling into its head. */
	for (i = l->h; i <= l->b; i++) {
		__u32 s[2];

		if (c->second[i])
			continue;
		set_label(c, c->len + i);
		if (bpfa_is_jump(&c->in[i])) {
			t = target_of(c, i);
			if (t == l->h)
				lbl = back_lbl;
			else if (t > l->h && t <= l->b)
				lbl = c->len + t;
			else
				for (j = 0, lbl = 0; j < l->nexits; j++)
					if (l->exit_t[j] == t)
						lbl = exit_lbl[j];
			if (bpfa_is_may_goto(&c->in[i]))
				put_may_goto(c, i, 0, lbl);
			else
				put_insn(c, i, lbl);
		} else if (is_exit(&c->in[i])) {
			for (j = 0; j < l->nexits && l->exit_t[j] != EXIT_RET; j++)
				;
			put_fix(c, JA_I(), exit_lbl[j], FX_OFF);
		} else {
			put_insn(c, i, 0);
		}
		/* Falling out of the interval (only at b): an exit edge. */
		if (i == l->b && succs(c, i, s) && !is_ja(&c->in[i]) && !is_exit(&c->in[i])) {
			t = next_of(c, i);
			for (j = 0; j < l->nexits && l->exit_t[j] != t; j++)
				;
			if (j < l->nexits)
				put_fix(c, JA_I(), exit_lbl[j], FX_OFF);
		}
	}
	set_label(c, back_lbl);
	put_copy_out(c, hm, 0);
	for (j = 0; j < l->nexits; j++) {
		set_label(c, exit_lbl[j]);
		put_copy_out(c, carried(l->exit_live[j], l->exit_ty[j]), (__s32)(j + 1));
	}
}

static void put_driver(struct pctx *c, const struct loop *l, __u32 cb_lbl, __u32 body_lbl)
{
	const __u32 *hty = &c->ty[l->h * NREGS];
	__u16 hm = carried(c->live[l->h], hty);
	__u32 d = c->depth, j, xl[MAX_EXITS];
	__u8 r;

	for (r = 0; r < NREGS; r++) {
		if (hm & rbit(r))
			put(c, STX_DW(BPF_REG_10, r, (__s16)OFF_REG(d, r)));
		else
			put(c, ST_DW(BPF_REG_10, (__s16)OFF_REG(d, r), 0));
	}
	put(c, ST_DW(BPF_REG_10, (__s16)OFF_EXIT(d), 0));
	put(c, MOV_K(BPF_REG_1, (__s32)BPFA_MAX_LOOPS));
	put_fix(c, I(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_2, BPF_PSEUDO_FUNC, 0, 0), cb_lbl, FX_CALL);
	put(c, I(0, 0, 0, 0, 0));
	put(c, MOV_X(BPF_REG_3, BPF_REG_10));
	put(c, ADD_K(BPF_REG_3, R_LO(d)));
	put(c, MOV_K(BPF_REG_4, 0));
	put(c, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_loop));
	/* bpf_loop() ran out of iterations without an exit: one more run. */
	put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)OFF_EXIT(d)));
	put(c, I(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 3, 0));
	put(c, MOV_X(BPF_REG_1, BPF_REG_10));
	put(c, ADD_K(BPF_REG_1, R_LO(d)));
	put_fix(c, I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0), body_lbl, FX_CALL);
	put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)OFF_EXIT(d)));
	for (j = 0; j < l->nexits; j++) {
		xl[j] = new_label(c);
		put_fix(c, I(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, (__s32)(j + 1)), xl[j],
			FX_OFF);
	}
	put_fix(c, JA_I(), xl[l->forced - 1], FX_OFF);
	for (j = 0; j < l->nexits; j++) {
		__u16 live = l->exit_live[j], m = carried(live, l->exit_ty[j]);

		set_label(c, xl[j]);
		for (r = 0; r < NREGS; r++) {
			if (!(live & rbit(r)))
				continue;
			if (m & rbit(r))
				put(c, LDX_DW(r, BPF_REG_10, (__s16)OFF_REG(d, r)));
			else
				put_rederive(c, r, l->exit_ty[j][r], d);
		}
		if (l->exit_t[j] == EXIT_RET)
			put(c, EXIT_I());
		else
			put_fix(c, JA_I(), l->exit_t[j], FX_OFF);
	}
}

static void put_cb(struct pctx *c, __u32 cb_lbl, __u32 body_lbl)
{
	set_label(c, cb_lbl);
	put(c, MOV_X(BPF_REG_1, BPF_REG_2));
	put_fix(c, I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0), body_lbl, FX_CALL);
	put(c, I(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0));
	put(c, MOV_K(BPF_REG_0, 1));
	put(c, EXIT_I());
}

static int resolve(struct pctx *c)
{
	__u32 k;

	for (k = 0; k < c->nfx && !c->err; k++) {
		struct fix *f = &c->fx[k];
		__s64 d;

		if (f->lbl >= c->nlbl || c->lpos[f->lbl] == ~0u)
			return perr(c, -EFAULT, 0, "loop translation: unresolved label");
		d = (__s64)c->lpos[f->lbl] - f->at - 1;
		if (f->kind == FX_OFF) {
			if (d < -32768 || d > 32767)
				return perr(c, -E2BIG, 0, "jump out of range after the loop translation");
			c->o[f->at].off = (__s16)d;
		} else {
			c->o[f->at].imm = (__s32)d;
		}
	}
	return c->err;
}

/* ---- BTF ---- */

/*
 * The types the pass adds, numbered from id_base + 1, their names from
 * str_base on (a blob of its own: id_base = str_base = 0, after a "" string):
 * +1 u64, +2 int, +3 u64[R_LEN / 8], +4 ptr to +3, +5 int (void),
 * +6 int (u64 (*frame)[...]), +7 FUNC bpfa_main (only without program BTF),
 * then per loop FUNC cb (static), FUNC body (global).
 */
struct btfw {
	__u8 *t, *s;		/* NULL: count only */
	__u32 tlen, slen, id_base, str_base;
};

static void bt_u32(struct btfw *w, __u32 v)
{
	if (w->t)
		memcpy(w->t + w->tlen, &v, 4);
	w->tlen += 4;
}

static __u32 bt_str(struct btfw *w, const char *str)
{
	__u32 off = w->slen, n = (__u32)strlen(str) + 1;

	if (w->s)
		memcpy(w->s + off, str, n);
	w->slen += n;
	return w->str_base + off;
}

static void bt_type(struct btfw *w, const char *name, __u32 info, __u32 size_or_type)
{
	bt_u32(w, name ? bt_str(w, name) : 0);
	bt_u32(w, info);
	bt_u32(w, size_or_type);
}

/* Writes (or counts) the added types; the first FUNC's id is returned. */
static __u32 bt_added(struct pctx *c, struct btfw *w, bool main_func)
{
	__u32 b = w->id_base, k, first;
	char name[48];

	if (!w->id_base)
		bt_str(w, "");
	bt_type(w, "u64", BTF_KIND_INT << 24, 8);
	bt_u32(w, 64);
	bt_type(w, "int", BTF_KIND_INT << 24, 4);
	bt_u32(w, BTF_INT_SIGNED << 24 | 32);
	bt_type(w, NULL, BTF_KIND_ARRAY << 24, 0);
	bt_u32(w, b + 1);
	bt_u32(w, b + 2);
	bt_u32(w, R_LEN / 8);
	bt_type(w, NULL, BTF_KIND_PTR << 24, b + 3);
	bt_type(w, NULL, BTF_KIND_FUNC_PROTO << 24, b + 2);
	bt_type(w, NULL, BTF_KIND_FUNC_PROTO << 24 | 1, b + 2);
	bt_u32(w, bt_str(w, "frame"));
	bt_u32(w, b + 4);
	first = b + 7;
	if (main_func) {
		bt_type(w, "bpfa_main", BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, b + 5);
		for (k = 0; k < c->nsubs; k++) {
			snprintf(name, sizeof(name), "bpfa_sub_%u", k);
			bt_type(w, name, BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, b + 5);
		}
	}
	for (k = 0; k < c->nloops; k++) {
		snprintf(name, sizeof(name), "bpfa_loop_cb_%u", k);
		bt_type(w, name, BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, b + 5);
		snprintf(name, sizeof(name), "bpfa_loop_body_%u", k);
		bt_type(w, name, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, b + 6);
	}
	return first;
}

/* Number of types in a blob the kernel already validated; 0 if it cannot be walked. */
static __u32 btf_count_types(const __u8 *types, __u32 len)
{
	__u32 pos = 0, n = 0, vlen, add;

	while (pos < len) {
		const struct btf_type *t = (const void *)(types + pos);

		if (len - pos < sizeof(*t))
			return 0;
		vlen = BTF_INFO_VLEN(t->info);
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
			add = 4;
			break;
		case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE: case BTF_KIND_CONST: case BTF_KIND_RESTRICT:
		case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
			add = 0;
			break;
		case BTF_KIND_ARRAY:
			add = sizeof(struct btf_array);
			break;
		case BTF_KIND_STRUCT: case BTF_KIND_UNION:
			add = vlen * sizeof(struct btf_member);
			break;
		case BTF_KIND_ENUM:
			add = vlen * sizeof(struct btf_enum);
			break;
		case BTF_KIND_ENUM64:
			add = vlen * 12;
			break;
		case BTF_KIND_FUNC_PROTO:
			add = vlen * sizeof(struct btf_param);
			break;
		case BTF_KIND_DATASEC:
			add = vlen * sizeof(struct btf_var_secinfo);
			break;
		default:
			return 0;
		}
		if (len - pos - sizeof(*t) < add)
			return 0;
		pos += sizeof(*t) + add;
		n++;
	}
	return n;
}

static const void *rec(const void *base, __u32 i, __u32 size)
{
	return (const __u8 *)base + (size_t)i * size;
}

/* Where lowered insn i (not in a loop, or its main copy) ended up. */
static __u32 main_pos(const struct pctx *c, __u32 i)
{
	return i ? c->lpos[i] : 0;	/* insn 0's line covers main's prologue */
}

static int build_line_info(struct pctx *c)
{
	const struct bpfa_loops_env *env = c->env;
	struct bpfa_loops_result *res = c->res;
	struct bpf_line_info li, *o;
	__u32 i, k, n = 0, off, head = 0;
	bool have_head;

	if (!env->line_info_cnt)
		return 0;
	if (!env->line_info || env->line_info_rec_size < sizeof(li))
		return perr(c, -EINVAL, 0, MG "with this program's line_info is not supported yet");
	o = palloc(c, env->line_info_cnt + 3 * c->nloops, sizeof(*o));
	if (!o)
		return perr(c, -ENOMEM, 0, "out of memory");
	res->line_info = o;
	for (i = 0; i < env->line_info_cnt; i++) {
		memcpy(&li, rec(env->line_info, i, env->line_info_rec_size), sizeof(li));
		off = li.insn_off;
		if (off >= c->len || c->second[off] ||
		    (c->inloop[off] && off != c->loops[c->inloop[off] - 1].h))
			continue;	/* past the end (the verifier refuses it) or moved */
		li.insn_off = main_pos(c, off);
		if (n && li.insn_off <= o[n - 1].insn_off)
			continue;
		o[n++] = li;
	}
	for (k = 0; k < c->nloops; k++) {
		const struct loop *l = &c->loops[k];

		/* The callback and the body's prologue get the head's line. */
		have_head = false;
		for (i = 0; i < env->line_info_cnt; i++) {
			memcpy(&li, rec(env->line_info, i, env->line_info_rec_size), sizeof(li));
			if (li.insn_off <= l->h) {
				head = i;
				have_head = true;
			}
		}
		if (!have_head)
			return perr(c, -EINVAL, l->h, MG "loop at insn %u: no line_info before it",
				    orig_idx(c, l->h));
		memcpy(&li, rec(env->line_info, head, env->line_info_rec_size), sizeof(li));
		li.insn_off = l->cb_pos;
		o[n++] = li;
		li.insn_off = l->body_pos;
		o[n++] = li;
		for (i = 0; i < env->line_info_cnt; i++) {
			memcpy(&li, rec(env->line_info, i, env->line_info_rec_size), sizeof(li));
			off = li.insn_off;
			if (off < l->h || off > l->b || c->second[off])
				continue;
			li.insn_off = c->lpos[c->len + off];
			if (li.insn_off <= o[n - 1].insn_off)
				continue;
			if (n == env->line_info_cnt + 3 * c->nloops)
				break;
			o[n++] = li;
		}
	}
	res->line_info_cnt = n;
	return 0;
}

static int build_btf(struct pctx *c)
{
	const struct bpfa_loops_env *env = c->env;
	struct bpfa_loops_result *res = c->res;
	struct btf_header h, oh;
	struct btfw w = { 0 };
	__u32 k, i, nf, first, ntypes = 0, otlen = 0, oslen = 0;
	const __u8 *otypes = NULL, *ostrs = NULL;
	__u8 *blob;

	if (env->has_btf) {
		if (!env->btf || env->btf_size < sizeof(oh) || !env->func_info ||
		    env->func_info_cnt != 1 + c->nsubs ||
		    env->func_info_rec_size < sizeof(struct bpf_func_info) ||
		    (env->line_info_cnt && env->line_info_rec_size < sizeof(struct bpf_line_info)))
			return perr(c, -EINVAL, 0, MG "with this program's BTF is not supported yet");
		memcpy(&oh, env->btf, sizeof(oh));
		if (oh.hdr_len < sizeof(oh) || oh.hdr_len > env->btf_size ||
		    (__u64)oh.type_off + oh.type_len > env->btf_size - oh.hdr_len ||
		    (__u64)oh.str_off + oh.str_len > env->btf_size - oh.hdr_len || !oh.str_len)
			return perr(c, -EINVAL, 0, MG "with this program's BTF is not supported yet");
		otypes = (const __u8 *)env->btf + oh.hdr_len + oh.type_off;
		ostrs = (const __u8 *)env->btf + oh.hdr_len + oh.str_off;
		otlen = oh.type_len;
		oslen = oh.str_len;
		ntypes = btf_count_types(otypes, otlen);
		if (!ntypes && otlen)
			return perr(c, -EINVAL, 0, MG "with this program's BTF is not supported yet");
		w.id_base = ntypes;
		w.str_base = oslen;
	}
	bt_added(c, &w, !env->has_btf);
	if ((__u64)otlen + w.tlen + oslen + w.slen > (16u << 20))
		return perr(c, -E2BIG, 0, MG "program BTF too large to extend");
	blob = palloc(c, sizeof(h) + otlen + w.tlen + oslen + w.slen, 1);
	if (!blob)
		return perr(c, -ENOMEM, 0, "out of memory");
	res->btf = blob;
	memset(&h, 0, sizeof(h));
	h.magic = BTF_MAGIC;
	h.version = BTF_VERSION;
	h.hdr_len = sizeof(h);
	h.type_len = otlen + w.tlen;
	h.str_off = h.type_len;
	h.str_len = oslen + w.slen;
	memcpy(blob, &h, sizeof(h));
	if (otlen)
		memcpy(blob + sizeof(h), otypes, otlen);
	if (oslen)
		memcpy(blob + sizeof(h) + h.str_off, ostrs, oslen);
	w.t = blob + sizeof(h) + otlen;
	w.s = blob + sizeof(h) + h.str_off + oslen;
	w.tlen = 0;
	w.slen = 0;
	first = bt_added(c, &w, !env->has_btf);
	res->btf_size = sizeof(h) + h.type_len + h.str_len;
	nf = env->has_btf ? env->func_info_cnt : 1 + c->nsubs;
	res->func_info = palloc(c, nf + 2 * c->nloops, sizeof(*res->func_info));
	if (!res->func_info)
		return perr(c, -ENOMEM, 0, "out of memory");
	if (env->has_btf) {
		/* Main's and the subprograms' records, moved with their code. */
		for (k = 0; k < nf; k++) {
			struct bpf_func_info *f = &res->func_info[k];

			memcpy(f, rec(env->func_info, k, env->func_info_rec_size), sizeof(*f));
			f->insn_off = f->insn_off < c->len && !c->inloop[f->insn_off] ?
				      main_pos(c, f->insn_off) : c->n;
		}
	} else {
		for (k = 0, i = 0; i < c->len; i++) {
			if (i && !c->substart[i])
				continue;
			res->func_info[k].insn_off = main_pos(c, i);
			res->func_info[k++].type_id = first++;
		}
	}
	for (k = 0; k < c->nloops; k++) {
		res->func_info[nf + 2 * k].insn_off = c->loops[k].cb_pos;
		res->func_info[nf + 2 * k].type_id = first + 2 * k;
		res->func_info[nf + 2 * k + 1].insn_off = c->loops[k].body_pos;
		res->func_info[nf + 2 * k + 1].type_id = first + 2 * k + 1;
	}
	res->func_info_cnt = nf + 2 * c->nloops;
	return build_line_info(c);
}

static int emit(struct pctx *c)
{
	struct loop *l;
	__u32 i, k, j;

	/* Labels 0..len-1: main's copy of insn i; len..2len-1: the body's copy. */
	for (i = 0; i < 2 * c->len; i++)
		new_label(c);
	for (k = 0; k < c->nloops; k++) {
		l = &c->loops[k];
		l->cb_lbl = new_label(c);
		l->body_lbl = new_label(c);
		l->back_lbl = new_label(c);
		for (j = 0; j < l->nexits; j++)
			l->exit_lbl[j] = new_label(c);
	}
	if (c->err)
		return c->err;
	/* main's prologue: the context and the may_goto budget. */
	put(c, STX_DW(BPF_REG_10, BPF_REG_1, (__s16)OFF_CTX(c->depth)));
	put(c, ST_DW(BPF_REG_10, (__s16)OFF_BUDGET(c->depth), (__s32)BPFA_MAX_LOOPS));
	for (i = 0; i < c->len && !c->err; i++) {
		if (c->second[i])
			continue;
		set_label(c, i);
		if (c->inloop[i]) {
			l = &c->loops[c->inloop[i] - 1];
			put_driver(c, l, l->cb_lbl, l->body_lbl);
			i = l->b;
			continue;
		}
		if (bpfa_is_may_goto(&c->in[i]))
			put_may_goto(c, i, c->depth, target_of(c, i));
		else
			put_insn(c, i, bpfa_is_jump(&c->in[i]) ? target_of(c, i) : 0);
	}
	for (k = 0; k < c->nloops && !c->err; k++) {
		l = &c->loops[k];
		l->cb_pos = c->n;
		put_cb(c, l->cb_lbl, l->body_lbl);
		l->body_pos = c->n;
		put_body(c, l, l->body_lbl, l->exit_lbl, l->back_lbl);
	}
	if (c->err || resolve(c))
		return c->err;
	return build_btf(c);
}

static int run(struct pctx *c, __u32 len)
{
	c->second = palloc(c, len, 1);
	c->substart = palloc(c, len, 1);
	c->vis = palloc(c, len, 1);
	c->inloop = palloc(c, len, 1);
	c->live = palloc(c, len, sizeof(*c->live));
	c->llive = palloc(c, len, sizeof(*c->llive));
	c->ty = palloc(c, (size_t)len * NREGS, sizeof(*c->ty));
	c->work = palloc(c, len, sizeof(*c->work));
	if (!c->second || !c->substart || !c->vis || !c->inloop || !c->live || !c->llive || !c->ty || !c->work)
		return perr(c, -ENOMEM, 0, "out of memory");
	if (structure(c) || types(c))
		return c->err;
	liveness(c, c->live, 0, len - 1, true);
	if (stack_depth(c) || find_loops(c))
		return c->err;
	return emit(c);
}

int bpfa_loops(const struct bpfa_loops_env *env, const struct bpf_insn *insns, __u32 len,
	       struct bpfa_loops_result *res)
{
	struct pctx *c;
	int err;

	memset(res, 0, sizeof(*res));
	if (!len || len > BPFA_LOOPS_MAX_INSNS)
		return set_msg(res, 0,
			       MG "in a program of more than %u insns is not supported on this kernel",
			       BPFA_LOOPS_MAX_INSNS);
	c = env->zalloc(env->ctx, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->env = env;
	c->in = insns;
	c->len = len;
	c->res = res;
	run(c, len);
	pfree(c, c->second);
	pfree(c, c->substart);
	pfree(c, c->vis);
	pfree(c, c->inloop);
	pfree(c, c->live);
	pfree(c, c->llive);
	pfree(c, c->ty);
	pfree(c, c->work);
	pfree(c, c->fx);
	pfree(c, c->lpos);
	err = c->err;
	if (err) {
		pfree(c, c->o);
		pfree(c, res->btf);
		pfree(c, res->func_info);
		pfree(c, res->line_info);
		res->btf = NULL;
		res->func_info = NULL;
		res->line_info = NULL;
	} else {
		res->insns = c->o;
		res->len = c->n;
		res->loops = c->nloops;
	}
	env->free(env->ctx, c);
	return err;
}

void bpfa_loops_free(const struct bpfa_loops_env *env, struct bpfa_loops_result *res)
{
	if (res->insns)
		env->free(env->ctx, res->insns);
	if (res->btf)
		env->free(env->ctx, res->btf);
	if (res->func_info)
		env->free(env->ctx, res->func_info);
	if (res->line_info)
		env->free(env->ctx, res->line_info);
	res->line_info = NULL;
	res->insns = NULL;
	res->btf = NULL;
	res->func_info = NULL;
}

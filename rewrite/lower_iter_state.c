// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the number iterators' rules, checked as upstream's
 * verifier checks them (6.4+ process_iter_arg() and friends), because the
 * lowering turns each iterator into 8 bytes of plain stack that 6.1's
 * verifier lets the program read, overwrite and forget (lower_iter.c).
 * Run after the dataflow, before anything is emitted, on the subprograms
 * that call bpf_iter_num_*; a program upstream refuses is refused here,
 * with upstream's errno and words and the user's instruction.
 *
 * Per stack slot of the subprogram's own frame: may it hold an active
 * iterator, may it not.  Upstream's rules, in those terms:
 *  - bpf_iter_num_new() needs a slot that is no iterator ("expected
 *    uninitialized iter_num"); next() and destroy() one that is ("expected
 *    an initialized iter_num"); the argument is this frame's r10 + k, k a
 *    multiple of 8;
 *  - an active iterator's slot is read or written by nothing else: not by
 *    loads, stores, atomics or helpers; only through the `int *` next()
 *    returns, 4 bytes;
 *  - no path leaves the subprogram, or tail-calls, with an iterator active
 *    ("Unreleased reference");
 *  - r1-r5 (and r0 after destroy()) are unreadable after the call, as after
 *    any call (the inline code leaves values there).
 * Path-insensitive where upstream follows paths: a slot active on one path
 * into a join and not on another is refused at its next use, which only a
 * program correlating two branches on one condition would notice
 * (docs/LOOPS.md).
 *
 * Registers are tracked as far as these rules need: constants (sizes),
 * pointers into this frame at a known offset or not, next()'s pointer, the
 * map an ld_imm64 names (the size of a key or value passed to a helper).
 */
#include "lower_internal.h"
#include "helper_args.h"

#define NSLOTS		64
#define ITER_SIZE	8	/* sizeof(struct bpf_iter_num): one slot */
#define CUR_SIZE	4	/* next()'s int * */

enum {
	K_BOT,		/* no path has written it yet */
	K_CONST,	/* the scalar v */
	K_OTHER,	/* a scalar or a pointer that is not into this frame */
	K_MAP,		/* the map of the ld_imm64 at insn v */
	K_FP,		/* r10 + v */
	K_CUR,		/* next()'s pointer into slot s, + v */
	K_FPANY,	/* may point into this frame, offset unknown */
};

struct ireg {
	__u8 kind;
	__u8 slot;
	__s32 v;
};

struct istate {
	__u64 act;		/* bit k: slot k may hold an active iterator */
	__u64 inact;		/* bit k: slot k may hold no iterator */
	__u64 spfp;		/* bit k: slot k may hold a spilled pointer into this frame */
	__u16 dead;		/* bit r: r may be unreadable after an inline iterator call */
	__u8 vis;
	struct ireg r[10];
};

struct ictx {
	struct lctx *c;
	struct istate *st;	/* per block of the subprogram, from b0 */
	__u32 b0, nb;
	bool final;
	__u8 *active_callee;	/* per subprogram: called with an iterator active */
};

static bool is_ptr(__u8 k)
{
	return k == K_FP || k == K_CUR || k == K_FPANY;
}

static bool reg_eq(struct ireg a, struct ireg b)
{
	return a.kind == b.kind && a.slot == b.slot && a.v == b.v;
}

static struct ireg reg_join(struct ireg a, struct ireg b)
{
	struct ireg o = { K_OTHER, 0, 0 };

	if (a.kind == K_BOT)
		return b;
	if (b.kind == K_BOT || reg_eq(a, b))
		return a;
	/*
	 * A constant meeting a pointer stays the pointer (`elem = NULL` on one
	 * path, next()'s pointer on the other): dereferenced, the constant is
	 * refused by the verifier, so only the pointer decides what is touched.
	 */
	if (a.kind == K_CONST && is_ptr(b.kind))
		return b;
	if (b.kind == K_CONST && is_ptr(a.kind))
		return a;
	if (is_ptr(a.kind) || is_ptr(b.kind))
		o.kind = K_FPANY;
	return o;
}

static bool state_join(struct istate *d, const struct istate *s)
{
	bool changed = false;
	struct ireg j;
	int r;

	if (!d->vis) {
		*d = *s;
		d->vis = 1;
		return true;
	}
	if ((d->act | s->act) != d->act || (d->inact | s->inact) != d->inact ||
	    (d->spfp | s->spfp) != d->spfp || (d->dead | s->dead) != d->dead)
		changed = true;
	d->act |= s->act;
	d->inact |= s->inact;
	d->spfp |= s->spfp;
	d->dead |= s->dead;
	for (r = 0; r < 10; r++) {
		j = reg_join(d->r[r], s->r[r]);
		if (!reg_eq(j, d->r[r])) {
			d->r[r] = j;
			changed = true;
		}
	}
	return changed;
}

static struct ireg mk(__u8 kind, __s64 v)
{
	struct ireg o = { kind, 0, 0 };

	if (kind == K_CONST && (v < -0x7fffffffll || v > 0x7fffffffll))
		o.kind = K_OTHER;
	else
		o.v = (__s32)v;
	return o;
}

static struct ireg rd(const struct istate *st, __u8 r)
{
	if (r == BPF_REG_10)
		return mk(K_FP, 0);
	return r < 10 ? st->r[r] : mk(K_OTHER, 0);
}

static void wr(struct istate *st, __u8 r, struct ireg v)
{
	if (r < 10) {
		st->r[r] = v;
		st->dead &= ~(1u << r);
	}
}

/* Refusals: only in the final pass, the first in instruction order wins. */
BPFA_PRINTF(4, 5) static void refuse(struct ictx *x, int err, __u32 i, const char *fmt, ...)
{
	char m[BPFA_MSG_LEN];
	va_list ap;

	if (!x->final)
		return;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	lower_err(x->c, err, i, "%s", m);
}

static void check_reads(struct ictx *x, const struct istate *st, __u32 i, __u16 regs)
{
	__u16 bad = regs & st->dead;
	int r;

	for (r = 0; bad && r < 10; r++)
		if (bad & (1u << r)) {
			refuse(x, -EACCES, i,
			       "R%d !read_ok (unset by the bpf_iter_num call before it, as any call leaves R1-R5 and a void one R0)",
			       r);
			return;
		}
}

/* The slots [lo, hi) of the frame touch; false if none (outside the frame). */
static bool slot_span(__s32 lo, __s32 hi, int *k0, int *k1)
{
	if (hi <= -8 * NSLOTS || lo >= 0 || hi <= lo)
		return false;
	if (lo < -8 * NSLOTS)
		lo = -8 * NSLOTS;
	if (hi > 0)
		hi = 0;
	*k0 = (-hi) / 8;		/* highest address: lowest slot */
	*k1 = (-lo - 1) / 8;
	return true;
}

static int active_in(const struct istate *st, __s32 lo, __s32 hi)
{
	int k, k0, k1;

	if (!slot_span(lo, hi, &k0, &k1))
		return -1;
	for (k = k0; k <= k1; k++)
		if (st->act >> k & 1)
			return k;
	return -1;
}

/*
 * A load, store or atomic of size bytes at base + off.  Upstream: an
 * iterator's slot is unreadable ("invalid read from stack"); a write makes
 * it plain stack, the iterator never released ("Unreleased reference").
 */
static void check_access(struct ictx *x, const struct istate *st, __u32 i, __u8 reg,
			 struct ireg base, __s16 off, __u32 size, bool write)
{
	__s32 lo = base.v + off;
	int k;

	if (base.kind == K_CUR) {
		if (write)
			refuse(x, -EACCES, i,
			       "R%u cannot write into rdonly_mem (bpf_iter_num_next()'s int * is read-only)",
			       reg);
		else if (lo < 0 || lo + (__s32)size > CUR_SIZE)
			refuse(x, -EACCES, i,
			       "invalid access to memory, mem_size=%d off=%d size=%u (bpf_iter_num_next() returns an int *)",
			       CUR_SIZE, lo, size);
		return;
	}
	if (base.kind == K_FPANY) {
		if (st->act)
			refuse(x, -EACCES, i,
			       "stack access at an offset the module cannot tell while a bpf_iter_num is active: it may touch the iterator, which upstream refuses; index the stack at constant offsets inside the loop");
		return;
	}
	if (base.kind != K_FP)
		return;
	k = active_in(st, lo, lo + (__s32)size);
	if (k < 0)
		return;
	if (write)
		refuse(x, -EINVAL, i,
		       "write into fp%d, the state of an active bpf_iter_num: only bpf_iter_num_*() may change it (upstream: Unreleased reference)",
		       -8 * k - 8);
	else
		refuse(x, -EACCES, i,
		       "invalid read from stack off %d+0 size %u: fp%d holds an active bpf_iter_num (read the value through the pointer bpf_iter_num_next() returns)",
		       lo, size, -8 * k - 8);
}

/* A helper's, kfunc's or subprogram's memory argument: bytes [base, base + len); len < 0: up to the frame top, or any of it. */
static void check_arg(struct ictx *x, const struct istate *st, __u32 i, int argno,
		      struct ireg base, __s64 len, bool whole_frame, bool write)
{
	int k = -1;

	if (base.kind == K_CUR) {
		if (write)
			refuse(x, -EACCES, i,
			       "R%d cannot write into rdonly_mem (the call may write through bpf_iter_num_next()'s read-only int *)",
			       argno);
		else if (whole_frame || len < 0 || base.v < 0 || base.v + len > CUR_SIZE)
			refuse(x, -EACCES, i,
			       "R%d: the pointer bpf_iter_num_next() returns is passed where %s of it may be accessed: upstream allows %d bytes (an int *)",
			       argno, len < 0 ? "any amount" : "more", CUR_SIZE);
		return;
	}
	if (base.kind == K_FPANY) {
		if (st->act)
			refuse(x, -EACCES, i,
			       "R%d may point anywhere into the stack while a bpf_iter_num is active: the call may touch the iterator, which upstream refuses",
			       argno);
		return;
	}
	if (base.kind != K_FP)
		return;
	if (whole_frame)
		k = active_in(st, -8 * NSLOTS, 0);
	else
		k = active_in(st, base.v, len < 0 ? 0 : base.v + (__s32)len);
	if (k >= 0 && len < 0 && base.v == -8 * k - 8)
		refuse(x, -EACCES, i,
		       "R%d passes the active bpf_iter_num at fp%d to a call: the module cannot follow an iterator into another function yet (upstream can)",
		       argno, base.v);
	else if (k >= 0)
		refuse(x, -EACCES, i,
		       "R%d (fp%d) lets the call access fp%d, the state of an active bpf_iter_num, which upstream refuses%s",
		       argno, base.v, -8 * k - 8,
		       len < 0 ? " (the module cannot tell how far the callee reads or writes)" : "");
}

/* The key (or value) size of the map in R1 (an ld_imm64's), or -1 if unknown. */
static __s64 map_size(struct ictx *x, struct ireg map, bool value)
{
	const struct bpfa_lower_env *env = x->c->env;
	__u32 key_size, value_size;

	if (map.kind != K_MAP || !env->map_sizes ||
	    !env->map_sizes(env->ctx, &x->c->in[map.v], &key_size, &value_size))
		return -1;
	if (value)
		return value_size ? (__s64)value_size : -1;
	return key_size ? (__s64)key_size : -1;
}

/*
 * A subprogram called while an iterator may be active: it must not tail
 * call, nor must anything it calls (lower_iter_state() checks them).
 */
static void note_callee(struct ictx *x, __u32 i, const struct bpf_insn *insn,
			const struct istate *st)
{
	struct lctx *c = x->c;
	__s64 t = (__s64)i + 1 + insn->imm;

	if (x->final && st->act && t >= 0 && t < c->len && x->active_callee)
		x->active_callee[c->bsub[c->blk[t]]] = 1;
}

/* Checks a call's memory arguments; true if r0 may point into this frame. */
static bool xfer_helper(struct ictx *x, struct istate *st, __u32 i, const struct bpf_insn *insn)
{
	struct bpfa_helper_args ha;
	bool frame_arg = false;
	int a;

	bpfa_helper_args(insn, &ha);
	/* Unlisted: how many it reads is not known here; the verifier sees values. */
	if (ha.known)
		check_reads(x, st, i, (__u16)(((1u << ha.checked) - 1) << 1));
	if (insn->src_reg == 0 && insn->imm == BPF_FUNC_tail_call && st->act)
		refuse(x, -EINVAL, i,
		       "tail_call would lead to reference leak: a bpf_iter_num is active (destroy it first)");
	for (a = 0; a < ha.nargs; a++) {
		struct ireg p = rd(st, (__u8)(BPF_REG_1 + a)), n;
		__s64 len = -1;

		if (ha.kind[a] == BPFA_HARG_SCALAR)
			continue;
		if (is_ptr(p.kind))
			frame_arg = true;
		/* Only a refusal needs the length, and only the final pass refuses. */
		if (!x->final || !is_ptr(p.kind))
			continue;
		switch (ha.kind[a]) {
		case BPFA_HARG_MEM:
			n = a + 1 < 5 ? rd(st, (__u8)(BPF_REG_2 + a)) : mk(K_OTHER, 0);
			if (n.kind == K_CONST && n.v >= 0)
				len = n.v;
			break;
		case BPFA_HARG_FIXED:
			len = ha.fixed[a];
			break;
		case BPFA_HARG_MAP_KEY:
		case BPFA_HARG_MAP_VALUE:
			len = map_size(x, rd(st, BPF_REG_1), ha.kind[a] == BPFA_HARG_MAP_VALUE);
			break;
		}
		check_arg(x, st, i, a + 1, p, len, ha.kind[a] == BPFA_HARG_FRAME,
			  ha.writes >> a & 1);
	}
	if (!bpfa_is_pcall(insn))
		return false;
	note_callee(x, i, insn, st);
	/* A subprogram given a pointer into this frame may return one. */
	return frame_arg;
}

static void xfer_iter(struct ictx *x, struct istate *st, __u32 i, __u8 a)
{
	static const char *const name[] = { "new", "next", "destroy" };
	const char *fn = name[a == A_ITER_NEW ? 0 : a == A_ITER_NEXT ? 1 : 2];
	struct ireg p = rd(st, BPF_REG_1);
	int k, r;

	check_reads(x, st, i, a == A_ITER_NEW ? 0xe : 0x2);
	if (p.kind != K_FP) {
		refuse(x, -EINVAL, i,
		       "arg#0 expected pointer to an iterator on stack (bpf_iter_num_%s(): this function's stack; the module cannot follow an iterator passed between functions yet)",
		       fn);
		return;
	}
	if (p.v % 8 || p.v > -ITER_SIZE || p.v < -8 * NSLOTS) {
		refuse(x, -EINVAL, i, "bpf_iter_num_%s(): cannot pass in iter at an offset=%d", fn,
		       p.v);
		return;
	}
	k = -p.v / 8 - 1;
	if (a == A_ITER_NEW) {
		if (st->act >> k & 1)
			refuse(x, -EINVAL, i,
			       "expected uninitialized iter_num as arg #0 (fp%d may still hold an active iterator: destroy it first)",
			       p.v);
		st->act |= 1ull << k;
		st->inact &= ~(1ull << k);
		st->spfp &= ~(1ull << k);
	} else {
		if (st->inact >> k & 1)
			refuse(x, -EINVAL, i,
			       "expected an initialized iter_num as arg #0 (fp%d may hold no iterator here: bpf_iter_num_%s() needs bpf_iter_num_new() before it and no destroy in between)",
			       p.v, fn);
		if (a == A_ITER_DESTROY) {
			st->act &= ~(1ull << k);
			st->inact |= 1ull << k;
		}
	}
	for (r = BPF_REG_1; r <= BPF_REG_5; r++)
		wr(st, (__u8)r, mk(K_OTHER, 0));
	st->dead |= 0x3e;
	if (a == A_ITER_NEXT) {
		struct ireg cur = mk(K_CUR, 0);

		cur.slot = (__u8)k;
		wr(st, BPF_REG_0, cur);
	} else {
		wr(st, BPF_REG_0, mk(K_OTHER, 0));
		if (a == A_ITER_DESTROY)
			st->dead |= 1;
	}
}

static void xfer_call(struct ictx *x, struct istate *st, __u32 i, const struct bpf_insn *insn)
{
	__u8 a = x->c->act[i];
	bool fpany;
	int r;

	if (a == A_ITER_NEW || a == A_ITER_NEXT || a == A_ITER_DESTROY) {
		xfer_iter(x, st, i, a);
		return;
	}
	/* Subprograms and kfuncs: their arguments unknown here (helper_args.h). */
	fpany = xfer_helper(x, st, i, insn);
	for (r = BPF_REG_0; r <= BPF_REG_5; r++)
		wr(st, (__u8)r, mk(K_OTHER, 0));
	if (fpany)
		wr(st, BPF_REG_0, mk(K_FPANY, 0));
}

static void xfer_alu(struct istate *st, const struct bpf_insn *insn)
{
	bool x64 = BPF_CLASS(insn->code) == BPF_ALU64, rx = BPF_SRC(insn->code) == BPF_X;
	__u8 op = BPF_OP(insn->code), d = insn->dst_reg;
	struct ireg a = rd(st, d), b = rx ? rd(st, insn->src_reg) : mk(K_CONST, insn->imm);
	__s64 v;

	if (op == BPF_MOV && insn->off == 0) {
		if (x64)
			wr(st, d, b);
		else
			wr(st, d, b.kind == K_CONST ? mk(K_CONST, (__u32)b.v) : mk(K_OTHER, 0));
		return;
	}
	if (op == BPF_END || op == BPF_NEG || (op == BPF_MOV && insn->off)) {
		wr(st, d, mk(K_OTHER, 0));
		return;
	}
	if (x64 && (op == BPF_ADD || op == BPF_SUB) && is_ptr(a.kind)) {
		if (b.kind == K_CONST && a.kind != K_FPANY) {
			__s64 sum = op == BPF_ADD ? (__s64)a.v + b.v : (__s64)a.v - b.v;

			a.v = (__s32)sum;
			wr(st, d, sum < -0x10000 || sum > 0x10000 ? mk(K_FPANY, 0) : a);
		} else {
			wr(st, d, mk(K_FPANY, 0));
		}
		return;
	}
	if (x64 && op == BPF_ADD && is_ptr(b.kind)) {
		if (a.kind == K_CONST && b.kind != K_FPANY) {
			__s64 sum = (__s64)b.v + a.v;

			b.v = (__s32)sum;
			wr(st, d, sum < -0x10000 || sum > 0x10000 ? mk(K_FPANY, 0) : b);
		} else {
			wr(st, d, mk(K_FPANY, 0));
		}
		return;
	}
	if (a.kind != K_CONST || b.kind != K_CONST) {
		wr(st, d, mk(K_OTHER, 0));
		return;
	}
	switch (op) {
	case BPF_ADD:
		v = (__s64)a.v + b.v;
		break;
	case BPF_SUB:
		v = (__s64)a.v - b.v;
		break;
	case BPF_MUL:
		v = (__s64)a.v * b.v;
		break;
	case BPF_AND:
		v = a.v & b.v;
		break;
	case BPF_OR:
		v = a.v | b.v;
		break;
	default:
		wr(st, d, mk(K_OTHER, 0));
		return;
	}
	if (!x64)
		v = (__u32)v;
	wr(st, d, mk(K_CONST, v));
}

/* The slots [lo, hi) of the frame lose any spilled frame pointer. */
static void clear_spills(struct istate *st, __s32 lo, __s32 hi)
{
	int k, k0, k1;

	if (!slot_span(lo, hi, &k0, &k1))
		return;
	for (k = k0; k <= k1; k++)
		st->spfp &= ~(1ull << k);
}

static void xfer_mem(struct ictx *x, struct istate *st, __u32 i, const struct bpf_insn *insn)
{
	__u8 cls = BPF_CLASS(insn->code);
	__u32 size = bpfa_access_bytes(insn->code);
	struct ireg base;

	if (cls == BPF_LDX) {
		base = rd(st, insn->src_reg);
		check_reads(x, st, i, (__u16)(1u << insn->src_reg));
		check_access(x, st, i, insn->src_reg, base, insn->off, size, false);
		if (base.kind == K_FP && size == 8 && (base.v + insn->off) % 8 == 0 &&
		    base.v + insn->off < 0 && base.v + insn->off >= -8 * NSLOTS &&
		    (st->spfp >> ((-(base.v + insn->off)) / 8 - 1) & 1))
			wr(st, insn->dst_reg, mk(K_FPANY, 0));
		else
			wr(st, insn->dst_reg, mk(K_OTHER, 0));
		return;
	}
	base = rd(st, insn->dst_reg);
	check_reads(x, st, i, (__u16)(1u << insn->dst_reg |
				      (cls == BPF_ST ? 0 : 1u << insn->src_reg)));
	check_access(x, st, i, insn->dst_reg, base, insn->off, size, true);
	if (base.kind == K_FP) {
		__s32 lo = base.v + insn->off;
		struct ireg s = cls == BPF_STX ? rd(st, insn->src_reg) : mk(K_CONST, 0);

		clear_spills(st, lo, lo + (__s32)size);
		if (cls == BPF_STX && BPF_MODE(insn->code) == BPF_MEM && size == 8 &&
		    is_ptr(s.kind) && lo % 8 == 0 && lo < 0 && lo >= -8 * NSLOTS)
			st->spfp |= 1ull << (-lo / 8 - 1);
	} else if (base.kind == K_FPANY && cls == BPF_STX) {
		/* A frame pointer stored at an unknown offset: any slot may hold it. */
		if (is_ptr(rd(st, insn->src_reg).kind))
			st->spfp = ~0ull;
	}
	if (cls == BPF_STX && BPF_MODE(insn->code) == BPF_ATOMIC) {
		if (insn->imm == BPF_CMPXCHG)
			wr(st, BPF_REG_0, mk(K_OTHER, 0));
		else if (insn->imm & BPF_FETCH)
			wr(st, insn->src_reg, mk(K_OTHER, 0));
	}
}

static void xfer(struct ictx *x, struct istate *st, __u32 i)
{
	const struct bpf_insn *insn = &x->c->in[i];
	__u8 cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);

	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		check_reads(x, st, i, (__u16)((op == BPF_MOV ? 0 : 1u << insn->dst_reg) |
					      (BPF_SRC(insn->code) == BPF_X ? 1u << insn->src_reg : 0)));
		xfer_alu(st, insn);
		return;
	case BPF_LD:
		if (bpfa_is_ldimm64(insn)) {
			__s64 v = (__s64)((__u64)(__u32)insn[1].imm << 32 | (__u32)insn->imm);

			if (insn->src_reg == 0)
				wr(st, insn->dst_reg, mk(K_CONST, v));
			else if (insn->src_reg == BPF_PSEUDO_MAP_FD ||
				 insn->src_reg == BPF_PSEUDO_MAP_IDX)
				wr(st, insn->dst_reg, mk(K_MAP, i));
			else
				wr(st, insn->dst_reg, mk(K_OTHER, 0));
		} else {
			/* Legacy packet loads: r0 out, r1-r5 unreadable. */
			int r;

			for (r = BPF_REG_0; r <= BPF_REG_5; r++)
				wr(st, (__u8)r, mk(K_OTHER, 0));
		}
		return;
	case BPF_LDX:
	case BPF_STX:
	case BPF_ST:
		xfer_mem(x, st, i, insn);
		return;
	}
	/* BPF_JMP, BPF_JMP32 */
	if (op == BPF_CALL) {
		xfer_call(x, st, i, insn);
	} else if (op == BPF_EXIT) {
		/*
		 * main's and a callback's R0 is checked; a static subprogram's
		 * is copied to its caller unchecked (prepare_func_exit()).
		 */
		if (x->c->bsub[x->c->blk[i]] == 0 ||
		    (x->c->fl[x->c->bstart[x->b0]] & F_CALLBACK))
			check_reads(x, st, i, 1);
		if (st->act)
			refuse(x, -EINVAL, i,
			       "Unreleased reference: the bpf_iter_num at fp%d may still be active on a path to this exit (bpf_iter_num_destroy() it on every path)",
			       -8 * __builtin_ctzll(st->act) - 8);
	} else if (op != BPF_JA && insn->code != BPFA_MAY_GOTO_CODE) {
		check_reads(x, st, i, (__u16)(1u << insn->dst_reg |
					      (BPF_SRC(insn->code) == BPF_X ? 1u << insn->src_reg : 0)));
	}
}

static void enqueue(struct ictx *x, __u32 b)
{
	struct lctx *c = x->c;

	if (!c->inq[b]) {
		c->inq[b] = 1;
		c->work[c->nwork++] = b;
	}
}

static void flow(struct ictx *x, __u32 b, const struct istate *st)
{
	if (!x->final && state_join(&x->st[b - x->b0], st))
		enqueue(x, b);
}

/* Runs block b from its start state; joins into its successors. */
static void run_block(struct ictx *x, __u32 b)
{
	struct lctx *c = x->c;
	struct istate st = x->st[b - x->b0];
	__u32 i = c->bstart[b], last = i;

	for (; i < c->len && c->blk[i] == b; i = bpfa_next(c->in, i)) {
		last = i;
		xfer(x, &st, i);
		if (c->err)
			return;
	}
	if (bpfa_is_exit(&c->in[last]))
		return;
	if (bpfa_is_jump(&c->in[last])) {
		flow(x, c->blk[bpfa_jump_target(c->in, last)], &st);
		if (bpfa_is_ja(&c->in[last]))
			return;
	}
	if (i < c->len)
		flow(x, c->blk[i], &st);
}

static void entry_state(struct istate *st)
{
	int r;

	memset(st, 0, sizeof(*st));
	st->vis = 1;
	st->inact = ~0ull;
	/* Arguments: not this frame's (a caller's stack is another frame). */
	for (r = BPF_REG_1; r <= BPF_REG_5; r++)
		st->r[r] = mk(K_OTHER, 0);
}

static int check_sub(struct lctx *c, struct istate *buf, __u32 b0, __u32 nb, __u8 *active_callee)
{
	struct ictx x = { .c = c, .st = buf, .b0 = b0, .nb = nb, .active_callee = active_callee };
	__u32 b;

	memset(buf, 0, nb * sizeof(*buf));
	entry_state(&buf[0]);
	c->nwork = 0;
	enqueue(&x, b0);
	while (c->nwork && !c->err) {
		b = c->work[--c->nwork];
		c->inq[b] = 0;
		run_block(&x, b);
	}
	x.final = true;
	for (b = b0; b < b0 + nb && !c->err; b++)
		if (buf[b - b0].vis)
			run_block(&x, b);
	return c->err;
}

/*
 * A tail call leaves the caller's frames behind: in a subprogram called
 * while an iterator may be active, or in anything such a subprogram
 * calls, it would leak that iterator (upstream: "tail_call would lead to
 * reference leak").  callee[s] marks the first ones; the rest follow.
 */
static void check_callees(struct lctx *c, __u8 *callee)
{
	bool more = true;
	__u32 i;

	while (more) {
		more = false;
		for (i = 0; i < c->len; i = bpfa_next(c->in, i)) {
			__s64 t = (__s64)i + 1 + c->in[i].imm;

			if (!callee[c->bsub[c->blk[i]]] || !bpfa_is_pcall(&c->in[i]) || t < 0 ||
			    t >= c->len || callee[c->bsub[c->blk[t]]])
				continue;
			callee[c->bsub[c->blk[t]]] = 1;
			more = true;
		}
	}
	for (i = 0; i < c->len; i = bpfa_next(c->in, i))
		if (callee[c->bsub[c->blk[i]]] && c->in[i].code == (BPF_JMP | BPF_CALL) &&
		    !c->in[i].src_reg && c->in[i].imm == BPF_FUNC_tail_call) {
			lower_err(c, -EINVAL, i,
				  "tail_call would lead to reference leak: a caller's bpf_iter_num may be active");
			return;
		}
}

int lower_iter_state(struct lctx *c)
{
	__u8 *callee;
	struct istate *buf;
	__u32 s, b, b0, maxnb = 0, i;
	bool any = false;

	for (i = 0; i < c->len; i++)
		if (c->act[i] == A_ITER_NEW || c->act[i] == A_ITER_NEXT ||
		    c->act[i] == A_ITER_DESTROY)
			any = true;
	if (!any)
		return 0;
	for (b0 = 0; b0 < c->nblk; b0 = b) {
		for (b = b0; b < c->nblk && c->bsub[b] == c->bsub[b0]; b++)
			;
		if (b - b0 > maxnb)
			maxnb = b - b0;
	}
	buf = lower_zalloc(c, maxnb, sizeof(*buf));
	callee = lower_zalloc(c, c->nsub, 1);
	if (!buf || !callee) {
		if (buf)
			c->env->free(c->env->ctx, buf);
		if (callee)
			c->env->free(c->env->ctx, callee);
		return lower_err(c, -ENOMEM, 0, "out of memory");
	}
	memset(c->inq, 0, c->nblk);
	for (b0 = 0, s = 0; b0 < c->nblk && !c->err; b0 = b, s++) {
		bool iters = false;

		for (b = b0; b < c->nblk && c->bsub[b] == c->bsub[b0]; b++)
			;
		for (i = c->bstart[b0]; i < c->len && c->blk[i] < b; i++)
			if (c->act[i] == A_ITER_NEW || c->act[i] == A_ITER_NEXT ||
			    c->act[i] == A_ITER_DESTROY)
				iters = true;
		if (iters)
			check_sub(c, buf, b0, b - b0, callee);
	}
	if (!c->err)
		check_callees(c, callee);
	c->env->free(c->env->ctx, buf);
	c->env->free(c->env->ctx, callee);
	return c->err;
}

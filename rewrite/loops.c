// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the loop pass (loops.h; design and safety: docs/LOOPS.md).
 *
 * Handled today (the rest is refused with a message naming the loop):
 * may_goto loops in any function (main, static or global subprogram,
 * callback) that are intervals [H, B] entered at one insn E (a rotated loop
 * may enter in the middle), with every cycle through E, and that carry
 * scalars (arena pointers are scalars after the lowering), ld_imm64 map
 * pointers or stack pointers (re-derived), and the stack slots they touch
 * (mirrored at the same offsets in the body's frame).  Each such loop becomes
 *
 *   f:     save carried regs and touched slots in the frame region R;
 *          bpf_loop(8M, cb, R); if no exit yet: body(R);
 *          copy written slots back; dispatch on the exit code
 *   cb:    r1 = r2; call body; r0 = r0 != 0; exit               (static)
 *   body:  copy in; goto E; the loop's insns; edge to E: copy out,
 *          return 0; exit j: copy out, frame.exit = j, return 1 (GLOBAL)
 *
 * and may_goto becomes a test-and-decrement of the function's budget slot.
 * The pass's type analysis decides only what the translation MEANS (which
 * registers and slots are carried as bits, which re-derived); the stock
 * verifier decides safety.
 *
 * Contents, in the order the phases run (run(), one_round(), bpfa_loops());
 * each "---- name ----" line below opens one:
 *
 *   (shared)        orig_idx, perr, set_msg, palloc, pfree; bpfa_loops_needed
 *   structure       ld_imm64 halves, functions, loop marks, jumps that leave
 *                   their function: next_of, target_of, succs, structure
 *   types           forward, per insn, the register types (T_*) a translation
 *                   needs: tjoin, xfer, func_nargs, entry_type, is_next_null,
 *                   refine_null, types
 *   liveness        backward, live-in registers: rbit, helper_nargs, use_def,
 *                   preds, liveness (every argument a call may read; per
 *                   loop, from check_loop), checked_live (only the arguments
 *                   the verifier checks, on first need)
 *   stack depth     each function's own depth; refuses a variable stack
 *                   offset in a function with loops: stack_depth
 *   loops           which loops, and whether each can be outlined: member,
 *                   sccs, slot_bits, fp_base, loop_slots, add_exit,
 *                   kind_name, entry_types, check_loop, find_loops
 *   unsigned bounds forward, for the bodies' guards only: ub_any, ub_refine,
 *                   ub_xfer, ub_branch, ub_widen, ub_thresholds, ub_join,
 *                   bounds
 *   emission        the output with labels: grow, put, new_label, set_label,
 *                   put_fix, I, put_ldimm64_copy, put_may_goto, put_insn,
 *                   put_copy_out, put_rederive, restored, edge_mask,
 *                   edge_code, body_edge, put_body, put_driver, put_cb,
 *                   resolve
 *   BTF             the FUNC types of the callbacks and bodies, func_info,
 *                   line_info: bt_u32, bt_str, bt_type, bt_added,
 *                   btf_count_types (also read by func_nargs), rec,
 *                   main_pos, build_line_info, build_btf
 *   driver          emit (emission, then BTF), run (one round's phases),
 *                   next_ext, one_round, too_deep, bpfa_loops (the rounds of
 *                   nested loops), bpfa_loops_free
 */
#include "cfg.h"
#include "helper_args.h"
#include "loops.h"
#include "src_line.h"

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
#define T_ARG		(6u << 28)	/* a subprogram's argument register payload at entry */
/*
 * r10 + (s16)payload or NULL: r0 after an inlined bpf_iter_num_next().  Only
 * while types() runs: a null test refines it (the non-NULL edge gets T_FP,
 * so the iterator's value pointer crosses the loop head re-derived, as
 * clang's rotated bpf_for loops need); what is left becomes T_BITS.
 */
#define T_FPNULL	(7u << 28)
#define T_KIND(t)	((t) & 0xf0000000u)
#define T_FPOFF(t)	((__s16)(__u16)((t) & 0xffff))

/*
 * Stack layout of a function f with loops, below its own depth D (a multiple
 * of 8), for up to IMAX mirrored slots (docs/LOOPS.md):
 *   -D-8 budget, -D-16 exit code, -D-24-8r register r, -D-104-8k image slot
 *   k, then -D-96-8*IMAX-8a argument a at entry (main: ctx, a = 1), for the
 *   arguments a loop lets pass by.
 * Loop l's frame region R is [-D-104-8*nimg(l), -D): exit code, budget,
 * registers and its own image slots, never the ctx slot.
 */
#define OFF_BUDGET(d)	(-(__s32)(d) - 8)
#define OFF_EXIT(d)	(-(__s32)(d) - 16)
#define OFF_REG(d, r)	(-(__s32)(d) - 24 - 8 * (__s32)(r))
#define OFF_IMG(d, k)	(-(__s32)(d) - 104 - 8 * (__s32)(k))
#define OFF_ARG(d, imax, r) (-(__s32)(d) - 96 - 8 * (__s32)(imax) - 8 * (__s32)(r))
#define OFF_CTX(d, imax) OFF_ARG(d, imax, 1)
#define R_LO(d, nimg)	(-(__s32)(d) - 96 - 8 * (__s32)(nimg))
#define R_LEN(nimg)	(96 + 8 * (__u32)(nimg))
/* The body's own slots, below the deepest slot its loop touches (td). */
#define BB_BUDGET(td)	(-(__s32)(td) - 8)
#define BB_FPSAVE(td)	(-(__s32)(td) - 16)
#define BB_TMP(td)	(-(__s32)(td) - 24)
#define BB_CTX(td)	(-(__s32)(td) - 32)	/* main's context, when the loop uses it */
#define STACK_MAX	512
#define NSLOTS		(STACK_MAX / 8)
#define ROUND32(x)	(((x) + 31) & ~31u)
/*
 * Every refusal of the pass starts with this; perr() names bpf_for instead
 * when the program's loops are iterator loops (marks).
 */
#define MG		"may_goto (can_loop/cond_break) "
#define MARK_MAY_GOTO	1
#define MARK_ITER	2
/* Offsets in loop l's frame region as the body sees it (from R's start). */
#define FR(l, off_from_d) ((off_from_d) - R_LO(0, (l)->nimg))
#define FR_REG(l, r)	FR(l, OFF_REG(0, r))
#define FR_EXIT(l)	FR(l, OFF_EXIT(0))
#define FR_BUDGET(l)	FR(l, OFF_BUDGET(0))
#define FR_IMG(l, k)	FR(l, OFF_IMG(0, k))

struct loop {
	__u32 h, b;			/* the interval [h, b] */
	__u32 e;			/* its entry, the iteration boundary */
	__u32 fn;			/* its function */
	__u32 td;			/* deepest stack byte it touches (multiple of 8) */
	__u32 nimg;			/* slots mirrored */
	__s16 img_off[NSLOTS];		/* their offsets from r10 */
	__u64 img_w;			/* bit k: image slot k may be written */
	__u32 nexits;
	__u32 exit_t[MAX_EXITS];	/* target insn, or EXIT_RET */
	__u32 exit_ty[MAX_EXITS][NREGS];	/* join of the edge types */
	__u16 exit_live[MAX_EXITS];
	bool exit_typed[MAX_EXITS];	/* a reachable edge contributed its types */
	__u32 forced;			/* exit code taken when none was reported */
	__u16 hm;			/* registers carried across E as bits */
	__u16 hm_zero;			/* of those, unset where the loop is entered */
	bool uses_ctx;			/* main's context crosses E: the body's 2nd argument */
	__u64 ctx_img;			/* bit k: image slot k holds it (spilled) */
	__u32 ctx_size;			/* ctx_mem: bytes of it the loop accesses */
	/* emission */
	__u32 cb_lbl, body_lbl, cb_pos, body_pos;
	__u32 btf_cb;			/* FUNC ids: cb, and body (btf_cb + 1) */
};

enum { FX_OFF, FX_IMM, FX_CALL };

struct fix {
	__u32 at, lbl;
	__u8 kind;
};

struct func {
	__u32 start, end;		/* [start, end) */
	__u32 depth;			/* its own stack depth D, multiple of 8 */
	__u32 imax;			/* most slots a loop of it mirrors */
	__u32 nargs;			/* registers set at entry (not main) */
	__s16 ext;			/* a body of the previous round: its budget slot */
	__u16 argsave;			/* arguments saved at entry (re-derived after loops) */
	bool has_mg, is_main;
};

struct ub {
	__u64 umax;
	__u64 delta;		/* value = the link's base + delta */
	__u32 id;		/* link, 0 if none */
	__u32 pad;
};

struct pctx {
	const struct bpfa_loops_env *env;
	const struct bpf_insn *in;
	__u32 len;
	struct bpfa_loops_result *res;
	__u8 marks;		/* MARK_*: the kinds of loop marks the program holds */
	__u8 *second;		/* per insn: second half of ld_imm64 */
	__u8 *substart;		/* per insn: a subprogram or callback starts here */
	__u8 *vis;		/* per insn: state reached */
	__u32 *ty;		/* per insn: NREGS in-state types */
	/*
	 * Per insn of main, in round 0: bit k, stack slot k holds main's
	 * context on every path here (clang spills it).  NULL when not tracked
	 * (ctx_slots()): its fills are then bits.
	 */
	__u64 *sctx;
	__u16 *live;		/* per insn: live-in registers */
	/*
	 * The same, counting only the call arguments the verifier checks
	 * (checked_args set while computing it): a register live in live but
	 * not here is read only as an argument the helper's proto leaves
	 * unchecked (bpf_trace_printk's 3rd-5th), never by the verifier.
	 * Computed on first need (checked_live()): few programs ask.
	 */
	__u16 *clive;
	bool checked_args, clive_done;
	__u16 *llive;		/* per insn of the loop being checked: live-in, uses in it only */
	__u32 *poff, *plist;	/* predecessors of insn i: plist[poff[i] .. poff[i + 1]) */
	__u32 *lwork;		/* liveness() worklist */
	__u8 *lq;		/* per insn: on the liveness() worklist */
	__u8 *inloop;		/* per insn: loop index + 1, or 0 */
	__u32 *work;
	__u8 *dfs;		/* per insn: sccs() state */
	__u8 *uvis;		/* per insn: bounds() reached / queued */
	struct ub *ub;		/* per insn: NREGS bounds on entry, or NULL */
	__u64 thr[64];		/* widening thresholds (UB_MAX_THR) */
	__u32 nthr;
	/* rounds (nested loops): the input's origin and its bodies' budget slots */
	const __u32 *pre;	/* input insn -> lowered insn, NULL in round 0 */
	__u32 pre_len;
	const __s16 *ext;	/* input insn -> budget slot of the body starting there */
	__u32 round;
	__u32 cur;		/* the input insn being emitted */
	__u32 mark;		/* BPFA_SRC_* flags of what put() emits now */
	__u32 *osrc;		/* output insn -> input insn */
	__u32 capsrc;
	__s16 *oext;		/* output insn -> budget slot of a body starting there */
	__u32 *scc, *tlow, *tstack, *tcall;	/* sccs() */
	const __u8 *btf_types;	/* the program's BTF types (func_nargs()) */
	__u32 btf_tlen, btf_ntypes, *btf_offs;
	struct loop loops[MAX_LOOPS];
	__u32 nloops;
	__u32 *fn;		/* per insn: its function */
	struct func *funcs;	/* in insn order, funcs[0] is main */
	__u32 nfn;
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

	if (c->pre)
		i = i < c->pre_len ? c->pre[i] & BPFA_SRC_IDX_MASK : 0;

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
	res->err_insn = idx;
	bpfa_vmsg(res->msg, sizeof(res->msg), idx, fmt, ap);
}

/*
 * " (file:line)" of the user's insn u from the program's line_info (in the
 * lowered program's numbering: new_idx maps) into buf; "" when there is none.
 */
static void src_line(const struct pctx *c, __u32 u, char *buf, size_t size)
{
	const struct bpfa_loops_env *env = c->env;
	struct bpfa_src_lines s = {
		.linfo = env->line_info, .cnt = env->line_info_cnt,
		.rec_size = env->line_info_rec_size, .new_idx = env->new_idx,
		.old_len = env->old_len,
	};
	char where[BPFA_SRC_WHERE_LEN];
	struct btf_header h;

	buf[0] = '\0';
	if (!env->has_btf || !env->btf || env->btf_size < sizeof(h) || !env->line_info ||
	    !env->line_info_cnt || env->line_info_rec_size < sizeof(struct bpf_line_info) ||
	    !bpfa_src_lines_sorted(env->line_info, env->line_info_cnt, env->line_info_rec_size))
		return;
	memcpy(&h, env->btf, sizeof(h));
	if (h.hdr_len < sizeof(h) || h.hdr_len > env->btf_size ||
	    (__u64)h.str_off + h.str_len > env->btf_size - h.hdr_len)
		return;
	s.strs = (const char *)env->btf + h.hdr_len + h.str_off;
	s.str_len = h.str_len;
	if (bpfa_src_where(&s, u, where, sizeof(where)))
		snprintf(buf, size, " (%s)", where);
}

/* Puts the source line of user insn u after "bpf_arena: insn U" in the message. */
static void add_src_line(const struct pctx *c, __u32 u)
{
	char *msg = c->res->msg, where[BPFA_SRC_WHERE_LEN + 3], *colon;
	size_t len = strlen(msg), add;

	src_line(c, u, where, sizeof(where));
	add = strlen(where);
	/* "bpf_arena: insn U: text": the place goes after U. */
	colon = strchr(msg + sizeof("bpf_arena: insn"), ':');
	if (!add || !colon || len + add >= sizeof(c->res->msg))
		return;
	memmove(colon + add, colon, len - (size_t)(colon - msg) + 1);
	memcpy(colon, where, add);
}

static BPFA_PRINTF(4, 5) int perr(struct pctx *c, int err, __u32 i, const char *fmt, ...)
{
	static const char *const names[] = {
		[MARK_ITER] = "bpf_for/bpf_repeat ",
		[MARK_ITER | MARK_MAY_GOTO] = "may_goto (can_loop/cond_break) or bpf_for/bpf_repeat ",
	};
	size_t mg = sizeof(MG) - 1, n;
	char f[BPFA_LOOPS_MSG_LEN];
	va_list ap;

	if (c->err)
		return c->err;
	c->err = err;
	if ((c->marks & MARK_ITER) && !strncmp(fmt, MG, mg)) {
		n = strlen(names[c->marks]);
		if (n + strlen(fmt + mg) < sizeof(f)) {
			memcpy(f, names[c->marks], n);
			strcpy(f + n, fmt + mg);
			fmt = f;
		}
	}
	va_start(ap, fmt);
	vset_msg(c->res, orig_idx(c, i), fmt, ap);
	va_end(ap);
	add_src_line(c, c->res->err_insn);
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
	return bpfa_zalloc_n(c->env->zalloc, c->env->ctx, n, size);
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
		if (bpfa_is_loop_mark(&insns[i]))
			return true;
	}
	return false;
}

/* ---- structure ---- */

static __u32 next_of(const struct pctx *c, __u32 i)
{
	return bpfa_next(c->in, i);
}

static __u32 target_of(const struct pctx *c, __u32 i)
{
	return bpfa_jump_target(c->in, i);
}

/* Successors of i (cfg.h). */
static int succs(const struct pctx *c, __u32 i, __u32 s[2])
{
	return bpfa_succs(c->in, i, s);
}

static int structure(struct pctx *c)
{
	__u32 i, s[2], f;
	__s64 t;
	int k, ns;

	t = bpfa_mark_ldimm64(c->in, c->len, c->second, 1, false);
	if (t >= 0)
		return perr(c, -EINVAL, (__u32)t, "invalid ld_imm64");
	c->substart[0] = 1;
	for (i = 0; i < c->len; i++) {
		if (c->second[i] || (!bpfa_is_pcall(&c->in[i]) && !bpfa_is_pfunc(&c->in[i])))
			continue;
		t = (__s64)i + 1 + c->in[i].imm;
		if (t <= 0 || t >= c->len || c->second[t])
			return perr(c, -EINVAL, i, "call to insn %lld out of the program",
				    (long long)t);
		if (!c->substart[t])
			c->nsubs++;
		c->substart[t] = 1;
	}
	/* Functions in insn order: each runs to the next start. */
	for (i = 0, f = 0; i < c->len; i++) {
		if (c->substart[i]) {
			f = c->nfn++;
			c->funcs[f].start = i;
			c->funcs[f].is_main = !i;
		}
		c->funcs[f].end = i + 1;
		c->fn[i] = f;
	}
	for (i = 0; i < c->len; i++) {
		if (c->second[i])
			continue;
		if (bpfa_is_loop_mark(&c->in[i]))
			c->funcs[c->fn[i]].has_mg = true;
		if (bpfa_is_may_goto(&c->in[i]))
			c->marks |= MARK_MAY_GOTO;
		else if (bpfa_is_iter_mark(&c->in[i]))
			c->marks |= MARK_ITER;
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++) {
			if (s[k] >= c->len)
				return perr(c, -EINVAL, i, "jump or fall-through out of the program");
			if (c->second[s[k]])
				return perr(c, -EINVAL, i, "jump into the middle of ld_imm64");
			if (c->fn[s[k]] != c->fn[i])
				return perr(c, -EINVAL, i, "jump or fall-through out of its function");
		}
	}
	return 0;
}

/* ---- types (forward) ---- */

static __u32 tjoin(__u32 a, __u32 b)
{
	if (a == b)
		return a;
	if ((T_KIND(a) == T_FPNULL && b == (T_FP | (a & 0xffff))) ||
	    (T_KIND(b) == T_FPNULL && a == (T_FP | (b & 0xffff))))
		return T_FPNULL | (a & 0xffff);
	if (a == T_UNINIT || b == T_UNINIT || a == T_MAYBE || b == T_MAYBE)
		return T_MAYBE;
	return T_BITS;
}

/* The stack offset reg points to in the register types t, if it is a stack pointer. */
static bool t_fp_off(const __u32 *t, __u8 reg, __s32 *off)
{
	if (reg == BPF_REG_10) {
		*off = 0;
		return true;
	}
	if (reg < NREGS && T_KIND(t[reg]) == T_FP) {
		*off = T_FPOFF(t[reg]);
		return true;
	}
	return false;
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
	case BPF_LDX:
		if (d >= NREGS)
			return;
		t[d] = T_BITS;
		if (c->sctx && insn->code == (BPF_LDX | BPF_MEM | BPF_DW)) {
			__s32 off;

			if (!t_fp_off(t, s, &off))
				return;
			off += insn->off;
			if (off < 0 && off >= -STACK_MAX && !(off % 8) &&
			    (c->sctx[i] >> ((-off - 1) / 8) & 1))
				t[d] = T_CTX;
		}
		return;
	case BPF_ALU:
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

static __u32 btf_count_types(const __u8 *types, __u32 len, __u32 *offs, __u32 cap);

/*
 * How many arguments function k takes, from its func_info record and the
 * program's BTF (FUNC -> FUNC_PROTO vlen); 5 when that cannot be told.
 * Registers past them are unset at the function's entry (a global function
 * is verified with exactly those; clang's protos of static functions never
 * name fewer arguments than the code reads).
 */
static __u32 func_nargs(struct pctx *c, __u32 k)
{
	const struct bpfa_loops_env *env = c->env;
	const struct btf_type *t;
	struct bpf_func_info fi;
	struct btf_header h;
	const __u8 *types;
	__u32 id, hops;

	if (!env->has_btf || !env->btf || !env->func_info || k >= env->func_info_cnt ||
	    env->func_info_rec_size < sizeof(fi) || env->btf_size < sizeof(h))
		return 5;
	memcpy(&fi, (const __u8 *)env->func_info + (size_t)k * env->func_info_rec_size,
	       sizeof(fi));
	if (fi.insn_off != c->funcs[k].start)
		return 5;
	if (!c->btf_offs) {
		memcpy(&h, env->btf, sizeof(h));
		if (h.hdr_len < sizeof(h) || h.hdr_len > env->btf_size ||
		    (__u64)h.type_off + h.type_len > env->btf_size - h.hdr_len)
			return 5;
		c->btf_types = (const __u8 *)env->btf + h.hdr_len + h.type_off;
		c->btf_tlen = h.type_len;
		c->btf_ntypes = btf_count_types(c->btf_types, c->btf_tlen, NULL, 0);
		c->btf_offs = palloc(c, c->btf_ntypes, sizeof(*c->btf_offs));
		if (!c->btf_offs)
			return 5;
		btf_count_types(c->btf_types, c->btf_tlen, c->btf_offs, c->btf_ntypes);
	}
	types = c->btf_types;
	/* FUNC, then its FUNC_PROTO (ids start at 1). */
	for (id = fi.type_id, hops = 0; hops < 2; hops++) {
		if (!id || id > c->btf_ntypes)
			return 5;
		t = (const void *)(types + c->btf_offs[id - 1]);
		if (BTF_INFO_KIND(t->info) == BTF_KIND_FUNC_PROTO)
			return BTF_INFO_VLEN(t->info) < 5 ? BTF_INFO_VLEN(t->info) : 5;
		if (BTF_INFO_KIND(t->info) != BTF_KIND_FUNC)
			return 5;
		id = t->type;
	}
	return 5;
}

/* A register's type at the entry of function k. */
static __u32 entry_type(const struct pctx *c, __u32 k, __u8 r)
{
	if (c->funcs[k].is_main)
		return r == BPF_REG_1 ? T_CTX : T_UNINIT;
	return r >= 1 && r <= c->funcs[k].nargs ? T_ARG | r : T_UNINIT;
}

/*
 * `*(u64 *)(r1 + 0) = 0; r0 = 0`: the NULL result of an inlined next()
 * (lower_iter.c lower_emit_iter()), whose other result is r1.  Recognised
 * by its shape, not by the mark before it, which an outer loop's round has
 * replaced by then.  Typing that r0 "r1's stack address or NULL" is true of
 * any such `r0 = 0` (it is NULL), so a program that has the shape itself
 * gains nothing from it.
 */
static bool is_next_null(const struct pctx *c, __u32 i)
{
	const struct bpf_insn *a, *b = &c->in[i];

	if (!i || c->second[i - 1])
		return false;
	a = &c->in[i - 1];
	return a->code == (BPF_ST | BPF_MEM | BPF_DW) && a->dst_reg == BPF_REG_1 && !a->off &&
	       !a->imm && b->code == (BPF_ALU64 | BPF_MOV | BPF_K) && b->dst_reg == BPF_REG_0 &&
	       !b->imm && !b->off;
}

/*
 * The edge k (succs() order: the target first) of a null test of a
 * T_FPNULL register: NULL on one side, the stack pointer on the other.
 */
static void refine_null(const struct pctx *c, __u32 i, int k, __u32 *t)
{
	const struct bpf_insn *insn = &c->in[i];
	__u8 op = BPF_OP(insn->code), d = insn->dst_reg;
	bool taken = k == 0, nonnull;

	if (BPF_CLASS(insn->code) != BPF_JMP || BPF_SRC(insn->code) != BPF_K || insn->imm ||
	    (op != BPF_JEQ && op != BPF_JNE) || d >= NREGS || T_KIND(t[d]) != T_FPNULL ||
	    !insn->off)
		return;
	nonnull = op == BPF_JEQ ? !taken : taken;
	t[d] = nonnull ? T_FP | (t[d] & 0xffff) : T_BITS;
}

static __u64 slot_bits(__s32 lo, __s32 hi);

/*
 * The context slots after insn i (in-state types t, mask m): a store
 * clears what it overwrites and an aligned 8-byte spill of the context
 * sets its slot; a call that gets a stack pointer clears all (the callee
 * may write anywhere in the frame).  Stack pointers with variable offsets
 * do not exist in a function with loops (stack_depth()), and ctx_slots()
 * tracks nothing in one that stores a stack pointer.
 */
static __u64 sctx_xfer(const struct pctx *c, __u32 i, const __u32 *t, __u64 m)
{
	const struct bpf_insn *insn = &c->in[i];
	__u8 cls = BPF_CLASS(insn->code), base = insn->dst_reg, r;
	__s32 off;

	if (cls == BPF_ST || cls == BPF_STX) {
		if (!t_fp_off(t, base, &off))
			return m;
		off += insn->off;
		m &= ~slot_bits(off, off + bpfa_access_bytes(insn->code));
		if (insn->code == (BPF_STX | BPF_MEM | BPF_DW) && insn->src_reg < NREGS &&
		    T_KIND(t[insn->src_reg]) == T_CTX && off < 0 && off >= -STACK_MAX &&
		    !(off % 8))
			m |= 1ull << ((-off - 1) / 8);
		return m;
	}
	if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(insn->code) == BPF_CALL)
		for (r = 1; r <= 5; r++)
			if (T_KIND(t[r]) == T_FP)
				return 0;
	return m;
}

static int types(struct pctx *c);

/*
 * Main's context spilled to a slot a loop reads comes back as the context
 * in the loop's body only if the pass knows the slot holds it: tracked in
 * round 0, for a program type whose loops may take the context, in main,
 * if main spills it and never stores a stack pointer (which would let a
 * store through a reloaded copy go unseen).  types() runs again with the
 * slots tracked.
 */
static int ctx_slots(struct pctx *c)
{
	const struct func *f = &c->funcs[0];
	bool spills = false;
	__u32 i;

	if (c->round || (!c->env->ctx_struct && !c->env->ctx_mem) || !f->has_mg)
		return 0;
	for (i = f->start; i < f->end; i++) {
		const struct bpf_insn *insn = &c->in[i];
		const __u32 *t = &c->ty[i * NREGS];

		if (c->second[i] || !(c->vis[i] & 1) || BPF_CLASS(insn->code) != BPF_STX ||
		    insn->src_reg >= NREGS)
			continue;
		if (T_KIND(t[insn->src_reg]) == T_FP)
			return 0;
		if (T_KIND(t[insn->src_reg]) == T_CTX)
			spills = true;
	}
	if (!spills)
		return 0;
	c->sctx = palloc(c, c->len, sizeof(*c->sctx));
	if (!c->sctx)
		return perr(c, -ENOMEM, 0, "out of memory");
	memset(c->vis, 0, c->len);
	memset(c->ty, 0, (size_t)c->len * NREGS * sizeof(*c->ty));
	return types(c);
}

static int types(struct pctx *c)
{
	__u32 nw = 0, i, s[2], t[NREGS], r;
	__u64 m;
	int k, ns;

	/*
	 * Main's r1 is the context; a subprogram's or callback's arguments are
	 * of types the pass does not know: carried as bits if they cross a
	 * loop (if one is a pointer the verifier refuses its use as such).
	 */
	for (k = 0; k < (int)c->nfn; k++) {
		i = c->funcs[k].start;
		c->funcs[k].nargs = func_nargs(c, k);
		c->funcs[k].ext = c->ext ? c->ext[i] : 0;
		for (r = 0; r < NREGS; r++)
			c->ty[i * NREGS + r] = entry_type(c, k, r);
		c->vis[i] = 3;		/* reached, queued */
		c->work[nw++] = i;
	}
	while (nw) {
		i = c->work[--nw];
		c->vis[i] &= ~2;
		memcpy(t, &c->ty[i * NREGS], sizeof(t));
		m = c->sctx && c->fn[i] == 0 ? sctx_xfer(c, i, t, c->sctx[i]) : 0;
		xfer(c, i, t);
		if (is_next_null(c, i) && T_KIND(t[BPF_REG_1]) == T_FP)
			t[BPF_REG_0] = T_FPNULL | (t[BPF_REG_1] & 0xffff);
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++) {
			__u32 *d = &c->ty[s[k] * NREGS], e[NREGS];
			bool changed = false;

			memcpy(e, t, sizeof(e));
			refine_null(c, i, k, e);
			if (c->sctx && (!(c->vis[s[k]] & 1) || (c->sctx[s[k]] & m) != c->sctx[s[k]])) {
				/* must: the slots that hold it on every path (AND) */
				c->sctx[s[k]] = c->vis[s[k]] & 1 ? c->sctx[s[k]] & m : m;
				changed = true;
			}
			if (!(c->vis[s[k]] & 1)) {
				memcpy(d, e, sizeof(e));
				c->vis[s[k]] |= 1;
				changed = true;
			} else {
				for (r = 0; r < NREGS; r++) {
					__u32 j = tjoin(d[r], e[r]);

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
	for (i = 0; i < c->len * NREGS; i++)
		if (T_KIND(c->ty[i]) == T_FPNULL)
			c->ty[i] = T_BITS;
	return 0;
}

/* ---- liveness (backward) ---- */

static __u16 rbit(__u8 r)
{
	return r < NREGS ? (__u16)(1u << r) : 0;
}

/*
 * The argument registers a call reads (helper_args.h: exact for the helpers
 * it lists, all five for anything else).  Only liveness uses this: a
 * register counted live that is not is at worst carried (or refused)
 * needlessly.  checked: only those the verifier checks (bpf_trace_printk's
 * proto types two; the values its format prints are passed unchecked).
 */
static __u32 helper_nargs(const struct bpf_insn *insn, bool checked)
{
	struct bpfa_helper_args ha;

	bpfa_helper_args(insn, &ha);
	return checked ? ha.checked : ha.nargs;
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
			__u32 n = helper_nargs(insn, c->checked_args);

			/* A subprogram reads the arguments its prototype names (func_nargs()). */
			if (bpfa_is_pcall(insn) && (__s64)i + 1 + insn->imm >= 0 &&
			    (__s64)i + 1 + insn->imm < c->len)
				n = c->funcs[c->fn[i + 1 + insn->imm]].nargs;
			*use = (__u16)(((1u << n) - 1) << 1);
			*def = 0x3f;
		} else if (op == BPF_EXIT) {
			*use = rbit(0);
		} else if (!bpfa_is_ja(insn) && !bpfa_is_loop_mark(insn)) {
			*use = rbit(d) | (x ? rbit(s) : 0);
		}
		return;
	}
}

/*
 * Live-in registers of [lo, hi] into live[]; with l, only of l's insns, a
 * successor outside l counting as nothing.
 */
static bool member(const struct pctx *c, const struct loop *l, __u32 i);

/*
 * The predecessor lists liveness() needs (every successor is inside the
 * program: structure() checked).  At most two successors per insn.
 */
static int preds(struct pctx *c)
{
	__u32 i, n = c->len, s[2], *cur;
	int k, ns;

	c->poff = palloc(c, (size_t)n + 1, sizeof(*c->poff));
	c->plist = palloc(c, 2 * (size_t)n, sizeof(*c->plist));
	c->lwork = palloc(c, n, sizeof(*c->lwork));
	c->lq = palloc(c, n, 1);
	cur = palloc(c, n, sizeof(*cur));
	if (!c->poff || !c->plist || !c->lwork || !c->lq || !cur) {
		pfree(c, cur);
		return perr(c, -ENOMEM, 0, "out of memory");
	}
	for (i = 0; i < n; i++) {
		if (c->second[i])
			continue;
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++)
			c->poff[s[k] + 1]++;
	}
	for (i = 0; i < n; i++) {
		c->poff[i + 1] += c->poff[i];
		cur[i] = c->poff[i];
	}
	for (i = 0; i < n; i++) {
		if (c->second[i])
			continue;
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++)
			c->plist[cur[s[k]]++] = i;
	}
	pfree(c, cur);
	return 0;
}

/*
 * A worklist, not repeated sweeps: sweeps need one pass per backward jump
 * a liveness fact crosses, so a staircase of N backward jumps cost N^2
 * (65k insns could hold a CPU for 20-40 s).  Here live sets only grow
 * (live[] starts at 0), each by at most NREGS bits, and an insn is queued
 * again only when a successor's set grew: O(len * NREGS) visits.
 */
static void liveness(struct pctx *c, __u16 *live, __u32 lo, __u32 hi, const struct loop *l)
{
	__u32 i, p, s[2], nw = 0, j;
	__u16 use, def, out;
	int k, ns;

	/* Pushed in ascending order: popped from the end, in reverse. */
	for (i = lo; i <= hi; i++) {
		if (c->second[i] || (l && !member(c, l, i)))
			continue;
		c->lq[i] = 1;
		c->lwork[nw++] = i;
	}
	while (nw) {
		i = c->lwork[--nw];
		c->lq[i] = 0;
		ns = succs(c, i, s);
		for (out = 0, k = 0; k < ns; k++)
			if (!l || member(c, l, s[k]))
				out |= live[s[k]];
		use_def(c, i, &use, &def);
		out = use | (out & ~def);
		if (out == live[i])
			continue;
		live[i] = out;
		for (j = c->poff[i]; j < c->poff[i + 1]; j++) {
			p = c->plist[j];
			if (p < lo || p > hi || c->lq[p] || (l && !member(c, l, p)))
				continue;
			c->lq[p] = 1;
			c->lwork[nw++] = p;
		}
	}
}

/* c->clive (see struct pctx), computed the first time it is asked for. */
static const __u16 *checked_live(struct pctx *c)
{
	if (!c->clive_done) {
		c->checked_args = true;
		liveness(c, c->clive, 0, c->len - 1, NULL);
		c->checked_args = false;
		c->clive_done = true;
	}
	return c->clive;
}

/* ---- stack depth ---- */

/*
 * Each function's own stack depth: every r10-derived offset it forms.  A
 * function with may_goto gets its slots below that depth: it must not form
 * a variable stack offset, which could reach them.
 */
static int stack_depth(struct pctx *c)
{
	__s32 lo, off;
	__u32 i, k;

	for (k = 0; k < c->nfn; k++) {
		struct func *f = &c->funcs[k];

		lo = 0;
		for (i = f->start; i < f->end; i++) {
			const struct bpf_insn *insn = &c->in[i];
			const __u32 *t = &c->ty[i * NREGS];
			__u8 cls = BPF_CLASS(insn->code);

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
			if (f->has_mg && (cls == BPF_ALU64 || cls == BPF_ALU) &&
			    BPF_OP(insn->code) != BPF_MOV &&
			    ((insn->dst_reg < NREGS && T_KIND(t[insn->dst_reg]) == T_FP &&
			      !(cls == BPF_ALU64 && BPF_SRC(insn->code) == BPF_K &&
				(BPF_OP(insn->code) == BPF_ADD || BPF_OP(insn->code) == BPF_SUB))) ||
			     (BPF_SRC(insn->code) == BPF_X &&
			      (insn->src_reg == BPF_REG_10 ||
			       (insn->src_reg < NREGS && T_KIND(t[insn->src_reg]) == T_FP)))))
				return perr(c, -EINVAL, i,
					    MG "in a function with a variable stack offset is not supported on this kernel yet");
			if (insn->dst_reg < NREGS && T_KIND(t[insn->dst_reg]) == T_FP &&
			    T_FPOFF(t[insn->dst_reg]) < lo)
				lo = T_FPOFF(t[insn->dst_reg]);
		}
		if (lo < -STACK_MAX)
			lo = -STACK_MAX;
		f->depth = (__u32)((-lo + 7) & ~7);
	}
	return 0;
}

/* ---- loops ---- */

static bool member(const struct pctx *c, const struct loop *l, __u32 i)
{
	return i < c->len && c->inloop[i] == (__u8)(l - c->loops + 1);
}

/*
 * Strongly connected components of the control flow graph (Tarjan,
 * iterative: every array is bounded by the program size).  scc[i] = the
 * component's id + 1; a loop is the component of its may_goto.  With l:
 * of l's insns without the edges into l->e (what is left cycles only in
 * nested loops).
 */
static int sccs(struct pctx *c, const struct loop *l)
{
	__u32 *index = c->work, *low = c->tlow, *st = c->tstack, *cs = c->tcall;
	__u32 idx = 1, nid = 0, nst, ncs, v, w, s[2], root;
	__u8 *k = c->dfs;	/* per call frame: successors done; bit 7: on st */
	int ns;

	memset(index, 0, c->len * sizeof(*index));
	memset(k, 0, c->len);
	for (root = 0; root < c->len; root++) {
		if (c->second[root] || index[root] || (l && !member(c, l, root)))
			continue;
		nst = ncs = 0;
		index[root] = low[root] = idx++;
		st[nst++] = root;
		k[root] = 0x80;
		cs[ncs++] = root;
		while (ncs) {
			v = cs[ncs - 1];
			ns = succs(c, v, s);
			if ((k[v] & 3) < ns) {
				w = s[k[v] & 3];
				k[v]++;
				if (l && (!member(c, l, w) || w == l->e))
					continue;
				if (!index[w]) {
					index[w] = low[w] = idx++;
					st[nst++] = w;
					k[w] = 0x80;
					cs[ncs++] = w;
				} else if ((k[w] & 0x80) && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			ncs--;
			if (low[v] == index[v]) {
				nid++;
				do {
					w = st[--nst];
					k[w] &= ~0x80;
					c->scc[w] = nid;
				} while (w != v);
			}
			if (ncs && low[v] < low[cs[ncs - 1]])
				low[cs[ncs - 1]] = low[v];
		}
	}
	return 0;
}


/* Bits of the 8-byte slots covering stack bytes [lo, hi) (offsets from r10). */
static __u64 slot_bits(__s32 lo, __s32 hi)
{
	__u64 m = 0;
	__s32 off;

	if (lo < -STACK_MAX)
		lo = -STACK_MAX;
	if (hi > 0)
		hi = 0;
	for (off = lo; off < hi; off++)
		m |= 1ull << ((-off - 1) / 8);
	return m;
}

/* The stack offset insn i's pointer register reg points to, if it is one. */
static bool fp_base(const struct pctx *c, __u32 i, __u8 reg, __s32 *off)
{
	return t_fp_off(&c->ty[i * NREGS], reg, off);
}


/*
 * The stack slots loop l reads and may write (constant offsets: the
 * function has no variable-offset stack pointer, stack_depth()).  A stack
 * pointer passed to a call counts as reading and writing everything above
 * it; one stored to memory other than the stack is refused (it would point
 * into the body's frame, not f's).
 */
static int loop_slots(struct pctx *c, struct loop *l, __u64 *rd, __u64 *wr)
{
	__u32 i, hl = orig_idx(c, l->h);
	__s32 off;
	__u8 r, cls, sz;

	*rd = 0;
	*wr = 0;
	for (i = l->h; i <= l->b; i++) {
		const struct bpf_insn *insn = &c->in[i];

		if (!member(c, l, i) || c->second[i] || !(c->vis[i] & 1))
			continue;
		cls = BPF_CLASS(insn->code);
		sz = bpfa_access_bytes(insn->code);
		if (cls == BPF_LDX && BPF_MODE(insn->code) == BPF_MEM &&
		    fp_base(c, i, insn->src_reg, &off))
			*rd |= slot_bits(off + insn->off, off + insn->off + sz);
		if ((cls == BPF_ST || cls == BPF_STX) && fp_base(c, i, insn->dst_reg, &off)) {
			*wr |= slot_bits(off + insn->off, off + insn->off + sz);
			if (BPF_MODE(insn->code) == BPF_ATOMIC)
				*rd |= slot_bits(off + insn->off, off + insn->off + sz);
		}
		if (cls == BPF_STX && fp_base(c, i, insn->src_reg, &off) &&
		    !fp_base(c, i, insn->dst_reg, &off))
			return perr(c, -EINVAL, i,
				    MG "loop at insn %u stores a stack pointer to memory: not supported on this kernel",
				    hl);
		if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(insn->code) == BPF_CALL)
			for (r = 1; r <= 5; r++)
				if (fp_base(c, i, r, &off)) {
					*rd |= slot_bits(off, 0);
					*wr |= slot_bits(off, 0);
				}
	}
	return 0;
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

/* The join of the register types on the edges entering loop l (at E). */
static void entry_types(const struct pctx *c, const struct loop *l, __u32 *et)
{
	const struct func *f = &c->funcs[l->fn];
	__u32 i, s[2], t[NREGS], r;
	bool any = false;
	int k, ns;

	for (r = 0; r < NREGS; r++)
		et[r] = T_UNINIT;
	if (l->e == f->start) {
		for (r = 0; r < NREGS; r++)
			et[r] = entry_type(c, l->fn, r);
		any = true;
	}
	for (i = f->start; i < f->end; i++) {
		if (c->second[i] || member(c, l, i) || !(c->vis[i] & 1))
			continue;
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++) {
			if (s[k] != l->e)
				continue;
			memcpy(t, &c->ty[i * NREGS], sizeof(t));
			if (!bpfa_is_jump(&c->in[i]))
				xfer(c, i, t);
			for (r = 0; r < NREGS; r++)
				et[r] = any ? tjoin(et[r], t[r]) : t[r];
			any = true;
		}
	}
}

/*
 * Main's context is used inside loop l (held in R<r> at E): the body gets
 * it as a second argument (docs/LOOPS.md "The context in a loop") when the
 * program type lets 6.1 pass it to a global function, and the loop is
 * main's own (bodies of later rounds have no context slot to take it from).
 */
static int ctx_reaches_body(struct pctx *c, const struct loop *l, __u32 hl, __u32 r)
{
	if (!c->env->ctx_struct && !c->env->ctx_mem)
		return perr(c, -EINVAL, l->e,
			    MG "loop at insn %u: R%u holds the context pointer, which a loop body cannot receive for this program type on this kernel: read what the loop needs from the context before the loop",
			    hl, r);
	if (c->round || !c->funcs[l->fn].is_main)
		return perr(c, -EINVAL, l->e,
			    MG "loop at insn %u: R%u holds the context pointer in a nested loop or a subprogram's loop, which cannot receive it on this kernel yet: read what the loop needs from the context before it",
			    hl, r);
	return 0;
}

/*
 * Does a register live at successor s hold main's context leaving insn i
 * (in-state types) and arrive at s as something else (a join with another
 * path)?
 */
static bool ctx_joined_away(const struct pctx *c, __u32 i, __u32 s)
{
	__u32 t[NREGS], r;

	memcpy(t, &c->ty[i * NREGS], sizeof(t));
	if (!bpfa_is_jump(&c->in[i]))
		xfer(c, i, t);
	for (r = 0; r < NREGS; r++)
		if (T_KIND(t[r]) == T_CTX && c->ty[s * NREGS + r] != t[r] &&
		    (c->live[s] & (1u << r)))
			return true;
	return false;
}

/*
 * A context that is plain memory (ctx_mem) reaches the body as a pointer to
 * ctx_size bytes, which the verifier checks at the call as an access of the
 * context (and so sets the run-time minimum context size as upstream).  In
 * the body it is memory, so what the verifier checks of the context must be
 * checked here, with its words: loads and stores at constant, aligned,
 * non-negative offsets; no atomics, no pointer arithmetic, no passing it on
 * or storing it.  The largest access gives ctx_size.
 */
static int check_ctx_mem(struct pctx *c, struct loop *l, __u32 hl)
{
	__u32 i, r, end;

	for (i = l->h; i <= l->b; i++) {
		__u32 sc[2];
		int k, ns;

		if (c->second[i] || !member(c, l, i) || !(c->vis[i] & 1))
			continue;
		ns = bpfa_is_exit(&c->in[i]) ? 0 : succs(c, i, sc);
		for (k = 0; k < ns; k++)
			if (member(c, l, sc[k]) && ctx_joined_away(c, i, sc[k]))
				return perr(c, -EINVAL, sc[k],
					    MG "loop at insn %u: the context pointer meets another value here, which a loop body cannot take for this program type on this kernel: keep it in one register or slot",
					    hl);
	}
	for (i = l->h; i <= l->b; i++) {
		const struct bpf_insn *insn = &c->in[i];
		const __u32 *t = &c->ty[i * NREGS];
		__u8 cls = BPF_CLASS(insn->code), d = insn->dst_reg, s = insn->src_reg;
		bool dctx = d < NREGS && T_KIND(t[d]) == T_CTX;
		bool sctx = s < NREGS && T_KIND(t[s]) == T_CTX && BPF_SRC(insn->code) == BPF_X;
		__u32 size = bpfa_access_bytes(insn->code);
		__u8 base;

		if (c->second[i] || !member(c, l, i) || !(c->vis[i] & 1))
			continue;
		switch (cls) {
		case BPF_LDX:
		case BPF_STX:
		case BPF_ST:
			base = cls == BPF_LDX ? s : d;
			if (cls == BPF_STX && T_KIND(t[s < NREGS ? s : 0]) == T_CTX && s < NREGS)
				return perr(c, -EINVAL, i,
					    MG "loop at insn %u stores the context pointer to memory: not supported on this kernel",
					    hl);
			if (base >= NREGS || T_KIND(t[base]) != T_CTX)
				continue;
			if (cls == BPF_STX && BPF_MODE(insn->code) == BPF_ATOMIC)
				return perr(c, -EACCES, i,
					    "BPF_ATOMIC stores into R%u ctx is not allowed", base);
			if (insn->off < 0 || insn->off % (__s32)size ||
			    insn->off + size >= 0xffff)
				return perr(c, -EACCES, i,
					    "invalid bpf_context access off=%d size=%u", insn->off,
					    size);
			end = (__u32)insn->off + size;
			if (end > l->ctx_size)
				l->ctx_size = end;
			continue;
		case BPF_ALU:
		case BPF_ALU64:
			if (BPF_OP(insn->code) == BPF_MOV && cls == BPF_ALU64 && !insn->off)
				continue;
			if (dctx || sctx)
				return perr(c, -EINVAL, i,
					    MG "loop at insn %u computes with the context pointer: not supported on this kernel",
					    hl);
			continue;
		case BPF_JMP:
		case BPF_JMP32:
			if (BPF_OP(insn->code) != BPF_CALL)
				continue;
			for (r = 1; r <= helper_nargs(insn, true); r++)
				if (T_KIND(t[r]) == T_CTX)
					return perr(c, -EINVAL, i,
						    MG "loop at insn %u passes the context to a call: not supported for this program type on this kernel",
						    hl);
			continue;
		}
	}
	if (!l->ctx_size)
		return perr(c, -EINVAL, l->e,
			    MG "loop at insn %u keeps the context pointer without reading it: not supported on this kernel",
			    hl);
	return 0;
}

static int check_loop(struct pctx *c, struct loop *l)
{
	__u32 i, s[2], r, t[NREGS], et[NREGS], hl = orig_idx(c, l->h), nent = 0;
	const struct func *f = &c->funcs[l->fn];
	__u64 rd, wr;
	bool reached;
	int k, ns;

	/*
	 * One entry E (clang rotates loops: E need not be h), every cycle
	 * through E, nothing the pass cannot outline.
	 */
	l->e = l->h;
	if (member(c, l, f->start)) {
		l->e = f->start;
		nent++;
	}
	for (i = f->start; i < f->end; i++) {
		if (c->second[i])
			continue;
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++) {
			if (member(c, l, i) || !member(c, l, s[k]))
				continue;
			if (nent && s[k] != l->e)
				return perr(c, -EINVAL, i,
					    MG "loop at insn %u is entered at insns %u and %u: not supported on this kernel",
					    hl, orig_idx(c, l->e), orig_idx(c, s[k]));
			l->e = s[k];
			nent++;
		}
		if (!member(c, l, i))
			continue;
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
	 * A cycle inside the loop not through E is a nested loop: its may_goto
	 * stays in the body for the next round (bpfa_loops()).
	 */
	/* The slots it touches, mirrored in the body at the same offsets. */
	if (loop_slots(c, l, &rd, &wr))
		return c->err;
	for (k = 0; k < NSLOTS; k++) {
		if (!((rd | wr) & (1ull << k)))
			continue;
		/* main's context, spilled: the body's own copy is its argument */
		if (c->sctx && (c->sctx[l->e] >> k & 1)) {
			if (wr & (1ull << k))
				return perr(c, -EINVAL, l->e,
					    MG "loop at insn %u writes fp%d, where the context pointer is kept: not supported on this kernel",
					    hl, -8 * (k + 1));
			l->uses_ctx = true;
			l->ctx_img |= 1ull << l->nimg;
		}
		if (wr & (1ull << k))
			l->img_w |= 1ull << l->nimg;
		l->img_off[l->nimg++] = (__s16)(-8 * (k + 1));
		l->td = 8 * (k + 1);
	}
	/*
	 * What crosses E: scalars (carried), ld_imm64 values and stack pointers
	 * (re-derived).  The context may only pass by, for use after the
	 * loop: the driver re-derives it at the exits.
	 */
	memset(c->llive + l->h, 0, (l->b - l->h + 1) * sizeof(*c->llive));
	liveness(c, c->llive, l->h, l->b, l);
	for (r = 0; r < NREGS; r++) {
		__u32 ty = c->ty[l->e * NREGS + r];

		/*
		 * Liveness counts r1-r5 as used by every call: a register no path
		 * wrote is not carried (if the loop does read it, the verifier
		 * refuses the body as it would the original).  One written on some
		 * paths only is refused: its value could not be told apart.
		 */
		if (!(c->live[l->e] & rbit(r)) || T_KIND(ty) == T_BITS || T_KIND(ty) == T_MAP ||
		    T_KIND(ty) == T_UNINIT || T_KIND(ty) == T_FP || T_KIND(ty) == T_MAYBE ||
		    T_KIND(ty) == T_ARG)
			continue;
		if (!(c->llive[l->e] & rbit(r)))
			continue;
		if (T_KIND(ty) == T_CTX) {
			if (ctx_reaches_body(c, l, hl, r))
				return c->err;
			l->uses_ctx = true;
			continue;
		}
		return perr(c, -EINVAL, l->e,
			    MG "loop at insn %u: R%u holds %s at the loop head, which cannot cross an iteration on this kernel yet",
			    hl, r, kind_name(ty));
	}
	if (l->uses_ctx && c->env->ctx_mem && check_ctx_mem(c, l, hl))
		return c->err;
	/*
	 * Carried as bits: live at E and a scalar there, or written on some
	 * paths only (a value the original reads only where it was written,
	 * as its verifier checked).  What the driver stores for it depends on
	 * the edges that enter the loop.
	 */
	entry_types(c, l, et);
	for (r = 0; r < NREGS; r++) {
		__u32 ty = c->ty[l->e * NREGS + r];

		/* An argument the loop uses is carried as bits (usually a scalar). */
		if (!(c->live[l->e] & rbit(r)) ||
		    (T_KIND(ty) != T_BITS && T_KIND(ty) != T_MAYBE &&
		     !(T_KIND(ty) == T_ARG && (c->llive[l->e] & rbit(r)))))
			continue;
		if (T_KIND(et[r]) == T_MAYBE) {
			/*
			 * Read in the loop only as an argument the verifier
			 * does not check (a one-value bpf_printk's R4, set
			 * on some entering paths by what came before): the
			 * original passes whatever the register holds, so the
			 * body may too; not carried.
			 */
			if (!(checked_live(c)[l->e] & rbit(r)))
				continue;
			return perr(c, -EINVAL, l->e,
				    MG "loop at insn %u: R%u may be uninitialised where the loop is entered",
				    hl, r);
		}
		l->hm |= rbit(r);
		if (T_KIND(et[r]) == T_UNINIT)
			l->hm_zero |= rbit(r);
	}
	/* Exits; an edge to E from inside is the next iteration. */
	for (i = l->h; i <= l->b; i++) {
		if (c->second[i] || !member(c, l, i))
			continue;
		reached = c->vis[i] & 1;

		if (bpfa_is_exit(&c->in[i])) {
			if (add_exit(c, l, i, EXIT_RET, reached ? &c->ty[i * NREGS] : NULL))
				return c->err;
			continue;
		}
		memcpy(t, &c->ty[i * NREGS], sizeof(t));
		if (!bpfa_is_jump(&c->in[i]))
			xfer(c, i, t);
		ns = succs(c, i, s);
		for (k = 0; k < ns; k++)
			if (!member(c, l, s[k]) && add_exit(c, l, i, s[k], reached ? t : NULL))
				return c->err;
	}
	if (!l->nexits)
		return perr(c, -EINVAL, l->h, MG "loop at insn %u has no exit", hl);
	/*
	 * Every edge that leaves an iteration (to E or out) stores what it
	 * carries; a register written on some paths only and live there is
	 * refused: its value could not be told apart.
	 */
	for (i = l->h; i <= l->b; i++) {
		if (c->second[i] || !member(c, l, i) || !(c->vis[i] & 1))
			continue;
		memcpy(t, &c->ty[i * NREGS], sizeof(t));
		if (!bpfa_is_jump(&c->in[i]))
			xfer(c, i, t);
		ns = bpfa_is_exit(&c->in[i]) ? 0 : succs(c, i, s);
		for (k = 0; k < ns; k++) {
			__u16 live;

			if (member(c, l, s[k]) && s[k] != l->e)
				continue;
			live = s[k] == l->e ? l->hm : c->live[s[k]];
			for (r = 0; r < NREGS; r++)
				if ((live & rbit(r)) && T_KIND(t[r]) == T_MAYBE)
					return perr(c, -EINVAL, i,
						    MG "loop at insn %u: R%u may be uninitialised where an iteration ends",
						    hl, r);
		}
	}
	/* Arguments live after the loop are re-derived from a slot saved at entry. */
	for (k = 0; k < (int)l->nexits; k++)
		for (r = 0; r < NREGS; r++)
			if ((l->exit_live[k] & rbit(r)) && T_KIND(l->exit_ty[k][r]) == T_ARG)
				c->funcs[l->fn].argsave |= rbit(l->exit_ty[k][r] & 7);
	/* The forced exit: the first may_goto's budget exit. */
	l->forced = 1;
	for (i = l->h; i <= l->b; i++) {
		if (c->second[i] || !member(c, l, i) || !bpfa_is_may_goto(&c->in[i]))
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
	__u32 m, j, k, n, s[2];
	struct loop *l;
	struct func *f;
	int ns;

	for (m = 0; m < c->len; m++) {
		__u32 h = ~0u, b = 0;
		bool self = false;

		if (c->second[m] || !bpfa_is_loop_mark(&c->in[m]) || c->inloop[m])
			continue;
		f = &c->funcs[c->fn[m]];
		/* m's component (edges stay in the function): a loop if it cycles. */
		for (j = f->start, n = 0; j < f->end; j++) {
			if (c->second[j] || c->scc[j] != c->scc[m])
				continue;
			h = j < h ? j : h;
			b = j;
			n++;
		}
		ns = succs(c, m, s);
		for (k = 0; k < (__u32)ns; k++)
			self |= s[k] == m;
		if (n < 2 && !self)
			continue;	/* not in a loop: translated in place */
		if (c->nloops == MAX_LOOPS)
			return perr(c, -EINVAL, m, MG "loops: more than %d in one program", MAX_LOOPS);
		l = &c->loops[c->nloops++];
		memset(l, 0, sizeof(*l));
		l->h = h;
		l->b = b;
		l->fn = c->fn[m];
		for (j = h; j <= b; j++)
			if (!c->second[j] && c->scc[j] == c->scc[m])
				c->inloop[j] = (__u8)c->nloops;
		if (check_loop(c, l))
			return c->err;
		if (l->nimg > f->imax)
			f->imax = l->nimg;
	}
	/* 6.1 refuses a frame over 512 bytes; the combined depth is its to check. */
	for (k = 0; k < c->nfn; k++) {
		__u32 need;

		f = &c->funcs[k];
		for (j = 5; !f->is_main && j > 0 && !(f->argsave & rbit((__u8)j)); j--)
			;
		need = 96 + 8 * f->imax + 8 * (f->is_main ? 1 : j);
		if (f->has_mg && f->depth + need > STACK_MAX)
			return perr(c, -E2BIG, f->start,
				    MG "needs %u bytes of stack below the function's %u: too many for this kernel",
				    need, f->depth);
	}
	return 0;
}

/* ---- unsigned bounds (forward; only for the guards of the bodies) ---- */

/*
 * An upper bound of each register as an unsigned number, and links between
 * registers that hold one value plus a constant (6.12's linked scalars), so
 * that a loop counter checked on the back edge as `i < N` bounds `i + 1` at
 * the head.  The body re-checks each bound it relies on (put_body()): if
 * this analysis is wrong the program ends its loop early, nothing else.
 */

#define UB_ANY		(~0ull)
#define UB_WORK_PER_INSN 64
#define UB_MAX_THR	64

static void ub_any(struct ub *u)
{
	u->umax = UB_ANY;
	u->id = 0;
	u->delta = 0;
}

/* r <= nb, and the registers linked to it. */
static void ub_refine(struct ub *st, __u8 r, __u64 nb)
{
	__u64 base;
	__u8 q;

	if (r >= NREGS || nb >= st[r].umax)
		return;
	st[r].umax = nb;
	if (!st[r].id || nb < st[r].delta)
		return;
	base = nb - st[r].delta;
	for (q = 0; q < NREGS; q++)
		if (q != r && st[q].id == st[r].id && base + st[q].delta >= base &&
		    base + st[q].delta < st[q].umax)
			st[q].umax = base + st[q].delta;
}

static void ub_xfer(const struct pctx *c, __u32 i, struct ub *st)
{
	const struct bpf_insn *insn = &c->in[i];
	__u8 cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);
	__u8 d = insn->dst_reg, sr = insn->src_reg;
	bool x = BPF_SRC(insn->code) == BPF_X;
	__u64 k = (__u64)(__s64)insn->imm, sv;
	struct ub *u;
	__u8 r;

	if (cls == BPF_JMP || cls == BPF_JMP32) {
		if (op == BPF_CALL)
			for (r = 0; r <= 5; r++)
				ub_any(&st[r]);
		return;
	}
	if (cls == BPF_LD && !bpfa_is_ldimm64(insn)) {
		for (r = 0; r <= 5; r++)
			ub_any(&st[r]);
		return;
	}
	if (d >= NREGS)
		return;
	u = &st[d];
	if (cls == BPF_LDX) {
		static const __u64 lim[4] = { 0xffffffffull, 0xffff, 0xff, UB_ANY };

		ub_any(u);
		if (BPF_MODE(insn->code) == BPF_MEM)
			u->umax = lim[BPF_SIZE(insn->code) >> 3];
		return;
	}
	if (cls == BPF_STX) {
		if (BPF_MODE(insn->code) == BPF_ATOMIC && (insn->imm & BPF_FETCH)) {
			r = insn->imm == BPF_CMPXCHG ? BPF_REG_0 : sr;
			if (r < NREGS)
				ub_any(&st[r]);
		}
		return;
	}
	if (cls == BPF_LD) {	/* ld_imm64 */
		ub_any(u);
		if (insn->src_reg == 0)
			u->umax = (__u32)insn->imm | (__u64)(__u32)insn[1].imm << 32;
		return;
	}
	if (cls != BPF_ALU && cls != BPF_ALU64)
		return;
	sv = x ? (sr < NREGS ? st[sr].umax : UB_ANY) : k;
	if (cls == BPF_ALU64 && op == BPF_MOV && insn->off == 0) {
		if (!x) {
			ub_any(u);
			u->umax = k;
		} else if (sr < NREGS) {
			if (!st[sr].id && st[sr].umax != UB_ANY) {
				st[sr].id = i + 1;	/* a fresh link */
				st[sr].delta = 0;
			}
			*u = st[sr];
		} else {
			ub_any(u);
		}
		return;
	}
	if (cls == BPF_ALU64 && op == BPF_ADD && !x) {
		if (u->umax != UB_ANY && insn->imm >= 0 && u->umax + k >= u->umax &&
		    u->delta + k >= u->delta) {
			u->umax += k;
			u->delta += k;
			return;
		}
		ub_any(u);
		return;
	}
	switch (op) {
	case BPF_AND:
		u->umax = u->umax < sv ? u->umax : sv;
		break;
	case BPF_RSH:
		u->umax = !x && k < 64 ? u->umax >> k : u->umax;
		break;
	case BPF_MOD:
		u->umax = !x && k ? k - 1 : UB_ANY;
		break;
	case BPF_MOV:	/* 32-bit, or sign-extending */
		u->umax = cls == BPF_ALU && insn->off == 0 ? (x ? sv : (__u32)insn->imm) : UB_ANY;
		break;
	case BPF_ADD:
		u->umax = u->umax + sv >= u->umax && u->umax != UB_ANY ? u->umax + sv : UB_ANY;
		break;
	case BPF_LSH:
		u->umax = !x && k < 64 && u->umax <= (UB_ANY >> k) ? u->umax << k : UB_ANY;
		break;
	default:
		u->umax = UB_ANY;
		break;
	}
	if (cls == BPF_ALU && u->umax > 0xffffffffull)
		u->umax = 0xffffffffull;
	u->id = 0;
	u->delta = 0;
}

/* Refines st for the edge of conditional jump i (taken or not). */
static void ub_branch(const struct pctx *c, __u32 i, struct ub *st, bool taken)
{
	const struct bpf_insn *insn = &c->in[i];
	__u8 op = BPF_OP(insn->code), d = insn->dst_reg, sr = insn->src_reg;
	bool x = BPF_SRC(insn->code) == BPF_X, is32 = BPF_CLASS(insn->code) == BPF_JMP32;
	__u64 k, dmax;

	if (d >= NREGS || (x && sr >= NREGS))
		return;
	/* A 32-bit compare is the 64-bit one when the upper halves are 0. */
	if (is32 && (st[d].umax > 0xffffffffull || (x && st[sr].umax > 0xffffffffull)))
		return;
	k = x ? st[sr].umax : is32 ? (__u32)insn->imm : (__u64)(__s64)insn->imm;
	dmax = st[d].umax;
	switch (op) {
	case BPF_JEQ:
		if (taken)
			ub_refine(st, d, k);
		break;
	case BPF_JNE:
		if (!taken)
			ub_refine(st, d, k);
		break;
	case BPF_JLT:	/* d < k */
		if (taken && k)
			ub_refine(st, d, k - 1);
		if (!taken && x)
			ub_refine(st, sr, dmax);
		break;
	case BPF_JLE:
		if (taken)
			ub_refine(st, d, k);
		if (!taken && x && dmax)
			ub_refine(st, sr, dmax - 1);
		break;
	case BPF_JGT:	/* d > k */
		if (!taken)
			ub_refine(st, d, k);
		if (taken && x && dmax)
			ub_refine(st, sr, dmax - 1);
		break;
	case BPF_JGE:
		if (!taken && k)
			ub_refine(st, d, k - 1);
		if (taken && x)
			ub_refine(st, sr, dmax);
		break;
	}
}

/*
 * Widening with thresholds: a bound that grows along a back edge jumps to
 * the next constant the program compares with (K or K - 1), so that
 * `for (i = 0; i < N; i++)` settles at N - 1 instead of "any".
 */
static __u64 ub_widen(const struct pctx *c, __u64 v)
{
	__u64 best = UB_ANY;
	__u32 k;

	for (k = 0; k < c->nthr; k++)
		if (c->thr[k] >= v && c->thr[k] < best)
			best = c->thr[k];
	return best;
}

static void ub_thresholds(struct pctx *c)
{
	__u32 i;
	__u64 v;
	int d;

	for (i = 0; i < c->len && c->nthr + 2 <= UB_MAX_THR; i++) {
		const struct bpf_insn *insn = &c->in[i];

		if (c->second[i] || !bpfa_is_jump(insn) || bpfa_is_ja(insn) ||
		    bpfa_is_loop_mark(insn) || BPF_SRC(insn->code) == BPF_X || insn->imm < 0)
			continue;
		for (d = 0; d < 2; d++) {
			v = (__u64)insn->imm - (__u64)d;
			if (v <= (__u64)insn->imm)
				c->thr[c->nthr++] = v;
		}
	}
}

/* Joins in into *out; widens at a back edge.  Changed? */
static bool ub_join(const struct pctx *c, struct ub *out, const struct ub *in, bool back)
{
	bool changed = false;
	__u8 r;

	for (r = 0; r < NREGS; r++) {
		if (in[r].umax > out[r].umax) {
			out[r].umax = back ? ub_widen(c, in[r].umax) : in[r].umax;
			changed = true;
		}
		if (out[r].id && (in[r].id != out[r].id || in[r].delta != out[r].delta)) {
			out[r].id = 0;
			out[r].delta = 0;
			changed = true;
		}
	}
	return changed;
}

/* c->ub: per insn, the bounds on entry; NULL if it did not settle in time. */
static int bounds(struct pctx *c)
{
	__u32 nw = 0, i, s[2], k, budget = UB_WORK_PER_INSN * c->len;
	struct ub t[NREGS], b[NREGS];
	__u8 r;
	int j, ns;

	c->ub = palloc(c, (size_t)c->len * NREGS, sizeof(*c->ub));
	if (!c->ub)
		return perr(c, -ENOMEM, 0, "out of memory");
	ub_thresholds(c);
	for (k = 0; k < c->nfn; k++) {
		i = c->funcs[k].start;
		if (!c->funcs[k].has_mg)
			continue;
		for (r = 0; r < NREGS; r++)
			ub_any(&c->ub[i * NREGS + r]);
		c->uvis[i] = 3;
		c->work[nw++] = i;
	}
	while (nw) {
		if (!budget--) {
			pfree(c, c->ub);
			c->ub = NULL;	/* no guards: bodies see unknown scalars */
			break;
		}
		i = c->work[--nw];
		c->uvis[i] &= ~2;
		memcpy(t, &c->ub[i * NREGS], sizeof(t));
		ub_xfer(c, i, t);
		ns = bpfa_is_exit(&c->in[i]) ? 0 : succs(c, i, s);
		for (j = 0; j < ns; j++) {
			struct ub *d = &c->ub[s[j] * NREGS];

			memcpy(b, t, sizeof(b));
			if (bpfa_is_jump(&c->in[i]) && !bpfa_is_ja(&c->in[i]) &&
			    !bpfa_is_loop_mark(&c->in[i]))
				ub_branch(c, i, b, j == 0);
			if (!(c->uvis[s[j]] & 1)) {
				memcpy(d, b, sizeof(b));
				c->uvis[s[j]] |= 1;
			} else if (!ub_join(c, d, b, s[j] <= i)) {
				continue;
			}
			if (!(c->uvis[s[j]] & 2)) {
				c->uvis[s[j]] |= 2;
				c->work[nw++] = s[j];
			}
		}
	}
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
	if (!grow(c, (void **)&c->o, &c->cap, c->n + 1, sizeof(*c->o)) ||
	    !grow(c, (void **)&c->osrc, &c->capsrc, c->n + 1, sizeof(*c->osrc)))
		return;
	c->osrc[c->n] = c->cur | c->mark;
	c->o[c->n++] = insn;
	/* A function's first insn only; then code of the pass again. */
	c->mark = BPFA_SRC_ADDED;
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
	__u32 mark = c->mark;

	put(c, c->in[i]);
	c->mark = mark;		/* both halves alike */
	put(c, c->in[i + 1]);
}

/* Labels: main's copy of insn i, the body's copy, a function's entry. */
#define L_INSN(c, i)	(i)
#define L_BODY(c, i)	((c)->len + (i))
#define L_ENTRY(c, i)	(2 * (c)->len + (i))

/* may_goto +off at insn m, on the budget slot at r10 + budget. */
static void put_may_goto(struct pctx *c, __u32 m, __s32 budget, __u32 target_lbl)
{
	__u16 live = c->live[m];
	__u8 r;

	for (r = 0; r < NREGS && (live & rbit(r)); r++)
		;
	if (r == NREGS) {
		perr(c, -EINVAL, m, MG "with every register live: no room for the budget test");
		return;
	}
	put(c, LDX_DW(r, BPF_REG_10, (__s16)budget));
	put_fix(c, I(BPF_JMP | BPF_JEQ | BPF_K, r, 0, 0, 0), target_lbl, FX_OFF);
	put(c, ADD_K(r, -1));
	put(c, STX_DW(BPF_REG_10, r, (__s16)budget));
}

/* A copy of insn i (not ld_imm64 second halves), its jump aimed at lbl. */
static void put_insn(struct pctx *c, __u32 i, __u32 lbl)
{
	const struct bpf_insn *insn = &c->in[i];

	/* A copy of the input's insn: the log names it as the user's. */
	c->mark = 0;
	if (bpfa_is_pfunc(insn) || bpfa_is_pcall(insn)) {
		/* Calls and callbacks reach the callee's prologue. */
		put_fix(c, *insn, L_ENTRY(c, (__u32)(i + 1 + insn->imm)), FX_CALL);
		if (bpfa_is_pfunc(insn)) {
			c->mark = 0;
			put(c, insn[1]);
		}
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
	/*
	 * 6.12 knows bpf_get_smp_processor_id() < nr_cpu_ids (its
	 * do_refine_retval_range()), 6.1 does not: upstream's loop programs
	 * index per-CPU arrays with it.  Said in code the verifier checks; the
	 * branch is never taken.
	 */
	if (insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == 0 &&
	    insn->imm == BPF_FUNC_get_smp_processor_id && c->env->nr_cpu_ids &&
	    c->env->nr_cpu_ids <= 0x7fffffff) {
		put(c, I(BPF_JMP | BPF_JLE | BPF_K, BPF_REG_0, 0, 1,
			 (__s32)(c->env->nr_cpu_ids - 1)));
		put(c, MOV_K(BPF_REG_0, 0));
	}
}

/*
 * Body: registers m, the written image slots and the budget to *frame,
 * the exit code, r0 = 0 (next iteration) or 1 (stop).  r9 holds the frame
 * pointer once its own value is stashed.
 */
static void put_copy_out(struct pctx *c, const struct loop *l, __u16 m, __s32 exit_code)
{
	__u32 k;
	__u8 r;

	if (m & rbit(9))
		put(c, STX_DW(BPF_REG_10, BPF_REG_9, (__s16)BB_TMP(l->td)));
	put(c, LDX_DW(BPF_REG_9, BPF_REG_10, (__s16)BB_FPSAVE(l->td)));
	for (r = 0; r < 9; r++)
		if (m & rbit(r))
			put(c, STX_DW(BPF_REG_9, r, (__s16)FR_REG(l, r)));
	if (m & rbit(9)) {
		put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)BB_TMP(l->td)));
		put(c, STX_DW(BPF_REG_9, BPF_REG_0, (__s16)FR_REG(l, 9)));
	}
	for (k = 0; k < l->nimg; k++) {
		if (!(l->img_w & (1ull << k)))
			continue;
		put(c, LDX_DW(BPF_REG_0, BPF_REG_10, l->img_off[k]));
		put(c, STX_DW(BPF_REG_9, BPF_REG_0, (__s16)FR_IMG(l, k)));
	}
	put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)BB_BUDGET(l->td)));
	put(c, STX_DW(BPF_REG_9, BPF_REG_0, (__s16)FR_BUDGET(l)));
	if (exit_code)
		put(c, ST_DW(BPF_REG_9, (__s16)FR_EXIT(l), exit_code));
	put(c, MOV_K(BPF_REG_0, exit_code ? 1 : 0));
	put(c, EXIT_I());
}

/* Re-derives r (typed ty, not carried) in f's frame (NULL: a body's, no ctx nor arguments). */
static void put_rederive(struct pctx *c, __u8 r, __u32 ty, const struct func *f)
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
	case T_ARG:
		if (f)
			put(c, LDX_DW(r, BPF_REG_10,
				      (__s16)OFF_ARG(f->depth, f->imax, T_KIND(ty) == T_CTX ? 1 : ty & 7)));
		break;
	case T_FP:
		put(c, MOV_X(r, BPF_REG_10));
		put(c, ADD_K(r, T_FPOFF(ty)));
		break;
	}
}

/* Is r restored from the frame (not re-derived) by the driver at exit j? */
static bool restored(const struct loop *l, __u32 j, __u8 r)
{
	return (l->exit_live[j] & rbit(r)) &&
	       (T_KIND(l->exit_ty[j][r]) == T_BITS || T_KIND(l->exit_ty[j][r]) == T_MAYBE);
}

/*
 * What the edge from member i to t (l->e, an exit target, or EXIT_RET)
 * stores into the frame: the registers the other side reads from it that
 * hold a value on this edge (a pointer is stored as its bits; an unset one
 * is a value the original never reads there).
 */
static __u16 edge_mask(const struct pctx *c, const struct loop *l, __u32 i, __u32 t)
{
	__u32 ty[NREGS], j;
	__u16 m = 0;
	__u8 r;

	memcpy(ty, &c->ty[i * NREGS], sizeof(ty));
	if (!bpfa_is_jump(&c->in[i]) && !bpfa_is_exit(&c->in[i]))
		xfer(c, i, ty);
	for (j = 0; t != l->e && j < l->nexits && l->exit_t[j] != t; j++)
		;
	for (r = 0; r < NREGS; r++) {
		if (T_KIND(ty[r]) == T_UNINIT || T_KIND(ty[r]) == T_MAYBE)
			continue;
		if (t == l->e ? (l->hm & rbit(r)) : (j < l->nexits && restored(l, j, r)))
			m |= rbit(r);
	}
	return m;
}

static __s32 edge_code(const struct loop *l, __u32 t)
{
	__u32 j;

	if (t == l->e)
		return 0;
	for (j = 0; j < l->nexits && l->exit_t[j] != t; j++)
		;
	return (__s32)(j + 1);
}

struct edge {
	__u32 lbl, from, to;
};

/* The label of a jump or fall-through from member i to t in the body. */
static __u32 body_edge(struct pctx *c, const struct loop *l, struct edge *ed, __u32 *ned,
		       __u32 cap, __u32 i, __u32 t)
{
	if (t != EXIT_RET && t != l->e && member(c, l, t))
		return L_BODY(c, t);
	if (*ned >= cap) {
		perr(c, -EFAULT, i, "loop translation: too many edges");
		return 0;
	}
	ed[*ned].lbl = new_label(c);
	ed[*ned].from = i;
	ed[*ned].to = t;
	return ed[(*ned)++].lbl;
}

/* BPFA_SRC_ITER if loop l holds an iterator's mark (bpf_for/bpf_repeat). */
static __u32 loop_kind(const struct pctx *c, const struct loop *l)
{
	__u32 i;

	for (i = l->h; i <= l->b; i++)
		if (!c->second[i] && member(c, l, i) && bpfa_is_iter_mark(&c->in[i]))
			return BPFA_SRC_ITER;
	return 0;
}

static void put_body(struct pctx *c, const struct loop *l)
{
	const __u32 *ety = &c->ty[l->e * NREGS];
	__u32 i, k, s[2], ned = 0, cap = 2 * (l->b - l->h + 1), guard = 0;
	struct edge *ed;
	__u8 r;

	ed = palloc(c, cap, sizeof(*ed));
	if (!ed) {
		perr(c, -ENOMEM, 0, "out of memory");
		return;
	}
	/* Nested loops: the components left without the edges into E. */
	sccs(c, l);
	memset(c->tlow, 0, c->len * sizeof(*c->tlow));
	for (i = l->h; i <= l->b; i++)
		if (!c->second[i] && member(c, l, i))
			c->tlow[c->scc[i] - 1]++;
	c->cur = l->h;
	c->mark = BPFA_SRC_ADDED | BPFA_SRC_BODY | loop_kind(c, l);
	set_label(c, l->body_lbl);
	/* The frame argument is PTR_TO_MEM_OR_NULL: never NULL from the callers. */
	put(c, I(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_1, 0, 2, 0));
	put(c, MOV_K(BPF_REG_0, 1));
	put(c, EXIT_I());
	put(c, STX_DW(BPF_REG_10, BPF_REG_1, (__s16)BB_FPSAVE(l->td)));
	if (l->uses_ctx) {
		/* As memory (ctx_mem) it is PTR_TO_MEM_OR_NULL too. */
		if (c->env->ctx_mem) {
			put(c, I(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 2, 0));
			put(c, MOV_K(BPF_REG_0, 1));
			put(c, EXIT_I());
		}
		put(c, STX_DW(BPF_REG_10, BPF_REG_2, (__s16)BB_CTX(l->td)));
	}
	put(c, LDX_DW(BPF_REG_0, BPF_REG_1, (__s16)FR_BUDGET(l)));
	put(c, STX_DW(BPF_REG_10, BPF_REG_0, (__s16)BB_BUDGET(l->td)));
	/* The touched slots, at their offsets in f's frame; the context's from the argument. */
	for (k = 0; k < l->nimg; k++) {
		if (l->ctx_img & (1ull << k))
			put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)BB_CTX(l->td)));
		else
			put(c, LDX_DW(BPF_REG_0, BPF_REG_1, (__s16)FR_IMG(l, k)));
		put(c, STX_DW(BPF_REG_10, BPF_REG_0, l->img_off[k]));
	}
	for (r = NREGS; r-- > 0;) {	/* r1, the frame pointer, last */
		if (!(c->live[l->e] & rbit(r)) || r == BPF_REG_1)
			continue;
		if (l->hm & rbit(r))
			put(c, LDX_DW(r, BPF_REG_1, (__s16)FR_REG(l, r)));
		else if (T_KIND(ety[r]) == T_MAP || T_KIND(ety[r]) == T_FP)
			put_rederive(c, r, ety[r], NULL);
		else if (T_KIND(ety[r]) == T_CTX && l->uses_ctx)
			put(c, LDX_DW(r, BPF_REG_10, (__s16)BB_CTX(l->td)));
	}
	if (c->live[l->e] & rbit(1)) {
		if (l->hm & rbit(1))
			put(c, LDX_DW(BPF_REG_1, BPF_REG_1, (__s16)FR_REG(l, 1)));
		else if (T_KIND(ety[1]) == T_MAP || T_KIND(ety[1]) == T_FP)
			put_rederive(c, BPF_REG_1, ety[1], NULL);
		else if (T_KIND(ety[1]) == T_CTX && l->uses_ctx)
			put(c, LDX_DW(BPF_REG_1, BPF_REG_10, (__s16)BB_CTX(l->td)));
	}
	/*
	 * The bounds the loop's carried scalars have at E (bounds()), checked
	 * again: the verifier sees them, as 6.12 keeps them across its
	 * converged loop states.  A failed check takes the forced exit.
	 */
	for (r = 0; r < NREGS && c->ub; r++) {
		__u64 bound = c->ub[l->e * NREGS + r].umax;

		if ((l->hm & rbit(r)) && bound <= 0x7fffffff) {
			if (!guard)
				guard = new_label(c);
			put_fix(c, I(BPF_JMP | BPF_JGT | BPF_K, r, 0, 0, (__s32)bound), guard,
				FX_OFF);
		}
	}
	if (l->e != l->h || guard)
		put_fix(c, JA_I(), L_BODY(c, l->e), FX_OFF);
	if (guard) {
		set_label(c, guard);
		put_copy_out(c, l, 0, (__s32)l->forced);
	}
	/* The loop; an edge to E (a jump, or falling into it) ends the iteration. */
	for (i = l->h; i <= l->b && !c->err; i++) {
		if (c->second[i] || !member(c, l, i))
			continue;
		set_label(c, L_BODY(c, i));
		c->cur = i;
		if (bpfa_is_jump(&c->in[i])) {
			__u32 lbl = body_edge(c, l, ed, &ned, cap, i, target_of(c, i));

			/*
			 * The loop's own marks: may_goto spends the budget, an
			 * iterator's mark is done (its loop is this body); a
			 * nested loop's marks stay for the next round.
			 */
			bool own = c->tlow[c->scc[i] - 1] < 2 && target_of(c, i) != i;

			if (!own && l->uses_ctx && (bpfa_is_may_goto(&c->in[i]) ||
						    bpfa_is_iter_mark(&c->in[i])) &&
			    target_of(c, i) != i)
				perr(c, -EINVAL, i,
				     MG "loop at insn %u uses the context pointer and holds a nested loop, which cannot receive it on this kernel yet: read what the loops need from the context before them",
				     orig_idx(c, l->h));
			if (own && bpfa_is_may_goto(&c->in[i]))
				put_may_goto(c, i, BB_BUDGET(l->td), lbl);
			else if (own && bpfa_is_iter_mark(&c->in[i]))
				put_fix(c, JA_I(), lbl, FX_OFF);
			else
				put_insn(c, i, lbl);
		} else if (bpfa_is_exit(&c->in[i])) {
			put_fix(c, JA_I(), body_edge(c, l, ed, &ned, cap, i, EXIT_RET), FX_OFF);
		} else {
			put_insn(c, i, 0);
		}
		if (succs(c, i, s) && !bpfa_is_ja(&c->in[i]) && !bpfa_is_exit(&c->in[i]) &&
		    (next_of(c, i) == l->e || !member(c, l, next_of(c, i))))
			put_fix(c, JA_I(), body_edge(c, l, ed, &ned, cap, i, next_of(c, i)), FX_OFF);
	}
	for (k = 0; k < ned && !c->err; k++) {
		c->cur = ed[k].from;
		set_label(c, ed[k].lbl);
		put_copy_out(c, l, edge_mask(c, l, ed[k].from, ed[k].to), edge_code(l, ed[k].to));
	}
	pfree(c, ed);
}

static void put_driver(struct pctx *c, const struct loop *l)
{
	const struct func *f = &c->funcs[l->fn];
	__u32 d = f->depth, j, k, xl[MAX_EXITS];
	__u8 r;

	for (r = 0; r < NREGS; r++) {
		if ((l->hm & rbit(r)) && !(l->hm_zero & rbit(r)))
			put(c, STX_DW(BPF_REG_10, r, (__s16)OFF_REG(d, r)));
		else
			put(c, ST_DW(BPF_REG_10, (__s16)OFF_REG(d, r), 0));
	}
	for (k = 0; k < l->nimg; k++) {
		put(c, LDX_DW(BPF_REG_0, BPF_REG_10, l->img_off[k]));
		put(c, STX_DW(BPF_REG_10, BPF_REG_0, (__s16)OFF_IMG(d, k)));
	}
	if (f->ext) {	/* an outer body's budget, shared as upstream's frames do */
		put(c, LDX_DW(BPF_REG_0, BPF_REG_10, f->ext));
		put(c, STX_DW(BPF_REG_10, BPF_REG_0, (__s16)OFF_BUDGET(d)));
	}
	put(c, ST_DW(BPF_REG_10, (__s16)OFF_EXIT(d), 0));
	put(c, MOV_K(BPF_REG_1, (__s32)BPFA_MAX_LOOPS));
	put_fix(c, I(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_2, BPF_PSEUDO_FUNC, 0, 0), l->cb_lbl,
		FX_CALL);
	put(c, I(0, 0, 0, 0, 0));
	put(c, MOV_X(BPF_REG_3, BPF_REG_10));
	put(c, ADD_K(BPF_REG_3, R_LO(d, l->nimg)));
	put(c, MOV_K(BPF_REG_4, 0));
	put(c, I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_loop));
	/* bpf_loop() ran out of iterations without an exit: one more run. */
	put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)OFF_EXIT(d)));
	put(c, I(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, l->uses_ctx ? 4 : 3, 0));
	put(c, MOV_X(BPF_REG_1, BPF_REG_10));
	put(c, ADD_K(BPF_REG_1, R_LO(d, l->nimg)));
	if (l->uses_ctx)
		put(c, LDX_DW(BPF_REG_2, BPF_REG_10, (__s16)OFF_CTX(d, f->imax)));
	put_fix(c, I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0), l->body_lbl, FX_CALL);
	if (f->ext) {
		put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)OFF_BUDGET(d)));
		put(c, STX_DW(BPF_REG_10, BPF_REG_0, f->ext));
	}
	/* The slots the loop wrote, back in f's frame: unknown scalars now. */
	for (k = 0; k < l->nimg; k++) {
		if (!(l->img_w & (1ull << k)))
			continue;
		put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)OFF_IMG(d, k)));
		put(c, STX_DW(BPF_REG_10, BPF_REG_0, l->img_off[k]));
	}
	put(c, LDX_DW(BPF_REG_0, BPF_REG_10, (__s16)OFF_EXIT(d)));
	for (j = 0; j < l->nexits; j++) {
		xl[j] = new_label(c);
		put_fix(c, I(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, (__s32)(j + 1)), xl[j],
			FX_OFF);
	}
	put_fix(c, JA_I(), xl[l->forced - 1], FX_OFF);
	for (j = 0; j < l->nexits; j++) {
		__u16 live = l->exit_live[j];

		set_label(c, xl[j]);
		for (r = 0; r < NREGS; r++) {
			if (!(live & rbit(r)))
				continue;
			if (restored(l, j, r))
				put(c, LDX_DW(r, BPF_REG_10, (__s16)OFF_REG(d, r)));
			else
				put_rederive(c, r, l->exit_ty[j][r], f);
		}
		if (l->exit_t[j] == EXIT_RET)
			put(c, EXIT_I());
		else
			put_fix(c, JA_I(), L_INSN(c, l->exit_t[j]), FX_OFF);
	}
}

/*
 * bpf_loop()'s callback: runs the body on the frame region R (r2).  A body
 * that takes the context gets it from main's context slot, below R in the
 * same frame, where the prologue spilled it: the verifier follows R into
 * that frame and restores the spilled pointer with its type.
 */
static void put_cb(struct pctx *c, const struct loop *l)
{
	const struct func *f = &c->funcs[l->fn];

	set_label(c, l->cb_lbl);
	put(c, MOV_X(BPF_REG_1, BPF_REG_2));
	if (l->uses_ctx)
		put(c, LDX_DW(BPF_REG_2, BPF_REG_1,
			      (__s16)(OFF_CTX(0, f->imax) - R_LO(0, l->nimg))));
	put_fix(c, I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0), l->body_lbl, FX_CALL);
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
 * +1 u64, +2 int, +3 int (void), then FUNCs bpfa_main, bpfa_sub_K (only
 * without program BTF), then per loop u64[R_LEN / 8], a pointer to it,
 * int (u64 (*frame)[...]), FUNC cb (static), FUNC body (global).
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
	__u32 b = w->id_base, k, id, p;
	char name[48];

	if (!w->id_base)
		bt_str(w, "");
	bt_type(w, "u64", BTF_KIND_INT << 24, 8);
	bt_u32(w, 64);
	bt_type(w, "int", BTF_KIND_INT << 24, 4);
	bt_u32(w, BTF_INT_SIGNED << 24 | 32);
	bt_type(w, NULL, BTF_KIND_FUNC_PROTO << 24, b + 2);
	id = b + 4;
	if (main_func) {
		bt_type(w, "bpfa_main", BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, b + 3);
		for (k = 0; k < c->nsubs; k++) {
			snprintf(name, sizeof(name), "bpfa_sub_%u", k);
			bt_type(w, name, BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, b + 3);
		}
		id += 1 + c->nsubs;
	}
	for (k = 0; k < c->nloops; k++, id = p + 3) {
		struct loop *l = &c->loops[k];
		__u32 ctx_ptr = 0;

		bt_type(w, NULL, BTF_KIND_ARRAY << 24, 0);
		bt_u32(w, b + 1);
		bt_u32(w, b + 2);
		bt_u32(w, R_LEN(l->nimg) / 8);
		bt_type(w, NULL, BTF_KIND_PTR << 24, id);
		p = id + 2;
		if (l->uses_ctx && c->env->ctx_mem) {
			/* u8 (*ctx)[ctx_size]: PTR_TO_MEM of the bytes it accesses */
			bt_type(w, "u8", BTF_KIND_INT << 24, 1);
			bt_u32(w, 8);
			bt_type(w, NULL, BTF_KIND_ARRAY << 24, 0);
			bt_u32(w, id + 2);
			bt_u32(w, b + 2);
			bt_u32(w, l->ctx_size);
			bt_type(w, NULL, BTF_KIND_PTR << 24, id + 3);
			ctx_ptr = id + 4;
			p = id + 5;
		} else if (l->uses_ctx) {
			/* struct <ctx_struct> *ctx: 6.1 matches the name only */
			bt_type(w, c->env->ctx_struct, BTF_KIND_STRUCT << 24, 0);
			bt_type(w, NULL, BTF_KIND_PTR << 24, id + 2);
			ctx_ptr = id + 3;
			p = id + 4;
		}
		bt_type(w, NULL, BTF_KIND_FUNC_PROTO << 24 | (ctx_ptr ? 2 : 1), b + 2);
		bt_u32(w, bt_str(w, "frame"));
		bt_u32(w, id + 1);
		if (ctx_ptr) {
			bt_u32(w, bt_str(w, "ctx"));
			bt_u32(w, ctx_ptr);
		}
		if (c->round)
			snprintf(name, sizeof(name), "bpfa_loop_cb_%u_%u", c->round, k);
		else
			snprintf(name, sizeof(name), "bpfa_loop_cb_%u", k);
		bt_type(w, name, BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, b + 3);
		if (c->round)
			snprintf(name, sizeof(name), "bpfa_loop_body_%u_%u", c->round, k);
		else
			snprintf(name, sizeof(name), "bpfa_loop_body_%u", k);
		bt_type(w, name, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, p);
		l->btf_cb = p + 1;
	}
	return b + 4;
}

/* Bytes of the type at types[pos, len) of a validated blob; 0 if it cannot be walked. */
static __u32 btf_type_len(const __u8 *types, __u32 len, __u32 pos)
{
	const struct btf_type *t = (const void *)(types + pos);
	__u32 vlen, add;

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
	return sizeof(*t) + add;
}

/* Number of types in a blob the kernel already validated; 0 if it cannot be walked. */
static __u32 btf_count_types(const __u8 *types, __u32 len, __u32 *offs, __u32 cap)
{
	__u32 pos = 0, n = 0, add;

	while (pos < len) {
		if (offs && n < cap)
			offs[n] = pos;
		add = btf_type_len(types, len, pos);
		if (!add)
			return 0;
		pos += add;
		n++;
	}
	return n;
}

bool bpfa_loops_func_name_at(const struct bpfa_loops_result *res, struct bpfa_btf_cursor *cur,
			     __u32 type_id, char *buf, __u32 size)
{
	const __u8 *types, *strs;
	struct btf_header h;
	__u32 pos = 0, id = 1, add, off, n;
	const struct btf_type *t;

	if (!res->btf || res->btf_size < sizeof(h) || !size || !type_id)
		return false;
	memcpy(&h, res->btf, sizeof(h));
	if (h.hdr_len < sizeof(h) || h.hdr_len > res->btf_size ||
	    (__u64)h.type_off + h.type_len > res->btf_size - h.hdr_len ||
	    (__u64)h.str_off + h.str_len > res->btf_size - h.hdr_len)
		return false;
	types = (const __u8 *)res->btf + h.hdr_len + h.type_off;
	strs = (const __u8 *)res->btf + h.hdr_len + h.str_off;
	/* From where the last call stopped when that is not past type_id. */
	if (cur->id && cur->id <= type_id && cur->pos < h.type_len) {
		id = cur->id;
		pos = cur->pos;
	}
	for (; id < type_id; id++) {
		add = btf_type_len(types, h.type_len, pos);
		if (!add || pos + add >= h.type_len)
			return false;
		pos += add;
	}
	cur->id = id;
	cur->pos = pos;
	if (!btf_type_len(types, h.type_len, pos))
		return false;
	t = (const void *)(types + pos);
	off = t->name_off;
	if (BTF_INFO_KIND(t->info) != BTF_KIND_FUNC || off >= h.str_len)
		return false;
	for (n = 0; off + n < h.str_len && strs[off + n] && n + 1 < size; n++)
		buf[n] = (char)strs[off + n];
	buf[n] = '\0';
	return n;
}

static const void *rec(const void *base, __u32 i, __u32 size)
{
	return (const __u8 *)base + (size_t)i * size;
}

/* Where lowered insn i (not in a loop, or its main copy) ended up. */
static __u32 main_pos(const struct pctx *c, __u32 i)
{
	/* A function start's line covers its prologue. */
	return c->lpos[c->substart[i] ? L_ENTRY(c, i) : L_INSN(c, i)];
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
		    (c->inloop[off] && off != c->loops[c->inloop[off] - 1].e))
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
			if (off >= c->len || c->second[off] || !member(c, l, off))
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
		ntypes = btf_count_types(otypes, otlen, NULL, 0);
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
			f->insn_off = f->insn_off < c->len && c->substart[f->insn_off] ?
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
		res->func_info[nf + 2 * k].type_id = c->loops[k].btf_cb;
		res->func_info[nf + 2 * k + 1].insn_off = c->loops[k].body_pos;
		res->func_info[nf + 2 * k + 1].type_id = c->loops[k].btf_cb + 1;
	}
	res->func_info_cnt = nf + 2 * c->nloops;
	return build_line_info(c);
}

/* ---- driver ---- */

static int emit(struct pctx *c)
{
	struct loop *l;
	struct func *f;
	__u32 i, k, j;

	/* Labels: L_INSN, L_BODY, L_ENTRY (0..3len-1), then the loops'. */
	for (i = 0; i < 3 * c->len; i++)
		new_label(c);
	for (k = 0; k < c->nloops; k++) {
		l = &c->loops[k];
		l->cb_lbl = new_label(c);
		l->body_lbl = new_label(c);
	}
	if (c->err)
		return c->err;
	c->mark = BPFA_SRC_ADDED;
	for (k = 0; k < c->nfn && !c->err; k++) {
		f = &c->funcs[k];
		c->cur = f->start;
		set_label(c, L_ENTRY(c, f->start));
		/* The prologue: the context (main) and the may_goto budget. */
		if (f->has_mg && f->is_main)
			put(c, STX_DW(BPF_REG_10, BPF_REG_1, (__s16)OFF_CTX(f->depth, f->imax)));
		for (j = 1; f->has_mg && !f->is_main && j <= 5; j++)
			if (f->argsave & rbit((__u8)j))
				put(c, STX_DW(BPF_REG_10, (__u8)j,
					      (__s16)OFF_ARG(f->depth, f->imax, j)));
		if (f->has_mg && !f->ext)
			put(c, ST_DW(BPF_REG_10, (__s16)OFF_BUDGET(f->depth), (__s32)BPFA_MAX_LOOPS));
		for (i = f->start; i < f->end && !c->err; i++) {
			if (c->second[i])
				continue;
			c->cur = i;
			set_label(c, L_INSN(c, i));
			if (c->inloop[i]) {
				/* The driver stands for the loop at E; nothing else enters. */
				l = &c->loops[c->inloop[i] - 1];
				if (i == l->e)
					put_driver(c, l);
				continue;
			}
			if (bpfa_is_may_goto(&c->in[i]))
				put_may_goto(c, i, f->ext ? f->ext : OFF_BUDGET(f->depth),
					     L_INSN(c, target_of(c, i)));
			else if (bpfa_is_iter_mark(&c->in[i]))	/* next() outside a loop */
				put_fix(c, JA_I(), L_INSN(c, target_of(c, i)), FX_OFF);
			else
				put_insn(c, i, bpfa_is_jump(&c->in[i]) ? L_INSN(c, target_of(c, i)) : 0);
		}
	}
	for (k = 0; k < c->nloops && !c->err; k++) {
		l = &c->loops[k];
		/* The generated functions stand for the loop at its head. */
		c->cur = l->h;
		c->mark = BPFA_SRC_ADDED | BPFA_SRC_CB | loop_kind(c, l);
		l->cb_pos = c->n;
		put_cb(c, l);
		l->body_pos = c->n;
		put_body(c, l);
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
	c->clive = palloc(c, len, sizeof(*c->clive));
	c->llive = palloc(c, len, sizeof(*c->llive));
	c->ty = palloc(c, (size_t)len * NREGS, sizeof(*c->ty));
	c->work = palloc(c, len, sizeof(*c->work));
	c->dfs = palloc(c, len, 1);
	c->uvis = palloc(c, len, 1);
	c->scc = palloc(c, len, sizeof(*c->scc));
	c->tlow = palloc(c, len, sizeof(*c->tlow));
	c->tstack = palloc(c, len, sizeof(*c->tstack));
	c->tcall = palloc(c, len, sizeof(*c->tcall));
	c->fn = palloc(c, len, sizeof(*c->fn));
	c->funcs = palloc(c, len, sizeof(*c->funcs));
	if (!c->second || !c->substart || !c->vis || !c->inloop || !c->live || !c->clive || !c->llive ||
	    !c->ty || !c->work || !c->dfs || !c->uvis || !c->fn || !c->funcs || !c->scc || !c->tlow ||
	    !c->tstack || !c->tcall)
		return perr(c, -ENOMEM, 0, "out of memory");
	if (structure(c) || types(c) || preds(c))
		return c->err;
	liveness(c, c->live, 0, len - 1, NULL);
	/* After liveness (which types do not change): it asks what is live at joins. */
	if (ctx_slots(c))
		return c->err;
	if (stack_depth(c) || sccs(c, NULL) || find_loops(c) || bounds(c))
		return c->err;
	return emit(c);
}

/* For the next round: the budget slot of each body (and body kept) by its output insn. */
static int next_ext(struct pctx *c)
{
	__u32 k;

	c->oext = palloc(c, c->n, sizeof(*c->oext));
	if (!c->oext)
		return perr(c, -ENOMEM, 0, "out of memory");
	for (k = 0; k < c->nloops; k++)
		c->oext[c->loops[k].body_pos] = (__s16)BB_BUDGET(c->loops[k].td);
	for (k = 0; k < c->nfn; k++)
		if (c->funcs[k].ext)
			c->oext[c->lpos[L_ENTRY(c, c->funcs[k].start)]] = c->funcs[k].ext;
	return 0;
}

static int one_round(const struct bpfa_loops_env *env, const struct bpf_insn *insns, __u32 len,
		     struct bpfa_loops_result *res, const __u32 *pre, const __s16 *ext,
		     __u32 round, __u32 **osrc, __s16 **oext)
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
	c->pre = pre;
	c->pre_len = len;
	c->ext = ext;
	c->round = round;
	if (!run(c, len))
		next_ext(c);
	pfree(c, c->second);
	pfree(c, c->substart);
	pfree(c, c->vis);
	pfree(c, c->inloop);
	pfree(c, c->live);
	pfree(c, c->clive);
	pfree(c, c->llive);
	pfree(c, c->poff);
	pfree(c, c->plist);
	pfree(c, c->lwork);
	pfree(c, c->lq);
	pfree(c, c->ty);
	pfree(c, c->sctx);
	pfree(c, c->work);
	pfree(c, c->dfs);
	pfree(c, c->uvis);
	pfree(c, c->ub);
	pfree(c, c->btf_offs);
	pfree(c, c->scc);
	pfree(c, c->tlow);
	pfree(c, c->tstack);
	pfree(c, c->tcall);
	pfree(c, c->fn);
	pfree(c, c->funcs);
	pfree(c, c->fx);
	pfree(c, c->lpos);
	err = c->err;
	if (err) {
		pfree(c, c->o);
		pfree(c, c->osrc);
		pfree(c, c->oext);
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
		*osrc = c->osrc;
		*oext = c->oext;
	}
	env->free(env->ctx, c);
	return err;
}

/*
 * The refusal of a loop nested deeper than the rounds go: named by the
 * first mark left (a may_goto or a bpf_for's next()) and its original insn.
 */
static int too_deep(const struct bpfa_loops_env *env, struct bpfa_loops_result *res,
		    const __u32 *pre)
{
	const char *what = MG;
	__u32 k, i = 0, lo = 0, hi = env->old_len;

	for (k = 0; k < res->len; k++) {
		if (bpfa_is_ldimm64(&res->insns[k])) {
			k++;
			continue;
		}
		if (!bpfa_is_loop_mark(&res->insns[k]))
			continue;
		if (bpfa_is_iter_mark(&res->insns[k]))
			what = "bpf_for/bpf_repeat ";
		i = pre ? pre[k] & BPFA_SRC_IDX_MASK : k;
		break;
	}
	/* The largest original insn whose lowered sequence starts at or before i. */
	while (env->new_idx && lo < hi) {
		__u32 mid = lo + (hi - lo + 1) / 2;

		if (env->new_idx[mid] <= i)
			lo = mid;
		else
			hi = mid - 1;
	}
	bpfa_loops_free(env, res);
	return set_msg(res, env->new_idx ? lo : i,
		       "%sloops nested more than %u deep are not supported", what,
		       BPFA_LOOPS_MAX_DEPTH);
}

/*
 * Round 0 outlines the outermost loops; a nested loop's may_goto stays in
 * its outer body, and the next round, run on the output (with the BTF,
 * func_info and line_info the round made), outlines it inside that body,
 * sharing the body's budget slot.  Errors name original insns through the
 * composed maps.
 */
int bpfa_loops(const struct bpfa_loops_env *env, const struct bpf_insn *insns, __u32 len,
	       struct bpfa_loops_result *res)
{
	struct bpfa_loops_result nres;
	struct bpfa_loops_env e2;
	__u32 *pre = NULL, *osrc = NULL, round, j;
	__s16 *ext = NULL, *oext = NULL;
	int err;

	err = one_round(env, insns, len, res, NULL, NULL, 0, &pre, &ext);
	for (round = 1; !err && bpfa_loops_needed(res->insns, res->len); round++) {
		if (round == BPFA_LOOPS_MAX_DEPTH) {
			err = too_deep(env, res, pre);
			break;
		}
		e2 = *env;
		e2.has_btf = true;
		e2.btf = res->btf;
		e2.btf_size = res->btf_size;
		e2.func_info = res->func_info;
		e2.func_info_cnt = res->func_info_cnt;
		e2.func_info_rec_size = sizeof(struct bpf_func_info);
		e2.line_info = res->line_info;
		e2.line_info_cnt = res->line_info_cnt;
		e2.line_info_rec_size = sizeof(struct bpf_line_info);
		e2.nr_cpu_ids = 0;	/* already bounded */
		err = one_round(&e2, res->insns, res->len, &nres, pre, ext, round, &osrc, &oext);
		bpfa_loops_free(env, res);
		if (err) {
			*res = nres;
			break;
		}
		/* output -> lowered insn; flags of every round kept */
		for (j = 0; j < nres.len; j++) {
			__u32 idx = osrc[j] & BPFA_SRC_IDX_MASK;

			osrc[j] = (osrc[j] & ~BPFA_SRC_IDX_MASK) |
				  (idx < res->len ? pre[idx] : 0);
		}
		nres.loops += res->loops;
		*res = nres;
		env->free(env->ctx, pre);
		env->free(env->ctx, ext);
		pre = osrc;
		ext = oext;
	}
	if (!err)
		res->src = pre;
	else if (pre)
		env->free(env->ctx, pre);
	if (ext)
		env->free(env->ctx, ext);
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
	if (res->src)
		env->free(env->ctx, res->src);
	res->src = NULL;
	res->line_info = NULL;
	res->insns = NULL;
	res->btf = NULL;
	res->func_info = NULL;
}

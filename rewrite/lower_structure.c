// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the lowering's view of the program's structure
 * (lower_internal.h): ld_imm64 pairs, block leaders, subprograms (bpf-to-bpf
 * call and callback targets), the call sites of each, and the refusals of a
 * program whose jumps or calls leave it, land inside an ld_imm64, cross into
 * another subprogram, or run on past the end of a subprogram, and of one
 * with a may_goto loop that never ends.
 */
#include "lower_internal.h"

static int check_target(struct lctx *c, __u32 i, __s64 t)
{
	if (t < 0 || t >= c->len)
		return lower_err(c, -EINVAL, i, "jump or call to insn %lld is out of the program",
				 (long long)t);
	if (c->fl[t] & F_SECOND)
		return lower_err(c, -EINVAL, i,
				 "jump or call into the middle of ld_imm64 at insn %lld",
				 (long long)t - 1);
	return 0;
}

/*
 * Where the path from i goes once may_goto's budget is spent, when that is
 * decided: every may_goto then jumps, ja jumps, anything else but a
 * conditional jump, a call or an exit falls through.  -1 where it is not.
 */
static __s64 spent_next(const struct bpf_insn *in, __u32 i)
{
	const struct bpf_insn *insn = &in[i];

	if (insn->code == BPFA_MAY_GOTO_CODE || bpfa_is_ja(insn))
		return bpfa_jump_target(in, i);
	/* A conditional jump, a call, an exit. */
	if (BPF_CLASS(insn->code) == BPF_JMP || BPF_CLASS(insn->code) == BPF_JMP32)
		return -1;
	return bpfa_next(in, i);
}

/*
 * Once may_goto's budget is spent, a path on which nothing is left to
 * decide and that comes back on itself never ends (a may_goto jumping to
 * itself; a may_goto whose target runs straight back into it).  Upstream's
 * verifier finds such a loop ("infinite loop detected") and refuses the
 * program; outlined by the loop pass it would stop after bpf_loop()'s
 * bound, so it is refused here.  Each instruction is walked once: seen 1
 * while on the current walk, 2 once known to end.
 */
static int check_spent_loops(struct lctx *c)
{
	const struct bpf_insn *in = c->in;
	__u8 *seen = NULL;
	__u32 i, j, m;
	__s64 t;

	for (i = 0; i < c->len; i = bpfa_next(in, i)) {
		if (in[i].code != BPFA_MAY_GOTO_CODE)
			continue;
		if (!seen) {
			seen = lower_zalloc(c, c->len, 1);
			if (!seen)
				return lower_err(c, -ENOMEM, 0, "out of memory");
		}
		for (t = bpfa_jump_target(in, i); t >= 0 && !seen[t]; t = spent_next(in, (__u32)t))
			seen[t] = 1;
		if (t >= 0 && seen[t] == 1) {
			/* Name a may_goto of the loop, as upstream does. */
			for (m = j = (__u32)t; ; ) {
				if (in[j].code == BPFA_MAY_GOTO_CODE) {
					m = j;
					break;
				}
				j = (__u32)spent_next(in, j);
				if (j == (__u32)t)
					break;
			}
			lower_err(c, -EINVAL, m,
				  "infinite loop detected at insn %u (once may_goto's budget is spent, the loop never ends)",
				  m);
			break;
		}
		for (t = bpfa_jump_target(in, i); t >= 0 && seen[t] == 1; t = spent_next(in, (__u32)t))
			seen[t] = 2;
	}
	if (seen)
		c->env->free(c->env->ctx, seen);
	return c->err;
}

int lower_structure(struct lctx *c)
{
	const struct bpf_insn *in = c->in;
	__u32 i, t, b, s, n = c->len, next;
	__u8 *fl = c->fl;
	__s64 bad;

	bad = bpfa_mark_ldimm64(in, n, fl, F_SECOND, true);
	if (bad >= 0)
		return lower_err(c, -EINVAL, (__u32)bad, "invalid ld_imm64");
	fl[0] |= F_LEADER | F_SUBSTART;
	for (i = 0; i < n; i++) {
		const struct bpf_insn *insn = &in[i];

		if (fl[i] & F_SECOND)
			continue;
		if (lower_classify(c, i))
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
	c->bstart = lower_zalloc(c, c->nblk, sizeof(__u32));
	c->bsub = lower_zalloc(c, c->nblk, sizeof(__u32));
	c->bst = lower_zalloc(c, c->nblk, sizeof(struct lstate));
	c->work = lower_zalloc(c, c->nblk, sizeof(__u32));
	c->inq = lower_zalloc(c, c->nblk, 1);
	c->sentry = lower_zalloc(c, c->nsub, sizeof(__u32));
	c->sret = lower_zalloc(c, c->nsub, 1);
	c->coff = lower_zalloc(c, c->nsub + 1, sizeof(__u32));
	if (!c->bstart || !c->bsub || !c->bst || !c->work || !c->inq || !c->sentry || !c->sret ||
	    !c->coff)
		return lower_err(c, -ENOMEM, 0, "out of memory");
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
				return lower_err(c, -EINVAL, i,
						 "jump to insn %u in another subprogram", t);
			if (bpfa_is_ja(insn))
				continue;
		}
		if (bpfa_is_exit(insn))
			continue;
		if (next >= n || (fl[next] & F_SUBSTART))
			return lower_err(c, -EINVAL, i,
					 "falls through past the end of its subprogram");
		if (bpfa_is_pcall(insn))
			c->coff[c->bsub[c->blk[i + 1 + insn->imm]]]++;
	}
	for (s = 0, t = 0; s <= c->nsub; s++) {
		t += c->coff[s];
		c->coff[s] = t;		/* end of s's call sites, start after filling */
	}
	c->cblk = lower_zalloc(c, t, sizeof(__u32));
	if (!c->cblk)
		return lower_err(c, -ENOMEM, 0, "out of memory");
	for (i = 0; i < n; i = next) {
		next = bpfa_next(in, i);
		if (bpfa_is_pcall(&in[i])) {
			s = c->bsub[c->blk[i + 1 + in[i].imm]];
			c->cblk[--c->coff[s]] = c->blk[i];
		}
	}
	return check_spent_loops(c);
}

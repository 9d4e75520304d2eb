// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the lowering (see lower.h, docs/PLACEHOLDERS.md, docs/DESIGN.md "Lowering").
 *
 * 1. Structure (lower_structure.c): ld_imm64 pairs, subprograms (bpf-to-bpf
 *    call and callback targets), jump targets, basic blocks; the
 *    state-independent rewrites (casts, arena ld_imm64, arena kfuncs) are
 *    classified on the way (lower_classify.c).
 * 2. Types (lower_dataflow.c): a forward dataflow to a fixpoint.  Abstract
 *    value per register r0-r9 and per 8-byte slot of the current frame: NONE,
 *    ARENA, MAP (the arena map) or MIXED.  States are stored only at block
 *    starts (24 bytes each); a block is recomputed from its start.
 *    Subprograms are context-insensitive: a callee's entry r1-r5 is the join
 *    of its callers', a call's r0 the join of the callee's exits.  "FP" bits
 *    track registers that may point into the current frame, so that stores
 *    through them (or, once a stack pointer was stored somewhere, through any
 *    non-arena pointer) and calls that get them weaken every slot: a slot is
 *    ARENA only if it is on every path (an arena pointer seen as NONE only
 *    makes the verifier reject the raw access; the reverse would be a guess).
 *    Then, in a program calling bpf_iter_num_*, the iterators' rules
 *    (lower_iter_state.c): upstream refuses their misuse, so must this.
 * 3. A final pass over every reached block decides the state-dependent
 *    rewrites and reports errors in instruction order (lower_dataflow.c); then
 *    the program is emitted with jump, call and callback offsets fixed
 *    (lower_emit.c, with lower_placeholders.c and lower_iter.c).
 *
 * This file: the entry point, the context's memory and the error message.
 */
#include "lower_internal.h"

int lower_err(struct lctx *c, int err, __u32 idx, const char *fmt, ...)
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

void *lower_zalloc(struct lctx *c, size_t n, size_t size)
{
	return bpfa_zalloc_n(c->env->zalloc, c->env->ctx, n, size);
}

static void lfree(struct lctx *c, void *p)
{
	if (p)
		c->env->free(c->env->ctx, p);
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
		return lower_err(&c, -EINVAL, 0, "empty program");
	if (len > BPFA_MAX_INSNS)
		return lower_err(&c, -E2BIG, 0, "program has more than %u insns", BPFA_MAX_INSNS);
	c.fl = lower_zalloc(&c, len, 1);
	c.act = lower_zalloc(&c, len, 1);
	c.blk = lower_zalloc(&c, len, sizeof(__u32));
	if (!c.fl || !c.act || !c.blk)
		lower_err(&c, -ENOMEM, 0, "out of memory");
	if (!c.err && !lower_structure(&c) && !lower_dataflow(&c) && !lower_iter_state(&c))
		lower_emit(&c);
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

// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the lowering (rewrite/lower.c) and the raise (rewrite/raise.c).
 *
 * Input: ENV_BYTES of environment, then instructions (8 bytes each; a
 * trailing partial instruction is ignored).
 *   env[0]      flags: bit0 no_user_conv, bit1 sleepable, bit2 classifier lies
 *               (returns ARENA_MAP for MAP_VALUE ld_imm64 and vice versa),
 *               bit3 also raise the raw input, bit4 the loop pass sees BTF
 *   env[1]      the arena map's fd (an ld_imm64 whose imm equals it names the arena)
 *   env[2]      the companion fd (the lowering's MAP_VALUE imm)
 *   env[3]      BTF id of bpf_arena_alloc_pages, env[4] of bpf_arena_free_pages
 *   env[5..7]   user_vm_start bits 32..55 (the low 32 bits are 0 as on 6.1: 4 GiB aligned)
 *   env[8..9]   arena size in pages
 *
 * Invariants checked (abort() on violation, libFuzzer reports the input):
 *  - lower never crashes, never reads/writes out of bounds (ASan), no UB (UBSan),
 *    no leak (LSan), returns 0 or -EINVAL/-E2BIG/-ENOMEM with a "bpf_arena: insn"
 *    message;
 *  - on success: len == new_idx[orig len], new_idx is non-decreasing, new_idx[0] == 0,
 *    the output does not end inside an ld_imm64, every jump/call/callback target is in
 *    range and not the second half of an ld_imm64, no output insn names AX unless the
 *    input did;
 *  - raise(lower(p)) (after the verifier's ld_imm64 conversion) returns 0 or -EINVAL
 *    with a message; on 0 it raised at least res.placeholders forms; on -EINVAL it
 *    changed nothing;
 *  - a second raise raises 0 and changes nothing (idempotent);
 *  - when the lowered program has may_goto, the loop pass (rewrite/loops.c) returns 0 or
 *    -EINVAL/-E2BIG/-ENOMEM with a message and nothing allocated; on 0 no may_goto
 *    is left, every jump/call/callback target is in range and not the second half
 *    of an ld_imm64, func_info starts at 0, is increasing and names insns, the BTF
 *    has a header, and the raise of its output keeps the raise invariants above.
 *  - the optimised raise (env.targets set) fails and succeeds exactly like the
 *    plain one, and differs from it only in what check_opt() proves safe: a
 *    dropped `wS = wS` where rS is zero-extended already, a dropped base
 *    materialisation where AX already holds that base (rewrite/raise.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "loops.h"
#include "raise.h"

#define ENV_BYTES	10
#define MAX_FUZZ_INSNS	4096
#define COMPANION_VALUE	0xffff888812345000ull
#define OTHER_VALUE	0xffff888800000000ull
#define KERN_VM_START	0xffffc90100000000ull

#define CHECK(cond, ...)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "INVARIANT: %s: ", #cond);	\
			fprintf(stderr, __VA_ARGS__);			\
			fprintf(stderr, "\n");				\
			abort();					\
		}							\
	} while (0)

struct fenv {
	uint8_t flags, arena_fd, companion_fd, kf_alloc, kf_free;
};

static void *f_zalloc(void *ctx, size_t size)
{
	(void)ctx;
	if (size > (64u << 20))		/* the kernel's kvzalloc would fail too */
		return NULL;
	return calloc(1, size ? size : 1);
}

static void f_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static enum bpfa_ld_kind f_classify_ldimm64(void *ctx, const struct bpf_insn *insn)
{
	const struct fenv *e = ctx;
	bool val = insn->src_reg == BPF_PSEUDO_MAP_VALUE || insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE;

	if (insn->imm != e->arena_fd)
		return BPFA_LD_OTHER;
	if (e->flags & 4)
		val = !val;
	return val ? BPFA_LD_ARENA_VALUE : BPFA_LD_ARENA_MAP;
}

static enum bpfa_kf_kind f_classify_kfunc(void *ctx, const struct bpf_insn *insn)
{
	const struct fenv *e = ctx;

	if (insn->off <= 0)
		return BPFA_KF_OTHER;
	if (insn->imm == e->kf_alloc)
		return BPFA_KF_ALLOC;
	if (insn->imm == e->kf_free)
		return BPFA_KF_FREE;
	/* bpf_iter_num_new/next/destroy (inlined, their loops outlined). */
	if (insn->imm == e->kf_free + 1)
		return BPFA_KF_ITER_NEW;
	if (insn->imm == e->kf_free + 2)
		return BPFA_KF_ITER_NEXT;
	if (insn->imm == e->kf_free + 3)
		return BPFA_KF_ITER_DESTROY;
	return BPFA_KF_OTHER;
}

static bool is_ld64(const struct bpf_insn *p)
{
	return p->code == (BPF_LD | BPF_IMM | BPF_DW);
}

/* Marks the second halves of ld_imm64 in out[0..n); false if one is cut off. */
static bool mark_second(const struct bpf_insn *p, uint32_t n, uint8_t *second)
{
	uint32_t i;

	memset(second, 0, n);
	for (i = 0; i < n; i++) {
		if (!is_ld64(&p[i]))
			continue;
		if (i + 1 >= n)
			return false;
		second[++i] = 1;
	}
	return true;
}

/* Does the input name a register above r10 (AX or invalid)?  The verifier rejects it. */
static bool names_hidden_reg(const struct bpf_insn *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (p[i].dst_reg > 10 || p[i].src_reg > 10)
			return true;
		if (is_ld64(&p[i]))
			i++;
	}
	return false;
}

static void check_lowered(const struct bpfa_lower_result *r, uint32_t in_len, bool in_has_ax)
{
	uint8_t *second = malloc(r->len + 1);
	uint32_t i;

	CHECK(r->insns && r->new_idx && r->len, "result not set");
	CHECK(r->new_idx[in_len] == r->len, "new_idx[%u]=%u len=%u", in_len, r->new_idx[in_len],
	      r->len);
	CHECK(r->new_idx[0] == 0, "new_idx[0]=%u", r->new_idx[0]);
	for (i = 0; i < in_len; i++)
		CHECK(r->new_idx[i] <= r->new_idx[i + 1], "new_idx not monotonic at %u", i);
	CHECK(mark_second(r->insns, r->len, second), "output ends inside an ld_imm64");
	for (i = 0; i < r->len; i++) {
		const struct bpf_insn *p = &r->insns[i];
		int64_t t;

		if (second[i])
			continue;
		/* The lowering passes unknown registers on (the verifier refuses them). */
		CHECK(in_has_ax || (p->dst_reg != BPFA_REG_AX && p->src_reg != BPFA_REG_AX),
		      "output insn %u names AX", i);
		if (bpfa_is_jump(p))
			t = (int64_t)i + 1 + bpfa_jump_disp(p);
		else if (p->code == (BPF_JMP | BPF_CALL) && p->src_reg == BPF_PSEUDO_CALL)
			t = (int64_t)i + 1 + p->imm;
		else if (is_ld64(p) && p->src_reg == BPF_PSEUDO_FUNC)
			t = (int64_t)i + 1 + p->imm;
		else
			continue;
		CHECK(t >= 0 && t < r->len, "insn %u: target %lld out of [0,%u)", i, (long long)t,
		      r->len);
		CHECK(!second[t], "insn %u: target %lld inside an ld_imm64", i, (long long)t);
	}
	free(second);
}

/* What bpf_check() leaves in ld_imm64 by JIT time (convert_pseudo_ld_imm64). */
static void verifier_convert(struct bpf_insn *p, uint32_t n, const struct fenv *e)
{
	uint32_t i;

	for (i = 0; i + 1 < n; i++) {
		uint64_t v;

		if (!is_ld64(&p[i]))
			continue;
		if (p[i].src_reg == BPF_PSEUDO_MAP_VALUE || p[i].src_reg == BPF_PSEUDO_MAP_FD) {
			v = (p[i].imm == e->companion_fd ? COMPANION_VALUE : OTHER_VALUE) +
			    (uint32_t)p[i + 1].imm;
			p[i].imm = (int32_t)(uint32_t)v;
			p[i + 1].imm = (int32_t)(uint32_t)(v >> 32);
			p[i].src_reg = 0;
		}
		i++;
	}
}

/* Marks the second halves of ld_imm64 in p[0..n), a cut-off one included. */
static void mark_second_any(const struct bpf_insn *p, uint32_t n, uint8_t *second)
{
	uint32_t i;

	memset(second, 0, n);
	for (i = 0; i + 1 < n; i++)
		if (is_ld64(&p[i]))
			second[++i] = 1;
}

static bool is_ja0(const struct bpf_insn *p)
{
	return p->code == (BPF_JMP | BPF_JA) && !p->dst_reg && !p->src_reg && !p->off && !p->imm;
}

/* Might p write register r (conservatively; jumps and calls: yes)? */
static bool writes_reg(const struct bpf_insn *p, uint8_t r)
{
	uint8_t cls = BPF_CLASS(p->code);

	if (is_ja0(p))
		return false;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
	case BPF_LDX:
		return p->dst_reg == r;
	case BPF_LD:	/* ld_imm64, or LD_ABS/IND (clobber r0-r5) */
		return p->dst_reg == r || BPF_MODE(p->code) != BPF_IMM;
	case BPF_ST:
		return false;
	case BPF_STX:
		if (BPF_MODE(p->code) != BPF_ATOMIC)
			return false;
		if (p->imm == BPF_CMPXCHG)
			return r == 0;
		return (p->imm & BPF_FETCH) && p->src_reg == r;
	default:	/* a jump writes nothing (landing points are checked apart) */
		return BPF_OP(p->code) == BPF_CALL || BPF_OP(p->code) == BPF_EXIT;
	}
}

/*
 * Is r zero-extended in the machine register just before opt[k]?  Follows the
 * block back to the last write of r (no entry point may lie in between, and
 * there must be a write) and accepts only what 6.1's x86 JIT zero-extends,
 * argued from do_jit(), not from rewrite/raise.c: any 32-bit ALU op with off 0
 * from BPF_ADD to BPF_ARSH (not BPF_END: le64/be64 are 64-bit; 0xe0/0xf0 are
 * no ops); an LDX BPF_MEM of size B/H/W (movzx,
 * mov r32); a 64-bit copy `rX = rY` (off 0, imm 0) of a register that is
 * itself zero-extended there (checked the same way, further back).
 */
static void check_zext(const struct bpf_insn *opt, const uint8_t *osec, const uint8_t *tgt,
		       uint32_t k, uint8_t r, uint32_t form)
{
	const struct bpf_insn *q;
	uint32_t j;

	CHECK(k > 0, "insn %u: zext of r%u dropped at the entry", form, r);
	for (j = k; j-- > 0;) {
		CHECK(!tgt[j + 1], "insn %u: zext of r%u dropped across a jump target %u", form, r,
		      j + 1);
		if (osec[j])
			continue;	/* second half of an ld_imm64: data */
		if (writes_reg(&opt[j], r))
			break;
		CHECK(j > 0, "insn %u: zext of r%u dropped, no write before", form, r);
	}
	q = &opt[j];
	if (q->code == (BPF_ALU64 | BPF_MOV | BPF_X) && !q->off && !q->imm && q->dst_reg == r &&
	    q->src_reg <= 10) {
		check_zext(opt, osec, tgt, j, q->src_reg, form);
		return;
	}
	CHECK((BPF_CLASS(q->code) == BPF_ALU && BPF_OP(q->code) <= BPF_ARSH && !q->off &&
	       q->dst_reg == r) ||
	      q->code == (BPF_LDX | BPF_MEM | BPF_W) || q->code == (BPF_LDX | BPF_MEM | BPF_H) ||
	      q->code == (BPF_LDX | BPF_MEM | BPF_B),
	      "insn %u: zext of r%u dropped after insn %u (code %02x off %d)", form, r, j, q->code,
	      q->off);
}

/*
 * May an AX chain run through q, which must not write r?  Argued from 6.1's
 * do_jit() (arch/x86/net/bpf_jit_comp.c), not from rewrite/raise.c: what the
 * JIT emits for it writes no r10 (AX), and constant blinding, which runs
 * after the raise and rewrites every ALU and conditional jump with an
 * immediate through AX, leaves it alone.  So: an ALU/ALU64 ADD, SUB, AND,
 * OR, XOR or MOV with off 0 (a register source, or an immediate without
 * blinding); a conditional JMP/JMP32 (op JEQ..JSLE but JA, CALL, EXIT; the
 * same rule for an immediate); an LDX or STX BPF_MEM.  None naming AX.
 */
static bool chain_neutral(const struct bpfa_raise_env *renv, const struct bpf_insn *q, uint8_t r)
{
	uint8_t cls = BPF_CLASS(q->code), op = BPF_OP(q->code);
	bool imm_ok = BPF_SRC(q->code) == BPF_X || !renv->blinding;

	if (q->dst_reg == BPFA_REG_AX || q->src_reg == BPFA_REG_AX || writes_reg(q, r))
		return false;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		return !q->off && imm_ok &&
		       (op == BPF_ADD || op == BPF_SUB || op == BPF_AND || op == BPF_OR ||
			op == BPF_XOR || op == BPF_MOV);
	case BPF_JMP:
	case BPF_JMP32:
		return imm_ok && op != BPF_JA && op != BPF_CALL && op != BPF_EXIT && op <= BPF_JSLE;
	case BPF_LDX:
	case BPF_STX:
		return BPF_MODE(q->code) == BPF_MEM;
	default:
		return false;
	}
}

/*
 * Independent check of the raise's optimisations (rewrite/raise.c, OPTIMISATIONS):
 * opt may differ from full (the same input raised without them) only by `ja +0`
 * in place of a kept `wS = wS` or of the `AX = kern; AX += rS` slots, and
 *  - at every `AX += rS` left in opt whose `wS = wS` was dropped, the last
 *    write to S before it in the same block is a zero-extending one;
 *  - every access whose `AX += rS` was dropped follows, with only `ja +0`,
 *    AX-based accesses and chain_neutral() instructions (none writing S or
 *    AX) between, an `AX = kern; AX += rS` of the same S, at most
 *    BPFA_AX_CHAIN_MAX accesses and BPFA_AX_BETWEEN_MAX neutral
 *    instructions per chain, and no jump lands anywhere in between.
 */
static void check_opt(const struct bpfa_raise_env *renv, const struct bpf_insn *in,
		      const struct bpf_insn *full, const struct bpf_insn *opt, uint32_t n)
{
	uint8_t *tgt = calloc(n + 1, 1), *isec = calloc(n + 1, 1), *osec = calloc(n + 1, 1);
	uint32_t i, j, k;

	/*
	 * Entry points of the program before the raise, with 6.1's own
	 * definitions (kernel/bpf/verifier.c): index 0; the target of every
	 * BPF_JMP/BPF_JMP32 instruction but CALL and EXIT (off; imm for
	 * BPF_JMP32 | BPF_JA, "gotol"); bpf_pseudo_call() (BPF_JMP | BPF_CALL
	 * only: BPF_JMP32 | BPF_CALL is refused by do_check(), "BPF_CALL uses
	 * reserved fields", or removed as dead code, so it is no edge of a
	 * program that reaches the JIT) and bpf_pseudo_func() (ld_imm64,
	 * src BPF_PSEUDO_FUNC).  The second half of an ld_imm64 is data, never an
	 * instruction (check_cfg() steps over it).  Call and callback targets
	 * only matter here because the fuzzer raises whole programs; the kernel
	 * raises one function at a time (rewrite/raise.c, ENTRY POINTS).  The one
	 * jump a raise adds (CAST_USER's `if rX == AX goto +3`) only skips
	 * instructions writing AX and rX, which the raise's walk forgets after
	 * every CAST_USER form.
	 */
	mark_second_any(in, n, isec);
	tgt[0] = 1;
	for (i = 0; i < n; i++) {
		uint8_t cls = BPF_CLASS(in[i].code), op = BPF_OP(in[i].code);
		int64_t t = -1;

		if (isec[i])
			continue;
		if (in[i].code == (BPF_JMP | BPF_CALL) && in[i].src_reg == BPF_PSEUDO_CALL)
			t = (int64_t)i + 1 + in[i].imm;
		else if (is_ld64(&in[i]) && in[i].src_reg == BPF_PSEUDO_FUNC)
			t = (int64_t)i + 1 + in[i].imm;
		else if ((cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL && op != BPF_EXIT)
			t = (int64_t)i + 1 + (in[i].code == (BPF_JMP32 | BPF_JA) ? in[i].imm : in[i].off);
		if (t >= 0 && t < n)
			tgt[t] = 1;
	}
	mark_second_any(opt, n, osec);
	for (i = 0; i < n; i++) {
		const struct bpf_insn *f = &full[i];
		bool kept = f->code == (BPF_ALU | BPF_MOV | BPF_X) && f->dst_reg == f->src_reg &&
			    !f->off && !f->imm;
		bool ldax = (f->code == (BPF_LD | BPF_IMM | BPF_DW) || f->code == 0) &&
			    f->dst_reg == BPFA_REG_AX;
		bool addax = f->code == (BPF_ALU64 | BPF_ADD | BPF_X) && f->dst_reg == BPFA_REG_AX;

		if (!memcmp(f, &opt[i], sizeof(*f)))
			continue;
		CHECK(is_ja0(&opt[i]) && (kept || ldax || addax),
		      "insn %u: optimised raise changed %02x into %02x", i, f->code, opt[i].code);
		for (k = i + 1; kept && k < n && k <= i + 4; k++)
			if (opt[k].code == (BPF_ALU64 | BPF_ADD | BPF_X) && opt[k].dst_reg == BPFA_REG_AX)
				break;
		if (kept && k < n && k <= i + 4) {
			/* dropped zext, base still materialised at k */
			uint8_t r = opt[k].src_reg;

			CHECK(r == f->src_reg, "insn %u: kept r%u, base r%u", i, f->src_reg, r);
			if (getenv("LOWER_FUZZ_VERBOSE"))
				for (uint32_t q = i > 12 ? i - 12 : 0; q <= k; q++)
					fprintf(stderr, "%u: %02x %u %u %d %x | full %02x %u %u tgt %u\n", q,
						opt[q].code, opt[q].dst_reg, opt[q].src_reg, opt[q].off,
						opt[q].imm, full[q].code, full[q].dst_reg, full[q].src_reg, tgt[q]);
			check_zext(opt, osec, tgt, k, r, i);
		}
		if (addax) {
			/* reused AX: the access at i + 1 follows a chain back to an AX += rS */
			uint8_t r = f->src_reg;
			uint32_t acc = 0, between = 0;

			CHECK(i + 1 < n, "reused AX at the end");
			for (j = i + 1; j-- > 0;) {
				const struct bpf_insn *q = &opt[j];

				CHECK(!tgt[j + 1], "insn %u: AX reused across jump target %u", i, j + 1);
				if (is_ja0(q))
					continue;
				if (q->code == (BPF_ALU64 | BPF_ADD | BPF_X) && q->dst_reg == BPFA_REG_AX)
					break;
				CHECK(j > 0, "insn %u: reused AX never computed", i);
				if (!osec[j] && chain_neutral(renv, q, r)) {
					between++;
					continue;
				}
				CHECK(!osec[j], "insn %u: AX reused across an ld_imm64 at %u", i, j);
				CHECK((BPF_CLASS(q->code) == BPF_LDX && q->src_reg == BPFA_REG_AX &&
				       q->dst_reg != r && q->dst_reg != BPFA_REG_AX) ||
				      ((BPF_CLASS(q->code) == BPF_STX || BPF_CLASS(q->code) == BPF_ST) &&
				       BPF_MODE(q->code) == BPF_MEM && q->dst_reg == BPFA_REG_AX),
				      "insn %u: AX reused across insn %u (code %02x)", i, j, q->code);
				acc++;
			}
			CHECK(opt[j].src_reg == r, "insn %u: AX computed from r%u, reused for r%u", i,
			      opt[j].src_reg, r);
			CHECK(j >= 2 && is_ld64(&opt[j - 2]) && opt[j - 2].dst_reg == BPFA_REG_AX &&
			      (uint32_t)opt[j - 2].imm == (uint32_t)renv->kern_vm_start &&
			      (uint32_t)opt[j - 1].imm == (uint32_t)(renv->kern_vm_start >> 32),
			      "insn %u: AX += r%u at %u not after AX = kern_vm_start", i, r, j);
			CHECK(acc + 1 <= BPFA_AX_CHAIN_MAX, "insn %u: chain of %u accesses", i, acc + 1);
			CHECK(between <= BPFA_AX_BETWEEN_MAX, "insn %u: chain through %u instructions",
			      i, between);
			i++;	/* the access itself is unchanged */
		}
	}
	free(osec);
	free(isec);
	free(tgt);
}

static void check_raise(const struct bpfa_raise_env *renv, struct bpf_insn *p, uint32_t n,
			int64_t min_raised)
{
	struct bpf_insn *copy = malloc((size_t)n * sizeof(*p));
	struct bpf_insn *full = malloc((size_t)n * sizeof(*p));
	unsigned long *targets = calloc(n / (8 * sizeof(long)) + 1, sizeof(long));
	struct bpfa_raise_env oenv = *renv;
	struct bpfa_raise_result rr, rf;
	int err, errf;

	/* The raise without the optimisations: the reference. */
	memcpy(full, p, (size_t)n * sizeof(*p));
	oenv.targets = NULL;
	errf = bpfa_raise(&oenv, full, n, &rf);
	CHECK(rf.dropped_zext == 0 && rf.reused_ax == 0, "optimised without targets");
	oenv.targets = targets;
	memcpy(copy, p, (size_t)n * sizeof(*p));
	err = bpfa_raise(&oenv, p, n, &rr);
	CHECK(err == errf && rr.raised == rf.raised, "optimised raise: %d/%u, plain: %d/%u", err,
	      rr.raised, errf, rf.raised);
	/* -EOPNOTSUPP: an ST-immediate form with blinding requested (refuse_st_imm) */
	CHECK(err == 0 || err == -EINVAL || (renv->refuse_st_imm && err == -EOPNOTSUPP),
	      "raise returned %d", err);
	if (err) {
		CHECK(!strncmp(rr.msg, "bpf_arena: insn ", 16), "raise error without a message");
		CHECK(!memcmp(copy, p, (size_t)n * sizeof(*p)), "failed raise changed the program");
		CHECK(rr.raised == 0, "failed raise counts %u", rr.raised);
	} else {
		if (min_raised >= 0)
			CHECK(rr.raised >= min_raised, "raised %u < %lld placeholders", rr.raised,
			      (long long)min_raised);
		check_opt(renv, copy, full, p, n);
		memcpy(copy, p, (size_t)n * sizeof(*p));
		err = bpfa_raise(&oenv, p, n, &rr);
		CHECK(err == 0, "second raise returned %d (%s)", err, rr.msg);
		CHECK(rr.raised == 0, "second raise raised %u", rr.raised);
		CHECK(!memcmp(copy, p, (size_t)n * sizeof(*p)), "second raise changed the program");
	}
	free(targets);
	free(full);
	free(copy);
}

/* Jump, call and callback targets of p[0..n) are in range and not ld_imm64 halves. */
static void check_targets(const struct bpf_insn *p, uint32_t n)
{
	uint8_t *second = calloc(n ? n : 1, 1);
	uint32_t i;

	CHECK(mark_second(p, n, second), "output ends inside an ld_imm64");
	for (i = 0; i < n; i++) {
		int64_t t = -1;

		if (second[i])
			continue;
		if (is_ld64(&p[i]) && p[i].src_reg == BPF_PSEUDO_FUNC)
			t = (int64_t)i + 1 + p[i].imm;
		else if (p[i].code == (BPF_JMP | BPF_CALL) && p[i].src_reg == BPF_PSEUDO_CALL)
			t = (int64_t)i + 1 + p[i].imm;
		else if (bpfa_is_jump(&p[i]))
			t = (int64_t)i + 1 + bpfa_jump_disp(&p[i]);
		else
			continue;
		CHECK(t >= 0 && t < n && !second[t], "insn %u targets %lld", i, (long long)t);
	}
	free(second);
}

/* Debugging aid: writes insns to the file named by env var name, if set. */
static void dump_insns(const char *name, const struct bpf_insn *insns, uint32_t n)
{
	const char *path = getenv(name);
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "wb");
	if (!f)
		return;
	if (n)
		fwrite(insns, sizeof(*insns), n, f);
	fclose(f);
}

/* The loop pass on a lowered program with may_goto (rewrite/loops.c). */
static void check_loops(const struct bpfa_lower_result *res, uint32_t in_len,
			const struct fenv *fe, const struct bpfa_raise_env *renv)
{
	struct bpfa_loops_env lenv = {
		.zalloc = f_zalloc, .free = f_free,
		.new_idx = res->new_idx, .old_len = in_len,
		.has_btf = fe->flags & 16,
	};
	struct bpfa_loops_result lr;
	uint32_t k;
	int err;

	err = bpfa_loops(&lenv, res->insns, res->len, &lr);
	dump_insns("LOWER_FUZZ_DUMP_LOOPS", err ? NULL : lr.insns, err ? 0 : lr.len);
	if (getenv("LOWER_FUZZ_VERBOSE"))
		fprintf(stderr, "loops: %d len %u loops %u %s", err, lr.len, lr.loops,
			err ? lr.msg : "\n");
	CHECK(err == 0 || err == -EINVAL || err == -E2BIG || err == -ENOMEM, "loops returned %d",
	      err);
	if (err) {
		CHECK(!lr.insns && !lr.btf && !lr.func_info, "failed loop pass left buffers");
		CHECK(!strncmp(lr.msg, "bpf_arena: insn ", 16), "loops error without message: '%s'",
		      lr.msg);
		CHECK(lr.err_insn < in_len, "loops error names insn %u of %u", lr.err_insn, in_len);
		return;
	}
	CHECK(!bpfa_loops_needed(lr.insns, lr.len), "may_goto left after the loop pass");
	check_targets(lr.insns, lr.len);
	CHECK(lr.func_info_cnt >= 1 + 2 * lr.loops && lr.func_info[0].insn_off == 0,
	      "func_info %u for %u loops", lr.func_info_cnt, lr.loops);
	for (k = 1; k < lr.func_info_cnt; k++)
		CHECK(lr.func_info[k].insn_off > lr.func_info[k - 1].insn_off &&
		      lr.func_info[k].insn_off < lr.len, "func_info[%u] at %u", k,
		      lr.func_info[k].insn_off);
	CHECK(lr.btf_size > 24 && *(uint16_t *)lr.btf == 0xeB9F, "generated BTF header");
	verifier_convert(lr.insns, lr.len, fe);
	check_raise(renv, lr.insns, lr.len, res->placeholders);
	bpfa_loops_free(&lenv, &lr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpfa_raise_env renv = {
		.companion_value = COMPANION_VALUE,
		.kern_vm_start = KERN_VM_START,
	};
	struct bpfa_lower_env env;
	struct bpfa_lower_result res;
	struct fenv fe;
	struct bpf_insn *in;
	uint32_t n;
	uint64_t uvm;
	int err;

	if (size < ENV_BYTES + sizeof(struct bpf_insn))
		return 0;
	n = (size - ENV_BYTES) / sizeof(struct bpf_insn);
	if (n > MAX_FUZZ_INSNS)
		n = MAX_FUZZ_INSNS;
	fe.flags = data[0];
	fe.arena_fd = data[1];
	fe.companion_fd = data[2];
	fe.kf_alloc = data[3];
	fe.kf_free = data[4];
	uvm = ((uint64_t)data[5] | (uint64_t)data[6] << 8 | (uint64_t)data[7] << 16) << 32;
	memset(&env, 0, sizeof(env));
	env.ctx = &fe;
	env.zalloc = f_zalloc;
	env.free = f_free;
	env.classify_ldimm64 = f_classify_ldimm64;
	env.classify_kfunc = f_classify_kfunc;
	env.user_vm_start = uvm;
	env.arena_size = ((uint64_t)data[8] | (uint64_t)data[9] << 8) * 4096ull + 4096;
	env.no_user_conv = fe.flags & 1;
	env.sleepable = fe.flags & 2;
	env.companion_fd = fe.companion_fd;
	env.kf_alloc_ph_id = 1000;
	env.kf_free_ph_id = 1001;
	env.kf_alloc_map_id = 1002;
	env.kf_free_map_id = 1003;
	/* &arena as a map pointer (module/prog_view.c) or as the constant 0. */
	env.map_view = fe.flags & 16;
	env.view_fd = fe.companion_fd + 1;
	renv.user_vm_start = uvm;
	/* bpf_jit_harden: the kernel sets both from prog->blinding_requested. */
	renv.blinding = fe.flags & 32;
	renv.refuse_st_imm = renv.blinding;

	/* An exact-size heap copy, so ASan sees any read past the end. */
	in = malloc((size_t)n * sizeof(*in));
	memcpy(in, data + ENV_BYTES, (size_t)n * sizeof(*in));

	err = bpfa_lower(&env, in, n, &res);
	if (getenv("LOWER_FUZZ_VERBOSE"))
		fprintf(stderr, "lower: %d len %u placeholders %u %s", err, res.len, res.placeholders,
			err ? res.msg : "\n");
	CHECK(err == 0 || err == -EINVAL || err == -EACCES || err == -ERANGE || err == -E2BIG ||
	      err == -ENOMEM, "lower returned %d", err);
	if (err) {
		CHECK(!res.insns && !res.new_idx, "failed lower left buffers");
		CHECK(!strncmp(res.msg, "bpf_arena: insn ", 16), "lower error without message: '%s'",
		      res.msg);
		CHECK(strlen(res.msg) < sizeof(res.msg) && res.msg[strlen(res.msg) - 1] == '\n',
		      "message not newline-terminated");
	} else {
		check_lowered(&res, n, names_hidden_reg(in, n));
		dump_insns("LOWER_FUZZ_DUMP_LOWERED", res.insns, res.len);
		if (bpfa_loops_needed(res.insns, res.len))
			check_loops(&res, n, &fe, &renv);
		verifier_convert(res.insns, res.len, &fe);
		check_raise(&renv, res.insns, res.len, res.placeholders);
		free(res.insns);
		free(res.new_idx);
	}
	if (fe.flags & 8) {
		/* The raise alone must be safe on anything (it runs on every verified program). */
		verifier_convert(in, n, &fe);
		check_raise(&renv, in, n, -1);
	}
	free(in);
	return 0;
}

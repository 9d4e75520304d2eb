// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the raise's optimisations (rewrite/raise.c, OPTIMISATIONS and
 * ENTRY POINTS), user space: which entry points end a basic block, which
 * writes keep a register known zero-extended, and the fuzzer's finding of
 * 970445d (tests/fuzz/findings/raise-drop-zext-across-target.bin) in its
 * smallest form.  Forms are written here as the lowering emits them after
 * the verifier (companion ld_imm64 converted to its value, docs/PLACEHOLDERS.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"

#include "raise.h"

#define KVM		0xffffc90000000000ull
#define UVM		0x00007f1200000000ull
#define COMP_VAL	0xffff888012345678ull
#define AX		BPFA_REG_AX
#define MAXN		64

#define X32			(BPF_ALU | BPF_XOR | BPF_K)
#define K1(kind, sz, off)	((int32_t)bpfa_k1(kind, sz, 0, off))
#define K2			((int32_t)BPFA_K2_MAGIC)

static const struct bpf_insn ja0 = { .code = BPF_JMP | BPF_JA };

struct prog {
	struct bpf_insn p[MAXN];
	unsigned int n;
};

static void emit(struct prog *pr, struct bpf_insn insn)
{
	pr->p[pr->n++] = insn;
}

/* `ld_imm64 dst, v` with the given src_reg (two slots). */
static void emit_ld64(struct prog *pr, __u8 dst, __u8 src, __u64 v)
{
	emit(pr, I_RAW(BPF_LD | BPF_IMM | BPF_DW, dst, src, 0, (int32_t)(uint32_t)v));
	emit(pr, I_RAW(0, 0, 0, 0, (int32_t)(v >> 32)));
}

/* LOAD form: rD = *(size *)(rS + off).  Returns its first index. */
static unsigned int load_form(struct prog *pr, __u8 s, __u8 d, __u8 size, __s16 off)
{
	unsigned int at = pr->n;

	emit(pr, I_MOV32_REG(s, s));
	emit(pr, I_MOV64_IMM(d, K1(BPFA_PH_LOAD, size, off)));
	emit_ld64(pr, d, 0, COMP_VAL);
	emit(pr, I_LDX(size, d, d, 0));
	return at;
}

/* STX form: *(size *)(rS + off) = rV.  Returns its first index. */
static unsigned int stx_form(struct prog *pr, __u8 s, __u8 v, __u8 size, __s16 off)
{
	unsigned int at = pr->n;
	int32_t k1 = K1(BPFA_PH_STX, size, off);

	emit(pr, I_MOV32_REG(s, s));
	emit(pr, I_RAW(X32, s, 0, 0, k1));
	emit(pr, I_RAW(X32, s, 0, 0, K2));
	emit(pr, I_RAW(X32, s, 0, 0, k1 ^ K2));
	emit(pr, I_MOV64_REG(v, v));
	return at;
}

static bool same(const struct bpf_insn *a, const struct bpf_insn *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* The optimised raise of pr, in place; also checks it against the plain raise. */
static int raise_opt(struct __test_metadata *_metadata, struct prog *pr,
		     struct bpfa_raise_result *rr)
{
	unsigned long targets[(MAXN + 63) / 64 + 1];
	struct bpfa_raise_env env = {
		.companion_value = COMP_VAL, .kern_vm_start = KVM, .user_vm_start = UVM,
	};
	struct bpfa_raise_result rf;
	struct bpf_insn full[MAXN];
	int err, errf;

	memcpy(full, pr->p, sizeof(full));
	errf = bpfa_raise(&env, full, pr->n, &rf);
	env.targets = targets;
	err = bpfa_raise(&env, pr->p, pr->n, rr);
	EXPECT_EQ(errf, err);
	EXPECT_EQ(rf.raised, rr->raised);
	EXPECT_EQ(0, rf.dropped_zext + rf.reused_ax);
	return err;
}

/* Is the form at `at` raised with its `wS = wS` left out (and its base kept)? */
static bool zext_dropped(const struct prog *pr, unsigned int at, __u8 s)
{
	const struct bpf_insn add = I_RAW(BPF_ALU64 | BPF_ADD | BPF_X, AX, s, 0, 0);

	return same(&pr->p[at], &ja0) && same(&pr->p[at + 3], &add);
}

static bool zext_kept(const struct prog *pr, unsigned int at, __u8 s)
{
	const struct bpf_insn mov = I_MOV32_REG(s, s);
	const struct bpf_insn add = I_RAW(BPF_ALU64 | BPF_ADD | BPF_X, AX, s, 0, 0);

	return same(&pr->p[at], &mov) && same(&pr->p[at + 3], &add);
}

/*
 * The block-split program, with two probe slots and a label L between two
 * forms through r2; the probes default to `ja +0`:
 *   0: w2 = w7		r2 zero-extended
 *   1: probe0
 *   2: probe1
 *   3: ja +0		(a target at A: A keeps its zext whatever the probes)
 *   4: A: r3 = *(u64 *)(r2 + 0)	(form)
 *   9: L: r3 *= 3		(a multiply ends an AX chain: no AX reuse for B)
 *  10: B: *(u64 *)(r2 + 8) = r3	(form; its zext dropped unless L is an entry)
 *  15: r0 = 0
 *  16: probe2
 *  17: exit
 */
#define A_AT	4
#define L_AT	9
#define B_AT	10

static void split_prog(struct prog *pr, const struct bpf_insn *probe, unsigned int np,
		       struct bpf_insn probe2)
{
	unsigned int k;

	pr->n = 0;
	emit(pr, I_MOV32_REG(2, 7));
	for (k = 0; k < 2; k++)
		emit(pr, k < np ? probe[k] : ja0);
	emit(pr, ja0);
	load_form(pr, 2, 3, BPF_DW, 0);
	emit(pr, I_ALU64_IMM(BPF_MUL, 3, 3));
	stx_form(pr, 2, 3, BPF_DW, 8);
	emit(pr, I_MOV64_IMM(0, 0));
	emit(pr, probe2);
	emit(pr, I_EXIT());
}

/* Raises the split program; returns whether B's zext was dropped (A's never is). */
static bool split_drops(struct __test_metadata *_metadata, const struct bpf_insn *probe,
			unsigned int np, struct bpf_insn probe2)
{
	struct bpfa_raise_result rr;
	struct prog pr;

	split_prog(&pr, probe, np, probe2);
	EXPECT_EQ(0, raise_opt(_metadata, &pr, &rr)) TH_LOG("%s", rr.msg);
	EXPECT_EQ(2, rr.raised);
	EXPECT_EQ(0, rr.reused_ax);
	EXPECT_TRUE(zext_kept(&pr, A_AT, 2));
	if (rr.dropped_zext) {
		EXPECT_EQ(1, rr.dropped_zext);
		EXPECT_TRUE(zext_dropped(&pr, B_AT, 2));
		return true;
	}
	EXPECT_TRUE(zext_kept(&pr, B_AT, 2));
	return false;
}

TEST(block_without_entry_drops_zext)
{
	EXPECT_TRUE(split_drops(_metadata, NULL, 0, ja0));
}

TEST(conditional_jump_target_splits_block)
{
	const struct bpf_insn to_l[] = { I_JMP_IMM(BPF_JEQ, 1, 0, L_AT - 2) };
	const struct bpf_insn to_a[] = { I_JMP_IMM(BPF_JEQ, 1, 0, A_AT - 2) };

	EXPECT_FALSE(split_drops(_metadata, to_l, 1, ja0));
	EXPECT_TRUE(split_drops(_metadata, to_a, 1, ja0));
}

TEST(jmp32_conditional_jump_target_splits_block)
{
	const struct bpf_insn to_l[] = { I_JMP32_IMM(BPF_JEQ, 1, 0, L_AT - 2) };

	EXPECT_FALSE(split_drops(_metadata, to_l, 1, ja0));
}

TEST(ja_target_splits_block)
{
	const struct bpf_insn to_l[] = { ja0, I_JA(L_AT - 3) };

	EXPECT_FALSE(split_drops(_metadata, to_l, 2, ja0));
}

/* gotol: BPF_JMP32 | BPF_JA, displacement in imm (Debian's 6.1 has it). */
TEST(gotol_target_splits_block)
{
	const struct bpf_insn to_l[] = { I_GOTOL(L_AT - 2) };
	/* off is not gotol's displacement (imm 0: to insn 2); read as off it would be L */
	const struct bpf_insn off_only[] = { I_RAW(BPF_JMP32 | BPF_JA, 0, 0, L_AT - 2, 0) };

	EXPECT_FALSE(split_drops(_metadata, to_l, 1, ja0));
	EXPECT_TRUE(split_drops(_metadata, off_only, 1, ja0));
}

TEST(backward_jump_target_splits_block)
{
	EXPECT_FALSE(split_drops(_metadata, NULL, 0, I_JMP_IMM(BPF_JEQ, 0, 0, L_AT - 17)));
	EXPECT_FALSE(split_drops(_metadata, NULL, 0, I_GOTOL(L_AT - 17)));
}

/*
 * bpf-to-bpf calls and callback references: at JIT time their imm is not a
 * displacement (the raise sees one function), but a whole-program raise
 * would need them, and marking them is always safe.
 */
TEST(pseudo_call_target_splits_block)
{
	const struct bpf_insn to_l[] = { I_CALL_REL(L_AT - 2) };

	EXPECT_FALSE(split_drops(_metadata, to_l, 1, ja0));
}

TEST(pseudo_func_target_splits_block)
{
	const struct bpf_insn to_l[] = {
		I_RAW(BPF_LD | BPF_IMM | BPF_DW, 4, BPF_PSEUDO_FUNC, 0, L_AT - 2), I_RAW(0, 0, 0, 0, 0),
	};

	EXPECT_FALSE(split_drops(_metadata, to_l, 2, ja0));
}

/*
 * The fuzzer's finding (970445d), distilled: BPF_JMP32 | BPF_CALL with src
 * BPF_PSEUDO_CALL, dst 10, off -4096 "pointing" into the companion ld_imm64
 * of the second form.  6.1 has no such call (bpf_pseudo_call() wants
 * BPF_JMP; do_check(): "BPF_CALL uses reserved fields"; dead code is removed
 * or trapped before the JIT), so it is no entry and B's zext stays dropped.
 * The same bits as BPF_JMP | BPF_CALL do count (conservatively).
 */
TEST(finding_jmp32_call_is_no_entry)
{
	const struct bpf_insn jmp32_call[] = {
		I_RAW(BPF_JMP32 | BPF_CALL, 10, BPF_PSEUDO_CALL, -4096, B_AT + 2 - 2),
	};
	const struct bpf_insn jmp_call[] = { I_CALL_REL(B_AT + 2 - 2) };

	EXPECT_TRUE(split_drops(_metadata, jmp32_call, 1, ja0));
	/* a call's mark inside B: B gets no optimisation */
	EXPECT_FALSE(split_drops(_metadata, jmp_call, 1, ja0));
}

/* A mark inside form A (not a jump: jumps there are refused): nothing carried past A. */
TEST(mark_inside_form_ends_block_after_it)
{
	const struct bpf_insn into_a[] = { I_CALL_REL(A_AT + 2 - 2) };

	EXPECT_FALSE(split_drops(_metadata, into_a, 1, ja0));
}

TEST(jump_inside_form_is_refused)
{
	const struct bpf_insn into_b[] = { I_JMP_IMM(BPF_JEQ, 1, 0, B_AT + 3 - 2) };
	struct bpfa_raise_result rr;
	struct prog pr;

	split_prog(&pr, into_b, 1, ja0);
	ASSERT_EQ(-EINVAL, raise_opt(_metadata, &pr, &rr));
	EXPECT_EQ(1, rr.err_insn);
	EXPECT_NE(NULL, strstr(rr.msg, "jump into the arena placeholder at insn 10"));
}

/*
 * A target on the second half of an ld_imm64 between the forms: the verifier
 * refuses such a jump (check_cfg()), but the walk must not carry a fact past
 * it either.
 *   0: w2 = w7; 1: probe; 2-6: A; 7-8: r4 = imm64; 9-13: B; 14: r0 = 0; 15: exit
 */
TEST(target_on_ld_imm64_second_half_splits_block)
{
	struct bpfa_raise_result rr;
	struct prog pr;
	int k;

	for (k = 0; k < 3; k++) {
		/* k 0: no jump; 1: to the first half (7); 2: to the second half (8) */
		pr.n = 0;
		emit(&pr, I_MOV32_REG(2, 7));
		emit(&pr, k ? I_JMP_IMM(BPF_JEQ, 1, 0, 4 + k) : ja0);
		load_form(&pr, 2, 3, BPF_DW, 0);
		emit_ld64(&pr, 4, 0, 0x1122334455667788ull);
		stx_form(&pr, 2, 3, BPF_DW, 8);
		emit(&pr, I_MOV64_IMM(0, 0));
		emit(&pr, I_EXIT());
		ASSERT_EQ(0, raise_opt(_metadata, &pr, &rr)) TH_LOG("%s", rr.msg);
		/* k 0: `ja +0` ends the block before A; 1, 2: the JEQ does not */
		EXPECT_EQ(1, rr.dropped_zext) TH_LOG("jump variant %d", k);
		EXPECT_TRUE(k == 0 ? zext_kept(&pr, 2, 2) : zext_dropped(&pr, 2, 2));
		EXPECT_TRUE(k == 0 ? zext_dropped(&pr, 9, 2) : zext_kept(&pr, 9, 2));
	}
}

/*
 * What keeps r2 known zero-extended between `w2 = w7` (or another writer)
 * and a form through r2:
 *   0: r2 = r7; 1: writer; 2: between; 3-7: form; 8: r0 = 0; 9: exit
 */
static int writer_drops(struct __test_metadata *_metadata, struct bpf_insn writer,
			struct bpf_insn between)
{
	struct bpfa_raise_result rr;
	struct prog pr;

	pr.n = 0;
	emit(&pr, I_MOV64_REG(2, 7));
	emit(&pr, writer);
	emit(&pr, between);
	load_form(&pr, 2, 3, BPF_DW, 0);
	emit(&pr, I_MOV64_IMM(0, 0));
	emit(&pr, I_EXIT());
	EXPECT_EQ(0, raise_opt(_metadata, &pr, &rr)) TH_LOG("%s", rr.msg);
	EXPECT_TRUE(rr.dropped_zext ? zext_dropped(&pr, 3, 2) : zext_kept(&pr, 3, 2));
	return rr.dropped_zext;
}

/* Every 32-bit ALU op but the byte swaps, as X and as K. */
TEST(zero_extending_alu32)
{
	static const __u8 ops[] = {
		BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH, BPF_RSH,
		BPF_XOR, BPF_MOD, BPF_ARSH, BPF_MOV,
	};
	const struct bpf_insn nop = I_MOV64_REG(5, 5);
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(ops); k++) {
		EXPECT_EQ(1, writer_drops(_metadata, I_RAW(BPF_ALU | ops[k] | BPF_X, 2, 7, 0, 0), nop))
			TH_LOG("op %x X", ops[k]);
		EXPECT_EQ(1, writer_drops(_metadata, I_RAW(BPF_ALU | ops[k] | BPF_K, 2, 0, 0, 3), nop))
			TH_LOG("op %x K", ops[k]);
	}
	EXPECT_EQ(1, writer_drops(_metadata, I_RAW(BPF_ALU | BPF_NEG, 2, 0, 0, 0), nop));
	/* le64/be64 are 64-bit; the walk claims no byte swap */
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_ALU | BPF_END | BPF_TO_LE, 2, 0, 0, 64), nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_ALU | BPF_END | BPF_TO_BE, 2, 0, 0, 64), nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_ALU | BPF_END | BPF_TO_LE, 2, 0, 0, 32), nop));
	/* no ALU op (the verifier refuses them) */
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_ALU | 0xe0 | BPF_X, 2, 7, 0, 0), nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_ALU | 0xf0 | BPF_K, 2, 0, 0, 3), nop));
	/* off != 0: movsx / sdiv on 6.6+ (6.1 refuses them) */
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_ALU | BPF_MOV | BPF_X, 2, 7, 8, 0), nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_ALU | BPF_DIV | BPF_X, 2, 7, 1, 0), nop));
}

TEST(zero_extending_loads_and_copies)
{
	const struct bpf_insn nop = I_MOV64_REG(5, 5);

	EXPECT_EQ(1, writer_drops(_metadata, I_LDX(BPF_W, 2, 10, -8), nop));
	EXPECT_EQ(1, writer_drops(_metadata, I_LDX(BPF_H, 2, 10, -8), nop));
	EXPECT_EQ(1, writer_drops(_metadata, I_LDX(BPF_B, 2, 10, -8), nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_LDX(BPF_DW, 2, 10, -8), nop));
	/* BPF_PROBE_MEM (0x20) and MEMSX are not claimed */
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_LDX | 0x20 | BPF_W, 2, 7, 0, 0), nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_RAW(BPF_LDX | BPFA_MODE_MEMSX | BPF_W, 2, 7, 0, 0),
				  nop));
	/* a copy of a zero-extended register is; of another, not */
	EXPECT_EQ(1, writer_drops(_metadata, I_MOV32_REG(7, 7), I_MOV64_REG(2, 7)));
	EXPECT_EQ(0, writer_drops(_metadata, I_MOV64_REG(7, 7), I_MOV64_REG(2, 7)));
	EXPECT_EQ(0, writer_drops(_metadata, I_MOV32_REG(7, 7), I_MOV64_REG(2, 10)));
	/* an addr_space_cast-shaped copy (off 1) is no plain copy */
	EXPECT_EQ(0, writer_drops(_metadata, I_MOV32_REG(7, 7),
				  I_RAW(BPF_ALU64 | BPF_MOV | BPF_X, 2, 7, 1, 1)));
	/* 64-bit writes */
	EXPECT_EQ(0, writer_drops(_metadata, nop, nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_MOV64_REG(2, 7), nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_ALU64_IMM(BPF_AND, 2, 0xff), nop));
	EXPECT_EQ(0, writer_drops(_metadata, I_MOV64_IMM(2, 1), nop));
	/* the zero-extended register is another one */
	EXPECT_EQ(0, writer_drops(_metadata, I_MOV32_REG(3, 7), nop));
}

TEST(what_forgets_zero_extension)
{
	const struct bpf_insn w = I_MOV32_REG(2, 7);

	EXPECT_EQ(1, writer_drops(_metadata, w, I_STX(BPF_DW, 10, 2, -8)));
	EXPECT_EQ(1, writer_drops(_metadata, w, I_MOV32_REG(3, 2)));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_ALU64_IMM(BPF_ADD, 2, 1)));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_LDX(BPF_DW, 2, 10, -8)));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_RAW(BPF_ALU | BPF_END | BPF_TO_BE, 2, 0, 0, 64)));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_CALL_HELPER(1)));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_EXIT()));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 10, 2, -8)));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_ATOMIC(BPF_DW, BPF_ADD, 10, 3, -8)));
	/* any instruction naming AX: a verifier patch */
	EXPECT_EQ(0, writer_drops(_metadata, w, I_MOV64_IMM(AX, 0)));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_RAW(BPF_ALU64 | BPF_OR | BPF_X, 5, AX, 0, 0)));
	EXPECT_EQ(0, writer_drops(_metadata, w, I_MOV32_REG(2, AX)));
	/* LD_ABS clobbers r0-r5 */
	EXPECT_EQ(0, writer_drops(_metadata, w, I_RAW(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0)));
}

/* A LOAD of B/H/W zero-extends its destination; DW does not. */
TEST(narrow_load_zero_extends_destination)
{
	static const __u8 sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	struct bpfa_raise_result rr;
	struct prog pr;
	unsigned int k, b;

	for (k = 0; k < 4; k++) {
		pr.n = 0;
		load_form(&pr, 2, 3, sizes[k], 0);
		emit(&pr, I_MOV64_REG(5, 5));
		b = load_form(&pr, 3, 4, BPF_DW, 0);
		emit(&pr, I_MOV64_IMM(0, 0));
		emit(&pr, I_EXIT());
		ASSERT_EQ(0, raise_opt(_metadata, &pr, &rr));
		EXPECT_EQ(sizes[k] != BPF_DW ? 1u : 0u, rr.dropped_zext) TH_LOG("size %x", sizes[k]);
		EXPECT_TRUE(sizes[k] != BPF_DW ? zext_dropped(&pr, b, 3) : zext_kept(&pr, b, 3));
	}
}

/* Adjacent forms through r2 share AX; an entry at the second one ends that. */
TEST(reuse_ax_and_entry_at_second_form)
{
	struct bpfa_raise_result rr;
	struct prog pr;
	unsigned int a, b;
	int k;

	for (k = 0; k < 2; k++) {
		pr.n = 0;
		emit(&pr, k ? I_JMP_IMM(BPF_JEQ, 1, 0, 5) : ja0);	/* k 1: to B (index 6) */
		a = load_form(&pr, 2, 3, BPF_DW, 0);
		b = stx_form(&pr, 2, 4, BPF_DW, 8);
		emit(&pr, I_MOV64_IMM(0, 0));
		emit(&pr, I_EXIT());
		ASSERT_EQ(6, b);
		ASSERT_EQ(0, raise_opt(_metadata, &pr, &rr));
		EXPECT_TRUE(zext_kept(&pr, a, 2));
		if (!k) {
			EXPECT_EQ(1, rr.reused_ax);
			EXPECT_EQ(0, rr.dropped_zext);
			EXPECT_TRUE(same(&pr.p[b], &ja0) && same(&pr.p[b + 1], &ja0) &&
				    same(&pr.p[b + 2], &ja0) && same(&pr.p[b + 3], &ja0));
		} else {
			EXPECT_EQ(0, rr.reused_ax);
			EXPECT_EQ(0, rr.dropped_zext);
			EXPECT_TRUE(zext_kept(&pr, b, 2));
		}
	}
}

/* A mark inside the first of two adjacent forms: the second materialises AX again. */
TEST(mark_inside_form_stops_reuse)
{
	struct bpfa_raise_result rr;
	struct prog pr;
	unsigned int b;

	pr.n = 0;
	emit(&pr, I_CALL_REL(2));		/* "targets" index 3, inside A */
	load_form(&pr, 2, 3, BPF_DW, 0);
	b = stx_form(&pr, 2, 4, BPF_DW, 8);
	emit(&pr, I_MOV64_IMM(0, 0));
	emit(&pr, I_EXIT());
	ASSERT_EQ(0, raise_opt(_metadata, &pr, &rr));
	EXPECT_EQ(0, rr.reused_ax);
	EXPECT_EQ(0, rr.dropped_zext);
	EXPECT_TRUE(zext_kept(&pr, b, 2));
}

/* Is the STX/LOAD form at `at` raised as its access alone (AX reused)? */
static bool ax_reused(const struct prog *pr, unsigned int at)
{
	return same(&pr->p[at], &ja0) && same(&pr->p[at + 1], &ja0) &&
	       same(&pr->p[at + 2], &ja0) && same(&pr->p[at + 3], &ja0);
}

/*
 *   0-4: A: r3 = *(u64 *)(r2 + 0); 5: between; 6-10: B: *(u64 *)(r2 + 8) = r4;
 *   11: r0 = 0; 12: exit.  A jump in `between` goes to 11 (off 5).
 * Returns how many bases B reused (0 or 1), with or without blinding.
 */
static int reuse_through(struct __test_metadata *_metadata, struct bpf_insn between,
			 bool blinding)
{
	unsigned long targets[(MAXN + 63) / 64 + 1];
	struct bpfa_raise_env env = {
		.companion_value = COMP_VAL, .kern_vm_start = KVM, .user_vm_start = UVM,
		.blinding = blinding, .targets = targets,
	};
	struct bpfa_raise_result rr;
	struct prog pr;
	unsigned int b;

	pr.n = 0;
	load_form(&pr, 2, 3, BPF_DW, 0);
	emit(&pr, between);
	b = stx_form(&pr, 2, 4, BPF_DW, 8);
	emit(&pr, I_MOV64_IMM(0, 0));
	emit(&pr, I_EXIT());
	EXPECT_EQ(0, bpfa_raise(&env, pr.p, pr.n, &rr)) TH_LOG("%s", rr.msg);
	EXPECT_EQ(2, rr.raised);
	EXPECT_EQ(rr.reused_ax ? true : false, ax_reused(&pr, b));
	return rr.reused_ax;
}

/* What 6.1's JIT emits without touching r10, blinding or not (rewrite/raise.c, keeps_ax()). */
TEST(reuse_ax_through_register_instructions)
{
	const struct bpf_insn keep[] = {
		I_ALU64_REG(BPF_ADD, 3, 4), I_ALU32_REG(BPF_SUB, 4, 3), I_ALU64_REG(BPF_AND, 0, 5),
		I_ALU64_REG(BPF_OR, 9, 1), I_ALU32_REG(BPF_XOR, 8, 8), I_MOV64_REG(7, 3),
		I_MOV32_REG(5, 2),	/* reads S: fine */
		I_JMP_REG(BPF_JGT, 3, 1, 5), I_JMP32_REG(BPF_JSET, 1, 2, 5), I_JMP_REG(BPF_JSLE, 0, 9, 5),
		I_LDX(BPF_DW, 4, 10, -8), I_LDX(BPF_B, 5, 1, 3), I_LDX(BPF_H, 0, 2, 100),
		I_STX(BPF_W, 10, 3, -4), I_STX(BPF_B, 1, 2, 300),
	};
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(keep); k++) {
		EXPECT_EQ(1, reuse_through(_metadata, keep[k], false)) TH_LOG("keep %u", k);
		EXPECT_EQ(1, reuse_through(_metadata, keep[k], true)) TH_LOG("keep %u blinded", k);
	}
}

/* An immediate keeps AX only when constant blinding will not rewrite it through AX. */
TEST(reuse_ax_through_immediates_only_without_blinding)
{
	const struct bpf_insn imm[] = {
		I_ALU64_IMM(BPF_ADD, 3, 1), I_ALU32_IMM(BPF_SUB, 4, 100000), I_ALU64_IMM(BPF_AND, 0, -1),
		I_ALU32_IMM(BPF_OR, 9, 7), I_ALU64_IMM(BPF_XOR, 5, 3), I_MOV64_IMM(3, -5),
		I_MOV32_IMM(4, 0), I_MOV64_IMM(0, 0x7fffffff),
		I_JMP_IMM(BPF_JEQ, 1, 0, 5), I_JMP32_IMM(BPF_JEQ, 3, 14, 5), I_JMP32_IMM(BPF_JSGT, 0, -3, 5),
		I_JMP32_IMM(BPF_JSET, 9, 0x1000, 5),
	};
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(imm); k++) {
		EXPECT_EQ(1, reuse_through(_metadata, imm[k], false)) TH_LOG("imm %u", k);
		EXPECT_EQ(0, reuse_through(_metadata, imm[k], true)) TH_LOG("imm %u blinded", k);
	}
}

/* Everything else ends the chain: a write to S, other ops, calls, AX, other modes. */
TEST(what_ends_an_ax_chain)
{
	const struct bpf_insn end[] = {
		I_ALU64_IMM(BPF_ADD, 2, 1), I_MOV32_REG(2, 3), I_LDX(BPF_DW, 2, 10, -8),
		I_ALU64_IMM(BPF_MUL, 3, 3), I_ALU64_REG(BPF_LSH, 3, 4), I_ALU32_IMM(BPF_ARSH, 3, 1),
		I_ALU64_IMM(BPF_NEG, 3, 0), I_ALU64_REG(BPF_DIV, 3, 4), I_ALU64_IMM(BPF_MOD, 3, 4),
		I_RAW(BPF_ALU | BPF_END | BPF_TO_BE, 3, 0, 0, 16),
		I_RAW(BPF_ALU64 | BPF_ADD | BPF_X, 3, 4, 1, 0),		/* off != 0 */
		I_RAW(BPF_ALU64 | BPF_MOV | BPF_X, 3, 4, 8, 0),		/* movsx (6.6+) */
		I_ALU64_REG(BPF_ADD, AX, 3), I_MOV64_REG(3, AX), I_JA(5), I_GOTOL(5),
		I_CALL_HELPER(1), I_RAW(BPF_JMP | 0xe0 | BPF_K, 3, 0, 5, 0),
		I_RAW(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 1),
		I_RAW(BPF_LDX | 0x20 | BPF_DW, 3, 1, 0, 0),			/* BPF_PROBE_MEM */
		I_ATOMIC(BPF_DW, BPF_ADD, 10, 3, -8),
		I_RAW(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 4),
	};
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(end); k++)
		EXPECT_EQ(0, reuse_through(_metadata, end[k], false)) TH_LOG("end %u", k);
}

/*
 * At most BPFA_AX_BETWEEN_MAX instructions per chain, wherever they sit:
 * forms F0..F3 through r2 with `gaps[j]` instructions `r3 += 1` after Fj.
 */
static unsigned int chain_reuses(struct __test_metadata *_metadata, const unsigned int *gaps,
				 unsigned int nforms)
{
	unsigned long targets[(MAXN + 63) / 64 + 1];
	struct bpfa_raise_env env = {
		.companion_value = COMP_VAL, .kern_vm_start = KVM, .user_vm_start = UVM,
		.targets = targets,
	};
	struct bpfa_raise_result rr;
	struct prog pr;
	unsigned int j, g;

	pr.n = 0;
	for (j = 0; j < nforms; j++) {
		stx_form(&pr, 2, 4, BPF_DW, 8 * j);
		for (g = 0; j + 1 < nforms && g < gaps[j]; g++)
			emit(&pr, I_ALU64_IMM(BPF_ADD, 3, 1));
	}
	emit(&pr, I_MOV64_IMM(0, 0));
	emit(&pr, I_EXIT());
	EXPECT_EQ(0, bpfa_raise(&env, pr.p, pr.n, &rr)) TH_LOG("%s", rr.msg);
	EXPECT_EQ(nforms, rr.raised);
	return rr.reused_ax;
}

TEST(ax_chain_runs_through_at_most_eight)
{
	const unsigned int max[] = { BPFA_AX_BETWEEN_MAX }, over[] = { BPFA_AX_BETWEEN_MAX + 1 };
	const unsigned int split[] = { 4, 3, 1 }, split_over[] = { 4, 3, 2 };

	ASSERT_EQ(8, BPFA_AX_BETWEEN_MAX);
	EXPECT_EQ(1, chain_reuses(_metadata, max, 2));
	EXPECT_EQ(0, chain_reuses(_metadata, over, 2));
	EXPECT_EQ(3, chain_reuses(_metadata, split, 4));
	/* the ninth instruction ends the chain: F3 computes AX again */
	EXPECT_EQ(2, chain_reuses(_metadata, split_over, 4));
}

/* A jump to the instruction between two forms: the second computes AX again. */
TEST(entry_between_forms_stops_reuse)
{
	unsigned long targets[(MAXN + 63) / 64 + 1];
	struct bpfa_raise_env env = {
		.companion_value = COMP_VAL, .kern_vm_start = KVM, .user_vm_start = UVM,
		.targets = targets,
	};
	struct bpfa_raise_result rr;
	struct prog pr;
	unsigned int b;
	int k;

	for (k = 0; k < 2; k++) {
		/* 0: if r1 == 0 goto 6 (k 1) or +0; 1-5: A; 6: r3 += r4; 7-11: B */
		pr.n = 0;
		emit(&pr, k ? I_JMP_IMM(BPF_JEQ, 1, 0, 5) : I_JMP_IMM(BPF_JEQ, 1, 0, 0));
		load_form(&pr, 2, 3, BPF_DW, 0);
		emit(&pr, I_ALU64_REG(BPF_ADD, 3, 4));
		b = stx_form(&pr, 2, 4, BPF_DW, 8);
		emit(&pr, I_MOV64_IMM(0, 0));
		emit(&pr, I_EXIT());
		ASSERT_EQ(7, b);
		ASSERT_EQ(0, bpfa_raise(&env, pr.p, pr.n, &rr)) TH_LOG("%s", rr.msg);
		EXPECT_EQ(k ? 0 : 1, rr.reused_ax) TH_LOG("k %d", k);
		EXPECT_EQ(!k, ax_reused(&pr, b));
	}
}

TEST_HARNESS_MAIN

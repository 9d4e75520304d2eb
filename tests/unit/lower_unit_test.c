// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of rewrite/lower.c (the lowering) and rewrite/raise.c (the raise), user space.
 * Exact instruction sequences for every rule, offsets fixups, every error message
 * with the original index, lower -> raise round trips and a random robustness loop.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"

#include "lower.h"
#include "raise.h"
#include "rewrite_env.h"

#define ARENA_FD	7
#define OTHER_FD	8
#define COMP_FD		42
#define KF_ALLOC_ID	1001
#define KF_FREE_ID	1002
#define PH_ALLOC_ID	2001
#define PH_FREE_ID	2002
#define MAP_ALLOC_ID	2003
#define MAP_FREE_ID	2004
#define UVM		0x00007f1200000000ull
#define KVM		0xffffc90000000000ull
#define COMP_VAL	0xffff888012345678ull
#define ARENA_SIZE	(1ull << 20)

#define AX BPFA_REG_AX

/* ---- instruction builders ---- */

#define K1(kind, sz, extra, off) ((int32_t)bpfa_k1(kind, sz, extra, off))
#define K2 ((int32_t)BPFA_K2_MAGIC)
#define X32 (BPF_ALU | BPF_XOR | BPF_K)
#define X64 (BPF_ALU64 | BPF_XOR | BPF_K)

/* Raised: AX = kern_vm_start; AX += rS */
#define R_BASE(s)		I_LD_IMM64_PAIR(AX, 0, (int32_t)(uint32_t)KVM, (int32_t)(KVM >> 32)), \
				I_ALU64_REG(BPF_ADD, AX, s)
#define R_BASE_HI(v)		I_RAW(0, AX, 0, 0, (int32_t)((uint64_t)(v) >> 32))

/* ---- environment ---- */

static enum bpfa_ld_kind t_cls_ld(void *ctx, const struct bpf_insn *insn)
{
	(void)ctx;
	if (insn->imm != ARENA_FD)
		return BPFA_LD_OTHER;
	if (insn->src_reg == BPF_PSEUDO_MAP_FD || insn->src_reg == BPF_PSEUDO_MAP_IDX)
		return BPFA_LD_ARENA_MAP;
	return BPFA_LD_ARENA_VALUE;
}

static enum bpfa_kf_kind t_cls_kf(void *ctx, const struct bpf_insn *insn)
{
	(void)ctx;
	if (insn->imm == KF_ALLOC_ID)
		return BPFA_KF_ALLOC;
	if (insn->imm == KF_FREE_ID)
		return BPFA_KF_FREE;
	return BPFA_KF_OTHER;
}

static struct bpfa_lower_env env_default(void)
{
	struct bpfa_lower_env env = {
		.zalloc = t_zalloc, .free = t_free,
		.classify_ldimm64 = t_cls_ld, .classify_kfunc = t_cls_kf,
		.user_vm_start = UVM, .arena_size = ARENA_SIZE,
		.sleepable = true, .companion_fd = COMP_FD,
		.kf_alloc_ph_id = PH_ALLOC_ID, .kf_free_ph_id = PH_FREE_ID,
		.kf_alloc_map_id = MAP_ALLOC_ID, .kf_free_map_id = MAP_FREE_ID,
	};
	return env;
}

static const struct bpfa_raise_env renv = {
	.companion_value = COMP_VAL, .kern_vm_start = KVM, .user_vm_start = UVM,
};

static void free_res(const struct bpfa_lower_env *env, struct bpfa_lower_result *res)
{
	if (res->insns)
		env->free(env->ctx, res->insns);
	if (res->new_idx)
		env->free(env->ctx, res->new_idx);
	res->insns = NULL;
	res->new_idx = NULL;
}

static void dump(const char *what, const struct bpf_insn *p, __u32 n)
{
	__u32 i;

	fprintf(stderr, "# %s (%u insns)\n", what, n);
	for (i = 0; i < n; i++)
		fprintf(stderr, "#  %3u: %02x %2u %2u %6d 0x%08x\n", i, p[i].code, p[i].dst_reg,
			p[i].src_reg, p[i].off, (uint32_t)p[i].imm);
}

static int same(const struct bpf_insn *a, __u32 na, const struct bpf_insn *b, __u32 nb)
{
	if (na != nb || memcmp(a, b, na * sizeof(*a))) {
		dump("got", a, na);
		dump("expected", b, nb);
		return 0;
	}
	return 1;
}

/* The verifier's ld_imm64 conversion, for the companion only. */
static void resolve_companion(struct bpf_insn *p, __u32 n)
{
	__u32 i;

	for (i = 0; i + 1 < n; i++) {
		if (p[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    p[i].src_reg == BPF_PSEUDO_MAP_VALUE && p[i].imm == COMP_FD) {
			p[i].src_reg = 0;
			p[i].imm = (int32_t)(uint32_t)COMP_VAL;
			p[i + 1].imm = (int32_t)(COMP_VAL >> 32);
			i++;
		}
	}
}

/* Lowers (must succeed) and compares with exp. */
#define LOWER_EXPECT(env, prog, exp, nph) do { \
	struct bpfa_lower_result __r; \
	ASSERT_EQ(0, bpfa_lower(&(env), prog, ARRAY_SIZE(prog), &__r)) TH_LOG("%s", __r.msg); \
	ASSERT_TRUE(same(__r.insns, __r.len, exp, ARRAY_SIZE(exp))); \
	ASSERT_EQ((__u32)(nph), __r.placeholders); \
	ASSERT_EQ(__r.len, __r.new_idx[ARRAY_SIZE(prog)]); \
	free_res(&(env), &__r); \
	ASSERT_EQ(0, live_allocs); \
} while (0)

/* Lowers (must fail) with err at insn idx and the message msg. */
#define LOWER_ERR(env, prog, err, idx, m_) do { \
	struct bpfa_lower_result __r; \
	ASSERT_EQ(err, bpfa_lower(&(env), prog, ARRAY_SIZE(prog), &__r)); \
	ASSERT_EQ((__u32)(idx), __r.err_insn); \
	ASSERT_STREQ(m_, __r.msg); \
	ASSERT_EQ(NULL, __r.insns); \
	ASSERT_EQ(NULL, __r.new_idx); \
	ASSERT_EQ(0, live_allocs); \
} while (0)

/*
 * lower -> resolve -> raise: same length, every placeholder raised, raised code
 * equals exp_raised (if given), a second raise changes nothing.
 */
static void round_trip(struct __test_metadata *_metadata, const struct bpfa_lower_env *env,
		       const struct bpf_insn *prog, __u32 n, const struct bpf_insn *exp_raised,
		       __u32 nexp)
{
	struct bpfa_lower_result r;
	struct bpfa_raise_result rr;
	struct bpf_insn *copy;
	__u32 len;

	ASSERT_EQ(0, bpfa_lower(env, prog, n, &r)) TH_LOG("%s", r.msg);
	len = r.len;
	resolve_companion(r.insns, len);
	ASSERT_EQ(0, bpfa_raise(&renv, r.insns, len, &rr)) TH_LOG("%s", rr.msg);
	ASSERT_EQ(r.placeholders, rr.raised);
	if (exp_raised)
		ASSERT_TRUE(same(r.insns, len, exp_raised, nexp));
	copy = malloc(len * sizeof(*copy));
	ASSERT_NE(NULL, copy);
	memcpy(copy, r.insns, len * sizeof(*copy));
	ASSERT_EQ(0, bpfa_raise(&renv, r.insns, len, &rr));
	ASSERT_EQ(0, rr.raised);
	ASSERT_EQ(0, memcmp(copy, r.insns, len * sizeof(*copy)));
	free(copy);
	free_res(env, &r);
	ASSERT_EQ(0, live_allocs);
}

#define ROUND_TRIP(env, prog, exp) \
	round_trip(_metadata, &(env), prog, ARRAY_SIZE(prog), exp, ARRAY_SIZE(exp))

/* ================= lowering: casts ================= */

TEST(cast_kern_is_mov32)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = { I_CAST_KERN(1, 2), I_EXIT() };
	struct bpf_insn exp[] = { I_MOV32_REG(1, 2), I_EXIT() };
	struct bpfa_lower_result r;

	LOWER_EXPECT(env, prog, exp, 0);
	ASSERT_EQ(0, bpfa_lower(&env, prog, ARRAY_SIZE(prog), &r));
	ASSERT_TRUE(r.uses_arena);
	free_res(&env, &r);
}

TEST(cast_user_placeholder)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = { I_CAST_USER(3, 4), I_CAST(5, 5, 2, 1), I_EXIT() };
	struct bpf_insn exp[] = {
		I_MOV32_REG(3, 4), I_MOV64_IMM(3, K1(BPFA_PH_CAST_USER, BPF_DW, 0, 0)),
		I_MOV64_IMM(3, K2), I_LD_MAP_VALUE(3, COMP_FD, 0), I_LDX(BPF_DW, 3, 3, 0),
		I_MOV32_REG(5, 5), I_MOV64_IMM(5, (int32_t)0xBA7C0000), I_MOV64_IMM(5, K2),
		I_LD_MAP_VALUE(5, COMP_FD, 0),
		I_LDX(BPF_DW, 5, 5, 0),
		I_EXIT(),
	};
	struct bpf_insn raised[] = {
		I_MOV32_REG(3, 4), I_MOV64_IMM(AX, 0), I_RAW(BPF_JMP | BPF_JEQ | BPF_X, 3, AX, 3, 0),
		I_LD_IMM64_PAIR(AX, 0, 0, (int32_t)(UVM >> 32)), I_ALU64_REG(BPF_OR, 3, AX),
		I_MOV32_REG(5, 5), I_MOV64_IMM(AX, 0), I_RAW(BPF_JMP | BPF_JEQ | BPF_X, 5, AX, 3, 0),
		I_LD_IMM64_PAIR(AX, 0, 0, (int32_t)(UVM >> 32)), I_ALU64_REG(BPF_OR, 5, AX),
		I_EXIT(),
	};

	raised[3].dst_reg = AX;
	raised[4].dst_reg = AX;
	raised[9].dst_reg = AX;
	raised[10].dst_reg = AX;
	LOWER_EXPECT(env, prog, exp, 2);
	ROUND_TRIP(env, prog, raised);
}

TEST(cast_user_no_user_conv)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = { I_CAST_USER(3, 4), I_CAST(5, 6, 2, 1), I_EXIT() };
	struct bpf_insn exp[] = { I_MOV32_REG(3, 4), I_MOV32_REG(5, 6), I_EXIT() };

	env.no_user_conv = true;
	LOWER_EXPECT(env, prog, exp, 0);
}

TEST(cast_bad_address_space)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn p1[] = { I_MOV64_IMM(0, 0), I_RAW(BPF_ALU64 | BPF_MOV | BPF_X, 1, 1, 1, 2),
				 I_EXIT() };
	struct bpf_insn p2[] = { I_MOV64_IMM(0, 0), I_MOV64_IMM(0, 0),
				 I_RAW(BPF_ALU64 | BPF_MOV | BPF_X, 1, 1, 2, 0x10000), I_EXIT() };
	const char *m = "bpf_arena: insn %d: addr_space_cast insn can only convert between "
			"address space 1 and 0\n";
	char buf[192];

	snprintf(buf, sizeof(buf), m, 1);
	LOWER_ERR(env, p1, -EINVAL, 1, buf);
	snprintf(buf, sizeof(buf), m, 2);
	LOWER_ERR(env, p2, -EINVAL, 2, buf);
}

/* ================= lowering: memory accesses ================= */

TEST(load_all_sizes)
{
	struct bpfa_lower_env env = env_default();
	static const __u8 sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	unsigned int k;

	for (k = 0; k < 4; k++) {
		__u8 sz = sizes[k];
		struct bpf_insn prog[] = { I_CAST_KERN(6, 1), I_LDX(sz, 2, 6, -16), I_LDX(sz, 6, 6, 4096),
					   I_EXIT() };
		struct bpf_insn exp[] = {
			I_MOV32_REG(6, 1),
			I_MOV32_REG(6, 6), I_MOV64_IMM(2, K1(BPFA_PH_LOAD, sz, 0, -16)), I_LD_MAP_VALUE(2, COMP_FD, 0),
			I_LDX(sz, 2, 2, 0),
			I_MOV32_REG(6, 6), I_MOV64_IMM(6, K1(BPFA_PH_LOAD, sz, 0, 4096)), I_LD_MAP_VALUE(6, COMP_FD, 0),
			I_LDX(sz, 6, 6, 0),
			I_EXIT(),
		};
		struct bpf_insn raised[] = {
			I_MOV32_REG(6, 1),
			I_MOV32_REG(6, 6), R_BASE(6), I_LDX(sz, 2, AX, -16),
			I_MOV32_REG(6, 6), R_BASE(6), I_LDX(sz, 6, AX, 4096),
			I_EXIT(),
		};

		raised[3] = R_BASE_HI(KVM);
		raised[8] = R_BASE_HI(KVM);
		LOWER_EXPECT(env, prog, exp, 2);
		ROUND_TRIP(env, prog, raised);
	}
}

TEST(store_st_all_sizes)
{
	struct bpfa_lower_env env = env_default();
	static const __u8 sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	unsigned int k;

	for (k = 0; k < 4; k++) {
		__u8 sz = sizes[k];
		int32_t k1s = K1(BPFA_PH_STX, sz, 0, 8), k1i = K1(BPFA_PH_ST, sz, 0, -8);
		struct bpf_insn prog[] = { I_CAST_KERN(7, 7), I_STX(sz, 7, 3, 8), I_ST(sz, 7, -8, -5),
					   I_EXIT() };
		struct bpf_insn exp[] = {
			I_MOV32_REG(7, 7),
			I_MOV32_REG(7, 7), I_ALU32_IMM(BPF_XOR, 7, k1s), I_ALU32_IMM(BPF_XOR, 7, K2),
			I_ALU32_IMM(BPF_XOR, 7, k1s ^ K2), I_MOV64_REG(3, 3),
			I_MOV32_REG(7, 7), I_ALU32_IMM(BPF_XOR, 7, k1i), I_ALU32_IMM(BPF_XOR, 7, -5),
			I_ALU32_IMM(BPF_XOR, 7, k1i ^ -5), I_MOV64_REG(7, 7),
			I_EXIT(),
		};
		struct bpf_insn raised[] = {
			I_MOV32_REG(7, 7),
			I_MOV32_REG(7, 7), R_BASE(7), I_STX(sz, AX, 3, 8),
			I_MOV32_REG(7, 7), R_BASE(7), I_ST(sz, AX, -8, -5),
			I_EXIT(),
		};

		raised[3] = R_BASE_HI(KVM);
		raised[8] = R_BASE_HI(KVM);
		LOWER_EXPECT(env, prog, exp, 2);
		ROUND_TRIP(env, prog, raised);
	}
}

TEST(atomics)
{
	struct bpfa_lower_env env = env_default();
	static const __u8 sizes[] = { BPF_W, BPF_DW };
	static const int32_t ops[] = { BPF_ADD, BPF_OR, BPF_AND, BPF_XOR };
	unsigned int k, o;

	for (k = 0; k < 2; k++) {
		__u8 sz = sizes[k];

		for (o = 0; o < 4; o++) {
			int32_t k1 = K1(BPFA_PH_ATOMIC, sz, 0, 16), k2 = K2 | ops[o];
			struct bpf_insn prog[] = { I_CAST_KERN(1, 1), I_ATOMIC(sz, ops[o], 1, 2, 16),
						   I_EXIT() };
			struct bpf_insn exp[] = {
				I_MOV32_REG(1, 1),
				I_MOV32_REG(1, 1), I_ALU32_IMM(BPF_XOR, 1, k1),
				I_ALU32_IMM(BPF_XOR, 1, k2), I_ALU32_IMM(BPF_XOR, 1, k1 ^ k2),
				I_MOV64_REG(2, 2), I_EXIT(),
			};
			struct bpf_insn raised[] = {
				I_MOV32_REG(1, 1), I_MOV32_REG(1, 1), R_BASE(1),
				I_ATOMIC(sz, ops[o], AX, 2, 16), I_EXIT(),
			};

			raised[3] = R_BASE_HI(KVM);
			LOWER_EXPECT(env, prog, exp, 1);
			ROUND_TRIP(env, prog, raised);
		}
		{
			int32_t ka = K1(BPFA_PH_ATOMIC_FETCH, sz, 0, -4);
			int32_t kx = K1(BPFA_PH_ATOMIC_FETCH, sz, 1, 0);
			int32_t kc = K1(BPFA_PH_CMPXCHG, sz, 0, 32);
			struct bpf_insn prog[] = {
				I_CAST_KERN(1, 1), I_ATOMIC(sz, BPF_ADD | BPF_FETCH, 1, 2, -4),
				I_ATOMIC(sz, BPF_XCHG, 1, 3, 0), I_ATOMIC(sz, BPF_CMPXCHG, 1, 4, 32), I_EXIT(),
			};
			struct bpf_insn exp[] = {
				I_MOV32_REG(1, 1),
				I_MOV32_REG(1, 1), I_ALU64_IMM(BPF_XOR, 2, ka), I_LD_MAP_VALUE(2, COMP_FD, 0),
				I_LDX(BPF_DW, 2, 2, 0),
				I_MOV32_REG(1, 1), I_ALU64_IMM(BPF_XOR, 3, kx), I_LD_MAP_VALUE(3, COMP_FD, 0),
				I_LDX(BPF_DW, 3, 3, 0),
				I_MOV32_REG(1, 1), I_ALU64_IMM(BPF_XOR, 4, kc), I_ALU64_IMM(BPF_XOR, 4, kc),
				I_ALU64_IMM(BPF_XOR, 0, K2), I_LD_MAP_VALUE(0, COMP_FD, 0), I_LDX(sz, 0, 0, 0),
				I_EXIT(),
			};
			struct bpf_insn raised[] = {
				I_MOV32_REG(1, 1),
				I_MOV32_REG(1, 1), R_BASE(1), I_ATOMIC(sz, BPF_ADD | BPF_FETCH, AX, 2, -4),
				I_MOV32_REG(1, 1), R_BASE(1), I_ATOMIC(sz, BPF_XCHG, AX, 3, 0),
				I_MOV32_REG(1, 1),
				sz == BPF_W ? I_MOV32_REG(0, 0) : I_MOV64_REG(AX, AX),
				R_BASE(1), I_ATOMIC(sz, BPF_CMPXCHG, AX, 4, 32), I_MOV64_REG(AX, AX),
				I_EXIT(),
			};

			raised[3] = R_BASE_HI(KVM);
			raised[8] = R_BASE_HI(KVM);
			raised[14] = R_BASE_HI(KVM);
			LOWER_EXPECT(env, prog, exp, 3);
			ROUND_TRIP(env, prog, raised);
		}
	}
}

TEST(atomic_fetch_bitops_rejected)
{
	struct bpfa_lower_env env = env_default();
	static const int32_t ops[] = { BPF_AND | BPF_FETCH, BPF_OR | BPF_FETCH,
				       BPF_XOR | BPF_FETCH };
	unsigned int o;

	for (o = 0; o < 3; o++) {
		struct bpf_insn prog[] = { I_CAST_KERN(3, 1), I_MOV64_IMM(2, 1),
					   I_ATOMIC(BPF_DW, ops[o], 3, 2, 0), I_EXIT() };

		LOWER_ERR(env, prog, -EACCES, 2,
			  "bpf_arena: insn 2: BPF_ATOMIC stores into R3 arena is not allowed\n");
	}
}

TEST(memsx_rejected)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = { I_CAST_KERN(3, 1), I_LDXSX(BPF_W, 2, 3, 0), I_EXIT() };
	struct bpf_insn ok[] = { I_LDXSX(BPF_W, 2, 1, 0), I_EXIT() };

	LOWER_ERR(env, prog, -EINVAL, 1,
		  "bpf_arena: insn 1: sign extending loads from arena are not supported yet\n");
	LOWER_EXPECT(env, ok, ok, 0);
}

TEST(mixed_pointers_rejected)
{
	struct bpfa_lower_env env = env_default();
	const char *m1 = "bpf_arena: insn 3: same insn cannot be used with different pointers\n";
	/* r3 is an arena pointer on one path, r1 (ctx) on the other */
	struct bpf_insn ld[] = { I_MOV64_REG(3, 1), I_JMP_IMM(BPF_JEQ, 2, 0, 1), I_CAST_KERN(3, 1),
				 I_LDX(BPF_DW, 0, 3, 0), I_EXIT() };
	struct bpf_insn st[] = { I_MOV64_REG(3, 1), I_JMP_IMM(BPF_JEQ, 2, 0, 1), I_CAST_KERN(3, 1),
				 I_ST(BPF_W, 3, 0, 1), I_EXIT() };
	struct bpf_insn stx[] = { I_MOV64_REG(3, 1), I_JMP_IMM(BPF_JEQ, 2, 0, 1), I_CAST_KERN(3, 1),
				  I_STX(BPF_W, 3, 1, 0), I_EXIT() };
	struct bpf_insn at[] = { I_MOV64_REG(3, 1), I_JMP_IMM(BPF_JEQ, 2, 0, 1), I_CAST_KERN(3, 1),
				 I_ATOMIC(BPF_W, BPF_ADD, 3, 1, 0), I_EXIT() };
	struct bpf_insn alu[] = { I_MOV64_REG(3, 1), I_JMP_IMM(BPF_JEQ, 2, 0, 1), I_CAST_KERN(3, 1),
				  I_ALU64_IMM(BPF_ADD, 3, 8), I_EXIT() };
	struct bpf_insn add[] = { I_MOV64_REG(3, 1), I_JMP_IMM(BPF_JEQ, 2, 0, 1), I_CAST_KERN(3, 1),
				  I_ALU64_REG(BPF_ADD, 4, 3), I_EXIT() };
	/* the same, r3 unused after the merge: fine */
	struct bpf_insn fine[] = { I_MOV64_REG(3, 1), I_JMP_IMM(BPF_JEQ, 2, 0, 1), I_CAST_KERN(3, 1),
				   I_MOV64_IMM(3, 0), I_LDX(BPF_DW, 0, 3, 0), I_EXIT() };

	LOWER_ERR(env, ld, -EINVAL, 3, m1);
	LOWER_ERR(env, st, -EINVAL, 3, m1);
	LOWER_ERR(env, stx, -EINVAL, 3, m1);
	LOWER_ERR(env, at, -EINVAL, 3, m1);
	LOWER_ERR(env, alu, -EINVAL, 3, m1);
	LOWER_ERR(env, add, -EINVAL, 3, m1);
	{
		struct bpfa_lower_result r;

		ASSERT_EQ(0, bpfa_lower(&env, fine, ARRAY_SIZE(fine), &r));
		ASSERT_EQ(0, r.placeholders);
		free_res(&env, &r);
	}
}

/* ================= lowering: ALU ================= */

TEST(alu64_on_arena_becomes_alu32)
{
	struct bpfa_lower_env env = env_default();
	static const __u8 ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH,
				    BPF_RSH, BPF_MOD, BPF_XOR, BPF_ARSH };
	unsigned int o;

	for (o = 0; o < ARRAY_SIZE(ops); o++) {
		struct bpf_insn prog[] = { I_CAST_KERN(1, 1), I_ALU64_IMM(ops[o], 1, 3),
					   I_ALU64_REG(ops[o], 1, 2), I_LDX(BPF_W, 0, 1, 0), I_EXIT() };
		struct bpf_insn exp[] = {
			I_MOV32_REG(1, 1), I_ALU32_IMM(ops[o], 1, 3), I_ALU32_REG(ops[o], 1, 2),
			I_MOV32_REG(1, 1), I_MOV64_IMM(0, K1(BPFA_PH_LOAD, BPF_W, 0, 0)), I_LD_MAP_VALUE(0, COMP_FD, 0),
			I_LDX(BPF_W, 0, 0, 0), I_EXIT(),
		};

		LOWER_EXPECT(env, prog, exp, 1);
	}
	{
		struct bpf_insn prog[] = { I_CAST_KERN(1, 1), I_RAW(BPF_ALU64 | BPF_NEG, 1, 0, 0, 0),
					   I_EXIT() };
		struct bpf_insn exp[] = { I_MOV32_REG(1, 1), I_RAW(BPF_ALU | BPF_NEG, 1, 0, 0, 0), I_EXIT() };

		LOWER_EXPECT(env, prog, exp, 0);
	}
}

TEST(alu_typing)
{
	struct bpfa_lower_env env = env_default();
	/* r2 (scalar) += r1 (arena): 32-bit and r2 becomes arena */
	struct bpf_insn add[] = { I_CAST_KERN(1, 1), I_ALU64_REG(BPF_ADD, 2, 1), I_LDX(BPF_B, 0, 2, 1),
				  I_EXIT() };
	struct bpf_insn add_exp[] = {
		I_MOV32_REG(1, 1), I_ALU32_REG(BPF_ADD, 2, 1),
		I_MOV32_REG(2, 2), I_MOV64_IMM(0, K1(BPFA_PH_LOAD, BPF_B, 0, 1)), I_LD_MAP_VALUE(0, COMP_FD, 0),
		I_LDX(BPF_B, 0, 0, 0), I_EXIT(),
	};
	/* r2 -= r1 (arena) keeps r2 a scalar (only ADD moves the type) */
	struct bpf_insn sub[] = { I_CAST_KERN(1, 1), I_ALU64_REG(BPF_SUB, 2, 1), I_LDX(BPF_B, 0, 2, 1),
				  I_EXIT() };
	struct bpf_insn sub_exp[] = { I_MOV32_REG(1, 1), I_ALU64_REG(BPF_SUB, 2, 1),
				      I_LDX(BPF_B, 0, 2, 1), I_EXIT() };
	/* 64-bit copies keep it, 32-bit copies, constants and ALU32 MOV drop it */
	struct bpf_insn mov[] = {
		I_CAST_KERN(1, 1), I_MOV64_REG(2, 1), I_ALU32_IMM(BPF_ADD, 2, 4), I_LDX(BPF_W, 0, 2, 0),
		I_MOV32_REG(3, 1), I_LDX(BPF_W, 0, 3, 0), I_MOV64_REG(4, 1), I_MOV64_IMM(4, 0),
		I_LDX(BPF_W, 0, 4, 0), I_MOV64_REG(5, 1), I_ALU32_IMM(BPF_MOV, 5, 0), I_LDX(BPF_W, 0, 5, 0),
		I_EXIT(),
	};
	struct bpf_insn mov_exp[] = {
		I_MOV32_REG(1, 1), I_MOV64_REG(2, 1), I_ALU32_IMM(BPF_ADD, 2, 4),
		I_MOV32_REG(2, 2), I_MOV64_IMM(0, K1(BPFA_PH_LOAD, BPF_W, 0, 0)), I_LD_MAP_VALUE(0, COMP_FD, 0),
		I_LDX(BPF_W, 0, 0, 0),
		I_MOV32_REG(3, 1), I_LDX(BPF_W, 0, 3, 0), I_MOV64_REG(4, 1), I_MOV64_IMM(4, 0),
		I_LDX(BPF_W, 0, 4, 0), I_MOV64_REG(5, 1), I_ALU32_IMM(BPF_MOV, 5, 0), I_LDX(BPF_W, 0, 5, 0),
		I_EXIT(),
	};
	/* loads from the arena are scalars: no placeholder through them */
	struct bpf_insn ld[] = { I_CAST_KERN(1, 1), I_LDX(BPF_DW, 1, 1, 0), I_LDX(BPF_DW, 0, 1, 0),
				 I_EXIT() };
	struct bpf_insn ld_exp[] = {
		I_MOV32_REG(1, 1), I_MOV32_REG(1, 1), I_MOV64_IMM(1, K1(BPFA_PH_LOAD, BPF_DW, 0, 0)),
		I_LD_MAP_VALUE(1, COMP_FD, 0), I_LDX(BPF_DW, 1, 1, 0), I_LDX(BPF_DW, 0, 1, 0), I_EXIT(),
	};
	/* cast_user gives a scalar */
	struct bpf_insn cu[] = { I_CAST_KERN(1, 1), I_CAST_USER(2, 1), I_LDX(BPF_DW, 0, 2, 0), I_EXIT() };

	LOWER_EXPECT(env, add, add_exp, 1);
	LOWER_EXPECT(env, sub, sub_exp, 0);
	LOWER_EXPECT(env, mov, mov_exp, 1);
	LOWER_EXPECT(env, ld, ld_exp, 1);
	{
		struct bpfa_lower_result r;

		ASSERT_EQ(0, bpfa_lower(&env, cu, ARRAY_SIZE(cu), &r));
		ASSERT_EQ(1, r.placeholders);	/* the cast only */
		ASSERT_EQ(1 + 6 + 1 + 1, r.len);
		ASSERT_EQ(I_LDX(BPF_DW, 0, 2, 0).code, r.insns[7].code);
		free_res(&env, &r);
	}
}

/* ================= lowering: stack ================= */

TEST(spill_fill)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = {
		I_CAST_KERN(1, 1), I_STX(BPF_DW, 10, 1, -8), I_STX(BPF_DW, 10, 1, -16),
		I_STX(BPF_W, 10, 2, -16), I_MOV64_IMM(1, 0),
		I_LDX(BPF_DW, 3, 10, -8), I_LDX(BPF_W, 0, 3, 0),	/* arena */
		I_LDX(BPF_DW, 4, 10, -16), I_LDX(BPF_W, 0, 4, 0),	/* clobbered by the W store */
		I_EXIT(),
	};
	struct bpf_insn exp[] = {
		I_MOV32_REG(1, 1), I_STX(BPF_DW, 10, 1, -8), I_STX(BPF_DW, 10, 1, -16),
		I_STX(BPF_W, 10, 2, -16), I_MOV64_IMM(1, 0), I_LDX(BPF_DW, 3, 10, -8),
		I_MOV32_REG(3, 3), I_MOV64_IMM(0, K1(BPFA_PH_LOAD, BPF_W, 0, 0)), I_LD_MAP_VALUE(0, COMP_FD, 0),
		I_LDX(BPF_W, 0, 0, 0),
		I_LDX(BPF_DW, 4, 10, -16), I_LDX(BPF_W, 0, 4, 0), I_EXIT(),
	};
	/* ST and atomics on the stack clobber the slot too; sub-DW fills are scalars */
	struct bpf_insn prog2[] = {
		I_CAST_KERN(1, 1), I_STX(BPF_DW, 10, 1, -8), I_STX(BPF_DW, 10, 1, -16),
		I_STX(BPF_DW, 10, 1, -24), I_ST(BPF_DW, 10, -8, 0),
		I_ATOMIC(BPF_DW, BPF_ADD, 10, 2, -16),
		I_LDX(BPF_DW, 3, 10, -8), I_LDX(BPF_W, 0, 3, 0),
		I_LDX(BPF_DW, 3, 10, -16), I_LDX(BPF_W, 0, 3, 0),
		I_LDX(BPF_W, 3, 10, -24), I_LDX(BPF_W, 0, 3, 0),
		I_EXIT(),
	};
	struct bpfa_lower_result r;

	LOWER_EXPECT(env, prog, exp, 1);
	ASSERT_EQ(0, bpfa_lower(&env, prog2, ARRAY_SIZE(prog2), &r));
	ASSERT_EQ(0, r.placeholders);
	free_res(&env, &r);
}

TEST(stack_alias_weakens)
{
	struct bpfa_lower_env env = env_default();
	/* r2 = fp - 8; a store through r2 may overwrite the spilled arena pointer */
	/* (r6: the context, a non-arena pointer) */
	struct bpf_insn alias[] = {
		I_MOV64_REG(6, 1), I_CAST_KERN(1, 1), I_STX(BPF_DW, 10, 1, -8), I_MOV64_REG(2, 10),
		I_ALU64_IMM(BPF_ADD, 2, -8), I_STX(BPF_DW, 2, 6, 0), I_LDX(BPF_DW, 3, 10, -8),
		I_LDX(BPF_W, 0, 3, 0), I_EXIT(),
	};
	/* a helper given a frame pointer may write the frame */
	struct bpf_insn helper[] = {
		I_CAST_KERN(1, 1), I_STX(BPF_DW, 10, 1, -8), I_MOV64_REG(2, 10), I_ALU64_IMM(BPF_ADD, 2, -16),
		I_CALL_HELPER(1), I_LDX(BPF_DW, 3, 10, -8), I_LDX(BPF_W, 0, 3, 0), I_EXIT(),
	};
	/* ...but not a helper without one */
	struct bpf_insn nohelper[] = {
		I_CAST_KERN(1, 1), I_STX(BPF_DW, 10, 1, -8), I_MOV64_IMM(2, 0), I_CALL_HELPER(1),
		I_LDX(BPF_DW, 3, 10, -8), I_LDX(BPF_W, 0, 3, 0), I_EXIT(),
	};
	/* once a frame pointer was spilled, any non-arena store may hit the frame */
	struct bpf_insn esc[] = {
		I_MOV64_REG(6, 1), I_CAST_KERN(1, 1), I_STX(BPF_DW, 10, 1, -8), I_MOV64_REG(2, 10),
		I_STX(BPF_DW, 10, 2, -16), I_MOV64_IMM(2, 0), I_STX(BPF_DW, 7, 6, 0),
		I_LDX(BPF_DW, 3, 10, -8), I_LDX(BPF_W, 0, 3, 0), I_EXIT(),
	};
	struct bpfa_lower_result r;
	const char *m6 = "bpf_arena: insn 6: same insn cannot be used with different pointers\n";

	LOWER_ERR(env, alias, -EINVAL, 7,
		  "bpf_arena: insn 7: same insn cannot be used with different pointers\n");
	LOWER_ERR(env, helper, -EINVAL, 6, m6);
	ASSERT_EQ(0, bpfa_lower(&env, nohelper, ARRAY_SIZE(nohelper), &r));
	ASSERT_EQ(1, r.placeholders);
	free_res(&env, &r);
	LOWER_ERR(env, esc, -EINVAL, 8,
		  "bpf_arena: insn 8: same insn cannot be used with different pointers\n");
}

/* ================= lowering: ld_imm64 ================= */

TEST(ldimm64)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = {
		I_LD_MAP_FD(1, ARENA_FD), I_LD_IMM64_PAIR(2, BPF_PSEUDO_MAP_IDX, ARENA_FD, 0),
		I_LD_IMM64_PAIR(3, BPF_PSEUDO_MAP_VALUE, ARENA_FD, 0x1234),
		I_LD_IMM64_PAIR(4, BPF_PSEUDO_MAP_IDX_VALUE, ARENA_FD, 0),
		I_LD_IMM64_PAIR(5, BPF_PSEUDO_MAP_FD, OTHER_FD, 0),
		I_LD_IMM64_PAIR(6, BPF_PSEUDO_MAP_VALUE, OTHER_FD, 8),
		I_LD_IMM64(7, 0x1122334455667788ull), I_LD_IMM64_PAIR(8, BPF_PSEUDO_BTF_ID, 99, 0),
		I_EXIT(),
	};
	struct bpf_insn exp[] = {
		I_LD_IMM64(1, 0), I_LD_IMM64(2, 0), I_LD_IMM64(3, UVM + 0x1234), I_LD_IMM64(4, UVM),
		I_LD_IMM64_PAIR(5, BPF_PSEUDO_MAP_FD, OTHER_FD, 0),
		I_LD_IMM64_PAIR(6, BPF_PSEUDO_MAP_VALUE, OTHER_FD, 8),
		I_LD_IMM64(7, 0x1122334455667788ull), I_LD_IMM64_PAIR(8, BPF_PSEUDO_BTF_ID, 99, 0),
		I_EXIT(),
	};
	struct bpf_insn oor[] = { I_MOV64_IMM(0, 0),
				  I_LD_IMM64_PAIR(3, BPF_PSEUDO_MAP_VALUE, ARENA_FD, (int32_t)ARENA_SIZE + 1),
				  I_EXIT() };
	struct bpf_insn plain[] = { I_LD_IMM64_PAIR(5, BPF_PSEUDO_MAP_FD, OTHER_FD, 0), I_EXIT() };
	struct bpfa_lower_result r;

	LOWER_EXPECT(env, prog, exp, 0);
	LOWER_ERR(env, oor, -ERANGE, 1, "bpf_arena: insn 1: invalid access to map value "
		  "pointer, value_size=0 off=1048577\n");
	ASSERT_EQ(0, bpfa_lower(&env, plain, ARRAY_SIZE(plain), &r));
	ASSERT_FALSE(r.uses_arena);
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, prog, ARRAY_SIZE(prog), &r));
	ASSERT_TRUE(r.uses_arena);
	free_res(&env, &r);
}

TEST(incomplete_ldimm64)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn p1[] = { I_EXIT(), I_RAW(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 0) };
	struct bpf_insn p2[] = { I_RAW(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 0), I_EXIT() };

	LOWER_ERR(env, p1, -EINVAL, 1, "bpf_arena: insn 1: invalid ld_imm64\n");
	LOWER_ERR(env, p2, -EINVAL, 0, "bpf_arena: insn 0: invalid ld_imm64\n");
}

/* ================= lowering: kfuncs ================= */

TEST(arena_kfuncs)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = {
		I_LD_MAP_FD(1, ARENA_FD), I_JMP_IMM(BPF_JEQ, 6, 0, 2),	/* to the alloc call */
		I_MOV64_IMM(2, 0), I_MOV64_IMM(3, 1),
		I_RAW(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 5, KF_ALLOC_ID),
		I_MOV64_REG(2, 0), I_LD_MAP_FD(1, ARENA_FD), I_MOV64_IMM(3, 1), I_CALL_KFUNC(KF_FREE_ID, 0),
		I_CALL_KFUNC(77, 0), I_EXIT(),
	};
	struct bpf_insn exp[] = {
		I_LD_IMM64(1, 0), I_JMP_IMM(BPF_JEQ, 6, 0, 2),
		I_MOV64_IMM(2, 0), I_MOV64_IMM(3, 1),
		I_LD_MAP_VALUE(1, COMP_FD, 0),
		I_RAW(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 5, PH_ALLOC_ID),
		I_MOV64_REG(2, 0), I_LD_IMM64(1, 0), I_MOV64_IMM(3, 1), I_LD_MAP_VALUE(1, COMP_FD, 0),
		I_CALL_KFUNC(PH_FREE_ID, 0),
		I_CALL_KFUNC(77, 0), I_EXIT(),
	};
	struct bpf_insn nomap[] = { I_MOV64_IMM(1, 0), I_CALL_KFUNC(KF_ALLOC_ID, 0), I_EXIT() };
	struct bpf_insn nomap2[] = { I_LD_MAP_FD(2, ARENA_FD), I_CALL_KFUNC(KF_FREE_ID, 0), I_EXIT() };
	/* r1 is clobbered by a call */
	struct bpf_insn clob[] = { I_LD_MAP_FD(1, ARENA_FD), I_CALL_HELPER(5), I_CALL_KFUNC(KF_FREE_ID, 0),
				   I_EXIT() };
	struct bpf_insn sleep[] = { I_LD_MAP_FD(1, ARENA_FD), I_CALL_KFUNC(KF_ALLOC_ID, 0), I_EXIT() };
	struct bpf_insn ctxmap[] = { I_LDX(BPF_DW, 6, 1, 8), I_MOV64_REG(1, 6),
				     I_CALL_KFUNC(KF_ALLOC_ID, 0), I_EXIT() };
	struct bpf_insn walked[] = {
		I_LDX(BPF_DW, 1, 1, 8), I_LDX(BPF_DW, 1, 1, 8), I_CALL_KFUNC(KF_ALLOC_ID, 0), I_EXIT(),
	};
	struct bpfa_lower_result r;

	LOWER_EXPECT(env, prog, exp, 0);
	ASSERT_EQ(0, bpfa_lower(&env, prog, ARRAY_SIZE(prog), &r));
	ASSERT_EQ(5, r.new_idx[5]);	/* the call's sequence starts at the new ld_imm64 */
	ASSERT_EQ(2, r.insns[2].off);	/* so the jump lands on it */
	ASSERT_EQ(8, r.new_idx[6]);
	ASSERT_TRUE(r.uses_arena);
	free_res(&env, &r);
	/*
	 * R1 not the arena map: the map variant, checked by the verifier (type)
	 * and at run time (ops); flagged untrusted unless it is a context field.
	 */
	ASSERT_EQ(0, bpfa_lower(&env, nomap, ARRAY_SIZE(nomap), &r));
	ASSERT_EQ(3, r.len);
	ASSERT_EQ(MAP_ALLOC_ID, r.insns[1].imm);
	ASSERT_TRUE(r.untrusted_map_arg);
	ASSERT_EQ(1, r.untrusted_insn);
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, nomap2, ARRAY_SIZE(nomap2), &r));
	ASSERT_EQ(MAP_FREE_ID, r.insns[2].imm);
	ASSERT_TRUE(r.untrusted_map_arg);
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, clob, ARRAY_SIZE(clob), &r));
	ASSERT_TRUE(r.untrusted_map_arg);
	ASSERT_EQ(3, r.untrusted_insn);
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, ctxmap, ARRAY_SIZE(ctxmap), &r));
	ASSERT_EQ(MAP_ALLOC_ID, r.insns[2].imm);
	ASSERT_FALSE(r.untrusted_map_arg);	/* ctx->map, through a move */
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, walked, ARRAY_SIZE(walked), &r));
	ASSERT_TRUE(r.untrusted_map_arg);	/* ctx->map->inner_map_meta */
	free_res(&env, &r);
	env.sleepable = false;
	/* 6.12's errno: EACCES (check_kfunc_call()). */
	LOWER_ERR(env, sleep, -EACCES, 2, "bpf_arena: insn 2: program must be sleepable to "
		  "call sleepable kfunc bpf_arena_alloc_pages\n");
}

/* ================= lowering: offsets ================= */

TEST(jump_fixups)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = {
		/* 0 */ I_CAST_KERN(1, 1),
		/* 1 */ I_JMP_IMM(BPF_JEQ, 2, 0, 3),		/* -> 5 */
		/* 2 */ I_LDX(BPF_DW, 0, 1, 0),
		/* 3 */ I_RAW(BPF_JMP32 | BPF_JSGT, 2, 0, 2, 7),	/* -> 6 */
		/* 4 */ I_STX(BPF_DW, 1, 2, 0),
		/* 5 */ I_GOTOL(1),				/* -> 7 */
		/* 6 */ I_ST(BPF_B, 1, 0, 1),
		/* 7 */ I_JMP_IMM(BPF_JNE, 2, 0, -6),		/* -> 2 (loop) */
		/* 8 */ I_JA(-7),					/* -> 2 */
	};
	static const __u32 idx[] = { 0, 1, 2, 7, 8, 13, 14, 19, 20, 21 };
	struct bpfa_lower_result r;
	unsigned int i;

	ASSERT_EQ(0, bpfa_lower(&env, prog, ARRAY_SIZE(prog), &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(21, r.len);
	for (i = 0; i < ARRAY_SIZE(idx); i++)
		ASSERT_EQ(idx[i], r.new_idx[i]);
	ASSERT_EQ(3, r.placeholders);
	ASSERT_EQ(2 + 5 + 1 + 5 - 1 - 1, r.insns[1].off);	/* 1 -> 13 */
	ASSERT_EQ(14 - 7 - 1, r.insns[7].off);
	ASSERT_EQ(7, r.insns[7].imm);
	ASSERT_EQ(19 - 13 - 1, r.insns[13].imm);
	ASSERT_EQ(0, r.insns[13].off);
	ASSERT_EQ(2 - 19 - 1, r.insns[19].off);
	ASSERT_EQ(2 - 20 - 1, r.insns[20].off);
	free_res(&env, &r);
}

TEST(call_and_callback_fixups)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn prog[] = {
		/* 0 */ I_CAST_KERN(1, 1),
		/* 1 */ I_LDX(BPF_W, 0, 1, 0),
		/* 2 */ I_CALL_REL(4),			/* -> 7 */
		/* 3 */ I_LD_IMM64_PAIR(2, BPF_PSEUDO_FUNC, 0, 0),	/* imm patched below: -> 9 */
		/* 5 */ I_CALL_HELPER(181),			/* bpf_loop */
		/* 6 */ I_EXIT(),
		/* 7 */ I_LDX(BPF_W, 0, 1, 0),		/* callee: r1 arena from the caller */
		/* 8 */ I_EXIT(),
		/* 9 */ I_LDX(BPF_W, 0, 2, 0),		/* callback: r2 is a scalar */
		/* 10 */ I_EXIT(),
	};
	struct bpfa_lower_result r;

	prog[3].imm = 9 - 3 - 1;
	ASSERT_EQ(0, bpfa_lower(&env, prog, ARRAY_SIZE(prog), &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(2, r.placeholders);
	ASSERT_EQ(6, r.new_idx[2]);
	ASSERT_EQ(11, r.new_idx[7]);
	ASSERT_EQ(17, r.new_idx[9]);
	ASSERT_EQ(11 - 6 - 1, r.insns[6].imm);
	ASSERT_EQ(BPF_PSEUDO_FUNC, (int)r.insns[7].src_reg);
	ASSERT_EQ(17 - 7 - 1, r.insns[7].imm);
	ASSERT_EQ(I_LDX(BPF_W, 0, 2, 0).code, r.insns[17].code);
	ASSERT_EQ(2, (int)r.insns[17].src_reg);
	free_res(&env, &r);
}

TEST(subprog_types)
{
	struct bpfa_lower_env env = env_default();
	/* callee returns an arena pointer in r0; r6 survives the call, r1 does not */
	struct bpf_insn prog[] = {
		/* 0 */ I_CAST_KERN(6, 6),
		/* 1 */ I_CALL_REL(6),		/* -> 8 */
		/* 2 */ I_LDX(BPF_W, 2, 0, 0),	/* arena (callee's r0) */
		/* 3 */ I_LDX(BPF_W, 2, 6, 0),	/* arena (callee-saved) */
		/* 4 */ I_CAST_KERN(1, 1),
		/* 5 */ I_CALL_REL(2),		/* -> 8 */
		/* 6 */ I_LDX(BPF_W, 2, 1, 0),	/* r1 clobbered: not arena */
		/* 7 */ I_EXIT(),
		/* 8 */ I_CAST_KERN(0, 3),
		/* 9 */ I_EXIT(),
	};
	/* two callers disagree on r1: the callee's access is ambiguous */
	struct bpf_insn mix[] = {
		/* 0 */ I_CAST_KERN(1, 1),
		/* 1 */ I_CALL_REL(5),		/* -> 7 with an arena pointer */
		/* 2 */ I_CALL_HELPER(1),
		/* 3 */ I_MOV64_REG(1, 0),	/* a helper's result: not an arena pointer */
		/* 4 */ I_CALL_REL(2),		/* -> 7 */
		/* 5 */ I_MOV64_IMM(0, 0),
		/* 6 */ I_EXIT(),
		/* 7 */ I_LDX(BPF_W, 0, 1, 0),
		/* 8 */ I_EXIT(),
	};
	struct bpfa_lower_result r;

	ASSERT_EQ(0, bpfa_lower(&env, prog, ARRAY_SIZE(prog), &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(2, r.placeholders);
	ASSERT_EQ(2 + 5 + 5, r.new_idx[4]);
	ASSERT_EQ(I_LDX(BPF_W, 2, 1, 0).code, r.insns[r.new_idx[6]].code);
	ASSERT_EQ(1, (int)r.insns[r.new_idx[6]].src_reg);
	free_res(&env, &r);
	LOWER_ERR(env, mix, -EINVAL, 7,
		  "bpf_arena: insn 7: same insn cannot be used with different pointers\n");
}

/* Constants (NULL) and unset registers give way to arena pointers in joins. */
TEST(null_and_unset_join_arena_pointers)
{
	struct bpfa_lower_env env = env_default();
	/* static subprog returning NULL or an arena pointer, dereferenced after a check */
	struct bpf_insn ret_null[] = {
		/* 0 */ I_CALL_REL(4),		/* -> 5 */
		/* 1 */ I_JMP_IMM(BPF_JEQ, 0, 0, 1),
		/* 2 */ I_LDX(BPF_W, 0, 0, 0),	/* arena access */
		/* 3 */ I_MOV64_IMM(0, 0),
		/* 4 */ I_EXIT(),
		/* 5 */ I_MOV64_IMM(0, 0),
		/* 6 */ I_JMP_IMM(BPF_JEQ, 1, 0, 1),
		/* 7 */ I_CAST_KERN(0, 1),
		/* 8 */ I_EXIT(),
	};
	/* r2 unset on one path, an arena pointer on the other */
	struct bpf_insn unset[] = {
		/* 0 */ I_JMP_IMM(BPF_JEQ, 1, 0, 1),
		/* 1 */ I_CAST_KERN(2, 1),
		/* 2 */ I_JMP_IMM(BPF_JEQ, 1, 0, 1),
		/* 3 */ I_LDX(BPF_W, 0, 2, 0),
		/* 4 */ I_MOV64_IMM(0, 0),
		/* 5 */ I_EXIT(),
	};
	/* r1 clobbered by a helper call on one path, an arena pointer on the other */
	struct bpf_insn clobbered[] = {
		/* 0 */ I_MOV64_REG(6, 1),
		/* 1 */ I_JMP_IMM(BPF_JEQ, 6, 0, 2),
		/* 2 */ I_CALL_HELPER(1),
		/* 3 */ I_JA(1),
		/* 4 */ I_CAST_KERN(1, 6),
		/* 5 */ I_JMP_IMM(BPF_JNE, 6, 0, 1),
		/* 6 */ I_LDX(BPF_W, 0, 1, 0),	/* arena access */
		/* 7 */ I_MOV64_IMM(0, 0),
		/* 8 */ I_EXIT(),
	};
	/* a constant or a context pointer: not an arena access, left alone */
	struct bpf_insn const_none[] = {
		/* 0 */ I_MOV64_IMM(2, 0),
		/* 1 */ I_JMP_IMM(BPF_JEQ, 1, 0, 1),
		/* 2 */ I_MOV64_REG(2, 1),
		/* 3 */ I_LDX(BPF_W, 0, 2, 0),
		/* 4 */ I_EXIT(),
	};
	/* a spilled NULL filled back joins an arena pointer */
	struct bpf_insn spill_null[] = {
		/* 0 */ I_MOV64_IMM(3, 0),
		/* 1 */ I_STX(BPF_DW, 10, 3, -8),
		/* 2 */ I_JMP_IMM(BPF_JEQ, 1, 0, 2),
		/* 3 */ I_CAST_KERN(3, 1),
		/* 4 */ I_STX(BPF_DW, 10, 3, -8),
		/* 5 */ I_LDX(BPF_DW, 4, 10, -8),
		/* 6 */ I_JMP_IMM(BPF_JEQ, 4, 0, 1),
		/* 7 */ I_LDX(BPF_DW, 0, 4, 0),
		/* 8 */ I_MOV64_IMM(0, 0),
		/* 9 */ I_EXIT(),
	};
	/* an arena pointer and a context pointer still may not meet */
	struct bpf_insn ctx_mix[] = {
		/* 0 */ I_MOV64_REG(2, 1),
		/* 1 */ I_JMP_IMM(BPF_JEQ, 1, 0, 1),
		/* 2 */ I_CAST_KERN(2, 1),
		/* 3 */ I_LDX(BPF_W, 0, 2, 0),
		/* 4 */ I_EXIT(),
	};
	struct bpfa_lower_result r;

	ASSERT_EQ(0, bpfa_lower(&env, ret_null, ARRAY_SIZE(ret_null), &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(1, r.placeholders);
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, unset, ARRAY_SIZE(unset), &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(1, r.placeholders);
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, clobbered, ARRAY_SIZE(clobbered), &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(1, r.placeholders);
	ASSERT_EQ(BPF_LDX | BPF_MEM | BPF_W, r.insns[r.new_idx[6] + 4].code);
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, const_none, ARRAY_SIZE(const_none), &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(0, r.placeholders);
	ASSERT_EQ(ARRAY_SIZE(const_none), r.len);
	free_res(&env, &r);
	ASSERT_EQ(0, bpfa_lower(&env, spill_null, ARRAY_SIZE(spill_null), &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(1, r.placeholders);
	free_res(&env, &r);
	LOWER_ERR(env, ctx_mix, -EINVAL, 3,
		  "bpf_arena: insn 3: same insn cannot be used with different pointers\n");
}

TEST(structure_errors)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn out[] = { I_MOV64_IMM(0, 0), I_JA(5), I_EXIT() };
	struct bpf_insn neg[] = { I_MOV64_IMM(0, 0), I_JMP_IMM(BPF_JEQ, 0, 0, -3), I_EXIT() };
	struct bpf_insn mid[] = { I_JA(1), I_LD_IMM64(0, 1), I_EXIT() };
	struct bpf_insn pcall[] = { I_CALL_REL(5), I_EXIT() };
	struct bpf_insn fall[] = { I_MOV64_IMM(0, 0) };
	struct bpf_insn fall2[] = { I_CALL_REL(1), I_EXIT(), I_MOV64_IMM(0, 0), I_CALL_REL(-4) };
	struct bpf_insn cross[] = { I_CALL_REL(2), I_JA(2), I_EXIT(), I_MOV64_IMM(0, 0), I_EXIT() };
	struct bpfa_lower_result r;

	LOWER_ERR(env, out, -EINVAL, 1,
		  "bpf_arena: insn 1: jump or call to insn 7 is out of the program\n");
	LOWER_ERR(env, neg, -EINVAL, 1,
		  "bpf_arena: insn 1: jump or call to insn -1 is out of the program\n");
	LOWER_ERR(env, mid, -EINVAL, 0,
		  "bpf_arena: insn 0: jump or call into the middle of ld_imm64 at insn 1\n");
	LOWER_ERR(env, pcall, -EINVAL, 0,
		  "bpf_arena: insn 0: jump or call to insn 6 is out of the program\n");
	LOWER_ERR(env, fall, -EINVAL, 0,
		  "bpf_arena: insn 0: falls through past the end of its subprogram\n");
	LOWER_ERR(env, fall2, -EINVAL, 3,
		  "bpf_arena: insn 3: falls through past the end of its subprogram\n");
	LOWER_ERR(env, cross, -EINVAL, 1,
		  "bpf_arena: insn 1: jump to insn 4 in another subprogram\n");
	ASSERT_EQ(-EINVAL, bpfa_lower(&env, out, 0, &r));
	ASSERT_STREQ("bpf_arena: insn 0: empty program\n", r.msg);
}

/*
 * insn.h's predicates, shared by the passes and the module.  Only
 * BPF_JMP | BPF_EXIT is an exit: the stock verifier knows no other exit
 * encoding (JMP32 class or BPF_X: "unknown opcode"), so to the passes those
 * are ordinary instructions, and one at the end of a subprogram falls
 * through past it.
 */
TEST(instruction_predicates)
{
	struct bpfa_lower_env env = env_default();
	struct bpf_insn exit32 = I_RAW(BPF_JMP32 | BPF_EXIT, 0, 0, 0, 0);
	struct bpf_insn exitx = I_RAW(BPF_JMP | BPF_EXIT | BPF_X, 0, 0, 0, 0);
	struct bpf_insn exit32x = I_RAW(BPF_JMP32 | BPF_EXIT | BPF_X, 0, 0, 0, 0);
	struct bpf_insn exitf = I_RAW(BPF_JMP | BPF_EXIT, 1, 2, 3, 4);
	struct bpf_insn ld[] = { I_LD_MAP_FD(1, ARENA_FD) };
	struct bpf_insn pfunc[] = { I_LD_IMM64_PAIR(2, BPF_PSEUDO_FUNC, 3, 0) };
	struct bpf_insn ldv[] = { I_LD_IMM64_PAIR(1, BPF_PSEUDO_MAP_IDX_VALUE, 0, 0) };
	struct bpf_insn ldk[] = { I_LD_IMM64(1, 5) };
	struct bpf_insn e = I_EXIT(), ja = I_JA(1), gotol = I_GOTOL(1), pcall = I_CALL_REL(1);
	struct bpf_insn call = I_CALL_HELPER(1);
	struct bpf_insn ck = I_CAST_KERN(1, 1), cu1 = I_CAST(1, 1, 2, 1), mov = I_MOV64_REG(1, 1);
	struct bpf_insn last32[] = { I_MOV64_IMM(0, 0), I_RAW(BPF_JMP32 | BPF_EXIT, 0, 0, 0, 0) };
	struct bpf_insn lastx[] = { I_MOV64_IMM(0, 0), I_RAW(BPF_JMP | BPF_EXIT | BPF_X, 0, 0, 0, 0) };

	ASSERT_TRUE(bpfa_is_exit(&e));
	ASSERT_TRUE(bpfa_is_exit(&exitf));	/* reserved fields: the verifier's refusal */
	ASSERT_FALSE(bpfa_is_exit(&exit32));
	ASSERT_FALSE(bpfa_is_exit(&exitx));
	ASSERT_FALSE(bpfa_is_exit(&exit32x));
	ASSERT_FALSE(bpfa_is_jump(&e));
	ASSERT_FALSE(bpfa_is_jump(&exit32));
	ASSERT_FALSE(bpfa_is_jump(&exitx));
	ASSERT_TRUE(bpfa_is_ja(&ja));
	ASSERT_TRUE(bpfa_is_ja(&gotol));
	ASSERT_FALSE(bpfa_is_ja(&e));
	ASSERT_TRUE(bpfa_is_pcall(&pcall));
	ASSERT_FALSE(bpfa_is_pcall(&call));
	ASSERT_TRUE(bpfa_is_pfunc(&pfunc[0]));
	ASSERT_FALSE(bpfa_is_pfunc(&ld[0]));
	ASSERT_TRUE(bpfa_is_ldimm64(&ldk[0]));
	ASSERT_TRUE(bpfa_is_map_ldimm64(&ld[0]));
	ASSERT_TRUE(bpfa_is_map_ldimm64(&ldv[0]));
	ASSERT_FALSE(bpfa_is_map_ldimm64(&ldk[0]));
	ASSERT_FALSE(bpfa_is_map_ldimm64(&pfunc[0]));
	ASSERT_TRUE(bpfa_is_cast(&ck));
	ASSERT_TRUE(bpfa_is_cast(&cu1));
	ASSERT_FALSE(bpfa_is_cast(&mov));

	LOWER_ERR(env, last32, -EINVAL, 1,
		  "bpf_arena: insn 1: falls through past the end of its subprogram\n");
	LOWER_ERR(env, lastx, -EINVAL, 1,
		  "bpf_arena: insn 1: falls through past the end of its subprogram\n");
}

TEST(jump_out_of_range_after_lowering)
{
	struct bpfa_lower_env env = env_default();
	__u32 n = 8000, i;
	struct bpf_insn *p = calloc(n, sizeof(*p));
	struct bpfa_lower_result r;

	ASSERT_NE(NULL, p);
	p[0] = I_CAST_KERN(1, 1);
	p[1] = I_JMP_IMM(BPF_JEQ, 2, 0, n - 4);	/* -> n - 2 */
	for (i = 2; i < n - 1; i++)
		p[i] = I_LDX(BPF_DW, 0, 1, 0);
	p[n - 1] = I_EXIT();
	ASSERT_EQ(-EINVAL, bpfa_lower(&env, p, n, &r));
	ASSERT_EQ(1, r.err_insn);
	ASSERT_STREQ("bpf_arena: insn 1: jump out of range after arena lowering\n", r.msg);
	ASSERT_EQ(0, live_allocs);
	/* gotol has the range */
	p[1] = I_GOTOL(n - 4);
	ASSERT_EQ(0, bpfa_lower(&env, p, n, &r)) TH_LOG("%s", r.msg);
	ASSERT_EQ(r.new_idx[n - 2] - r.new_idx[1] - 1, (__u32)r.insns[r.new_idx[1]].imm);
	free_res(&env, &r);
	free(p);
}

TEST(too_big_after_lowering)
{
	struct bpfa_lower_env env = env_default();
	__u32 n = 250000, i;
	struct bpf_insn *p = calloc(n, sizeof(*p));
	struct bpfa_lower_result r;

	ASSERT_NE(NULL, p);
	p[0] = I_CAST_KERN(1, 1);
	for (i = 1; i < n - 1; i++)
		p[i] = I_LDX(BPF_DW, 0, 1, 0);
	p[n - 1] = I_EXIT();
	ASSERT_EQ(-E2BIG, bpfa_lower(&env, p, n, &r));
	ASSERT_EQ(200000, r.err_insn);
	ASSERT_STREQ("bpf_arena: insn 200000: program is too large after arena lowering "
		     "(more than 1000000 insns)\n", r.msg);
	ASSERT_EQ(0, live_allocs);
	free(p);
}

/* ~200k instructions with many blocks, loops and subprograms: linear time. */
TEST(large_program)
{
	struct bpfa_lower_env env = env_default();
	__u32 n = 200000, i, nsub = 50, per = n / nsub, s, base;
	struct bpf_insn *p = calloc(n, sizeof(*p));
	struct bpfa_lower_result r;
	struct timespec t0, t1;
	double secs;

	ASSERT_NE(NULL, p);
	for (s = 0; s < nsub; s++) {
		base = s * per;
		p[base] = I_CAST_KERN(6, 1);
		for (i = base + 1; i < base + per - 2; i++) {
			switch (i % 8) {
			case 0:
				p[i] = I_JMP_IMM(BPF_JGT, 2, 3, 2);
				break;
			case 1:
				p[i] = I_LDX(BPF_W, 3, 6, 4);
				break;
			case 2:
				p[i] = I_STX(BPF_DW, 10, 6, -8 * (int)(i % 64 + 1));
				break;
			case 5:
				p[i] = I_JMP_IMM(BPF_JNE, 3, 0, -4);
				break;
			default:
				p[i] = I_ALU64_IMM(BPF_ADD, 2, 1);
				break;
			}
		}
		if (s + 1 < nsub) {
			p[base + per - 2] = I_CALL_REL(1);	/* -> next subprogram */
			p[base + per - 1] = I_EXIT();
		} else {
			p[base + per - 2] = I_MOV64_IMM(0, 0);
			p[base + per - 1] = I_EXIT();
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, bpfa_lower(&env, p, n, &r)) TH_LOG("%s", r.msg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	TH_LOG("lowered %u insns to %u in %.3f s (%u placeholders)", n, r.len, secs,
	       r.placeholders);
	ASSERT_GT(r.placeholders, n / 10);
	ASSERT_LT(secs, 20.0);
	free_res(&env, &r);
	ASSERT_EQ(0, live_allocs);
	free(p);
}

/* ================= raise ================= */

static const struct bpf_insn all_kinds[] = {
	I_CAST_KERN(1, 2), I_LDX(BPF_H, 3, 1, 2), I_STX(BPF_B, 1, 4, -1), I_ST(BPF_W, 1, 6, 0x7fffffff),
	I_ATOMIC(BPF_W, BPF_XOR, 1, 5, 8), I_ATOMIC(BPF_DW, BPF_XCHG, 1, 5, 8),
	I_ATOMIC(BPF_W, BPF_CMPXCHG, 1, 5, 8), I_CAST_USER(7, 1), I_MOV64_IMM(0, 0), I_EXIT(),
};

TEST(raise_round_trip_all_kinds)
{
	struct bpfa_lower_env env = env_default();

	round_trip(_metadata, &env, all_kinds, ARRAY_SIZE(all_kinds), NULL, 0);
}

static struct bpf_insn *lowered_all_kinds(struct __test_metadata *_metadata,
					  struct bpfa_lower_result *r)
{
	struct bpfa_lower_env env = env_default();

	EXPECT_EQ(0, bpfa_lower(&env, all_kinds, ARRAY_SIZE(all_kinds), r));
	EXPECT_EQ(7, r->placeholders);
	resolve_companion(r->insns, r->len);
	return r->insns;
}

TEST(raise_refuses_jump_into_placeholder)
{
	struct bpfa_lower_env env = env_default();
	struct bpfa_lower_result r;
	struct bpfa_raise_result rr;
	struct bpf_insn *p, *copy;
	__u32 len, start, k, j, n = ARRAY_SIZE(all_kinds);

	p = lowered_all_kinds(_metadata, &r);
	len = r.len;
	copy = malloc((len + 2) * sizeof(*copy));
	ASSERT_NE(NULL, copy);
	/* for every placeholder and every inner slot: a jump from the end lands there */
	for (k = 1; k < n - 2; k++) {
		start = r.new_idx[k];
		for (j = start + 1; j < r.new_idx[k + 1]; j++) {
			memcpy(copy, p, len * sizeof(*copy));
			copy[len - 2] = I_JMP_IMM(BPF_JEQ, 0, 0, (int)j - (int)(len - 2) - 1);
			ASSERT_EQ(-EINVAL, bpfa_raise(&renv, copy, len, &rr));
			ASSERT_EQ(len - 2, rr.err_insn);
			ASSERT_EQ(0, memcmp(copy, p, (len - 2) * sizeof(*copy)));
			{
				char m[192];

				snprintf(m, sizeof(m), "bpf_arena: insn %u: jump into the arena "
					 "placeholder at insn %u (to insn %u)\n", len - 2, start, j);
				ASSERT_STREQ(m, rr.msg);
			}
			/* gotol too */
			copy[len - 2] = I_GOTOL((int)j - (int)(len - 2) - 1);
			ASSERT_EQ(-EINVAL, bpfa_raise(&renv, copy, len, &rr));
		}
		/* a jump to the start is fine */
		memcpy(copy, p, len * sizeof(*copy));
		copy[len - 2] = I_JMP_IMM(BPF_JEQ, 0, 0, (int)start - (int)(len - 2) - 1);
		ASSERT_EQ(0, bpfa_raise(&renv, copy, len, &rr));
		ASSERT_EQ(7, rr.raised);
	}
	free(copy);
	free_res(&env, &r);
}

TEST(raise_ignores_lookalikes)
{
	struct bpfa_lower_env env = env_default();
	struct bpfa_raise_env other = renv;
	struct bpfa_lower_result r;
	struct bpfa_raise_result rr;
	struct bpf_insn *p, *copy;
	__u32 len, i, f, field;

	p = lowered_all_kinds(_metadata, &r);
	len = r.len;
	copy = malloc(len * sizeof(*copy));
	ASSERT_NE(NULL, copy);
	/* another companion address: the forms naming it stay; STX/ST/ATOMIC have none */
	memcpy(copy, p, len * sizeof(*copy));
	other.companion_value = COMP_VAL + 8;
	ASSERT_EQ(0, bpfa_raise(&other, copy, len, &rr));
	ASSERT_EQ(3, rr.raised);
	for (i = 0; i < len; i++)
		if (copy[i].code == (BPF_LD | BPF_IMM | BPF_DW) && copy[i].dst_reg != AX)
			ASSERT_EQ((int32_t)(uint32_t)COMP_VAL, copy[i].imm);
	/* any single-field change in a placeholder slot: that form is not raised */
	for (i = 0; i < len; i++) {
		for (field = 0; field < 5; field++) {
			memcpy(copy, p, len * sizeof(*copy));
			switch (field) {
			case 0:
				copy[i].code ^= 0x08;
				break;
			case 1:
				copy[i].dst_reg ^= 1;
				break;
			case 2:
				copy[i].src_reg ^= 2;
				break;
			case 3:
				copy[i].off ^= 0x100;
				break;
			case 4:
				copy[i].imm ^= 0x1000000;
				break;
			}
			ASSERT_EQ(0, bpfa_raise(&renv, copy, len, &rr));
			f = rr.raised;
			/*
			 * Changing the kept slot's registers, the ST immediate pair or
			 * a carrier's offset bits can give another valid form; otherwise
			 * exactly one form is lost.
			 */
			ASSERT_LE(f, 7);
			ASSERT_GE(f, 6);
		}
	}
	free(copy);
	free_res(&env, &r);
}

TEST(raise_safe_registers)
{
	/* forms that name r10 or AX are never matched */
	struct bpf_insn p[] = {
		I_MOV32_REG(10, 10), I_MOV64_IMM(2, K1(BPFA_PH_LOAD, BPF_W, 0, 0)),
		I_LD_IMM64_PAIR(2, 0, (int32_t)(uint32_t)COMP_VAL, (int32_t)(COMP_VAL >> 32)),
		I_LDX(BPF_W, 2, 2, 0),
		I_MOV32_REG(1, 1), I_MOV64_IMM(AX, K1(BPFA_PH_LOAD, BPF_W, 0, 0)),
		I_LD_IMM64_PAIR(AX, 0, (int32_t)(uint32_t)COMP_VAL, (int32_t)(COMP_VAL >> 32)),
		I_LDX(BPF_W, AX, AX, 0),
		I_MOV32_REG(1, 1), I_ALU32_IMM(BPF_XOR, 1, K1(BPFA_PH_STX, BPF_W, 0, 0)),
		I_ALU32_IMM(BPF_XOR, 1, K2), I_ALU32_IMM(BPF_XOR, 1, K1(BPFA_PH_STX, BPF_W, 0, 0) ^ K2),
		I_MOV64_REG(10, 10),
		/* ATOMIC of size B */
		I_MOV32_REG(1, 1), I_ALU32_IMM(BPF_XOR, 1, K1(BPFA_PH_ATOMIC, BPF_B, 0, 0)),
		I_ALU32_IMM(BPF_XOR, 1, K2), I_ALU32_IMM(BPF_XOR, 1, K1(BPFA_PH_ATOMIC, BPF_B, 0, 0) ^ K2),
		I_MOV64_REG(2, 2),
		/* the valid one */
		I_MOV32_REG(1, 1), I_ALU32_IMM(BPF_XOR, 1, K1(BPFA_PH_STX, BPF_W, 0, 0)),
		I_ALU32_IMM(BPF_XOR, 1, K2), I_ALU32_IMM(BPF_XOR, 1, K1(BPFA_PH_STX, BPF_W, 0, 0) ^ K2),
		I_MOV64_REG(9, 9),
		I_EXIT(),
	};
	struct bpfa_raise_result rr;

	ASSERT_EQ(0, bpfa_raise(&renv, p, ARRAY_SIZE(p), &rr));
	ASSERT_EQ(1, rr.raised);
	ASSERT_EQ(BPF_STX | BPF_MEM | BPF_W, p[ARRAY_SIZE(p) - 2].code);
	ASSERT_EQ(AX, (int)p[ARRAY_SIZE(p) - 2].dst_reg);
	ASSERT_EQ(9, (int)p[ARRAY_SIZE(p) - 2].src_reg);
	/* truncated forms at the end of the array */
	ASSERT_EQ(0, bpfa_raise(&renv, p, 3, &rr));
	ASSERT_EQ(0, bpfa_raise(&renv, p + 18, 4, &rr));
	ASSERT_EQ(0, rr.raised);
}

/* ================= robustness ================= */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static struct bpf_insn rnd_insn(void)
{
	static const __u8 codes[] = {
		BPF_ALU64 | BPF_MOV | BPF_X, BPF_ALU64 | BPF_MOV | BPF_K, BPF_ALU | BPF_MOV | BPF_X,
		BPF_ALU64 | BPF_ADD | BPF_X, BPF_ALU64 | BPF_ADD | BPF_K, BPF_ALU | BPF_XOR | BPF_K,
		BPF_ALU64 | BPF_XOR | BPF_K, BPF_ALU64 | BPF_NEG, BPF_ALU64 | BPF_END,
		BPF_LDX | BPF_MEM | BPF_DW, BPF_LDX | BPF_MEM | BPF_W, BPF_LDX | BPFA_MODE_MEMSX,
		BPF_STX | BPF_MEM | BPF_DW, BPF_STX | BPF_MEM | BPF_B, BPF_ST | BPF_MEM | BPF_H,
		BPF_STX | BPF_ATOMIC | BPF_DW, BPF_STX | BPF_ATOMIC | BPF_W,
		BPF_LD | BPF_IMM | BPF_DW, BPF_LD | BPF_ABS | BPF_W,
		BPF_JMP | BPF_JA, BPF_JMP32 | BPF_JA, BPF_JMP | BPF_JEQ | BPF_K,
		BPF_JMP32 | BPF_JNE | BPF_X, BPF_JMP | BPF_CALL, BPF_JMP | BPF_EXIT,
		BPF_JMP32 | BPF_CALL, BPF_JMP32 | BPF_EXIT, 0, 0xff,
	};
	static const int32_t imms[] = {
		0, 1, 0x10000, BPF_ADD, BPF_XCHG, BPF_CMPXCHG, BPF_ADD | BPF_FETCH,
		BPF_AND | BPF_FETCH, ARENA_FD, OTHER_FD, KF_ALLOC_ID, KF_FREE_ID, -1, 2, 3,
	};
	struct bpf_insn insn = I_RAW(codes[rnd() % ARRAY_SIZE(codes)], rnd() % 12, rnd() % 12,
				     (int16_t)(rnd() % 16) - 8, imms[rnd() % ARRAY_SIZE(imms)]);

	if (rnd() % 4 == 0)
		insn.off = (int16_t)(rnd() % 5) - 1 + (rnd() % 2 ? 0 : 1);
	if (rnd() % 8 == 0)
		insn.off = (int16_t)rnd();
	if (rnd() % 8 == 0)
		insn.imm = (int32_t)rnd();
	if (insn.code == (BPF_LD | BPF_IMM | BPF_DW) || insn.code == (BPF_JMP | BPF_CALL))
		insn.src_reg = rnd() % 7;
	return insn;
}

static void mutate(struct bpf_insn *p, __u32 n)
{
	__u32 k = rnd() % 4 + 1;

	while (k--) {
		struct bpf_insn *q = &p[rnd() % n];

		switch (rnd() % 6) {
		case 0:
			*q = rnd_insn();
			break;
		case 1:
			q->dst_reg = rnd() % 12;
			break;
		case 2:
			q->src_reg = rnd() % 12;
			break;
		case 3:
			q->off += (int16_t)(rnd() % 5) - 2;
			break;
		case 4:
			q->imm ^= 1u << (rnd() % 32);
			break;
		default:
			q->code ^= 1u << (rnd() % 8);
			break;
		}
	}
}

TEST(random_programs)
{
	struct bpfa_lower_env env = env_default();
	struct bpfa_lower_result r;
	struct bpfa_raise_result rr;
	unsigned int iter, ok = 0, raised = 0;
	struct bpf_insn p[64];
	__u32 n, i;

	env.no_user_conv = false;
	for (iter = 0; iter < 4000; iter++) {
		n = rnd() % 63 + 1;
		for (i = 0; i < n; i++)
			p[i] = rnd_insn();
		if (iter % 2) {
			/* mostly well-formed: valid registers, in-range jumps, casts */
			for (i = 0; i < n; i++) {
				p[i].dst_reg %= 10;
				p[i].src_reg = p[i].code == (BPF_LD | BPF_IMM | BPF_DW) ||
					       p[i].code == (BPF_JMP | BPF_CALL) ?
					       p[i].src_reg : p[i].src_reg % 10;
				if (bpfa_is_jump(&p[i]) || (p[i].code == (BPF_JMP | BPF_CALL) &&
							    p[i].src_reg == BPF_PSEUDO_CALL)) {
					int32_t t = (int32_t)(rnd() % n) - (int32_t)i - 1;

					p[i].off = (int16_t)t;
					if (p[i].code == (BPF_JMP32 | BPF_JA) ||
					    p[i].code == (BPF_JMP | BPF_CALL))
						p[i].imm = t;
				}
				if (rnd() % 4 == 0)
					p[i] = I_CAST_KERN(rnd() % 10, rnd() % 10);
				if (i + 1 < n && p[i].code == (BPF_LD | BPF_IMM | BPF_DW))
					p[++i] = I_RAW(0, 0, 0, 0, (int32_t)(rnd() % 4));
			}
			p[n - 1] = I_EXIT();
		}
		env.sleepable = iter % 3;
		if (bpfa_lower(&env, p, n, &r) == 0) {
			struct bpf_insn *c;

			ok++;
			ASSERT_EQ(r.len, r.new_idx[n]);
			for (i = 0; i < n; i++)
				ASSERT_LE(r.new_idx[i], r.new_idx[i + 1]);
			resolve_companion(r.insns, r.len);
			ASSERT_EQ(0, bpfa_raise(&renv, r.insns, r.len, &rr)) TH_LOG("%s", rr.msg);
			ASSERT_EQ(r.placeholders, rr.raised);
			raised += rr.raised;
			ASSERT_EQ(0, bpfa_raise(&renv, r.insns, r.len, &rr));
			ASSERT_EQ(0, rr.raised);
			/* mutated lowered code through the raise: no crash */
			c = malloc(r.len * sizeof(*c));
			ASSERT_NE(NULL, c);
			memcpy(c, r.insns, r.len * sizeof(*c));
			free_res(&env, &r);
			mutate(c, r.len);
			bpfa_raise(&renv, c, r.len, &rr);
			bpfa_raise(&renv, c, r.len, &rr);
			free(c);
		} else {
			ASSERT_NE(0, r.msg[0]);
			ASSERT_EQ(0, strncmp(r.msg, "bpf_arena: insn ", 16));
			ASSERT_LT(r.err_insn, n);
		}
		ASSERT_EQ(0, live_allocs);
		/* raw random code through the raise */
		bpfa_raise(&renv, p, n, &rr);
	}
	/* mutated well-formed programs */
	for (iter = 0; iter < 4000; iter++) {
		n = ARRAY_SIZE(all_kinds);
		memcpy(p, all_kinds, sizeof(all_kinds));
		mutate(p, n);
		if (bpfa_lower(&env, p, n, &r) == 0) {
			resolve_companion(r.insns, r.len);
			ASSERT_EQ(0, bpfa_raise(&renv, r.insns, r.len, &rr)) TH_LOG("%s", rr.msg);
			ASSERT_EQ(r.placeholders, rr.raised);
			free_res(&env, &r);
		}
		ASSERT_EQ(0, live_allocs);
	}
	TH_LOG("%u random programs lowered, %u placeholders raised", ok, raised);
	ASSERT_GT(ok, 100);
}

TEST_HARNESS_MAIN

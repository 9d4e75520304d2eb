// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of bpf_for/bpf_repeat on 6.1: the lowering (rewrite/lower.c) inlines
 * bpf_iter_num_new/next/destroy and marks next(); the loop pass (rewrite/loops.c)
 * outlines the loop around the mark.  Each program runs twice in
 * tests/unit/bpf_interp.h: as written, its kfunc calls executed by
 * upstream's own C code (kernel/bpf/bpf_iter.c, below), and after both
 * passes; r0 and the context must agree.  The edge cases are upstream's:
 * empty ranges, start > end (-EINVAL), more than BPF_MAX_LOOPS (-E2BIG),
 * INT_MIN/INT_MAX ends, exactly BPF_MAX_LOOPS iterations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"

#include "lower.h"
#include "loops.h"
#include "bpf_interp.h"
#include "rewrite_env.h"

#define FP(r, off)		I_MOV64_REG(r, 10), I_ALU64_IMM(BPF_ADD, r, off)

enum { ID_NEW = 501, ID_NEXT = 502, ID_DESTROY = 503 };

/* Upstream's kernel/bpf/bpf_iter.c (6.4+), on the interpreter's memory. */
struct iter_num_kern {
	int cur, end;
};

static uint64_t upstream_iter(int32_t imm, const uint64_t a[5], bool *ok)
{
	struct iter_num_kern *s = (void *)(uintptr_t)a[0];
	int start = (int)(uint32_t)a[1], end = (int)(uint32_t)a[2];

	switch (imm) {
	case ID_NEW:
		if (start > end) {
			s->cur = s->end = 0;
			return (uint64_t)-EINVAL;
		}
		if ((int64_t)end - (int64_t)start > BI_MAX_LOOPS) {
			s->cur = s->end = 0;
			return (uint64_t)-E2BIG;
		}
		s->cur = (int)((uint32_t)start - 1);	/* wraps, as -fno-strict-overflow */
		s->end = end;
		return 0;
	case ID_NEXT:
		if ((int64_t)(int)((uint32_t)s->cur + 1) >= s->end) {
			s->cur = s->end = 0;
			return 0;
		}
		s->cur = (int)((uint32_t)s->cur + 1);
		return (uint64_t)(uintptr_t)&s->cur;
	case ID_DESTROY:
		s->cur = s->end = 0;
		return 0;
	}
	*ok = false;
	return 0;
}

static enum bpfa_kf_kind t_classify_kfunc(void *ctx, const struct bpf_insn *insn)
{
	(void)ctx;
	switch (insn->imm) {
	case ID_NEW: return BPFA_KF_ITER_NEW;
	case ID_NEXT: return BPFA_KF_ITER_NEXT;
	case ID_DESTROY: return BPFA_KF_ITER_DESTROY;
	}
	return BPFA_KF_OTHER;
}

/* ld_imm64 BPF_PSEUDO_BTF_ID imm = id (bpf_ksym_exists()): only the iterators are ours. */
static enum bpfa_kf_kind t_classify_ksym(void *ctx, const struct bpf_insn *insn)
{
	return t_classify_kfunc(ctx, insn);
}

/* Every map of these programs: 4-byte keys, 8-byte values. */
static bool t_map_sizes(void *ctx, const struct bpf_insn *insn, __u32 *key, __u32 *value)
{
	(void)ctx;
	(void)insn;
	*key = 4;
	*value = 8;
	return true;
}

static const struct bpfa_lower_env lenv = {
	.zalloc = t_zalloc, .free = t_free, .classify_kfunc = t_classify_kfunc,
	.classify_ksym = t_classify_ksym, .map_sizes = t_map_sizes, .companion_fd = -1,
};

/* Both passes, as prog_load.c runs them; 0 or the failing pass's errno (msg set). */
static int translate(const struct bpf_insn *p, uint32_t len, struct bpf_insn **out,
		     uint32_t *out_len, uint32_t *loops, char *msg, size_t msg_len)
{
	struct bpfa_loops_env env = { .zalloc = t_zalloc, .free = t_free };
	struct bpfa_lower_result low;
	struct bpfa_loops_result lr;
	int err;

	*loops = 0;
	err = bpfa_lower(&lenv, p, len, &low);
	if (err) {
		snprintf(msg, msg_len, "%s", low.msg);
		return err;
	}
	if (!bpfa_loops_needed(low.insns, low.len)) {
		*out = low.insns;
		*out_len = low.len;
		t_free(NULL, low.new_idx);
		return 0;
	}
	env.new_idx = low.new_idx;
	env.old_len = len;
	err = bpfa_loops(&env, low.insns, low.len, &lr);
	t_free(NULL, low.insns);
	t_free(NULL, low.new_idx);
	if (err) {
		snprintf(msg, msg_len, "%s", lr.msg);
		return err;
	}
	*out = lr.insns;
	*out_len = lr.len;
	*loops = lr.loops;
	lr.insns = NULL;
	bpfa_loops_free(&env, &lr);
	return 0;
}

/*
 * Runs p as written and translated on copies of ctx (nctx u64s); both must
 * agree on r0 and ctx, the translation must keep no kfunc call and no mark.
 * Evaluates to r0; *loops_out: loops outlined.
 */
#define SAME_RESULT(p, ctx_init, nctx, loops_out)				\
	({									\
		uint64_t __c1[nctx], __c2[nctx], __r1, __r2;			\
		struct bpf_insn *__t = NULL;					\
		uint32_t __tlen = 0, __k;					\
		struct bi __vm = { .kfunc = upstream_iter };			\
		char __msg[BPFA_MSG_LEN] = "";						\
		memcpy(__c1, ctx_init, sizeof(__c1));				\
		memcpy(__c2, ctx_init, sizeof(__c2));				\
		__r1 = bi_exec(&__vm, p, ARRAY_SIZE(p), __c1);				\
		ASSERT_FALSE(__vm.fault) TH_LOG("as written: %s", __vm.why);	\
		ASSERT_EQ(0, translate(p, ARRAY_SIZE(p), &__t, &__tlen, loops_out, __msg, \
				       sizeof(__msg))) TH_LOG("%s", __msg);	\
		for (__k = 0; __k < __tlen; __k++) {				\
			ASSERT_NE(BPF_JMP | BPF_CALL | (BPF_PSEUDO_KFUNC_CALL << 8), \
				  __t[__k].code | __t[__k].src_reg << 8);	\
			ASSERT_NE(BPFA_MAY_GOTO_CODE, __t[__k].code);		\
		}								\
		__vm.kfunc = NULL;						\
		__r2 = bi_exec(&__vm, __t, __tlen, __c2);			\
		ASSERT_FALSE(__vm.fault) TH_LOG("translated: %s", __vm.why);	\
		ASSERT_EQ(__r1, __r2);						\
		ASSERT_EQ(0, memcmp(__c1, __c2, sizeof(__c1)));			\
		t_free(NULL, __t);						\
		ASSERT_EQ(0, live_allocs);					\
		__r1;								\
	})

/*
 * bpf_for(i, ctx[0], ctx[1]) { sum += i; n++; }: ctx[2] = new()'s result,
 * ctx[3] = sum, ctx[4] = the iterator's state after destroy; r0 = n.
 */
static const struct bpf_insn for_sum[] = {
	I_MOV64_REG(6, 1),			/* 0 */
	I_MOV64_IMM(7, 0),			/* 1: sum */
	I_MOV64_IMM(8, 0),			/* 2: n */
	FP(1, -8),			/* 3-4 */
	I_LDX(BPF_DW, 2, 6, 0),			/* 5 */
	I_LDX(BPF_DW, 3, 6, 8),			/* 6 */
	I_CALL_KFUNC(ID_NEW, 1),			/* 7 */
	I_STX(BPF_DW, 6, 0, 16),			/* 8 */
	FP(1, -8),			/* 9-10: loop head */
	I_CALL_KFUNC(ID_NEXT, 1),			/* 11 */
	I_JMP_IMM(BPF_JEQ, 0, 0, 6),		/* 12 -> 19 */
	I_LDX(BPF_W, 2, 0, 0),			/* 13: i = *p */
	I_ALU64_IMM(BPF_LSH, 2, 32),			/* 14 */
	I_ALU64_IMM(BPF_ARSH, 2, 32),			/* 15 */
	I_ALU64_REG(BPF_ADD, 7, 2),			/* 16 */
	I_ALU64_IMM(BPF_ADD, 8, 1),			/* 17 */
	I_JA(-10),			/* 18 -> 9 */
	FP(1, -8),			/* 19-20 */
	I_CALL_KFUNC(ID_DESTROY, 1),		/* 21 */
	I_STX(BPF_DW, 6, 7, 24),			/* 22 */
	I_LDX(BPF_DW, 2, 10, -8),			/* 23: upstream zeroes the state */
	I_STX(BPF_DW, 6, 2, 32),			/* 24 */
	I_MOV64_REG(0, 8),			/* 25 */
	I_EXIT(),				/* 26 */
};

static uint64_t run_for_sum(struct __test_metadata *_metadata, int64_t start, int64_t end,
			    int64_t *ret, int64_t *sum)
{
	uint64_t ctx[5] = { (uint64_t)start, (uint64_t)end, 0, 0, 0xdead };
	uint64_t c[5], n;
	uint32_t loops;

	memcpy(c, ctx, sizeof(c));
	n = SAME_RESULT(for_sum, ctx, 5, &loops);
	EXPECT_EQ(1, loops);
	/* The result of the original run, recomputed: what the asserts compared. */
	{
		struct bi vm = { .kfunc = upstream_iter };

		bi_exec(&vm, for_sum, ARRAY_SIZE(for_sum), c);
	}
	*ret = (int64_t)c[2];
	*sum = (int64_t)c[3];
	EXPECT_EQ(0, c[4]);
	return n;
}

TEST(for_sum_matches_upstream)
{
	int64_t ret, sum;

	ASSERT_EQ(100000, run_for_sum(_metadata, 0, 100000, &ret, &sum));
	EXPECT_EQ(0, ret);
	EXPECT_EQ(4999950000ll, sum);
	ASSERT_EQ(3, run_for_sum(_metadata, -1, 2, &ret, &sum));
	EXPECT_EQ(0, sum);
}

TEST(empty_and_refused_ranges)
{
	int64_t ret, sum;

	ASSERT_EQ(0, run_for_sum(_metadata, 5, 5, &ret, &sum));
	EXPECT_EQ(0, ret);
	ASSERT_EQ(0, run_for_sum(_metadata, 10, 3, &ret, &sum));
	EXPECT_EQ(-EINVAL, ret);
	ASSERT_EQ(0, run_for_sum(_metadata, 0, BI_MAX_LOOPS + 1, &ret, &sum));
	EXPECT_EQ(-E2BIG, ret);
	ASSERT_EQ(0, run_for_sum(_metadata, INT_MIN, INT_MAX, &ret, &sum));
	EXPECT_EQ(-E2BIG, ret);
}

TEST(int_min_and_int_max_ends)
{
	int64_t ret, sum;

	ASSERT_EQ(5, run_for_sum(_metadata, INT_MIN, (int64_t)INT_MIN + 5, &ret, &sum));
	EXPECT_EQ(0, ret);
	EXPECT_EQ(5 * (int64_t)INT_MIN + 10, sum);
	ASSERT_EQ(3, run_for_sum(_metadata, INT_MAX - 3, INT_MAX, &ret, &sum));
	EXPECT_EQ(3 * (int64_t)INT_MAX - 6, sum);
	ASSERT_EQ(0, run_for_sum(_metadata, INT_MAX, INT_MAX, &ret, &sum));
	/* Only the low 32 bits of the arguments count (int parameters). */
	ASSERT_EQ(2, run_for_sum(_metadata, 0x700000000ll, 0x500000002ll, &ret, &sum));
	EXPECT_EQ(1, sum);
}

/* BPF_MAX_LOOPS iterations: next() runs 8M + 1 times, one bpf_loop() of 8M plus the extra body. */
TEST(exactly_max_loops_iterations)
{
	int64_t ret, sum;

	ASSERT_EQ(BI_MAX_LOOPS, run_for_sum(_metadata, 0, BI_MAX_LOOPS, &ret, &sum));
	EXPECT_EQ(0, ret);
	EXPECT_EQ((int64_t)BI_MAX_LOOPS * (BI_MAX_LOOPS - 1) / 2, sum);
}

/*
 * bpf_for(i, 0, ctx[0]) { bpf_repeat(ctx[1]) n++; if (i == ctx[2]) break; }
 * The inner iterator at fp-16; the break leaves through the outer destroy.
 * (6.1+module: main's context cannot be used inside a loop, so it is read
 * before.)
 */
static const struct bpf_insn nested_break[] = {
	I_MOV64_REG(6, 1),			/* 0 */
	I_MOV64_IMM(8, 0),			/* 1: n */
	I_LDX(BPF_DW, 7, 6, 8),			/* 2: repeat count */
	I_LDX(BPF_DW, 3, 6, 0),			/* 3: outer end */
	I_LDX(BPF_DW, 6, 6, 16),			/* 4: break value */
	FP(1, -8),			/* 5-6 */
	I_MOV64_IMM(2, 0),			/* 7 */
	I_CALL_KFUNC(ID_NEW, 1),			/* 8 */
	FP(1, -8),			/* 9-10: outer head */
	I_CALL_KFUNC(ID_NEXT, 1),			/* 11 */
	I_JMP_IMM(BPF_JEQ, 0, 0, 17),		/* 12 -> 30 */
	I_LDX(BPF_W, 9, 0, 0),			/* 13: i */
	FP(1, -16),			/* 14-15 */
	I_MOV64_IMM(2, 0),			/* 16 */
	I_MOV64_REG(3, 7),			/* 17 */
	I_CALL_KFUNC(ID_NEW, 1),			/* 18 */
	FP(1, -16),			/* 19-20: inner head */
	I_CALL_KFUNC(ID_NEXT, 1),			/* 21 */
	I_JMP_IMM(BPF_JEQ, 0, 0, 2),		/* 22 -> 25 */
	I_ALU64_IMM(BPF_ADD, 8, 1),			/* 23 */
	I_JA(-6),				/* 24 -> 19 */
	FP(1, -16),			/* 25-26 */
	I_CALL_KFUNC(ID_DESTROY, 1),		/* 27 */
	I_RAW(BPF_JMP | BPF_JEQ | BPF_X, 9, 6, 1, 0),	/* 28 -> 30 */
	I_JA(-21),			/* 29 -> 9 */
	FP(1, -8),			/* 30-31 */
	I_CALL_KFUNC(ID_DESTROY, 1),		/* 32 */
	I_MOV64_REG(0, 8),			/* 33 */
	I_EXIT(),				/* 34 */
};

TEST(nested_repeat_and_break)
{
	uint64_t ctx[3] = { 1000, 7, 999999 };
	uint32_t loops;

	ASSERT_EQ(7000, SAME_RESULT(nested_break, ctx, 3, &loops));
	EXPECT_EQ(2, loops);
	ctx[2] = 9;
	ASSERT_EQ(70, SAME_RESULT(nested_break, ctx, 3, &loops));
	ctx[1] = 0;
	ASSERT_EQ(0, SAME_RESULT(nested_break, ctx, 3, &loops));
}

/*
 * The shape clang gives bpf_for (tests/progs/arena_bpf_for.bpf.c): the first
 * next() before the loop, the loop entered at the use of its value, the
 * next next() at the bottom.  r0, the value pointer, crosses the loop head:
 * the pass must carry it as the iterator's stack address (re-derived in the
 * body), not as bits the verifier cannot dereference.
 */
TEST(rotated_loop_carries_value_pointer)
{
	const struct bpf_insn p[] = {
		I_MOV64_REG(7, 1),		/* 0 */
		I_LDX(BPF_DW, 3, 1, 0),		/* 1: end */
		I_MOV64_IMM(6, 0),		/* 2: sum */
		FP(1, -8),		/* 3-4 */
		I_MOV64_IMM(2, 0),		/* 5 */
		I_CALL_KFUNC(ID_NEW, 1),		/* 6 */
		FP(1, -8),		/* 7-8 */
		I_CALL_KFUNC(ID_NEXT, 1),		/* 9 */
		I_JMP_IMM(BPF_JEQ, 0, 0, 7),	/* 10 -> 18 */
		I_LDX(BPF_W, 2, 0, 0),		/* 11: loop entry, *v */
		I_ALU64_REG(BPF_ADD, 6, 2),		/* 12 */
		FP(1, -8),		/* 13-14 */
		I_CALL_KFUNC(ID_NEXT, 1),		/* 15 */
		I_JMP_IMM(BPF_JEQ, 0, 0, 1),	/* 16 -> 18 */
		I_JA(-7),			/* 17 -> 11 */
		FP(1, -8),		/* 18-19 */
		I_CALL_KFUNC(ID_DESTROY, 1),	/* 20 */
		I_STX(BPF_DW, 7, 6, 8),		/* 21 */
		I_MOV64_REG(0, 6),		/* 22 */
		I_EXIT(),			/* 23 */
	};
	struct bpf_insn *t = NULL;
	uint64_t ctx[2] = { 1000, 0 };
	uint32_t tlen, loops, k;
	char msg[BPFA_MSG_LEN] = "";
	bool rederived = false;

	ASSERT_EQ(499500, SAME_RESULT(p, ctx, 2, &loops));
	EXPECT_EQ(1, loops);
	ctx[0] = 0;
	ASSERT_EQ(0, SAME_RESULT(p, ctx, 2, &loops));
	/* r0 = r10; r0 += -8 somewhere: re-derived, not loaded from the frame. */
	ASSERT_EQ(0, translate(p, ARRAY_SIZE(p), &t, &tlen, &loops, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (k = 0; k + 1 < tlen; k++)
		rederived |= t[k].code == (BPF_ALU64 | BPF_MOV | BPF_X) && t[k].dst_reg == 0 &&
			     t[k].src_reg == 10 && t[k + 1].code == (BPF_ALU64 | BPF_ADD | BPF_K) &&
			     t[k + 1].dst_reg == 0 && t[k + 1].imm == -8;
	t_free(NULL, t);
	EXPECT_TRUE(rederived);
	EXPECT_EQ(0, live_allocs);
}

/*
 * A return from inside the loop (an exit edge through `exit`, the iterator
 * destroyed on the way out as upstream requires), and next() outside any
 * loop.
 */
TEST(return_inside_loop_and_lone_next)
{
	const struct bpf_insn p[] = {
		I_LDX(BPF_DW, 7, 1, 0),		/* 0 */
		FP(1, -8),		/* 1-2 */
		I_MOV64_IMM(2, 3),		/* 3 */
		I_MOV64_IMM(3, 100),		/* 4 */
		I_CALL_KFUNC(ID_NEW, 1),		/* 5 */
		FP(1, -8),		/* 6-7: a lone next(): i = 3 */
		I_CALL_KFUNC(ID_NEXT, 1),		/* 8 */
		I_MOV64_IMM(6, -1),		/* 9 */
		FP(1, -8),		/* 10-11: loop head */
		I_CALL_KFUNC(ID_NEXT, 1),		/* 12 */
		I_JMP_IMM(BPF_JEQ, 0, 0, 7),	/* 13 -> 21 */
		I_LDX(BPF_W, 6, 0, 0),		/* 14 */
		I_RAW(BPF_JMP | BPF_JEQ | BPF_X, 6, 7, 1, 0),	/* 15 -> 17: return i */
		I_JA(-7),			/* 16 -> 10 */
		FP(1, -8),		/* 17-18 */
		I_CALL_KFUNC(ID_DESTROY, 1),	/* 19 */
		I_JA(4),			/* 20 -> 25 */
		I_MOV64_IMM(6, -1),		/* 21 */
		FP(1, -8),		/* 22-23 */
		I_CALL_KFUNC(ID_DESTROY, 1),	/* 24 */
		I_MOV64_REG(0, 6),		/* 25 */
		I_EXIT(),			/* 26 */
	};
	uint64_t ctx[1] = { 42 };
	uint32_t loops;

	ASSERT_EQ(42, SAME_RESULT(p, ctx, 1, &loops));
	EXPECT_EQ(1, loops);
	ctx[0] = 3;	/* taken by the lone next(): the loop never sees it */
	ASSERT_EQ((uint64_t)-1, SAME_RESULT(p, ctx, 1, &loops));
}

static int lower_msg(const struct bpf_insn *p, uint32_t len, char *msg, size_t n)
{
	struct bpfa_lower_result low;
	int err = bpfa_lower(&lenv, p, len, &low);

	snprintf(msg, n, "%s", low.msg);
	if (!err) {
		t_free(NULL, low.insns);
		t_free(NULL, low.new_idx);
	}
	return err;
}

/*
 * A program 6.12 refuses: the body resets the iterator's state, so next()
 * would never end.  Refused here as upstream refuses it (the iterator is
 * written by a plain store); that the translated loop would still stop
 * after bpf_loop()'s 8M bodies is the loop pass's own guarantee
 * (docs/LOOPS.md), tested with may_goto loops that never end.
 */
TEST(reset_iterator_is_refused)
{
	const struct bpf_insn p[] = {
		I_MOV64_IMM(6, 0),		/* 0 */
		FP(1, -8),		/* 1-2 */
		I_MOV64_IMM(2, 0),		/* 3 */
		I_MOV64_IMM(3, 10),		/* 4 */
		I_CALL_KFUNC(ID_NEW, 1),		/* 5 */
		FP(1, -8),		/* 6-7 */
		I_CALL_KFUNC(ID_NEXT, 1),		/* 8 */
		I_JMP_IMM(BPF_JEQ, 0, 0, 3),	/* 9 -> 13 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 10 */
		I_RAW(BPF_ST | BPF_MEM | BPF_W, 10, 0, -8, 0),	/* 11: cur = 0 */
		I_JA(-7),			/* 12 -> 6 */
		FP(1, -8),		/* 13-14 */
		I_CALL_KFUNC(ID_DESTROY, 1),	/* 15 */
		I_MOV64_REG(0, 6),		/* 16 */
		I_EXIT(),			/* 17 */
	};
	char msg[BPFA_MSG_LEN] = "";

	ASSERT_EQ(-EINVAL, lower_msg(p, ARRAY_SIZE(p), msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "insn 11: write into fp-8, the state of an active bpf_iter_num"))
		TH_LOG("%s", msg);
	EXPECT_EQ(0, live_allocs);
}

/*
 * bpf_ksym_exists(bpf_iter_num_new) is an ld_imm64 of the function, which
 * 6.1 refuses ("isn't KIND_VAR"): the lowering makes it the constant 1.
 * Other typed ksyms stay as they are.
 */
TEST(ksym_exists_of_an_iterator_is_one)
{
	const struct bpf_insn p[] = {
		I_RAW(BPF_LD | BPF_IMM | BPF_DW, 2, BPF_PSEUDO_BTF_ID, 0, ID_NEW),
		I_RAW(0, 0, 0, 0, 13),
		I_RAW(BPF_LD | BPF_IMM | BPF_DW, 3, BPF_PSEUDO_BTF_ID, 0, 77),
		I_RAW(0, 0, 0, 0, 13),
		I_MOV64_REG(0, 2),
		I_EXIT(),
	};
	struct bpfa_lower_result low;

	ASSERT_EQ(0, bpfa_lower(&lenv, p, ARRAY_SIZE(p), &low)) TH_LOG("%s", low.msg);
	ASSERT_EQ(ARRAY_SIZE(p), low.len);
	EXPECT_EQ(BPF_LD | BPF_IMM | BPF_DW, low.insns[0].code);
	EXPECT_EQ(0, (int)low.insns[0].src_reg);
	EXPECT_EQ(2, (int)low.insns[0].dst_reg);
	EXPECT_EQ(1, low.insns[0].imm);
	EXPECT_EQ(0, low.insns[1].imm);
	EXPECT_EQ(BPF_PSEUDO_BTF_ID, (int)low.insns[2].src_reg);	/* not ours: kept */
	EXPECT_EQ(77, low.insns[2].imm);
	EXPECT_EQ(13, low.insns[3].imm);
	t_free(NULL, low.insns);
	t_free(NULL, low.new_idx);
	EXPECT_EQ(0, live_allocs);
}

TEST(refusals)
{
	/* The lowering's own mark, forged. */
	const struct bpf_insn forged[] = {
		I_RAW(BPF_JMP | 0xe0 | BPF_K, 0, BPFA_ITER_MARK_SRC, 0, 0),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	const struct bpf_insn imm[] = {
		I_RAW(BPF_JMP | 0xe0 | BPF_K, 0, 0, 1, 7),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	/* The iterator must be on the stack, as upstream's process_iter_arg() wants. */
	const struct bpf_insn not_stack[] = {
		I_MOV64_IMM(2, 0),
		I_MOV64_IMM(3, 1),
		I_CALL_KFUNC(ID_NEW, 1),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	char msg[BPFA_MSG_LEN];

	ASSERT_EQ(-EINVAL, lower_msg(forged, ARRAY_SIZE(forged), msg, sizeof(msg)));
	EXPECT_STREQ("bpf_arena: insn 0: invalid may_goto imm 0\n", msg);
	ASSERT_EQ(-EINVAL, lower_msg(imm, ARRAY_SIZE(imm), msg, sizeof(msg)));
	EXPECT_STREQ("bpf_arena: insn 0: invalid may_goto imm 7\n", msg);
	ASSERT_EQ(-EINVAL, lower_msg(not_stack, ARRAY_SIZE(not_stack), msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "bpf_arena: insn 2: arg#0 expected pointer to an iterator on stack"))
		TH_LOG("%s", msg);
	EXPECT_EQ(0, live_allocs);
}

/*
 * Upstream's iterator rules (tools/testing/selftests/bpf/progs/
 * iters_state_safety.c and iters_looping.c, 7.3, as raw programs; the
 * vendored files themselves run in the VM): what 6.12 refuses is refused
 * here, what it loads is lowered.
 */
#define NEW_AT(off)	FP(1, off), I_MOV64_IMM(2, 0), I_MOV64_IMM(3, 1000), \
			I_CALL_KFUNC(ID_NEW, 1)
#define NEXT_AT(off)	FP(1, off), I_CALL_KFUNC(ID_NEXT, 1)
#define DESTROY_AT(off)	FP(1, off), I_CALL_KFUNC(ID_DESTROY, 1)
#define RET0		I_MOV64_IMM(0, 0), I_EXIT()

struct rule_case {
	const char *name;
	const struct bpf_insn *p;
	uint32_t len;
	int err;
	const char *msg;	/* a substring of the refusal */
};

/* Lowers each case: its errno, and its message containing rc->msg. */
static void check_rules(struct __test_metadata *_metadata, const struct rule_case *cases,
			size_t n)
{
	char msg[BPFA_MSG_LEN];
	size_t k;

	for (k = 0; k < n; k++) {
		const struct rule_case *rc = &cases[k];
		int err = lower_msg(rc->p, rc->len, msg, sizeof(msg));

		EXPECT_EQ(rc->err, err) TH_LOG("%s: %s", rc->name, msg);
		if (rc->msg)
			EXPECT_NE(NULL, strstr(msg, rc->msg)) TH_LOG("%s: %s", rc->name, msg);
	}
	EXPECT_EQ(0, live_allocs);
}

#define RULE(n, e, m, ...) {							\
	.name = n, .p = (const struct bpf_insn[]){ __VA_ARGS__ },		\
	.len = sizeof((const struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn), \
	.err = e, .msg = m }

TEST(upstream_iterator_rules)
{
	const struct rule_case cases[] = {
		RULE("create_and_destroy", 0, NULL,
		     NEW_AT(-8), DESTROY_AT(-8), RET0),
		RULE("valid_stack_reuse", 0, NULL,
		     NEW_AT(-8), DESTROY_AT(-8), NEW_AT(-8), DESTROY_AT(-8), RET0),
		RULE("create_and_forget_to_destroy_fail", -EINVAL,
		     "insn 6: Unreleased reference: the bpf_iter_num at fp-8",
		     NEW_AT(-8), RET0),
		RULE("destroy_without_creating_fail", -EINVAL,
		     "insn 2: expected an initialized iter_num as arg #0",
		     DESTROY_AT(-8), RET0),
		RULE("compromise_iter_w_direct_write_fail", -EINVAL,
		     "insn 5: write into fp-8, the state of an active bpf_iter_num",
		     NEW_AT(-8), I_STX(BPF_DW, 10, 0, -8), DESTROY_AT(-8), RET0),
		RULE("compromise_iter_w_direct_write_and_skip_destroy_fail", -EINVAL,
		     "insn 5: write into fp-8",
		     NEW_AT(-8), I_STX(BPF_DW, 10, 0, -8), RET0),
		RULE("compromise_iter_w_helper_write_fail", -EACCES,
		     "insn 10: R1 (fp-1) lets the call access fp-8, the state of an active bpf_iter_num",
		     NEW_AT(-8), FP(1, -8), I_ALU64_IMM(BPF_ADD, 1, 7), I_MOV64_IMM(2, 1),
		     I_MOV64_IMM(3, 0), I_CALL_HELPER(BPF_FUNC_probe_read_kernel),
		     DESTROY_AT(-8), RET0),
		RULE("leak_iter_from_subprog_fail", -EINVAL,
		     "insn 9: Unreleased reference",
		     I_CALL_REL(2), RET0,
		     FP(1, -8), I_MOV64_IMM(2, 0), I_MOV64_IMM(3, 1),
		     I_CALL_KFUNC(ID_NEW, 1), RET0),
		RULE("double_create_fail", -EINVAL,
		     "insn 9: expected uninitialized iter_num as arg #0",
		     NEW_AT(-8), NEW_AT(-8), DESTROY_AT(-8), RET0),
		RULE("double_destroy_fail", -EINVAL,
		     "insn 10: expected an initialized iter_num as arg #0",
		     NEW_AT(-8), DESTROY_AT(-8), DESTROY_AT(-8), RET0),
		RULE("next_without_new_fail", -EINVAL,
		     "insn 2: expected an initialized iter_num as arg #0",
		     NEXT_AT(-8), DESTROY_AT(-8), RET0),
		RULE("next_after_destroy_fail", -EINVAL,
		     "insn 10: expected an initialized iter_num as arg #0",
		     NEW_AT(-8), DESTROY_AT(-8), NEXT_AT(-8), RET0),
		RULE("read_from_iter_slot_fail", -EACCES,
		     "insn 6: invalid read from stack off -24+0 size 8",
		     I_MOV64_REG(6, 10), I_ALU64_IMM(BPF_ADD, 6, -24), I_MOV64_REG(1, 6),
		     I_MOV64_IMM(2, 0), I_MOV64_IMM(3, 1000), I_CALL_KFUNC(ID_NEW, 1),
		     I_LDX(BPF_DW, 7, 6, 0), I_LDX(BPF_DW, 8, 6, 8),
		     I_MOV64_REG(1, 6), I_CALL_KFUNC(ID_DESTROY, 1),
		     I_MOV64_REG(0, 7), I_EXIT()),
		RULE("stacksafe_should_not_conflate_stack_spill_and_iter", -EINVAL,
		     "insn 12: write into fp-8",
		     I_CALL_HELPER(BPF_FUNC_get_prandom_u32), I_MOV64_REG(6, 0),
		     I_CALL_HELPER(BPF_FUNC_get_prandom_u32), I_MOV64_REG(7, 0),
		     I_JMP_REG(BPF_JGT, 6, 7, 2),				/* 4 -> 7 */
		     I_STX(BPF_DW, 10, 6, -8), I_JA(6),			/* 5, 6 -> 13 */
		     NEW_AT(-8), I_STX(BPF_DW, 10, 6, -8),			/* 7-12 */
		     I_JA(0), I_STX(BPF_DW, 10, 6, -8), RET0),		/* 13, 14 */
		RULE("wrong_sized_read_fail", -EACCES,
		     "insn 9: invalid access to memory, mem_size=4 off=0 size=8",
		     NEW_AT(-8), NEXT_AT(-8), I_JMP_IMM(BPF_JEQ, 0, 0, 1),
		     I_LDX(BPF_DW, 6, 0, 0), DESTROY_AT(-8), RET0),
		RULE("r1_after_the_call", -EACCES, "insn 5: R1 !read_ok",
		     NEW_AT(-8), I_MOV64_REG(6, 1), DESTROY_AT(-8), RET0),
		RULE("tail_call_with_an_active_iterator", -EINVAL,
		     "insn 9: tail_call would lead to reference leak",
		     I_MOV64_REG(6, 1), NEW_AT(-8), I_MOV64_REG(1, 6), I_MOV64_IMM(2, 0),
		     I_MOV64_IMM(3, 0),
		     I_CALL_HELPER(BPF_FUNC_tail_call), DESTROY_AT(-8), RET0),
		RULE("helper_buffer_below_the_iterator", 0, NULL,
		     NEW_AT(-8), FP(1, -24), I_MOV64_IMM(2, 16), I_MOV64_IMM(3, 0),
		     I_CALL_HELPER(BPF_FUNC_probe_read_kernel), DESTROY_AT(-8), RET0),
		RULE("helper_buffer_of_unknown_size_below_the_iterator", -EACCES,
		     "insn 9: R1 (fp-24) lets the call access fp-8",
		     NEW_AT(-8), FP(1, -24), I_LDX(BPF_W, 2, 10, -24), I_MOV64_IMM(3, 0),
		     I_CALL_HELPER(BPF_FUNC_probe_read_kernel), DESTROY_AT(-8), RET0),
		RULE("map_key_below_the_iterator", 0, NULL,
		     NEW_AT(-8), I_ST(BPF_W, 10, -16, 0), I_LD_MAP_FD(1, 3), FP(2, -16),
		     I_CALL_HELPER(BPF_FUNC_map_lookup_elem), DESTROY_AT(-8), RET0),
		RULE("map_key_in_the_iterator", -EACCES,
		     "insn 9: R2 (fp-10) lets the call access fp-8",
		     NEW_AT(-8), I_LD_MAP_FD(1, 3), FP(2, -10),
		     I_CALL_HELPER(BPF_FUNC_map_lookup_elem), DESTROY_AT(-8), RET0),
		RULE("variable_stack_offset_while_active", -EACCES,
		     "insn 9: stack access at an offset the module cannot tell",
		     NEW_AT(-8), I_LDX(BPF_W, 2, 10, -16), FP(1, -32),
		     I_ALU64_REG(BPF_ADD, 1, 2), I_ST(BPF_B, 1, 0, 0),
		     DESTROY_AT(-8), RET0),
		RULE("iterator_in_a_maybe_state_at_a_join", -EINVAL,
		     "insn 9: expected an initialized iter_num as arg #0",
		     I_CALL_HELPER(BPF_FUNC_get_prandom_u32),
		     I_JMP_IMM(BPF_JEQ, 0, 0, 5), NEW_AT(-8),
		     DESTROY_AT(-8), RET0),
		/* verifier_iterating_callbacks.c: may_goto loops upstream proves infinite. */
		RULE("may_goto_self", -EINVAL, "insn 1: infinite loop detected at insn 1",
		     I_LDX(BPF_W, 0, 10, -4), I_MAY_GOTO(-1), I_JMP_IMM(BPF_JGT, 0, 10, -2),
		     RET0),
		RULE("jgt_imm64_and_may_goto", -EINVAL, "insn 2: infinite loop detected at insn 2",
		     I_LD_IMM64(0, 12345), I_MAY_GOTO(-3), I_JMP_IMM(BPF_JGT, 0, 10, -2),
		     RET0),
		RULE("may_goto_neg_off", 0, NULL,
		     I_LDX(BPF_W, 0, 10, -4), I_JA(1), I_JA(1), I_MAY_GOTO(-2),
		     I_JMP_IMM(BPF_JGT, 0, 10, -2), RET0),
		/* iters_looping.c's widening_stack_size_bug: a void subprogram's R0. */
		RULE("void_subprogram_ends_after_destroy", 0, NULL,
		     I_CALL_REL(2), RET0,
		     NEW_AT(-8), DESTROY_AT(-8), I_EXIT()),
		RULE("r0_after_destroy_at_main_exit", -EACCES, "insn 8: R0 !read_ok",
		     NEW_AT(-8), DESTROY_AT(-8), I_EXIT()),
		/* iters.c's iter_search_loop: elem = NULL or next()'s pointer, read after. */
		RULE("pointer_or_null_read_after_the_loop", 0, NULL,
		     I_MOV64_IMM(6, 0), NEW_AT(-8), NEXT_AT(-8),
		     I_JMP_IMM(BPF_JEQ, 0, 0, 1), I_MOV64_REG(6, 0),
		     I_JMP_IMM(BPF_JEQ, 6, 0, 1), I_LDX(BPF_W, 7, 6, 0),
		     DESTROY_AT(-8), RET0),
		RULE("misaligned_iterator", -EINVAL,
		     "insn 4: bpf_iter_num_new(): cannot pass in iter at an offset=-12",
		     NEW_AT(-12), DESTROY_AT(-12), RET0),
	};
	check_rules(_metadata, cases, ARRAY_SIZE(cases));
}

/* Programs 6.12 refuses that reach an iterator other than through its slot's address. */
TEST(iterator_reached_by_other_routes)
{
	const struct rule_case cases[] = {
		/*
		 * A static callee given r10-8 writes 8 bytes BELOW it: fp-16,
		 * the active iterator.  check_arg() counts a pointer passed to a
		 * subprogram as reaching upward only (to the frame top).
		 */
		RULE("callee_writes_below_its_pointer_into_iter", -EACCES, "fp-16",
		     NEW_AT(-16),					/* 0-4 */
		     FP(1, -8), I_CALL_REL(5),				/* 5-7 -> 13 */
		     DESTROY_AT(-16), RET0,				/* 8-12 */
		     I_ST(BPF_DW, 1, -8, 0), RET0),			/* 13-15 */
		RULE("callee_reads_below_its_pointer_from_iter", -EACCES, "fp-16",
		     NEW_AT(-16),					/* 0-4 */
		     FP(1, -8), I_CALL_REL(5),				/* 5-7 -> 13 */
		     DESTROY_AT(-16), RET0,				/* 8-12 */
		     I_LDX(BPF_DW, 0, 1, -8), I_EXIT()),		/* 13-14 */
		/*
		 * next()'s int * is rdonly_mem upstream (selftest
		 * iter_next_ptr_mem_not_trusted: "R1 cannot write into
		 * rdonly_mem"); a store through it resets the counter.
		 */
		RULE("store_through_next_pointer", -EACCES, "rdonly",
		     NEW_AT(-8), NEXT_AT(-8),				/* 0-7 */
		     I_JMP_IMM(BPF_JEQ, 0, 0, 1),			/* 8 -> 10 */
		     I_ST(BPF_W, 0, 0, 0),				/* 9 */
		     DESTROY_AT(-8), RET0),
		RULE("atomic_through_next_pointer", -EACCES, "rdonly",
		     NEW_AT(-8), NEXT_AT(-8), I_MOV64_IMM(6, -1),	/* 0-8 */
		     I_JMP_IMM(BPF_JEQ, 0, 0, 1),			/* 9 -> 11 */
		     I_ATOMIC(BPF_W, BPF_ADD, 0, 6, 0),			/* 10 */
		     DESTROY_AT(-8), RET0),
		RULE("helper_writes_through_next_pointer", -EACCES, "rdonly",
		     NEW_AT(-8), NEXT_AT(-8),				/* 0-7 */
		     I_JMP_IMM(BPF_JEQ, 0, 0, 4),			/* 8 -> 13 */
		     I_MOV64_REG(1, 0), I_MOV64_IMM(2, 4), I_MOV64_IMM(3, 0),
		     I_CALL_HELPER(BPF_FUNC_probe_read_kernel),		/* 12 */
		     DESTROY_AT(-8), RET0),
		/* A tail call from a static callee while main's iterator is active. */
		RULE("tail_call_in_callee_with_callers_iterator", -EINVAL,
		     "tail_call would lead to reference leak",
		     I_MOV64_REG(6, 1), NEW_AT(-8),			/* 0-5 */
		     I_MOV64_REG(1, 6), I_CALL_REL(5),			/* 6-7 -> 13 */
		     DESTROY_AT(-8), RET0,				/* 8-12 */
		     I_MOV64_IMM(2, 0), I_MOV64_IMM(3, 0),
		     I_CALL_HELPER(BPF_FUNC_tail_call), RET0),		/* 13-17 */
	};
	check_rules(_metadata, cases, ARRAY_SIZE(cases));
}

/* Offsets at the ends of s32 (UBSan in iter_unit_test_san): no overflow in the check. */
TEST(iter_state_offsets_do_not_overflow)
{
	const struct bpf_insn p[] = {
		NEW_AT(-8),						/* 0-4 */
		I_MOV64_REG(4, 10), I_ALU64_IMM(BPF_SUB, 4, INT_MIN),	/* 5-6 */
		I_MOV64_REG(5, 10), I_ALU64_IMM(BPF_ADD, 5, 1),		/* 7-8 */
		I_MOV64_IMM(7, 0x7fffffff), I_ALU64_REG(BPF_ADD, 7, 5),	/* 9-10 */
		I_LDX(BPF_W, 0, 7, 0x7fff),				/* 11 */
		DESTROY_AT(-8), RET0,
	};
	char msg[BPFA_MSG_LEN];

	lower_msg(p, ARRAY_SIZE(p), msg, sizeof(msg));
	EXPECT_EQ(0, live_allocs);
}

TEST_HARNESS_MAIN

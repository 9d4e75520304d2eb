// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of rewrite/loops.c (docs/LOOPS.md).  Each program is run before the
 * pass (may_goto with upstream's per-frame budget of 8M) and after it
 * (bpf_loop + the outlined global body) by tests/unit/bpf_interp.h, and the
 * two results must agree; the refusals are checked by message; random
 * mutations of the programs must never crash the pass.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"

#include <linux/btf.h>

#include "loops.h"
#include "log_xlate.h"
#include "bpf_interp.h"
#include "rewrite_env.h"
#include "ctx_join_prog.h"

static const struct bpfa_loops_env env = { .zalloc = t_zalloc, .free = t_free };
/* A program type whose context is memory (syscall): a loop body may take it. */
static const struct bpfa_loops_env env_ctx_mem = {
	.zalloc = t_zalloc, .free = t_free, .ctx_mem = true,
};
/* The environment of the pass under test (each TEST runs in its own process). */
static const struct bpfa_loops_env *t_env = &env;

/* Runs p before and after the pass on ctx copies; both r0 and ctx must agree. */
#define SAME_RESULT(p, ctx_init, nctx)						\
	({									\
		uint64_t __c1[nctx], __c2[nctx], __r1, __r2;			\
		struct bpfa_loops_result __res;					\
		struct bi __vm = { 0 };						\
		memcpy(__c1, ctx_init, sizeof(__c1));				\
		memcpy(__c2, ctx_init, sizeof(__c2));				\
		__vm.map_values[0] = map0;					\
		__r1 = bi_exec(&__vm, p, ARRAY_SIZE(p), __c1);				\
		ASSERT_FALSE(__vm.fault) TH_LOG("original: %s", __vm.why);	\
		ASSERT_EQ(0, bpfa_loops(t_env, p, ARRAY_SIZE(p), &__res)) TH_LOG("%s", __res.msg); \
		__vm.map_values[0] = map1;					\
		__r2 = bi_exec(&__vm, __res.insns, __res.len, __c2);		\
		ASSERT_FALSE(__vm.fault) TH_LOG("translated: %s", __vm.why);	\
		ASSERT_EQ(__r1, __r2);						\
		ASSERT_EQ(0, memcmp(__c1, __c2, sizeof(__c1)));			\
		ASSERT_EQ(0, memcmp(map0, map1, sizeof(map0)));			\
		bpfa_loops_free(&env, &__res);					\
		ASSERT_EQ(0, live_allocs);					\
		__r1;								\
	})

static uint64_t map0[4], map1[4];

/* sum of 0..n-1 with can_loop: ctx[0] = n, ctx[1] = sum; r0 = iterations */
static const struct bpf_insn sum_prog[] = {
	I_MOV64_REG(9, 1),		/* 0: ctx passes by the loop */
	I_LDX(BPF_DW, 8, 1, 0),		/* 1 */
	I_MOV64_IMM(6, 0),		/* 2 */
	I_MOV64_IMM(7, 0),		/* 3 */
	I_MAY_GOTO(4),		/* 4: loop head -> 9 */
	I_JMP_REG(BPF_JGE, 7, 8, 3),	/* 5 -> 9 */
	I_ALU64_REG(BPF_ADD, 6, 7),		/* 6 */
	I_ALU64_IMM(BPF_ADD, 7, 1),		/* 7 */
	I_JA(-5),			/* 8 -> 4 */
	I_STX(BPF_DW, 9, 6, 8),		/* 9 */
	I_MOV64_REG(0, 7),		/* 10 */
	I_EXIT(),			/* 11 */
};

TEST(sum_100k_matches_and_is_outlined)
{
	uint64_t ctx[2] = { 100000, 0 };
	struct bpfa_loops_result res;

	ASSERT_TRUE(bpfa_loops_needed(sum_prog, ARRAY_SIZE(sum_prog)));
	ASSERT_EQ(100000, SAME_RESULT(sum_prog, ctx, 2));
	ASSERT_EQ(0, bpfa_loops(&env, sum_prog, ARRAY_SIZE(sum_prog), &res));
	EXPECT_EQ(1, res.loops);
	EXPECT_EQ(3, res.func_info_cnt);
	EXPECT_EQ(0, res.func_info[0].insn_off);
	EXPECT_NE(0, res.btf_size);
	/* No may_goto survives. */
	EXPECT_FALSE(bpfa_loops_needed(res.insns, res.len));
	bpfa_loops_free(&env, &res);
}

/* Budget exhaustion: the loop only ends through may_goto, after 8M rounds. */
static const struct bpf_insn budget_prog[] = {
	I_MOV64_IMM(6, 0),		/* 0 */
	I_MAY_GOTO(2),		/* 1 -> 4 */
	I_ALU64_IMM(BPF_ADD, 6, 1),		/* 2 */
	I_JA(-3),			/* 3 -> 1 */
	I_MOV64_REG(0, 6),		/* 4 */
	I_EXIT(),			/* 5 */
};

TEST(budget_exhaustion_exits_through_may_goto)
{
	uint64_t ctx[1] = { 0 };

	ASSERT_EQ(BPFA_MAX_LOOPS, SAME_RESULT(budget_prog, ctx, 1));
}

/* Two exits and an `exit` inside the loop: ctx[0] = limit. */
static const struct bpf_insn multi_exit_prog[] = {
	I_MOV64_REG(9, 1),		/* 0 */
	I_LDX(BPF_DW, 7, 1, 0),		/* 1 */
	I_MOV64_IMM(6, 0),		/* 2 */
	I_MAY_GOTO(10),		/* 3: head -> 14 */
	I_JMP_IMM(BPF_JNE, 6, 7, 2),	/* 4 -> 7 */
	I_MOV64_IMM(0, 77),		/* 5 */
	I_EXIT(),			/* 6: return from inside the loop */
	I_JMP_REG(BPF_JGE, 6, 7, 2),	/* 7 -> 10 */
	I_ALU64_IMM(BPF_ADD, 6, 1),		/* 8 */
	I_JA(-7),			/* 9 -> 3 */
	I_STX(BPF_DW, 9, 6, 8),		/* 10 */
	I_MOV64_IMM(0, 1),		/* 11 */
	I_EXIT(),			/* 12 */
	I_EXIT(),			/* 13 (dead) */
	I_MOV64_IMM(0, 2),		/* 14 */
	I_EXIT(),			/* 15 */
};

TEST(multiple_exits)
{
	uint64_t a[2] = { 5, 0 }, b[2] = { 10, 0 };

	ASSERT_EQ(1, SAME_RESULT(multi_exit_prog, a, 2));
	ASSERT_EQ(77, SAME_RESULT(multi_exit_prog, b, 2));
}

/* do { sum += n } while (--n && can_loop): a conditional back edge at the end. */
static const struct bpf_insn do_while_prog[] = {
	I_LDX(BPF_DW, 7, 1, 0),		/* 0 */
	I_MOV64_IMM(6, 0),		/* 1 */
	I_MAY_GOTO(5),		/* 2: head -> 8 */
	I_ALU64_REG(BPF_ADD, 6, 7),		/* 3 */
	I_ALU64_IMM(BPF_ADD, 7, -1),		/* 4 */
	I_JMP_IMM(BPF_JNE, 7, 0, -4),	/* 5 -> 2; falls out to 6 */
	I_MOV64_REG(0, 6),		/* 6 */
	I_EXIT(),			/* 7 */
	I_MOV64_IMM(0, -1),		/* 8 */
	I_EXIT(),			/* 9 */
};

TEST(conditional_back_edge_falls_out)
{
	uint64_t ctx[1] = { 10 };

	ASSERT_EQ(55, SAME_RESULT(do_while_prog, ctx, 1));
}

/* A map value pointer from ld_imm64 crosses the head: re-derived in the body. */
static const struct bpf_insn map_prog[] = {
	I_LD_MAP_VALUE(8, 0, 0),		/* 0-1 */
	I_MOV64_IMM(7, 0),		/* 2 */
	I_MAY_GOTO(6),		/* 3: head -> 10 */
	I_JMP_IMM(BPF_JGE, 7, 10, 5),	/* 4 -> 10 */
	I_LDX(BPF_DW, 2, 8, 0),		/* 5 */
	I_ALU64_REG(BPF_ADD, 2, 7),		/* 6 */
	I_STX(BPF_DW, 8, 2, 0),		/* 7 */
	I_ALU64_IMM(BPF_ADD, 7, 1),		/* 8 */
	I_JA(-7),			/* 9 -> 3 */
	I_LDX(BPF_DW, 0, 8, 0),		/* 10 */
	I_EXIT(),			/* 11 */
};

TEST(map_value_pointer_rederived)
{
	uint64_t ctx[1] = { 0 };

	memset(map0, 0, sizeof(map0));
	memset(map1, 0, sizeof(map1));
	ASSERT_EQ(45, SAME_RESULT(map_prog, ctx, 1));
}

/* may_goto outside any loop: a plain budget test in place. */
static const struct bpf_insn straight_prog[] = {
	I_MOV64_IMM(0, 1),
	I_MAY_GOTO(1),
	I_MOV64_IMM(0, 2),
	I_EXIT(),
};

TEST(may_goto_outside_loops)
{
	uint64_t ctx[1] = { 0 };

	ASSERT_EQ(2, SAME_RESULT(straight_prog, ctx, 1));
}

/* A 100k-node linked list in host memory: node = { next, value }. */
TEST(list_walk_100k)
{
	static uint64_t nodes[100000][2];
	const struct bpf_insn p[] = {
		I_MOV64_REG(9, 1),		/* 0 */
		I_LDX(BPF_DW, 2, 1, 0),		/* 1: head */
		I_MOV64_IMM(6, 0),		/* 2 */
		I_JMP_IMM(BPF_JEQ, 2, 0, 5),	/* 3: head -> 9 */
		I_LDX(BPF_DW, 3, 2, 8),		/* 4 */
		I_ALU64_REG(BPF_ADD, 6, 3),		/* 5 */
		I_LDX(BPF_DW, 2, 2, 0),		/* 6 */
		I_MAY_GOTO(1),		/* 7 -> 9 */
		I_JA(-6),			/* 8 -> 3 */
		I_STX(BPF_DW, 9, 6, 8),		/* 9 */
		I_MOV64_IMM(0, 0),		/* 10 */
		I_EXIT(),			/* 11 */
	};
	uint64_t ctx[2], sum = 0;
	unsigned int i;

	for (i = 0; i < 100000; i++) {
		nodes[i][0] = i + 1 < 100000 ? (uint64_t)(uintptr_t)nodes[i + 1] : 0;
		nodes[i][1] = i * 3 + 1;
		sum += i * 3 + 1;
	}
	ctx[0] = (uint64_t)(uintptr_t)nodes[0];
	ctx[1] = 0;
	SAME_RESULT(p, ctx, 2);
	{
		struct bi vm = { 0 };
		struct bpfa_loops_result res;

		struct bi vm0 = { 0 };

		ASSERT_EQ(0, bpfa_loops(&env, p, ARRAY_SIZE(p), &res));
		bi_exec(&vm0, p, ARRAY_SIZE(p), ctx);
		bi_exec(&vm, res.insns, res.len, ctx);
		ASSERT_FALSE(vm.fault);
		EXPECT_EQ(sum, ctx[1]);
		/* The cost the README quotes: insns executed per iteration. */
		TH_LOG("list walk: %.1f insns per iteration before the pass, %.1f after (%u insns)",
		       vm0.steps / 100000.0, vm.steps / 100000.0, res.len);
		bpfa_loops_free(&env, &res);
	}
}

/* ---- refusals ---- */

#define REFUSED(p, needle)							\
	do {									\
		struct bpfa_loops_result __res;					\
		ASSERT_EQ(-EINVAL, bpfa_loops(t_env, p, ARRAY_SIZE(p), &__res));	\
		EXPECT_NE(NULL, strstr(__res.msg, needle)) TH_LOG("%s", __res.msg); \
		EXPECT_EQ(0, strncmp(__res.msg, "bpf_arena: insn ", 16));	\
		EXPECT_EQ(NULL, __res.insns);					\
		EXPECT_EQ(0, live_allocs);					\
	} while (0)

/*
 * A loop that keeps its counter and sum in stack slots (clang's spills):
 * the body mirrors them at the same offsets, the driver copies them in and
 * the written ones back.  ctx[0] = n; r0 = sum of 0..n-1 + the slot the loop
 * only reads (7).
 */
static const struct bpf_insn stack_prog[] = {
	I_LDX(BPF_DW, 8, 1, 0),		/* 0: n */
	I_MOV64_IMM(6, 0),		/* 1 */
	I_STX(BPF_DW, 10, 6, -8),		/* 2: i = 0 */
	I_STX(BPF_DW, 10, 6, -16),	/* 3: sum = 0 */
	I_MOV64_IMM(6, 7),		/* 4 */
	I_STX(BPF_DW, 10, 6, -24),	/* 5: read-only slot */
	I_MAY_GOTO(8),		/* 6: head -> 15 */
	I_LDX(BPF_DW, 6, 10, -8),		/* 7: i */
	I_JMP_REG(BPF_JGE, 6, 8, 6),	/* 8 -> 15 */
	I_LDX(BPF_DW, 7, 10, -16),	/* 9 */
	I_ALU64_REG(BPF_ADD, 7, 6),		/* 10 */
	I_STX(BPF_DW, 10, 7, -16),	/* 11 */
	I_ALU64_IMM(BPF_ADD, 6, 1),		/* 12 */
	I_STX(BPF_DW, 10, 6, -8),		/* 13 */
	I_JA(-9),			/* 14 -> 6 */
	I_LDX(BPF_DW, 0, 10, -16),	/* 15 */
	I_LDX(BPF_DW, 7, 10, -24),	/* 16 */
	I_ALU64_REG(BPF_ADD, 0, 7),		/* 17 */
	I_EXIT(),
};

TEST(stack_slots_are_mirrored)
{
	uint64_t ctx[1] = { 1000 };

	ASSERT_EQ(999 * 1000 / 2 + 7, SAME_RESULT(stack_prog, ctx, 1));
	ctx[0] = 0;
	ASSERT_EQ(7, SAME_RESULT(stack_prog, ctx, 1));
}

/* A stack pointer kept in a register across the head is re-derived in the body. */
TEST(stack_pointer_rederived)
{
	const struct bpf_insn p[] = {
		I_MOV64_REG(9, 10),		/* 0 */
		I_ALU64_IMM(BPF_ADD, 9, -8),		/* 1: r9 = fp - 8 */
		I_MOV64_IMM(6, 0),		/* 2 */
		I_STX(BPF_DW, 9, 6, 0),		/* 3 */
		I_MAY_GOTO(5),		/* 4: head -> 10 */
		I_LDX(BPF_DW, 6, 9, 0),		/* 5 */
		I_ALU64_IMM(BPF_ADD, 6, 3),		/* 6 */
		I_STX(BPF_DW, 9, 6, 0),		/* 7 */
		I_JMP_IMM(BPF_JLT, 6, 300, -5),	/* 8 -> 4 */
		I_JA(0),			/* 9 */
		I_LDX(BPF_DW, 0, 10, -8),		/* 10 */
		I_EXIT(),
	};
	uint64_t ctx[1] = { 0 };

	ASSERT_EQ(300, SAME_RESULT(p, ctx, 1));
}

TEST(refuses_stack_pointer_stored_to_memory)
{
	const struct bpf_insn p[] = {
		I_MOV64_IMM(6, 0),
		I_MAY_GOTO(3),
		I_STX(BPF_DW, 1, 10, 0),
		I_ALU64_IMM(BPF_ADD, 6, 1),
		I_JA(-4),
		I_MOV64_REG(0, 6),
		I_EXIT(),
	};

	REFUSED(p, "stores a stack pointer to memory");
}

/*
 * With line_info, a refusal names the source line of its insn: the last
 * record at or before it, the file's base name.  A file name without a NUL
 * in its first 256 bytes gives no place (bounded work on crafted BTF).
 */
TEST(refusal_names_the_source_line)
{
	static const char name_ok[] = "\0int\0prog\0src/dir/list.bpf.c";
	const struct bpf_insn p[] = {
		I_MOV64_IMM(6, 0),
		I_MAY_GOTO(3),
		I_STX(BPF_DW, 1, 10, 0),
		I_ALU64_IMM(BPF_ADD, 6, 1),
		I_JA(-4),
		I_MOV64_REG(0, 6),
		I_EXIT(),
	};
	struct {
		struct btf_header h;
		__u32 t[3 + 1 + 3 + 3];
		char s[400];
	} __attribute__((packed)) blob = {
		.h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(struct btf_header),
		       .type_off = 0, .type_len = 40, .str_off = 40 },
		.t = { 1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
		       0, BTF_KIND_FUNC_PROTO << 24, 1,
		       5, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 2 },
	};
	const struct bpf_line_info li[] = {
		{ .insn_off = 0, .file_name_off = 10, .line_col = 30 << 10 },
		{ .insn_off = 2, .file_name_off = 10, .line_col = 41 << 10 },
		{ .insn_off = 3, .file_name_off = 10, .line_col = 42 << 10 },
	};
	const struct bpf_func_info fi = { 0, 3 };
	struct bpfa_loops_env e = env;
	struct bpfa_loops_result res;

	memcpy(blob.s, name_ok, sizeof(name_ok));
	blob.h.str_len = sizeof(name_ok);
	e.has_btf = true;
	e.btf = &blob;
	e.btf_size = sizeof(blob.h) + 40 + sizeof(name_ok);
	e.func_info = &fi;
	e.func_info_cnt = 1;
	e.func_info_rec_size = sizeof(fi);
	e.line_info = li;
	e.line_info_cnt = ARRAY_SIZE(li);
	e.line_info_rec_size = sizeof(li[0]);
	ASSERT_EQ(-EINVAL, bpfa_loops(&e, p, ARRAY_SIZE(p), &res));
	EXPECT_EQ(0, strncmp(res.msg, "bpf_arena: insn 2 (list.bpf.c:41): ", 35)) TH_LOG("%s", res.msg);
	EXPECT_NE(NULL, strstr(res.msg, "stores a stack pointer to memory")) TH_LOG("%s", res.msg);
	EXPECT_EQ(0, live_allocs);

	/* 300 bytes of name, no NUL within the bound: the message without a place. */
	memset(blob.s + 10, 'a', 300);
	blob.s[310] = 0;
	blob.h.str_len = 311;
	e.btf_size = sizeof(blob.h) + 40 + 311;
	ASSERT_EQ(-EINVAL, bpfa_loops(&e, p, ARRAY_SIZE(p), &res));
	EXPECT_EQ(0, strncmp(res.msg, "bpf_arena: insn 2: ", 19)) TH_LOG("%s", res.msg);
	EXPECT_EQ(0, live_allocs);
}

TEST(refuses_ctx_used_in_loop)
{
	const struct bpf_insn p[] = {
		I_MOV64_REG(9, 1),
		I_MOV64_IMM(6, 0),
		I_MAY_GOTO(3),
		I_LDX(BPF_DW, 2, 9, 0),
		I_ALU64_REG(BPF_ADD, 6, 2),
		I_JA(-4),
		I_MOV64_REG(0, 6),
		I_EXIT(),
	};

	REFUSED(p, "R9 holds the context pointer, which a loop body cannot receive for this program type");
}

/*
 * Where the context is memory (syscall programs), the body takes it as a
 * second argument: read and written inside the loop, from a register.
 * ctx[0] = what to add, ctx[1] = the running sum, written each iteration.
 */
static const struct bpf_insn ctx_loop_prog[] = {
	I_MOV64_REG(9, 1),		/* 0 */
	I_MOV64_IMM(6, 0),		/* 1 */
	I_MOV64_IMM(7, 0),		/* 2 */
	I_MAY_GOTO(6),		/* 3: head -> 10 */
	I_JMP_IMM(BPF_JGE, 7, 100, 5),	/* 4 -> 10 */
	I_LDX(BPF_DW, 2, 9, 0),		/* 5 */
	I_ALU64_REG(BPF_ADD, 6, 2),		/* 6 */
	I_STX(BPF_DW, 9, 6, 8),		/* 7 */
	I_ALU64_IMM(BPF_ADD, 7, 1),		/* 8 */
	I_JA(-7),			/* 9 -> 3 */
	I_MOV64_REG(0, 6),		/* 10 */
	I_EXIT(),			/* 11 */
};

TEST(ctx_read_and_written_in_loop)
{
	uint64_t ctx[2] = { 3, 0 };
	struct bpfa_loops_result res;

	t_env = &env_ctx_mem;
	ASSERT_EQ(300, SAME_RESULT(ctx_loop_prog, ctx, 2));
	/* The body's prototype takes the context as 16 bytes: u8 (*ctx)[16]. */
	ASSERT_EQ(0, bpfa_loops(t_env, ctx_loop_prog, ARRAY_SIZE(ctx_loop_prog), &res));
	EXPECT_EQ(1, res.loops);
	bpfa_loops_free(t_env, &res);
}

/* The same with the context spilled to a slot the loop reads (clang at -O2). */
static const struct bpf_insn ctx_spilled_prog[] = {
	I_STX(BPF_DW, 10, 1, -16),		/* 0 */
	I_MOV64_IMM(6, 0),		/* 1 */
	I_MOV64_IMM(7, 0),		/* 2 */
	I_MAY_GOTO(7),		/* 3: head -> 11 */
	I_JMP_IMM(BPF_JGE, 7, 100, 6),	/* 4 -> 11 */
	I_LDX(BPF_DW, 2, 10, -16),		/* 5 */
	I_LDX(BPF_DW, 3, 2, 0),		/* 6 */
	I_ALU64_REG(BPF_ADD, 6, 3),		/* 7 */
	I_STX(BPF_DW, 2, 6, 8),		/* 8 */
	I_ALU64_IMM(BPF_ADD, 7, 1),		/* 9 */
	I_JA(-8),			/* 10 -> 3 */
	I_MOV64_REG(0, 6),		/* 11 */
	I_EXIT(),			/* 12 */
};

TEST(ctx_spilled_and_read_in_loop)
{
	uint64_t ctx[2] = { 3, 0 };
	struct bpf_insn p[ARRAY_SIZE(ctx_spilled_prog)];

	t_env = &env_ctx_mem;
	ASSERT_EQ(300, SAME_RESULT(ctx_spilled_prog, ctx, 2));
	/* A loop that writes the slot (here the context again) is refused by name. */
	memcpy(p, ctx_spilled_prog, sizeof(p));
	p[9] = (struct bpf_insn)I_STX(BPF_DW, 10, 2, -16);
	REFUSED(p, "writes fp-16, where the context pointer is kept");
	EXPECT_EQ(0, live_allocs);
}

/* What the verifier checks of a context, checked of one the body gets as memory. */
TEST(ctx_in_loop_refusals)
{
	struct bpf_insn p[ARRAY_SIZE(ctx_loop_prog)];

	t_env = &env_ctx_mem;
	memcpy(p, ctx_loop_prog, sizeof(p));
	p[5] = (struct bpf_insn)I_LDX(BPF_DW, 2, 9, 4);
	do {
		struct bpfa_loops_result __res;

		ASSERT_EQ(-EACCES, bpfa_loops(t_env, p, ARRAY_SIZE(p), &__res));
		EXPECT_NE(NULL, strstr(__res.msg, "insn 5: invalid bpf_context access off=4 size=8"))
			TH_LOG("%s", __res.msg);
	} while (0);
	memcpy(p, ctx_loop_prog, sizeof(p));
	p[7] = (struct bpf_insn)I_ATOMIC(BPF_DW, BPF_ADD, 9, 6, 8);
	do {
		struct bpfa_loops_result __res;

		ASSERT_EQ(-EACCES, bpfa_loops(t_env, p, ARRAY_SIZE(p), &__res));
		EXPECT_NE(NULL, strstr(__res.msg, "insn 7: BPF_ATOMIC stores into R9 ctx is not allowed"))
			TH_LOG("%s", __res.msg);
	} while (0);
	memcpy(p, ctx_loop_prog, sizeof(p));
	p[7] = (struct bpf_insn)I_MOV64_REG(1, 9);
	p[8] = (struct bpf_insn)I_CALL_HELPER(BPF_FUNC_get_current_comm);
	REFUSED(p, "passes the context to a call");
	memcpy(p, ctx_loop_prog, sizeof(p));
	p[7] = (struct bpf_insn)I_STX(BPF_DW, 10, 9, -8);
	REFUSED(p, "stores the context pointer to memory");
	EXPECT_EQ(0, live_allocs);
}

TEST(refuses_register_written_on_some_paths)
{
	const struct bpf_insn p[] = {
		I_LDX(BPF_DW, 7, 1, 0),		/* 0 */
		I_JMP_IMM(BPF_JEQ, 7, 0, 1),	/* 1 -> 3 */
		I_MOV64_IMM(6, 5),		/* 2 */
		I_MAY_GOTO(2),		/* 3: head -> 6 */
		I_MOV64_IMM(6, 1),		/* 4 */
		I_JA(-3),			/* 5 -> 3 */
		I_MOV64_REG(0, 6),		/* 6 */
		I_EXIT(),
	};

	REFUSED(p, "R6 may be uninitialised where the loop is entered");
}

/* Nested loops: the inner may_goto is outlined in a second round, inside the outer body. */
static const struct bpf_insn nested_prog[] = {
	I_LDX(BPF_DW, 8, 1, 0),		/* 0: n */
	I_MOV64_IMM(6, 0),		/* 1: sum */
	I_MOV64_IMM(7, 0),		/* 2: i */
	I_MAY_GOTO(9),		/* 3: outer head -> 13 */
	I_JMP_REG(BPF_JGE, 7, 8, 8),	/* 4 -> 13 */
	I_MOV64_IMM(5, 0),		/* 5: j */
	I_MAY_GOTO(4),		/* 6: inner head -> 11 */
	I_JMP_REG(BPF_JGE, 5, 7, 3),	/* 7 -> 11 */
	I_ALU64_REG(BPF_ADD, 6, 5),		/* 8 */
	I_ALU64_IMM(BPF_ADD, 5, 1),		/* 9 */
	I_JA(-5),			/* 10 -> 6 */
	I_ALU64_IMM(BPF_ADD, 7, 1),		/* 11 */
	I_JA(-10),		/* 12 -> 3 */
	I_MOV64_REG(0, 6),		/* 13 */
	I_EXIT(),
};

TEST(nested_loops)
{
	uint64_t ctx[1] = { 50 };
	struct bpfa_loops_result res;

	ASSERT_EQ(19600, SAME_RESULT(nested_prog, ctx, 1));	/* C(50, 3) */
	ASSERT_EQ(0, bpfa_loops(&env, nested_prog, ARRAY_SIZE(nested_prog), &res));
	EXPECT_EQ(2, res.loops);
	/* main, then per loop a callback and a body */
	EXPECT_EQ(5, res.func_info_cnt);
	EXPECT_FALSE(bpfa_loops_needed(res.insns, res.len));
	bpfa_loops_free(&env, &res);
	EXPECT_EQ(0, live_allocs);
}

/* An inner loop without may_goto stays a bounded loop in the body. */
TEST(nested_bounded_loop)
{
	const struct bpf_insn p[] = {
		I_MOV64_IMM(6, 0),		/* 0 */
		I_MAY_GOTO(5),		/* 1 -> 7 */
		I_MOV64_IMM(7, 0),		/* 2 */
		I_ALU64_IMM(BPF_ADD, 7, 1),		/* 3: inner */
		I_JMP_IMM(BPF_JLT, 7, 4, -2),	/* 4 -> 3 */
		I_ALU64_REG(BPF_ADD, 6, 7),		/* 5 */
		I_JMP_IMM(BPF_JLT, 6, 40, -6),	/* 6 -> 1 */
		I_MOV64_REG(0, 6),		/* 7 */
		I_EXIT(),
	};
	uint64_t ctx[1] = { 0 };

	ASSERT_EQ(40, SAME_RESULT(p, ctx, 1));
}

/*
 * The budget is the function's, shared by nested loops as upstream's: an
 * endless inner loop uses it up, then the outer loop's may_goto exits too.
 */
TEST(nested_loops_share_the_budget)
{
	const struct bpf_insn p[] = {
		I_MOV64_REG(9, 1),		/* 0 */
		I_MOV64_IMM(6, 0),		/* 1 */
		I_MOV64_IMM(7, 0),		/* 2 */
		I_MAY_GOTO(5),		/* 3: outer -> 9 */
		I_MAY_GOTO(2),		/* 4: inner -> 7 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 5 */
		I_JA(-3),			/* 6 -> 4 */
		I_ALU64_IMM(BPF_ADD, 7, 1),		/* 7 */
		I_JMP_IMM(BPF_JLT, 7, 3, -6),	/* 8 -> 3 */
		I_STX(BPF_DW, 9, 7, 0),		/* 9 */
		I_MOV64_REG(0, 6),		/* 10 */
		I_EXIT(),
	};
	uint64_t ctx[1] = { 0 };

	ASSERT_EQ(BPFA_MAX_LOOPS - 1, SAME_RESULT(p, ctx, 1));
}

/* clang's rotated loops: entered at E, the lowest insn elsewhere. */
TEST(loop_entered_in_the_middle)
{
	const struct bpf_insn p[] = {
		I_LDX(BPF_DW, 8, 1, 0),		/* 0: n */
		I_MOV64_IMM(6, 0),		/* 1 */
		I_MOV64_IMM(7, 0),		/* 2 */
		I_JA(3),			/* 3 -> 7: enter at E */
		I_ALU64_REG(BPF_ADD, 6, 7),		/* 4: body, below E */
		I_ALU64_IMM(BPF_ADD, 7, 1),		/* 5 */
		I_MOV64_IMM(0, 0),		/* 6 */
		I_MAY_GOTO(2),		/* 7: E -> 10 */
		I_JMP_REG(BPF_JLT, 7, 8, -5),	/* 8 -> 4 */
		I_JA(0),			/* 9 */
		I_MOV64_REG(0, 6),		/* 10 */
		I_EXIT(),
	};
	const struct bpf_insn two_entries[] = {
		I_MOV64_IMM(6, 0),		/* 0 */
		I_JMP_IMM(BPF_JEQ, 6, 1, 2),	/* 1 -> 4 */
		I_MAY_GOTO(3),		/* 2: head -> 6 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 3 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 4 */
		I_JA(-4),			/* 5 -> 2 */
		I_MOV64_REG(0, 6),		/* 6 */
		I_EXIT(),
	};
	uint64_t ctx[1] = { 100 };

	ASSERT_EQ(99 * 100 / 2, SAME_RESULT(p, ctx, 1));
	REFUSED(two_entries, "is entered at insns 4 and 2");
}

/* A loop calling a subprogram: the call is relocated into the body. */
static const struct bpf_insn subprog_prog[] = {
	I_MOV64_IMM(6, 0),		/* 0 */
	I_MOV64_IMM(7, 0),		/* 1 */
	I_MAY_GOTO(5),		/* 2: head -> 8 */
	I_MOV64_REG(1, 7),		/* 3 */
	I_CALL_REL(5),		/* 4 -> 10 */
	I_ALU64_REG(BPF_ADD, 6, 0),		/* 5 */
	I_ALU64_IMM(BPF_ADD, 7, 1),		/* 6 */
	I_JMP_IMM(BPF_JLT, 7, 10, -6),	/* 7 -> 2 */
	I_MOV64_REG(0, 6),		/* 8 */
	I_EXIT(),			/* 9 */
	I_MOV64_REG(0, 1),		/* 10: sub */
	I_RAW(BPF_ALU64 | BPF_LSH | BPF_K, 0, 0, 0, 1),
	I_EXIT(),
};

TEST(loop_calling_a_subprogram)
{
	uint64_t ctx[1] = { 0 };
	struct bpfa_loops_result res;

	ASSERT_EQ(90, SAME_RESULT(subprog_prog, ctx, 1));
	ASSERT_EQ(0, bpfa_loops(&env, subprog_prog, ARRAY_SIZE(subprog_prog), &res));
	/* main, the subprogram, the callback and the body */
	ASSERT_EQ(4, res.func_info_cnt);
	EXPECT_EQ(0, res.func_info[0].insn_off);
	EXPECT_LT(res.func_info[1].insn_off, res.func_info[2].insn_off);
	EXPECT_LT(res.func_info[2].insn_off, res.func_info[3].insn_off);
	bpfa_loops_free(&env, &res);
}

/* A loop in a subprogram: its own budget, frame region and driver. */
static const struct bpf_insn sub_loop_prog[] = {
	I_LDX(BPF_DW, 1, 1, 0),		/* 0: n */
	I_CALL_REL(5),		/* 1 -> 7 */
	I_MOV64_REG(6, 0),		/* 2 */
	I_MOV64_IMM(1, 10),		/* 3 */
	I_CALL_REL(2),		/* 4 -> 7 */
	I_ALU64_REG(BPF_ADD, 0, 6),		/* 5 */
	I_EXIT(),			/* 6 */
	I_MOV64_IMM(0, 0),		/* 7: sub(r1): sum of 0..r1-1 */
	I_MOV64_IMM(2, 0),		/* 8 */
	I_STX(BPF_DW, 10, 1, -8),		/* 9: a spill, as clang does */
	I_MAY_GOTO(5),		/* 10: head -> 16 */
	I_LDX(BPF_DW, 3, 10, -8),		/* 11 */
	I_JMP_REG(BPF_JGE, 2, 3, 3),	/* 12 -> 16 */
	I_ALU64_REG(BPF_ADD, 0, 2),		/* 13 */
	I_ALU64_IMM(BPF_ADD, 2, 1),		/* 14 */
	I_JA(-6),			/* 15 -> 10 */
	I_EXIT(),			/* 16 */
};

TEST(loop_in_a_subprogram)
{
	uint64_t ctx[1] = { 2000 };
	struct bpfa_loops_result res;

	ASSERT_EQ(1999 * 2000 / 2 + 45, SAME_RESULT(sub_loop_prog, ctx, 1));
	ASSERT_EQ(0, bpfa_loops(&env, sub_loop_prog, ARRAY_SIZE(sub_loop_prog), &res));
	EXPECT_EQ(1, res.loops);
	/* main, the subprogram, the callback and the body */
	EXPECT_EQ(4, res.func_info_cnt);
	bpfa_loops_free(&env, &res);
}

/*
 * A loop inside a bpf_loop() callback: its own budget and driver; the
 * callback's context argument passes the loop by (saved at the callback's
 * entry, re-derived after the loop) and is written after it.
 */
static const struct bpf_insn cb_loop_prog[] = {
	I_MOV64_REG(9, 1),		/* 0 */
	I_MOV64_IMM(1, 5),		/* 1 */
	I_LD_FUNC(2, 6),		/* 2-3 -> 9 */
	I_MOV64_REG(3, 9),		/* 4 */
	I_MOV64_IMM(4, 0),		/* 5 */
	I_RAW(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_loop),	/* 6 */
	I_LDX(BPF_DW, 0, 9, 0),		/* 7 */
	I_EXIT(),			/* 8 */
	I_MOV64_IMM(3, 0),		/* 9: cb(i, ctx): j */
	I_MOV64_IMM(4, 0),		/* 10: s */
	I_MAY_GOTO(4),		/* 11: head -> 16 */
	I_JMP_REG(BPF_JGT, 3, 1, 3),	/* 12 -> 16 */
	I_ALU64_REG(BPF_ADD, 4, 3),		/* 13 */
	I_ALU64_IMM(BPF_ADD, 3, 1),		/* 14 */
	I_JA(-5),			/* 15 -> 11 */
	I_LDX(BPF_DW, 5, 2, 0),		/* 16 */
	I_ALU64_REG(BPF_ADD, 5, 4),		/* 17 */
	I_STX(BPF_DW, 2, 5, 0),		/* 18 */
	I_MOV64_IMM(0, 0),		/* 19 */
	I_EXIT(),			/* 20 */
};

TEST(loop_in_a_callback)
{
	uint64_t ctx[1] = { 1000 };
	struct bpfa_loops_result res;
	unsigned int i;
	bool saved = false;

	/* 1000 + sum over i < 5 of i(i+1)/2 */
	ASSERT_EQ(1000 + 0 + 1 + 3 + 6 + 10, SAME_RESULT(cb_loop_prog, ctx, 1));
	/* The callback's r2 is re-derived, not carried as bits: a slot load after the loop. */
	ASSERT_EQ(0, bpfa_loops(&env, cb_loop_prog, ARRAY_SIZE(cb_loop_prog), &res));
	for (i = 0; i < res.len; i++)
		if (res.insns[i].code == (BPF_STX | BPF_MEM | BPF_DW) &&
		    res.insns[i].dst_reg == 10 && res.insns[i].src_reg == 2)
			saved = true;
	EXPECT_TRUE(saved);
	bpfa_loops_free(&env, &res);
}

/* Five loops nested: four rounds, then a refusal naming the depth. */
TEST(refuses_loops_nested_five_deep)
{
	struct bpf_insn p[32];
	unsigned int n = 0, d;

	p[n++] = I_MOV64_IMM(6, 0);
	for (d = 0; d < 5; d++) {		/* heads at 1, 3, 5, 7, 9 */
		p[n++] = I_MOV64_IMM(1 + d, 0);
		p[n++] = I_MAY_GOTO(0);		/* fixed below */
	}
	p[n++] = I_ALU64_IMM(BPF_ADD, 6, 1);			/* 11: innermost body */
	for (d = 5; d-- > 0;) {			/* back edges, innermost first */
		p[n++] = I_ALU64_IMM(BPF_ADD, 1 + d, 1);
		p[n] = I_JMP_IMM(BPF_JLT, 1 + d, 3, (__s16)((int)(2 + 2 * d) - (int)n - 1));
		n++;
	}
	p[n++] = I_MOV64_REG(0, 6);
	p[n++] = I_EXIT();
	for (d = 0; d < 5; d++)			/* may_goto: leave to the end */
		p[2 + 2 * d].off = (__s16)(n - 2 - (2 + 2 * d) - 1);
	{
		struct bpfa_loops_result res;

		ASSERT_EQ(-EINVAL, bpfa_loops(&env, p, n, &res));
		EXPECT_NE(NULL, strstr(res.msg, "loops nested more than 4 deep")) TH_LOG("%s", res.msg);
		EXPECT_EQ(NULL, res.insns);
		EXPECT_EQ(0, live_allocs);
	}
	/* Four may_goto loops deep is handled (the fifth a bounded loop): 3^5 runs. */
	p[2 + 2 * 4] = I_MOV64_IMM(0, 0);		/* the fifth may_goto gone */
	{
		uint64_t ctx[1] = { 0 };
		struct bpf_insn q[32];

		memcpy(q, p, sizeof(q));
		ASSERT_EQ(243, ({
			struct bpfa_loops_result r2;
			struct bi vm = { 0 };
			uint64_t v;

			ASSERT_EQ(0, bpfa_loops(&env, q, n, &r2)) TH_LOG("%s", r2.msg);
			v = bi_exec(&vm, r2.insns, r2.len, ctx);
			ASSERT_FALSE(vm.fault) TH_LOG("%s", vm.why);
			bpfa_loops_free(&env, &r2);
			v;
		}));
	}
}

/* A frame too deep for the pass's slots: refused with E2BIG, named. */
TEST(refuses_frame_too_deep_for_the_slots)
{
	const struct bpf_insn p[] = {
		I_RAW(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -480, 0),
		I_MOV64_IMM(6, 0),
		I_MAY_GOTO(2),
		I_ALU64_IMM(BPF_ADD, 6, 1),
		I_JA(-3),
		I_MOV64_REG(0, 6),
		I_EXIT(),
	};
	struct bpfa_loops_result res;

	ASSERT_EQ(-E2BIG, bpfa_loops(&env, p, ARRAY_SIZE(p), &res));
	EXPECT_NE(NULL, strstr(res.msg, "bytes of stack below the function's 480")) TH_LOG("%s", res.msg);
	EXPECT_EQ(0, live_allocs);
}

TEST(refuses_btf_without_blob)
{
	const struct bpf_insn q[] = { I_MAY_GOTO(0), I_MOV64_IMM(0, 0), I_EXIT() };
	struct bpfa_loops_env benv = env;
	struct bpfa_loops_result res;

	benv.has_btf = true;
	ASSERT_EQ(-EINVAL, bpfa_loops(&benv, q, ARRAY_SIZE(q), &res));
	EXPECT_NE(NULL, strstr(res.msg, "with this program's BTF is not supported yet"));
}

/*
 * A program that came with BTF: the pass appends its types, keeps main's
 * func_info and moves line_info (strictly increasing, one at every
 * subprogram start, the loop's lines into the body).
 */
TEST(program_btf_is_extended)
{
	/* [1] int, [2] int (void), [3] FUNC prog; strings "", "int", "prog", "f.c", "x" */
	static const char strs[] = "\0int\0prog\0f.c\0x";
	struct {
		struct btf_header h;
		__u32 t[3 + 1 + 3 + 3];
		char s[sizeof(strs)];
	} __attribute__((packed)) blob = {
		.h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(struct btf_header),
		       .type_off = 0, .type_len = 40, .str_off = 40, .str_len = sizeof(strs) },
		.t = { 1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
		       0, BTF_KIND_FUNC_PROTO << 24, 1,
		       5, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 2 },
	};
	const struct bpf_func_info fi = { 0, 3 };
	struct bpf_line_info li[12];
	struct bpfa_loops_env e = env;
	struct bpfa_loops_result res;
	unsigned int i, sub = 0;
	const struct btf_header *h;
	uint64_t ctx[2] = { 1000, 0 };

	memcpy(blob.s, strs, sizeof(strs));
	for (i = 0; i < 12; i++)
		li[i] = (struct bpf_line_info){ .insn_off = i, .file_name_off = 10, .line_off = 14,
						.line_col = i << 10 };
	e.has_btf = true;
	e.btf = &blob;
	e.btf_size = sizeof(blob);
	e.func_info = &fi;
	e.func_info_cnt = 1;
	e.func_info_rec_size = sizeof(fi);
	e.line_info = li;
	e.line_info_cnt = 12;
	e.line_info_rec_size = sizeof(li[0]);
	ASSERT_EQ(0, bpfa_loops(&e, sum_prog, ARRAY_SIZE(sum_prog), &res)) TH_LOG("%s", res.msg);
	h = res.btf;
	EXPECT_EQ(BTF_MAGIC, h->magic);
	EXPECT_EQ(40 + 6 * 12 + 16 + 12 + 2 * 12, h->type_len);	/* +u64 int arr(+12) ptr protos(+8) FUNCs */
	EXPECT_EQ(0, memcmp((char *)res.btf + h->hdr_len + h->str_off, strs, sizeof(strs)));
	ASSERT_EQ(3, res.func_info_cnt);
	EXPECT_EQ(3, res.func_info[0].type_id);
	EXPECT_EQ(10, res.func_info[1].type_id);	/* after 3 + 6 added */
	EXPECT_EQ(11, res.func_info[2].type_id);
	ASSERT_LT(0, res.line_info_cnt);
	EXPECT_EQ(0, res.line_info[0].insn_off);
	for (i = 0; i < res.line_info_cnt; i++) {
		if (i)
			EXPECT_LT(res.line_info[i - 1].insn_off, res.line_info[i].insn_off);
		EXPECT_LT(res.line_info[i].insn_off, res.len);
		EXPECT_NE(0, res.insns[res.line_info[i].insn_off].code);
		if (sub < res.func_info_cnt && res.line_info[i].insn_off == res.func_info[sub].insn_off)
			sub++;
	}
	EXPECT_EQ(res.func_info_cnt, sub);	/* a line at every subprogram start */
	{
		struct bi vm = { 0 };

		bi_exec(&vm, res.insns, res.len, ctx);
		ASSERT_FALSE(vm.fault);
		EXPECT_EQ(999 * 1000 / 2, ctx[1]);
	}
	bpfa_loops_free(&e, &res);
	EXPECT_EQ(0, live_allocs);
}

/* A loop in a GLOBAL subprogram of a program with BTF: its argument count comes from there. */
TEST(loop_in_a_global_subprogram_with_btf)
{
	/* [1] int, [2] int (void), [3] FUNC main, [4] int (int a, int b), [5] FUNC sub */
	static const char strs[] = "\0int\0main\0sub\0a\0b";
	struct {
		struct btf_header h;
		__u32 t[4 + 3 + 3 + 7 + 3];
		char s[sizeof(strs)];
	} __attribute__((packed)) blob = {
		.h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(struct btf_header),
		       .type_len = 80, .str_off = 80, .str_len = sizeof(strs) },
		.t = { 1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
		       0, BTF_KIND_FUNC_PROTO << 24, 1,
		       5, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 2,
		       0, BTF_KIND_FUNC_PROTO << 24 | 2, 1, 14, 1, 16, 1,
		       10, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 4 },
	};
	const struct bpf_insn p[] = {
		I_LDX(BPF_DW, 1, 1, 0),		/* 0: a */
		I_MOV64_IMM(2, 7),		/* 1: b */
		I_CALL_REL(1),		/* 2 -> 4 */
		I_EXIT(),			/* 3 */
		I_MOV64_IMM(0, 0),		/* 4: sub(a, b) = a * b */
		I_MOV64_IMM(3, 0),		/* 5 */
		I_MAY_GOTO(4),		/* 6: head -> 11 */
		I_JMP_REG(BPF_JGE, 3, 1, 3),	/* 7 -> 11 */
		I_ALU64_REG(BPF_ADD, 0, 2),		/* 8 */
		I_ALU64_IMM(BPF_ADD, 3, 1),		/* 9 */
		I_JA(-5),			/* 10 -> 6 */
		I_EXIT(),			/* 11 */
	};
	const struct bpf_func_info fi[2] = { { 0, 3 }, { 4, 5 } };
	struct bpfa_loops_env e = env;
	struct bpfa_loops_result res;
	uint64_t ctx[1] = { 300 };
	struct bi vm = { 0 };

	memcpy(blob.s, strs, sizeof(strs));
	e.has_btf = true;
	e.btf = &blob;
	e.btf_size = sizeof(blob);
	e.func_info = fi;
	e.func_info_cnt = 2;
	e.func_info_rec_size = sizeof(fi[0]);
	ASSERT_EQ(0, bpfa_loops(&e, p, ARRAY_SIZE(p), &res)) TH_LOG("%s", res.msg);
	ASSERT_EQ(4, res.func_info_cnt);
	EXPECT_EQ(3, res.func_info[0].type_id);
	EXPECT_EQ(5, res.func_info[1].type_id);		/* the global sub keeps its record */
	EXPECT_EQ(2100, bi_exec(&vm, res.insns, res.len, ctx));
	EXPECT_FALSE(vm.fault) TH_LOG("%s", vm.why);
	bpfa_loops_free(&e, &res);
	EXPECT_EQ(0, live_allocs);
}

/* Errors name the ORIGINAL insn through the lowering's map. */
TEST(error_names_original_insn)
{
	const struct bpf_insn p[] = {
		I_MOV64_IMM(6, 0),		/* lowered 0: original 0 */
		I_MOV64_IMM(6, 0),		/* lowered 1..4: original 1 (a placeholder) */
		I_MOV64_IMM(6, 0),
		I_MOV64_IMM(6, 0),
		I_MOV64_IMM(6, 0),
		I_MAY_GOTO(3),		/* lowered 5: original 2 */
		I_STX(BPF_DW, 1, 10, 0),
		I_ALU64_IMM(BPF_ADD, 6, 1),
		I_JA(-4),
		I_MOV64_REG(0, 6),
		I_EXIT(),
	};
	const __u32 new_idx[] = { 0, 1, 5, 6, 7, 8, 9, 10, 11 };
	struct bpfa_loops_env e = env;
	struct bpfa_loops_result res;

	e.new_idx = new_idx;
	e.old_len = 8;
	ASSERT_EQ(-EINVAL, bpfa_loops(&e, p, ARRAY_SIZE(p), &res));
	EXPECT_EQ(0, strncmp(res.msg, "bpf_arena: insn 3: may_goto (can_loop/cond_break) loop at insn 2",
			     64)) TH_LOG("%s", res.msg);
}

/*
 * Random mutations of the programs above: the pass must never crash or leak.
 * 300 s: the sanitizer build takes tens of seconds on a loaded machine.
 */
FIXTURE(mutations) {
};

FIXTURE_SETUP(mutations)
{
}

FIXTURE_TEARDOWN(mutations)
{
}

TEST_F_TIMEOUT(mutations, random_mutations_do_not_crash, 300)
{
	const struct bpf_insn *progs[] = { sum_prog, budget_prog, multi_exit_prog, do_while_prog,
					   map_prog };
	const unsigned int lens[] = { ARRAY_SIZE(sum_prog), ARRAY_SIZE(budget_prog),
				      ARRAY_SIZE(multi_exit_prog), ARRAY_SIZE(do_while_prog),
				      ARRAY_SIZE(map_prog) };
	struct bpf_insn buf[32];
	unsigned int it, k, n;

	srand(1234);
	for (it = 0; it < 200000; it++) {
		struct bpfa_loops_result res;
		int ret;

		k = it % 5;
		n = lens[k];
		memcpy(buf, progs[k], n * sizeof(buf[0]));
		buf[rand() % n].off += (rand() % 7) - 3;
		if (rand() & 1)
			buf[rand() % n].code = (uint8_t)rand();
		if (rand() & 1)
			buf[rand() % n].dst_reg = rand() % 12;
		ret = bpfa_loops(&env, buf, n, &res);
		if (!ret)
			bpfa_loops_free(&env, &res);
		ASSERT_EQ(0, live_allocs);
	}
}

/*
 * Variants of ctx_join_prog (tests/include/ctx_join_prog.h): a misaligned
 * access, an atomic, and pointer arithmetic on the context met at a join;
 * upstream refuses each.
 */
TEST(ctx_as_memory_through_a_join)
{
	struct bpf_insn p[ARRAY_SIZE(ctx_join_prog)];
	struct bpfa_loops_result res;
	int err;

	t_env = &env_ctx_mem;
	/* misaligned: upstream "invalid bpf_context access off=1 size=4" */
	err = bpfa_loops(t_env, ctx_join_prog, ARRAY_SIZE(ctx_join_prog), &res);
	EXPECT_NE(0, err) TH_LOG("misaligned context access through a join loads");
	if (!err)
		bpfa_loops_free(t_env, &res);
	/* atomic: upstream "BPF_ATOMIC stores into R3 ctx is not allowed" */
	memcpy(p, ctx_join_prog, sizeof(p));
	p[10] = (struct bpf_insn)I_ATOMIC(BPF_DW, BPF_ADD, 3, 6, 0);
	p[11] = (struct bpf_insn)I_MOV64_IMM(4, 0);
	err = bpfa_loops(t_env, p, ARRAY_SIZE(p), &res);
	EXPECT_NE(0, err) TH_LOG("atomic on the context through a join loads");
	if (!err)
		bpfa_loops_free(t_env, &res);
	/* variable offset: upstream "variable ctx access var_off=..." */
	memcpy(p, ctx_join_prog, sizeof(p));
	p[10] = (struct bpf_insn)I_ALU64_REG(BPF_ADD, 3, 2);
	p[11] = (struct bpf_insn)I_LDX(BPF_B, 4, 3, 0);
	err = bpfa_loops(t_env, p, ARRAY_SIZE(p), &res);
	EXPECT_NE(0, err) TH_LOG("variable-offset context access through a join loads");
	if (!err)
		bpfa_loops_free(t_env, &res);
	EXPECT_EQ(0, live_allocs);
}

/*
 * The source map (res.src) of the verifier log's translation: every output
 * insn names an input insn; copies are the input's insn; the generated
 * functions start with BODY or CB at the loop's head.
 */
static void check_src(struct __test_metadata *_metadata, const struct bpf_insn *in,
		      __u32 in_len, const struct bpfa_loops_result *res, __u32 head)
{
	__u32 j, k, nbody = 0, ncb = 0;

	ASSERT_NE(NULL, res->src);
	for (j = 0; j < res->len; j++) {
		__u32 idx = res->src[j] & BPFA_SRC_IDX_MASK;

		ASSERT_LT(idx, in_len);
		if (!(res->src[j] & BPFA_SRC_ADDED))
			EXPECT_EQ(in[idx].code, res->insns[j].code) TH_LOG("output %u", j);
	}
	for (k = 1; k < res->func_info_cnt; k++) {
		__u32 s = res->func_info[k].insn_off;

		if (res->src[s] & BPFA_SRC_BODY)
			nbody++;
		if (res->src[s] & BPFA_SRC_CB)
			ncb++;
		if (head != ~0u)
			EXPECT_EQ(head, res->src[s] & BPFA_SRC_IDX_MASK);
	}
	EXPECT_EQ(res->loops, nbody);
	EXPECT_EQ(res->loops, ncb);
}

TEST(source_map_one_loop)
{
	struct bpfa_loops_result res;

	ASSERT_EQ(0, bpfa_loops(&env, sum_prog, ARRAY_SIZE(sum_prog), &res));
	check_src(_metadata, sum_prog, ARRAY_SIZE(sum_prog), &res, 4);
	bpfa_loops_free(&env, &res);
	EXPECT_EQ(0, live_allocs);
}

TEST(source_map_nested_loops)
{
	struct bpfa_loops_result res;

	ASSERT_EQ(0, bpfa_loops(&env, nested_prog, ARRAY_SIZE(nested_prog), &res));
	check_src(_metadata, nested_prog, ARRAY_SIZE(nested_prog), &res, ~0u);
	bpfa_loops_free(&env, &res);
	EXPECT_EQ(0, live_allocs);
}

static bool t_where(void *ctx __attribute__((unused)), __u32 u, char *buf, __u32 size)
{
	snprintf(buf, size, "t.bpf.c:%u", 100 + u);
	return true;
}

/* The output position of input insn i's copy (not added code). */
static __u32 out_of(const struct bpfa_loops_result *res, __u32 i)
{
	__u32 j;

	for (j = 0; j < res->len; j++)
		if (!(res->src[j] & BPFA_SRC_ADDED) && (res->src[j] & BPFA_SRC_IDX_MASK) == i)
			return j;
	return ~0u;
}

TEST(log_in_user_numbers)
{
	struct bpfa_xlate x = { .where = t_where };
	struct bpfa_xlate_fn fns[8];
	struct bpfa_loops_result res;
	char in[1024], out[2048];
	__u32 f6, body = ~0u, k, kb = 0;
	__u64 n;

	ASSERT_EQ(0, bpfa_loops(&env, sum_prog, ARRAY_SIZE(sum_prog), &res));
	x.src = res.src;
	x.len = res.len;
	x.fns = fns;
	x.nfns = bpfa_xlate_loop_fns(&res, &x, fns, 8);
	ASSERT_EQ(2, x.nfns);
	for (k = 0; k < x.nfns; k++) {
		EXPECT_EQ(4, fns[k].head);
		EXPECT_EQ(0, strncmp(fns[k].name, "bpfa_loop_", 10));
		if (fns[k].body) {
			body = fns[k].func;
			kb = k;
		}
	}
	ASSERT_NE(~0u, body);
	f6 = out_of(&res, 6);
	ASSERT_NE(~0u, f6);
	snprintf(in, sizeof(in),
		 "%u: (0f) r6 += r7\nfrom %u to %u: R1=1\nFunc#%u is global and valid. Skipping.\n"
		 "%s() x\n0: (b7) r0 = 0\ninfinite loop detected at insn %u\n"
		 "processed 12 insns\n9999: junk insn 4294967296 func#77 pc+\n"
		 "Validating %s() func#%u...\n; sum += i;\n%u: (0f) r6 += r7\n",
		 f6, f6, f6, body, fns[0].name, f6, fns[kb].name, body, f6);
	n = bpfa_xlate_log(&x, in, strlen(in), out, sizeof(out));
	EXPECT_EQ(strlen(out), n);
	EXPECT_NE(NULL, strstr(out, "\n6: (0f) r6 += r7\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\nfrom 6 to 6: R1=1\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out,
		"The body of the may_goto (can_loop/cond_break) loop at insn 4 (t.bpf.c:104) is global"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "infinite loop detected at insn 6 (t.bpf.c:106)\n"))
		TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "bpfa_loop")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out,
		"\nValidating the body of the may_goto (can_loop/cond_break) loop at insn 4 (t.bpf.c:104)...\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n; sum += i; @ t.bpf.c:106\n6: (0f)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "9999: junk insn 4294967296 func#77 pc+\n")) TH_LOG("%s", out);
	/* main's prologue: code the pass added */
	EXPECT_NE(NULL, strstr(out, "N+ is code bpf_arena added")) TH_LOG("%s", out);
	/* Truncation: the beginning, NUL-terminated; the length needed is the same. */
	memset(out, 'x', sizeof(out));
	EXPECT_EQ(n, bpfa_xlate_log(&x, in, strlen(in), out, 16));
	EXPECT_EQ(15, strlen(out));
	EXPECT_EQ(n, bpfa_xlate_log(&x, in, strlen(in), NULL, 0));
	bpfa_loops_free(&env, &res);
	EXPECT_EQ(0, live_allocs);
}

/* Any bytes: never past the buffers (ASan), always NUL-terminated. */
TEST(log_translation_of_random_text)
{
	static const char *const frags[] = {
		"insn ", "from ", " to ", "func#", "Func#", " @", "pc+", "pc-", "caller at ",
		"bpfa_loop_body_0", "bpfa_loop_", ": ", "\n", "99999999999", "4294967295", "7",
		"0", "-", "x", "\0",
	};
	struct bpfa_xlate_fn fns[8];
	struct bpfa_loops_result res;
	struct bpfa_xlate x = { .where = t_where };
	__u32 lowered[16] = { 0, 1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
	char in[512], out[300];
	int round, i;

	ASSERT_EQ(0, bpfa_loops(&env, sum_prog, ARRAY_SIZE(sum_prog), &res));
	x.src = res.src;
	x.len = res.len;
	x.new_idx = lowered;
	x.old_len = 10;
	x.fns = fns;
	x.nfns = bpfa_xlate_loop_fns(&res, &x, fns, 8);
	srand(7);
	for (round = 0; round < 20000; round++) {
		size_t n = 0, len = (size_t)(rand() % 400);

		while (n < len) {
			const char *f = frags[rand() % ARRAY_SIZE(frags)];
			size_t l = strlen(f) ? strlen(f) : 1;

			if (n + l > len)
				break;
			memcpy(in + n, f, l);
			n += l;
		}
		i = rand() % (int)sizeof(out);
		bpfa_xlate_log(&x, in, n, out, (__u64)i + 1);
		ASSERT_LE(strlen(out), (size_t)i);
	}
	bpfa_loops_free(&env, &res);
	EXPECT_EQ(0, live_allocs);
}

static unsigned int stop_calls, stop_after;

static bool t_stop(void *ctx __attribute__((unused)))
{
	return ++stop_calls > stop_after;
}

/*
 * x->stop is asked every BPFA_XLATE_STEPS steps, lines or tokens alike (a
 * log of one 16 MiB line too); true stops the translation: STOPPED, and
 * no log to use.  Never true: the same translation as without.
 */
TEST(log_translation_stops_when_asked)
{
	const size_t len = 64 * BPFA_XLATE_STEPS;
	struct bpfa_xlate x = { .where = t_where, .stop = t_stop };
	char *in = malloc(len + 1), *out = malloc(4 * len), *ref = malloc(4 * len);
	unsigned int per_pass;
	__u64 n, m;
	size_t i;
	int k;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, ref);
	x.len = 16;
	for (k = 0; k < 2; k++) {
		/* "insn 3 insn 3 ...": one line; then "\n\n...": lines only */
		for (i = 0; i < len; i++)
			in[i] = k ? '\n' : "insn 3 "[i % 7];
		in[len] = '\0';
		x.stop = NULL;
		n = bpfa_xlate_log(&x, in, len, ref, 4 * len);
		ASSERT_NE(BPFA_XLATE_STOPPED, n);
		x.stop = t_stop;
		stop_calls = 0;
		stop_after = ~0u;
		m = bpfa_xlate_log(&x, in, len, out, 4 * len);
		EXPECT_EQ(n, m);
		EXPECT_EQ(0, strcmp(ref, out));
		stop_calls = 0;
		EXPECT_EQ(n, bpfa_xlate_log(&x, in, len, NULL, 0));
		per_pass = stop_calls;
		EXPECT_LE(len / 7 / BPFA_XLATE_STEPS, per_pass);
		for (stop_after = 0; stop_after < 3; stop_after++) {
			stop_calls = 0;
			EXPECT_EQ(BPFA_XLATE_STOPPED, bpfa_xlate_log(&x, in, len, NULL, 0));
			stop_calls = 0;
			EXPECT_EQ(BPFA_XLATE_STOPPED, bpfa_xlate_log(&x, in, len, out, 4 * len));
		}
		/* Asked in the second pass only: stopped all the same. */
		stop_calls = 0;
		stop_after = per_pass;
		EXPECT_EQ(BPFA_XLATE_STOPPED, bpfa_xlate_log(&x, in, len, out, 4 * len));
	}
	free(in);
	free(out);
	free(ref);
}

TEST_HARNESS_MAIN

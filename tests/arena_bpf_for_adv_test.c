// SPDX-License-Identifier: GPL-2.0
/*
 * Adversarial and edge bpf_for shapes from attack review 3
 * (tests/progs/arena_bpf_for_adv.bpf.c), each program loaded alone.  6.12 runs
 * them all with upstream's results.  On 6.1 + module three are limits, each
 * refused as this test pins: five nested loops by the pass (deeper than its
 * 4, named as bpf_for), four nested bpf_for by 6.1's verifier (each level
 * adds a callback and a body frame: 704 bytes of combined stack > 512), and a
 * loop over a callback's pointer argument by the verifier (a callback's
 * arguments cross a loop as bits, README "Loops").  The rest run as on 6.12.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "kselftest_harness.h"
#include "test_util.h"

EMBED(adv_obj, "arena_bpf_for_adv.bpf.o");

static long run(int fd, void *ctx, size_t size, double *secs)
{
	double t0 = now();
	long r = run_syscall_prog(fd, ctx, size);

	*secs = now() - t0;
	return r;
}

static const char *refusal(void)
{
	const char *m = strstr(libbpf_msgs, "bpf_arena: insn");

	return m ? m : str_tail(libbpf_msgs, 1500);
}

/* Loads name; a load the test does not expect fails it. */
#define LOAD(name)								\
	struct bpf_object *obj = NULL;						\
	int fd;									\
	double secs;								\
	NEED_ARENA();								\
	fd = obj_load_one(adv_obj_start, adv_obj_end, name, &obj);		\
	ASSERT_LE(0, fd) TH_LOG("%s refused: %.1500s", name, refusal())

/* The programs use an arena: the module or a 6.9+ kernel. */
#define NEED_ARENA()								\
	do {									\
		if (!kernel_has_native_arena() && !kmod_is_loaded())		\
			SKIP(return, "no arena: the bpf_arena module is not loaded"); \
	} while (0)

/* 6.1 + module refuses name with a log holding text; 6.12 runs it (the test goes on). */
#define LIMIT_ON_61(name, text)							\
	do {									\
		struct bpf_object *o61 = NULL;					\
										\
		NEED_ARENA();							\
		if (!kernel_has_native_arena()) {				\
			ASSERT_GT(0, obj_load_one(adv_obj_start, adv_obj_end, name, &o61)); \
			bpf_object__close(o61);					\
			EXPECT_NE(NULL, strstr(libbpf_msgs, text))		\
				TH_LOG("%.1500s", refusal());			\
			return;							\
		}								\
	} while (0)

TEST(nest5)
{
	__u64 ctx[2] = { 3, 0 };

	LIMIT_ON_61("nest5", "bpf_arena: insn");
	LOAD("nest5");
	ASSERT_EQ(0, run(fd, ctx, sizeof(ctx), &secs));
	EXPECT_EQ(243, ctx[1]);
	bpf_object__close(obj);
}

/* The pass's depth refusal names the construct the program used. */
TEST(nest5_names_bpf_for)
{
	struct bpf_object *obj = NULL;

	NEED_ARENA();
	if (kernel_has_native_arena())
		SKIP(return, "6.12 runs five nested bpf_for loops (test nest5)");
	ASSERT_GT(0, obj_load_one(adv_obj_start, adv_obj_end, "nest5", &obj));
	bpf_object__close(obj);
	ASSERT_NE(NULL, strstr(libbpf_msgs, "bpf_arena: insn")) TH_LOG("%s", refusal());
	EXPECT_NE(NULL, strstr(refusal(), "bpf_for")) TH_LOG("%.300s", refusal());
}

TEST(nest4)
{
	__u64 ctx[2] = { 5, 0 };

	LIMIT_ON_61("nest4", "combined stack size");
	LOAD("nest4");
	ASSERT_EQ(0, run(fd, ctx, sizeof(ctx), &secs));
	EXPECT_EQ(4 * 125 * 10, ctx[1]);	/* 4 * n^3 * (0+..+4) */
	bpf_object__close(obj);
}

TEST(in_callback)
{
	__u64 ctx[3] = { 10, 7, 0 }, want = 0;
	int i, j;

	for (j = 0; j < 7; j++)
		for (i = 0; i < 10; i++)
			want += i + j;
	LIMIT_ON_61("in_callback", "invalid mem access 'scalar'");
	LOAD("in_callback");
	ASSERT_EQ(0, run(fd, ctx, sizeof(ctx), &secs));
	EXPECT_EQ(want, ctx[2]);
	bpf_object__close(obj);
}

TEST(in_subprog)
{
	__u64 ctx[2] = { 100, 0 };

	LOAD("in_subprog");
	ASSERT_EQ(0, run(fd, ctx, sizeof(ctx), &secs));
	EXPECT_EQ(4950, ctx[1]);
	bpf_object__close(obj);
}

TEST(interleaved)
{
	__u64 ctx[3] = { 5, 8, 0 }, want = 0;
	int k;

	for (k = 0; k < 5; k++)
		want += k * 1000 + k;
	LOAD("interleaved");
	ASSERT_EQ(0, run(fd, ctx, sizeof(ctx), &secs));
	EXPECT_EQ(want, ctx[2]);
	bpf_object__close(obj);
}

TEST(find_first)
{
	__u64 ctx[3] = { 100, 50, 0 };

	LOAD("find_first");
	ASSERT_EQ(0, run(fd, ctx, sizeof(ctx), &secs));
	EXPECT_EQ(8, ctx[2]);
	ctx[1] = 1000000;
	ASSERT_EQ(0, run(fd, ctx, sizeof(ctx), &secs));
	EXPECT_EQ((__u64)-1, ctx[2]);
	bpf_object__close(obj);
}

TEST_HARNESS_MAIN

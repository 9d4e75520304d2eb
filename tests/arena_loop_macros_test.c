// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream's loop macros (bpf_for, bpf_repeat, can_loop, cond_break) and the
 * raw number iterator, written as for upstream and built with the system's
 * headers: clang-14 with bookworm's libbpf 1.1 headers, and clang-19 with
 * libbpf 1.4.6's (tests/progs/arena_loop_macros.bpf.c).  bpf_arena.h
 * supplies what the headers lack; both objects load with bookworm's libbpf
 * 1.1 and bpf_arena_object_prepare(), and give upstream's results on 6.1
 * with the module and on 6.12.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf_arena_lib.h"
#include "kselftest_harness.h"
#include "test_util.h"

EMBED(stock_obj, "arena_loop_macros.stock.bpf.o");
EMBED(bpo_obj, "arena_loop_macros.bpo.bpf.o");

struct loop_macro_args {
	int start, end;
	long long for_sum, repeat_n, can_loop_n, cond_break_n, raw_sum;
};

FIXTURE(macros) {
	struct bpf_object *obj;
	int prog_fd;
};

FIXTURE_VARIANT(macros) {
	const char *start, *end;
};

FIXTURE_VARIANT_ADD(macros, clang14_libbpf11_headers) {
	.start = stock_obj_start, .end = stock_obj_end,
};

FIXTURE_VARIANT_ADD(macros, clang19_libbpf146_headers) {
	.start = bpo_obj_start, .end = bpo_obj_end,
};

FIXTURE_SETUP(macros)
{
	static char log[1 << 20];
	LIBBPF_OPTS(bpf_object_open_opts, oo, .kernel_log_buf = log,
		    .kernel_log_size = sizeof(log));
	int err;

	self->obj = bpf_object__open_mem(variant->start, (size_t)(variant->end - variant->start),
					 &oo);
	ASSERT_EQ(0, libbpf_get_error(self->obj));
	ASSERT_EQ(0, bpf_arena_object_prepare(self->obj));
	err = bpf_object__load(self->obj);
	ASSERT_EQ(0, err) TH_LOG("load: %d; verifier log tail:\n%s", err, str_tail(log, 3000));
	self->prog_fd = bpf_program__fd(bpf_object__find_program_by_name(self->obj,
									  "loop_macros"));
	ASSERT_LE(0, self->prog_fd);
}

FIXTURE_TEARDOWN(macros)
{
	bpf_arena_object_close(self->obj);
}

static int run(int fd, struct loop_macro_args *a)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = a, .ctx_size_in = sizeof(*a));
	int err = bpf_prog_test_run_opts(fd, &o);

	return err ? -errno : (int)o.retval;
}

/* Each macro over [start, end), as upstream's iterator and may_goto run it. */
TEST_F(macros, every_macro_gives_upstreams_result)
{
	static const int ranges[][2] = {
		{ 0, 10 }, { 5, 6 }, { 7, 7 }, { 9, 3 }, { -20, 20 }, { 0, 100000 },
	};
	unsigned int k;

	for (k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
		struct loop_macro_args a = { .start = ranges[k][0], .end = ranges[k][1] };
		long long n = a.end > a.start ? a.end - a.start : 0, sum = 0, i;

		for (i = a.start; i < a.end; i++)
			sum += i;
		ASSERT_EQ(0, run(self->prog_fd, &a));
		EXPECT_EQ(sum, a.for_sum) TH_LOG("bpf_for over [%d, %d)", a.start, a.end);
		EXPECT_EQ(n, a.repeat_n) TH_LOG("bpf_repeat(%lld)", n);
		EXPECT_EQ(n, a.can_loop_n) TH_LOG("can_loop over [%d, %d)", a.start, a.end);
		EXPECT_EQ(n, a.cond_break_n) TH_LOG("cond_break over [%d, %d)", a.start, a.end);
		EXPECT_EQ(sum, a.raw_sum) TH_LOG("bpf_iter_num_* over [%d, %d)", a.start, a.end);
	}
}

/*
 * can_loop and cond_break stop at the budget (BPF_MAX_LOOPS, 8M), which is
 * the function's, shared by its may_goto loops, as upstream's: the
 * can_loop loop spends it, the cond_break loop after it stops at once.
 * The number iterator refuses ranges longer than the same 8M (-E2BIG):
 * bpf_for, bpf_repeat and the raw iterator run no iteration.
 */
TEST_F(macros, may_goto_loops_share_the_functions_budget)
{
	struct loop_macro_args a = { .start = 0, .end = (1 << 23) + 5 };

	ASSERT_EQ(0, run(self->prog_fd, &a));
	EXPECT_EQ(0, a.repeat_n);
	EXPECT_EQ(0, a.for_sum);
	EXPECT_EQ(0, a.raw_sum);
	EXPECT_EQ(1 << 23, a.can_loop_n);
	EXPECT_EQ(0, a.cond_break_n);
}

TEST_HARNESS_MAIN

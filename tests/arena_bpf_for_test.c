// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_for / bpf_repeat and the raw bpf_iter_num_* kfuncs in clang-19 arena
 * programs loaded by libbpf 1.4.6 (tests/progs/arena_bpf_for.bpf.c,
 * arena_bpf_for_refused.bpf.c): the same results as upstream's iterator on 6.1
 * with the module (inlined, the loops outlined: docs/LOOPS.md) and on 6.12
 * (native), upstream's edge cases included; programs without an arena
 * (translated too); the programs the two kernels judge differently, each
 * as that kernel does.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "kselftest_harness.h"
#include "test_util.h"

#if LIBBPF_MAJOR_VERSION < 1 || (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION < 4)
#error "needs the headers of libbpf >= 1.4 (bookworm-backports, LIBBPF_BPO_INC)"
#endif

#define MAX_LOOPS	(1 << 23)	/* BPF_MAX_LOOPS */
#define NODES		300

EMBED(for_obj, "arena_bpf_for.bpf.o");
EMBED(refused_obj, "arena_bpf_for_refused.bpf.o");

/* The end of what libbpf said (the verifier's log ends it). */
static const char *log_tail(void)
{
	return str_tail(libbpf_msgs, 6000);
}

FIXTURE(iter) {
	struct bpf_object *obj;
	char *base;
};

FIXTURE_SETUP(iter)
{
	size_t size = 0;
	int err;

	libbpf_capture(false);
	self->obj = bpf_object__open_mem(for_obj_start, for_obj_end - for_obj_start, NULL);
	ASSERT_EQ(0, libbpf_get_error(self->obj));
	err = bpf_object__load(self->obj);
	ASSERT_EQ(0, err) TH_LOG("load: %d\n%s", err, log_tail());
	self->base = bpf_map__initial_value(bpf_object__find_map_by_name(self->obj, "arena"),
					    &size);
	ASSERT_NE(NULL, self->base);
}

FIXTURE_TEARDOWN(iter)
{
	bpf_object__close(self->obj);
}

struct range_args {
	int start, end;
	long long ret, sum, n, first, last;
};

/* Upstream's bpf_iter_num_new()/next() (kernel/bpf/bpf_iter.c), in user space. */
static void expect_range(struct range_args *want, int start, int end)
{
	long long i;

	memset(want, 0, sizeof(*want));
	want->start = start;
	want->end = end;
	want->first = want->last = -1;
	if (start > end) {
		want->ret = -EINVAL;
		return;
	}
	if ((long long)end - start > MAX_LOOPS) {
		want->ret = -E2BIG;
		return;
	}
	for (i = start; i < end; i++) {
		if (!want->n)
			want->first = i;
		want->last = i;
		want->sum += i;
		want->n++;
	}
}

static void check_range(struct __test_metadata *_metadata, int fd, int start, int end)
{
	struct range_args got = { .start = start, .end = end }, want;

	expect_range(&want, start, end);
	ASSERT_EQ(0, run_syscall_prog(fd, &got, sizeof(got)));
	EXPECT_EQ(want.ret, got.ret) TH_LOG("[%d, %d)", start, end);
	EXPECT_EQ(want.n, got.n) TH_LOG("[%d, %d)", start, end);
	EXPECT_EQ(want.sum, got.sum) TH_LOG("[%d, %d)", start, end);
	EXPECT_EQ(want.first, got.first) TH_LOG("[%d, %d)", start, end);
	EXPECT_EQ(want.last, got.last) TH_LOG("[%d, %d)", start, end);
}

TEST_F(iter, printk_in_loop_bodies)
{
	__u64 ctx[1] = { 0 };

	EXPECT_EQ(6, run_syscall_prog(obj_prog_fd(self->obj, "printk_in_loops"), ctx, sizeof(ctx)));
}

TEST_F(iter, context_written_from_a_bpf_for_body)
{
	__u64 a[2] = { 0, 0 };	/* struct push_args: pushed, sum */

	ASSERT_EQ(0, run_syscall_prog(obj_prog_fd(self->obj, "push_into_args"), a, sizeof(a)));
	EXPECT_EQ(64, a[0]);
	EXPECT_EQ(2016, a[1]);
	/* The context is the size the program reads, as upstream checks it. */
	EXPECT_GT(0, run_syscall_prog(obj_prog_fd(self->obj, "push_into_args"), a, 8));
}

TEST_F(iter, spilled_context_written_from_a_bpf_for_body)
{
	__u64 a[5] = { 0 };	/* struct spill_args */
	__u64 s2 = 0;
	int i;

	ASSERT_EQ(0, run_syscall_prog(obj_prog_fd(self->obj, "push_with_spilled_ctx"), a,
				      sizeof(a)));
	for (i = 0; i < 16; i++)
		s2 ^= i * 7;
	EXPECT_EQ(16, a[0]);
	EXPECT_EQ(120, a[1]);
	EXPECT_EQ(s2, a[2]);
	EXPECT_EQ(360, a[3]);
	EXPECT_EQ(0xffff, a[4]);
}

TEST_F(iter, typed_context_read_in_a_bpf_for_body)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));

	ASSERT_EQ(0, bpf_prog_test_run_opts(obj_prog_fd(self->obj, "skb_len_in_loop"), &o));
	EXPECT_EQ(10 * sizeof(pkt), o.retval);
}

TEST_F(iter, ranges_as_upstream)
{
	int fd = obj_prog_fd(self->obj, "range_sum");

	ASSERT_LE(0, fd);
	check_range(_metadata, fd, 0, 1000);
	check_range(_metadata, fd, -5, 5);
	check_range(_metadata, fd, 7, 7);		/* empty */
	check_range(_metadata, fd, 10, 3);		/* -EINVAL */
	check_range(_metadata, fd, 0, MAX_LOOPS + 1);	/* -E2BIG */
	check_range(_metadata, fd, INT_MIN, INT_MAX);	/* -E2BIG, no overflow */
	check_range(_metadata, fd, INT_MIN, INT_MIN + 3);
	check_range(_metadata, fd, INT_MAX - 3, INT_MAX);
	check_range(_metadata, fd, INT_MAX, INT_MAX);
	EXPECT_EQ(9, *(__u64 *)self->base);	/* the arena global `runs` */
}

/* BPF_MAX_LOOPS values: bpf_loop()'s 8M bodies and the one after. */
TEST_F(iter, exactly_max_loops)
{
	check_range(_metadata, obj_prog_fd(self->obj, "range_sum"), 0, MAX_LOOPS);
}

TEST_F(iter, arena_list_walk)
{
	int fd = obj_prog_fd(self->obj, "list_walk");
	__u64 (*node)[2] = (void *)(self->base + 4096), sum = 0, ctx[4];
	int i;

	for (i = 0; i < NODES; i++) {
		node[i][0] = i + 1 < NODES ? (__u64)(uintptr_t)node[i + 1] : 0;
		node[i][1] = (__u64)i * 3 + 1;
		sum += (__u64)i * 3 + 1;
	}
	/* The whole list: the walk ends at the NULL next. */
	ctx[0] = (__u64)(uintptr_t)node[0];
	ctx[1] = 1000000;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(sum, ctx[2]);
	EXPECT_EQ(NODES, ctx[3]);
	/* A bound below the list's length: bpf_for stops the walk. */
	ctx[1] = 100;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(100, ctx[3]);
	EXPECT_EQ(100 * 99 / 2 * 3 + 100, ctx[2]);
}

TEST_F(iter, nested_for_and_repeat)
{
	int fd = obj_prog_fd(self->obj, "nested");
	__u64 ctx[4] = { 30, 20, 0, 0 }, sum = 0;
	int i, j;

	for (i = 0; i < 30; i++)
		for (j = 0; j < 20; j++)
			sum += (__u64)i * j;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(600, ctx[2]);
	EXPECT_EQ(sum, ctx[3]);
	ctx[1] = 0;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(0, ctx[2]);
	EXPECT_EQ(0, ctx[3]);
}

/* The module translates iterators in any program, arena or not. */
TEST(no_arena_program)
{
	struct bpf_object *obj;
	__u64 ctx[2] = { 100, 0 };
	int fd;

	fd = obj_load_one(refused_obj_start, refused_obj_end, "no_arena", &obj);
	ASSERT_LE(0, fd) TH_LOG("%s", log_tail());
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(4950, ctx[1]);
	bpf_object__close(obj);
}

/*
 * With CAP_BPF alone (no CAP_PERFMON): 6.12 runs a may_goto; the
 * translation needs CAP_PERFMON too (a translated bpf_for compares a stack
 * pointer with NULL), and says so (EPERM).  Raw instructions: libbpf
 * without CAP_SYS_ADMIN does not look at module BTF, so it would not
 * resolve the iterators at all.
 */
TEST(no_arena_loop_with_cap_bpf_alone)
{
	struct bpf_insn p[] = {
		{ .code = BPF_JMP | 0xe0 | BPF_K, .off = 1 },		/* may_goto +1 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },	/* r0 = 0 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	int status, fd;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log),
			    .log_level = 1, .prog_flags = BPF_F_SLEEPABLE);

		if (set_caps(1ULL << CAP_BPF))
			_exit(100);
		fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "loop", "GPL", p, 4, &o);
		if (kernel_has_native_arena()) {
			if (fd < 0)
				fprintf(stderr, "# 6.12 load: %d %s\n", fd, log);
			_exit(fd >= 0 ? 0 : 101);
		}
		if (fd != -EPERM) {
			fprintf(stderr, "# load: %d %s\n", fd, log);
			_exit(102);
		}
		_exit(strstr(log, "bpf_arena: insn 0: may_goto (can_loop/cond_break) needs CAP_BPF and CAP_PERFMON")
		      ? 0 : 103);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* A program that writes its iterator's state: both kernels refuse it. */
TEST(reset_iterator_is_refused)
{
	struct bpf_object *obj;
	int fd;

	fd = obj_load_one(refused_obj_start, refused_obj_end, "reset_iter", &obj);
	ASSERT_EQ(-EINVAL, fd);
	/* 6.12 at the next use of the iterator, the module at the write. */
	if (kernel_has_native_arena()) {
		EXPECT_NE(NULL, strstr(libbpf_msgs, "expected an initialized iter_num as arg #0"))
			TH_LOG("%s", log_tail());
	} else {
		EXPECT_NE(NULL, strstr(libbpf_msgs, "the state of an active bpf_iter_num"))
			TH_LOG("%s", log_tail());
	}
	bpf_object__close(obj);
}

TEST_HARNESS_MAIN

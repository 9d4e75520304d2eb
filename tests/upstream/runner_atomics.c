// SPDX-License-Identifier: GPL-2.0
/*
 * prog_tests/arena_atomics.c (v6.12), its assertions repeated one for one on
 * the unmodified progs/arena_atomics.c: the skeleton's skel->arena->X is
 * up_arena_var(obj, "X"), skel->bss->pid and skel->data->skip_tests are
 * up_global_var().  Subtests: add, sub, and, or, xor, cmpxchg, xchg, uaf.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "runner.h"

#define AV(type, name) (*(volatile type *)up_arena_var(obj, #name))

static struct bpf_object *obj;

static bool run(const char *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	int err, prog_fd;

	/* No need to attach it, just run it directly */
	prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, prog));
	err = bpf_prog_test_run_opts(prog_fd, &topts);
	if (!UP_ASSERT_OK(err, "test_run_opts err"))
		return false;
	if (!UP_ASSERT_OK(topts.retval, "test_run_opts retval"))
		return false;
	return true;
}

static void test_add(void)
{
	if (!run("add"))
		return;
	UP_ASSERT_EQ(AV(__u64, add64_value), 3, "add64_value");
	UP_ASSERT_EQ(AV(__u64, add64_result), 1, "add64_result");
	UP_ASSERT_EQ(AV(__u32, add32_value), 3, "add32_value");
	UP_ASSERT_EQ(AV(__u32, add32_result), 1, "add32_result");
	UP_ASSERT_EQ(AV(__u64, add_stack_value_copy), 3, "add_stack_value");
	UP_ASSERT_EQ(AV(__u64, add_stack_result), 1, "add_stack_result");
	UP_ASSERT_EQ(AV(__u64, add_noreturn_value), 3, "add_noreturn_value");
}

static void test_sub(void)
{
	if (!run("sub"))
		return;
	UP_ASSERT_EQ(AV(__s64, sub64_value), -1, "sub64_value");
	UP_ASSERT_EQ(AV(__s64, sub64_result), 1, "sub64_result");
	UP_ASSERT_EQ(AV(__s32, sub32_value), -1, "sub32_value");
	UP_ASSERT_EQ(AV(__s32, sub32_result), 1, "sub32_result");
	UP_ASSERT_EQ(AV(__s64, sub_stack_value_copy), -1, "sub_stack_value");
	UP_ASSERT_EQ(AV(__s64, sub_stack_result), 1, "sub_stack_result");
	UP_ASSERT_EQ(AV(__s64, sub_noreturn_value), -1, "sub_noreturn_value");
}

static void test_and(void)
{
	if (!run("and"))
		return;
	UP_ASSERT_EQ(AV(__u64, and64_value), 0x010ull << 32, "and64_value");
	UP_ASSERT_EQ(AV(__u32, and32_value), 0x010, "and32_value");
}

static void test_or(void)
{
	if (!run("or"))
		return;
	UP_ASSERT_EQ(AV(__u64, or64_value), 0x111ull << 32, "or64_value");
	UP_ASSERT_EQ(AV(__u32, or32_value), 0x111, "or32_value");
}

static void test_xor(void)
{
	if (!run("xor"))
		return;
	UP_ASSERT_EQ(AV(__u64, xor64_value), 0x101ull << 32, "xor64_value");
	UP_ASSERT_EQ(AV(__u32, xor32_value), 0x101, "xor32_value");
}

static void test_cmpxchg(void)
{
	if (!run("cmpxchg"))
		return;
	UP_ASSERT_EQ(AV(__u64, cmpxchg64_value), 2, "cmpxchg64_value");
	UP_ASSERT_EQ(AV(__u64, cmpxchg64_result_fail), 1, "cmpxchg_result_fail");
	UP_ASSERT_EQ(AV(__u64, cmpxchg64_result_succeed), 1, "cmpxchg_result_succeed");
	UP_ASSERT_EQ(AV(__u32, cmpxchg32_value), 2, "lcmpxchg32_value");
	UP_ASSERT_EQ(AV(__u32, cmpxchg32_result_fail), 1, "cmpxchg_result_fail");
	UP_ASSERT_EQ(AV(__u32, cmpxchg32_result_succeed), 1, "cmpxchg_result_succeed");
}

static void test_xchg(void)
{
	if (!run("xchg"))
		return;
	UP_ASSERT_EQ(AV(__u64, xchg64_value), 2, "xchg64_value");
	UP_ASSERT_EQ(AV(__u64, xchg64_result), 1, "xchg64_result");
	UP_ASSERT_EQ(AV(__u32, xchg32_value), 2, "xchg32_value");
	UP_ASSERT_EQ(AV(__u32, xchg32_result), 1, "xchg32_result");
}

static void test_uaf(void)
{
	if (!run("uaf"))
		return;
	UP_ASSERT_EQ(AV(__u64, uaf_recovery_fails), 0, "uaf_recovery_fails");
}

void up_test_arena_atomics(void)
{
	static const struct { const char *name; void (*fn)(void); } subs[] = {
		{ "add", test_add }, { "sub", test_sub }, { "and", test_and }, { "or", test_or },
		{ "xor", test_xor }, { "cmpxchg", test_cmpxchg }, { "xchg", test_xchg },
		{ "uaf", test_uaf },
	};
	const struct up_obj *o = up_obj("arena_atomics");
	bool skip_tests;
	size_t i;
	int err;

	up_start("arena_atomics/load");
	obj = bpf_object__open_mem(o->data, o->size, NULL);
	if (!UP_ASSERT_OK_PTR(obj, "arena atomics skeleton open")) {
		up_end();
		return;
	}
	/* Before load, .data's initial value is the object's own. */
	skip_tests = *(bool *)up_global_var(obj, ".data", "skip_tests");
	if (skip_tests) {
		/* As upstream; the build defines ENABLE_ATOMICS_TESTS, so this is a failure here. */
		up_fail("skip_tests: no ENABLE_ATOMICS_TESTS or no addr_space_cast support in clang");
		goto out;
	}
	err = bpf_object__load(obj);
	if (!UP_ASSERT_OK(err, "arena atomics skeleton load"))
		goto out;
	*(__u32 *)up_global_var(obj, ".bss", "pid") = getpid();
	up_end();
	for (i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		up_start("arena_atomics/%s", subs[i].name);
		subs[i].fn();
		up_end();
	}
	bpf_object__close(obj);
	return;
out:
	up_end();
	bpf_object__close(obj);
}

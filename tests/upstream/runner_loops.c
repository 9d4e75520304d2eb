// SPDX-License-Identifier: GPL-2.0
/*
 * prog_tests/arena_list.c and prog_tests/arena_htab.c (v6.12), their
 * assertions repeated one for one on the unmodified progs/arena_list.c,
 * arena_htab.c and arena_htab_asm.c.  User space walks the lists and the
 * hash table the BPF programs built, with upstream's own headers
 * (bpf_arena_list.h, bpf_arena_htab.h in their user-space form).
 *
 * These programs loop with can_loop: on 6.1 the module's loop pass
 * (rewrite/loops.c, docs/LOOPS.md) outlines their loops; a load it refuses is
 * a failure like any other.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "runner.h"

/* What test_progs.h gives the user-space copies of the headers. */
#define __weak __attribute__((weak))
#define PAGE_SIZE getpagesize()
typedef __u64 u64;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "bpf_arena_list.h"
#include "bpf_arena_htab.h"
#pragma GCC diagnostic pop

static char load_log[1 << 16];

/* Opens and loads o; NULL (subtest marked failed or skipped) on failure. */
static struct bpf_object *open_and_load(const char *name)
{
	const struct up_obj *o = up_obj(name);
	struct bpf_object *obj = bpf_object__open_mem(o->data, o->size, NULL);
	struct bpf_program *p;
	int err;

	if (!UP_ASSERT_OK_PTR(obj, "open"))
		return NULL;
	load_log[0] = '\0';
	bpf_object__for_each_program(p, obj) {
		bpf_program__set_log_buf(p, load_log, sizeof(load_log));
		bpf_program__set_log_level(p, 1);
	}
	err = bpf_object__load(obj);
	if (err) {
		up_fail("%s__open_and_load: %d", name, err);
		up_emit_log(load_log);
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

static int prog_fd(struct bpf_object *obj, const char *name)
{
	return bpf_program__fd(bpf_object__find_program_by_name(obj, name));
}

struct elem {
	struct arena_list_node node;
	__u64 value;
};

static int list_sum(struct arena_list_head *head)
{
	struct elem __arena *n;
	int sum = 0;

	list_for_each_entry(n, head, node)
		sum += n->value;
	return sum;
}

static void test_arena_list_add_del(int cnt)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_object *obj = open_and_load("arena_list");
	int expected_sum = (u64)cnt * (cnt - 1) / 2;
	int ret, sum;

	if (!obj)
		return;
	*(int *)up_global_var(obj, ".bss", "cnt") = cnt;
	ret = bpf_prog_test_run_opts(prog_fd(obj, "arena_list_add"), &opts);
	UP_ASSERT_OK(ret, "ret_add");
	UP_ASSERT_OK(opts.retval, "retval");
	if (*(bool *)up_global_var(obj, ".bss", "skip")) {
		/* The build uses clang-19, which has arena_cast: a failure here. */
		up_fail("skip: compiler doesn't support arena_cast");
		goto out;
	}
	sum = list_sum(*(struct arena_list_head **)up_global_var(obj, ".bss", "list_head"));
	UP_ASSERT_EQ(sum, expected_sum, "sum of elems");
	UP_ASSERT_EQ(*(long *)up_arena_var(obj, "arena_sum"), expected_sum, "__arena sum of elems");
	UP_ASSERT_EQ(*(int *)up_arena_var(obj, "test_val"), cnt + 1, "num of elems");

	ret = bpf_prog_test_run_opts(prog_fd(obj, "arena_list_del"), &opts);
	UP_ASSERT_OK(ret, "ret_del");
	sum = list_sum(*(struct arena_list_head **)up_global_var(obj, ".bss", "list_head"));
	UP_ASSERT_EQ(sum, 0, "sum of list elems after del");
	UP_ASSERT_EQ(*(int *)up_global_var(obj, ".bss", "list_sum"), expected_sum,
		     "sum of list elems computed by prog");
	UP_ASSERT_EQ(*(long *)up_arena_var(obj, "arena_sum"), expected_sum, "__arena sum of elems");
out:
	bpf_object__close(obj);
}

void up_test_arena_list(void)
{
	up_start("arena_list/arena_list_1");
	test_arena_list_add_del(1);
	up_end();
	up_start("arena_list/arena_list_1000");
	test_arena_list_add_del(1000);
	up_end();
}

static void test_arena_htab_common(struct htab *htab)
{
	int i;

	printf("# htab %p buckets %p n_buckets %d\n", htab, htab->buckets, htab->n_buckets);
	UP_ASSERT_OK_PTR(htab->buckets, "htab->buckets shouldn't be NULL");
	for (i = 0; htab->buckets && i < 16; i += 4) {
		/*
		 * Walk htab buckets and link lists since all pointers are correct,
		 * though they were written by bpf program.
		 */
		int val = htab_lookup_elem(htab, i);

		UP_ASSERT_EQ(i, val, "key == value");
	}
}

static struct bpf_map *arena_map(struct bpf_object *obj)
{
	return bpf_object__find_map_by_name(obj, "arena");
}

static void test_arena_htab_llvm(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_object *obj = open_and_load("arena_htab");
	size_t arena_sz;
	void *area;
	int ret;

	if (!obj)
		return;
	area = bpf_map__initial_value(arena_map(obj), &arena_sz);
	/* fault-in a page with pgoff == 0 as sanity check */
	*(volatile int *)area = 0x55aa;
	/* bpf prog will allocate more pages */
	ret = bpf_prog_test_run_opts(prog_fd(obj, "arena_htab_llvm"), &opts);
	UP_ASSERT_OK(ret, "ret");
	UP_ASSERT_OK(opts.retval, "retval");
	if (*(bool *)up_global_var(obj, ".bss", "skip")) {
		up_fail("skip: compiler doesn't support arena_cast");
		goto out;
	}
	test_arena_htab_common(*(struct htab **)up_global_var(obj, ".bss", "htab_for_user"));
out:
	bpf_object__close(obj);
}

static void test_arena_htab_asm(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_object *obj = open_and_load("arena_htab_asm");
	int ret;

	if (!obj)
		return;
	ret = bpf_prog_test_run_opts(prog_fd(obj, "arena_htab_asm"), &opts);
	UP_ASSERT_OK(ret, "ret");
	UP_ASSERT_OK(opts.retval, "retval");
	test_arena_htab_common(*(struct htab **)up_global_var(obj, ".bss", "htab_for_user"));
	bpf_object__close(obj);
}

void up_test_arena_htab(void)
{
	up_start("arena_htab/arena_htab_llvm");
	test_arena_htab_llvm();
	up_end();
	up_start("arena_htab/arena_htab_asm");
	test_arena_htab_asm();
	up_end();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A clang-19 can_loop program (tests/progs/arena_loops_clang.bpf.c) loaded by
 * libbpf >= 1.4 with its BTF, func_info and line_info, as upstream's own
 * selftests are: on 6.1 the module lowers it and outlines the loop
 * (docs/LOOPS.md); on 6.12 it is native.  A 100k-node walk, an empty list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "kselftest_harness.h"
#include "test_util.h"

#if LIBBPF_MAJOR_VERSION < 1 || (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION < 4)
#error "needs the headers of libbpf >= 1.4 (bookworm-backports, LIBBPF_BPO_INC)"
#endif

#define NODES	100000

EMBED(walk_obj, "arena_loops_clang.bpf.o");

FIXTURE(walk) {
	struct bpf_object *obj;
	int prog_fd;
	char *base;
	__u64 (*node)[2];
};

FIXTURE_SETUP(walk)
{
	struct bpf_map *arena;
	size_t size = 0;
	int err;

	libbpf_capture(false);
	self->obj = bpf_object__open_mem(walk_obj_start, walk_obj_end - walk_obj_start, NULL);
	ASSERT_EQ(0, libbpf_get_error(self->obj));
	err = bpf_object__load(self->obj);
	ASSERT_EQ(0, err) TH_LOG("load: %d\n%s", err, str_tail(libbpf_msgs, 8000));
	self->prog_fd = bpf_program__fd(bpf_object__find_program_by_name(self->obj, "walk"));
	ASSERT_LE(0, self->prog_fd);
	arena = bpf_object__find_map_by_name(self->obj, "arena");
	ASSERT_NE(NULL, arena);
	self->base = bpf_map__initial_value(arena, &size);
	ASSERT_NE(NULL, self->base);
	/*
	 * libbpf maps the whole arena (1024 pages, the object says) and reports the
	 * globals' size; they sit at its start: nodes from the second page on.
	 */
	ASSERT_LE(8, size);
	self->node = (void *)(self->base + 4096);
}

FIXTURE_TEARDOWN(walk)
{
	bpf_object__close(self->obj);
}

TEST_F(walk, list_of_100k_nodes)
{
	__u64 sum = 0, ctx[3];
	int i;

	for (i = 0; i < NODES; i++) {
		self->node[i][0] = i + 1 < NODES ? (__u64)(uintptr_t)self->node[i + 1] : 0;
		self->node[i][1] = (__u64)i * 5 + 2;
		sum += (__u64)i * 5 + 2;
	}
	ctx[0] = (__u64)(uintptr_t)self->node[0];
	ctx[1] = ctx[2] = 0;
	ASSERT_EQ(0, run_syscall_prog(self->prog_fd, ctx, sizeof(ctx)));
	EXPECT_EQ(NODES, ctx[2]);
	EXPECT_EQ(sum, ctx[1]);
	EXPECT_EQ(1, *(__u64 *)self->base);	/* the arena global `walks` */
}

TEST_F(walk, empty_list)
{
	__u64 ctx[3] = { 0, 9, 9 };

	ASSERT_EQ(0, run_syscall_prog(self->prog_fd, ctx, sizeof(ctx)));
	EXPECT_EQ(0, ctx[1]);
	EXPECT_EQ(0, ctx[2]);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * An arena seen by the stock tools and the kernel's accounting:
 *  - bpftool (7.1, which predates arena) shows a sane type-33 map, lists it,
 *    and fails cleanly where arena has no elements;
 *  - arena pages are charged to the memory cgroup of the process that faults
 *    them in, and uncharged when the arena goes away.
 * Same assertions on 6.1 with the module and on 6.12.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "test_util.h"

#define PG 4096

TEST(bpftool_shows_lists_and_refuses_to_dump_an_arena)
{
	char cmd[128], out[8192];
	int fd = arena_create_named("tool_arena", 64, 0, 0);
	uint32_t id;

	ASSERT_LE(0, fd);
	id = map_id(fd);
	ASSERT_NE(0, id);
	snprintf(cmd, sizeof(cmd), "bpftool map show id %u 2>&1", id);
	ASSERT_EQ(0, run_cmd(cmd, out, sizeof(out))) TH_LOG("%s", out);
	/* bpftool 7.1 has no name for type 33: it prints the number. */
	EXPECT_NE(NULL, strstr(out, "type 33")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "name tool_arena"));
	EXPECT_NE(NULL, strstr(out, "max_entries 64"));
	EXPECT_NE(NULL, strstr(out, "flags 0x400"));
	snprintf(cmd, sizeof(cmd), "bpftool -j map show id %u 2>&1", id);
	ASSERT_EQ(0, run_cmd(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "\"type\":33")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_cmd("bpftool map list 2>&1", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "tool_arena"));
	/* No elements to walk: get_next_key is EOPNOTSUPP, a clean failure. */
	snprintf(cmd, sizeof(cmd), "bpftool map dump id %u 2>&1", id);
	run_cmd(cmd, out, sizeof(out));
	EXPECT_EQ(NULL, strstr(out, "Segmentation")) TH_LOG("%s", out);
	close(fd);
}

#define CG_TEST CG_ROOT "/arena_test"

/* Sets up a cgroup v2 child with the memory controller; false if impossible. */
static bool memcg_setup(void)
{
	if (!memcg_enable())
		return false;
	rmdir(CG_TEST);
	return !mkdir(CG_TEST, 0755);
}

TEST(arena_pages_are_charged_to_the_faulting_memcg)
{
	const unsigned int pages = 2048;	/* 8 MiB */
	long long before, during, after;
	int to_child[2], to_parent[2];
	char c = 0;
	pid_t pid;
	int st;

	if (!memcg_setup())
		SKIP(return, "no cgroup v2 memory controller in this kernel/guest");
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *base;
		unsigned int i;
		int fd;

		if (!cg_move(CG_TEST, getpid()))
			_exit(2);
		fd = arena_create_named("memcg_arena", pages, 0, 0);
		if (fd < 0)
			_exit(3);
		base = mmap(NULL, (size_t)pages * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (base == MAP_FAILED)
			_exit(4);
		if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(5);
		for (i = 0; i < pages; i++)
			base[(size_t)i * PG] = 1;
		if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(5);
		munmap(base, (size_t)pages * PG);
		close(fd);
		_exit(0);
	}
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	before = read_num(CG_TEST "/memory.current");
	ASSERT_EQ(1, write(to_child[1], &c, 1));
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	during = read_num(CG_TEST "/memory.current");
	ASSERT_EQ(1, write(to_child[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	/* The arena is freed from a workqueue: give it a moment. */
	for (int i = 0; i < 50; i++) {
		after = read_num(CG_TEST "/memory.current");
		if (after < during - (long long)pages * PG / 2)
			break;
		usleep(100 * 1000);
	}
	TH_LOG("memory.current: before %lld during %lld after %lld", before, during, after);
	EXPECT_LE(before + (long long)pages * PG, during);
	EXPECT_GT(during - (long long)pages * PG / 2, after);
	rmdir(CG_TEST);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * Seed generator for lower_fuzz: builds a raw-instruction test file
 * (tests/arena_jit_test.c, arena_adversarial_test.c or arena_loops_test.c,
 * chosen with -DTEST_SRC) against a fake bpf(): map creation returns a memfd
 * (so the tests' mmap works), every BPF_PROG_LOAD writes its instructions with
 * a lower_fuzz env prefix to $DUMP_DIR and fails.  The tests then fail; only
 * the dumps matter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/bpf.h>

/* test_util.h's helpers reach the kernel through this sys_bpf() instead. */
#define TEST_UTIL_SYS_BPF
#include <stdint.h>
#include <unistd.h>

static int fuzzdump_arena_fd = -1;
static unsigned int fuzzdump_seq;

static void fuzzdump_prog(const struct bpf_insn *insns, unsigned int cnt, unsigned int flags)
{
	const char *dir = getenv("DUMP_DIR");
	unsigned char env[10] = { 0 };
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	env[0] = flags & BPF_F_SLEEPABLE ? 2 : 0;
	env[1] = (unsigned char)fuzzdump_arena_fd;
	env[2] = 250;			/* a companion fd no test uses */
	env[3] = 21;
	env[4] = 22;
	env[5] = 1;			/* user_vm_start 0x100000000 */
	env[8] = 64;
	snprintf(path, sizeof(path), "%s/%s.%d.%u", dir, TEST_NAME, getpid(), fuzzdump_seq++);
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(env, 1, sizeof(env), f);
	fwrite(insns, sizeof(*insns), cnt, f);
	fclose(f);
}

static inline long sys_bpf(int cmd, void *attr_buf, unsigned int size)
{
	union bpf_attr *attr = attr_buf;

	(void)size;
	if (cmd == BPF_MAP_CREATE) {
		int fd = memfd_create("map", 0);

		if (fd < 0 || ftruncate(fd, (off_t)attr->max_entries * 4096 + 4096))
			return -1;
		if (attr->map_type == 33)
			fuzzdump_arena_fd = fd;
		return fd;
	}
	if (cmd == BPF_PROG_LOAD)
		fuzzdump_prog((const void *)(uintptr_t)attr->insns, attr->insn_cnt, attr->prog_flags);
	errno = ENOSYS;
	return -1;
}

#include TEST_SRC

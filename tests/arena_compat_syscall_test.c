// SPDX-License-Identifier: GPL-2.0
/*
 * The 32-bit bpf() entry (int 0x80, __ia32_sys_bpf) answers as the 64-bit
 * one does, on 6.1 + module as on a native arena kernel: arena maps are
 * created, arena programs are lowered and run, the capability rules hold
 * (CAP_BPF and CAP_PERFMON to use an arena), a second freeze is EPERM.
 * Through an unhooked 32-bit entry a program naming an arena reached the
 * stock 6.1 verifier unlowered, without the module's checks.
 *
 * The test is a 64-bit program issuing int 0x80 (as a 32-bit program
 * would); the attr it passes lives below 4 GiB (MAP_32BIT), every pointer
 * inside it is a __u64 as for any caller.
 */
#include <linux/bpf.h>
#include <linux/bpf_arena.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PG		4096UL
#define NR_BPF_32	357	/* arch/x86/entry/syscalls/syscall_32.tbl */

/* attr lives below 4 GiB, copied there for each call. */
static union bpf_attr *low_attr;

static long bpf32(int cmd, const union bpf_attr *attr)
{
	long ret;

	memcpy(low_attr, attr, sizeof(*attr));
	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "a"(NR_BPF_32), "b"(cmd), "c"((unsigned int)(uintptr_t)low_attr),
		       "d"((unsigned int)sizeof(*attr))
		     : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

static long bpf64(int cmd, const union bpf_attr *attr)
{
	long r = syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return r < 0 ? -errno : r;
}

FIXTURE(compat) {
	int map64;
	char *page;	/* page 0 of its arena, mapped */
};

FIXTURE_SETUP(compat)
{
	union bpf_attr a;
	long r;

	low_attr = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			-1, 0);
	ASSERT_NE(MAP_FAILED, low_attr);
	memset(&a, 0, sizeof(a));
	r = bpf32(BPF_PROG_GET_NEXT_ID, &a);
	if (r == -ENOSYS)
		SKIP(return, "no 32-bit syscall entry in this kernel (ia32 emulation off)");
	arena_attr(&a, 4, 0, 0);
	self->map64 = (int)bpf64(BPF_MAP_CREATE, &a);
	ASSERT_LE(0, self->map64);
	self->page = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->map64, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	self->page[0] = 1;	/* allocates page 0 */
}

FIXTURE_TEARDOWN(compat)
{
	if (self->page && self->page != MAP_FAILED)
		munmap(self->page, 4 * PG);
	if (self->map64 > 0)
		close(self->map64);
	if (low_attr && low_attr != MAP_FAILED)
		munmap(low_attr, PG);
}

/* Stores 42 through an arena pointer to the arena's page 0. */
static long load_store42(int map_fd, uint64_t uaddr, bool compat, char *log, size_t log_size)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, map_fd),
		I_LD_IMM64(2, uaddr),
		I_CAST_KERN(2, 2),
		I_ST(BPF_W, 2, 0, 42),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SYSCALL;
	a.prog_flags = BPF_F_SLEEPABLE;
	a.insns = ptr_u64(insns);
	a.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	a.license = ptr_u64("GPL");
	if (log) {
		a.log_buf = ptr_u64(log);
		a.log_size = (uint32_t)log_size;
		a.log_level = 1;
		log[0] = 0;
	}
	return compat ? bpf32(BPF_PROG_LOAD, &a) : bpf64(BPF_PROG_LOAD, &a);
}

TEST_F(compat, arena_map_create_through_int_0x80)
{
	union bpf_attr a;
	long fd;
	char *p;

	arena_attr(&a, 4, 0, 0);
	fd = bpf32(BPF_MAP_CREATE, &a);
	ASSERT_LE(0, fd);
	p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	p[PG] = 7;
	EXPECT_EQ(7, p[PG]);
	munmap(p, 4 * PG);
	close((int)fd);
}

TEST_F(compat, arena_program_loads_and_runs_through_int_0x80)
{
	static char log[1 << 16];
	union bpf_attr a;
	long fd;

	fd = load_store42(self->map64, (uint64_t)(uintptr_t)self->page, true, log, sizeof(log));
	ASSERT_LE(0, fd) TH_LOG("load through int 0x80: %ld\n%s", fd, log);
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	EXPECT_EQ(0, bpf64(BPF_PROG_TEST_RUN, &a));
	EXPECT_EQ(42, *(volatile int *)self->page);
	close((int)fd);
}

TEST_F(compat, second_freeze_through_int_0x80_is_eperm)
{
	union bpf_attr a;
	int fd;

	arena_attr(&a, 4, 0, 0);
	fd = (int)bpf64(BPF_MAP_CREATE, &a);	/* never mapped writable: freezable */
	ASSERT_LE(0, fd);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	EXPECT_EQ(0, bpf32(BPF_MAP_FREEZE, &a));
	EXPECT_EQ(-EPERM, bpf32(BPF_MAP_FREEZE, &a));
	close(fd);
}

/*
 * With CAP_BPF but not CAP_PERFMON a program naming an arena is refused
 * (EPERM), through either entry; the exit status is the load's -errno, 0
 * if it loaded, 255 on setup failure.
 */
static int load_without_perfmon(int map_fd, uint64_t uaddr, bool compat)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		long fd;

		if (set_caps(1ULL << CAP_BPF))
			_exit(255);
		fd = load_store42(map_fd, uaddr, compat, NULL, 0);
		_exit(fd < 0 ? (int)-fd : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 255;
	return WEXITSTATUS(st);
}

TEST_F(compat, cap_perfmon_is_required_through_either_entry)
{
	uint64_t uaddr = (uint64_t)(uintptr_t)self->page;

	EXPECT_EQ(EPERM, load_without_perfmon(self->map64, uaddr, false));
	EXPECT_EQ(EPERM, load_without_perfmon(self->map64, uaddr, true));
}

TEST_HARNESS_MAIN

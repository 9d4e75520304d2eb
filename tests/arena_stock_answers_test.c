// SPDX-License-Identifier: GPL-2.0
/*
 * The module's bpf() hook gives the stock 6.1 kernel's answer wherever the
 * call is not an arena one: each case runs with the module loaded, then
 * with it unloaded (the stock answer), and the two must be equal.  From
 * attack review 7 of 722ac2b, which made the hook answer a fault itself
 * (EFAULT) instead of passing the call on; its first version read
 * fd_array where 6.1 does not, and answered before 6.1's own earlier checks:
 *
 *   A  MAP_FD program, fd_array at a PROT_NONE page, no index named: 6.1
 *      never reads fd_array (verifier.c:13136, :1909): it loads.
 *   B  MAP_IDX 0 and 2048, the page holding indexes 1024-2047 PROT_NONE:
 *      6.1 reads entries 0 and 2048 only: it loads.
 *   C  MAP_IDX 0, invalid log attrs, fd_array faulting: 6.1 EINVAL
 *      (verifier.c:15565) before any fd_array read.
 *   D  a caller without capabilities, attr faulting: 6.1 EPERM if
 *      unprivileged_bpf_disabled (syscall.c:5056) before reading the attr.
 *   E  BTF_LOAD, blob faulting, invalid log attrs: 6.1 btf_parse() EINVAL.
 *   F  insns faulting, an unknown prog_flags bit: 6.1 EINVAL before the copy.
 *
 * And bpf() takes its command from the low 32 bits of rdi (int cmd): the
 * hook must as well, or bpf(BPF_PROG_LOAD | 1 << 32) loads an arena program
 * unlowered (refused by 6.1 with an unrelated message).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PG 4096

static int map_fd;
static char *hole3;	/* 3 pages, the middle one PROT_NONE */
static char *none;	/* 1 page PROT_NONE */

static long load(struct bpf_insn *insns, unsigned int cnt, const void *fd_array, int bad_log)
{
	union bpf_attr a;
	long r;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = ptr_u64(insns);
	a.insn_cnt = cnt;
	a.license = ptr_u64("GPL");
	a.fd_array = ptr_u64(fd_array);
	if (bad_log)
		a.log_level = 1;	/* no buffer: invalid log attrs */
	r = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (r >= 0) {
		close(r);
		return 0;
	}
	return -errno;
}

static long case_a(void)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, map_fd),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};

	return load(insns, 4, none, 0);
}

static long case_b(void)
{
	struct bpf_insn insns[] = {
		I_LD_PSEUDO(1, BPF_PSEUDO_MAP_IDX, 0),
		I_LD_PSEUDO(2, BPF_PSEUDO_MAP_IDX, 2048),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};

	return load(insns, 6, hole3, 0);
}

static long case_c(void)
{
	struct bpf_insn insns[] = {
		I_LD_PSEUDO(1, BPF_PSEUDO_MAP_IDX, 0),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};

	return load(insns, 4, none, 1);
}

static long case_d(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int st;
	pid_t pid = fork();

	if (!pid) {
		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d))
			_exit(200);
		_exit(sys_bpf(BPF_PROG_LOAD, none, sizeof(union bpf_attr)) < 0 ? errno : 0);
	}
	waitpid(pid, &st, 0);
	return -WEXITSTATUS(st);
}

static long case_e(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.btf = ptr_u64(none);
	a.btf_size = 1024;
	a.btf_log_level = 1;	/* no buffer: invalid log attrs */
	if (sys_bpf(BPF_BTF_LOAD, &a, sizeof(a)) >= 0)
		return 0;
	return -errno;
}

static long case_f(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = ptr_u64(none);
	a.insn_cnt = 2;
	a.license = ptr_u64("GPL");
	a.prog_flags = 1U << 31;
	if (sys_bpf(BPF_PROG_LOAD, &a, sizeof(a)) >= 0)
		return 0;
	return -errno;
}

#define NCASES 6
static long (*const cases[NCASES])(void) = { case_a, case_b, case_c, case_d, case_e, case_f };

static void run_cases(long *res)
{
	unsigned int i;

	for (i = 0; i < NCASES; i++)
		res[i] = cases[i]();
}

TEST(answers_are_the_stock_kernels)
{
	long mod[NCASES], stock[NCASES];
	unsigned int i;

	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: no module to compare with");
	if (!kmod_is_loaded())
		SKIP(return, "the module is not loaded");
	hole3 = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole3);
	ASSERT_NE(MAP_FAILED, none);
	map_fd = array_create(8, 0);
	ASSERT_LE(0, map_fd);
	((int *)hole3)[0] = map_fd;
	((int *)hole3)[2048] = map_fd;	/* the third page */
	ASSERT_EQ(0, mprotect(hole3 + PG, PG, PROT_NONE));

	run_cases(mod);
	/* Earlier tests' arenas are freed through RCU and work queues. */
	if (kmod_unload_when_idle(10000))
		SKIP(return, "the module is still in use after 10 s (an arena is alive elsewhere)");
	run_cases(stock);
	ASSERT_EQ(0, kmod_load());
	for (i = 0; i < NCASES; i++) {
		long m = mod[i], st = stock[i];

		EXPECT_EQ(st, m) TH_LOG("case %c: module %ld (%s), stock %ld (%s)", 'A' + i,
					m, strerror((int)-m), st, strerror((int)-st));
	}
	close(map_fd);
	munmap(hole3, 3 * PG);
	munmap(none, PG);
}

/* A sleepable program naming the arena: r1 = &arena; r0 = 0; exit. */
static long load_arena_prog_cmd(unsigned long cmd, int arena_fd, char *log, size_t log_size)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, arena_fd),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	union bpf_attr a;
	long r;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SYSCALL;
	a.prog_flags = BPF_F_SLEEPABLE;
	a.insns = ptr_u64(insns);
	a.insn_cnt = 4;
	a.license = ptr_u64("GPL");
	log[0] = '\0';
	a.log_buf = ptr_u64(log);
	a.log_size = log_size;
	a.log_level = 1;
	r = syscall(SYS_bpf, cmd, &a, sizeof(a));
	return r < 0 ? -errno : r;
}

TEST(command_is_the_low_32_bits)
{
	static char log[16384];
	int arena = arena_create(4, 0, 0);
	void *base;
	long r;

	ASSERT_LE(0, arena) TH_LOG("arena: %s", strerror(-arena));
	base = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, arena, 0);
	ASSERT_NE(MAP_FAILED, base);
	r = load_arena_prog_cmd(BPF_PROG_LOAD, arena, log, sizeof(log));
	ASSERT_LE(0, r) TH_LOG("bpf(BPF_PROG_LOAD): %s\n%s", strerror((int)-r), log);
	close(r);
	r = load_arena_prog_cmd(BPF_PROG_LOAD | 1UL << 32, arena, log, sizeof(log));
	EXPECT_LE(0, r) TH_LOG("bpf(BPF_PROG_LOAD | 1 << 32): %s\n%s", strerror((int)-r), log);
	if (r >= 0)
		close(r);
	munmap(base, 4 * PG);
	close(arena);
}

TEST_HARNESS_MAIN

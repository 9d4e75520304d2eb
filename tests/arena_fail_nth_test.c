// SPDX-License-Identifier: GPL-2.0
/*
 * Every allocation made by the module's bpf() entry points fails, one at a
 * time, in turn: /proc/thread-self/fail-nth (the sweep syzkaller uses) makes
 * the Nth fault-injection point this thread reaches fail, for N = 1, 2, ...
 * until a call runs through without reaching it.  Each failed call must give
 * ENOMEM or what the stock kernel itself answers to that failure (listed
 * with their sources below), never another answer; a call that succeeds
 * must have done all of its work, and the call that runs through must work.
 *
 * From make stress-faults (2026-12-05): a failed allocation or copy in the
 * module's BPF_PROG_LOAD hook passed the call on to the stock path, which
 * read the program again and loaded it unlowered: EINVAL "Sleepable programs
 * can only use array, hash, and ringbuf maps" (the arena map as 6.1 sees it).
 * BPF_BTF_LOAD did the same with an "arg:arena" BTF (loaded unedited).
 *
 * Who reaches these: any CAP_BPF caller of bpf(); they control nothing here
 * but the timing of allocation failures, which memory pressure gives anyone.
 *
 * Needs CONFIG_FAULT_INJECTION with failslab and fail_page_alloc in debugfs:
 * the debug kernel (make check-debug).  Skipped elsewhere, with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/btf.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PG		4096
#define PAGES		16
#define MAX_NTH		20000
#define LOG_SIZE	(64 * 1024)
#define ENOTSUPP	524	/* the kernel's, not in the uapi */
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define DBG		"/sys/kernel/debug/"

/* The knobs set for the sweep: only fail-nth fires (probability 0). */
static const struct knob {
	const char *path;
	const char *value;
} knobs[] = {
	{ DBG "failslab/probability", "0" },
	{ DBG "failslab/ignore-gfp-wait", "N" },
	{ DBG "failslab/verbose", "0" },
	{ DBG "fail_page_alloc/probability", "0" },
	{ DBG "fail_page_alloc/ignore-gfp-wait", "N" },
	{ DBG "fail_page_alloc/ignore-gfp-highmem", "N" },
	{ DBG "fail_page_alloc/min-order", "0" },
	{ DBG "fail_page_alloc/verbose", "0" },
};

FIXTURE(nth) {
	char saved[ARRAY_SIZE(knobs)][32];
	bool set;
	int map_fd, btf_fd;
	uint32_t alloc_id;
	char *base;
	char log[LOG_SIZE];
};

FIXTURE_SETUP(nth)
{
	unsigned int i;

	self->map_fd = -1;
	self->btf_fd = -1;
	self->set = false;
	/*
	 * Touched now: a log page first written by the kernel's copy_to_user()
	 * would need an allocation, and its failure is the stock EFAULT.
	 */
	memset(self->log, 0, sizeof(self->log));
	if (access(FAIL_NTH, W_OK) || access(DBG "failslab", F_OK) ||
	    access(DBG "fail_page_alloc", F_OK))
		SKIP(return, "no fault injection in this kernel (fail-nth, failslab, fail_page_alloc): make check-debug runs this");
	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: the module's hooks are not there");
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		ASSERT_TRUE(read_line(knobs[i].path, self->saved[i], sizeof(self->saved[i])))
			TH_LOG("%s", knobs[i].path);
	self->set = true;
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		ASSERT_TRUE(write_str(knobs[i].path, knobs[i].value)) TH_LOG("%s", knobs[i].path);
	self->map_fd = arena_create(PAGES, 0, 0);
	ASSERT_LE(0, self->map_fd) TH_LOG("arena: %s", strerror(-self->map_fd));
	self->base = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->map_fd, 0);
	ASSERT_NE(MAP_FAILED, self->base);
	self->alloc_id = find_kernel_func("bpf_arena", "bpf_arena_alloc_pages", &self->btf_fd);
	ASSERT_NE(0, self->alloc_id);
}

FIXTURE_TEARDOWN(nth)
{
	unsigned int i;

	if (self->set)
		for (i = 0; i < ARRAY_SIZE(knobs); i++)
			write_str(knobs[i].path, self->saved[i]);
	if (self->base && self->base != MAP_FAILED)
		munmap(self->base, PAGES * PG);
	if (self->map_fd >= 0)
		close(self->map_fd);
	if (self->btf_fd >= 0)
		close(self->btf_fd);
}

static void set_fail_nth(unsigned int n)
{
	char buf[16];
	int fd = open(FAIL_NTH, O_WRONLY);

	if (fd < 0)
		return;
	snprintf(buf, sizeof(buf), "%u", n);
	if (write(fd, buf, strlen(buf)) < 0)
		perror(FAIL_NTH);
	close(fd);
}

/* The points left before the injection: 0 once it was injected. */
static long fail_nth_left(void)
{
	char buf[16] = "";
	int fd = open(FAIL_NTH, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/*
 * An arena program: allocate a page at any address, store 42 through the
 * cast pointer, return 1 (0 if the allocation failed).  prog_type and flags
 * pick the kfunc flavour (sleepable, or the non-sleepable allocator).
 */
static int load_arena_prog(struct __test_metadata *_metadata, FIXTURE_DATA(nth) *self,
			   enum bpf_prog_type type, unsigned int flags)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, self->map_fd),
		I_MOV64_IMM(2, 0),
		I_MOV64_IMM(3, 1),
		I_MOV64_IMM(4, -1),
		I_MOV64_IMM(5, 0),
		I_CALL_KFUNC(self->alloc_id, 1),
		I_JMP_IMM(BPF_JEQ, 0, 0, 4),
		I_CAST_KERN(0, 0),
		I_ST(BPF_DW, 0, 0, 42),
		I_MOV64_IMM(0, 1),
		I_EXIT(),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	int fds[2] = { self->map_fd, self->btf_fd };
	union bpf_attr attr;
	long fd;

	(void)_metadata;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.prog_flags = flags;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = ARRAY_SIZE(insns);
	attr.license = ptr_u64("GPL");
	attr.fd_array = ptr_u64(fds);
	self->log[0] = '\0';
	attr.log_buf = ptr_u64(self->log);
	attr.log_size = LOG_SIZE;
	attr.log_level = 1;
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	return fd < 0 ? -errno : (int)fd;
}

static int op_syscall_sleepable(struct __test_metadata *_metadata, FIXTURE_DATA(nth) *self)
{
	return load_arena_prog(_metadata, self, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE);
}

static int op_tc_nosleep(struct __test_metadata *_metadata, FIXTURE_DATA(nth) *self)
{
	return load_arena_prog(_metadata, self, BPF_PROG_TYPE_SCHED_CLS, 0);
}

/* int f(int a) with a tagged "arg:arena": the module retypes a to u64. */
/* The size of the BTF the kernel holds for fd, or 0. */
static uint32_t btf_loaded_size(int fd)
{
	struct bpf_btf_info info;

	memset(&info, 0, sizeof(info));
	return obj_info(fd, &info, sizeof(info)) ? 0 : info.btf_size;
}

static int op_btf_arg_arena(struct __test_metadata *_metadata, FIXTURE_DATA(nth) *self)
{
	static const char strs[] = "\0int\0f\0a\0arg:arena";
	enum { S_INT = 1, S_F = 5, S_A = 7, S_TAG = 9 };
	uint32_t types[] = {
		S_INT, BTF_KIND_INT << 24, 4, 32,		/* [1] int */
		0, BTF_KIND_FUNC_PROTO << 24 | 1, 1, S_A, 1,	/* [2] int (int a) */
		S_F, BTF_KIND_FUNC << 24 | 1, 2,		/* [3] global f */
		S_TAG, BTF_KIND_DECL_TAG << 24, 3, 0,		/* [4] a: arg:arena */
	};
	uint8_t blob[sizeof(struct btf_header) + sizeof(types) + sizeof(strs)];
	struct btf_header *h = (void *)blob;
	union bpf_attr attr;
	long fd;

	memset(h, 0, sizeof(*h));
	h->magic = BTF_MAGIC;
	h->version = BTF_VERSION;
	h->hdr_len = sizeof(*h);
	h->type_len = sizeof(types);
	h->str_off = sizeof(types);
	h->str_len = sizeof(strs);
	memcpy(blob + sizeof(*h), types, sizeof(types));
	memcpy(blob + sizeof(*h) + sizeof(types), strs, sizeof(strs));
	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(blob);
	attr.btf_size = sizeof(blob);
	self->log[0] = '\0';
	attr.btf_log_buf = ptr_u64(self->log);
	attr.btf_log_size = LOG_SIZE;
	attr.btf_log_level = 1;
	fd = bpf_sys(BPF_BTF_LOAD, &attr);
	if (fd < 0)
		return -errno;
	/* Edited: a u64 INT and the cloned prototype (with a u64 a) added. */
	EXPECT_LT(sizeof(blob), btf_loaded_size(fd)) TH_LOG("an arg:arena BTF loaded unedited");
	return fd;
}

static int op_arena_create(struct __test_metadata *_metadata, FIXTURE_DATA(nth) *self)
{
	(void)_metadata;
	self->log[0] = '\0';
	return arena_create(PAGES, 0, 0);
}

typedef int (*nth_op)(struct __test_metadata *_metadata, FIXTURE_DATA(nth) *self);

/*
 * Fails the 1st, 2nd, ... injection point of op in turn; every injected
 * call gives a result in ok_errs (or succeeds: the failure was absorbed).
 * Returns the fd of the first call that ran through without injection.
 */
static int sweep(struct __test_metadata *_metadata, FIXTURE_DATA(nth) *self, const char *name,
		 nth_op op, const int *ok_errs)
{
	unsigned int n, injected = 0, absorbed = 0, e;
	int r = -1;
	long left;

	for (n = 1; n <= MAX_NTH; n++) {
		set_fail_nth(n);
		r = op(_metadata, self);
		left = fail_nth_left();
		set_fail_nth(0);
		if (left != 0)
			break;
		injected++;
		if (r >= 0) {
			absorbed++;
			close(r);
			continue;
		}
		for (e = 0; ok_errs[e] && ok_errs[e] != -r; e++)
			;
		EXPECT_NE(0, ok_errs[e])
			TH_LOG("%s: failing injection point %u: errno %d (%s)\nlog ends: %s",
			       name, n, -r, strerror(-r), str_tail(self->log, 600));
	}
	EXPECT_GT(MAX_NTH, n) TH_LOG("%s: still injecting after %u points", name, n);
	EXPECT_LT(0, injected) TH_LOG("%s: no injection point reached", name);
	TH_LOG("%s: %u injection points failed in turn (%u absorbed); then %d", name, injected,
	       absorbed, r);
	EXPECT_LE(0, r) TH_LOG("%s without injection: %s\nlog ends: %s", name, strerror(-r),
			       str_tail(self->log, 600));
	return r;
}

/*
 * The stock answers to a failed allocation, besides ENOMEM: a verifier
 * whose push_stack() could not allocate a branch's state says EFAULT
 * (6.1's kernel/bpf/verifier.c:10491, 6.12 too); the JIT's failure leaves an
 * arena program unJITed, refused with ENOTSUPP as upstream.
 */
static const int load_errs[] = { ENOMEM, EFAULT, ENOTSUPP, 0 };
/*
 * 6.1's btf_check_all_metas() ignores btf_add_type()'s ENOMEM
 * (kernel/bpf/btf.c:4648): the type it could not add makes the BTF invalid
 * (EINVAL).  What the module did wrong here was a success: the blob loaded
 * unedited; every BTF that loads is checked to be the edited one.
 */
static const int btf_errs[] = { ENOMEM, EINVAL, 0 };
static const int nomem_errs[] = { ENOMEM, 0 };

/* The loaded program still works: it allocates a page and writes 42 there. */
static void expect_runs(struct __test_metadata *_metadata, FIXTURE_DATA(nth) *self, int fd)
{
	uint64_t ctx[2] = { 0, 0 };
	unsigned int i, found = 0;

	EXPECT_EQ(1, run_syscall_prog(fd, ctx, sizeof(ctx)));
	for (i = 0; i < PAGES; i++)
		found += *(volatile uint64_t *)(self->base + (size_t)i * PG) == 42;
	EXPECT_EQ(1, found);
}

TEST_F_TIMEOUT(nth, prog_load_sleepable, 900)
{
	int fd = sweep(_metadata, self, "sleepable syscall program", op_syscall_sleepable,
		       load_errs);

	if (fd >= 0) {
		expect_runs(_metadata, self, fd);
		close(fd);
	}
}

TEST_F_TIMEOUT(nth, prog_load_nosleep, 900)
{
	int fd = sweep(_metadata, self, "non-sleepable TC program", op_tc_nosleep, load_errs);

	if (fd >= 0)
		close(fd);
}

TEST_F_TIMEOUT(nth, btf_load_arg_arena, 300)
{
	int fd = sweep(_metadata, self, "BTF with arg:arena", op_btf_arg_arena, btf_errs);

	if (fd >= 0)
		close(fd);
}

TEST_F_TIMEOUT(nth, arena_map_create, 300)
{
	int fd = sweep(_metadata, self, "arena map create", op_arena_create, nomem_errs);

	if (fd >= 0)
		close(fd);
}

TEST_HARNESS_MAIN

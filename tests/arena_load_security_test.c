// SPDX-License-Identifier: GPL-2.0
/*
 * Attacks on the program-load path (issue 11), each a regression test that
 * broke the module at 8d8c33e.  docs/SECURITY.md names the invariant each one
 * checks.  Runs on 6.1 with the module and on 6.12 (in-tree arena, the
 * reference: the same attack must not work there either); tests that only
 * make sense for the module SKIP on 6.12 with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PG		4096
#define LOG_SIZE	(1 << 20)
#define ARENA_VAL	0x1111222233334444ULL	/* what the arena holds */
#define EVIL_VAL	0x5555666677778888ULL	/* what the attacker's map holds */

static char vlog[LOG_SIZE];

/*
 * The attacker's stand-in for the companion: an ARRAY of one 8-byte value,
 * read-only for programs and frozen, so the verifier reads its value as a
 * known constant.
 */
static int evil_map(void)
{
	uint64_t val = EVIL_VAL;
	uint32_t key = 0;
	int fd = array_create(sizeof(val), BPF_F_RDONLY_PROG), err;

	if (fd < 0)
		return fd;
	err = map_update(fd, &key, &val) ?: map_freeze(fd);
	return err ?: fd;
}

/* Moves fd above the numbers the attacker plays with. */
static int high_fd(int fd)
{
	int h;

	if (fd < 0)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	close(fd);
	return h;
}

/*
 * ctx[0] = a user address in the arena.  r0 = *(u64 *)arena_ptr, then
 * 2 if it is the attacker's constant (what a verifier fooled by a swapped
 * companion proves: the other branches are then dead code), 1 if it is the
 * arena's value, 3 for anything else (an unraised placeholder reads 0).
 */
#define READ_PROG(arena_fd)							\
	{									\
		I_MOV64_REG(6, 1),						\
		I_LD_MAP_FD(1, arena_fd),					\
		I_LDX(BPF_DW, 7, 6, 0),						\
		I_CAST_KERN(7, 7),						\
		I_LDX(BPF_DW, 0, 7, 0),						\
		I_LD_IMM64(2, EVIL_VAL),					\
		I_JMP_REG(BPF_JEQ, 0, 2, 7),					\
		I_LD_IMM64(2, ARENA_VAL),					\
		I_JMP_REG(BPF_JEQ, 0, 2, 2),					\
		I_MOV64_IMM(0, 3),						\
		I_EXIT(),							\
		I_MOV64_IMM(0, 1),						\
		I_EXIT(),							\
		I_MOV64_IMM(0, 2),						\
		I_EXIT(),							\
	}

struct race {
	atomic_bool stop;
	int evil;
	int base;	/* lowest fd number the loader's new fds take */
	long swaps;
};

/* dup2()s the attacker's map over, and closes, every fd number a load may create. */
static void *fd_swapper(void *arg)
{
	struct race *r = arg;
	int k;

	while (!atomic_load(&r->stop)) {
		for (k = 0; k < 4; k++)
			dup2(r->evil, r->base + k);
		for (k = 0; k < 4; k++)
			close(r->base + k);
		r->swaps++;
	}
	return NULL;
}

/*
 * Issue 11.1: a sibling thread replaces the fd numbers the module creates
 * (the companion's, at creation and for each load) with its own frozen map.
 * Each round uses a new arena, so the companion is created again.  Every
 * load must fail cleanly or give a program that reads the arena.
 */
TEST(companion_fd_race_never_changes_what_programs_see)
{
	int good = 0, rounds = 0, wrong = 0, last_wrong = 0;
	struct race r = { .stop = false };
	double end = now() + 20;
	pthread_t t;

	r.evil = high_fd(evil_map());
	ASSERT_LE(0, r.evil);
	r.base = dup(0);
	ASSERT_LE(0, r.base);
	close(r.base);
	ASSERT_EQ(0, pthread_create(&t, NULL, fd_swapper, &r));
	while (now() < end && rounds < 3000) {
		int afd = high_fd(arena_create(1, 0, 0));
		uint64_t ctx[1];
		uint64_t *p;
		int pfd;
		long ret;

		rounds++;
		if (afd < 0)
			continue;
		p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
		if (p == MAP_FAILED) {
			close(afd);
			continue;
		}
		*p = ARENA_VAL;
		ctx[0] = ptr_u64(p);
		{
			struct bpf_insn insns[] = READ_PROG(afd);

			pfd = high_fd(load_syscall_prog(insns, ARRAY_SIZE(insns), NULL, 0));
		}
		if (pfd >= 0) {
			ret = run_syscall_prog(pfd, ctx, sizeof(ctx));
			if (ret == 1) {
				good++;
			} else if (ret > 0) {
				wrong++;
				last_wrong = ret;
			}
			close(pfd);
		}
		munmap(p, PG);
		close(afd);
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	close(r.evil);
	TH_LOG("%d rounds, %d good runs, %d wrong runs (last r0 %d), %ld swap loops",
	       rounds, good, wrong, last_wrong, r.swaps);
	EXPECT_EQ(0, wrong);
	EXPECT_LE(20, good);
}

/* Issue 11.2: fd_array indexes the kernel copy cannot cover are refused. */
TEST(fd_array_index_out_of_the_copy_is_refused)
{
	static const int idx[] = { -1, -100000, 70000 };
	unsigned int i;
	int afd;

	if (kernel_has_native_arena())
		SKIP(return, "6.12 has in-tree arena: it reads fd_array in user memory");
	afd = arena_create(1, 0, 0);
	ASSERT_LE(0, afd);
	ASSERT_NE(MAP_FAILED, mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0));
	for (i = 0; i < ARRAY_SIZE(idx); i++) {
		struct bpf_insn insns[] = {
			{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
			  .src_reg = BPF_PSEUDO_MAP_IDX, .imm = 0 }, { 0 },
			{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 2,
			  .src_reg = BPF_PSEUDO_MAP_IDX, .imm = idx[i] }, { 0 },
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};
		int fds[1] = { afd };
		char want[64];
		int fd = load_prog_fd_array(insns, ARRAY_SIZE(insns), fds, vlog, LOG_SIZE);

		if (fd >= 0)
			close(fd);
		EXPECT_EQ(-EINVAL, fd) TH_LOG("index %d: %s", idx[i], vlog);
		snprintf(want, sizeof(want), "fd_array index %d out of range", idx[i]);
		EXPECT_NE(NULL, strstr(vlog, want)) TH_LOG("want '%s' in: %s", want, vlog);
	}
	close(afd);
}

static long resident_pages(void *p, size_t len)
{
	unsigned char *vec = calloc(len / PG, 1);
	long n = 0;
	size_t i;

	if (!vec || mincore(p, len, vec))
		return -1;
	for (i = 0; i < len / PG; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/*
 * Issue 11.3: a caller the stock kernel refuses makes the module copy
 * nothing.  The instructions and the BTF blob sit in untouched anonymous
 * memory: any read of it by the kernel makes pages resident.
 */
TEST(refused_callers_cost_no_copy)
{
	const size_t len = 16 << 20;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		union bpf_attr attr;
		long ret;

		if (buf == MAP_FAILED)
			_exit(10);
		/* EINVAL: no THP (PREEMPT_RT), no huge page to keep out either. */
		if (madvise(buf, len, MADV_NOHUGEPAGE) && errno != EINVAL)
			_exit(10);
		/* No capabilities at all from here on. */
		if (setresuid(65534, 65534, 65534))
			_exit(11);
		memset(&attr, 0, sizeof(attr));
		attr.prog_type = BPF_PROG_TYPE_KPROBE;
		attr.insns = ptr_u64(buf);
		attr.insn_cnt = 1000000;
		attr.license = ptr_u64("GPL");
		ret = bpf_sys(BPF_PROG_LOAD, &attr);
		if (ret >= 0 || (errno != EPERM && errno != E2BIG))
			_exit(12);
		if (resident_pages(buf, len) != 0)
			_exit(13);
		memset(&attr, 0, sizeof(attr));
		attr.btf = ptr_u64(buf);
		attr.btf_size = len;
		ret = bpf_sys(BPF_BTF_LOAD, &attr);
		if (ret >= 0 || errno != EPERM)
			_exit(14);
		if (resident_pages(buf, len) != 0)
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 12/14: wrong errno; 13: the load copied insns; 15: the BTF load copied. */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The JITed image of prog fd (malloc'ed), its length in *len. */
static unsigned char *jited_image(int fd, uint32_t *len)
{
	struct bpf_prog_info info;
	union bpf_attr attr;
	unsigned char *img;

	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr) || !info.jited_prog_len)
		return NULL;
	*len = info.jited_prog_len;
	img = calloc(1, *len);
	memset(&info, 0, sizeof(info));
	info.jited_prog_len = *len;
	info.jited_prog_insns = ptr_u64(img);
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	if (!img || bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
		free(img);
		return NULL;
	}
	return img;
}

#define IMM_MARK 0x5a17c0de

/*
 * Issue 11.4: with bpf_jit_harden=2 no immediate of an arena store reaches
 * the JIT image verbatim: the store is blinded (6.12) or refused (6.1).
 */
TEST(blinding_keeps_arena_store_immediates_out_of_the_image)
{
	const unsigned char mark[4] = { 0xde, 0xc0, 0x17, 0x5a };
	int old = (int)read_num(JIT_HARDEN_SYSCTL), h, afd;
	uint32_t *p;

	ASSERT_LE(0, old);
	afd = arena_create(1, 0, 0);
	ASSERT_LE(0, afd);
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
	ASSERT_NE(MAP_FAILED, p);
	for (h = 0; h <= 2; h++) {
		struct bpf_insn insns[] = {
			I_MOV64_REG(6, 1),
			I_LD_MAP_FD(1, afd),
			I_LDX(BPF_DW, 7, 6, 0),
			I_CAST_KERN(7, 7),
			I_ST(BPF_W, 7, 0, IMM_MARK),
			I_MOV64_IMM(0, 1),
			I_EXIT(),
		};
		uint64_t ctx[1] = { ptr_u64(p) };
		unsigned char *img;
		uint32_t len = 0;
		int fd;

		ASSERT_TRUE(write_num(JIT_HARDEN_SYSCTL, h));
		fd = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE);
		if (h == 2 && fd == -EOPNOTSUPP) {
			EXPECT_NE(NULL, strstr(vlog, "cannot be constant-blinded")) TH_LOG("%s", vlog);
			continue;
		}
		ASSERT_LE(0, fd) TH_LOG("harden %d: %s", h, vlog);
		*p = 0;
		EXPECT_EQ(1, run_syscall_prog(fd, ctx, sizeof(ctx)));
		EXPECT_EQ(IMM_MARK, *p);
		img = jited_image(fd, &len);
		ASSERT_NE(NULL, img);
		if (h == 2)
			EXPECT_EQ(NULL, memmem(img, len, mark, sizeof(mark)))
				TH_LOG("the immediate is in the hardened image");
		free(img);
		close(fd);
	}
	write_num(JIT_HARDEN_SYSCTL, old);
	munmap(p, PG);
	close(afd);
}

struct id_watch {
	atomic_bool stop;
	uint32_t start_id;
	int unjited;	/* arena programs seen without a JIT image */
};

/* Grabs every new program by id and records any without a JIT image. */
static void *id_watcher(void *arg)
{
	struct id_watch *w = arg;

	while (!atomic_load(&w->stop)) {
		uint32_t id = w->start_id;
		union bpf_attr attr;

		for (;;) {
			struct bpf_prog_info info;
			int fd;

			memset(&attr, 0, sizeof(attr));
			attr.start_id = id;
			if (bpf_sys(BPF_PROG_GET_NEXT_ID, &attr))
				break;
			id = attr.next_id;
			memset(&attr, 0, sizeof(attr));
			attr.prog_id = id;
			fd = bpf_sys(BPF_PROG_GET_FD_BY_ID, &attr);
			if (fd < 0)
				continue;
			memset(&info, 0, sizeof(info));
			memset(&attr, 0, sizeof(attr));
			attr.info.bpf_fd = fd;
			attr.info.info_len = sizeof(info);
			attr.info.info = ptr_u64(&info);
			if (!bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr) &&
			    !strcmp(info.name, "unjited") && !info.jited_prog_len)
				w->unjited++;
			close(fd);
		}
	}
	return NULL;
}

#define SUB_LEN 11000	/* blinded x3, the jump over it overflows s16 */

/*
 * Issue 11.4: with bpf_jit_harden=2, a subprogram whose blinding overflows a
 * jump makes 6.1 fall back to the interpreter, where placeholders would run
 * unraised.  The load must fail, and the program must never be reachable
 * by id (or by fd) while it fails.
 */
FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

/* Each load verifies and blinds ~33k instructions: seconds under TCG. */
TEST_F_TIMEOUT(slow, unjited_arena_program_is_never_visible, 180)
{
	int old = (int)read_num(JIT_HARDEN_SYSCTL), afd, i, loads = 0;
	struct id_watch w = { .stop = false };
	struct bpf_insn *insns;
	union bpf_attr attr;
	unsigned int n = 0;
	pthread_t t;

	if (kernel_has_native_arena())
		SKIP(return, "6.12 has in-tree arena and BPF_JIT_ALWAYS_ON semantics for it");
	ASSERT_LE(0, old);
	afd = arena_create(1, 0, 0);
	ASSERT_LE(0, afd);
	ASSERT_NE(MAP_FAILED, mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0));
	insns = calloc(SUB_LEN + 32, sizeof(*insns));
	ASSERT_NE(NULL, insns);
	/* main: r6 = *(u64 *)cast_kern(ctx[0]); r0 = sub(r6) + r6; exit */
	insns[n++] = I_MOV64_REG(6, 1);
	insns[n++] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
					.src_reg = BPF_PSEUDO_MAP_FD, .imm = afd };
	insns[n++] = (struct bpf_insn){ 0 };
	insns[n++] = I_LDX(BPF_DW, 7, 6, 0);
	insns[n++] = I_CAST_KERN(7, 7);
	insns[n++] = I_LDX(BPF_DW, 6, 7, 0);
	insns[n++] = I_MOV64_REG(1, 6);
	insns[n++] = I_CALL_REL(2);
	insns[n++] = I_ALU64_REG(BPF_ADD, 0, 6);
	insns[n++] = I_EXIT();
	/* sub(r1): if r1 == 0 skip SUB_LEN immediates */
	insns[n++] = I_MOV64_IMM(0, 0);
	insns[n++] = I_JMP_IMM(BPF_JEQ, 1, 0, SUB_LEN);
	for (i = 0; i < SUB_LEN; i++)
		insns[n++] = I_ALU64_IMM(BPF_ADD, 0, 1);
	insns[n++] = I_EXIT();

	memset(&attr, 0, sizeof(attr));
	attr.start_id = 0;
	for (w.start_id = 0; !bpf_sys(BPF_PROG_GET_NEXT_ID, &attr); attr.start_id = attr.next_id)
		w.start_id = attr.next_id;
	ASSERT_TRUE(write_num(JIT_HARDEN_SYSCTL, 2));
	ASSERT_EQ(0, pthread_create(&t, NULL, id_watcher, &w));
	for (i = 0; i < 6; i++) {
		union bpf_attr a;
		int fd;

		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_SYSCALL;
		a.prog_flags = BPF_F_SLEEPABLE;
		a.insns = ptr_u64(insns);
		a.insn_cnt = n;
		a.license = ptr_u64("GPL");
		strcpy(a.prog_name, "unjited");
		a.log_buf = ptr_u64(vlog);
		a.log_size = LOG_SIZE;
		a.log_level = 1;
		vlog[0] = 0;
		fd = bpf_sys(BPF_PROG_LOAD, &a);
		if (fd >= 0)
			close(fd);
		EXPECT_EQ(-1, fd);
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_NE(NULL, strstr(vlog, "JIT is required to use arena"));
		loads++;
	}
	atomic_store(&w.stop, true);
	pthread_join(t, NULL);
	write_num(JIT_HARDEN_SYSCTL, old);
	TH_LOG("%d loads, %d unjited arena programs seen by id", loads, w.unjited);
	EXPECT_EQ(0, w.unjited);
	free(insns);
	close(afd);
}

/* Does program fd hold map id? */
static bool prog_holds_map(int fd, uint32_t id)
{
	struct bpf_prog_info info;
	uint32_t ids[8] = { 0 };
	union bpf_attr attr;
	unsigned int i;

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 8;
	info.map_ids = ptr_u64(ids);
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr))
		return false;
	for (i = 0; i < info.nr_map_ids && i < 8; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * The arena never hands the stock verifier an address: an arena ld_imm64
 * MAP_VALUE that bypassed the lowering is refused (map_direct_value_addr).
 * Here a sibling thread swaps the arena in where the program names an
 * ordinary map, after the module looked; a BPF_PROG_TYPE_SYSCALL program's
 * bpf_sys_bpf() is the same bypass without a race.  No program may load with
 * an arena address it got from the stock verifier.
 */
TEST(arena_value_ldimm64_outside_the_lowering_is_refused)
{
	struct race r = { .stop = false };
	int afd, other, i, bad = 0, loaded = 0;
	double end = now() + 10;
	uint32_t aid;
	pthread_t t;

	if (kernel_has_native_arena())
		SKIP(return, "6.12 has in-tree arena: nothing bypasses a lowering there");
	afd = high_fd(arena_create(1, 0, 0));
	ASSERT_LE(0, afd);
	ASSERT_NE(MAP_FAILED, mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0));
	aid = map_id(afd);
	ASSERT_NE(0, aid);
	other = high_fd(evil_map());
	ASSERT_LE(0, other);
	r.evil = afd;
	r.base = 150;
	ASSERT_EQ(0, pthread_create(&t, NULL, fd_swapper, &r));
	for (i = 0; now() < end; i++) {
		struct bpf_insn insns[] = {
			I_LD_MAP_VALUE(1, 150, 0),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};
		union bpf_attr a;
		int fd;

		dup2(other, 150);
		memset(&a, 0, sizeof(a));
		/* Not sleepable: 6.1 refuses type 33 in sleepable programs anyway. */
		a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
		a.insns = ptr_u64(insns);
		a.insn_cnt = ARRAY_SIZE(insns);
		a.license = ptr_u64("GPL");
		a.log_buf = ptr_u64(vlog);
		a.log_size = LOG_SIZE;
		a.log_level = 2;	/* register states: a map value of size 0 is the arena */
		vlog[0] = 0;
		fd = bpf_sys(BPF_PROG_LOAD, &a);
		if (fd >= 0) {
			loaded++;
			/* Lowered (an arena global: a constant) is fine; a pointer is not. */
			bad += prog_holds_map(fd, aid) && strstr(vlog, "vs=0");
			close(fd);
		}
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	TH_LOG("%d loads, %d loaded, %d with an arena value address", i, loaded, bad);
	EXPECT_EQ(0, bad);
	close(other);
	close(afd);
}

/* A BTF blob with one INT type, for programs that need a prog_btf_fd. */
static int int_btf(void)
{
	struct {
		struct btf_header h;
		struct btf_type t;
		__u32 enc;
		char str[5];
	} __attribute__((packed)) b;
	union bpf_attr attr;

	memset(&b, 0, sizeof(b));
	b.h.magic = BTF_MAGIC;
	b.h.version = BTF_VERSION;
	b.h.hdr_len = sizeof(b.h);
	b.h.type_len = sizeof(b.t) + sizeof(b.enc);
	b.h.str_off = b.h.type_len;
	b.h.str_len = sizeof(b.str);
	b.t.name_off = 1;
	b.t.info = BTF_KIND_INT << 24;
	b.t.size = 4;
	b.enc = 32;
	memcpy(b.str, "\0int", 5);
	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(&b);
	attr.btf_size = sizeof(b);
	return bpf_sys(BPF_BTF_LOAD, &attr);
}

/*
 * Review finding: the module passes attr to kern_sys_bpf(), which takes
 * every pointer in it as a kernel pointer; a NULL func_info or line_info
 * with a count was dereferenced in the kernel (oops).  Stock answer: EFAULT.
 * Each load runs in a child, so an oops kills the child, not the test.
 */
TEST(null_record_pointers_get_the_stock_answer)
{
	static const struct { int line; unsigned int rec_size; } cases[] = {
		{ 0, 8 }, { 0, 12 }, { 1, 16 }, { 1, 20 },
	};
	unsigned int i;
	int afd, btf;

	afd = arena_create(1, 0, 0);
	ASSERT_LE(0, afd);
	ASSERT_NE(MAP_FAILED, mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0));
	btf = int_btf();
	ASSERT_LE(0, btf);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int status;
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			struct bpf_insn insns[] = {
				I_LD_MAP_FD(1, afd),
				I_MOV64_IMM(0, 0),
				I_EXIT(),
			};
			union bpf_attr attr;
			long ret;

			memset(&attr, 0, sizeof(attr));
			attr.prog_type = BPF_PROG_TYPE_SYSCALL;
			attr.prog_flags = BPF_F_SLEEPABLE;
			attr.insns = ptr_u64(insns);
			attr.insn_cnt = ARRAY_SIZE(insns);
			attr.license = ptr_u64("GPL");
			attr.prog_btf_fd = btf;
			if (cases[i].line) {
				attr.line_info_cnt = 1;
				attr.line_info_rec_size = cases[i].rec_size;
			} else {
				attr.func_info_cnt = 1;
				attr.func_info_rec_size = cases[i].rec_size;
			}
			ret = bpf_sys(BPF_PROG_LOAD, &attr);
			_exit(ret < 0 && errno == EFAULT ? 0 : 1);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("%s, rec_size %u: status %#x", cases[i].line ? "line_info" : "func_info",
			       cases[i].rec_size, status);
	}
	close(btf);
	close(afd);
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

struct grab {
	atomic_bool stop;
	int pidfd, base;
	int companion;		/* an fd of the companion, kept */
};

static bool is_companion_fd(int fd)
{
	struct bpf_map_info info;

	return !map_info(fd, &info) && !strcmp(info.name, "arena_companion");
}

/* pidfd_getfd() over the loader's fd numbers: reads task->files, the snapshot. */
static void *grabber(void *arg)
{
	struct grab *g = arg;
	int k;

	while (!atomic_load(&g->stop) && g->companion < 0) {
		for (k = 0; k < 6; k++) {
			int fd = syscall(SYS_pidfd_getfd, g->pidfd, g->base + k, 0);

			if (fd < 0)
				continue;
			if (is_companion_fd(fd)) {
				g->companion = fcntl(fd, F_DUPFD_CLOEXEC, 500);
				close(fd);
				break;
			}
			close(fd);
		}
	}
	return NULL;
}

/*
 * Review finding: the snapshot is frozen against changes, not hidden from
 * reads: a sibling's pidfd_getfd() copies fds out of the loader's current
 * table.  What it can get of the companion must be read-only (no update)
 * and must not let it make the companion's value a verifier constant.
 */
TEST(companion_seen_by_a_sibling_is_read_only)
{
	static struct bpf_insn insns[3004];
	struct grab g = { .stop = false, .companion = -1 };
	int afd, rounds, i = 0;
	uint64_t *base;
	union bpf_attr attr;
	uint64_t val = 1;
	uint32_t key = 0;
	pthread_t t;

	if (kernel_has_native_arena())
		SKIP(return, "6.12 has in-tree arena: no companion map");
	afd = high_fd(arena_create(1, 0, 0));
	ASSERT_LE(0, afd);
	base = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
	ASSERT_NE(MAP_FAILED, base);
	insns[i++] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
					.src_reg = BPF_PSEUDO_MAP_FD, .imm = afd };
	insns[i++] = (struct bpf_insn){ 0 };
	while (i < 3002)	/* a slow verification: a wide window */
		insns[i++] = I_MOV64_IMM(0, i);
	insns[i++] = I_MOV64_IMM(0, 0);
	insns[i++] = I_EXIT();
	g.pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	ASSERT_LE(0, g.pidfd);
	g.base = dup(0);
	close(g.base);
	ASSERT_EQ(0, pthread_create(&t, NULL, grabber, &g));
	for (rounds = 0; rounds < 200 && g.companion < 0; rounds++) {
		int pfd = load_syscall_prog(insns, i, NULL, 0);

		if (pfd >= 0)
			close(pfd);
	}
	atomic_store(&g.stop, true);
	pthread_join(t, NULL);
	TH_LOG("%d loads, companion %s", rounds, g.companion >= 0 ? "grabbed" : "not grabbed");
	if (g.companion >= 0) {
		EXPECT_EQ(O_RDONLY, fcntl(g.companion, F_GETFL) & O_ACCMODE);
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = g.companion;
		attr.key = ptr_u64(&key);
		attr.value = ptr_u64(&val);
		EXPECT_EQ(-1, bpf_sys(BPF_MAP_UPDATE_ELEM, &attr));
		EXPECT_EQ(EPERM, errno);
		/*
		 * 6.1 lets any fd freeze a map.  Harmless here: the companion is
		 * never BPF_F_RDONLY_PROG, so even frozen its value stays an
		 * unknown scalar to the verifier; programs still read the arena.
		 */
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = g.companion;
		bpf_sys(BPF_MAP_FREEZE, &attr);
		{
			struct bpf_map_info info;

			ASSERT_EQ(0, map_info(g.companion, &info));
			EXPECT_EQ(0, info.map_flags & BPF_F_RDONLY_PROG);
		}
		{
			struct bpf_insn prog[] = READ_PROG(afd);
			uint64_t ctx[1] = { ptr_u64(base) };
			int pfd = load_syscall_prog(prog, ARRAY_SIZE(prog), vlog, LOG_SIZE);

			ASSERT_LE(0, pfd) TH_LOG("%s", vlog);
			*base = ARENA_VAL;
			EXPECT_EQ(1, run_syscall_prog(pfd, ctx, sizeof(ctx)));
			close(pfd);
		}
		close(g.companion);
	}
	close(g.pidfd);
	close(afd);
}

TEST_HARNESS_MAIN

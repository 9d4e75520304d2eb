/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw BPF instruction builders and a tiny loader for tests that must not
 * depend on libbpf or a compiler: the programs are exactly what they say.
 */
#ifndef BPF_ARENA_TESTS_BPF_INSN_H
#define BPF_ARENA_TESTS_BPF_INSN_H

#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define I_ALU64_IMM(OP, D, IMM) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_OP(OP) | BPF_K, .dst_reg = D, .imm = IMM })
#define I_ALU64_REG(OP, D, S) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_OP(OP) | BPF_X, .dst_reg = D, .src_reg = S })
#define I_ALU32_REG(OP, D, S) \
	((struct bpf_insn){ .code = BPF_ALU | BPF_OP(OP) | BPF_X, .dst_reg = D, .src_reg = S })
#define I_MOV64_IMM(D, IMM)	I_ALU64_IMM(BPF_MOV, D, IMM)
#define I_MOV64_REG(D, S)	I_ALU64_REG(BPF_MOV, D, S)
/* addr_space_cast: BPF_ALU64 | BPF_MOV | BPF_X, off 1, imm (dst_as << 16) | src_as */
#define I_CAST(D, S, OFF, IMM) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = D, .src_reg = S, \
			    .off = OFF, .imm = IMM })
#define I_CAST_KERN(D, S)	I_CAST(D, S, 1, 1)
#define I_CAST_USER(D, S)	I_CAST(D, S, 1, 1 << 16)
#define I_LDX(SZ, D, S, OFF) \
	((struct bpf_insn){ .code = BPF_LDX | BPF_SIZE(SZ) | BPF_MEM, .dst_reg = D, .src_reg = S, \
			    .off = OFF })
#define I_STX(SZ, D, S, OFF) \
	((struct bpf_insn){ .code = BPF_STX | BPF_SIZE(SZ) | BPF_MEM, .dst_reg = D, .src_reg = S, \
			    .off = OFF })
#define I_ST(SZ, D, OFF, IMM) \
	((struct bpf_insn){ .code = BPF_ST | BPF_SIZE(SZ) | BPF_MEM, .dst_reg = D, .off = OFF, \
			    .imm = IMM })
#define I_ATOMIC(SZ, OP, D, S, OFF) \
	((struct bpf_insn){ .code = BPF_STX | BPF_SIZE(SZ) | BPF_ATOMIC, .dst_reg = D, \
			    .src_reg = S, .off = OFF, .imm = OP })
#define I_JMP_IMM(OP, D, IMM, OFF) \
	((struct bpf_insn){ .code = BPF_JMP | BPF_OP(OP) | BPF_K, .dst_reg = D, .off = OFF, \
			    .imm = IMM })
#define I_JA(OFF)		((struct bpf_insn){ .code = BPF_JMP | BPF_JA, .off = OFF })
#define I_CALL_REL(OFF) \
	((struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_CALL, .imm = OFF })
#define I_CALL_HELPER(ID)	((struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = ID })
#define I_EXIT()		((struct bpf_insn){ .code = BPF_JMP | BPF_EXIT })
/* Two slots. */
#define I_LD_MAP_FD(D, FD) \
	((struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = D, \
			    .src_reg = BPF_PSEUDO_MAP_FD, .imm = FD }), \
	((struct bpf_insn){ 0 })
#define I_LD_IMM64(D, V) \
	((struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = D, \
			    .imm = (int32_t)(uint32_t)(V) }), \
	((struct bpf_insn){ .imm = (int32_t)(uint32_t)((uint64_t)(V) >> 32) })

static inline long bpf_sys(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static inline uint64_t ptr_u64(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* Loads insns; returns a prog fd or -errno, with the verifier log in log. */
static inline int load_prog_flags(enum bpf_prog_type type, const struct bpf_insn *insns,
				  unsigned int cnt, unsigned int flags, char *log, size_t log_size)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = cnt;
	attr.license = ptr_u64("GPL");
	attr.prog_flags = flags;
	if (log && log_size) {
		log[0] = '\0';
		attr.log_buf = ptr_u64(log);
		attr.log_size = log_size;
		attr.log_level = 1;
	}
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	return fd < 0 ? -errno : (int)fd;
}

/* A sleepable SYSCALL program (the type arena kfuncs need, run by test_run). */
static inline int load_syscall_prog(const struct bpf_insn *insns, unsigned int cnt,
				    char *log, size_t log_size)
{
	return load_prog_flags(BPF_PROG_TYPE_SYSCALL, insns, cnt, BPF_F_SLEEPABLE, log, log_size);
}

/* Runs a SYSCALL program on ctx (in and out); returns its r0 or -errno. */
static inline long run_syscall_prog(int fd, void *ctx, size_t ctx_size)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = fd;
	attr.test.ctx_in = ptr_u64(ctx);
	attr.test.ctx_size_in = ctx_size;
	if (bpf_sys(BPF_PROG_TEST_RUN, &attr))
		return -errno;
	return attr.test.retval;
}

#endif /* BPF_ARENA_TESTS_BPF_INSN_H */

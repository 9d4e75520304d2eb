/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw BPF instruction builders, for tests that must not depend on libbpf or a
 * compiler: the programs are exactly what they say.  Also hand-written copies
 * of every placeholder form of docs/PLACEHOLDERS.md (with the real carrier
 * constants), for the adversarial tests.  Loading and running the programs:
 * test_util.h.
 */
#ifndef BPF_ARENA_TESTS_BPF_INSN_H
#define BPF_ARENA_TESTS_BPF_INSN_H

#include <linux/bpf.h>
#include <stdint.h>

/* Any instruction, field by field. */
#define I_RAW(CODE, D, S, OFF, IMM) \
	((struct bpf_insn){ .code = (CODE), .dst_reg = (D), .src_reg = (S), .off = (OFF), \
			    .imm = (IMM) })

/* ALU and moves. */
#define I_ALU64_IMM(OP, D, IMM) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_OP(OP) | BPF_K, .dst_reg = D, .imm = IMM })
#define I_ALU64_REG(OP, D, S) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_OP(OP) | BPF_X, .dst_reg = D, .src_reg = S })
#define I_ALU32_IMM(OP, D, IMM) \
	((struct bpf_insn){ .code = BPF_ALU | BPF_OP(OP) | BPF_K, .dst_reg = D, .imm = IMM })
#define I_ALU32_REG(OP, D, S) \
	((struct bpf_insn){ .code = BPF_ALU | BPF_OP(OP) | BPF_X, .dst_reg = D, .src_reg = S })
#define I_MOV64_IMM(D, IMM)	I_ALU64_IMM(BPF_MOV, D, IMM)
#define I_MOV64_REG(D, S)	I_ALU64_REG(BPF_MOV, D, S)
#define I_MOV32_IMM(D, IMM)	I_ALU32_IMM(BPF_MOV, D, IMM)
#define I_MOV32_REG(D, S)	I_ALU32_REG(BPF_MOV, D, S)

/* addr_space_cast: BPF_ALU64 | BPF_MOV | BPF_X, off 1, imm (dst_as << 16) | src_as. */
#define I_CAST(D, S, OFF, IMM) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = D, .src_reg = S, \
			    .off = OFF, .imm = IMM })
#define I_CAST_KERN(D, S)	I_CAST(D, S, 1, 1)
#define I_CAST_USER(D, S)	I_CAST(D, S, 1, 1 << 16)

/* Loads, stores, atomics. */
#define I_LDX(SZ, D, S, OFF) \
	((struct bpf_insn){ .code = BPF_LDX | BPF_SIZE(SZ) | BPF_MEM, .dst_reg = D, .src_reg = S, \
			    .off = OFF })
/* Sign-extending load (6.6+: BPF_MEMSX, 0x80, unknown to 6.1's header). */
#define I_LDXSX(SZ, D, S, OFF) \
	((struct bpf_insn){ .code = BPF_LDX | BPF_SIZE(SZ) | 0x80, .dst_reg = D, .src_reg = S, \
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

/* Jumps and calls. */
#define I_JMP_IMM(OP, D, IMM, OFF) \
	((struct bpf_insn){ .code = BPF_JMP | BPF_OP(OP) | BPF_K, .dst_reg = D, .off = OFF, \
			    .imm = IMM })
#define I_JMP_REG(OP, D, S, OFF) \
	((struct bpf_insn){ .code = BPF_JMP | BPF_OP(OP) | BPF_X, .dst_reg = D, .src_reg = S, \
			    .off = OFF })
#define I_JMP32_IMM(OP, D, IMM, OFF) \
	((struct bpf_insn){ .code = BPF_JMP32 | BPF_OP(OP) | BPF_K, .dst_reg = D, .off = OFF, \
			    .imm = IMM })
#define I_JMP32_REG(OP, D, S, OFF) \
	((struct bpf_insn){ .code = BPF_JMP32 | BPF_OP(OP) | BPF_X, .dst_reg = D, .src_reg = S, \
			    .off = OFF })
#define I_JA(OFF)		((struct bpf_insn){ .code = BPF_JMP | BPF_JA, .off = OFF })
/* gotol (6.4+): BPF_JMP32 | BPF_JA with the offset in imm. */
#define I_GOTOL(IMM)		((struct bpf_insn){ .code = BPF_JMP32 | BPF_JA, .imm = IMM })
/* may_goto (6.9+): BPF_JMP | BPF_JCOND (0xe0), src_reg BPF_MAY_GOTO (0). */
#define I_MAY_GOTO(OFF)		((struct bpf_insn){ .code = BPF_JMP | 0xe0 | BPF_K, .off = OFF })
#define I_CALL_REL(OFF) \
	((struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_CALL, .imm = OFF })
#define I_CALL_HELPER(ID)	((struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = ID })
#define I_CALL_KFUNC(BTF_ID, FD_IDX) \
	((struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, \
			    .off = FD_IDX, .imm = BTF_ID })
#define I_EXIT()		((struct bpf_insn){ .code = BPF_JMP | BPF_EXIT })

/* ld_imm64: two slots each.  D = IMM, of the kind src_reg SRC (a BPF_PSEUDO_*) says. */
#define I_LD_PSEUDO(D, SRC, IMM) \
	((struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = D, .src_reg = SRC, \
			    .imm = IMM }), \
	((struct bpf_insn){ 0 })
#define I_LD_MAP_FD(D, FD)	I_LD_PSEUDO(D, BPF_PSEUDO_MAP_FD, FD)
#define I_LD_FUNC(D, OFF)	I_LD_PSEUDO(D, BPF_PSEUDO_FUNC, OFF)
/* ld_imm64 D, &map_value(FD) + OFF. */
#define I_LD_MAP_VALUE(D, FD, OFF) \
	((struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = D, \
			    .src_reg = BPF_PSEUDO_MAP_VALUE, .imm = FD }), \
	((struct bpf_insn){ .imm = OFF })
#define I_LD_IMM64(D, V) \
	((struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = D, \
			    .imm = (int32_t)(uint32_t)(V) }), \
	((struct bpf_insn){ .imm = (int32_t)(uint32_t)((uint64_t)(V) >> 32) })
/* ld_imm64 D with src_reg SRC, the immediate given as its two halves. */
#define I_LD_IMM64_PAIR(D, SRC, LO, HI) \
	((struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = D, .src_reg = SRC, \
			    .imm = LO }), \
	((struct bpf_insn){ .imm = HI })

/* Carrier constants (PLACEHOLDERS.md). */
#define PH_K1(KIND, SZ, EXTRA, OFF) \
	((int32_t)(0xBA000000u | (KIND) << 20 | ((SZ) >> 3 & 3) << 18 | (EXTRA) << 16 | \
		   (uint16_t)(OFF)))
#define PH_K2			((int32_t)0xBB000000u)
#define PH_LOAD_K		1
#define PH_STX_K		2
#define PH_ST_K			3
#define PH_ATOMIC_K		4
#define PH_FETCH_K		5
#define PH_CMPXCHG_K		6
#define PH_CAST_USER_K		7

/* Look-alikes, CFD the fd of the "companion" map.  5, 5, 5, 5, 5, 7, 6 slots. */
#define PH_LOAD(D, S, SZ, OFF, CFD)						\
	I_MOV32_REG(S, S), I_MOV64_IMM(D, PH_K1(PH_LOAD_K, SZ, 0, OFF)),		\
	I_LD_MAP_VALUE(D, CFD, 0), I_LDX(SZ, D, D, 0)
#define PH_STX(S, V, SZ, OFF)							\
	I_MOV32_REG(S, S), I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_STX_K, SZ, 0, OFF)),	\
	I_ALU32_IMM(BPF_XOR, S, PH_K2),						\
	I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_STX_K, SZ, 0, OFF) ^ PH_K2), I_MOV64_REG(V, V)
#define PH_ST(S, SZ, OFF, IMM)							\
	I_MOV32_REG(S, S), I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_ST_K, SZ, 0, OFF)),	\
	I_ALU32_IMM(BPF_XOR, S, IMM),						\
	I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_ST_K, SZ, 0, OFF) ^ (IMM)), I_MOV64_REG(S, S)
#define PH_ATOMIC(S, V, SZ, OP, OFF)						\
	I_MOV32_REG(S, S), I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_ATOMIC_K, SZ, 0, OFF)),	\
	I_ALU32_IMM(BPF_XOR, S, PH_K2 | (OP)),					\
	I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_ATOMIC_K, SZ, 0, OFF) ^ (PH_K2 | (OP))),	\
	I_MOV64_REG(V, V)
#define PH_FETCH(S, V, SZ, XCHG, OFF, CFD)					\
	I_MOV32_REG(S, S), I_ALU64_IMM(BPF_XOR, V, PH_K1(PH_FETCH_K, SZ, XCHG, OFF)),	\
	I_LD_MAP_VALUE(V, CFD, 0), I_LDX(BPF_DW, V, V, 0)
#define PH_CMPXCHG(S, V, SZ, OFF, CFD)						\
	I_MOV32_REG(S, S), I_ALU64_IMM(BPF_XOR, V, PH_K1(PH_CMPXCHG_K, SZ, 0, OFF)),	\
	I_ALU64_IMM(BPF_XOR, V, PH_K1(PH_CMPXCHG_K, SZ, 0, OFF)),			\
	I_ALU64_IMM(BPF_XOR, 0, PH_K2), I_LD_MAP_VALUE(0, CFD, 0), I_LDX(SZ, 0, 0, 0)
#define PH_CAST_USER(X, Y, CFD)							\
	I_MOV32_REG(X, Y), I_MOV64_IMM(X, PH_K1(PH_CAST_USER_K, BPF_DW, 0, 0)),	\
	I_MOV64_IMM(X, PH_K2), I_LD_MAP_VALUE(X, CFD, 0), I_LDX(BPF_DW, X, X, 0)

#endif /* BPF_ARENA_TESTS_BPF_INSN_H */

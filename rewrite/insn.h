/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: instruction encodings shared by the lowering (lower.c), the raise
 * (raise.c), the module and the user-space unit tests.  Plain C: compiles in the
 * kernel and in user space.  The placeholder ABI is docs/PLACEHOLDERS.md.
 */
#ifndef BPFA_INSN_H
#define BPFA_INSN_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/bpf.h>
#else
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#endif

/* The hidden register the kernel uses for rewrites (x86-64: r10). */
#define BPFA_REG_AX		11
/* BPF_LDX mode of sign-extending loads (upstream 6.6+, unknown to 6.1). */
#define BPFA_MODE_MEMSX		0x80

/* addr_space_cast: BPF_ALU64 | BPF_MOV | BPF_X with off/imm below. */
#define BPFA_CAST_OFF		1		/* BPF_ADDR_SPACE_CAST */
#define BPFA_CAST_KERN_IMM	0x00000001	/* as1 -> as0 */
#define BPFA_CAST_USER_IMM	0x00010000	/* as0 -> as1 */
#define BPFA_CAST_V1_USER_OFF	2		/* v1 series cast_user: off 2, imm 1 */
#define BPFA_CAST_V1_USER_IMM	1

/* may_goto: BPF_JMP | BPF_JCOND (0xe0, 6.9+), src_reg BPF_MAY_GOTO (0). */
#define BPFA_JCOND		0xe0
#define BPFA_MAY_GOTO_CODE	(BPF_JMP | BPFA_JCOND | BPF_K)
/*
 * The mark the lowering puts at the start of each inlined bpf_iter_num_next
 * (bpf_for, bpf_repeat): may_goto's opcode with src_reg 1, off 0, which no
 * program may contain (upstream refuses may_goto with src_reg != 0, and so
 * does the lowering).  The loop pass (loops.c) outlines the loop around it
 * as it does a may_goto loop, and removes every mark.
 */
#define BPFA_ITER_MARK_SRC	1
/* bpf_loop()'s, may_goto's and the number iterator's bound (BPF_MAX_LOOPS). */
#define BPFA_MAX_LOOPS		(1u << 23)

/* Carrier constants (PLACEHOLDERS.md). */
#define BPFA_K1_MAGIC		0xBA000000u
#define BPFA_K2_MAGIC		0xBB000000u
#define BPFA_MAGIC_MASK		0xFF000000u

enum bpfa_ph_kind {
	BPFA_PH_LOAD = 1,
	BPFA_PH_STX = 2,
	BPFA_PH_ST = 3,
	BPFA_PH_ATOMIC = 4,		/* add/or/and/xor, no fetch */
	BPFA_PH_ATOMIC_FETCH = 5,	/* add|fetch; extra bit 0 set: xchg */
	BPFA_PH_CMPXCHG = 6,
	BPFA_PH_CAST_USER = 7,
};

/* Slots of each placeholder form, the kept first instruction included. */
#define BPFA_PH_LEN_LOAD	5
#define BPFA_PH_LEN_STX		5
#define BPFA_PH_LEN_ST		5
#define BPFA_PH_LEN_ATOMIC	5
#define BPFA_PH_LEN_ATOMIC_FETCH 5
#define BPFA_PH_LEN_CMPXCHG	7
#define BPFA_PH_LEN_CAST_USER	6
#define BPFA_PH_LEN_MAX		7

/* K1 = 0xBA000000 | kind << 20 | sizecode << 18 | extra << 16 | (u16)off */
static inline __u32 bpfa_k1(__u32 kind, __u32 bpf_size, __u32 extra, __s16 off)
{
	return BPFA_K1_MAGIC | (kind & 0xf) << 20 | (bpf_size >> 3 & 3) << 18 |
	       (extra & 3) << 16 | (__u16)off;
}

static inline __u32 bpfa_k1_kind(__u32 k1)
{
	return k1 >> 20 & 0xf;
}

/* The BPF_SIZE() bits (BPF_W, BPF_H, BPF_B, BPF_DW) carried by K1. */
static inline __u32 bpfa_k1_size(__u32 k1)
{
	return (k1 >> 18 & 3) << 3;
}

static inline __u32 bpfa_k1_extra(__u32 k1)
{
	return k1 >> 16 & 3;
}

static inline __s16 bpfa_k1_off(__u32 k1)
{
	return (__s16)(__u16)(k1 & 0xffff);
}

static inline struct bpf_insn bpfa_insn(__u8 code, __u8 dst, __u8 src, __s16 off, __s32 imm)
{
	struct bpf_insn insn;

	memset(&insn, 0, sizeof(insn));
	insn.code = code;
	insn.dst_reg = dst;
	insn.src_reg = src;
	insn.off = off;
	insn.imm = imm;
	return insn;
}

/* Writes the two slots of `ld_imm64 dst, imm64` (src_reg as given, second half dst2). */
static inline void bpfa_ldimm64(struct bpf_insn *p, __u8 dst, __u8 src, __u64 imm64, __u8 dst2)
{
	p[0] = bpfa_insn(BPF_LD | BPF_IMM | BPF_DW, dst, src, 0, (__s32)(__u32)imm64);
	p[1] = bpfa_insn(0, dst2, 0, 0, (__s32)(__u32)(imm64 >> 32));
}

/*
 * The instruction predicates of the rewriter and the module: one definition
 * each, so that every pass and every scan agree on what an instruction is.
 * They look at the opcode (and src_reg where it selects the kind), never at
 * the reserved fields: the stock verifier refuses those.
 */

/* The first slot of a two-slot `ld_imm64` (any src_reg). */
static inline bool bpfa_is_ldimm64(const struct bpf_insn *insn)
{
	return insn->code == (BPF_LD | BPF_IMM | BPF_DW);
}

/* An ld_imm64 naming a map by fd or fd_array index, or a value in one. */
static inline bool bpfa_is_map_ldimm64(const struct bpf_insn *insn)
{
	return bpfa_is_ldimm64(insn) &&
	       (insn->src_reg == BPF_PSEUDO_MAP_FD || insn->src_reg == BPF_PSEUDO_MAP_VALUE ||
		insn->src_reg == BPF_PSEUDO_MAP_IDX || insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE);
}

/* A map ld_imm64 naming its map by fd_array index (its imm). */
static inline bool bpfa_is_idx_ldimm64(const struct bpf_insn *insn)
{
	return bpfa_is_ldimm64(insn) &&
	       (insn->src_reg == BPF_PSEUDO_MAP_IDX || insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE);
}

/* An ld_imm64 of a subprogram's address (a callback). */
static inline bool bpfa_is_pfunc(const struct bpf_insn *insn)
{
	return bpfa_is_ldimm64(insn) && insn->src_reg == BPF_PSEUDO_FUNC;
}

/* A call of a subprogram (bpf-to-bpf call). */
static inline bool bpfa_is_pcall(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL;
}

/*
 * The exit: BPF_JMP | BPF_EXIT only.  Any other encoding with op BPF_EXIT
 * (JMP32 class, BPF_X source) is no instruction to the stock verifier
 * ("unknown opcode" before any flow analysis, "BPF_EXIT uses reserved
 * fields" in do_check()), so it is no exit to the passes either: they treat
 * it as an ordinary instruction and the verifier refuses the program.
 */
static inline bool bpfa_is_exit(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_EXIT);
}

/* Bytes a load or store of code moves (BPF_W, BPF_H, BPF_B, BPF_DW). */
static inline __u32 bpfa_access_bytes(__u8 code)
{
	static const __u8 bytes[4] = { 4, 2, 1, 8 };

	return bytes[BPF_SIZE(code) >> 3];
}

/* The unconditional jump: `ja` (off) or JMP32's `gotol` (imm). */
static inline bool bpfa_is_ja(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_JA) || insn->code == (BPF_JMP32 | BPF_JA);
}

/* addr_space_cast between any address spaces (v1's off 2 too), which 6.1 lacks. */
static inline bool bpfa_is_cast(const struct bpf_insn *insn)
{
	return insn->code == (BPF_ALU64 | BPF_MOV | BPF_X) &&
	       (insn->off == BPFA_CAST_OFF || insn->off == BPFA_CAST_V1_USER_OFF);
}

/* A jump with a target: JMP/JMP32 class except CALL and EXIT. */
static inline bool bpfa_is_jump(const struct bpf_insn *insn)
{
	__u8 cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);

	return (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL && op != BPF_EXIT;
}

/* The jump's displacement: imm for JMP32|JA ("gotol"), off otherwise. */
static inline __s64 bpfa_jump_disp(const struct bpf_insn *insn)
{
	if (insn->code == (BPF_JMP32 | BPF_JA))
		return insn->imm;
	return insn->off;
}

#ifdef __KERNEL__
#define BPFA_PRINTF(a, b) __printf(a, b)
#else
#define BPFA_PRINTF(a, b)	/* the kernel build checks the formats */
#endif

#endif /* BPFA_INSN_H */

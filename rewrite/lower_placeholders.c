// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the placeholders the lowering emits for arena accesses and
 * cast_user (lower_internal.h).  Their encodings are the contract with the
 * raise (raise.c), written down in docs/PLACEHOLDERS.md: a change here is a
 * change there.
 */
#include "lower_internal.h"

void lower_emit_companion(const struct lctx *c, struct bpf_insn *o, __u8 reg)
{
	o[0] = bpfa_insn(BPF_LD | BPF_IMM | BPF_DW, reg, BPF_PSEUDO_MAP_VALUE, 0,
			 c->env->companion_fd);
	o[1] = bpfa_insn(0, 0, 0, 0, 0);
}

/* Placeholders of PLACEHOLDERS.md; o[0] is the kept wS = wS (wX = wY). */
void lower_emit_placeholder(const struct lctx *c, const struct bpf_insn *insn, __u8 a,
			    struct bpf_insn *o)
{
	const __u8 x32 = BPF_ALU | BPF_XOR | BPF_K, x64 = BPF_ALU64 | BPF_XOR | BPF_K;
	const __u8 m64k = BPF_ALU64 | BPF_MOV | BPF_K, m64x = BPF_ALU64 | BPF_MOV | BPF_X;
	__u8 size = BPF_SIZE(insn->code), d = insn->dst_reg, s = insn->src_reg;
	__u32 k1, k2 = BPFA_K2_MAGIC;

	switch (a) {
	case A_CAST_USER:	/* rD = cast_user(rS) */
		o[0] = lower_mov32_reg(d, s);
		o[1] = bpfa_insn(m64k, d, 0, 0, (__s32)bpfa_k1(BPFA_PH_CAST_USER, BPF_DW, 0, 0));
		o[2] = bpfa_insn(m64k, d, 0, 0, (__s32)BPFA_K2_MAGIC);
		lower_emit_companion(c, &o[3], d);
		o[5] = bpfa_insn(BPF_LDX | BPF_MEM | BPF_DW, d, d, 0, 0);
		return;
	case A_LOAD:		/* rD = *(size *)(rS + off) */
		o[0] = lower_mov32_reg(s, s);
		o[1] = bpfa_insn(m64k, d, 0, 0, (__s32)bpfa_k1(BPFA_PH_LOAD, size, 0, insn->off));
		lower_emit_companion(c, &o[2], d);
		o[4] = bpfa_insn(BPF_LDX | BPF_MEM | size, d, d, 0, 0);
		return;
	case A_AFETCH:		/* atomic (rD + off), rS */
		o[0] = lower_mov32_reg(d, d);
		k1 = bpfa_k1(BPFA_PH_ATOMIC_FETCH, size, insn->imm == BPF_XCHG, insn->off);
		o[1] = bpfa_insn(x64, s, 0, 0, (__s32)k1);
		lower_emit_companion(c, &o[2], s);
		o[4] = bpfa_insn(BPF_LDX | BPF_MEM | BPF_DW, s, s, 0, 0);
		return;
	case A_CMPXCHG:
		o[0] = lower_mov32_reg(d, d);
		k1 = bpfa_k1(BPFA_PH_CMPXCHG, size, 0, insn->off);
		o[1] = bpfa_insn(x64, s, 0, 0, (__s32)k1);
		o[2] = o[1];
		o[3] = bpfa_insn(x64, BPF_REG_0, 0, 0, (__s32)BPFA_K2_MAGIC);
		lower_emit_companion(c, &o[4], BPF_REG_0);
		o[6] = bpfa_insn(BPF_LDX | BPF_MEM | size, BPF_REG_0, BPF_REG_0, 0, 0);
		return;
	case A_STX:
		k1 = bpfa_k1(BPFA_PH_STX, size, 0, insn->off);
		break;
	case A_ST:
		k1 = bpfa_k1(BPFA_PH_ST, size, 0, insn->off);
		k2 = (__u32)insn->imm;
		s = d;
		break;
	default:		/* A_ATOMIC */
		k1 = bpfa_k1(BPFA_PH_ATOMIC, size, 0, insn->off);
		k2 |= (__u32)insn->imm;
		break;
	}
	/* STX, ST, ATOMIC: wD ^= K1; wD ^= K2; wD ^= K1 ^ K2; rV = rV */
	o[0] = lower_mov32_reg(d, d);
	o[1] = bpfa_insn(x32, d, 0, 0, (__s32)k1);
	o[2] = bpfa_insn(x32, d, 0, 0, (__s32)k2);
	o[3] = bpfa_insn(x32, d, 0, 0, (__s32)(k1 ^ k2));
	o[4] = bpfa_insn(m64x, s, s, 0, 0);
}

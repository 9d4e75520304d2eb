// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: what an instruction becomes whatever the state before it
 * (lower_internal.h): casts, ld_imm64 of the arena map, of an arena global
 * or of an iterator ksym, the arena and iterator kfunc calls.  A malformed
 * cast or a forged may_goto is refused here.  Of these rewrites only the
 * arena kfunc calls are refined later, by what R1 holds (lower_dataflow.c).
 */
#include "lower_internal.h"

int lower_classify(struct lctx *c, __u32 i)
{
	const struct bpfa_lower_env *env = c->env;
	const struct bpf_insn *insn = &c->in[i];
	__u8 src = insn->src_reg;

	if (bpfa_is_ldimm64(insn)) {
		bool val = src == BPF_PSEUDO_MAP_VALUE || src == BPF_PSEUDO_MAP_IDX_VALUE;
		enum bpfa_ld_kind k = BPFA_LD_OTHER;
		__u32 off = (__u32)insn[1].imm;

		if (src == BPF_PSEUDO_BTF_ID && env->classify_ksym &&
		    env->classify_ksym(env->ctx, insn) != BPFA_KF_OTHER) {
			c->act[i] = A_KSYM_ONE;
			return 0;
		}

		if ((val || src == BPF_PSEUDO_MAP_FD || src == BPF_PSEUDO_MAP_IDX) &&
		    env->classify_ldimm64)
			k = env->classify_ldimm64(env->ctx, insn);
		if (k == BPFA_LD_OTHER)
			return 0;
		c->res->uses_arena = true;
		if ((k == BPFA_LD_ARENA_MAP && val) || (k == BPFA_LD_ARENA_VALUE && !val) ||
		    (k != BPFA_LD_ARENA_MAP && k != BPFA_LD_ARENA_VALUE))
			return lower_err(c, -EINVAL, i, "invalid reference to the arena map");
		/* 6.12: arena_map_direct_value_addr() allows off == size; ERANGE past it. */
		if (k == BPFA_LD_ARENA_VALUE && off > env->arena_size)
			return lower_err(c, -ERANGE, i,
					 "invalid access to map value pointer, value_size=0 off=%u", off);
		c->act[i] = k == BPFA_LD_ARENA_MAP ? A_LD_MAP : A_LD_VALUE;
		return 0;
	}
	if (insn->code == (BPF_JMP | BPF_CALL) && src == BPF_PSEUDO_KFUNC_CALL) {
		enum bpfa_kf_kind k = BPFA_KF_OTHER;

		if (env->classify_kfunc)
			k = env->classify_kfunc(env->ctx, insn);
		if (k == BPFA_KF_ALLOC || k == BPFA_KF_FREE || k == BPFA_KF_RESERVE) {
			c->act[i] = k == BPFA_KF_ALLOC ? A_KF_ALLOC :
				    k == BPFA_KF_FREE ? A_KF_FREE : A_KF_RESERVE;
			c->res->uses_arena = true;
		} else if (k == BPFA_KF_ITER_NEW || k == BPFA_KF_ITER_NEXT ||
			   k == BPFA_KF_ITER_DESTROY) {
			c->act[i] = k == BPFA_KF_ITER_NEW ? A_ITER_NEW :
				    k == BPFA_KF_ITER_NEXT ? A_ITER_NEXT : A_ITER_DESTROY;
		}
		return 0;
	}
	/*
	 * may_goto as upstream checks it (6.12 check_cond_jmp_op(); later
	 * kernels allow off 0, and so does the loop pass).  src_reg 1 is the
	 * lowering's own iterator mark: a program must not forge it.
	 */
	if (insn->code == BPFA_MAY_GOTO_CODE &&
	    (insn->src_reg || insn->dst_reg || insn->imm))
		return lower_err(c, -EINVAL, i, "invalid may_goto imm %d", insn->imm);
	if (!bpfa_is_cast(insn))
		return 0;
	c->res->uses_arena = true;
	if (insn->dst_reg > 9 || insn->src_reg > 9)
		return lower_err(c, -EINVAL, i, "addr_space_cast of R%u into R%u is not allowed",
				 insn->src_reg, insn->dst_reg);
	if (insn->off == BPFA_CAST_OFF && insn->imm == BPFA_CAST_KERN_IMM) {
		c->act[i] = A_CAST_KERN;
	} else if ((insn->off == BPFA_CAST_OFF && insn->imm == BPFA_CAST_USER_IMM) ||
		   (insn->off == BPFA_CAST_V1_USER_OFF && insn->imm == BPFA_CAST_V1_USER_IMM)) {
		c->act[i] = env->no_user_conv ? A_CAST_USER_NC : A_CAST_USER;
		if (!env->no_user_conv)
			c->res->placeholders++;
	} else {
		return lower_err(c, -EINVAL, i,
				 "addr_space_cast insn can only convert between address space 1 and 0");
	}
	return 0;
}

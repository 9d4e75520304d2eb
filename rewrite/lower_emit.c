// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the lowered program (lower_internal.h, lower.c phase 3):
 * where each original instruction's sequence starts (new_idx), then each
 * instruction copied or rewritten by what the earlier phases decided, with
 * jump, call and callback offsets fixed for the grown program.
 */
#include "lower_internal.h"

/* Slots each rewrite takes in the lowered program. */
static const __u8 act_len[A_NR] = {
	[A_NONE] = 1, [A_CAST_KERN] = 1, [A_CAST_USER] = BPFA_PH_LEN_CAST_USER,
	[A_CAST_USER_NC] = 1, [A_ALU32] = 1, [A_LOAD] = BPFA_PH_LEN_LOAD,
	[A_STX] = BPFA_PH_LEN_STX, [A_ST] = BPFA_PH_LEN_ST, [A_ATOMIC] = BPFA_PH_LEN_ATOMIC,
	[A_AFETCH] = BPFA_PH_LEN_ATOMIC_FETCH, [A_CMPXCHG] = BPFA_PH_LEN_CMPXCHG,
	[A_LD_MAP] = 1, [A_LD_VALUE] = 1, [A_KF_ALLOC] = 3, [A_KF_FREE] = 3,
	[A_KF_ALLOC_MAP] = 1, [A_KF_FREE_MAP] = 1,
	[A_KF_RESERVE] = 3,
	[A_ITER_NEW] = ITER_NEW_LEN, [A_ITER_NEXT] = ITER_NEXT_LEN, [A_ITER_DESTROY] = 1,
	[A_KSYM_ONE] = 1,
};

static int fix_jump(struct lctx *c, __u32 i, struct bpf_insn *o)
{
	const __u32 *ni = c->res->new_idx;
	__s64 d = (__s64)ni[bpfa_jump_target(c->in, i)] - ni[i] - 1;

	if (o->code == (BPF_JMP32 | BPF_JA)) {
		o->imm = (__s32)d;
		return 0;
	}
	if (d < -32768 || d > 32767)
		return lower_err(c, -EINVAL, i, "jump out of range after arena lowering");
	o->off = (__s16)d;
	return 0;
}

int lower_emit(struct lctx *c)
{
	const struct bpfa_lower_env *env = c->env;
	struct bpfa_lower_result *res = c->res;
	__u32 i, n = c->len, *ni;
	struct bpf_insn *o;
	__u64 total = 0;
	__u64 v;

	ni = lower_zalloc(c, n + 1, sizeof(__u32));
	if (!ni)
		return lower_err(c, -ENOMEM, 0, "out of memory");
	res->new_idx = ni;
	for (i = 0; i < n; i++) {
		ni[i] = (__u32)total;
		total += (c->fl[i] & F_SECOND) ? 1 : act_len[c->act[i]];
		if (total > BPFA_MAX_INSNS)
			return lower_err(c, -E2BIG, i,
					 "program is too large after arena lowering (more than %u insns)",
					 BPFA_MAX_INSNS);
	}
	ni[n] = (__u32)total;
	res->len = (__u32)total;
	res->insns = lower_zalloc(c, total, sizeof(struct bpf_insn));
	if (!res->insns)
		return lower_err(c, -ENOMEM, 0, "out of memory");
	for (i = 0; i < n; i++) {
		const struct bpf_insn *insn = &c->in[i];
		__u8 a = c->act[i];

		if (c->fl[i] & F_SECOND)
			continue;
		o = &res->insns[ni[i]];
		switch (a) {
		case A_NONE:
			o[0] = *insn;
			if (bpfa_is_ldimm64(insn)) {
				o[1] = insn[1];
				if (bpfa_is_pfunc(insn))
					o->imm = (__s32)(ni[i + 1 + insn->imm] - ni[i] - 1);
			} else if (bpfa_is_pcall(insn)) {
				o->imm = (__s32)(ni[i + 1 + insn->imm] - ni[i] - 1);
			} else if (bpfa_is_jump(insn) && fix_jump(c, i, o)) {
				return c->err;
			}
			break;
		case A_CAST_KERN:
		case A_CAST_USER_NC:
		case A_ALU32:
			if (a == A_ALU32) {
				o[0] = *insn;
				o->code = (insn->code & ~0x07) | BPF_ALU;
			} else {
				o[0] = lower_mov32_reg(insn->dst_reg, insn->src_reg);
			}
			break;
		case A_LD_MAP:
		case A_LD_VALUE:
			if (a == A_LD_MAP && env->map_view) {
				bpfa_ldimm64(o, insn->dst_reg, BPF_PSEUDO_MAP_FD,
					     (__u32)env->view_fd, 0);
				break;
			}
			v = a == A_LD_MAP ? 0 : env->user_vm_start + (__u32)insn[1].imm;
			bpfa_ldimm64(o, insn->dst_reg, 0, v, 0);
			break;
		case A_KF_ALLOC:
		case A_KF_FREE:
		case A_KF_RESERVE:
			lower_emit_companion(c, o, BPF_REG_1);
			o[2] = *insn;
			o[2].imm = a == A_KF_ALLOC ? env->kf_alloc_ph_id :
				   a == A_KF_FREE ? env->kf_free_ph_id : env->kf_reserve_ph_id;
			break;
		case A_KF_ALLOC_MAP:
		case A_KF_FREE_MAP:
			o[0] = *insn;
			o[0].imm = a == A_KF_ALLOC_MAP ? env->kf_alloc_map_id : env->kf_free_map_id;
			break;
		case A_ITER_NEW:
		case A_ITER_NEXT:
		case A_ITER_DESTROY:
			lower_emit_iter(a, o);
			break;
		case A_KSYM_ONE:
			/* bpf_ksym_exists(bpf_iter_num_*): present, as on 6.4+. */
			bpfa_ldimm64(o, insn->dst_reg, 0, 1, 0);
			break;
		default:
			lower_emit_placeholder(c, insn, a, o);
			break;
		}
	}
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: the RAISE pass, run on verified code at bpf_int_jit_compile()
 * entry.  Rewrites, in place and with the same instruction count, every complete
 * placeholder form of docs/PLACEHOLDERS.md into direct arena code through AX.
 * Anything that is not exactly a form is left alone; already raised code never
 * matches again (idempotent).  Safe for any input; no allocation, O(1) stack
 * (the optimisations use the caller's env->targets).
 */
#ifndef BPFA_RAISE_H
#define BPFA_RAISE_H

#include "insn.h"

#define BPFA_RAISE_MSG_LEN 192

struct bpfa_raise_env {
	__u64 companion_value;	/* imm64 of the companion ld_imm64 after verification */
	__u64 kern_vm_start;	/* kernel address of arena offset 0 */
	__u64 user_vm_start;	/* user address of arena offset 0 */
	/*
	 * Constant blinding is requested: an ST form would put its immediate
	 * verbatim in the image (blinding skips instructions naming AX), so
	 * the whole program is refused instead.
	 */
	bool refuse_st_imm;
	/*
	 * Constant blinding will run after the raise (prog->blinding_requested):
	 * it rewrites every ALU, JMP and ST instruction with an immediate into
	 * a sequence through AX, so none of them may sit inside a chain.
	 */
	bool blinding;
	/*
	 * Scratch of BITS_TO_LONGS(len) longs for the optimisations (raise.c,
	 * OPTIMISATIONS), or NULL: then every form is raised in full.
	 */
	unsigned long *targets;
};

/* Longest run of accesses through one AX (fault_decode.c decodes it). */
#define BPFA_AX_CHAIN_MAX	16
/* Most instructions a chain may run through besides its accesses (keeps_ax()). */
#define BPFA_AX_BETWEEN_MAX	8

struct bpfa_raise_result {
	__u32 raised;		/* forms rewritten */
	__u32 dropped_zext;	/* of them: kept `wS = wS` left out */
	__u32 reused_ax;	/* of them: AX reused from the previous access */
	__u32 err_insn;		/* on error: the jump's index */
	char msg[BPFA_RAISE_MSG_LEN];
};

/*
 * 0: res->raised forms rewritten.  -EINVAL: a jump lands inside a form (after its
 * first instruction); -EOPNOTSUPP: an ST form with env->refuse_st_imm.  On error
 * nothing was rewritten and res->msg says where.
 */
int bpfa_raise(const struct bpfa_raise_env *env, struct bpf_insn *insns, __u32 len,
	       struct bpfa_raise_result *res);

#endif /* BPFA_RAISE_H */

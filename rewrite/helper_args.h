/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: what the rewriter knows of a helper's arguments without
 * the kernel's protos at hand (both passes run on the instructions alone):
 * how many registers the helper reads, and which of them point to memory
 * it reads or writes, and how much.  Exact for the helpers listed in
 * helper_args.c (their protos in kernel/bpf/helpers.c and friends, the same
 * on 6.1 and 6.12); anything else reads all five and may read and write any
 * memory from each pointer upward (a helper) or anywhere in the frame it
 * points into (a subprogram or kfunc: a callee may index a caller's stack
 * pointer both ways), so a caller that uses this to stay conservative
 * stays so.
 */
#ifndef BPFA_HELPER_ARGS_H
#define BPFA_HELPER_ARGS_H

#include "insn.h"

enum bpfa_harg {
	BPFA_HARG_SCALAR,	/* not dereferenced (a scalar, map, ctx, or unchecked) */
	BPFA_HARG_MEM,		/* memory of the size in the next argument register */
	BPFA_HARG_FIXED,	/* memory of a fixed size (bpfa_helper_args.fixed) */
	BPFA_HARG_MAP_KEY,	/* the key of the map in R1 */
	BPFA_HARG_MAP_VALUE,	/* a value of the map in R1 */
	BPFA_HARG_FRAME,	/* a callback context: any of the caller's frame */
	BPFA_HARG_UPWARD,	/* unknown: anything from the pointer upward */
};

struct bpfa_helper_args {
	bool known;		/* listed: nargs and checked exact */
	__u8 nargs;		/* registers the helper reads, r1 .. r<nargs> */
	__u8 checked;		/* of those, the ones its proto types (the rest: ARG_DONTCARE) */
	__u8 kind[5];		/* enum bpfa_harg, per argument */
	__u8 writes;		/* bit a: the helper writes through argument a (0-based) */
	__u8 fixed[5];		/* BPFA_HARG_FIXED: bytes */
};

/* The call insn (BPF_JMP | BPF_CALL, any src_reg: only helpers are known). */
void bpfa_helper_args(const struct bpf_insn *insn, struct bpfa_helper_args *out);

#endif /* BPFA_HELPER_ARGS_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the inline code the lowering puts in place of the calls
 * of bpf_for and bpf_repeat to the bpf_iter_num_* kfuncs, which 6.1 does
 * not have (lower_internal.h, docs/LOOPS.md).
 */
#include "lower_internal.h"

/*
 * The open-coded number iterators, inline, with upstream's semantics
 * (kernel/bpf/bpf_iter.c, 6.4+; state: s32 cur at +0, s32 end at +4, the
 * ints taken from the low 32 bits of the argument registers):
 *
 * bpf_iter_num_new(it = r1, start = w2, end = w3):
 *   start > end: cur = end = 0, -EINVAL; end - start > BPF_MAX_LOOPS (as
 *   s64): cur = end = 0, -E2BIG; else cur = start - 1, end = end, 0.
 * bpf_iter_num_next(it = r1):
 *   (s64)(s32)(cur + 1) >= end: cur = end = 0, NULL; else ++cur, &cur.
 *   It starts with the iterator mark (insn.h): the loop pass outlines
 *   the loop around it into a bpf_loop() callback (docs/LOOPS.md), because
 *   6.1's verifier cannot converge on the loop; every iteration is one
 *   next(), so the loop runs at most BPF_MAX_LOOPS + 1 bodies as upstream.
 * bpf_iter_num_destroy(it = r1): cur = end = 0.
 *
 * r1 stays; r2-r4 are scratch (a call leaves r1-r5 unreadable upstream).
 */
void lower_emit_iter(__u8 a, struct bpf_insn *o)
{
	const __u8 a64k = BPF_ALU64 | BPF_K, a64x = BPF_ALU64 | BPF_X;
	const __u8 stw = BPF_STX | BPF_MEM | BPF_W, ldw = BPF_LDX | BPF_MEM | BPF_W;
	const __u8 r0 = BPF_REG_0, r1 = BPF_REG_1, r2 = BPF_REG_2, r3 = BPF_REG_3;

	if (a == A_ITER_DESTROY) {
		o[0] = bpfa_insn(BPF_ST | BPF_MEM | BPF_DW, r1, 0, 0, 0);
		return;
	}
	if (a == A_ITER_NEW) {
		o[0] = bpfa_insn(a64k | BPF_LSH, r2, 0, 0, 32);
		o[1] = bpfa_insn(a64k | BPF_ARSH, r2, 0, 0, 32);
		o[2] = bpfa_insn(a64k | BPF_LSH, r3, 0, 0, 32);
		o[3] = bpfa_insn(a64k | BPF_ARSH, r3, 0, 0, 32);
		o[4] = bpfa_insn(a64k | BPF_MOV, r0, 0, 0, -EINVAL);
		o[5] = bpfa_insn(BPF_JMP | BPF_JSGT | BPF_X, r2, r3, 7, 0);	/* -> 13 */
		o[6] = bpfa_insn(a64x | BPF_MOV, BPF_REG_4, r3, 0, 0);
		o[7] = bpfa_insn(a64x | BPF_SUB, BPF_REG_4, r2, 0, 0);
		o[8] = bpfa_insn(a64k | BPF_MOV, r0, 0, 0, -E2BIG);
		o[9] = bpfa_insn(BPF_JMP | BPF_JSGT | BPF_K, BPF_REG_4, 0, 3,
				 (__s32)BPFA_MAX_LOOPS);				/* -> 13 */
		o[10] = bpfa_insn(a64k | BPF_MOV, r0, 0, 0, 0);
		o[11] = bpfa_insn(a64k | BPF_ADD, r2, 0, 0, -1);
		o[12] = bpfa_insn(BPF_JMP | BPF_JA, 0, 0, 2, 0);		/* -> 15 */
		o[13] = bpfa_insn(a64k | BPF_MOV, r2, 0, 0, 0);
		o[14] = bpfa_insn(a64k | BPF_MOV, r3, 0, 0, 0);
		o[15] = bpfa_insn(stw, r1, r2, 0, 0);
		o[16] = bpfa_insn(stw, r1, r3, 4, 0);
		return;
	}
	o[0] = bpfa_insn(BPFA_MAY_GOTO_CODE, 0, BPFA_ITER_MARK_SRC, 0, 0);
	o[1] = bpfa_insn(ldw, r2, r1, 0, 0);
	o[2] = bpfa_insn(BPF_ALU | BPF_K | BPF_ADD, r2, 0, 0, 1);
	o[3] = bpfa_insn(a64k | BPF_LSH, r2, 0, 0, 32);
	o[4] = bpfa_insn(a64k | BPF_ARSH, r2, 0, 0, 32);
	o[5] = bpfa_insn(ldw, r3, r1, 4, 0);
	o[6] = bpfa_insn(a64k | BPF_LSH, r3, 0, 0, 32);
	o[7] = bpfa_insn(a64k | BPF_ARSH, r3, 0, 0, 32);
	o[8] = bpfa_insn(BPF_JMP | BPF_JSGE | BPF_X, r2, r3, 3, 0);		/* -> 12 */
	o[9] = bpfa_insn(stw, r1, r2, 0, 0);
	o[10] = bpfa_insn(a64x | BPF_MOV, r0, r1, 0, 0);
	o[11] = bpfa_insn(BPF_JMP | BPF_JA, 0, 0, 2, 0);			/* -> 14 */
	/* The loop pass knows these two by their shape (loops.c is_next_null()). */
	o[12] = bpfa_insn(BPF_ST | BPF_MEM | BPF_DW, r1, 0, 0, 0);
	o[13] = bpfa_insn(a64k | BPF_MOV, r0, 0, 0, 0);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A syscall program whose may_goto loop reaches its context through a join:
 * r3 holds the context on one path only, and on that path the loop reads
 * it at off=1 size=4, which the verifier refuses of a context ("invalid
 * bpf_context access") but would allow of the memory a loop body takes
 * the context as.  6.12 refuses it; so must 6.1 + module (the loop pass
 * refuses a context that meets another value inside a loop).  Shared by
 * tests/unit/loops_unit_test.c and tests/loop_ctx_refusals_test.c.
 */
#ifndef BPFA_TEST_CTX_JOIN_PROG_H
#define BPFA_TEST_CTX_JOIN_PROG_H

#include "bpf_insn.h"

static const struct bpf_insn ctx_join_prog[] = {
	I_MOV64_REG(9, 1),		/* 0 */
	I_MOV64_IMM(6, 0),		/* 1 */
	I_MOV64_IMM(7, 0),		/* 2 */
	I_MAY_GOTO(10),		/* 3: head -> 14 */
	I_JMP_IMM(BPF_JGE, 7, 100, 9),	/* 4 -> 14 */
	I_LDX(BPF_DW, 2, 9, 0),		/* 5: ctx_size = 8 */
	I_MOV64_IMM(3, 0),		/* 6 */
	I_JMP_IMM(BPF_JGT, 2, 5, 1),	/* 7 -> 9 */
	I_MOV64_REG(3, 9),		/* 8: r3 = ctx on this path only */
	I_JMP_IMM(BPF_JGT, 2, 5, 2),	/* 9 -> 12: the verifier knows which path */
	I_LDX(BPF_W, 4, 3, 1),		/* 10: ctx access off=1 size=4 (misaligned) */
	I_ALU64_REG(BPF_ADD, 6, 4),	/* 11 */
	I_ALU64_IMM(BPF_ADD, 7, 1),	/* 12 */
	I_JA(-11),			/* 13 -> 3 */
	I_MOV64_REG(0, 6),		/* 14 */
	I_EXIT(),			/* 15 */
};

#endif /* BPFA_TEST_CTX_JOIN_PROG_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: program structure shared by the lowering (lower.c) and the
 * loop pass (loops.c): ld_imm64 pairs, an instruction's successors, the
 * passes' error messages and the allocation through their env.  Each pass
 * keeps its own walk over subprograms and jumps, since which error it names
 * first, and how, is part of what it answers.  Plain C: compiles in the
 * kernel and in user space.
 */
#ifndef BPFA_CFG_H
#define BPFA_CFG_H

#include "insn.h"

#ifdef __KERNEL__
#include <linux/kernel.h>
#else
#include <stdarg.h>
#endif

/* The instruction after i: an ld_imm64 takes two slots. */
static inline __u32 bpfa_next(const struct bpf_insn *in, __u32 i)
{
	return i + (bpfa_is_ldimm64(&in[i]) ? 2 : 1);
}

/* Where the jump at i (bpfa_is_jump()) goes. */
static inline __u32 bpfa_jump_target(const struct bpf_insn *in, __u32 i)
{
	return (__u32)((__s64)i + 1 + bpfa_jump_disp(&in[i]));
}

/*
 * The successors of i, up to two (a conditional jump's target first, then
 * its fall-through); returns their number, 0 for an exit.  A call returns
 * to the next instruction.
 */
static inline int bpfa_succs(const struct bpf_insn *in, __u32 i, __u32 s[2])
{
	const struct bpf_insn *insn = &in[i];

	if (bpfa_is_exit(insn))
		return 0;
	if (bpfa_is_jump(insn)) {
		s[0] = bpfa_jump_target(in, i);
		if (bpfa_is_ja(insn))
			return 1;
		s[1] = i + 1;
		return 2;
	}
	s[0] = bpfa_next(in, i);
	return 1;
}

/*
 * Sets bit in flags[] of the second half of every ld_imm64 of in[0..len).
 * -1, or the index of the first ld_imm64 without a second half: none (the
 * program ends), or, when strict, one whose code, registers or off is not
 * zero (what the verifier refuses).
 */
__s64 bpfa_mark_ldimm64(const struct bpf_insn *in, __u32 len, __u8 *flags, __u8 bit,
			bool strict);

/*
 * The passes' error message: "bpf_arena: insn IDX: " and fmt, ending in a
 * newline also when cut to size.
 */
void bpfa_vmsg(char *msg, size_t size, __u32 idx, const char *fmt, va_list ap);

/* n (at least one) zeroed elements of size bytes from an env's allocator. */
static inline void *bpfa_zalloc_n(void *(*zalloc)(void *ctx, size_t size), void *ctx,
				  size_t n, size_t size)
{
	return zalloc(ctx, (n ? n : 1) * size);
}

#endif /* BPFA_CFG_H */

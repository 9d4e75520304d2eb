// SPDX-License-Identifier: GPL-2.0
/*
 * AX chains through other instructions (rewrite/raise.c, OPTIMISATIONS 2 and 3;
 * issue 15): two arena accesses through one base with an ALU instruction, a
 * conditional jump or a plain stack/ctx LDX/STX between them share one
 * `movabs r10, kern_vm_start; add r10, rS`, and a fault on the second one
 * must still be recognised by rewrite/fault_decode.c, which decodes forward over
 * exactly the x86 forms 6.1's JIT emits for those instructions.
 *
 * Each case B runs in two layouts with the same meaning:
 *   before: A: r3 = *(u64 *)(r2 + 0); B; r4 = *(u64 *)(r2 + 8); *(u64 *)(r2 + 16) = r7
 *   after:  A; r4 = ...; *(u64 *)(r2 + 16) = r7; B
 * (no B reads or writes r4 or r7, or writes r2), on a populated page (values
 * checked) and on an unpopulated one (every access faults: loads give 0, the
 * store is dropped), under bpf_jit_harden 0, 1 and 2.  Both layouts must give
 * the same registers and stack.  On 6.1 the JIT sizes show the optimisation:
 * without blinding, equal (the chain runs through B); a ninth instruction
 * between costs 13 bytes more (one more movabs + add).  Registers are picked
 * for every x86 encoding class: rax short forms, REX.B/REX.R (r8, r13-r15),
 * a dil byte store, disp8 and disp32, imm8 and imm32, jcc rel8 and rel32.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PAGES		256	/* page 0 populated; each faulting run gets its own */
#define PG		4096
#define LOG_SIZE	(1 << 20)
#define TO_L		0x7fff	/* a jump's off placeholder: to label L */
#define FAR_FILL	40	/* 4-byte instructions before L: > 127 bytes, jcc rel32 */
#define CTX_N		14
#define PREFIX_LEN	13	/* movabs r10, imm64 + add r10, reg */

/* Jumps to label L. */
#define I_JX(OP, D, S)		I_JMP_REG(OP, D, S, TO_L)
#define I_J32X(OP, D, S)	I_JMP32_REG(OP, D, S, TO_L)
#define I_JK(OP, D, IMM)	I_JMP_IMM(OP, D, IMM, TO_L)
#define I_J32K(OP, D, IMM)	I_JMP32_IMM(OP, D, IMM, TO_L)

/*
 * Before B: r0 = 1, r1 = 0x21, r5 = 3, r8 = -1, r9 = 8, r3 = the first load; the stack
 * slots below hold v.  Every jump here is not taken with these values
 * (r3 and r2 are arena data and addresses: compared only with each other).
 */
struct between {
	const char *name;
	struct bpf_insn insn[3];
	unsigned int n;
	bool imm;	/* blinding rewrites it through AX */
	bool far;	/* its jump is a jcc rel32 */
};

static const struct between cases[] = {
	{ .name = "add r0, r5 (rax, r8)", .insn = { I_ALU64_REG(BPF_ADD, 0, 5) }, .n = 1 },
	{ .name = "sub w9, w0 (r15d, eax)", .insn = { I_ALU32_REG(BPF_SUB, 9, 0) }, .n = 1 },
	{ .name = "and r8, r9 (r14, r15)", .insn = { I_ALU64_REG(BPF_AND, 8, 9) }, .n = 1 },
	{ .name = "or w5, w0 (r8d, eax)", .insn = { I_ALU32_REG(BPF_OR, 5, 0) }, .n = 1 },
	{ .name = "xor r9, r3", .insn = { I_ALU64_REG(BPF_XOR, 9, 3) }, .n = 1 },
	{ .name = "mov r8, r2 (reads the base)", .insn = { I_MOV64_REG(8, 2) }, .n = 1 },
	{ .name = "mov w0, w9", .insn = { I_ALU32_REG(BPF_MOV, 0, 9) }, .n = 1 },
	{ .name = "mov r5, r5 (no code)", .insn = { I_MOV64_REG(5, 5) }, .n = 1 },
	{ .name = "if r5 > r9 (cmp, jcc rel8)", .insn = { I_JX(BPF_JGT, 5, 9) }, .n = 1 },
	{ .name = "if w5 & w9 (test)", .insn = { I_J32X(BPF_JSET, 5, 9) }, .n = 1 },
	{ .name = "if r9 s<= r0", .insn = { I_JX(BPF_JSLE, 9, 0) }, .n = 1 },
	{ .name = "if r3 == r2", .insn = { I_JX(BPF_JEQ, 3, 2) }, .n = 1 },
	{ .name = "if r5 > r9 far (jcc rel32)",
	  .insn = { I_JX(BPF_JGT, 5, 9) }, .n = 1, .far = true },
	{ .name = "r9 = *(u64 *)(r10 - 8)", .insn = { I_LDX(BPF_DW, 9, 10, -8) }, .n = 1 },
	{ .name = "w0 = *(u8 *)(r6 + 0) (ctx, movzx)", .insn = { I_LDX(BPF_B, 0, 6, 0) }, .n = 1 },
	{ .name = "w5 = *(u16 *)(r10 - 200) (disp32)",
	  .insn = { I_LDX(BPF_H, 5, 10, -200) }, .n = 1 },
	{ .name = "w8 = *(u32 *)(r10 - 16)", .insn = { I_LDX(BPF_W, 8, 10, -16) }, .n = 1 },
	{ .name = "*(u8 *)(r10 - 24) = r1 (dil)", .insn = { I_STX(BPF_B, 10, 1, -24) }, .n = 1 },
	{ .name = "*(u16 *)(r10 - 32) = r9", .insn = { I_STX(BPF_H, 10, 9, -32) }, .n = 1 },
	{ .name = "*(u32 *)(r10 - 300) = r0 (disp32)",
	  .insn = { I_STX(BPF_W, 10, 0, -300) }, .n = 1 },
	{ .name = "*(u64 *)(r10 - 8) = r8", .insn = { I_STX(BPF_DW, 10, 8, -8) }, .n = 1 },
	{ .name = "r0 += 1 (rax, imm8)",
	  .insn = { I_ALU64_IMM(BPF_ADD, 0, 1) }, .n = 1, .imm = true },
	{ .name = "r0 &= 0x12345 (rax short form)",
	  .insn = { I_ALU64_IMM(BPF_AND, 0, 0x12345) }, .n = 1, .imm = true },
	{ .name = "w9 -= 7", .insn = { I_ALU32_IMM(BPF_SUB, 9, 7) }, .n = 1, .imm = true },
	{ .name = "r8 |= 0x10000 (imm32)",
	  .insn = { I_ALU64_IMM(BPF_OR, 8, 0x10000) }, .n = 1, .imm = true },
	{ .name = "w5 ^= -1", .insn = { I_ALU32_IMM(BPF_XOR, 5, -1) }, .n = 1, .imm = true },
	{ .name = "r5 = 0 (xor r8d, r8d)", .insn = { I_MOV64_IMM(5, 0) }, .n = 1, .imm = true },
	{ .name = "r0 = -2 (mov r64, simm32)",
	  .insn = { I_MOV64_IMM(0, -2) }, .n = 1, .imm = true },
	{ .name = "w9 = 77 (mov r32, imm32)",
	  .insn = { I_ALU32_IMM(BPF_MOV, 9, 77) }, .n = 1, .imm = true },
	{ .name = "if r0 == 0 (test rax)", .insn = { I_JK(BPF_JEQ, 0, 0) }, .n = 1, .imm = true },
	{ .name = "if w9 s> 0x12345678 (cmp imm32)",
	  .insn = { I_J32K(BPF_JSGT, 9, 0x12345678) }, .n = 1, .imm = true },
	{ .name = "if r5 < 2 (cmp imm8)", .insn = { I_JK(BPF_JLT, 5, 2) }, .n = 1, .imm = true },
	{ .name = "if r9 & 0x100000 (test imm32)",
	  .insn = { I_JK(BPF_JSET, 9, 0x100000) }, .n = 1, .imm = true },
	{ .name = "if r0 == 0 far",
	  .insn = { I_JK(BPF_JEQ, 0, 0) }, .n = 1, .imm = true, .far = true },
	{ .name = "list walk hop: r0 += r5; if w9 > 14; w9 += 1",
	  .insn = { I_ALU64_REG(BPF_ADD, 0, 5),
		    I_J32K(BPF_JGT, 9, 14),
		    I_ALU32_IMM(BPF_ADD, 9, 1) },
	  .n = 3, .imm = true },
};

/* ctx[8..13]: the stack slots B may touch, read back as u64. */
static const short slots[] = { -8, -16, -24, -32, -200, -304 };

static char vlog[LOG_SIZE];

/*
 * ctx[0] = p, ctx[1] = v; out: ctx[2] = r3, ctx[3] = r4, ctx[4..7] = r0, r5,
 * r8, r9, ctx[8..13] = the slots.  Returns the instruction count.
 */
static unsigned int chain_prog(struct bpf_insn *p, int afd, const struct between *b, bool after)
{
	struct bpf_insn m[] = { I_LD_MAP_FD(1, afd) };
	unsigned int n = 0, k, l, at[3];

	p[n++] = I_MOV64_REG(6, 1);
	p[n++] = m[0], p[n++] = m[1];
	p[n++] = I_LDX(BPF_DW, 2, 6, 0);
	p[n++] = I_LDX(BPF_DW, 7, 6, 8);
	for (k = 0; k < sizeof(slots) / sizeof(slots[0]); k++)
		p[n++] = I_STX(BPF_DW, 10, 7, slots[k]);
	p[n++] = I_MOV64_IMM(3, -1);
	p[n++] = I_MOV64_IMM(4, -1);
	p[n++] = I_MOV64_IMM(0, 1);
	p[n++] = I_MOV64_IMM(1, 0x21);
	p[n++] = I_MOV64_IMM(5, 3);
	p[n++] = I_MOV64_IMM(8, -1);
	p[n++] = I_MOV64_IMM(9, 8);
	p[n++] = I_CAST_KERN(2, 2);
	p[n++] = I_LDX(BPF_DW, 3, 2, 0);
	for (k = 0; !after && k < b->n; k++)
		at[k] = n, p[n++] = b->insn[k];
	p[n++] = I_LDX(BPF_DW, 4, 2, 8);
	p[n++] = I_STX(BPF_DW, 2, 7, 16);
	for (k = 0; after && k < b->n; k++)
		at[k] = n, p[n++] = b->insn[k];
	for (k = 0; b->far && k < FAR_FILL; k++)
		p[n++] = I_ALU64_IMM(BPF_MUL, 9, 1);	/* imul r15, r15, 1: 4 bytes */
	l = n;	/* L */
	for (k = 0; k < b->n; k++)
		if (p[at[k]].off == TO_L)
			p[at[k]].off = (short)(l - at[k] - 1);
	p[n++] = I_STX(BPF_DW, 6, 3, 16);
	p[n++] = I_STX(BPF_DW, 6, 4, 24);
	p[n++] = I_STX(BPF_DW, 6, 0, 32);
	p[n++] = I_STX(BPF_DW, 6, 5, 40);
	p[n++] = I_STX(BPF_DW, 6, 8, 48);
	p[n++] = I_STX(BPF_DW, 6, 9, 56);
	for (k = 0; k < sizeof(slots) / sizeof(slots[0]); k++) {
		p[n++] = I_LDX(BPF_DW, 0, 10, slots[k]);
		p[n++] = I_STX(BPF_DW, 6, 0, 64 + 8 * k);
	}
	p[n++] = I_MOV64_IMM(0, 7);
	p[n++] = I_EXIT();
	return n;
}

FIXTURE(chain) {
	int fd;
	char *base;
};

FIXTURE_SETUP(chain)
{
	struct arena a;

	ASSERT_EQ(0, arena_open(&a, PAGES, 0, true));
	self->fd = a.fd;
	self->base = a.base;
	memset(self->base, 0, PG);	/* page 0 populated; 1.. not */
}

FIXTURE_TEARDOWN(chain)
{
	write_str(JIT_HARDEN_SYSCTL, "0");
	munmap(self->base, PAGES * PG);
	close(self->fd);
}

static const char *const levels[] = { "0", "1", "2" };

TEST_F_TIMEOUT(chain, results_equal_with_and_without_the_chain, 300)
{
	struct bpf_insn p[128];
	uint64_t ctx[2][CTX_N];
	unsigned int c, lv, after, faulting;

	ASSERT_LT(1 + 3 * sizeof(cases) / sizeof(cases[0]), PAGES);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (lv = 0; lv < 3; lv++) {
			ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, levels[lv]));
			for (faulting = 0; faulting < 2; faulting++) {
				/*
				 * Unpopulated: a fresh page for each case and level,
				 * checked from user space (which populates it) only
				 * after both layouts ran on it.
				 */
				char *q = self->base + (faulting ? (1 + c * 3 + lv) * PG : 64 * lv);
				uint64_t v = 0x1122334455667788ULL + c;

				for (after = 0; after < 2; after++) {
					uint64_t *x = ctx[after];

					memset(x, 0x55, sizeof(ctx[0]));
					x[0] = (uint64_t)(unsigned long)q;
					x[1] = v;
					if (!faulting) {
						*(uint64_t *)q = 0xa0a0a0a0a0a0a0a0ULL + c;
						*(uint64_t *)(q + 8) = 0xb0b0b0b0b0b0b0b0ULL + c;
						*(uint64_t *)(q + 16) = 0;
					}
					ASSERT_EQ(7, load_run_once(p, chain_prog(p, self->fd, &cases[c],
										  after),
								   x, CTX_N * sizeof(*x), vlog, LOG_SIZE))
						TH_LOG("%s", cases[c].name);
					EXPECT_EQ(faulting ? 0 : 0xa0a0a0a0a0a0a0a0ULL + c, x[2])
						TH_LOG("%s, harden %s, after %u", cases[c].name,
						       levels[lv], after);
					EXPECT_EQ(faulting ? 0 : 0xb0b0b0b0b0b0b0b0ULL + c, x[3])
						TH_LOG("%s, harden %s, after %u", cases[c].name,
						       levels[lv], after);
					if (!faulting)
						EXPECT_EQ(v, *(uint64_t *)(q + 16))
							TH_LOG("%s, harden %s, after %u",
							       cases[c].name, levels[lv], after);
				}
				/* both stores dropped: the page user space faults in is zero */
				if (faulting)
					EXPECT_EQ(0, *(uint64_t *)(q + 16))
						TH_LOG("%s, harden %s", cases[c].name, levels[lv]);
				EXPECT_EQ(0, memcmp(ctx[0] + 2, ctx[1] + 2,
						    (CTX_N - 2) * sizeof(uint64_t)))
					TH_LOG("%s, harden %s, faulting %u: layouts differ",
					       cases[c].name, levels[lv], faulting);
			}
		}
	}
}

/*
 * Without blinding the chain runs through every case: the two layouts JIT to
 * the same size.  (Under bpf_jit_harden 2 the sizes vary from load to load:
 * blinded immediates are random and emit_mov_imm64() sizes by value; the
 * unit test raise_unit_test:reuse_ax_through_immediates_only_without_blinding
 * covers that decision, and the results test above its effect.)
 */
TEST_F(chain, base_computed_once_through_every_case)
{
	struct bpf_insn p[128];
	unsigned int c;
	uint32_t len[2];

	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: the in-tree JIT, not the raise");
	ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, "0"));
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		len[0] = prog_jited_len(p, chain_prog(p, self->fd, &cases[c], false), vlog,
					 LOG_SIZE);
		len[1] = prog_jited_len(p, chain_prog(p, self->fd, &cases[c], true), vlog,
					 LOG_SIZE);
		ASSERT_NE(0, len[0]);
		ASSERT_NE(0, len[1]);
		EXPECT_EQ(len[1], len[0])
			TH_LOG("%s: jited %u before, %u after", cases[c].name, len[0], len[1]);
	}
}

/* More than BPFA_AX_BETWEEN_MAX (8) instructions: the base is computed again. */
TEST_F(chain, ninth_instruction_ends_the_chain)
{
	struct between b = { .name = "r0 += r5 x N" };
	struct bpf_insn p[128];
	uint32_t len[2];
	unsigned int k, n;
	uint64_t ctx[CTX_N];

	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: the in-tree JIT, not the raise");
	ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, "0"));
	for (n = 8; n <= 9; n++) {
		/* chain_prog takes up to 3; build N by hand: A, N x B, load, store */
		struct between one = { .name = "r0 += r5", .insn = { I_ALU64_REG(BPF_ADD, 0, 5) }, .n = 1 };
		unsigned int cnt, a;

		for (a = 0; a < 2; a++) {
			cnt = chain_prog(p, self->fd, &one, a);
			/* the B slot: after A (before) or after the store (after) */
			for (k = 0; k < cnt && !(p[k].code == (BPF_ALU64 | BPF_ADD | BPF_X) &&
						  p[k].dst_reg == 0 && p[k].src_reg == 5); k++)
				;
			ASSERT_LT(k, cnt);
			memmove(&p[k + n], &p[k + 1], (cnt - k - 1) * sizeof(*p));
			for (b.n = 0; b.n < n; b.n++)
				p[k + b.n] = one.insn[0];
			cnt += n - 1;
			len[a] = prog_jited_len(p, cnt, vlog, LOG_SIZE);
			ASSERT_NE(0, len[a]);
			memset(ctx, 0, sizeof(ctx));
			/* both runs fault (nothing populates the page) */
			ctx[0] = (uint64_t)(unsigned long)(self->base + (1 + n - 8) * PG);
			ASSERT_EQ(7, load_run_once(p, cnt, ctx, sizeof(ctx), vlog, LOG_SIZE));
			EXPECT_EQ(1 + 3 * n, ctx[4]);
			EXPECT_EQ(0, ctx[2]);
			EXPECT_EQ(0, ctx[3]);
		}
		EXPECT_EQ(n > 8 ? PREFIX_LEN : 0, len[0] - len[1]) TH_LOG("%u between", n);
	}
}

TEST_HARNESS_MAIN

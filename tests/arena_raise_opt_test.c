// SPDX-License-Identifier: GPL-2.0
/*
 * The raise's optimisations (rewrite/raise.c, OPTIMISATIONS; issue 15): a kept
 * `wS = wS` left out where rS is zero-extended already, and runs of adjacent
 * accesses through one base sharing one `movabs r10; add r10, rS`.  Each
 * program runs on a populated page (values checked) and on an unpopulated
 * one (every access faults: loads give 0, stores are dropped, so the fault
 * fixup of rewrite/fault_decode.c must recognise every access of a chain), under
 * bpf_jit_harden 0, 1 and 2 (constant blinding runs after the raise).  On
 * 6.12 the same programs run on the in-tree arena (same results).
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

#define PAGES		8
#define PG		4096
#define LOG_SIZE	(1 << 20)
#define CHAIN		20	/* longer than BPFA_AX_CHAIN_MAX (16): one re-materialisation */

static char vlog[LOG_SIZE];

FIXTURE(opt) {
	int fd;
	char *base;
};

FIXTURE_SETUP(opt)
{
	struct arena a;

	ASSERT_EQ(0, arena_open(&a, PAGES, 0, true));
	self->fd = a.fd;
	self->base = a.base;
	memset(self->base, 0, 2 * PG);	/* pages 0, 1 populated; 2.. not */
}

FIXTURE_TEARDOWN(opt)
{
	write_str(JIT_HARDEN_SYSCTL, "0");
	munmap(self->base, PAGES * PG);
	close(self->fd);
}

/*
 * ctx[0] = p (user address), ctx[1] = v.  Adjacent through r2: three loads of
 * three sizes, two stores, a load back; then an ALU instruction with an
 * immediate and one more load (the chain runs through it, or under
 * bpf_jit_harden 2, which blinds the immediate through AX, the base is
 * materialised again with its `w2 = w2` left out).
 * ctx[2..5] = the four loads, ctx[6] = the last one.
 */
static unsigned int mixed_prog(struct bpf_insn *p, int afd)
{
	struct bpf_insn m[] = { I_LD_MAP_FD(1, afd) };
	unsigned int n = 0;

	p[n++] = I_MOV64_REG(6, 1);
	p[n++] = m[0], p[n++] = m[1];
	p[n++] = I_LDX(BPF_DW, 2, 6, 0);
	p[n++] = I_LDX(BPF_DW, 7, 6, 8);
	p[n++] = I_MOV64_IMM(3, -1);
	p[n++] = I_MOV64_IMM(4, -1);
	p[n++] = I_MOV64_IMM(5, -1);
	p[n++] = I_MOV64_IMM(8, -1);
	p[n++] = I_CAST_KERN(2, 2);
	p[n++] = I_LDX(BPF_DW, 3, 2, 0);
	p[n++] = I_LDX(BPF_W, 4, 2, 8);
	p[n++] = I_LDX(BPF_B, 5, 2, 13);
	p[n++] = I_STX(BPF_DW, 2, 7, 16);
	p[n++] = I_STX(BPF_W, 2, 7, 24);
	p[n++] = I_LDX(BPF_DW, 8, 2, 16);
	p[n++] = I_ALU64_IMM(BPF_ADD, 8, 1);
	p[n++] = I_LDX(BPF_DW, 9, 2, 24);
	p[n++] = I_STX(BPF_DW, 6, 3, 16);
	p[n++] = I_STX(BPF_DW, 6, 4, 24);
	p[n++] = I_STX(BPF_DW, 6, 5, 32);
	p[n++] = I_STX(BPF_DW, 6, 8, 40);
	p[n++] = I_STX(BPF_DW, 6, 9, 48);
	p[n++] = I_MOV64_IMM(0, 7);
	p[n++] = I_EXIT();
	return n;
}

TEST_F(opt, adjacent_accesses_under_every_jit_harden_setting)
{
	static const char *levels[] = { "0", "1", "2" };
	struct bpf_insn p[64];
	unsigned int n = mixed_prog(p, self->fd), i;

	for (i = 0; i < 3; i++) {
		char *q = self->base + 64 * i;
		uint64_t ctx[7] = { (uint64_t)(unsigned long)q, 0x1122334455667788ULL + i };

		ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, levels[i]));
		*(uint64_t *)q = 0xa0a0a0a0a0a0a0a0ULL + i;
		*(uint32_t *)(q + 8) = 0xb1b2b3b4 + i;
		q[13] = (char)(0xc0 + i);
		ASSERT_EQ(7, load_run_once(p, n, ctx, sizeof(ctx), vlog, LOG_SIZE));
		EXPECT_EQ(0xa0a0a0a0a0a0a0a0ULL + i, ctx[2]);
		EXPECT_EQ(0xb1b2b3b4ULL + i, ctx[3]);
		EXPECT_EQ(0xc0ULL + i, ctx[4]);
		EXPECT_EQ(0x1122334455667788ULL + i + 1, ctx[5]);
		EXPECT_EQ(0x55667788ULL + i, ctx[6]);
		EXPECT_EQ(0x1122334455667788ULL + i, *(uint64_t *)(q + 16));
		EXPECT_EQ(0x55667788U + i, *(uint32_t *)(q + 24));
	}
}

TEST_F(opt, adjacent_accesses_fault_under_every_jit_harden_setting)
{
	static const char *levels[] = { "0", "1", "2" };
	struct bpf_insn p[64];
	unsigned int n = mixed_prog(p, self->fd), i;

	for (i = 0; i < 3; i++) {
		char *q = self->base + (2 + i) * PG + 128;
		uint64_t ctx[7] = { (uint64_t)(unsigned long)q, 0x99, 5, 5, 5, 5, 5 };

		ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, levels[i]));
		ASSERT_EQ(7, load_run_once(p, n, ctx, sizeof(ctx), vlog, LOG_SIZE));
		EXPECT_EQ(0, ctx[2]);
		EXPECT_EQ(0, ctx[3]);
		EXPECT_EQ(0, ctx[4]);
		EXPECT_EQ(1, ctx[5]);	/* the faulting load gave 0, then + 1 */
		EXPECT_EQ(0, ctx[6]);
		/* Both stores were dropped: the page user space faults in is zero. */
		EXPECT_EQ(0, *(uint64_t *)(q + 16));
		EXPECT_EQ(0, *(uint32_t *)(q + 24));
	}
}

/* CHAIN adjacent u64 loads into r3 from p + 8k, then ctx[1] = r3; r0 = sum of none. */
static unsigned int chain_prog(struct bpf_insn *p, int afd, int loads)
{
	struct bpf_insn m[] = { I_LD_MAP_FD(1, afd) };
	unsigned int n = 0;
	int k;

	p[n++] = I_MOV64_REG(6, 1);
	p[n++] = m[0], p[n++] = m[1];
	p[n++] = I_LDX(BPF_DW, 2, 6, 0);
	p[n++] = I_MOV64_IMM(3, -1);
	p[n++] = I_CAST_KERN(2, 2);
	for (k = 0; k < loads; k++)
		p[n++] = I_LDX(BPF_DW, 3, 2, 8 * k);
	p[n++] = I_STX(BPF_DW, 6, 3, 8);
	p[n++] = I_MOV64_IMM(0, 7);
	p[n++] = I_EXIT();
	return n;
}

TEST_F(opt, long_chain_every_access_faults)
{
	static const char *levels[] = { "0", "1", "2" };
	struct bpf_insn p[64];
	unsigned int n = chain_prog(p, self->fd, CHAIN), i;

	for (i = 0; i < 3; i++) {
		char *q = self->base + PG + 256 * i;
		uint64_t ctx[2] = { (uint64_t)(unsigned long)q, 5 };

		ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, levels[i]));
		*(uint64_t *)(q + 8 * (CHAIN - 1)) = 0x77 + i;
		ASSERT_EQ(7, load_run_once(p, n, ctx, sizeof(ctx), vlog, LOG_SIZE));
		EXPECT_EQ(0x77 + i, ctx[1]);
		/* unpopulated: all CHAIN loads fault (the last after a re-materialisation) */
		ctx[0] = (uint64_t)(unsigned long)(self->base + (5 + i % 2) * PG + 256 * i);
		ctx[1] = 5;
		ASSERT_EQ(7, load_run_once(p, n, ctx, sizeof(ctx), vlog, LOG_SIZE));
		EXPECT_EQ(0, ctx[1]);
	}
}

/* Every length of a chain: the fault of its last access (1..CHAIN). */
TEST_F(opt, fault_at_every_chain_position)
{
	struct bpf_insn p[64];
	int len;

	for (len = 1; len <= CHAIN; len++) {
		unsigned int n = chain_prog(p, self->fd, len);
		uint64_t ctx[2] = { (uint64_t)(unsigned long)(self->base + 7 * PG), 5 };

		ASSERT_EQ(7, load_run_once(p, n, ctx, sizeof(ctx), vlog, LOG_SIZE))
			TH_LOG("chain of %d", len);
		EXPECT_EQ(0, ctx[1]) TH_LOG("chain of %d", len);
	}
}

/*
 * The point of it: after the first access of a run (movabs + add + access,
 * its `w2 = w2` dropped after the cast), each further adjacent u64 load
 * through the same base is its x86 load alone (4 bytes with an 8-bit
 * displacement; before issue 15: 21).
 */
TEST_F(opt, adjacent_loads_cost_one_instruction_each)
{
	struct bpf_insn p[64];
	uint32_t l1, l16;

	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: the in-tree JIT, not the raise");
	ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, "0"));
	l1 = prog_jited_len(p, chain_prog(p, self->fd, 1), vlog, LOG_SIZE);
	l16 = prog_jited_len(p, chain_prog(p, self->fd, 16), vlog, LOG_SIZE);
	ASSERT_NE(0, l1);
	ASSERT_NE(0, l16);
	TH_LOG("jited bytes: 1 load %u, 16 loads %u", l1, l16);
	EXPECT_EQ(15 * 4, l16 - l1);
}

/*
 * An entry point between a zero-extension and an access through the same
 * base (rewrite/raise.c, ENTRY POINTS): L is reached from the cast just before
 * it (r2 zero-extended) and by a jump from a block that adds bit 40 to r2.
 * The raise must keep L's own `w2 = w2`: the block analysis may not carry
 * the cast's zero-extension across L.  (The lowering makes arena pointer
 * arithmetic 32-bit, so here bit 40 is gone before L either way and both
 * paths read p + 8; what shows the raise's decision is the JIT size, below.)
 * to_l: the jump goes to L; else to the cast before L, whose zero-extension
 * then covers L on both paths and L's `w2 = w2` may be left out.
 * ctx[0] = p, ctx[1] = path (0: fall-through, else the jump), ctx[2] = the load.
 */
static unsigned int join_prog(struct bpf_insn *p, int afd, bool to_l)
{
	struct bpf_insn m[] = { I_LD_MAP_FD(1, afd) };
	struct bpf_insn hi[] = { I_LD_IMM64(8, 1ULL << 40) };
	unsigned int n = 0;

	p[n++] = I_MOV64_REG(6, 1);
	p[n++] = m[0], p[n++] = m[1];
	p[n++] = I_LDX(BPF_DW, 2, 6, 0);
	p[n++] = I_LDX(BPF_DW, 7, 6, 8);
	p[n++] = I_MOV64_IMM(3, -1);
	p[n++] = I_JMP_IMM(BPF_JNE, 7, 0, 5);		/* 6: to 12 */
	p[n++] = I_CAST_KERN(2, 2);			/* 7: r2 zero-extended */
	p[n++] = I_LDX(BPF_DW, 3, 2, 8);		/* 8: L */
	p[n++] = I_STX(BPF_DW, 6, 3, 16);
	p[n++] = I_MOV64_IMM(0, 7);
	p[n++] = I_EXIT();
	p[n++] = I_CAST_KERN(2, 2);			/* 12 */
	p[n++] = hi[0], p[n++] = hi[1];
	p[n++] = I_ALU64_REG(BPF_ADD, 2, 8);		/* bit 40 */
	p[n++] = I_JA(to_l ? -9 : -10);			/* 16: to L, or to the cast */
	return n;
}

TEST_F(opt, entry_between_zero_extension_and_access_keeps_it)
{
	static const char *levels[] = { "0", "1", "2" };
	struct bpf_insn p[64];
	unsigned int n, i, path, to_l;
	uint32_t len[2];

	for (to_l = 0; to_l < 2; to_l++) {
		n = join_prog(p, self->fd, to_l);
		for (i = 0; i < 3; i++) {
			char *q = self->base + 512 + 64 * i;

			ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, levels[i]));
			*(uint64_t *)(q + 8) = 0x5a5a000000000000ULL + i;
			for (path = 0; path < 2; path++) {
				uint64_t ctx[3] = { (uint64_t)(unsigned long)q, path, 5 };

				ASSERT_EQ(7, load_run_once(p, n, ctx, sizeof(ctx), vlog, LOG_SIZE));
				EXPECT_EQ(0x5a5a000000000000ULL + i, ctx[2])
					TH_LOG("to L %u, bpf_jit_harden %s, path %u", to_l,
					       levels[i], path);
			}
		}
	}
	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: the in-tree JIT, not the raise");
	ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, "0"));
	for (to_l = 0; to_l < 2; to_l++) {
		len[to_l] = prog_jited_len(p, join_prog(p, self->fd, to_l), vlog,
					    LOG_SIZE);
		ASSERT_NE(0, len[to_l]);
	}
	TH_LOG("jited bytes: jump to the cast %u, jump to L %u", len[0], len[1]);
	/* L keeps `mov esi, esi` (r2 is rsi): 2 bytes */
	EXPECT_EQ(2, len[1] - len[0]);
}

/*
 * Arena pointer arithmetic is 32-bit after the lowering (`w2 += 8`), and a
 * 32-bit ALU result is zero-extended (rewrite/raise.c, zext): the access after
 * it leaves its `w2 = w2` out.  add: `r2 += 8; r3 = *(u64 *)(r2 + 0)`; else
 * `r3 = *(u64 *)(r2 + 8)`.  ctx[0] = p, ctx[1] = the load.
 */
static unsigned int arith_prog(struct bpf_insn *p, int afd, bool add)
{
	struct bpf_insn m[] = { I_LD_MAP_FD(1, afd) };
	unsigned int n = 0;

	p[n++] = I_MOV64_REG(6, 1);
	p[n++] = m[0], p[n++] = m[1];
	p[n++] = I_LDX(BPF_DW, 2, 6, 0);
	p[n++] = I_MOV64_IMM(3, -1);
	p[n++] = I_CAST_KERN(2, 2);
	if (add) {
		p[n++] = I_ALU64_IMM(BPF_ADD, 2, 8);
		p[n++] = I_LDX(BPF_DW, 3, 2, 0);
	} else {
		p[n++] = I_LDX(BPF_DW, 3, 2, 8);
	}
	p[n++] = I_STX(BPF_DW, 6, 3, 8);
	p[n++] = I_MOV64_IMM(0, 7);
	p[n++] = I_EXIT();
	return n;
}

TEST_F(opt, access_after_32bit_arithmetic_drops_zero_extension)
{
	static const char *levels[] = { "0", "1", "2" };
	struct bpf_insn p[64];
	unsigned int i, add;
	uint32_t len[2];

	for (add = 0; add < 2; add++) {
		for (i = 0; i < 3; i++) {
			char *q = self->base + 1024 + 64 * i;
			uint64_t ctx[2] = { (uint64_t)(unsigned long)q, 5 };

			ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, levels[i]));
			*(uint64_t *)(q + 8) = 0x6b6b000000000000ULL + i;
			ASSERT_EQ(7, load_run_once(p, arith_prog(p, self->fd, add), ctx, sizeof(ctx),
						   vlog, LOG_SIZE));
			EXPECT_EQ(0x6b6b000000000000ULL + i, ctx[1])
				TH_LOG("add %u, bpf_jit_harden %s", add, levels[i]);
		}
	}
	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: the in-tree JIT, not the raise");
	ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, "0"));
	for (add = 0; add < 2; add++) {
		len[add] = prog_jited_len(p, arith_prog(p, self->fd, add), vlog, LOG_SIZE);
		ASSERT_NE(0, len[add]);
	}
	TH_LOG("jited bytes: offset 8 %u, add 8 then offset 0 %u", len[0], len[1]);
	/* only `add esi, 8` (3 bytes): no `mov esi, esi` after it */
	EXPECT_EQ(3, len[1] - len[0]);
}

TEST_HARNESS_MAIN

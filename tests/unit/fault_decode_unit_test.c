// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the fault fixup's decoder (rewrite/fault_decode.c), in user
 * space, linked as the module links it, run over x86 bytes laid out as
 * 6.1's JIT emits raised accesses (the encodings are written out below,
 * with the instruction each one is).  "Kernel memory" is one buffer; the
 * decoder's reads may reach only its readable window [lo, hi), so images
 * that start or end next to an unmapped page can be modelled.
 *
 * What a wrong answer costs: accepting a fault that is not a raised arena
 * access lets the fixup skip a kernel access or zero a register the program
 * still trusts; refusing a real one turns an arena fault into an oops.  Each
 * test names the rule it holds the decoder to.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"

#include "fault_decode.h"
#include "raise.h"

typedef uint8_t u8;
typedef __u64 u64;

/* x86 registers by their 4-bit encoding */
#define RAX	0
#define R13	13

static u8 mem[4096];
static const u8 *rd_lo, *rd_hi;		/* readable window of mem */
static const u8 *text_lo, *text_hi;	/* "BPF text": what is_text() says */
static u64 live_base;			/* the one live arena's kern_vm_start */
static unsigned int live_calls;		/* is_live() calls */

static int t_read(void *ctx, void *dst, unsigned long addr, unsigned int size)
{
	const u8 *s = (const u8 *)addr;

	(void)ctx;
	if (s < rd_lo || s > rd_hi || size > (size_t)(rd_hi - s))
		return -14;	/* -EFAULT */
	memcpy(dst, s, size);
	return 0;
}

static bool t_is_live(void *ctx, u64 kern_vm_start)
{
	(void)ctx;
	live_calls++;
	return kern_vm_start == live_base;
}

static bool t_is_text(void *ctx, unsigned long addr)
{
	(void)ctx;
	return addr >= (unsigned long)text_lo && addr < (unsigned long)text_hi;
}

static const struct bpfa_fault_env env = {
	.is_text = t_is_text, .read = t_read, .is_live = t_is_live,
};

#define KVM	0xffffc90000000000ull
#define START	1024			/* where each image starts in mem */

/* An image being laid out in mem. */
struct img {
	unsigned int at;		/* next free offset */
};

static unsigned int put(struct img *m, const u8 *b, unsigned int n)
{
	unsigned int at = m->at;

	memcpy(mem + at, b, n);
	m->at += n;
	return at;
}

#define EMIT(m, ...) put(m, (const u8[]){ __VA_ARGS__ }, sizeof((const u8[]){ __VA_ARGS__ }))
#define IMM32(v) (u8)(v), (u8)((v) >> 8), (u8)((v) >> 16), (u8)((v) >> 24)
#define IMM64(v) IMM32(v), IMM32((u64)(v) >> 32)

/* movabs r10, base; add r10, rdi (the raise's prefix for a base in BPF r1) */
static unsigned int prefix_base(struct img *m, u64 base)
{
	return EMIT(m, 0x49, 0xba, IMM64(base), 0x49, 0x01, 0xfa);
}

static unsigned int prefix(struct img *m)
{
	return prefix_base(m, KVM);
}

/* Accesses through r10 (rm = 010 with REX.B) */
#define LOAD_RAX_8(m)	EMIT(m, 0x49, 0x8b, 0x42, 0x08)	/* mov rax, [r10+8] */
#define LOAD_R13_16(m)	EMIT(m, 0x4d, 0x8b, 0x6a, 0x10)	/* mov r13, [r10+16] */
#define STORE_RDI_16(m)	EMIT(m, 0x49, 0x89, 0x7a, 0x10)	/* mov [r10+16], rdi */
#define ST_DW_D32(m)	EMIT(m, 0x49, 0xc7, 0x82, IMM32(0x1000), IMM32(7)) /* mov qword [r10+0x1000], 7 */
#define LOCK_ADD(m)	EMIT(m, 0xf0, 0x49, 0x01, 0x42, 0x08)	/* lock add [r10+8], rax */

/* Between-instructions (none names r10) */
#define ADD_RSI_RDX(m)	EMIT(m, 0x48, 0x01, 0xd6)		/* add rsi, rdx */
#define CMP_RSI_5(m)	EMIT(m, 0x48, 0x83, 0xfe, 0x05)		/* cmp rsi, 5 */
#define CMP_RSI_I32(m)	EMIT(m, 0x48, 0x81, 0xfe, IMM32(0x12345)) /* cmp rsi, 0x12345 */
#define JE8(m)		EMIT(m, 0x74, 0x10)			/* je .+0x10 */
#define NOP4(m)		EMIT(m, 0x0f, 0x1f, 0x40, 0x00)		/* jump padding */
#define JE32(m)		EMIT(m, 0x0f, 0x84, IMM32(0x400))	/* je .+0x400 */
#define MOV_ESI_I32(m)	EMIT(m, 0xbe, IMM32(0x77))		/* mov esi, 0x77 */
#define XOR_ESI_ESI(m)	EMIT(m, 0x31, 0xf6)			/* xor esi, esi */
#define LDX_RSI(m)	EMIT(m, 0x48, 0x8b, 0xb2, IMM32(0x100))	/* mov rsi, [rdx+0x100] */

static struct bpfa_fault_fix fix;

static const struct bpfa_fault_fix *fix_at(unsigned int off)
{
	memset(&fix, 0xff, sizeof(fix));
	return bpfa_fault_decode(&env, (unsigned long)(mem + off), &fix) ? &fix : NULL;
}

/* The faulting access's length and the register its fixup clears, as one number. */
static int expect(unsigned int len, unsigned int clear)
{
	return (int)(len | clear << 8);
}

static int got(const struct bpfa_fault_fix *f)
{
	return (int)(f->len | f->clear << 8);
}

FIXTURE(img) {
	struct img m;
};

FIXTURE_SETUP(img)
{
	memset(mem, 0xcc, sizeof(mem));	/* int3 where nothing was laid out */
	self->m.at = START;
	rd_lo = mem;
	rd_hi = mem + sizeof(mem);
	text_lo = mem;
	text_hi = mem + sizeof(mem);
	live_base = KVM;
	live_calls = 0;
}

FIXTURE_TEARDOWN(img)
{
}

TEST_F(img, load_after_its_prefix_clears_its_destination)
{
	unsigned int at;
	const struct bpfa_fault_fix *e;

	prefix(&self->m);
	at = LOAD_RAX_8(&self->m);
	e = fix_at(at);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(expect(4, RAX), got(e));
	EXPECT_EQ(KVM, e->kern_vm_start);
}

TEST_F(img, store_and_atomic_clear_orig_ax_not_r10)
{
	unsigned int st, at;

	prefix(&self->m);
	st = STORE_RDI_16(&self->m);
	prefix(&self->m);
	at = LOCK_ADD(&self->m);
	ASSERT_NE(NULL, fix_at(st));
	EXPECT_EQ(expect(4, BPFA_X86_NO_CLEAR), got(fix_at(st)));
	ASSERT_NE(NULL, fix_at(at));
	EXPECT_EQ(expect(5, BPFA_X86_NO_CLEAR), got(fix_at(at)));
}

TEST_F(img, chain_through_every_between_kind_is_accepted)
{
	struct img *m = &self->m;
	unsigned int a1, a2, a3;

	prefix(m);
	a1 = LOAD_RAX_8(m);
	ADD_RSI_RDX(m);
	CMP_RSI_5(m);
	JE8(m);
	CMP_RSI_5(m);
	NOP4(m);
	JE8(m);
	CMP_RSI_I32(m);
	JE32(m);
	a2 = LOAD_R13_16(m);
	MOV_ESI_I32(m);
	XOR_ESI_ESI(m);
	LDX_RSI(m);
	a3 = STORE_RDI_16(m);
	ASSERT_NE(NULL, fix_at(a1));
	ASSERT_NE(NULL, fix_at(a2));
	EXPECT_EQ(expect(4, R13), got(fix_at(a2)));
	ASSERT_NE(NULL, fix_at(a3));
	EXPECT_EQ(expect(4, BPFA_X86_NO_CLEAR), got(fix_at(a3)));
}

/*
 * An earlier access of a chain that writes r10 leaves the next one going
 * through something else: the JIT never emits these (the raise never
 * chains an atomic, no BPF register is r10), and the decoder must not
 * assume it.
 */
TEST_F(img, member_access_writing_r10_ends_the_chain)
{
	static const u8 writes_r10[][6] = {
		{ 0xf0, 0x4d, 0x0f, 0xc1, 0x52, 0x08 },	/* lock xadd [r10+8], r10 */
		{ 0xf0, 0x4d, 0x87, 0x52, 0x08 },	/* lock xchg [r10+8], r10 */
		{ 0xf0, 0x4d, 0x0f, 0xb1, 0x52, 0x08 },	/* lock cmpxchg [r10+8], r10 */
		{ 0x4d, 0x8b, 0x52, 0x08 },		/* mov r10, [r10+8] */
	};
	static const unsigned int lens[] = { 6, 5, 6, 4 };
	unsigned int i, at;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		self->m.at = START + 64 * i;
		prefix(&self->m);
		put(&self->m, writes_r10[i], lens[i]);
		at = LOAD_RAX_8(&self->m);
		EXPECT_EQ(NULL, fix_at(at)) TH_LOG("member %u accepted", i);
	}
}

TEST_F(img, atomic_never_chains)
{
	unsigned int at;

	prefix(&self->m);
	LOCK_ADD(&self->m);			/* atomic as a member */
	at = LOAD_RAX_8(&self->m);
	EXPECT_EQ(NULL, fix_at(at));

	self->m.at = START + 256;
	prefix(&self->m);
	LOAD_RAX_8(&self->m);
	at = LOCK_ADD(&self->m);		/* atomic reusing AX */
	EXPECT_EQ(NULL, fix_at(at));
}

TEST_F(img, between_instruction_writing_r10_ends_the_chain)
{
	static const u8 writes_r10[][4] = {
		{ 0x49, 0x89, 0xc2 },		/* mov r10, rax */
		{ 0x49, 0x83, 0xc2, 0x05 },	/* add r10, 5 */
		{ 0x4d, 0x31, 0xd2 },		/* xor r10, r10 */
		{ 0x4c, 0x8b, 0x17 },		/* mov r10, [rdi] (no disp: not the JIT's either) */
	};
	static const unsigned int lens[] = { 3, 4, 3, 3 };
	unsigned int i, at;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		self->m.at = START + 64 * i;
		prefix(&self->m);
		LOAD_RAX_8(&self->m);
		put(&self->m, writes_r10[i], lens[i]);
		at = LOAD_RAX_8(&self->m);
		EXPECT_EQ(NULL, fix_at(at)) TH_LOG("between %u accepted", i);
	}
}

TEST_F(img, base_of_no_live_arena_is_refused)
{
	unsigned int at;

	prefix_base(&self->m, KVM + 0x100000000ull);
	at = LOAD_RAX_8(&self->m);
	EXPECT_EQ(NULL, fix_at(at));
}

TEST_F(img, ip_outside_bpf_text_is_refused)
{
	unsigned int at;

	prefix(&self->m);
	at = LOAD_RAX_8(&self->m);
	text_lo = mem + at + 1;
	EXPECT_EQ(NULL, fix_at(at));
	EXPECT_EQ(0, live_calls);
}

/* The image may end right after the access: only its own bytes must be readable. */
TEST_F(img, access_at_the_end_of_readable_memory)
{
	unsigned int at;

	prefix(&self->m);
	at = LOAD_RAX_8(&self->m);
	rd_hi = mem + at + 4;
	ASSERT_NE(NULL, fix_at(at));
	EXPECT_EQ(expect(4, RAX), got(fix_at(at)));
	rd_hi = mem + at + 3;			/* the access itself cut short */
	EXPECT_EQ(NULL, fix_at(at));
}

/* ... or start right at the prefix, with an unmapped page before it. */
TEST_F(img, prefix_at_the_start_of_readable_memory)
{
	unsigned int pre, at;

	pre = prefix(&self->m);
	at = LOAD_RAX_8(&self->m);
	rd_lo = mem + pre;
	ASSERT_NE(NULL, fix_at(at));
	rd_lo = mem + pre + 1;			/* the prefix itself not readable */
	EXPECT_EQ(NULL, fix_at(at));
}

/*
 * The raise's longest chain: BPFA_AX_CHAIN_MAX accesses (the longest plain
 * one, `mov qword [r10+disp32], imm32`) after one prefix, and
 * BPFA_AX_BETWEEN_MAX of the longest between-instructions (cmp with imm32,
 * padding, jcc); one access more, or one between-instruction more, is not
 * a chain the raise makes.
 */
TEST_F(img, longest_chain_fits_the_window_and_one_more_does_not)
{
	struct img *m = &self->m;
	unsigned int i, at[BPFA_AX_CHAIN_MAX + 1];

	prefix(m);
	for (i = 0; i < BPFA_AX_CHAIN_MAX + 1; i++) {
		at[i] = ST_DW_D32(m);
		if (i < BPFA_AX_BETWEEN_MAX) {
			CMP_RSI_I32(m);
			NOP4(m);
			JE8(m);
		}
	}
	for (i = 0; i < BPFA_AX_CHAIN_MAX; i++)
		EXPECT_NE(NULL, fix_at(at[i])) TH_LOG("access %u of the chain refused", i);
	EXPECT_EQ(NULL, fix_at(at[BPFA_AX_CHAIN_MAX]));
}

TEST_F(img, between_instructions_are_capped)
{
	struct img *m = &self->m;
	unsigned int i, at;

	prefix(m);
	LOAD_RAX_8(m);
	for (i = 0; i < BPFA_AX_BETWEEN_MAX; i++) {
		CMP_RSI_5(m);
		NOP4(m);
		JE8(m);
	}
	at = LOAD_RAX_8(m);
	EXPECT_NE(NULL, fix_at(at));
	CMP_RSI_5(m);
	at = LOAD_RAX_8(m);
	EXPECT_EQ(NULL, fix_at(at));
}

/*
 * A program can put prefix-shaped bytes in its immediates; each candidate
 * whose chain does not decode to ip must cost no walk of the arenas.
 */
TEST_F(img, liveness_is_asked_only_for_a_decoded_chain)
{
	struct img *m = &self->m;
	unsigned int at;

	prefix(m);
	prefix(m);				/* a candidate closer to ip */
	EMIT(m, 0xcc);				/* ... whose chain does not decode */
	at = LOAD_RAX_8(m);
	EXPECT_EQ(NULL, fix_at(at));
	EXPECT_EQ(0, live_calls);

	m->at = START + 512;
	prefix_base(m, KVM + 0x100000000ull);	/* decodes, but no arena's */
	prefix(m);
	at = LOAD_RAX_8(m);
	ASSERT_NE(NULL, fix_at(at));
	EXPECT_EQ(1, live_calls);
}

TEST_HARNESS_MAIN

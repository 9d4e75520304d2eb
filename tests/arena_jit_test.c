// SPDX-License-Identifier: GPL-2.0
/*
 * Arena programs written as raw instructions (no compiler, no libbpf), so each
 * test says exactly which instruction forms it exercises.  The same
 * assertions run on 6.1 with the module (lowered, verified, raised) and on
 * 6.12 (in-tree arena): every expectation is upstream's behaviour.
 *
 * Programs are sleepable SYSCALL programs run with BPF_PROG_TEST_RUN; the
 * context is a u64 array: ctx[0..] inputs, results written back into it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/btf.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define ARENA_PAGES	16
#define PG		4096
#define LOG_SIZE	(1 << 20)

static char vlog[LOG_SIZE];

#define JIT_ENABLE "/proc/sys/net/core/bpf_jit_enable"

FIXTURE(prog) {
	struct arena a;
};

FIXTURE_SETUP(prog)
{
	ASSERT_EQ(0, arena_open(&self->a, ARENA_PAGES, 0, true));
	/* Pages 0-3 populated from user space; the rest stay unpopulated. */
	memset(self->a.base, 0, 4 * PG);
}

FIXTURE_TEARDOWN(prog)
{
	arena_close(&self->a);
	write_str(JIT_HARDEN_SYSCTL, "0");
}

/* Loads, runs on ctx, closes; returns r0 (or fails the test). */
#define RUN(insns, ctx)	LOAD_RUN(insns, ctx, vlog, LOG_SIZE)

/*
 * ctx[0] = user address, ctx[1] = value:
 * *(u64 *)p = v; ctx[2] = *(u32 *)p; ctx[3] = *(u16 *)(p + 2); ctx[4] = *(u8 *)(p + 7)
 */
#define ROUND_TRIP_PROG(afd)						\
	{								\
		I_MOV64_REG(6, 1),					\
		I_LD_MAP_FD(1, afd),					\
		I_LDX(BPF_DW, 2, 6, 0),					\
		I_CAST_KERN(2, 2),					\
		I_LDX(BPF_DW, 3, 6, 8),					\
		I_STX(BPF_DW, 2, 3, 0),					\
		I_LDX(BPF_W, 4, 2, 0),					\
		I_STX(BPF_DW, 6, 4, 16),				\
		I_LDX(BPF_H, 4, 2, 2),					\
		I_STX(BPF_DW, 6, 4, 24),				\
		I_LDX(BPF_B, 4, 2, 7),					\
		I_STX(BPF_DW, 6, 4, 32),				\
		I_MOV64_IMM(0, 7),					\
		I_EXIT(),						\
	}

TEST_F(prog, load_store_all_sizes)
{
	struct bpf_insn insns[] = ROUND_TRIP_PROG(self->a.fd);
	uint64_t ctx[5] = { ptr_u64(self->a.base + PG + 64), 0x1122334455667788ULL };

	ASSERT_EQ(7, RUN(insns, ctx));
	EXPECT_EQ(0x1122334455667788ULL, *(uint64_t *)(self->a.base + PG + 64));
	EXPECT_EQ(0x55667788ULL, ctx[2]);
	EXPECT_EQ(0x5566ULL, ctx[3]);
	EXPECT_EQ(0x11ULL, ctx[4]);
}

TEST_F(prog, same_program_under_every_jit_harden_setting)
{
	struct bpf_insn insns[] = ROUND_TRIP_PROG(self->a.fd);
	const char *levels[] = { "0", "1", "2" };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(levels); i++) {
		uint64_t ctx[5] = { ptr_u64(self->a.base + 2 * PG + 8 * i), 0xa5a5000000000000ULL | i };

		ASSERT_TRUE(write_str(JIT_HARDEN_SYSCTL, levels[i]));
		ASSERT_EQ(7, RUN(insns, ctx));
		EXPECT_EQ(0xa5a5000000000000ULL | i, *(uint64_t *)(self->a.base + 2 * PG + 8 * i));
		EXPECT_EQ((uint32_t)i, ctx[2]);
	}
}

TEST_F(prog, unpopulated_page_reads_zero_and_drops_stores)
{
	struct bpf_insn insns[] = ROUND_TRIP_PROG(self->a.fd);
	uint64_t ctx[5] = { ptr_u64(self->a.base + 9 * PG + 16), 0xdeadbeefcafef00dULL,
			    1, 1, 1 };

	ASSERT_EQ(7, RUN(insns, ctx));
	EXPECT_EQ(0, ctx[2]);
	EXPECT_EQ(0, ctx[3]);
	EXPECT_EQ(0, ctx[4]);
	/* The store was dropped: the page user space now faults in is zero. */
	EXPECT_EQ(0, *(uint64_t *)(self->a.base + 9 * PG + 16));
}

TEST_F(prog, negative_offsets_and_store_immediates)
{
	uint64_t ctx[3] = { ptr_u64(self->a.base + PG + 256) };
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_ST(BPF_W, 2, -8, 0x01020304),
		I_ST(BPF_H, 2, -4, 0x0506),
		I_ST(BPF_B, 2, -2, 0x07),
		I_ST(BPF_DW, 2, -16, -2),
		I_LDX(BPF_DW, 3, 2, -8),
		I_STX(BPF_DW, 6, 3, 8),
		I_LDX(BPF_DW, 3, 2, -16),
		I_STX(BPF_DW, 6, 3, 16),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};

	ASSERT_EQ(0, RUN(insns, ctx));
	EXPECT_EQ(0x0007050601020304ULL, ctx[1]);
	EXPECT_EQ((uint64_t)-2, ctx[2]);
	EXPECT_EQ(0x01020304U, *(uint32_t *)(self->a.base + PG + 248));
}

TEST_F(prog, atomics_on_arena_memory)
{
	uint64_t *cell = (uint64_t *)(self->a.base + 3 * PG);
	uint64_t ctx[4] = { ptr_u64(cell) };
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_MOV64_IMM(3, 5),
		I_ATOMIC(BPF_DW, BPF_ADD, 2, 3, 0),			/* cell[0] += 5 */
		I_MOV64_IMM(3, 7),
		I_ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 2, 3, 0),		/* r3 = old, += 7 */
		I_STX(BPF_DW, 6, 3, 8),
		I_MOV64_IMM(4, 100),
		I_ATOMIC(BPF_W, BPF_XCHG, 2, 4, 8),			/* cell[1] lo32 */
		I_MOV64_IMM(0, 100),
		I_MOV64_IMM(5, 42),
		I_ATOMIC(BPF_DW, BPF_CMPXCHG, 2, 5, 8),			/* 64-bit: differs */
		I_STX(BPF_DW, 6, 0, 16),
		I_MOV64_IMM(0, 0),
		I_ATOMIC(BPF_DW, BPF_OR, 2, 3, 16),			/* cell[2] |= r3 */
		I_EXIT(),
	};

	cell[0] = 10;
	cell[1] = 1ULL << 40 | 3;
	cell[2] = 0x100;
	ASSERT_EQ(0, RUN(insns, ctx));
	EXPECT_EQ(22, cell[0]);
	EXPECT_EQ(15, ctx[1]);		/* fetch-add returned 10 + 5 */
	EXPECT_EQ(1ULL << 40 | 100, cell[1]);
	EXPECT_EQ(1ULL << 40 | 100, ctx[2]);	/* cmpxchg failed: r0 = old */
	EXPECT_EQ(0x10f, cell[2]);	/* |= the fetched 15 */
}

/* Upstream (x86): a faulting atomic is skipped and leaves every register as it was. */
TEST_F(prog, atomics_on_unpopulated_pages_are_skipped)
{
	uint64_t ctx[4] = { ptr_u64(self->a.base + 11 * PG) };
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_MOV64_IMM(3, 5),
		I_ATOMIC(BPF_DW, BPF_ADD, 2, 3, 0),
		I_MOV64_IMM(3, 7),
		I_ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 2, 3, 8),
		I_STX(BPF_DW, 6, 3, 8),
		I_MOV64_IMM(4, 9),
		I_ATOMIC(BPF_W, BPF_XCHG, 2, 4, 16),
		I_STX(BPF_DW, 6, 4, 16),
		I_MOV64_IMM(0, 11),
		I_MOV64_IMM(5, 42),
		I_ATOMIC(BPF_DW, BPF_CMPXCHG, 2, 5, 24),
		I_STX(BPF_DW, 6, 0, 24),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};

	ASSERT_EQ(0, RUN(insns, ctx));
	EXPECT_EQ(7, ctx[1]);
	EXPECT_EQ(9, ctx[2]);
	EXPECT_EQ(11, ctx[3]);
	/* Nothing was written: the page user space now faults in is zero. */
	EXPECT_EQ(0, *(uint64_t *)(self->a.base + 11 * PG));
	EXPECT_EQ(0, *(uint64_t *)(self->a.base + 11 * PG + 24));
}

TEST_F(prog, cast_user_gives_user_addresses_and_keeps_null)
{
	uint64_t ctx[3] = { ptr_u64(self->a.base + PG + 40) };
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_CAST_USER(3, 2),
		I_STX(BPF_DW, 6, 3, 8),
		I_MOV64_IMM(4, 0),
		I_CAST_USER(4, 4),
		I_STX(BPF_DW, 6, 4, 16),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};

	ctx[2] = 77;
	ASSERT_EQ(0, RUN(insns, ctx));
	EXPECT_EQ(ptr_u64(self->a.base + PG + 40), ctx[1]);
	EXPECT_EQ(0, ctx[2]);
}

/* A bounded loop whose back-edge jumps over lowered instructions. */
TEST_F(prog, loops_and_subprograms_see_arena_pointers)
{
	uint64_t *v = (uint64_t *)(self->a.base + 2 * PG);
	uint64_t ctx[2] = { ptr_u64(v) };
	struct bpf_insn insns[] = {
		/* 0 */ I_MOV64_REG(6, 1),
		/* 1 */ I_LD_MAP_FD(1, self->a.fd),
		/* 3 */ I_LDX(BPF_DW, 1, 6, 0),
		/* 4 */ I_CAST_KERN(1, 1),
		/* 5 */ I_CALL_REL(3),			/* r0 = sum(r1) */
		/* 6 */ I_STX(BPF_DW, 6, 0, 8),
		/* 7 */ I_MOV64_IMM(0, 0),
		/* 8 */ I_EXIT(),
		/* 9: sum */ I_MOV64_IMM(0, 0),
		/* 10 */ I_MOV64_IMM(2, 0),
		/* 11 */ I_LDX(BPF_DW, 3, 1, 0),
		/* 12 */ I_ALU64_REG(BPF_ADD, 0, 3),
		/* 13 */ I_ALU64_IMM(BPF_ADD, 1, 8),
		/* 14 */ I_ALU64_IMM(BPF_ADD, 2, 1),
		/* 15 */ I_JMP_IMM(BPF_JLT, 2, 16, -5),
		/* 16 */ I_EXIT(),
	};
	unsigned int i;

	for (i = 0; i < 16; i++)
		v[i] = i * i;
	ASSERT_EQ(0, RUN(insns, ctx));
	EXPECT_EQ(1240, ctx[1]);
}

/*
 * A global function whose parameter is tagged "arg:arena" (upstream's
 * __arg_arena, 6.9+): callers pass an arena pointer or a scalar, the callee
 * starts with a scalar and casts it itself.  Hand-written BTF:
 * [1] int, [2] int *, [3] int (int *p), [4] FUNC sub global, [5] void *,
 * [6] int (void *ctx), [7] FUNC main global, [8] DECL_TAG "arg:arena" on sub arg 0.
 */
static const char arg_arena_strs[] = "\0int\0p\0sub\0ctx\0main\0arg:arena";
#define BTF_T(name, kind, vlen, st) (name), ((kind) << 24 | (vlen)), (st)

static int load_arg_arena_btf(char *log, size_t log_size)
{
	uint32_t types[] = {
		BTF_T(1, 1 /* INT */, 0, 4), (1 << 24) | 32,		/* [1] int */
		BTF_T(0, 2 /* PTR */, 0, 1),				/* [2] int * */
		BTF_T(0, 13 /* FUNC_PROTO */, 1, 1), 5, 2,		/* [3] int (int *p) */
		BTF_T(7, 12 /* FUNC */, 1 /* global */, 3),		/* [4] sub */
		BTF_T(0, 2, 0, 0),					/* [5] void * */
		BTF_T(0, 13, 1, 1), 11, 5,				/* [6] int (void *ctx) */
		BTF_T(15, 12, 1, 6),					/* [7] main */
		BTF_T(20, 17 /* DECL_TAG */, 0, 4), 0,			/* [8] arg:arena, arg 0 */
	};
	struct btf_header hdr = {
		.magic = 0xeB9F, .version = 1, .hdr_len = sizeof(hdr),
		.type_off = 0, .type_len = sizeof(types),
		.str_off = sizeof(types), .str_len = sizeof(arg_arena_strs),
	};
	static uint8_t blob[sizeof(hdr) + sizeof(types) + sizeof(arg_arena_strs)];
	union bpf_attr attr;
	long fd;

	memcpy(blob, &hdr, sizeof(hdr));
	memcpy(blob + sizeof(hdr), types, sizeof(types));
	memcpy(blob + sizeof(hdr) + sizeof(types), arg_arena_strs, sizeof(arg_arena_strs));
	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(blob);
	attr.btf_size = sizeof(blob);
	attr.btf_log_buf = ptr_u64(log);
	attr.btf_log_size = log_size;
	attr.btf_log_level = 1;
	fd = bpf_sys(BPF_BTF_LOAD, &attr);
	return fd < 0 ? -errno : (int)fd;
}

TEST_F(prog, global_function_with_arg_arena_parameter)
{
	uint32_t *v = (uint32_t *)(self->a.base + PG + 512);
	uint64_t ctx[2] = { ptr_u64(v) };
	struct bpf_insn insns[] = {
		/* 0: main */ I_MOV64_REG(6, 1),
		/* 1 */ I_LD_MAP_FD(1, self->a.fd),
		/* 3 */ I_LDX(BPF_DW, 1, 6, 0),		/* a user address: a scalar */
		/* 4 */ I_CALL_REL(3),
		/* 5 */ I_STX(BPF_DW, 6, 0, 8),
		/* 6 */ I_MOV64_IMM(0, 0),
		/* 7 */ I_EXIT(),
		/* 8: sub */ I_CAST_KERN(1, 1),
		/* 9 */ I_LDX(BPF_W, 0, 1, 0),
		/* 10 */ I_EXIT(),
	};
	struct bpf_func_info finfo[] = { { 0, 7 }, { 8, 4 } };
	union bpf_attr attr;
	int btf_fd, fd;

	btf_fd = load_arg_arena_btf(vlog, LOG_SIZE);
	ASSERT_LE(0, btf_fd) TH_LOG("BTF: %s", vlog);
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = ARRAY_SIZE(insns);
	attr.license = ptr_u64("GPL");
	attr.prog_btf_fd = btf_fd;
	attr.func_info = ptr_u64(finfo);
	attr.func_info_cnt = ARRAY_SIZE(finfo);
	attr.func_info_rec_size = sizeof(finfo[0]);
	attr.log_buf = ptr_u64(vlog);
	attr.log_size = LOG_SIZE;
	attr.log_level = 1;
	vlog[0] = 0;
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	ASSERT_LE(0, fd) TH_LOG("%s", vlog);
	*v = 0x5eed;
	EXPECT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(0x5eed, ctx[1]);
	close(fd);
	close(btf_fd);
}

/*
 * Tail calls between arena programs (non-sleepable: sleepable programs cannot
 * use a prog array), with arena addresses from arena globals (ld_imm64 of the
 * arena map's value): A stores 0xa, tail-calls B, which stores 0xb.
 */
TEST_F(prog, tail_call_between_arena_programs)
{
	struct bpf_insn b_insns[] = {
		I_LD_MAP_VALUE(2, self->a.fd, 64),
		I_CAST_KERN(2, 2),
		I_ST(BPF_W, 2, 0, 0xb),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	union bpf_attr attr;
	uint8_t data[64] = { 0 };
	int pa, a_fd, b_fd, key = 0;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_PROG_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	pa = bpf_sys(BPF_MAP_CREATE, &attr);
	ASSERT_LE(0, pa);
	b_fd = load_prog_flags(BPF_PROG_TYPE_SOCKET_FILTER, b_insns, ARRAY_SIZE(b_insns), 0,
			       vlog, LOG_SIZE);
	ASSERT_LE(0, b_fd) TH_LOG("%s", vlog);
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = pa;
	attr.key = ptr_u64(&key);
	attr.value = ptr_u64(&b_fd);
	ASSERT_EQ(0, bpf_sys(BPF_MAP_UPDATE_ELEM, &attr));
	{
		struct bpf_insn a_insns[] = {
			I_MOV64_REG(6, 1),
			I_LD_MAP_VALUE(2, self->a.fd, 0),
			I_CAST_KERN(2, 2),
			I_ST(BPF_W, 2, 0, 0xa),
			I_MOV64_REG(1, 6),
			I_LD_MAP_FD(2, pa),
			I_MOV64_IMM(3, 0),
			I_CALL_HELPER(BPF_FUNC_tail_call),
			I_MOV64_IMM(0, 1),
			I_EXIT(),
		};

		a_fd = load_prog_flags(BPF_PROG_TYPE_SOCKET_FILTER, a_insns, ARRAY_SIZE(a_insns),
				       0, vlog, LOG_SIZE);
	}
	ASSERT_LE(0, a_fd) TH_LOG("%s", vlog);
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = a_fd;
	attr.test.data_in = ptr_u64(data);
	attr.test.data_size_in = sizeof(data);
	ASSERT_EQ(0, bpf_sys(BPF_PROG_TEST_RUN, &attr));
	EXPECT_EQ(0, attr.test.retval);		/* B's return: the tail call happened */
	EXPECT_EQ(0xa, *(uint32_t *)self->a.base);
	EXPECT_EQ(0xb, *(uint32_t *)(self->a.base + 64));
	close(a_fd);
	close(b_fd);
	close(pa);
}

TEST_F(prog, refused_when_jit_is_off)
{
	struct bpf_insn insns[] = ROUND_TRIP_PROG(self->a.fd);
	char old[8] = "1";
	int fd;

	read_line(JIT_ENABLE, old, sizeof(old));
	if (!write_str(JIT_ENABLE, "0"))
		SKIP(return, "cannot turn the JIT off (CONFIG_BPF_JIT_ALWAYS_ON)");
	fd = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE);
	write_str(JIT_ENABLE, old);
	EXPECT_EQ(-EOPNOTSUPP, fd);
	EXPECT_NE(NULL, strstr(vlog, "JIT is required to use arena"));
}

TEST_F(prog, two_arenas_in_one_program_are_refused)
{
	struct arena b;
	int fd;

	ASSERT_EQ(0, arena_open(&b, 4, 0, true));
	{
		struct bpf_insn insns[] = {
			I_LD_MAP_FD(1, self->a.fd),
			I_LD_MAP_FD(2, b.fd),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};

		fd = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE);
	}
	arena_close(&b);
	EXPECT_EQ(-EBUSY, fd);
	EXPECT_NE(NULL, strstr(vlog, "Only one arena per program"));
}

TEST(cast_without_an_arena_is_refused)
{
	struct bpf_insn insns[] = {
		I_MOV64_IMM(1, 0),
		I_CAST_KERN(1, 1),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	int fd = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE);

	EXPECT_EQ(-EINVAL, fd);
	EXPECT_NE(NULL, strstr(vlog, "addr_space_cast insn can only be used in a program that has an associated arena"))
		TH_LOG("%s", vlog);
}

/*
 * The module's fast path (module/prog_scan.c, may_use_arena()) reads opcode
 * bytes eight at a time and hands a program with none of the four opcodes it
 * looks for back to the stock path.  Wherever the one arena instruction sits
 * - each position modulo eight, in the eight-wide part or the tail, directly
 * before the exit or up to 9 instructions before it, directly after another
 * ld_imm64 or not - the program must be seen: a cast gets upstream's refusal
 * (6.1's own verifier would call it a reserved field), an arena ld_imm64
 * loads and runs.  The fillers are `r3 = imm` (skipped eight at a time) or
 * `r2 = r1`, the opcode of a cast with off 0 (each one looked at closely).
 * Each program ends where a page ends, and the next page is never touched
 * by the test: a read past the program's last instruction would make it
 * resident.
 */
#define SCAN_LEADS 18
#define SCAN_TRAILS 10
#define SCAN_MAX (1 + SCAN_LEADS + 2 + 2 + SCAN_TRAILS + 1)

static unsigned int fill(struct bpf_insn *p, unsigned int n, bool moves)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = moves ? I_MOV64_REG(2, 1) : I_MOV64_IMM(3, i);
	return n;
}

/* `r0 = K; fillers; [r4 = 0x1234 (ld_imm64)]; X; fillers; exit`, X a cast or the arena. */
static unsigned int scan_case(struct bpf_insn *p, bool cast, int map_fd, bool ld_before,
			      unsigned int lead, unsigned int trail, bool mv)
{
	struct bpf_insn ld[] = { I_LD_MAP_FD(1, map_fd) }, k[] = { I_LD_IMM64(4, 0x1234) };
	unsigned int n = 0;

	p[n++] = I_MOV64_IMM(0, cast ? 0 : 7);
	n += fill(p + n, lead, mv);
	if (ld_before) {
		p[n++] = k[0];
		p[n++] = k[1];
	}
	if (cast) {
		p[n++] = I_MOV64_IMM(1, 0);
		p[n++] = I_CAST_KERN(1, 1);
	} else {
		p[n++] = ld[0];
		p[n++] = ld[1];
	}
	n += fill(p + n, trail, mv);
	p[n++] = I_EXIT();
	return n;
}

TEST_F_TIMEOUT(prog, arena_instruction_found_at_every_position, 300)
{
	struct bpf_insn p[SCAN_MAX], *at;
	unsigned int lead, trail, n, k, c;
	unsigned char resident;
	uint64_t ctx[1];
	bool mv, ldb, cast;
	char *pages;
	int fd;

	pages = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	/* EINVAL: no THP (PREEMPT_RT) */
	ASSERT_TRUE(!madvise(pages, 2 * PG, MADV_NOHUGEPAGE) || errno == EINVAL);
	for (k = 0; k < 8 * SCAN_LEADS * SCAN_TRAILS; k++) {
		c = k / (SCAN_LEADS * SCAN_TRAILS);
		cast = c & 1;
		mv = c & 2;
		ldb = c & 4;
		lead = k / SCAN_TRAILS % SCAN_LEADS;
		trail = k % SCAN_TRAILS;
		n = scan_case(p, cast, self->a.fd, ldb, lead, trail, mv);
		at = (struct bpf_insn *)(pages + PG) - n;
		memcpy(at, p, n * sizeof(*p));
		fd = load_syscall_prog(at, n, vlog, LOG_SIZE);
		if (cast) {
			EXPECT_EQ(-EINVAL, fd)
				TH_LOG("cast after %u, before %u, moves %d, ld_imm64 before %d",
				       lead, trail, mv, ldb);
			EXPECT_NE(NULL, strstr(vlog, "addr_space_cast insn can only be used in a program that has an associated arena"))
				TH_LOG("cast after %u, before %u, moves %d, ld_imm64 before %d: %s",
				       lead, trail, mv, ldb, vlog);
		} else {
			ASSERT_LE(0, fd)
				TH_LOG("map after %u, before %u, moves %d, ld_imm64 before %d: %s",
				       lead, trail, mv, ldb, vlog);
			EXPECT_EQ(7, run_syscall_prog(fd, ctx, sizeof(ctx)));
		}
		if (fd >= 0)
			close(fd);
		ASSERT_EQ(0, mincore(pages + PG, PG, &resident));
		ASSERT_EQ(0, resident & 1)
			TH_LOG("the load read past the program's end (%s after %u, before %u)",
			       cast ? "cast" : "map", lead, trail);
	}
	munmap(pages, 2 * PG);
}

TEST_F(prog, rnd_hi32_test_flag_is_refused_by_the_module)
{
	struct bpf_insn insns[] = ROUND_TRIP_PROG(self->a.fd);
	int fd;

	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: BPF_F_TEST_RND_HI32 works there");
	fd = load_prog_flags(BPF_PROG_TYPE_SYSCALL, insns, ARRAY_SIZE(insns),
			     BPF_F_SLEEPABLE | BPF_F_TEST_RND_HI32, vlog, LOG_SIZE);
	EXPECT_EQ(-EINVAL, fd);
	EXPECT_NE(NULL, strstr(vlog, "BPF_F_TEST_RND_HI32 is not supported"));
}

TEST(unmapped_arena_is_refused)
{
	struct arena a;
	int fd;

	ASSERT_EQ(0, arena_open(&a, 4, 0, false));
	{
		struct bpf_insn insns[] = {
			I_LD_MAP_FD(1, a.fd),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};

		fd = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE);
	}
	arena_close(&a);
	EXPECT_EQ(-EINVAL, fd);
	EXPECT_NE(NULL, strstr(vlog, "arena's user address must be set via map_extra or mmap()"));
	/* The module names the usual cause: libbpf 1.1 without libbpfarena. */
	if (!kernel_has_native_arena())
		EXPECT_NE(NULL, strstr(vlog, "libbpf < 1.4 neither maps an arena nor sets its "
				       "address: call bpf_arena_object_prepare(obj)"))
			TH_LOG("%s", vlog);
}

TEST_F(prog, loaders_without_cap_perfmon_are_refused)
{
	struct bpf_insn insns[] = ROUND_TRIP_PROG(self->a.fd);
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct data[2];
		int fd;

		if (syscall(SYS_capget, &hdr, data))
			_exit(2);
		/* Keep CAP_BPF; drop CAP_PERFMON and CAP_SYS_ADMIN (which implies it). */
		data[CAP_PERFMON / 32].effective &= ~(1U << (CAP_PERFMON % 32));
		data[CAP_SYS_ADMIN / 32].effective &= ~(1U << (CAP_SYS_ADMIN % 32));
		if (syscall(SYS_capset, &hdr, data))
			_exit(2);
		fd = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE);
		_exit(fd == -EPERM &&
		      strstr(vlog, "CAP_BPF and CAP_PERFMON are required to use arena") ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(prog, program_holds_its_arena)
{
	struct bpf_insn insns[] = ROUND_TRIP_PROG(self->a.fd);
	struct bpf_prog_info info;
	struct bpf_map_info minfo;
	union bpf_attr attr;
	uint32_t map_ids[4];
	int fd;

	fd = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE);
	ASSERT_LE(0, fd) TH_LOG("%s", vlog);
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = ARRAY_SIZE(map_ids);
	info.map_ids = ptr_u64(map_ids);
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	ASSERT_EQ(0, bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr));
	memset(&minfo, 0, sizeof(minfo));
	attr.info.bpf_fd = self->a.fd;
	attr.info.info_len = sizeof(minfo);
	attr.info.info = ptr_u64(&minfo);
	ASSERT_EQ(0, bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr));
	ASSERT_EQ(1, info.nr_map_ids);
	EXPECT_EQ(minfo.id, map_ids[0]);
	EXPECT_TRUE(info.jited_prog_len > 0);
	close(fd);
}

/* The dumps the kernel gives of a program with no arena in it. */
static int dump_prog(const struct bpf_insn *insns, unsigned int cnt, void *xl, uint32_t *xl_len,
		     void *jit, uint32_t *jit_len)
{
	struct bpf_prog_info info;
	union bpf_attr attr;
	int fd = load_prog_flags(BPF_PROG_TYPE_SOCKET_FILTER, insns, cnt, 0, NULL, 0);

	if (fd < 0)
		return fd;
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = *xl_len;
	info.xlated_prog_insns = ptr_u64(xl);
	info.jited_prog_len = *jit_len;
	info.jited_prog_insns = ptr_u64(jit);
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
		close(fd);
		return -errno;
	}
	close(fd);
	*xl_len = info.xlated_prog_len;
	*jit_len = info.jited_prog_len;
	return 0;
}

TEST(non_arena_programs_are_byte_identical_without_the_module)
{
	/* No calls: JITed bytes are then position independent. */
	struct bpf_insn insns[] = {
		I_MOV64_IMM(0, 1),
		I_LDX(BPF_W, 2, 1, 0),
		I_JMP_IMM(BPF_JEQ, 2, 0, 1),
		I_ALU64_IMM(BPF_ADD, 0, 41),
		I_LD_IMM64(3, 0x123456789abcdefULL),
		I_ALU64_REG(BPF_XOR, 0, 3),
		I_EXIT(),
	};
	static uint8_t xl[2][4096], jit[2][4096];
	uint32_t xl_len[2] = { 4096, 4096 }, jit_len[2] = { 4096, 4096 };

	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel: no module to compare with");
	ASSERT_TRUE(kmod_is_loaded());
	ASSERT_EQ(0, dump_prog(insns, ARRAY_SIZE(insns), xl[0], &xl_len[0], jit[0], &jit_len[0]));
	/* The earlier tests' arenas are freed through RCU and work queues. */
	if (kmod_unload_when_idle(10000))
		SKIP(return, "the module is still in use after 10 s (an arena is alive elsewhere)");
	ASSERT_EQ(0, dump_prog(insns, ARRAY_SIZE(insns), xl[1], &xl_len[1], jit[1], &jit_len[1]));
	ASSERT_EQ(0, kmod_load());
	ASSERT_EQ(xl_len[0], xl_len[1]);
	ASSERT_EQ(jit_len[0], jit_len[1]);
	EXPECT_EQ(0, memcmp(xl[0], xl[1], xl_len[0]));
	EXPECT_EQ(0, memcmp(jit[0], jit[1], jit_len[0]));
}

TEST_HARNESS_MAIN

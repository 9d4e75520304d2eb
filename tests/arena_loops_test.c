// SPDX-License-Identifier: GPL-2.0
/*
 * may_goto (can_loop / cond_break) loops in arena programs (docs/LOOPS.md).
 * Raw instructions, so each test says exactly which loop shape it exercises.
 * The same assertions run on 6.1 with the module (the loop pass outlines the
 * loop into a global function driven by bpf_loop) and on 6.12 (may_goto is
 * native): a 100k-node arena list walk with the right sum, budget exhaustion
 * through the may_goto path, the adversarial loops of the issue (rejected on
 * both kernels, or harmless by value), and on 6.1 the refusal naming what the
 * pass does not handle (6.12 runs the same program).
 *
 * Programs are sleepable SYSCALL programs run with BPF_PROG_TEST_RUN; the
 * context is a u64 array: ctx[0] input, results written back into it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/btf.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PG		4096
#define LOG_SIZE	(1 << 20)
#define NODES		100000
#define ARENA_PAGES	((NODES * 16 + PG - 1) / PG + 1)
#define MAX_LOOPS	(1u << 23)	/* upstream's may_goto budget, BPF_MAX_LOOPS */

static char vlog[LOG_SIZE];

FIXTURE(loops) {
	int afd;
	char *base;
	size_t size;
};

FIXTURE_SETUP(loops)
{
	struct arena a;
	int err = arena_open(&a, ARENA_PAGES, 0, true);

	ASSERT_EQ(0, err) TH_LOG("arena create/mmap: %s", strerror(-err));
	self->afd = a.fd;
	self->size = a.size;
	self->base = a.base;
}

FIXTURE_TEARDOWN(loops)
{
	munmap(self->base, self->size);
	close(self->afd);
}

static int load(const struct bpf_insn *insns, unsigned int cnt)
{
	return load_syscall_prog(insns, cnt, vlog, LOG_SIZE);
}

/* The verifier log's reason for a rejection: its last line before the statistics. */
static const char *last_line(void)
{
	size_t n = strlen(vlog);
	char *line;

	for (;;) {
		while (n && vlog[n - 1] == '\n')
			vlog[--n] = 0;
		while (n && vlog[n - 1] != '\n')
			n--;
		line = vlog + n;
		if (!n || (strncmp(line, "processed ", 10) && strncmp(line, "verification time", 17) &&
			   strncmp(line, "stack depth", 11)))
			return line;
		*line = 0;
	}
}

/*
 * A rejection must come from the stock verifier's checks of the program (on
 * 6.1: of its translation), not from the module refusing the loop shape.
 */
#define REJECTED_BY_VERIFIER(fd, why)							do {											EXPECT_GT(0, fd) TH_LOG(why);							EXPECT_EQ(NULL, strstr(vlog, "bpf_arena:")) TH_LOG("%s", vlog);			TH_LOG("rejected: %s", last_line());					} while (0)

#define LOAD_OK(insns)								\
	({									\
		int __fd = load(insns, ARRAY_SIZE(insns));			\
		if (__fd < 0)							\
			TH_LOG("load: %s\n%s", strerror(-__fd), vlog);		\
		ASSERT_LE(0, __fd);						\
		__fd;								\
	})

/*
 * while (n && can_loop) { sum += n->value; cnt++; n = n->next; }
 * ctx[0] = head (user address); ctx[1] = sum; ctx[2] = count.
 */
#define LIST_WALK_PROG(afd)						\
	{								\
		I_MOV64_REG(9, 1),		/* 0: ctx */		\
		I_LD_MAP_FD(1, afd),		/* 1-2 */		\
		I_LDX(BPF_DW, 2, 9, 0),		/* 3 */			\
		I_CAST_KERN(2, 2),		/* 4 */			\
		I_MOV64_IMM(6, 0),		/* 5 */			\
		I_MOV64_IMM(7, 0),		/* 6 */			\
		I_JMP_IMM(BPF_JEQ, 2, 0, 7),	/* 7: head -> 15 */	\
		I_LDX(BPF_DW, 3, 2, 8),		/* 8 */			\
		I_ALU64_REG(BPF_ADD, 6, 3),	/* 9 */			\
		I_LDX(BPF_DW, 2, 2, 0),		/* 10 */		\
		I_CAST_KERN(2, 2),		/* 11 */		\
		I_ALU64_IMM(BPF_ADD, 7, 1),	/* 12 */		\
		I_MAY_GOTO(1),			/* 13 -> 15 */		\
		I_JA(-8),			/* 14 -> 7 */		\
		I_STX(BPF_DW, 9, 6, 8),		/* 15 */		\
		I_STX(BPF_DW, 9, 7, 16),	/* 16 */		\
		I_MOV64_IMM(0, 0),					\
		I_EXIT(),						\
	}

TEST_F(loops, can_loop_list_walk_100k_nodes)
{
	struct bpf_insn insns[] = LIST_WALK_PROG(self->afd);
	uint64_t (*node)[2] = (void *)self->base, sum = 0, ctx[3];
	long r;
	int fd, i;

	for (i = 0; i < NODES; i++) {
		node[i][0] = i + 1 < NODES ? ptr_u64(node[i + 1]) : 0;
		node[i][1] = (uint64_t)i * 7 + 3;
		sum += (uint64_t)i * 7 + 3;
	}
	fd = LOAD_OK(insns);
	ctx[0] = ptr_u64(node[0]);
	ctx[1] = ctx[2] = 0;
	r = run_syscall_prog(fd, ctx, sizeof(ctx));
	close(fd);
	ASSERT_EQ(0, r);
	EXPECT_EQ(NODES, ctx[2]);
	EXPECT_EQ(sum, ctx[1]);
}

/*
 * The same walk loaded the way libbpf loads a compiled object: with program
 * BTF (a FUNC for the program), func_info and a line_info record per insn.
 * On 6.1 the pass extends that BTF with its functions and moves the lines.
 */
static int load_with_btf(const struct bpf_insn *insns, unsigned int cnt)
{
	static const char strs[] = "\0int\0walk\0loops.c\0line";
	struct {
		struct btf_header h;
		__u32 t[10];
		char s[sizeof(strs)];
	} __attribute__((packed)) blob = {
		.h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(struct btf_header),
		       .type_len = 40, .str_off = 40, .str_len = sizeof(strs) },
		.t = { 1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,	/* [1] int */
		       0, BTF_KIND_FUNC_PROTO << 24, 1,				/* [2] int (void) */
		       5, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 2 },		/* [3] walk */
	};
	struct bpf_func_info fi = { 0, 3 };
	struct bpf_line_info li[64];
	union bpf_attr attr;
	unsigned int i, n = 0;
	int bfd, fd;

	memcpy(blob.s, strs, sizeof(strs));
	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(&blob);
	attr.btf_size = sizeof(blob);
	bfd = bpf_sys(BPF_BTF_LOAD, &attr);
	if (bfd < 0)
		return -errno;
	for (i = 0; i < cnt && n < 64; i++) {
		li[n++] = (struct bpf_line_info){ .insn_off = i, .file_name_off = 10,
						  .line_off = 18, .line_col = (i + 1) << 10 };
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW))
			i++;
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = cnt;
	attr.license = ptr_u64("GPL");
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.log_buf = ptr_u64(vlog);
	attr.log_size = LOG_SIZE;
	attr.log_level = 1;
	vlog[0] = 0;
	attr.prog_btf_fd = bfd;
	attr.func_info = ptr_u64(&fi);
	attr.func_info_rec_size = sizeof(fi);
	attr.func_info_cnt = 1;
	attr.line_info = ptr_u64(li);
	attr.line_info_rec_size = sizeof(li[0]);
	attr.line_info_cnt = n;
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	fd = fd < 0 ? -errno : fd;
	close(bfd);
	return fd;
}

TEST_F(loops, list_walk_with_program_btf_and_line_info)
{
	struct bpf_insn insns[] = LIST_WALK_PROG(self->afd);
	uint64_t (*node)[2] = (void *)self->base, sum = 0, ctx[3];
	struct bpf_prog_info info;
	union bpf_attr attr;
	int fd, i;

	for (i = 0; i < 1000; i++) {
		node[i][0] = i + 1 < 1000 ? ptr_u64(node[i + 1]) : 0;
		node[i][1] = (uint64_t)i + 1;
		sum += (uint64_t)i + 1;
	}
	fd = load_with_btf(insns, ARRAY_SIZE(insns));
	ASSERT_LE(0, fd) TH_LOG("load: %s\n%s", strerror(-fd), vlog);
	ctx[0] = ptr_u64(node[0]);
	ctx[1] = ctx[2] = 0;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(1000, ctx[2]);
	EXPECT_EQ(sum, ctx[1]);
	/* The program keeps BTF and line info (3 functions on 6.1, 1 on 6.12). */
	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	ASSERT_EQ(0, bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr));
	EXPECT_NE(0, info.btf_id);
	EXPECT_EQ(kernel_has_native_arena() ? 1 : 3, info.nr_func_info);
	EXPECT_LT(0, info.nr_line_info);
	close(fd);
}

/* An empty list and a one-node list take the loop's other exits. */
TEST_F(loops, list_walk_short_lists)
{
	struct bpf_insn insns[] = LIST_WALK_PROG(self->afd);
	uint64_t (*node)[2] = (void *)self->base, ctx[3] = { 0, 5, 5 };
	int fd = LOAD_OK(insns);

	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(0, ctx[1]);
	EXPECT_EQ(0, ctx[2]);
	node[0][0] = 0;
	node[0][1] = 41;
	ctx[0] = ptr_u64(node[0]);
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(41, ctx[1]);
	EXPECT_EQ(1, ctx[2]);
	close(fd);
}

/*
 * A loop that only ends through may_goto: it runs exactly the budget, then
 * leaves through the may_goto target (ctx[1] = rounds, r0 = 2 from there).
 */
TEST_F(loops, budget_exhaustion_exits_through_may_goto)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(9, 1),		/* 0 */
		I_LD_MAP_FD(1, self->afd),	/* 1-2 */
		I_MOV64_IMM(6, 0),		/* 3 */
		I_MAY_GOTO(2),			/* 4 -> 7 */
		I_ALU64_IMM(BPF_ADD, 6, 1),	/* 5 */
		I_JA(-3),			/* 6 -> 4 */
		I_STX(BPF_DW, 9, 6, 8),		/* 7 */
		I_MOV64_IMM(0, 2),
		I_EXIT(),
	};
	uint64_t ctx[2] = { 0, 0 };
	int fd = LOAD_OK(insns);

	ASSERT_EQ(2, run_syscall_prog(fd, ctx, sizeof(ctx)));
	close(fd);
	EXPECT_EQ(MAX_LOOPS, ctx[1]);
}

/*
 * cond_break with two more exits (one an `exit` inside the loop), carrying an
 * arena pointer: for (i = 0; ; i++) { if (i == stop) return 77;
 * if (i >= lim) break; *p++ = i; cond_break; }   ctx[0] = lim | stop << 32.
 */
TEST_F(loops, multiple_exits_carry_an_arena_pointer)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(9, 1),			/* 0 */
		I_LD_MAP_FD(1, self->afd),		/* 1-2 */
		I_LDX(BPF_W, 7, 9, 0),			/* 3: lim */
		I_LDX(BPF_W, 8, 9, 4),			/* 4: stop */
		I_LDX(BPF_DW, 2, 9, 8),			/* 5: p (user address) */
		I_CAST_KERN(2, 2),			/* 6 */
		I_MOV64_IMM(6, 0),			/* 7 */
		I_JMP_REG(BPF_JNE, 6, 8, 2),		/* 8: head -> 11 */
		I_MOV64_IMM(0, 77),			/* 9 */
		I_EXIT(),				/* 10 */
		I_JMP_REG(BPF_JGE, 6, 7, 5),		/* 11 -> 17 */
		I_STX(BPF_DW, 2, 6, 0),			/* 12 */
		I_ALU64_IMM(BPF_ADD, 2, 8),		/* 13 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 14 */
		I_MAY_GOTO(1),				/* 15 -> 17 */
		I_JA(-9),				/* 16 -> 8 */
		I_STX(BPF_DW, 9, 6, 16),		/* 17 */
		I_MOV64_IMM(0, 1),
		I_EXIT(),
	};
	uint64_t *cells = (void *)(self->base + PG), ctx[3];
	int fd = LOAD_OK(insns), i;

	memset(cells, 0xff, 64 * 8);
	ctx[0] = 10 | 1000ull << 32;
	ctx[1] = ptr_u64(cells);
	ctx[2] = 0;
	ASSERT_EQ(1, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(10, ctx[2]);
	for (i = 0; i < 10; i++)
		EXPECT_EQ((uint64_t)i, cells[i]);
	EXPECT_EQ(~0ull, cells[10]);
	ctx[0] = 10 | 4ull << 32;
	ASSERT_EQ(77, run_syscall_prog(fd, ctx, sizeof(ctx)));
	close(fd);
}

/*
 * A loop calling a static subprogram that reads arena memory: the call is
 * relocated into the outlined body.  ctx[2] = sum of 2 * cells[i], i < 50.
 */
TEST_F(loops, loop_calling_a_subprogram)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(9, 1),			/* 0 */
		I_LD_MAP_FD(1, self->afd),		/* 1-2 */
		I_LDX(BPF_DW, 7, 9, 8),			/* 3: cells (user address) */
		I_CAST_KERN(7, 7),			/* 4 */
		I_MOV64_IMM(6, 0),			/* 5 */
		I_MOV64_IMM(8, 0),			/* 6 */
		I_JMP_IMM(BPF_JGE, 6, 50, 7),		/* 7: head -> 15 */
		I_MOV64_REG(1, 7),			/* 8 */
		I_CALL_REL(9),				/* 9 -> 19 */
		I_ALU64_REG(BPF_ADD, 8, 0),		/* 10 */
		I_ALU64_IMM(BPF_ADD, 7, 8),		/* 11 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 12 */
		I_MAY_GOTO(1),				/* 13 -> 15 */
		I_JA(-8),				/* 14 -> 7 */
		I_STX(BPF_DW, 9, 8, 16),		/* 15 */
		I_STX(BPF_DW, 9, 6, 8),			/* 16 */
		I_MOV64_IMM(0, 0),			/* 17 */
		I_EXIT(),				/* 18 */
		I_LDX(BPF_DW, 0, 1, 0),			/* 19: sub: r0 = 2 * *p */
		I_ALU64_IMM(BPF_LSH, 0, 1),		/* 20 */
		I_EXIT(),				/* 21 */
	};
	uint64_t *cells = (void *)(self->base + 2 * PG), ctx[3];
	int fd, i;

	for (i = 0; i < 50; i++)
		cells[i] = i + 1;
	fd = LOAD_OK(insns);
	ctx[0] = 0;
	ctx[1] = ptr_u64(cells);
	ctx[2] = 0;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	close(fd);
	EXPECT_EQ(50, ctx[1]);
	EXPECT_EQ(2550, ctx[2]);
}

/* ---- adversarial loops: rejected, or harmless by value ---- */

/*
 * The counter is 0 in iteration 1, so "i < 8" would look always true there:
 * value[i] = 1 with i up to 999 must be rejected (64-byte value).
 */
TEST_F(loops, counter_as_index_without_live_bound_is_rejected)
{
	int mfd = array_create(64, 0);
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, self->afd),		/* 0-1 */
		I_MOV64_IMM(7, 0),			/* 2 */
		I_MAY_GOTO(9),				/* 3: head -> 13 */
		I_LD_MAP_VALUE(1, mfd, 0),		/* 4-5 */
		I_MOV64_REG(2, 7),			/* 6 */
		I_ALU64_IMM(BPF_LSH, 2, 3),		/* 7 */
		I_ALU64_REG(BPF_ADD, 1, 2),		/* 8 */
		I_ST(BPF_DW, 1, 0, 1),			/* 9 */
		I_ALU64_IMM(BPF_ADD, 7, 1),		/* 10 */
		I_JMP_IMM(BPF_JLT, 7, 1000, -9),	/* 11 -> 3 */
		I_JA(0),				/* 12 */
		I_MOV64_IMM(0, 0),			/* 13 */
		I_EXIT(),
	};
	int fd;

	ASSERT_LE(0, mfd);
	fd = load(insns, ARRAY_SIZE(insns));
	REJECTED_BY_VERIFIER(fd, "an out-of-bounds index was accepted");
	if (fd >= 0)
		close(fd);
	close(mfd);
}

/* The same loop with the bound check: accepted, and it writes in bounds only. */
TEST_F(loops, counter_as_index_with_bound_runs)
{
	int mfd = array_create(64, 0);
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, self->afd),		/* 0-1 */
		I_MOV64_IMM(7, 0),			/* 2 */
		I_MAY_GOTO(9),				/* 3: head -> 13 */
		I_LD_MAP_VALUE(1, mfd, 0),		/* 4-5 */
		I_JMP_IMM(BPF_JGE, 7, 8, 6),		/* 6 -> 13 */
		I_MOV64_REG(2, 7),			/* 7 */
		I_ALU64_IMM(BPF_LSH, 2, 3),		/* 8 */
		I_ALU64_REG(BPF_ADD, 1, 2),		/* 9 */
		I_STX(BPF_DW, 1, 7, 0),			/* 10 */
		I_ALU64_IMM(BPF_ADD, 7, 1),		/* 11 */
		I_JA(-10),				/* 12 -> 3 */
		I_MOV64_REG(0, 7),			/* 13 */
		I_EXIT(),
	};
	uint64_t ctx[1] = { 0 }, val[8];
	union bpf_attr attr;
	uint32_t key = 0;
	int fd, i;

	ASSERT_LE(0, mfd);
	fd = LOAD_OK(insns);
	ASSERT_EQ(8, run_syscall_prog(fd, ctx, sizeof(ctx)));
	close(fd);
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = mfd;
	attr.key = ptr_u64(&key);
	attr.value = ptr_u64(val);
	ASSERT_EQ(0, bpf_sys(BPF_MAP_LOOKUP_ELEM, &attr));
	for (i = 0; i < 8; i++)
		EXPECT_EQ((uint64_t)i, val[i]);
	close(mfd);
}

/*
 * The same stores with the bound tested only at the bottom (clang's rotated
 * `for (i = 0; i < 8 && can_loop; i++) v[i] = i`): 6.12 keeps i's range
 * across its loop states; on 6.1 the body re-checks the bound the pass
 * computed for i at the head (0..7), so the verifier sees it too.
 */
TEST_F(loops, counter_bounded_by_the_back_edge_runs)
{
	int mfd = array_create(64, 0);
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, self->afd),		/* 0-1 */
		I_MOV64_IMM(7, 0),			/* 2 */
		I_MAY_GOTO(8),				/* 3: head -> 12 */
		I_LD_MAP_VALUE(1, mfd, 0),		/* 4-5 */
		I_MOV64_REG(2, 7),			/* 6 */
		I_ALU64_IMM(BPF_LSH, 2, 3),		/* 7 */
		I_ALU64_REG(BPF_ADD, 1, 2),		/* 8 */
		I_STX(BPF_DW, 1, 7, 0),			/* 9 */
		I_ALU64_IMM(BPF_ADD, 7, 1),		/* 10 */
		I_JMP_IMM(BPF_JLT, 7, 8, -9),		/* 11 -> 3 */
		I_MOV64_REG(0, 7),			/* 12 */
		I_EXIT(),
	};
	uint64_t ctx[1] = { 0 }, val[8];
	union bpf_attr attr;
	uint32_t key = 0;
	int fd, i;

	ASSERT_LE(0, mfd);
	fd = LOAD_OK(insns);
	ASSERT_EQ(8, run_syscall_prog(fd, ctx, sizeof(ctx)));
	close(fd);
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = mfd;
	attr.key = ptr_u64(&key);
	attr.value = ptr_u64(val);
	ASSERT_EQ(0, bpf_sys(BPF_MAP_LOOKUP_ELEM, &attr));
	for (i = 0; i < 8; i++)
		EXPECT_EQ((uint64_t)i, val[i]);
	close(mfd);
}

/* A map value pointer advanced each iteration walks off the value: rejected. */
TEST_F(loops, pointer_advanced_each_iteration_is_rejected)
{
	int mfd = array_create(64, 0);
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, self->afd),		/* 0-1 */
		I_LD_MAP_VALUE(8, mfd, 0),		/* 2-3 */
		I_MAY_GOTO(3),				/* 4: head -> 8 */
		I_ST(BPF_DW, 8, 0, 1),			/* 5 */
		I_ALU64_IMM(BPF_ADD, 8, 8),		/* 6 */
		I_JA(-4),				/* 7 -> 4 */
		I_MOV64_IMM(0, 0),			/* 8 */
		I_EXIT(),
	};
	int fd;

	ASSERT_LE(0, mfd);
	fd = load(insns, ARRAY_SIZE(insns));
	REJECTED_BY_VERIFIER(fd, "a pointer running off its map value was accepted");
	if (fd >= 0)
		close(fd);
	close(mfd);
}

/* r6 is ctx in iteration 1 and a scalar after: dereferencing it is rejected. */
TEST_F(loops, register_changing_type_is_rejected)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(2, self->afd),		/* 0-1 */
		I_MOV64_REG(6, 1),			/* 2: ctx */
		I_MAY_GOTO(3),				/* 3: head -> 7 */
		I_LDX(BPF_DW, 0, 6, 0),			/* 4 */
		I_MOV64_IMM(6, 4096),			/* 5 */
		I_JA(-4),				/* 6 -> 3 */
		I_MOV64_IMM(0, 0),			/* 7 */
		I_EXIT(),
	};
	int fd = load(insns, ARRAY_SIZE(insns));

	REJECTED_BY_VERIFIER(fd, "a scalar dereferenced as ctx was accepted");
	if (fd >= 0)
		close(fd);
}

/*
 * A body that writes the stack deep in the program's frame and near its top:
 * on 6.1 the pass mirrors both slots in the body and keeps its own slots (ctx
 * among them) below the deepest one, so ctx is still the context after the
 * loop; on 6.12 the program is ordinary.  Same value on both.
 */
TEST_F(loops, body_writing_below_the_frame)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(2, self->afd),		/* 0-1 */
		I_MOV64_REG(9, 1),			/* 2 */
		I_MOV64_IMM(6, 0),			/* 3 */
		I_MAY_GOTO(4),				/* 4: head -> 9 */
		I_ST(BPF_DW, 10, -120, 0),		/* 5 */
		I_ST(BPF_DW, 10, -8, 0),		/* 6 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 7 */
		I_JMP_IMM(BPF_JLT, 6, 3, -5),		/* 8 -> 4 */
		I_STX(BPF_DW, 9, 6, 0),			/* 9 */
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	uint64_t ctx[1] = { 0 };
	int fd = LOAD_OK(insns);

	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(3, ctx[0]);
	close(fd);
}

/* Never "unknown opcode e5": a loop shape the pass refuses (two entries) is named. */
TEST_F(loops, unhandled_shape_is_named_not_unknown_opcode)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(2, self->afd),		/* 0-1 */
		I_MOV64_IMM(6, 0),			/* 2 */
		I_JMP_IMM(BPF_JEQ, 6, 1, 2),		/* 3 -> 6: a second entry */
		I_MAY_GOTO(3),				/* 4: head -> 8 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 5 */
		I_ALU64_IMM(BPF_ADD, 6, 1),		/* 6 */
		I_JA(-4),				/* 7 -> 4 */
		I_MOV64_REG(0, 6),			/* 8 */
		I_EXIT(),
	};
	uint64_t ctx[1] = { 0 };
	int fd = load(insns, ARRAY_SIZE(insns));

	if (!kernel_has_native_arena()) {
		ASSERT_EQ(-EINVAL, fd);
		EXPECT_EQ(NULL, strstr(vlog, "unknown opcode"));
		EXPECT_NE(NULL, strstr(vlog,
			"bpf_arena: insn 3: may_goto (can_loop/cond_break) loop at insn 4 is entered at insns 6 and 4"))
			TH_LOG("log: %s", vlog);
		return;
	}
	ASSERT_LE(0, fd) TH_LOG("%s", vlog);
	ASSERT_EQ(2 * MAX_LOOPS, run_syscall_prog(fd, ctx, sizeof(ctx)));
	close(fd);
}

/*
 * Nested can_loop loops: sum of j for j < i < n.  On 6.1 the outer loop is
 * outlined first, the inner one in a second round inside the outer body.
 * ctx[0] = n, ctx[1] = the sum.
 */
TEST_F(loops, nested_loops)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(9, 1),			/* 0 */
		I_LD_MAP_FD(1, self->afd),		/* 1-2 */
		I_LDX(BPF_DW, 8, 9, 0),			/* 3 */
		I_MOV64_IMM(6, 0),			/* 4 */
		I_MOV64_IMM(7, 0),			/* 5 */
		I_MAY_GOTO(9),				/* 6: outer head -> 16 */
		I_JMP_REG(BPF_JGE, 7, 8, 8),		/* 7 -> 16 */
		I_MOV64_IMM(5, 0),			/* 8 */
		I_MAY_GOTO(4),				/* 9: inner head -> 14 */
		I_JMP_REG(BPF_JGE, 5, 7, 3),		/* 10 -> 14 */
		I_ALU64_REG(BPF_ADD, 6, 5),		/* 11 */
		I_ALU64_IMM(BPF_ADD, 5, 1),		/* 12 */
		I_JA(-5),				/* 13 -> 9 */
		I_ALU64_IMM(BPF_ADD, 7, 1),		/* 14 */
		I_JA(-10),				/* 15 -> 6 */
		I_STX(BPF_DW, 9, 6, 8),			/* 16 */
		I_MOV64_IMM(0, 0),			/* 17 */
		I_EXIT(),				/* 18 */
	};
	uint64_t ctx[2] = { 1000, 0 };
	int fd = LOAD_OK(insns);

	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(1000ull * 999 * 998 / 6, ctx[1]);
	close(fd);
}

/* ---- loops in subprograms and callbacks, loops on the stack ---- */

/*
 * A loop in a static subprogram that keeps its counter, its sum and its
 * bound in stack slots (as clang spills them): sub(n) = sum of 3 * i, i < n.
 * On 6.1 the subprogram gets its own budget and driver, the body mirrors
 * the three slots.  ctx[0] = n, ctx[1] = sub(n).
 */
TEST_F(loops, loop_in_a_static_subprogram_on_the_stack)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(9, 1),			/* 0 */
		I_LD_MAP_FD(1, self->afd),		/* 1-2 */
		I_LDX(BPF_DW, 1, 9, 0),			/* 3 */
		I_CALL_REL(3),				/* 4 -> 8 */
		I_STX(BPF_DW, 9, 0, 8),			/* 5 */
		I_MOV64_IMM(0, 0),			/* 6 */
		I_EXIT(),				/* 7 */
		I_ST(BPF_DW, 10, -8, 0),		/* 8: sub: i */
		I_ST(BPF_DW, 10, -16, 0),		/* 9: sum */
		I_STX(BPF_DW, 10, 1, -24),		/* 10: n */
		I_MAY_GOTO(11),				/* 11: head -> 23 */
		I_LDX(BPF_DW, 2, 10, -8),		/* 12 */
		I_LDX(BPF_DW, 3, 10, -24),		/* 13 */
		I_JMP_REG(BPF_JGE, 2, 3, 8),		/* 14 -> 23 */
		I_LDX(BPF_DW, 4, 10, -16),		/* 15 */
		I_MOV64_REG(5, 2),			/* 16 */
		I_ALU64_IMM(BPF_MUL, 5, 3),		/* 17 */
		I_ALU64_REG(BPF_ADD, 4, 5),		/* 18 */
		I_STX(BPF_DW, 10, 4, -16),		/* 19 */
		I_ALU64_IMM(BPF_ADD, 2, 1),		/* 20 */
		I_STX(BPF_DW, 10, 2, -8),		/* 21 */
		I_JA(-12),				/* 22 -> 11 */
		I_LDX(BPF_DW, 0, 10, -16),		/* 23 */
		I_EXIT(),				/* 24 */
	};
	uint64_t ctx[2] = { NODES, 0 };
	int fd = LOAD_OK(insns);

	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(3ull * NODES * (NODES - 1) / 2, ctx[1]);
	ctx[0] = 0;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(0, ctx[1]);
	close(fd);
}

/*
 * Program BTF for main + one subprogram at insn sub (linkage: global or static):
 * [1] int, [2] u64, [3] int (void), [4] FUNC main, [5] int (u64 a, u64 b),
 * [6] FUNC sub (global, [5]), [7] u64[8], [8] ptr to [7],
 * [9] int (u64 (*a)[8], u64 b); sub_proto picks [5] or [9].
 */
static int load_with_sub(const struct bpf_insn *insns, unsigned int cnt, unsigned int sub,
			 __u32 sub_proto, __u32 linkage)
{
	static const char strs[] = "\0int\0u64\0main\0sub\0a\0b";
	struct {
		struct btf_header h;
		__u32 t[40];
		char s[sizeof(strs)];
	} __attribute__((packed)) blob = {
		.h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(struct btf_header),
		       .type_len = 40 * 4, .str_off = 40 * 4, .str_len = sizeof(strs) },
		.t = { 1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,	/* [1] int */
		       5, BTF_KIND_INT << 24, 8, 64,				/* [2] u64 */
		       0, BTF_KIND_FUNC_PROTO << 24, 1,				/* [3] */
		       9, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 3,		/* [4] main */
		       0, BTF_KIND_FUNC_PROTO << 24 | 2, 1, 18, 2, 20, 2,	/* [5] */
		       14, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 0,		/* [6] sub */
		       0, BTF_KIND_ARRAY << 24, 0, 2, 1, 8,			/* [7] */
		       0, BTF_KIND_PTR << 24, 7,				/* [8] */
		       0, BTF_KIND_FUNC_PROTO << 24 | 2, 1, 18, 8, 20, 2 },	/* [9] */
	};
	struct bpf_func_info fi[2] = { { 0, 4 }, { sub, 6 } };
	union bpf_attr attr;
	int bfd, fd;

	blob.t[22] = BTF_KIND_FUNC << 24 | linkage;
	blob.t[23] = sub_proto;
	memcpy(blob.s, strs, sizeof(strs));
	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(&blob);
	attr.btf_size = sizeof(blob);
	attr.btf_log_buf = ptr_u64(vlog);
	attr.btf_log_size = LOG_SIZE;
	attr.btf_log_level = 1;
	bfd = bpf_sys(BPF_BTF_LOAD, &attr);
	if (bfd < 0)
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = cnt;
	attr.license = ptr_u64("GPL");
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.log_buf = ptr_u64(vlog);
	attr.log_size = LOG_SIZE;
	attr.log_level = 1;
	vlog[0] = 0;
	attr.prog_btf_fd = bfd;
	attr.func_info = ptr_u64(fi);
	attr.func_info_rec_size = sizeof(fi[0]);
	attr.func_info_cnt = 2;
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	fd = fd < 0 ? -errno : fd;
	close(bfd);
	return fd;
}

/*
 * A loop in a GLOBAL subprogram (verified on its own, from its BTF
 * prototype), walking arena memory with a pointer it advances each
 * iteration: sub(p, n) = sum of p[i], i < n.  ctx[0] = n, ctx[1] = p (user
 * address), ctx[2] = the sum.
 */
TEST_F(loops, loop_in_a_global_subprogram)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(9, 1),			/* 0 */
		I_LD_MAP_FD(1, self->afd),		/* 1-2 */
		I_LDX(BPF_DW, 1, 9, 8),			/* 3 */
		I_LDX(BPF_DW, 2, 9, 0),			/* 4 */
		I_CALL_REL(3),				/* 5 -> 9 */
		I_STX(BPF_DW, 9, 0, 16),		/* 6 */
		I_MOV64_IMM(0, 0),			/* 7 */
		I_EXIT(),				/* 8 */
		I_CAST_KERN(1, 1),			/* 9: sub */
		I_MOV64_IMM(0, 0),			/* 10 */
		I_MOV64_IMM(3, 0),			/* 11 */
		I_MAY_GOTO(6),				/* 12: head -> 19 */
		I_JMP_REG(BPF_JGE, 3, 2, 5),		/* 13 -> 19 */
		I_LDX(BPF_DW, 4, 1, 0),			/* 14 */
		I_ALU64_REG(BPF_ADD, 0, 4),		/* 15 */
		I_ALU64_IMM(BPF_ADD, 1, 8),		/* 16 */
		I_ALU64_IMM(BPF_ADD, 3, 1),		/* 17 */
		I_JA(-7),				/* 18 -> 12 */
		I_EXIT(),				/* 19 */
	};
	uint64_t *cells = (void *)(self->base + 3 * PG), ctx[3];
	int fd, i;

	for (i = 0; i < 200; i++)
		cells[i] = i + 1;
	fd = load_with_sub(insns, ARRAY_SIZE(insns), 9, 5, BTF_FUNC_GLOBAL);
	ASSERT_LE(0, fd) TH_LOG("load: %s\n%s", strerror(-fd), vlog);
	ctx[0] = 200;
	ctx[1] = ptr_u64(cells);
	ctx[2] = 0;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(200 * 201 / 2, ctx[2]);
	ctx[0] = 0;
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(0, ctx[2]);
	close(fd);
}

/*
 * A loop inside a bpf_loop() callback: for i < 4, cells[0] += sum of j, j <= i.
 * The callback reads the arena address from its caller's stack before its
 * loop and counts its calls in its caller's stack after it, through its
 * context argument (on 6.1: saved at the callback's entry, re-derived after
 * the loop).  ctx[1] = cells (user address); ctx[0] = the count.
 */
TEST_F(loops, loop_in_a_bpf_loop_callback)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(9, 1),			/* 0 */
		I_LD_MAP_FD(1, self->afd),		/* 1-2 */
		I_LDX(BPF_DW, 6, 9, 8),			/* 3 */
		I_STX(BPF_DW, 10, 6, -8),		/* 4 */
		I_ST(BPF_DW, 10, -16, 0),		/* 5 */
		I_MOV64_IMM(1, 4),			/* 6 */
		I_LD_FUNC(2, 9),			/* 7-8 -> 17 */
		I_MOV64_REG(3, 10),			/* 9 */
		I_ALU64_IMM(BPF_ADD, 3, -8),		/* 10 */
		I_MOV64_IMM(4, 0),			/* 11 */
		I_CALL_HELPER(BPF_FUNC_loop),		/* 12 */
		I_LDX(BPF_DW, 0, 10, -16),		/* 13 */
		I_STX(BPF_DW, 9, 0, 0),			/* 14 */
		I_MOV64_IMM(0, 0),			/* 15 */
		I_EXIT(),				/* 16 */
		I_LDX(BPF_DW, 7, 2, 0),			/* 17: cb(i, &cells) */
		I_CAST_KERN(7, 7),			/* 18 */
		I_MOV64_IMM(3, 0),			/* 19 */
		I_MAY_GOTO(6),				/* 20: head -> 27 */
		I_JMP_REG(BPF_JGT, 3, 1, 5),		/* 21 -> 27 */
		I_LDX(BPF_DW, 4, 7, 0),			/* 22 */
		I_ALU64_REG(BPF_ADD, 4, 3),		/* 23 */
		I_STX(BPF_DW, 7, 4, 0),			/* 24 */
		I_ALU64_IMM(BPF_ADD, 3, 1),		/* 25 */
		I_JA(-7),				/* 26 -> 20 */
		I_LDX(BPF_DW, 5, 2, -8),		/* 27: the caller's count */
		I_ALU64_IMM(BPF_ADD, 5, 1),		/* 28 */
		I_STX(BPF_DW, 2, 5, -8),		/* 29 */
		I_MOV64_IMM(0, 0),			/* 30 */
		I_EXIT(),				/* 31 */
	};
	uint64_t *cells = (void *)(self->base + 4 * PG), ctx[2];
	/* 6.12 wants func_info for a callback: the program comes with BTF. */
	int fd = load_with_sub(insns, ARRAY_SIZE(insns), 17, 5, BTF_FUNC_STATIC);

	ASSERT_LE(0, fd) TH_LOG("load: %s\n%s", strerror(-fd), vlog);
	cells[0] = 100;
	ctx[0] = 0;
	ctx[1] = ptr_u64(cells);
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(100 + 0 + 1 + 3 + 6, cells[0]);
	EXPECT_EQ(4, ctx[0]);
	close(fd);
}

/*
 * The trap on the stack: the counter lives in a spilled slot, 0 in
 * iteration 1, where the branch to the unchecked store looks dead.  Later
 * iterations would write value[8 * i] for i up to 999 (a 64-byte value):
 * the stock verifier must see the store with any i and reject it.
 */
TEST_F(loops, spilled_counter_with_check_dead_in_iteration_1_is_rejected)
{
	int mfd = array_create(64, 0);
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, self->afd),		/* 0-1 */
		I_ST(BPF_DW, 10, -8, 0),		/* 2 */
		I_MAY_GOTO(11),				/* 3: head -> 15 */
		I_LD_MAP_VALUE(1, mfd, 0),		/* 4-5 */
		I_LDX(BPF_DW, 2, 10, -8),		/* 6 */
		I_JMP_IMM(BPF_JEQ, 2, 0, 3),		/* 7 -> 11: "always" in iteration 1 */
		I_ALU64_IMM(BPF_LSH, 2, 3),		/* 8 */
		I_ALU64_REG(BPF_ADD, 1, 2),		/* 9 */
		I_ST(BPF_DW, 1, 0, 1),			/* 10: unchecked */
		I_LDX(BPF_DW, 2, 10, -8),		/* 11 */
		I_ALU64_IMM(BPF_ADD, 2, 1),		/* 12 */
		I_STX(BPF_DW, 10, 2, -8),		/* 13 */
		I_JMP_IMM(BPF_JLT, 2, 1000, -12),	/* 14 -> 3 */
		I_MOV64_IMM(0, 0),			/* 15 */
		I_EXIT(),
	};
	int fd;

	ASSERT_LE(0, mfd);
	fd = load(insns, ARRAY_SIZE(insns));
	REJECTED_BY_VERIFIER(fd, "an unchecked store behind a counter on the stack was accepted");
	if (fd >= 0)
		close(fd);
	close(mfd);
}

/*
 * A global subprogram whose loop advances its 64-byte memory argument past
 * its end: rejected (on 6.1 the pointer crosses the head as bits, and the
 * body may not dereference a scalar).
 */
TEST_F(loops, global_subprogram_pointer_advanced_past_its_memory_is_rejected)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, self->afd),		/* 0-1 */
		I_MOV64_IMM(1, 0),			/* 2 */
		I_MOV64_IMM(2, 0),			/* 3 */
		I_CALL_REL(1),				/* 4 -> 6 */
		I_EXIT(),				/* 5 */
		I_JMP_IMM(BPF_JEQ, 1, 0, 5),		/* 6: sub(p, n) -> 12 */
		I_MAY_GOTO(4),				/* 7: head -> 12 */
		I_ST(BPF_DW, 1, 0, 1),			/* 8 */
		I_ALU64_IMM(BPF_ADD, 1, 8),		/* 9 */
		I_ALU64_IMM(BPF_ADD, 2, 1),		/* 10 */
		I_JA(-5),				/* 11 -> 7 */
		I_MOV64_IMM(0, 0),			/* 12 */
		I_EXIT(),				/* 13 */
	};
	int fd = load_with_sub(insns, ARRAY_SIZE(insns), 6, 9, BTF_FUNC_GLOBAL);

	REJECTED_BY_VERIFIER(fd, "a pointer running off a global function's memory was accepted");
	if (fd >= 0)
		close(fd);
}

TEST_HARNESS_MAIN

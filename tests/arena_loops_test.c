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
#include "kmod_util.h"
#include "bpf_insn_extra.h"

#define PG		4096
#define LOG_SIZE	(1 << 20)
#define NODES		100000
#define ARENA_PAGES	((NODES * 16 + PG - 1) / PG + 1)
#define MAX_LOOPS	(1u << 23)	/* upstream's may_goto budget, BPF_MAX_LOOPS */
#define I_MAY_GOTO(OFF)	((struct bpf_insn){ .code = BPF_JMP | 0xe0 | BPF_K, .off = OFF })

static char vlog[LOG_SIZE];

FIXTURE(loops) {
	int afd;
	char *base;
	size_t size;
};

FIXTURE_SETUP(loops)
{
	union bpf_attr attr;
	long fd;
	void *p;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = 33;
	attr.max_entries = ARENA_PAGES;
	attr.map_flags = BPF_F_MMAPABLE;
	fd = bpf_sys(BPF_MAP_CREATE, &attr);
	ASSERT_LE(0, fd) TH_LOG("arena create: %s", strerror(errno));
	self->afd = fd;
	self->size = (size_t)ARENA_PAGES * PG;
	p = mmap(NULL, self->size, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, p);
	self->base = p;
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

static int array_map(unsigned int value_size)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = value_size;
	attr.max_entries = 1;
	return (int)bpf_sys(BPF_MAP_CREATE, &attr);
}

/*
 * The counter is 0 in iteration 1, so "i < 8" would look always true there:
 * value[i] = 1 with i up to 999 must be rejected (64-byte value).
 */
TEST_F(loops, counter_as_index_without_live_bound_is_rejected)
{
	int mfd = array_map(64);
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
	int mfd = array_map(64);
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

/* A map value pointer advanced each iteration walks off the value: rejected. */
TEST_F(loops, pointer_advanced_each_iteration_is_rejected)
{
	int mfd = array_map(64);
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
 * A body that writes the stack where the translation keeps ctx (below the
 * program's own frame): on 6.1 the pass refuses a loop touching the stack,
 * naming it; on 6.12 the program is ordinary and runs.  ctx is used after the
 * loop: it must still be the context there.
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
	int fd = load(insns, ARRAY_SIZE(insns));

	if (!kernel_has_native_arena()) {
		ASSERT_EQ(-EINVAL, fd);
		EXPECT_NE(NULL, strstr(vlog,
			"bpf_arena: insn 5: may_goto (can_loop/cond_break) loop at insn 4 uses the stack"))
			TH_LOG("log: %s", vlog);
		return;
	}
	ASSERT_LE(0, fd) TH_LOG("%s", vlog);
	ASSERT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(3, ctx[0]);
	close(fd);
}

/* Never "unknown opcode e5": a loop shape the pass refuses is named. */
TEST_F(loops, unhandled_shape_is_named_not_unknown_opcode)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(2, self->afd),		/* 0-1 */
		I_MOV64_IMM(6, 0),			/* 2 */
		I_MAY_GOTO(5),				/* 3: head -> 9 */
		I_MOV64_IMM(7, 0),			/* 4 */
		I_ALU64_IMM(BPF_ADD, 7, 1),		/* 5: inner loop */
		I_JMP_IMM(BPF_JLT, 7, 4, -2),		/* 6 -> 5 */
		I_ALU64_REG(BPF_ADD, 6, 7),		/* 7 */
		I_JMP_IMM(BPF_JLT, 6, 40, -6),		/* 8 -> 3 */
		I_MOV64_REG(0, 6),			/* 9 */
		I_EXIT(),
	};
	uint64_t ctx[1] = { 0 };
	int fd = load(insns, ARRAY_SIZE(insns));

	if (!kernel_has_native_arena()) {
		ASSERT_EQ(-EINVAL, fd);
		EXPECT_EQ(NULL, strstr(vlog, "unknown opcode"));
		EXPECT_NE(NULL, strstr(vlog,
			"bpf_arena: insn 6: may_goto (can_loop/cond_break) loop at insn 3 contains a nested loop"))
			TH_LOG("log: %s", vlog);
		return;
	}
	ASSERT_LE(0, fd) TH_LOG("%s", vlog);
	ASSERT_EQ(40, run_syscall_prog(fd, ctx, sizeof(ctx)));
	close(fd);
}

TEST_HARNESS_MAIN

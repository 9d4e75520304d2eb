// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall programs 6.12 refuses whose may_goto loop reaches the context
 * through a join (a register holding it on one path only): refused on both
 * kernels (tests/unit/loops_unit_test.c ctx_as_memory_through_a_join).
 * Prints what each load answered.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define LOG_SIZE (1 << 20)
static char vlog[LOG_SIZE];

static const struct bpf_insn ctx_join_prog[] = {
	I_MOV64_REG(9, 1),		/* 0 */
	I_MOV64_IMM(6, 0),		/* 1 */
	I_MOV64_IMM(7, 0),		/* 2 */
	I_MAY_GOTO(10),		/* 3: head -> 14 */
	I_JMP_IMM(BPF_JGE, 7, 100, 9),	/* 4 -> 14 */
	I_LDX(BPF_DW, 2, 9, 0),		/* 5: ctx_size = 8 */
	I_MOV64_IMM(3, 0),		/* 6 */
	I_JMP_IMM(BPF_JGT, 2, 5, 1),	/* 7 -> 9 */
	I_MOV64_REG(3, 9),		/* 8 */
	I_JMP_IMM(BPF_JGT, 2, 5, 2),	/* 9 -> 12 */
	I_LDX(BPF_W, 4, 3, 1),		/* 10: ctx off=1 size=4 */
	I_ALU64_REG(BPF_ADD, 6, 4),	/* 11 */
	I_ALU64_IMM(BPF_ADD, 7, 1),	/* 12 */
	I_JA(-11),			/* 13 -> 3 */
	I_MOV64_REG(0, 6),		/* 14 */
	I_EXIT(),			/* 15 */
};

static void try(struct __test_metadata *_metadata, const char *name,
		const struct bpf_insn *p, unsigned int n)
{
	uint64_t ctx[2] = { 1, 0 };
	int fd;
	long r;

	fd = load_syscall_prog(p, n, vlog, LOG_SIZE);
	if (fd < 0) {
		size_t l = strlen(vlog);

		printf("# %s: refused (%s): %s\n", name, strerror(-fd),
		       l > 300 ? vlog + l - 300 : vlog);
		return;
	}
	r = run_syscall_prog(fd, ctx, sizeof(ctx));
	printf("# %s: LOADED, run r=%ld ctx={%#llx,%#llx}\n", name, r,
	       (unsigned long long)ctx[0], (unsigned long long)ctx[1]);
	close(fd);
	EXPECT_GT(0, fd) TH_LOG("%s: 6.12 refuses this program", name);
}

TEST(context_through_joins_is_refused)
{
	try(_metadata, "ctx_join_misaligned", ctx_join_prog, ARRAY_SIZE(ctx_join_prog));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * The loop pass's cost is linear in the program, whatever its jumps (found
 * by attack review 2).  Its whole-program liveness (rewrite/loops.c liveness(),
 * run for every arena program with a may_goto before any loop is looked at)
 * used to repeat full backward sweeps until nothing changed; a chain of
 * backward jumps moves a live bit by one jump per sweep, so a "staircase"
 * of N `ja -2` cost N sweeps of N insns, in the bpf() syscall, with no
 * cond_resched(): 65k insns held a CPU for 20-40 s, and under TCG 24k fired
 * the soft-lockup watchdog.  It is a worklist now.
 *
 * Checked: a staircase loads (and runs) in a time comparable to a program
 * of the same size with one backward jump (both measured in the same run,
 * so a slow host scales both).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define LOG_SIZE	(1 << 23)	/* level 1 logs every insn */
/*
 * Measured under TCG (6.1 guest, loaded host) with the quadratic pass:
 * 12000 stairs 5.09 s, the control 0.23 s; 8000 stairs 3.75 s vs 0.19 s.
 * With the worklist both take about the same.
 */
#define STAIRS		12000
/* staircase <= SLACK x control + GRACE seconds */
#define SLACK		4.0
#define GRACE		1.0

static char vlog[LOG_SIZE];

/*
 * 0: r6 = 0; 1-2: r1 = &arena (the module's load path); 3: may_goto +1;
 * 4: gotol top; 5: r0 = r6; 6: exit; 7: ja -3 (-> 5); 8..top: ja -2 each
 * (-> the one before).  Runs top -> ... -> 7 -> 5 -> 6, returns 0.  With
 * stairs false, 4 jumps to 7, 7.. are `r7 = i` and the last jumps back to 5:
 * the same size and path length, one backward jump.
 */
static struct bpf_insn *build(int afd, unsigned int n, bool stairs, unsigned int *len)
{
	struct bpf_insn *p = calloc(n + 16, sizeof(*p));
	unsigned int k = 0, i;

	if (!p)
		return NULL;
	p[k++] = I_MOV64_IMM(6, 0);
	{
		struct bpf_insn ld[] = { I_LD_MAP_FD(1, afd) };

		p[k++] = ld[0];
		p[k++] = ld[1];
	}
	p[k++] = I_MAY_GOTO(1);			/* 3: -> 5 when the budget is out (6.12 refuses +0) */
	p[k++] = I_GOTOL(0);			/* 4: fixed below */
	p[k++] = I_MOV64_REG(0, 6);		/* 5 */
	p[k++] = I_EXIT();			/* 6 */
	/* (not `ja +0`: stock 6.1 removes nops one by one, quadratic itself) */
	p[k++] = stairs ? I_JA(-3) : I_MOV64_IMM(7, 0);	/* 7 */
	for (i = 0; i < n; i++)
		p[k++] = stairs ? I_JA(-2) : I_MOV64_IMM(7, i);
	if (!stairs) {
		p[k] = I_JA(5 - (int)k - 1);	/* one backward jump, to 5 */
		k++;
	}
	p[4].imm = stairs ? (int)(k - 1) - 5 : 2;	/* top, or 7 */
	*len = k;
	return p;
}

static double load_timed(struct __test_metadata *_metadata, bool stairs)
{
	unsigned int len;
	struct bpf_insn *p;
	double t0, dt;
	struct arena a;
	int err, fd;

	/* A 16-page arena, mapped (a program needs its user address set). */
	err = arena_open(&a, 16, 0, true);
	EXPECT_EQ(0, err) TH_LOG("arena create/mmap: %s", strerror(-err));
	if (err)
		return 0;
	p = build(a.fd, STAIRS, stairs, &len);
	EXPECT_NE(NULL, p);
	if (!p) {
		arena_close(&a);
		return 0;
	}
	t0 = now();
	fd = load_syscall_prog(p, len, vlog, LOG_SIZE);
	dt = now() - t0;
	free(p);
	TH_LOG("%s: %u insns, load %s after %.2f s", stairs ? "staircase" : "control", len,
	       fd >= 0 ? "ok" : strerror(-fd), dt);
	/* Both programs are valid: a refusal would hide what is measured. */
	EXPECT_LE(0, fd) TH_LOG("log: %s", str_tail(vlog, 2000));
	if (fd >= 0) {
		uint64_t ctx[2] = { 0, 0 };

		EXPECT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
		close(fd);
	}
	arena_close(&a);
	return dt;
}

/* Both shapes load and run (the control is the measure's baseline). */
TEST(control_same_size_without_backward_chain_loads)
{
	load_timed(_metadata, false);
}

/* Quadratic before the worklist liveness: 5.09 s against 0.23 s. */
TEST(staircase_of_backward_jumps_loads_as_fast_as_control)
{
	double control = load_timed(_metadata, false);
	double stairs = load_timed(_metadata, true);

	EXPECT_GE(SLACK * control + GRACE, stairs)
		TH_LOG("staircase %.2f s, control %.2f s", stairs, control);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * Adversarial programs (issue 5 part 2).  Every test ends in "rejected with a
 * clear message" (errno and a log substring) or "loaded and harmless" (it runs
 * and gives what the VERIFIED model implies; the VM runner fails the run on any
 * WARNING/BUG in dmesg).  Raw instructions (tests/include/bpf_insn.h).
 *
 * Runs on 6.1 with the module and on 6.12 (in-tree arena).  Program-misuse tests
 * run on both; where the module's placeholders make 6.1 differ (hand-written
 * look-alikes are raised there, plain code on 6.12) each test asserts the
 * kernel's own semantics; tests only about the module SKIP on 6.12 with a reason.
 *
 * Programs are sleepable SYSCALL programs run with BPF_PROG_TEST_RUN on a u64 ctx.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PG		4096
#define ARENA_PAGES	16
#define LOG_SIZE	(1 << 20)
#define OVAL		0x1122334455667788ULL	/* the other map's value[0] */

static char vlog[LOG_SIZE];

/* A 64-byte, 1-entry ARRAY map whose value starts with OVAL. */
static int other_map_create(void)
{
	uint64_t val[8] = { OVAL, 2, 3, 4, 5, 6, 7, 8 };
	uint32_t key = 0;
	int fd = array_create(sizeof(val), 0), err;

	if (fd < 0)
		return fd;
	err = map_update(fd, &key, val);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static uint64_t other_map_word(int fd, unsigned int i)
{
	uint64_t val[8] = { 0 };
	uint32_t key = 0;

	if (map_lookup(fd, &key, val))
		return ~0ULL;
	return val[i];
}

static bool native(void)
{
	return kernel_has_native_arena();
}

#define SKIP_IF_NATIVE(why)							\
	do {									\
		if (native())							\
			SKIP(return, "6.12 has in-tree arena: %s", why);	\
	} while (0)

FIXTURE(adv) {
	struct arena a;
	int ofd;
};

FIXTURE_SETUP(adv)
{
	ASSERT_EQ(0, arena_open(&self->a, ARENA_PAGES, 0, true));
	memset(self->a.base, 0, 4 * PG);	/* pages 0-3 populated */
	self->ofd = other_map_create();
	ASSERT_LE(0, self->ofd);
}

FIXTURE_TEARDOWN(adv)
{
	close(self->ofd);
	arena_close(&self->a);
}

#define LOAD(insns) load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE)

/* Loads (asserting success), runs on ctx, closes; returns r0. */
#define RUN(insns, ctx)	LOAD_RUN(insns, ctx, vlog, LOG_SIZE)

/* Asserts the load fails with -ERR and the log holds MSG. */
#define EXPECT_REJECTED(insns, ERR, MSG)					\
	do {									\
		int __fd = LOAD(insns);						\
		if (__fd >= 0)							\
			close(__fd);						\
		EXPECT_EQ(-(ERR), __fd) TH_LOG("log: %s", vlog);		\
		EXPECT_NE(NULL, strstr(vlog, MSG)) TH_LOG("want '%s' in: %s", MSG, vlog); \
	} while (0)

#define NO_INSN I_MOV64_IMM(0, 0)	/* filler where the arena reference is left out */

/*
 * Every look-alike form, "companion" = the other map.  ctx[0] = a user address of
 * the arena (a scalar: never cast), results in ctx[1..7].  Slots 1-2 take the arena
 * arena, so on 6.1 the program is lowered, verified and raised.
 */
#define ALL_FORMS_PROG(ofd)					\
	{									\
		I_MOV64_REG(6, 1),						\
		NO_INSN, NO_INSN,	/* the arena ld_imm64 goes here */	\
		I_LDX(BPF_DW, 7, 6, 0),						\
		PH_LOAD(3, 7, BPF_DW, 0, ofd),					\
		I_STX(BPF_DW, 6, 3, 8),			/* ctx[1] */		\
		PH_LOAD(3, 7, BPF_W, 4, ofd),					\
		I_STX(BPF_DW, 6, 3, 16),		/* ctx[2] */		\
		I_MOV64_IMM(4, 0x5a5a),						\
		PH_STX(7, 4, BPF_DW, 0),					\
		PH_ST(7, BPF_W, 8, 0x77),					\
		PH_ATOMIC(7, 4, BPF_DW, BPF_ADD, 16),				\
		I_MOV64_IMM(5, 3),						\
		PH_FETCH(7, 5, BPF_DW, 0, 24, ofd),				\
		I_STX(BPF_DW, 6, 5, 24),		/* ctx[3] */		\
		I_MOV64_IMM(0, 0),						\
		I_MOV64_IMM(5, 9),						\
		PH_CMPXCHG(7, 5, BPF_DW, 32, ofd),				\
		I_STX(BPF_DW, 6, 0, 32),		/* ctx[4] */		\
		I_STX(BPF_DW, 6, 5, 40),		/* ctx[5] */		\
		PH_CAST_USER(8, 7, ofd),					\
		I_STX(BPF_DW, 6, 8, 48),		/* ctx[6] */		\
		I_STX(BPF_DW, 6, 7, 56),		/* ctx[7] */		\
		I_MOV64_IMM(0, 1),						\
		I_EXIT(),							\
	}

static void check_all_forms(struct __test_metadata *_metadata, struct arena *a, int ofd,
			    bool with_arena, bool raised)
{
	uint64_t *cell = (uint64_t *)(a->base + PG + 128);
	struct bpf_insn insns[] = ALL_FORMS_PROG(ofd);
	uint64_t ctx[8] = { ptr_u64(cell) };

	if (with_arena) {
		insns[1] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
					      .src_reg = BPF_PSEUDO_MAP_FD, .imm = a->fd };
		insns[2] = (struct bpf_insn){ 0 };
	}
	cell[0] = 0xdead0000beef0000ULL;	/* what a raised LOAD would return */
	cell[1] = 0;
	cell[2] = 100;
	cell[3] = 0xdead;
	cell[4] = 0xdead;
	ASSERT_EQ(1, RUN(insns, ctx));
	/* Companion forms naming another map: never raised, they run as written. */
	EXPECT_EQ(OVAL, ctx[1]);
	EXPECT_EQ((uint32_t)OVAL, ctx[2]);
	EXPECT_EQ(OVAL, ctx[3]);
	EXPECT_EQ(OVAL, ctx[4]);
	EXPECT_EQ(9, ctx[5]);
	EXPECT_EQ(OVAL, ctx[6]);
	/* The kept wS = wS zero-extends; the xor carriers are the identity. */
	EXPECT_EQ((uint32_t)ptr_u64(cell), ctx[7]);
	EXPECT_EQ(0xdead, cell[3]);
	EXPECT_EQ(0xdead, cell[4]);
	EXPECT_EQ(OVAL, other_map_word(ofd, 0));
	if (raised) {
		/* STX/ST/ATOMIC carry no companion: raised, and they write only here. */
		EXPECT_EQ(0x5a5a, cell[0]);
		EXPECT_EQ(0x77, cell[1]);
		EXPECT_EQ(100 + 0x5a5a, cell[2]);
	} else {
		EXPECT_EQ(0xdead0000beef0000ULL, cell[0]);
		EXPECT_EQ(0, cell[1]);
		EXPECT_EQ(100, cell[2]);
	}
}

/* No arena: nothing is raised, every form runs as the plain code it is. */
TEST_F(adv, lookalikes_without_arena_run_as_written)
{
	check_all_forms(_metadata, &self->a, self->ofd, false, false);
}

/*
 * With an arena: companion forms naming another map stay unraised; STX/ST/ATOMIC
 * look-alikes are raised on 6.1 (documented) and write only inside the arena.
 * 6.12 has no raise: they are plain xors there.
 */
TEST_F(adv, lookalikes_with_arena_only_carrier_forms_raised)
{
	check_all_forms(_metadata, &self->a, self->ofd, true, !native());
}

/*
 * Raised STX/ST/ATOMIC look-alikes whose base is a pointer (ctx, map value, stack
 * address) or a value at the top of the 4 GiB window with the largest offset:
 * root may copy the low half of a pointer (wS = wS), so the access goes to
 * kern_vm_start + (u32)ptr + off: inside the window, fixed up if unpopulated.
 */
TEST_F(adv, raised_lookalikes_on_pointer_bases_stay_in_the_window)
{
	uint64_t ctx[4] = { 0 };
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_MOV64_REG(7, 6),
		I_MOV64_IMM(4, 0x11),
		PH_STX(7, 6, BPF_DW, 0),		/* base: ctx; value: ctx pointer */
		I_LD_MAP_VALUE(8, self->ofd, 0),
		PH_ST(8, BPF_DW, -32768, 0x22),		/* base: map value */
		I_MOV64_REG(9, 10),
		PH_ATOMIC(9, 4, BPF_W, BPF_OR, 32767),	/* base: frame pointer copy */
		I_LD_IMM64(2, 0xffffffffULL),
		PH_STX(2, 4, BPF_DW, 32767),		/* the window's far end */
		PH_ST(2, BPF_B, -32768, 0x33),
		I_STX(BPF_DW, 6, 2, 8),
		I_LDX(BPF_DW, 3, 6, 0),			/* ctx is still a ctx */
		I_STX(BPF_DW, 6, 3, 16),
		I_MOV64_IMM(0, 5),
		I_EXIT(),
	};

	ctx[0] = 0xabc;
	ASSERT_EQ(5, RUN(insns, ctx));
	EXPECT_EQ(0xffffffffULL, ctx[1]);
	EXPECT_EQ(0xabc, ctx[2]);
	EXPECT_EQ(OVAL, other_map_word(self->ofd, 0));	/* nothing written outside */
}

/*
 * State prepared to fool the model: a ctx pointer stored where a look-alike LOAD
 * reads (the "companion" map value), then the result dereferenced: the verifier
 * types map-value contents as scalars, so it refuses.
 */
TEST_F(adv, pointer_planted_in_lookalike_source_is_a_scalar)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LD_MAP_VALUE(2, self->ofd, 0),
		I_STX(BPF_DW, 2, 6, 0),			/* value[0] = ctx pointer */
		I_MOV64_IMM(7, 0),
		PH_LOAD(3, 7, BPF_DW, 0, self->ofd),
		I_LDX(BPF_DW, 0, 3, 0),			/* use it as a pointer */
		I_EXIT(),
	};

	EXPECT_REJECTED(insns, EACCES, "R3 invalid mem access 'scalar'");
}

/* A genuine arena load after the ctx pointer was spilled: the result is a scalar. */
TEST_F(adv, arena_load_after_pointer_spill_is_a_scalar)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_STX(BPF_DW, 10, 6, -8),
		I_STX(BPF_DW, 10, 6, -16),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_MOV64_REG(3, 6),			/* r3 = ctx before the load */
		I_LDX(BPF_DW, 3, 2, 0),
		I_LDX(BPF_DW, 0, 3, 0),
		I_EXIT(),
	};

	EXPECT_REJECTED(insns, EACCES, "R3 invalid mem access 'scalar'");
}

/*
 * A known constant in the destination (= the LOAD carrier register) before an
 * arena load, then a branch on the result: the verifier must explore the branch
 * (unknown scalar), so the poisoned path is found and the program refused.
 */
TEST_F(adv, branch_on_arena_load_is_not_pruned)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_MOV64_IMM(3, PH_K1(PH_LOAD_K, BPF_DW, 0, 0)),
		I_LDX(BPF_DW, 3, 2, 0),
		I_JMP_IMM(BPF_JNE, 3, PH_K1(PH_LOAD_K, BPF_DW, 0, 0), 2),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
		I_LDX(BPF_DW, 0, 9, 0),			/* r9 never written */
		I_EXIT(),
	};

	EXPECT_REJECTED(insns, EACCES, "R9 !read_ok");
}

/* The bounds of an arena byte load: [0, 255], not a constant.  Checked: used as an index. */
TEST_F(adv, arena_byte_as_map_index_needs_a_bounds_check)
{
	uint8_t *b = (uint8_t *)self->a.base + PG + 300;
	uint64_t ctx[2] = { ptr_u64(b) };
	struct bpf_insn bad[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_LDX(BPF_B, 3, 2, 0),
		I_LD_MAP_VALUE(4, self->ofd, 0),
		I_ALU64_REG(BPF_ADD, 4, 3),
		I_LDX(BPF_B, 0, 4, 0),
		I_EXIT(),
	};
	struct bpf_insn good[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_LDX(BPF_B, 3, 2, 0),
		I_MOV64_IMM(0, 0),
		I_JMP_IMM(BPF_JGT, 3, 63, 4),
		I_LD_MAP_VALUE(4, self->ofd, 0),
		I_ALU64_REG(BPF_ADD, 4, 3),
		I_LDX(BPF_B, 0, 4, 0),
		I_EXIT(),
	};

	EXPECT_REJECTED(bad, EACCES, "invalid access to map value");
	*b = 8;					/* value byte 8 = low byte of word 1 (2) */
	EXPECT_EQ(2, RUN(good, ctx));
	*b = 200;				/* out of range: the check takes the exit */
	EXPECT_EQ(0, RUN(good, ctx));
}

/*
 * Known constants through a raised STX look-alike: the verifier keeps rS a known
 * constant and prunes the poisoned path; after the raise rS still holds it (the raise
 * writes AX only), so the pruned path is never taken, and the store lands in the arena.
 */
TEST_F(adv, known_constant_base_survives_raise)
{
	uint64_t *cell = (uint64_t *)(self->a.base + 2 * PG + 256);
	uint32_t lo = (uint32_t)ptr_u64(cell);
	uint64_t ctx[2] = { 0 };
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LD_IMM64(7, lo),
		I_LD_IMM64(8, lo),
		I_MOV64_IMM(4, 0x4242),
		PH_STX(7, 4, BPF_DW, 8),
		I_JMP_REG(BPF_JNE, 7, 8, 4),
		I_JMP_IMM(BPF_JNE, 4, 0x4242, 3),
		I_STX(BPF_DW, 6, 7, 8),
		I_MOV64_IMM(0, 1),
		I_EXIT(),
		I_LDX(BPF_DW, 0, 9, 0),			/* pruned: r9 never written */
		I_EXIT(),
	};

	cell[1] = 0;
	ASSERT_EQ(1, RUN(insns, ctx));
	EXPECT_EQ(lo, ctx[1]);
	EXPECT_EQ(native() ? 0 : 0x4242, cell[1]);
}

/* A jump into the middle of a (raised) STX look-alike: the raise refuses the program. */
TEST_F(adv, jump_into_lookalike_is_refused)
{
	uint64_t ctx[2] = { ptr_u64(self->a.base + PG) };
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 7, 6, 0),
		I_LDX(BPF_DW, 2, 6, 8),
		I_MOV64_IMM(4, 1),
		I_JMP_IMM(BPF_JEQ, 2, 0, 2),		/* -> the second xor */
		PH_STX(7, 4, BPF_DW, 0),
		I_MOV64_IMM(0, 3),
		I_EXIT(),
	};
	int fd = LOAD(insns);

	if (native()) {
		/* No placeholders on 6.12: plain xors, harmless. */
		ASSERT_LE(0, fd) TH_LOG("%s", vlog);
		EXPECT_EQ(3, run_syscall_prog(fd, ctx, sizeof(ctx)));
		close(fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(-EINVAL, fd);
	EXPECT_NE(NULL, strstr(vlog, "jump into the arena placeholder")) TH_LOG("%s", vlog);
}

/* The same jump into an unraised look-alike (companion = another map) is plain code. */
TEST_F(adv, jump_into_unraised_lookalike_is_plain_code)
{
	uint64_t ctx[2] = { 0 };
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_MOV64_IMM(7, 0),
		I_LDX(BPF_DW, 2, 6, 8),
		I_MOV64_IMM(3, 0),
		I_JMP_IMM(BPF_JEQ, 2, 0, 1),		/* -> rD = companion */
		PH_LOAD(3, 7, BPF_DW, 0, self->ofd),
		I_STX(BPF_DW, 6, 3, 0),
		I_MOV64_IMM(0, 4),
		I_EXIT(),
	};

	ASSERT_EQ(4, RUN(insns, ctx));
	EXPECT_EQ(OVAL, ctx[0]);
}

/*
 * A bpf-to-bpf call into the middle of a look-alike: the form's first half would end
 * a subprogram without exit or ja; refused (lowering on 6.1, verifier on 6.12).
 */
TEST_F(adv, call_into_lookalike_is_refused)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 7, 6, 0),
		I_MOV64_IMM(4, 1),
		I_CALL_REL(3),				/* -> the second xor */
		PH_STX(7, 4, BPF_DW, 0),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	int fd = LOAD(insns);

	if (fd >= 0)
		close(fd);
	EXPECT_EQ(-EINVAL, fd);
	EXPECT_TRUE(strstr(vlog, "falls through past the end of its subprogram") ||
		    strstr(vlog, "last insn is not an exit or jmp")) TH_LOG("%s", vlog);
}

/* Arena pointers through the stack (tracked), ctx and map values (scalars after). */
TEST_F(adv, arena_pointer_through_stack_ctx_and_map)
{
	uint64_t *cell = (uint64_t *)(self->a.base + PG + 512);
	uint64_t ctx[4] = { ptr_u64(cell) };
	struct bpf_insn via_stack[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_STX(BPF_DW, 10, 2, -24),
		I_MOV64_IMM(2, 0),
		I_LDX(BPF_DW, 3, 10, -24),
		I_LDX(BPF_DW, 4, 3, 0),
		I_STX(BPF_DW, 6, 4, 8),
		I_STX(BPF_DW, 6, 3, 16),		/* the pointer itself into ctx */
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	struct bpf_insn via_ctx[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_STX(BPF_DW, 6, 2, 8),
		I_LDX(BPF_DW, 3, 6, 8),
		I_LDX(BPF_DW, 0, 3, 0),
		I_EXIT(),
	};
	struct bpf_insn via_map[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_LD_MAP_VALUE(5, self->ofd, 0),
		I_STX(BPF_DW, 5, 2, 8),
		I_LDX(BPF_DW, 3, 5, 8),
		I_LDX(BPF_DW, 0, 3, 0),
		I_EXIT(),
	};
	struct bpf_insn via_map_recast[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_LD_MAP_VALUE(5, self->ofd, 0),
		I_STX(BPF_DW, 5, 2, 8),
		I_LDX(BPF_DW, 3, 5, 8),
		I_CAST_KERN(3, 3),
		I_LDX(BPF_DW, 4, 3, 0),
		I_STX(BPF_DW, 6, 4, 24),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};

	*cell = 0x600df00d;
	ASSERT_EQ(0, RUN(via_stack, ctx));
	EXPECT_EQ(0x600df00d, ctx[1]);
	EXPECT_EQ((uint32_t)ptr_u64(cell), ctx[2]);	/* cast_kern keeps the low 32 bits */
	EXPECT_REJECTED(via_ctx, EACCES, "R3 invalid mem access 'scalar'");
	EXPECT_REJECTED(via_map, EACCES, "R3 invalid mem access 'scalar'");
	ASSERT_EQ(0, RUN(via_map_recast, ctx));
	EXPECT_EQ(0x600df00d, ctx[3]);
	EXPECT_EQ((uint32_t)ptr_u64(cell), other_map_word(self->ofd, 1));
}

/* One load reached by an arena pointer on one path and the ctx on the other. */
TEST_F(adv, one_insn_two_pointer_kinds_is_refused)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, self->a.fd),
		I_LDX(BPF_DW, 3, 6, 8),
		I_MOV64_REG(2, 6),
		I_JMP_IMM(BPF_JEQ, 3, 0, 2),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_LDX(BPF_DW, 0, 2, 0),			/* arena or ctx */
		I_EXIT(),
	};

	EXPECT_REJECTED(insns, EINVAL, "same insn cannot be used with different pointers");
}

/* Two arenas, one program each, alive together: each writes only its own arena. */
TEST_F(adv, two_arenas_stay_separate)
{
	struct arena b;
	uint64_t *ca = (uint64_t *)(self->a.base + PG + 64);
	uint64_t *cb;
	int fa, fb;

	ASSERT_EQ(0, arena_open(&b, 4, 0, true));
	memset(b.base, 0, 2 * PG);
	cb = (uint64_t *)(b.base + PG + 64);
	{
		struct bpf_insn pa[] = {
			I_MOV64_REG(6, 1),
			I_LD_MAP_FD(1, self->a.fd),
			I_LDX(BPF_DW, 2, 6, 0),
			I_CAST_KERN(2, 2),
			I_LDX(BPF_DW, 3, 6, 8),
			I_STX(BPF_DW, 2, 3, 0),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};
		struct bpf_insn pb[] = {
			I_MOV64_REG(6, 1),
			I_LD_MAP_FD(1, b.fd),
			I_LDX(BPF_DW, 2, 6, 0),
			I_CAST_KERN(2, 2),
			I_LDX(BPF_DW, 3, 6, 8),
			I_STX(BPF_DW, 2, 3, 0),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};

		fa = LOAD(pa);
		ASSERT_LE(0, fa) TH_LOG("%s", vlog);
		fb = LOAD(pb);
		ASSERT_LE(0, fb) TH_LOG("%s", vlog);
	}
	{
		/* Each program gets the other arena's address: only the low 32 bits count. */
		uint64_t xa[2] = { ptr_u64(cb), 0xaaaa }, xb[2] = { ptr_u64(ca), 0xbbbb };
		uint64_t ya[2] = { ptr_u64(ca), 0xa1 }, yb[2] = { ptr_u64(cb), 0xb1 };

		*ca = 0;
		*cb = 0;
		EXPECT_EQ(0, run_syscall_prog(fa, ya, sizeof(ya)));
		EXPECT_EQ(0, run_syscall_prog(fb, yb, sizeof(yb)));
		EXPECT_EQ(0xa1, *ca);
		EXPECT_EQ(0xb1, *cb);
		/* Cross addresses: a's program writes into a at (u32)cb's place, never into b. */
		EXPECT_EQ(0, run_syscall_prog(fa, xa, sizeof(xa)));
		EXPECT_EQ(0, run_syscall_prog(fb, xb, sizeof(xb)));
		EXPECT_EQ(0xa1, *ca);
		EXPECT_EQ(0xb1, *cb);
	}
	close(fa);
	close(fb);
	arena_close(&b);
}

/* More than 1M instructions: E2BIG from the kernel (the module passes it on). */
TEST_F(adv, over_one_million_insns_is_e2big)
{
	unsigned int n = 1000001, i;
	struct bpf_insn *p = calloc(n, sizeof(*p));
	int fd;

	ASSERT_NE(NULL, p);
	p[0] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
				  .src_reg = BPF_PSEUDO_MAP_FD, .imm = self->a.fd };
	for (i = 2; i < n - 1; i++)
		p[i] = I_MOV64_IMM(0, 0);
	p[n - 1] = I_EXIT();
	fd = load_syscall_prog(p, n, vlog, LOG_SIZE);
	free(p);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(-E2BIG, fd);
}

/* Under 1M, but over it once every access becomes a 5-slot placeholder. */
TEST_F(adv, program_too_large_after_lowering_is_e2big)
{
	unsigned int loads = 210000, n = loads + 7, i;
	struct bpf_insn *p = calloc(n, sizeof(*p));
	struct timespec t0, t1;
	int fd;

	SKIP_IF_NATIVE("no lowering: it would verify 210k arena loads, too slow under TCG");
	ASSERT_NE(NULL, p);
	i = 0;
	p[i++] = I_MOV64_REG(6, 1);
	p[i++] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
				    .src_reg = BPF_PSEUDO_MAP_FD, .imm = self->a.fd };
	p[i++] = (struct bpf_insn){ 0 };
	p[i++] = I_LDX(BPF_DW, 2, 6, 0);
	p[i++] = I_CAST_KERN(2, 2);
	while (i < n - 2)
		p[i++] = I_LDX(BPF_DW, 3, 2, 0);
	p[i++] = I_MOV64_IMM(0, 0);
	p[i++] = I_EXIT();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = load_syscall_prog(p, n, vlog, LOG_SIZE);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	free(p);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(-E2BIG, fd);
	EXPECT_NE(NULL, strstr(vlog, "program is too large after arena lowering")) TH_LOG("%s", vlog);
	TH_LOG("refused in %.2f s", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/* A large straight-line arena program (8k loads, ~48k insns lowered) loads and sums right. */
TEST_F(adv, large_arena_program_loads_and_runs)
{
	unsigned int loads = 8192, n = 2 * loads + 10, i, k;
	struct bpf_insn *p = calloc(n, sizeof(*p));
	uint64_t *v = (uint64_t *)(self->a.base + PG);
	uint64_t ctx[2] = { ptr_u64(v) }, want = 0;
	struct timespec t0, t1;
	int fd;

	ASSERT_NE(NULL, p);
	for (k = 0; k < 512; k++)
		v[k] = k + 1;
	i = 0;
	p[i++] = I_MOV64_REG(6, 1);
	p[i++] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
				    .src_reg = BPF_PSEUDO_MAP_FD, .imm = self->a.fd };
	p[i++] = (struct bpf_insn){ 0 };
	p[i++] = I_LDX(BPF_DW, 2, 6, 0);
	p[i++] = I_CAST_KERN(2, 2);
	p[i++] = I_MOV64_IMM(0, 0);
	for (k = 0; k < loads; k++) {
		p[i++] = I_LDX(BPF_DW, 3, 2, (k % 512) * 8);
		p[i++] = I_ALU64_REG(BPF_ADD, 0, 3);
		want += k % 512 + 1;
	}
	p[i++] = I_STX(BPF_DW, 6, 0, 8);
	p[i++] = I_MOV64_IMM(0, 0);
	p[i++] = I_EXIT();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = load_syscall_prog(p, i, NULL, 0);	/* a log of ~50k insns would not fit */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (fd < 0)
		load_syscall_prog(p, i, vlog, LOG_SIZE);
	free(p);
	ASSERT_LE(0, fd) TH_LOG("%s: %.4000s", strerror(-fd), vlog);
	TH_LOG("loaded in %.2f s", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	EXPECT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
	EXPECT_EQ(want, ctx[1]);
	close(fd);
}

/* 16 threads load, run and close arena programs on one arena at once. */
#define THREADS 16
#define ROUNDS 4
struct thr {
	struct arena *a;
	unsigned int idx;
	int fails;
	char msg[256];
};

static void *load_thread(void *arg)
{
	struct thr *t = arg;
	unsigned int r;

	for (r = 0; r < ROUNDS; r++) {
		uint64_t *cell = (uint64_t *)(t->a->base + PG + (t->idx * ROUNDS + r) * 16);
		uint64_t want = 0xc0de000000000000ULL | t->idx << 8 | r;
		uint64_t ctx[3] = { ptr_u64(cell), want };
		struct bpf_insn insns[] = {
			I_MOV64_REG(6, 1),
			I_LD_MAP_FD(1, t->a->fd),
			I_LDX(BPF_DW, 2, 6, 0),
			I_CAST_KERN(2, 2),
			I_LDX(BPF_DW, 3, 6, 8),
			I_STX(BPF_DW, 2, 3, 0),
			I_LDX(BPF_DW, 4, 2, 0),
			I_STX(BPF_DW, 6, 4, 16),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};
		char log[4096];
		int fd = load_syscall_prog(insns, ARRAY_SIZE(insns), log, sizeof(log));

		if (fd < 0) {
			t->fails++;
			snprintf(t->msg, sizeof(t->msg), "load: %s: %s", strerror(-fd), log);
			continue;
		}
		if (run_syscall_prog(fd, ctx, sizeof(ctx)) != 0 || ctx[2] != want || *cell != want) {
			t->fails++;
			snprintf(t->msg, sizeof(t->msg), "round %u: got %llx/%llx", r,
				 (unsigned long long)ctx[2], (unsigned long long)*cell);
		}
		close(fd);
	}
	return NULL;
}

TEST_F(adv, concurrent_loads_from_16_threads)
{
	pthread_t tid[THREADS];
	struct thr t[THREADS];
	unsigned int i;

	for (i = 0; i < THREADS; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].a = &self->a;
		t[i].idx = i;
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, load_thread, &t[i]));
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, t[i].fails) TH_LOG("thread %u: %s", i, t[i].msg);
	}
}

/*
 * Kfuncs: the module's placeholder kfuncs called directly with forged first
 * arguments (the program's stack, another map's value): NULL / nothing.
 */
TEST_F(adv, placeholder_kfuncs_with_forged_args_do_nothing)
{
	uint32_t alloc_id, free_id;
	int btf_fd, btf_fd2, fds[2];
	uint64_t *page1 = (uint64_t *)(self->a.base + PG);
	uint64_t ctx[4] = { ptr_u64(page1) };
	unsigned int with_arena;

	SKIP_IF_NATIVE("the placeholder kfuncs are the module's");
	alloc_id = find_kernel_func("bpf_arena", "bpf_arena_alloc_pages_ph", &btf_fd);
	ASSERT_NE(0, alloc_id) TH_LOG("bpf_arena_alloc_pages_ph not in the module's BTF");
	free_id = find_kernel_func("bpf_arena", "bpf_arena_free_pages_ph", &btf_fd2);
	ASSERT_NE(0, free_id);
	close(btf_fd2);
	fds[0] = self->a.fd;
	fds[1] = btf_fd;
	for (with_arena = 0; with_arena < 2; with_arena++) {
		struct bpf_insn insns[] = {
			I_MOV64_REG(6, 1),
			NO_INSN, NO_INSN,		/* with_arena: the arena ld_imm64 */
			/* alloc_ph(&stack, 0, 1, -1, 0) */
			I_ST(BPF_DW, 10, -8, 0),
			I_MOV64_REG(1, 10),
			I_ALU64_IMM(BPF_ADD, 1, -8),
			I_MOV64_IMM(2, 0),
			I_MOV64_IMM(3, 1),
			I_MOV64_IMM(4, -1),
			I_MOV64_IMM(5, 0),
			I_CALL_KFUNC(alloc_id, 1),
			I_STX(BPF_DW, 6, 0, 8),
			/* alloc_ph(&other_map_value, 0, 1, -1, 0) */
			I_LD_MAP_VALUE(1, self->ofd, 0),
			I_MOV64_IMM(2, 0),
			I_MOV64_IMM(3, 1),
			I_MOV64_IMM(4, -1),
			I_MOV64_IMM(5, 0),
			I_CALL_KFUNC(alloc_id, 1),
			I_STX(BPF_DW, 6, 0, 16),
			/* free_ph(&stack, page 1, 1) and free_ph(&other_map_value, page 1, 1) */
			I_MOV64_REG(1, 10),
			I_ALU64_IMM(BPF_ADD, 1, -8),
			I_LDX(BPF_DW, 2, 6, 0),
			I_MOV64_IMM(3, 1),
			I_CALL_KFUNC(free_id, 1),
			I_LD_MAP_VALUE(1, self->ofd, 0),
			I_LDX(BPF_DW, 2, 6, 0),
			I_MOV64_IMM(3, 1),
			I_CALL_KFUNC(free_id, 1),
			I_MOV64_IMM(0, 6),
			I_EXIT(),
		};
		int fd;

		if (with_arena) {
			insns[1] = (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
						      .src_reg = BPF_PSEUDO_MAP_FD, .imm = self->a.fd };
			insns[2] = (struct bpf_insn){ 0 };
		}
		fd = load_prog_fd_array(insns, ARRAY_SIZE(insns), fds, vlog, LOG_SIZE);
		ASSERT_LE(0, fd) TH_LOG("with_arena %u: %s", with_arena, vlog);
		*page1 = 0x1234;
		ctx[1] = ctx[2] = 77;
		EXPECT_EQ(6, run_syscall_prog(fd, ctx, sizeof(ctx)));
		EXPECT_EQ(0, ctx[1]);
		EXPECT_EQ(0, ctx[2]);
		EXPECT_EQ(0x1234, *page1);		/* not freed */
		EXPECT_EQ(OVAL, other_map_word(self->ofd, 0));
		close(fd);
	}
	close(btf_fd);
}

/*
 * The upstream-named kfunc called with a stack pointer as its map argument, in a
 * program without an arena.  6.1 (module): the call becomes the run-time-map
 * variant, whose struct bpf_map * argument the stock verifier checks.  6.12: the
 * verifier checks the map argument.  Rejected either way.
 */
TEST_F(adv, arena_kfunc_with_forged_map_arg_is_refused)
{
	int btf_fd = -1, fds[2];
	uint32_t id;
	bool mod = !native();

	id = find_kernel_func(mod ? "bpf_arena" : "vmlinux", "bpf_arena_alloc_pages", &btf_fd);
	ASSERT_NE(0, id);
	fds[0] = self->a.fd;
	fds[1] = btf_fd;
	{
		struct bpf_insn insns[] = {
			I_ST(BPF_DW, 10, -8, 0),
			I_MOV64_REG(1, 10),
			I_ALU64_IMM(BPF_ADD, 1, -8),
			I_MOV64_IMM(2, 0),
			I_MOV64_IMM(3, 1),
			I_MOV64_IMM(4, -1),
			I_MOV64_IMM(5, 0),
			I_CALL_KFUNC(id, mod ? 1 : 0),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};
		int fd = load_prog_fd_array(insns, ARRAY_SIZE(insns), fds, vlog, LOG_SIZE);

		if (fd >= 0)
			close(fd);
		EXPECT_GT(0, fd);
		if (mod) {
			EXPECT_NE(NULL, strstr(vlog, "arg#0 pointer type STRUCT bpf_map must point to scalar"))
				TH_LOG("%s", vlog);
		} else {
			EXPECT_NE(NULL, strstr(vlog, "pointer in R1 isn't map pointer")) TH_LOG("%s", vlog);
		}
	}
	close(btf_fd);
}

/* Module unload: refused while an arena program lives, clean once it is freed. */
TEST(module_unload_refused_while_programs_live)
{
	struct arena a;
	char buf[32];
	int fd, err;

	if (native())
		SKIP(return, "6.12 has in-tree arena: no module");
	if (!kmod_is_loaded())
		ASSERT_EQ(0, kmod_load());
	ASSERT_EQ(0, arena_open(&a, 4, 0, true));
	{
		uint64_t ctx[2] = { ptr_u64(a.base), 0x99 };
		struct bpf_insn insns[] = {
			I_MOV64_REG(6, 1),
			I_LD_MAP_FD(1, a.fd),
			I_LDX(BPF_DW, 2, 6, 0),
			I_CAST_KERN(2, 2),
			I_LDX(BPF_DW, 3, 6, 8),
			I_STX(BPF_DW, 2, 3, 0),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};

		fd = LOAD(insns);
		ASSERT_LE(0, fd) TH_LOG("%s", vlog);
		arena_close(&a);		/* only the program holds the arena now */
		err = kmod_unload();
		EXPECT_TRUE(err == -EAGAIN || err == -EBUSY) TH_LOG("unload: %d", err);
		EXPECT_TRUE(kmod_is_loaded());
		ASSERT_TRUE(read_line("/sys/module/bpf_arena/refcnt", buf, sizeof(buf)));
		EXPECT_NE(0, atoi(buf));
		EXPECT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));	/* still runs */
		close(fd);
	}
	/* Program and arena are freed through RCU and work queues: wait for them. */
	err = kmod_unload_when_idle(10000);
	EXPECT_EQ(0, err) TH_LOG("unload after free: %d (after 10 s)", err);
	EXPECT_FALSE(kmod_is_loaded());
	/* Reload for the tests that follow, and check it works. */
	if (!kmod_is_loaded())
		ASSERT_EQ(0, kmod_load());
	ASSERT_EQ(0, arena_open(&a, 4, 0, true));
	{
		uint64_t ctx[2] = { ptr_u64(a.base + 8), 0x77 };
		struct bpf_insn insns[] = {
			I_MOV64_REG(6, 1),
			I_LD_MAP_FD(1, a.fd),
			I_LDX(BPF_DW, 2, 6, 0),
			I_CAST_KERN(2, 2),
			I_LDX(BPF_DW, 3, 6, 8),
			I_STX(BPF_DW, 2, 3, 0),
			I_MOV64_IMM(0, 0),
			I_EXIT(),
		};

		a.base[8] = 0;
		fd = LOAD(insns);
		ASSERT_LE(0, fd) TH_LOG("%s", vlog);
		EXPECT_EQ(0, run_syscall_prog(fd, ctx, sizeof(ctx)));
		EXPECT_EQ(0x77, *(uint64_t *)(a.base + 8));
		close(fd);
	}
	arena_close(&a);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * A syscall program 6.12 refuses whose may_goto loop reaches the context
 * through a join (tests/include/ctx_join_prog.h): refused on both kernels.
 * Prints what the load answered.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"
#include "ctx_join_prog.h"

#define LOG_SIZE (1 << 20)
static char vlog[LOG_SIZE];

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

// SPDX-License-Identifier: GPL-2.0
/*
 * The programs of examples/ (examples/README.md), each built the two ways a
 * Debian 12 user builds them (examples/examples.mk): "bpo" with clang-19,
 * bookworm-backports' libbpf 1.4.6 and bpftool 7.5; "stock" with clang-14
 * (first: clang-19), bookworm's libbpf 1.1 and bpftool 7.1.  Each example
 * checks its own results and exits non-zero on a wrong one; this test runs
 * it and wants exit status 0 and its one-line summary ending in ": ok" (first,
 * the README's program: "42 1").  Same on 6.1 with the module and on 6.12.
 *
 * The binaries sit next to this test (build/tests/example_NAME.FLAVOUR);
 * first opens first.bpf.o from its working directory, so it runs in a
 * temporary directory holding a link named so.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "test_util.h"

FIXTURE(example) {
	char dir[PATH_MAX];	/* where this test and the examples are */
	char tmp[64];		/* first's working directory */
};

FIXTURE_VARIANT(example) {
	const char *name, *flavour;
	const char *want;	/* a line of the output */
};

#define EXAMPLE(NAME, FLAVOUR, WANT)						\
	FIXTURE_VARIANT_ADD(example, NAME##_##FLAVOUR) {			\
		.name = #NAME, .flavour = #FLAVOUR, .want = WANT,		\
	}

EXAMPLE(first, bpo, "42 1\n");
EXAMPLE(first, stock, "42 1\n");
EXAMPLE(htab, bpo, ": ok\n");
EXAMPLE(htab, stock, ": ok\n");
EXAMPLE(ring, bpo, ": ok\n");
EXAMPLE(ring, stock, ": ok\n");
EXAMPLE(alloc, bpo, ": ok\n");
EXAMPLE(alloc, stock, ": ok\n");

FIXTURE_SETUP(example)
{
	ssize_t n = readlink("/proc/self/exe", self->dir, sizeof(self->dir) - 1);

	ASSERT_LT(0, n);
	self->dir[n] = 0;
	*strrchr(self->dir, '/') = 0;
	strcpy(self->tmp, "/tmp/examples_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->tmp));
}

FIXTURE_TEARDOWN(example)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->tmp);
	if (system(cmd))
		TH_LOG("could not remove %s", self->tmp);
}

/* The example's binary into bin, and its own layout: first.bpf.o next to where first runs. */
static void example_bin(struct __test_metadata *_metadata, FIXTURE_DATA(example) *self,
			const FIXTURE_VARIANT(example) *variant, char *bin, size_t len)
{
	char obj[PATH_MAX + 80], link[128];

	snprintf(bin, len, "%s/example_%s.%s", self->dir, variant->name, variant->flavour);
	ASSERT_EQ(0, access(bin, X_OK)) TH_LOG("%s: not built (make examples)", bin);
	snprintf(obj, sizeof(obj), "%s.bpf.o", bin);
	if (!access(obj, R_OK)) {
		snprintf(link, sizeof(link), "%s/%s.bpf.o", self->tmp, variant->name);
		ASSERT_EQ(0, symlink(obj, link));
	}
}

TEST_F_TIMEOUT(example, runs_and_checks_its_results, 120)
{
	char bin[PATH_MAX + 64], cmd[2 * PATH_MAX], out[4096];
	int rc;

	example_bin(_metadata, self, variant, bin, sizeof(bin));
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' 2>&1", self->tmp, bin);
	rc = run_cmd(cmd, out, sizeof(out));
	/* The example's output, one "#" line each (KTAP comments). */
	for (const char *l = out, *nl; *l; l = nl + 1) {
		nl = strchrnul(l, '\n');
		TH_LOG("%s.%s: %.*s", variant->name, variant->flavour, (int)(nl - l), l);
		if (!*nl)
			break;
	}
	EXPECT_EQ(0, rc) TH_LOG("exit status %d", rc);
	EXPECT_NE(NULL, strstr(out, variant->want)) TH_LOG("want \"%s\" in the output", variant->want);
}

/*
 * On 6.1 without the module loaded, each example stops before loading and
 * says what to do (bpf_arena_kernel_ready()), instead of libbpf's bare
 * "failed to create: Invalid argument".
 */
TEST_F_TIMEOUT(example, says_what_to_do_without_the_module, 120)
{
	char bin[PATH_MAX + 64], cmd[2 * PATH_MAX], out[4096];
	int rc;

	if (kernel_has_native_arena())
		SKIP(return, "kernel has native BPF arena: no module to miss");
	example_bin(_metadata, self, variant, bin, sizeof(bin));
	if (kmod_is_loaded())
		ASSERT_EQ(0, kmod_unload_when_idle(5000));
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' 2>&1", self->tmp, bin);
	rc = run_cmd(cmd, out, sizeof(out));
	EXPECT_EQ(0, kmod_load());
	EXPECT_NE(0, rc);
	EXPECT_NE(NULL, strstr(out, "has no BPF arena of its own and the bpf_arena module is "
			       "not installed for it")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "Invalid argument")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN

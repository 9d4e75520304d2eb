// SPDX-License-Identifier: GPL-2.0
/*
 * raise_stats FILE...: what the raise's optimisations (rewrite/raise.c) do to
 * real programs.  Each FILE is a lower_fuzz input (objseed.py makes one per
 * SEC("syscall") program of a BPF object); it runs through the fuzz target
 * (lowering, raise, and every check of lower_fuzz.c) and the optimised
 * raise of the lowered program is counted: forms raised, `wS = wS` left out,
 * bases reused.  One line per file, then the totals.  `make raise-stats`.
 */
#include <stdbool.h>
#include <stdio.h>

#include "raise.h"

static unsigned long n_forms, n_dropped, n_reused, n_progs;
static const char *cur;

/* The fuzz target's first optimised raise of an input is that of the lowered program. */
static bool counted;

static int counting_raise(const struct bpfa_raise_env *e, struct bpf_insn *p, __u32 n,
			  struct bpfa_raise_result *r)
{
	int err = bpfa_raise(e, p, n, r);

	if (e->targets && !err && !counted && r->raised) {
		counted = true;
		n_progs++;
		n_forms += r->raised;
		n_dropped += r->dropped_zext;
		n_reused += r->reused_ax;
		printf("%-48s forms %4u  zext left out %4u  base reused %4u\n", cur, r->raised,
		       r->dropped_zext, r->reused_ax);
	}
	return err;
}

#define bpfa_raise counting_raise
#include "lower_fuzz.c"
#undef bpfa_raise

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 20];
	int a;

	for (a = 1; a < argc; a++) {
		FILE *f = fopen(argv[a], "rb");
		size_t sz;

		if (!f) {
			perror(argv[a]);
			return 1;
		}
		sz = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		cur = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
		counted = false;
		LLVMFuzzerTestOneInput(buf, sz);
	}
	printf("total: %lu programs, %lu forms, zext left out %lu (%.1f %%), base reused %lu (%.1f %%)\n",
	       n_progs, n_forms, n_dropped, n_forms ? 100.0 * n_dropped / n_forms : 0.0, n_reused,
	       n_forms ? 100.0 * n_reused / n_forms : 0.0);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * An arena's kernel window (4 GiB + guard of vmalloc space) gets kernel page
 * tables as pages are mapped into it: one PTE page per 2 MiB touched.  Linux
 * never frees vmalloc page tables (vunmap only clears PTEs), so each window
 * created at an address not used before left up to 8 MiB of page tables that
 * no memory cgroup is charged for: a 10-minute make fuzz-syscalls ended with
 * 100 MB less free memory after rmmod, and 6.12's in-tree arena does the same
 * (measured: create, touch every 2 MiB, destroy: +8 MiB a round until the
 * addresses are reused).  The module frees the PTE pages that map only its
 * window when the arena goes (module/arena_mem.c, unhook_window_pte_pages()).
 *
 * destroyed_windows_return_their_page_tables: rounds of an arena touched
 * once every 2 MiB over its 4 GiB, then destroyed; then an untouched spacer
 * arena is created and held to the end, which takes the lowest free window
 * (vmalloc's placement), that is the one just freed: so every round's
 * window is at an address no earlier round used, where the tables are new.
 * Free memory (MemFree and the per-CPU free lists) must come back to where
 * it was before the rounds within 4 MiB: the spacers cost 0.5 MiB a round;
 * keeping the PTE pages cost 8.7 MiB a round, 34 MiB after 4.  6.1 + module
 * only: 6.12 keeps them (upstream behaviour).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "test_util.h"
#include <bpf_arena_lib.h>

#define ARENA_PAGES	(1U << 20)		/* 4 GiB: the whole window */
#define STRIDE		(2UL << 20)		/* one PTE page each */
#define ROUNDS		4
#define SLACK_KB	4096

/* free_kib() after dropping the caches. */
static long mem_free_kb(void)
{
	sync();
	write_str("/proc/sys/vm/drop_caches", "3\n");
	usleep(300 * 1000);
	return free_kib();
}

/* One touched arena, destroyed; returns the spacer that takes its window. */
static struct bpf_arena *round_trip(void)
{
	struct bpf_arena *a = NULL, *spacer = NULL;
	BPF_ARENA_OPTS(opts);
	char *base;

	if (bpf_arena_create(ARENA_PAGES, &opts, &a))
		return NULL;
	base = bpf_arena_base(a);
	for (size_t off = 0; off < bpf_arena_size(a); off += STRIDE)
		base[off] = 1;
	bpf_arena_destroy(a);
	mem_free_kb();	/* and time for the vmalloc purge work */
	if (bpf_arena_create(ARENA_PAGES, &opts, &spacer))
		return NULL;
	return spacer;
}

TEST(destroyed_windows_return_their_page_tables)
{
	struct bpf_arena *spacer[ROUNDS] = {};
	long base, now = 0;

	if (kernel_has_native_arena())
		SKIP(return, "native arena: the kernel keeps vmalloc page tables (upstream behaviour)");
	if (geteuid())
		SKIP(return, "needs root (drop_caches, for a stable MemFree)");
	base = mem_free_kb();
	ASSERT_LT(0, base);
	for (int r = 0; r < ROUNDS; r++) {
		spacer[r] = round_trip();
		ASSERT_NE(NULL, spacer[r]);
		now = mem_free_kb();
		TH_LOG("round %d: free memory %ld kB below the start", r + 1, base - now);
	}
	for (int r = 0; r < ROUNDS; r++)
		bpf_arena_destroy(spacer[r]);
	EXPECT_GE(now, base - SLACK_KB)
		TH_LOG("windows kept %ld kB after %d rounds (slack %d kB)", base - now, ROUNDS,
		       SLACK_KB);
}

TEST_HARNESS_MAIN

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The allocator the unit tests give the rewriter's passes (their env's
 * zalloc and free): calloc() and free(), counting the blocks alive, which
 * every test checks is back to 0 once it has freed the results.
 */
#ifndef BPF_ARENA_TESTS_REWRITE_ENV_H
#define BPF_ARENA_TESTS_REWRITE_ENV_H

#include <stdlib.h>

static long live_allocs;

static inline void *t_zalloc(void *ctx, size_t size)
{
	(void)ctx;
	live_allocs++;
	return calloc(1, size);
}

static inline void t_free(void *ctx, void *p)
{
	(void)ctx;
	live_allocs--;
	free(p);
}

#endif /* BPF_ARENA_TESTS_REWRITE_ENV_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_arena_reserve_pages() (upstream 6.17): ports of upstream's
 * progs/verifier_arena.c basic_reserve1, basic_reserve2, reserve_twice and
 * reserve_invalid_region, each as a sleepable SEC("syscall") program and as
 * a non-sleepable SEC("tc") copy (upstream's *_nosleep tests use "socket",
 * which 6.1 does not let call kfuncs), plus what upstream's tests leave out:
 * a reserved page reads 0 and drops stores, an allocated page cannot be
 * reserved, a reserved range can be freed and then allocated, and an
 * unaligned address reserves nothing (upstream returns 0 for it).
 *
 * Return 0: pass; another value names the failed check, as upstream.
 * Differs from upstream: arena_base(&arena) is the constant RESV_BASE (the
 * loader sets map_extra to it); the asm build derefs through cast_kern().
 */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"
#include "arena_kfunc_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RESV_PAGES);
} arena SEC(".maps");

#define KP(type, p) ({ type __k = (p); cast_kern(__k); __k; })
#define BASE ((char __arena *)RESV_BASE)

static __always_inline int basic_reserve1(void)
{
	char __arena *page;
	int ret;

	page = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!page)
		return 1;
	page += PAGE_SIZE;
	/* Reserve the second page */
	ret = bpf_arena_reserve_pages(&arena, page, 1);
	if (ret)
		return 2;
	/* Try to explicitly allocate the reserved page. */
	page = bpf_arena_alloc_pages(&arena, page, 1, NUMA_NO_NODE, 0);
	if (page)
		return 3;
	/* Try to implicitly allocate the page (since there's only 2 of them). */
	page = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (page)
		return 4;
	return 0;
}

static __always_inline int basic_reserve2(void)
{
	char __arena *page = BASE;
	int ret;

	ret = bpf_arena_reserve_pages(&arena, page, 1);
	if (ret)
		return 1;
	page = bpf_arena_alloc_pages(&arena, page, 1, NUMA_NO_NODE, 0);
	if (page)
		return 2;
	return 0;
}

static __always_inline int reserve_twice(void)
{
	int ret;

	ret = bpf_arena_reserve_pages(&arena, BASE, 1);
	if (ret)
		return 1;
	ret = bpf_arena_reserve_pages(&arena, BASE, 1);
	if (ret != -EBUSY)
		return 2;
	return 0;
}

static __always_inline int reserve_invalid_region(void)
{
	int ret;

	/* NULL is page 2 of this arena (low 32 bits wrap): 2 + 3 > 2 pages. */
	ret = bpf_arena_reserve_pages(&arena, NULL, 3);
	if (ret != -EINVAL)
		return 1;
	ret = bpf_arena_reserve_pages(&arena, BASE, 3);
	if (ret != -EINVAL)
		return 2;
	ret = bpf_arena_reserve_pages(&arena, BASE, 4096);
	if (ret != -EINVAL)
		return 3;
	ret = bpf_arena_reserve_pages(&arena, BASE, (1ULL << 32) - 1);
	if (ret != -EINVAL)
		return 4;
	/* page_cnt 0: nothing to do (upstream returns 0 before any check) */
	ret = bpf_arena_reserve_pages(&arena, BASE, 0);
	if (ret)
		return 5;
	return 0;
}

/* Beyond upstream's tests: what a reserved page is. */
static __always_inline int reserve_semantics(bool sleepable)
{
	volatile char __arena *p0 = BASE, *p1 = BASE + PAGE_SIZE;
	char __arena *page;
	int ret;

	/* Unaligned: upstream returns 0 and reserves nothing. */
	ret = bpf_arena_reserve_pages(&arena, BASE + 8, 1);
	if (ret)
		return 1;
	page = bpf_arena_alloc_pages(&arena, BASE, 1, NUMA_NO_NODE, 0);
	if (page != BASE)
		return 2;
	/* An allocated page cannot be reserved. */
	ret = bpf_arena_reserve_pages(&arena, BASE, 1);
	if (ret != -EBUSY)
		return 3;
	/* Nor a range that includes one. */
	ret = bpf_arena_reserve_pages(&arena, BASE, 2);
	if (ret != -EBUSY)
		return 4;
	*KP(volatile char __arena *, p0) = 7;
	ret = bpf_arena_reserve_pages(&arena, BASE + PAGE_SIZE, 1);
	if (ret)
		return 5;
	/* A reserved page has no memory: loads read 0, stores are dropped. */
	if (*KP(volatile char __arena *, p1) != 0)
		return 6;
	*KP(volatile char __arena *, p1) = 9;
	if (*KP(volatile char __arena *, p1) != 0)
		return 7;
	if (*KP(volatile char __arena *, p0) != 7)
		return 8;
	/* Freeing a reserved range releases it: it can be allocated again. */
	bpf_arena_free_pages(&arena, BASE + PAGE_SIZE, 1);
	page = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (page != BASE + PAGE_SIZE)
		return 9;
	if (*KP(volatile char __arena *, p1) != 0)
		return 10;
	bpf_arena_free_pages(&arena, BASE + PAGE_SIZE, 1);
	ret = bpf_arena_reserve_pages(&arena, BASE + PAGE_SIZE, 1);
	/*
	 * Sleepable: the page is free again; leave it reserved for the
	 * user-space checks after the run.  Non-sleepable: a freed page stays
	 * used until the deferred unmapping has run (as upstream), which the
	 * work item may already have done on the other CPU (seen on the
	 * debug and PREEMPT_RT kernels): -EBUSY before, 0 after.
	 */
	if (sleepable ? ret != 0 : ret != 0 && ret != -EBUSY)
		return 11;
	return 0;
}

#define BOTH(name)							\
	SEC("syscall") int name##_s(void *ctx) { return name(); }		\
	SEC("tc") int name##_nosleep(void *ctx) { return name(); }

BOTH(basic_reserve1)
BOTH(basic_reserve2)
BOTH(reserve_twice)
BOTH(reserve_invalid_region)

SEC("syscall") int reserve_semantics_s(void *ctx) { return reserve_semantics(true); }
SEC("tc") int reserve_semantics_nosleep(void *ctx) { return reserve_semantics(false); }

char _license[] SEC("license") = "GPL";

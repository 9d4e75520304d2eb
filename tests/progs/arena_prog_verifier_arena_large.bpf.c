// SPDX-License-Identifier: GPL-2.0
/*
 * Port of upstream's progs/verifier_arena_large.c big_alloc1: a 4 GiB arena
 * (no map_extra: the kernel picks a 4 GiB-aligned address), allocations at
 * any address and at the very end, the wrap of the low 32 bits, frees and
 * reads after free.  Return 0: pass; another value names the failed check.
 *
 * Differs from upstream: upstream's page 0 holds libbpf-placed arena
 * globals; here the program allocates page 0 first ("state" page) so the
 * rest runs as upstream.  The arena base comes from user space in
 * ctx->addr (upstream reads it with CO-RE from struct bpf_arena, which 6.1
 * does not have) and is checked against that first allocation.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"
#include "arena_prog_common.h"

#define ARENA_SIZE (1ull << 32)

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, ARENA_SIZE / PAGE_SIZE);
} arena SEC(".maps");

#define KP(type, p) ({ type __k = (p); cast_kern(__k); __k; })

SEC("syscall")
int big_alloc1(struct fault_args *args)
{
	volatile char __arena *state, *page1, *page2, *no_page, *page3;
	__u64 base = args->addr;

	state = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!state || (__u64)state != base)
		return 16;
	page1 = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!page1)
		return 1;
	if ((__u64)page1 != base + PAGE_SIZE)
		return 15;
	*KP(volatile char __arena *, page1) = 1;
	page2 = bpf_arena_alloc_pages(&arena, (void __arena *)(ARENA_SIZE - PAGE_SIZE),
				      1, NUMA_NO_NODE, 0);
	if (!page2)
		return 2;
	*KP(volatile char __arena *, page2) = 2;
	/* low 32 bits 0: page 0, taken */
	no_page = bpf_arena_alloc_pages(&arena, (void __arena *)ARENA_SIZE, 1, NUMA_NO_NODE, 0);
	if (no_page)
		return 3;
	/* not upstream: two pages starting at the last page cross the end */
	no_page = bpf_arena_alloc_pages(&arena, (void __arena *)(ARENA_SIZE - PAGE_SIZE),
					2, NUMA_NO_NODE, 0);
	if (no_page)
		return 17;
	if (*KP(volatile char __arena *, page1) != 1)
		return 4;
	if (*KP(volatile char __arena *, page2) != 2)
		return 5;
	bpf_arena_free_pages(&arena, (void __arena *)page1, 1);
	if (*KP(volatile char __arena *, page2) != 2)
		return 6;
	if (*KP(volatile char __arena *, page1) != 0) /* use-after-free should return 0 */
		return 7;
	page3 = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!page3)
		return 8;
	*KP(volatile char __arena *, page3) = 3;
	if (page1 != page3)
		return 9;
	if (*KP(volatile char __arena *, page2) != 2)
		return 10;
	if (*KP(volatile char __arena *, page1 + PAGE_SIZE) != 0)
		return 11;
	if (*KP(volatile char __arena *, page1 - PAGE_SIZE) != 0)
		return 12;
	if (*KP(volatile char __arena *, page2 + PAGE_SIZE) != 0)
		return 13;
	if (*KP(volatile char __arena *, page2 - PAGE_SIZE) != 0)
		return 14;
	/* user space checks these pages' contents too */
	args->val = (__u64)page1;
	args->val2 = (__u64)page2;
	return 0;
}

char _license[] SEC("license") = "GPL";

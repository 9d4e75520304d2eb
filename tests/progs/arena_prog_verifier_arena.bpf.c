// SPDX-License-Identifier: GPL-2.0
/*
 * Port of upstream's progs/verifier_arena.c basic_alloc1 and basic_alloc2:
 * a 2-page arena placed right below a 4 GiB boundary.  Return 0: pass;
 * another value names the failed check, as upstream.
 *
 * Differs from upstream: map_extra ((1 << 44) | (~0u - 2 * PAGE_SIZE + 1))
 * is set by the loader with bpf_map__set_map_extra(): libbpf 1.1 reads a
 * 32-bit map_extra only.  The __BPF_FEATURE_ADDR_SPACE_CAST gate is gone:
 * the asm build (clang < 19) runs the same checks with explicit casts.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);	/* arena of two pages close to a 32-bit boundary */
} arena SEC(".maps");

/*
 * In the asm build a pointer is dereferenced through a cast_kern()ed copy;
 * the user-form pointer itself is kept for comparisons and frees.
 */
#define KP(type, p) ({ type __k = (p); cast_kern(__k); __k; })

SEC("syscall")
int basic_alloc1(void *ctx)
{
	volatile int __arena *page1, *page2, *no_page, *page3;

	page1 = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!page1)
		return 1;
	*KP(volatile int __arena *, page1) = 1;
	page2 = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!page2)
		return 2;
	*KP(volatile int __arena *, page2) = 2;
	no_page = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (no_page)
		return 3;
	if (*KP(volatile int __arena *, page1) != 1)
		return 4;
	if (*KP(volatile int __arena *, page2) != 2)
		return 5;
	bpf_arena_free_pages(&arena, (void __arena *)page2, 1);
	if (*KP(volatile int __arena *, page1) != 1)
		return 6;
	if (*KP(volatile int __arena *, page2) != 0) /* use-after-free should return 0 */
		return 7;
	page3 = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!page3)
		return 8;
	*KP(volatile int __arena *, page3) = 3;
	if (page2 != page3)
		return 9;
	if (*KP(volatile int __arena *, page1) != 1)
		return 10;
	return 0;
}

SEC("syscall")
int basic_alloc2(void *ctx)
{
	volatile char __arena *page1, *page2, *page3, *page4;

	page1 = bpf_arena_alloc_pages(&arena, NULL, 2, NUMA_NO_NODE, 0);
	if (!page1)
		return 1;
	page2 = page1 + PAGE_SIZE;
	page3 = page1 + PAGE_SIZE * 2;	/* past the end: wraps to low 32 bits 0 */
	page4 = page1 - PAGE_SIZE;	/* below the start */
	*KP(volatile char __arena *, page1) = 1;
	*KP(volatile char __arena *, page2) = 2;
	*KP(volatile char __arena *, page3) = 3;
	*KP(volatile char __arena *, page4) = 4;
	if (*KP(volatile char __arena *, page1) != 1)
		return 1;
	if (*KP(volatile char __arena *, page2) != 2)
		return 2;
	if (*KP(volatile char __arena *, page3) != 0)
		return 3;
	if (*KP(volatile char __arena *, page4) != 0)
		return 4;
	bpf_arena_free_pages(&arena, (void __arena *)page1, 2);
	if (*KP(volatile char __arena *, page1) != 0)
		return 5;
	if (*KP(volatile char __arena *, page2) != 0)
		return 6;
	if (*KP(volatile char __arena *, page3) != 0)
		return 7;
	if (*KP(volatile char __arena *, page4) != 0)
		return 8;
	return 0;
}

char _license[] SEC("license") = "GPL";

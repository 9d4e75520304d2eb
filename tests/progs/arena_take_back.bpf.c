// SPDX-License-Identifier: GPL-2.0
/*
 * The take-back of pages a non-sleepable free left to the work item
 * (module/arena_nosleep.c, reclaim_freeing()), from attack review 4: TC
 * programs that free a page and at once allocate again, and a storm of
 * mixed-size allocations and frees that checks every fresh page is zero.
 */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bpf_arena.h"
#include "arena_kfunc_common.h"

#define RR_PAGES	4096
#define RR_MAP_EXTRA	(1ULL << 45)

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RR_PAGES);
} arena SEC(".maps");

#define KP(type, p) ({ type __k = (p); cast_kern(__k); __k; })

__u64 last_page;
__u64 realloc_page;
__u64 bad_data;
__u64 bad_sys;
__u64 bad_val;
__u64 bad_addr;
__u64 allocs;
__u64 fails;
__u32 seed = 1;

/* Allocates one page, tags it 0x1111 (what its first owner wrote). */
SEC("tc")
int tc_alloc_keep(void *ctx)
{
	volatile __u64 __arena *p;

	p = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!p)
		return 1;
	*KP(volatile __u64 __arena *, p) = 0x1111;
	last_page = (__u64)p;
	return 0;
}

/* Frees last_page, allocates one page, writes the new owner's secret 0x2222. */
SEC("tc")
int tc_free_realloc_secret(void *ctx)
{
	volatile __u64 __arena *p;

	bpf_arena_free_pages(&arena, (void __arena *)last_page, 1);
	p = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!p)
		return 1;
	if (*KP(volatile __u64 __arena *, p) != 0)
		bad_data++;
	*KP(volatile __u64 __arena *, p) = 0x2222;
	realloc_page = (__u64)p;
	return 0;
}

SEC("tc")
int tc_free_last(void *ctx)
{
	bpf_arena_free_pages(&arena, (void __arena *)last_page, 1);
	return 0;
}

SEC("tc")
int tc_alloc_secret(void *ctx)
{
	volatile __u64 __arena *p;

	p = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!p)
		return 1;
	*KP(volatile __u64 __arena *, p) = 0x2222;
	realloc_page = (__u64)p;
	return 0;
}

/*
 * Storm: 4 rounds of alloc n (1..16) pages, check words 0, 1 and 511 of
 * every page are zero, write a tag everywhere it checked, free half of the
 * time at once, else at the next round (so frees pile up for take-back).
 */
SEC("tc")
int tc_storm(void *ctx)
{
	volatile __u64 __arena *prev = NULL, *p;
	__u32 prev_n = 0, n, i, j;

	for (i = 0; i < 4; i++) {
		seed = seed * 1103515245 + 12345;
		n = ((seed >> 16) & 15) + 1;
		p = bpf_arena_alloc_pages(&arena, NULL, n, NUMA_NO_NODE, 0);
		if (!p) {
			__sync_fetch_and_add(&fails, 1);
			continue;
		}
		__sync_fetch_and_add(&allocs, 1);
		for (j = 0; j < 2; j++) {
			/* The first and the last page of the allocation. */
			__u32 k = j ? n - 1 : 0;

			if (j && n == 1)
				break;
			volatile __u64 __arena *q = KP(volatile __u64 __arena *, p) + (k & 15) * 512;

			if (q[0] || q[1] || q[511]) {
				__sync_fetch_and_add(&bad_data, 1);
				bad_val = q[0] ^ (q[1] << 32) ^ q[511];
				bad_addr = (__u64)p;
			}
			q[0] = 0xdead0000 + (k & 15);
			q[1] = (__u64)p;
			q[511] = 0xbeef;
		}
		if (prev)
			bpf_arena_free_pages(&arena, (void __arena *)prev, prev_n);
		prev = NULL;
		if (seed & 0x100000) {
			bpf_arena_free_pages(&arena, (void __arena *)p, n);
		} else {
			prev = p;
			prev_n = n;
		}
	}
	if (prev)
		bpf_arena_free_pages(&arena, (void __arena *)prev, prev_n);
	return 0;
}

/* Sleepable: allocate/free concurrently with the storm, and free everything. */
SEC("syscall")
int sys_round(void *ctx)
{
	volatile __u64 __arena *p;

	p = bpf_arena_alloc_pages(&arena, NULL, 3, NUMA_NO_NODE, 0);
	if (!p)
		return 1;
	if (*KP(volatile __u64 __arena *, p) || KP(volatile __u64 __arena *, p)[1024])
		__sync_fetch_and_add(&bad_sys, 1);
	*KP(volatile __u64 __arena *, p) = 7;
	bpf_arena_free_pages(&arena, (void __arena *)p, 3);
	return 0;
}

SEC("syscall")
int sys_free_all(void *ctx)
{
	bpf_arena_free_pages(&arena, (void __arena *)RR_MAP_EXTRA, RR_PAGES);
	return 0;
}

char _license[] SEC("license") = "GPL";

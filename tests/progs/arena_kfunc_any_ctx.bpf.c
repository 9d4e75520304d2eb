// SPDX-License-Identifier: GPL-2.0
/*
 * The arena kfuncs from non-sleepable programs (upstream since late 2025):
 * XDP and TC (the _nosleep_ allocator: pool, then GFP_NOWAIT), fentry (the
 * _any_ allocator: pool only), a non-sleepable syscall program, and, for
 * comparison, the sleepable syscall program 6.12 requires.  Upstream's own
 * *_nosleep tests (basic_alloc1/2/3_nosleep, big_alloc3) are ported here as
 * TC programs (upstream uses "socket", which cannot call kfuncs on 6.1).
 *
 * nested_in_lock runs inside the arena's locked section: fentry on
 * apply_to_page_range(), which a non-sleepable allocation calls with the
 * arena's page lock held.  Its calls must fail cleanly, never deadlock.
 */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bpf_arena.h"
#include "arena_kfunc_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, ANY_PAGES);
} arena SEC(".maps");

#define KP(type, p) ({ type __k = (p); cast_kern(__k); __k; })

struct any_stats stats;
/* in: pages per call, calls per run, keep (1: do not free), the tgid to act for */
__u32 pages_per_call = 1;
__u32 calls_per_run = 1;
__u32 keep;
__u32 armed_tgid;
/* out: the last allocation of a keep run */
__u64 last_page;

/* One round: allocate, check zeroed, write, read back, free (unless keep). */
static __always_inline int one_round(void)
{
	volatile __u64 __arena *p;
	__u32 i;

	for (i = 0; i < calls_per_run && i < 64; i++) {
		p = bpf_arena_alloc_pages(&arena, NULL, pages_per_call, NUMA_NO_NODE, 0);
		__sync_fetch_and_add(&stats.runs, 1);
		if (!p) {
			__sync_fetch_and_add(&stats.fails, 1);
			continue;
		}
		__sync_fetch_and_add(&stats.allocs, 1);
		if (*KP(volatile __u64 __arena *, p) != 0)
			__sync_fetch_and_add(&stats.bad_data, 1);
		*KP(volatile __u64 __arena *, p) = 0x5a5a;
		if (*KP(volatile __u64 __arena *, p) != 0x5a5a)
			__sync_fetch_and_add(&stats.bad_data, 1);
		if (keep)
			last_page = (__u64)p;
		else
			bpf_arena_free_pages(&arena, (void __arena *)p, pages_per_call);
	}
	return 0;
}

SEC("xdp")
int xdp_round(struct xdp_md *ctx)
{
	one_round();
	return XDP_PASS;
}

SEC("tc")
int tc_round(void *ctx)
{
	return one_round();
}

/* Non-sleepable syscall program: "syscall" is sleepable in libbpf, the loader clears it. */
SEC("syscall")
int syscall_nosleep_round(void *ctx)
{
	return one_round();
}

SEC("syscall")
int syscall_sleepable_round(void *ctx)
{
	return one_round();
}

/* Frees last_page from a non-sleepable program (deferred unmapping). */
SEC("tc")
int tc_free_last(void *ctx)
{
	bpf_arena_free_pages(&arena, (void __arena *)last_page, 1);
	return 0;
}

/*
 * Frees last_page and at once allocates one page (both deferred-free era:
 * the work item has most likely not run in between).  The page must come
 * back zeroed, wherever it comes from; realloc_page says where it is.
 */
__u64 realloc_page;
__u32 realloc_fixed;	/* 1: allocate at last_page's address */

SEC("tc")
int tc_free_realloc(void *ctx)
{
	volatile __u64 __arena *p;

	bpf_arena_free_pages(&arena, (void __arena *)last_page, 1);
	p = bpf_arena_alloc_pages(&arena, realloc_fixed ? (void __arena *)last_page : NULL, 1,
				  NUMA_NO_NODE, 0);
	__sync_fetch_and_add(&stats.runs, 1);
	realloc_page = 0;
	if (!p) {
		__sync_fetch_and_add(&stats.fails, 1);
		return 1;
	}
	__sync_fetch_and_add(&stats.allocs, 1);
	if (*KP(volatile __u64 __arena *, p) != 0 || KP(volatile __u64 __arena *, p)[1] != 0)
		__sync_fetch_and_add(&stats.bad_data, 1);
	*KP(volatile __u64 __arena *, p) = 0x6b6b;
	realloc_page = (__u64)p;
	return 0;
}

/* Triggered by BPF_PROG_TEST_RUN of any fentry program (bpf_fentry_test1()). */
SEC("fentry/bpf_fentry_test1")
int BPF_PROG(fentry_round, int a)
{
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != armed_tgid)
		return 0;
	return one_round();
}

/*
 * sched_switch runs with interrupts disabled (the runqueue lock held): the
 * allocator is off limits there, pages come from the pool only.  One round,
 * the first time this process is switched out after irqs_off_armed is set.
 */
__u32 irqs_off_armed;

SEC("tp_btf/sched_switch")
int BPF_PROG(irqs_off_round, int preempt, void *prev, void *next)
{
	if (!irqs_off_armed || (__u32)(bpf_get_current_pid_tgid() >> 32) != armed_tgid)
		return 0;
	if (!__sync_lock_test_and_set(&irqs_off_armed, 0))
		return 0;
	return one_round();
}

SEC("fentry/apply_to_page_range")
int BPF_PROG(nested_in_lock, void *mm, unsigned long addr, unsigned long size)
{
	void __arena *p;
	int ret;

	if (!armed_tgid || (__u32)(bpf_get_current_pid_tgid() >> 32) != armed_tgid)
		return 0;
	__sync_fetch_and_add(&stats.nested_calls, 1);
	p = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (p) {
		__sync_fetch_and_add(&stats.nested_allocs, 1);
		bpf_arena_free_pages(&arena, p, 1);
	}
	ret = bpf_arena_reserve_pages(&arena, (void __arena *)ANY_MAP_EXTRA, 1);
	stats.nested_reserve = ret;
	return 0;
}

/* ---- upstream's non-sleepable tests (verifier_arena.c, verifier_arena_large.c) */

SEC("tc")
int basic_alloc1_nosleep(void *ctx)
{
	volatile int __arena *page1, *page2;

	page1 = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!page1)
		return 1;
	*KP(volatile int __arena *, page1) = 1;
	page2 = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!page2)
		return 2;
	*KP(volatile int __arena *, page2) = 2;
	if (*KP(volatile int __arena *, page1) != 1)
		return 4;
	if (*KP(volatile int __arena *, page2) != 2)
		return 5;
	bpf_arena_free_pages(&arena, (void __arena *)page2, 1);
	if (*KP(volatile int __arena *, page1) != 1)
		return 6;
	/* use-after-free should return 0 or the stored value (upstream) */
	if (*KP(volatile int __arena *, page2) != 0 && *KP(volatile int __arena *, page2) != 2)
		return 7;
	bpf_arena_free_pages(&arena, (void __arena *)page1, 1);
	return 0;
}

SEC("tc")
int big_alloc3(void *ctx)
{
	char __arena *pages;
	__u64 i;

	/* upstream: 2051 pages in one call from a non-sleepable program */
	pages = bpf_arena_alloc_pages(&arena, NULL, 2051, NUMA_NO_NODE, 0);
	if (!pages)
		return -1;
	for (i = 0; i < 2051; i++)
		KP(char __arena *, pages)[i * PAGE_SIZE] = 123;
	for (i = 0; i < 2051; i++)
		if (KP(char __arena *, pages)[i * PAGE_SIZE] != 123)
			return i + 1;
	bpf_arena_free_pages(&arena, pages, 2051);
	return 0;
}

char _license[] SEC("license") = "GPL";

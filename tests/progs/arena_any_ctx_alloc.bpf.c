// SPDX-License-Identifier: GPL-2.0
/*
 * nosleep_gfp() (module/arena_nosleep.c), from attack review 5: tracing programs that
 * call bpf_arena_alloc_pages() (the _any_ allocator) from inside the page
 * allocator, memcg charging and reclaim, with interrupts enabled, so that
 * a pool shorter than the request sends them to alloc_pages_node().
 *
 * storm_*: one body on many allocator-internal attach points; allocates
 *   PAGES_PER_CALL pages, checks they are zero, writes, frees half of the
 *   time (keeps the rest, up to KEEP_MAX pages, so that the pool and the
 *   take-back cannot serve everything).
 * memalloc_*: the same allocation from a task with PF_MEMALLOC set (inside
 *   memory.reclaim's try_to_free_mem_cgroup_pages()) and, as a control,
 *   from bpf_fentry_test1 (test_run, no PF_MEMALLOC); keeps its pages.
 */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf_arena.h"
#include "arena_kfunc_common.h"

struct task_struct {
	unsigned int flags;
	void *stack;
} __attribute__((preserve_access_index));

#define PF_MEMALLOC	0x00000800

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 65536);
} arena SEC(".maps");

#define KP(type, p) ({ type __k = (p); cast_kern(__k); __k; })


struct rv_stats stats;
__u32 armed;		/* storm programs act */
__u32 armed_tgid;	/* memalloc programs act for this process only */
__u32 pages_per_call = 4;
__u32 keep_max = 8192;
__u32 memalloc_calls_max = 64;
volatile __u64 fpv;

static __always_inline void note_stack(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	volatile __u64 local = 0;
	__u64 base = (__u64)BPF_CORE_READ(t, stack), fp, left;

	fpv = (__u64)&local;
	fp = fpv;
	if (fp > base && fp - base < 65536) {	/* 16 KiB stacks, 32 KiB with KASAN */
		left = fp - base;
		if (!stats.min_stack_left || left < stats.min_stack_left)
			stats.min_stack_left = left;
	}
}

static __always_inline void storm(int id)
{
	volatile __u64 __arena *p;
	__u32 n = pages_per_call;

	if (!armed)
		return;
	if (bpf_get_prandom_u32() & 3)
		return;
	note_stack();
	__sync_fetch_and_add(&stats.runs, 1);
	p = bpf_arena_alloc_pages(&arena, NULL, n, NUMA_NO_NODE, 0);
	if (!p) {
		__sync_fetch_and_add(&stats.fails, 1);
		return;
	}
	__sync_fetch_and_add(&stats.allocs, 1);
	if (id >= 0 && id < 24)
		__sync_fetch_and_add(&stats.hits[id], 1);
	if (*KP(volatile __u64 __arena *, p) != 0)
		__sync_fetch_and_add(&stats.bad_data, 1);
	*KP(volatile __u64 __arena *, p) = 0x5a5a;
	if ((bpf_get_prandom_u32() & 1) && stats.kept_pages < keep_max) {
		__sync_fetch_and_add(&stats.kept_pages, n);
		return;
	}
	bpf_arena_free_pages(&arena, (void __arena *)p, n);
}

#define STORM_FENTRY(name, fn, id)			\
SEC("fentry/" #fn)					\
int name(void *ctx)					\
{							\
	storm(id);					\
	return 0;					\
}
#define STORM_FEXIT(name, fn, id)			\
SEC("fexit/" #fn)					\
int name(void *ctx)					\
{							\
	storm(id);					\
	return 0;					\
}
#define STORM_TP(name, tp, id)				\
SEC("tp_btf/" #tp)					\
int name(void *ctx)					\
{							\
	storm(id);					\
	return 0;					\
}

STORM_FENTRY(storm_alloc_pages, __alloc_pages, 0)
STORM_FEXIT(storm_alloc_pages_x, __alloc_pages, 1)
STORM_FENTRY(storm_gpff, get_page_from_freelist, 2)
STORM_FENTRY(storm_rmqueue_bulk, rmqueue_bulk, 3)		/* pcp->lock held, irqs on */
STORM_FENTRY(storm_free_unref_page, free_unref_page, 4)
STORM_FENTRY(storm_fup_commit, free_unref_page_commit, 5)	/* pcp->lock held, irqs on */
STORM_FENTRY(storm_free_pcppages_bulk, free_pcppages_bulk, 6)	/* pcp->lock held, irqs on */
STORM_FENTRY(storm_fup_list, free_unref_page_list, 7)
STORM_FENTRY(storm_memcg_charge, __memcg_kmem_charge_page, 8)
STORM_FENTRY(storm_memcg_uncharge, __memcg_kmem_uncharge_page, 9)
STORM_FENTRY(storm_try_charge, try_charge_memcg, 10)
STORM_FENTRY(storm_refill_stock, refill_stock, 11)
STORM_FENTRY(storm_wakeup_kswapd, wakeup_kswapd, 12)
STORM_FENTRY(storm_wmark, __zone_watermark_ok, 13)
STORM_FENTRY(storm_cpuset, __cpuset_node_allowed, 14)
STORM_FENTRY(storm_mod_memcg_state, mod_memcg_state, 15)
STORM_FENTRY(storm_page_counter, page_counter_try_charge, 16)
STORM_FENTRY(storm_post_alloc_hook, post_alloc_hook, 17)
STORM_FENTRY(storm_steal, steal_suitable_fallback, 18)	/* zone->lock held: pool only */
STORM_FENTRY(storm_free_one, __free_one_page, 19)		/* zone->lock held: pool only */
STORM_TP(storm_tp_page_alloc, mm_page_alloc, 20)
STORM_TP(storm_tp_free_batched, mm_page_free_batched, 21)	/* pcp->lock held, irqs on */
STORM_TP(storm_tp_page_free, mm_page_free, 22)
STORM_FEXIT(storm_fup_commit_x, free_unref_page_commit, 23)

static __always_inline void memalloc_round(bool control)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	volatile __u64 __arena *p;
	bool memalloc;

	if (!armed_tgid || (__u32)(bpf_get_current_pid_tgid() >> 32) != armed_tgid)
		return;
	memalloc = BPF_CORE_READ(t, flags) & PF_MEMALLOC;
	if (!control && !memalloc)
		return;
	if (!control) {
		if (stats.memalloc_runs >= memalloc_calls_max)
			return;
		__sync_fetch_and_add(&stats.memalloc_runs, 1);
	} else {
		__sync_fetch_and_add(&stats.runs, 1);
	}
	p = bpf_arena_alloc_pages(&arena, NULL, pages_per_call, NUMA_NO_NODE, 0);
	if (!p)
		return;
	*KP(volatile __u64 __arena *, p) = 1;
	if (control)
		__sync_fetch_and_add(&stats.control_pages, pages_per_call);
	else
		__sync_fetch_and_add(&stats.memalloc_pages, pages_per_call);
}

/* Called by shrink_node_memcgs() under try_to_free_mem_cgroup_pages()'s PF_MEMALLOC. */
SEC("fentry/mem_cgroup_iter")
int BPF_PROG(memalloc_round_reclaim)
{
	memalloc_round(false);
	return 0;
}

SEC("fentry/bpf_fentry_test1")
int BPF_PROG(memalloc_round_control, int a)
{
	memalloc_round(true);
	return 0;
}

char _license[] SEC("license") = "GPL";

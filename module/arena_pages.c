// SPDX-License-Identifier: GPL-2.0
/*
 * Arena page primitives, shared by the sleepable paths (arena_mem.c), the
 * non-sleepable kfuncs (arena_nosleep.c) and the window (arena_window.c):
 * address arithmetic, the page bits, plock, upstream's allocation checks, a
 * page's allocation, and the zap of a range from every user mapping.  This
 * file calls none of those.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/sched/mm.h>

#include "arena.h"

u64 arena_clear_lo32(u64 val)
{
	return val & ~(u64)~0U;
}

/* Page offset of a user address inside the arena, from its low 32 bits. */
u64 arena_compute_pgoff(const struct bpf_arena *arena, u64 uaddr)
{
	return (u32)(uaddr - (u32)arena->user_vm_start) >> PAGE_SHIFT;
}

u64 arena_page_cnt_max(const struct bpf_arena *arena)
{
	return (arena->user_vm_end - arena->user_vm_start) >> PAGE_SHIFT;
}

unsigned long arena_kaddr(const struct bpf_arena *arena, u32 uaddr32)
{
	return arena->kern_vm_start + uaddr32;
}

/* Marks [pgoff, pgoff + n) used if all of it is free. */
bool arena_range_reserve(struct bpf_arena *arena, unsigned long pgoff, unsigned long n)
{
	if (find_next_bit(arena->bits.used, pgoff + n, pgoff) < pgoff + n)
		return false;
	bitmap_set(arena->bits.used, pgoff, n);
	return true;
}

/* Finds and marks the first free run of n pages. */
bool arena_range_alloc(struct bpf_arena *arena, unsigned long *pgoff, unsigned long n)
{
	unsigned long max = arena_page_cnt_max(arena);
	unsigned long start = bitmap_find_next_zero_area(arena->bits.used, max, 0, n, 0);

	if (start >= max)
		return false;
	bitmap_set(arena->bits.used, start, n);
	*pgoff = start;
	return true;
}

struct page *arena_page_alloc(struct bpf_arena *arena, int node_id,
			      struct arena_payer *payer)
{
	gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_ACCOUNT;
	struct mem_cgroup *old, *memcg = arena->memcg;
	struct page *page;

	/*
	 * User space caused this page: no OOM kill (global or memcg) could
	 * free it, since nobody's RSS holds it, so fail instead; the payer's
	 * memcg limits it.
	 */
	if (payer) {
		gfp |= __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
		memcg = payer->memcg;
	}
	old = set_active_memcg(memcg);
	page = alloc_pages_node(node_id, gfp, 0);
	set_active_memcg(old);
	return page;
}

unsigned long arena_plock(struct bpf_arena *arena)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&arena->plock, flags);
	WRITE_ONCE(arena->plock_owner, raw_smp_processor_id());
	return flags;
}

void arena_punlock(struct bpf_arena *arena, unsigned long flags)
{
	WRITE_ONCE(arena->plock_owner, -1);
	raw_spin_unlock_irqrestore(&arena->plock, flags);
}

/*
 * How often a non-sleepable caller retries a busy plock before giving up
 * (65536 cpu_relax(): about a millisecond or two): holders keep it for
 * short sections (at most PLOCK_BATCH pages of page table work, or the
 * GFP_NOWAIT allocations of one call), so only a holder that waits on the
 * caller (an ABBA through a lock the program's context holds) or heavy
 * contention runs into it.
 */
#define PLOCK_SPINS	(1U << 16)

bool arena_plock_nosleep(struct bpf_arena *arena, unsigned long *flags)
{
	unsigned int spins;

	local_irq_save(*flags);
	for (spins = 0; spins < PLOCK_SPINS; spins++) {
		if (raw_spin_trylock(&arena->plock)) {
			WRITE_ONCE(arena->plock_owner, raw_smp_processor_id());
			return true;
		}
		/*
		 * The holder is the code this program interrupted (kprobe,
		 * fentry or NMI inside arena code): it cannot finish first.
		 */
		if (READ_ONCE(arena->plock_owner) == raw_smp_processor_id())
			break;
		cpu_relax();
	}
	local_irq_restore(*flags);
	return false;
}

bool arena_node_ok(int node_id)
{
	return node_id == NUMA_NO_NODE ||
	       ((unsigned int)node_id < nr_node_ids && node_online(node_id));
}

int arena_alloc_check(const struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
		      int node_id, unsigned long *pgoff)
{
	u64 page_cnt_max;

	if (!arena_has_range(arena))
		return -ENXIO;
	page_cnt_max = arena_page_cnt_max(arena);
	if (!page_cnt || !arena_node_ok(node_id))
		return -EINVAL;
	if (page_cnt > page_cnt_max)
		return -ERANGE;
	*pgoff = 0;
	if (uaddr) {
		if (uaddr & ~PAGE_MASK)
			return -EINVAL;
		if (uaddr < arena->user_vm_start || uaddr >= arena->user_vm_end)
			return -ERANGE;
		*pgoff = arena_compute_pgoff(arena, uaddr);
		if (*pgoff > page_cnt_max - page_cnt)
			return -ERANGE;
	}
	return 0;
}

void arena_zap(struct bpf_arena *arena, pgoff_t pgoff, u64 page_cnt)
{
	unmap_mapping_range(arena->vm_file->f_mapping, (loff_t)pgoff << PAGE_SHIFT,
			    (loff_t)page_cnt << PAGE_SHIFT, 1);
}

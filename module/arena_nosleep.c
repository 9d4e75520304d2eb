// SPDX-License-Identifier: GPL-2.0
/*
 * The arena kfuncs of non-sleepable programs (XDP, TC, tracing, struct_ops,
 * non-sleepable syscall programs), as upstream allows since late 2025.
 *
 * They may run in any context: softirq, hardirq, NMI, with scheduler or mm
 * locks held, or nested inside the arena's own code (a kprobe or fentry on a
 * function the arena calls).  So they take no sleeping lock, allocate nothing
 * in the general case and never spin without bound:
 *
 * - plock (arena.h) with arena_plock_nosleep(): a bounded trylock that gives
 *   up at once when this CPU already holds it (nested program), and after
 *   65536 retries otherwise; the caller then fails cleanly (NULL, -EBUSY).
 * - Pages come from a per-arena pool of pre-allocated, zeroed pages (charged
 *   to the arena's memcg when allocated), filled when a non-sleepable
 *   program that allocates is loaded and refilled by a work item.  XDP, TC
 *   and syscall programs (the _nosleep_ allocator) fall back to GFP_NOWAIT
 *   when the pool is short; tracing and struct_ops programs (_any_) do not:
 *   they may be running inside the page allocator or under a runqueue lock.
 * - The page tables of the whole user range are created at that load, so
 *   mapping a page in the kernel window never allocates (tables_ready is
 *   checked under plock; without it the allocation fails).
 * - A free only marks the pages freeing: the work item clears their kernel
 *   PTEs, flushes the TLB, zaps every user mapping and only then frees the
 *   pages and makes the range reusable (arena_unmap_freeing()).  Until then
 *   the pages stay mapped: a program may still read what it freed, as with
 *   upstream's deferred free; nobody can reach a page after it is freed.
 * - The work is kicked through an irq_work (NMI-safe) and is waited for when
 *   the arena is destroyed, before its file and window go away.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/hardirq.h>
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "arena.h"
#include "ksyms.h"

#define POOL_MAX	16384U

static unsigned int nosleep_pool_pages = 64;
module_param(nosleep_pool_pages, uint, 0644);
MODULE_PARM_DESC(nosleep_pool_pages,
		 "Pre-allocated zeroed pages per arena for non-sleepable programs' bpf_arena_alloc_pages() (0-16384, read when the arena's first such program loads; default 64)");

static void arena_kick_fn(struct irq_work *w)
{
	struct bpf_arena *arena = container_of(w, struct bpf_arena, kick);

	queue_work(system_unbound_wq, &arena->work);
}

static void pool_refill(struct bpf_arena *arena)
{
	unsigned long flags;
	struct page *page;
	bool need;

	for (;;) {
		flags = arena_plock(arena);
		need = arena->pool_cnt < arena->pool_cap;
		arena_punlock(arena, flags);
		if (!need)
			return;
		/* Zeroed, charged to the arena's memcg; may reclaim. */
		page = arena_page_alloc(arena, NUMA_NO_NODE);
		if (!page)
			return;
		flags = arena_plock(arena);
		if (arena->pool_cnt < arena->pool_cap) {
			arena->pool[arena->pool_cnt++] = page;
			page = NULL;
		}
		arena_punlock(arena, flags);
		if (page) {
			__free_page(page);
			return;
		}
		cond_resched();
	}
}

void arena_pool_recycle(struct bpf_arena *arena, struct page *page)
{
	unsigned long flags;
	bool room;

	/*
	 * Its kernel PTE is gone and its user mappings are zapped: nobody can
	 * find it again, so a count of 1 (ours) cannot grow.  A higher count
	 * is a fault that got the page before the zap: let that go.
	 */
	flags = arena_plock(arena);
	room = arena->pool_cnt < arena->pool_cap;
	arena_punlock(arena, flags);
	if (!room || page_ref_count(page) != 1) {
		__free_page(page);
		return;
	}
	clear_highpage(page);
	flags = arena_plock(arena);
	if (arena->pool_cnt < arena->pool_cap) {
		arena->pool[arena->pool_cnt++] = page;
		page = NULL;
	}
	arena_punlock(arena, flags);
	if (page)
		__free_page(page);
}

static void arena_work_fn(struct work_struct *work)
{
	struct bpf_arena *arena = container_of(work, struct bpf_arena, work);

	mutex_lock(&arena->lock);
	arena_unmap_freeing(arena);
	mutex_unlock(&arena->lock);
	pool_refill(arena);
}

void arena_nosleep_init(struct bpf_arena *arena)
{
	init_irq_work(&arena->kick, arena_kick_fn);
	INIT_WORK(&arena->work, arena_work_fn);
	arena->work_ready = true;
}

void arena_nosleep_stop(struct bpf_arena *arena)
{
	unsigned int i;

	if (!arena->work_ready)
		return;
	/*
	 * No program can call in any more (the companion is unlisted and a
	 * grace period has passed), so nothing queues the work again.
	 * Pages still marked freeing are mapped: arena_mem_free() frees them.
	 */
	irq_work_sync(&arena->kick);
	cancel_work_sync(&arena->work);
	for (i = 0; i < arena->pool_cnt; i++)
		__free_page(arena->pool[i]);
	kvfree(arena->pool);
	arena->pool = NULL;
	arena->pool_cnt = 0;
	arena->pool_cap = 0;
}

int arena_pool_enable(struct bpf_arena *arena)
{
	unsigned int cap = min(READ_ONCE(nosleep_pool_pages), POOL_MAX);
	struct page **pool = NULL;
	unsigned long flags;
	int err = 0;

	if (!arena_has_range(arena))
		return 0;
	mutex_lock(&arena->lock);
	if (!arena->tables_ready) {
		/* size/512 bytes of page tables: mapping then never allocates. */
		err = arena_populate_tables(arena, arena_kaddr(arena, (u32)arena->user_vm_start),
					    arena_page_cnt_max(arena));
		if (err)
			goto out;
		flags = arena_plock(arena);
		arena->tables_ready = true;
		arena_punlock(arena, flags);
	}
	if (!arena->pool && cap) {
		pool = kvcalloc(cap, sizeof(*pool), GFP_KERNEL_ACCOUNT);
		if (!pool) {
			err = -ENOMEM;
			goto out;
		}
		flags = arena_plock(arena);
		arena->pool = pool;
		arena->pool_cap = cap;
		arena_punlock(arena, flags);
	}
out:
	mutex_unlock(&arena->lock);
	if (!err)
		pool_refill(arena);
	return err;
}

struct nosleep_map {
	struct bpf_arena *arena;
	int node_id;
	bool direct;
	unsigned int mapped, direct_cnt;
};

/* apply_to_existing_page_range() callback: plock held. */
static int nosleep_set_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct nosleep_map *m = data;
	struct bpf_arena *arena = m->arena;
	struct page *page = NULL;

	if (!pte_none(ptep_get(pte)))
		return -EBUSY;	/* excluded by the invariant; fail, do not overwrite */
	if (arena->pool_cnt) {
		page = arena->pool[--arena->pool_cnt];
	} else if (m->direct && !in_nmi()) {
		struct mem_cgroup *old = set_active_memcg(arena->memcg);

		page = alloc_pages_node(m->node_id, GFP_NOWAIT | __GFP_NOWARN | __GFP_ZERO |
					__GFP_ACCOUNT, 0);
		set_active_memcg(old);
		m->direct_cnt += !!page;
	}
	if (!page)
		return -ENOMEM;
	set_pte_at(ksyms.init_mm, addr, pte, mk_pte(page, PAGE_KERNEL));
	m->mapped++;
	return 0;
}

long arena_alloc_pages_nosleep(struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
			       int node_id, bool direct, u64 *out)
{
	struct nosleep_map m = { .arena = arena, .node_id = node_id, .direct = direct };
	unsigned long pgoff = 0, flags, kaddr;
	u64 page_cnt_max;
	bool low, ok;
	u32 uaddr32;
	long ret;

	/* The checks and errnos of arena_alloc_pages(). */
	if (!arena_has_range(arena))
		return -ENXIO;
	page_cnt_max = arena_page_cnt_max(arena);
	if (!page_cnt || !arena_node_ok(node_id))
		return -EINVAL;
	if (page_cnt > page_cnt_max)
		return -ERANGE;
	if (uaddr) {
		if (uaddr & ~PAGE_MASK)
			return -EINVAL;
		if (uaddr < arena->user_vm_start || uaddr >= arena->user_vm_end)
			return -ERANGE;
		pgoff = arena_compute_pgoff(arena, uaddr);
		if (pgoff > page_cnt_max - page_cnt)
			return -ERANGE;
	}
	ret = arena_charge(arena, page_cnt);
	if (ret)
		goto fail;
	if (!arena_plock_nosleep(arena, &flags)) {
		arena_uncharge(arena, page_cnt);
		ret = -EBUSY;
		goto fail;
	}
	/* Without every page table in place, mapping could allocate: refuse. */
	ok = arena->tables_ready &&
	     (uaddr ? arena_range_reserve(arena, pgoff, page_cnt) :
		      arena_range_alloc(arena, &pgoff, page_cnt));
	if (!ok) {
		arena_punlock(arena, flags);
		arena_uncharge(arena, page_cnt);
		ret = uaddr ? -EBUSY : -ENOMEM;
		goto fail;
	}
	uaddr32 = (u32)(arena->user_vm_start + (pgoff << PAGE_SHIFT));
	kaddr = arena_kaddr(arena, uaddr32);
	/* The tables exist (tables_ready): this allocates nothing, only fills PTEs. */
	apply_to_page_range(ksyms.init_mm, kaddr, (unsigned long)page_cnt << PAGE_SHIFT,
			    nosleep_set_pte, &m);
	if (m.mapped < page_cnt) {
		/*
		 * Out of pages (or page tables missing: no pool_enable()).
		 * Whatever got mapped is freed the deferred way; the worker
		 * releases the whole range and uncharges the mapped pages.
		 */
		bitmap_set(arena->freeing, pgoff, page_cnt);
		arena_punlock(arena, flags);
		atomic64_add(m.mapped, &arena->pages);
		arena_uncharge(arena, page_cnt - m.mapped);
		irq_work_queue(&arena->kick);
		ret = -ENOMEM;
		goto fail;
	}
	low = arena->pool_cnt < arena->pool_cap / 2 + 1 && arena->pool_cap;
	arena_punlock(arena, flags);
	if (low)
		irq_work_queue(&arena->kick);
	atomic64_add(page_cnt, &arena->pages);
	atomic64_add(page_cnt, &arena->kern_allocs);
	atomic64_add(page_cnt, &arena->nosleep_allocs);
	if (m.direct_cnt)
		atomic64_add(m.direct_cnt, &arena->nosleep_direct);
	*out = arena_clear_lo32(arena->user_vm_start) + uaddr32;
	return 0;
fail:
	atomic64_inc(&arena->nosleep_fails);
	return ret;
}

void arena_free_pages_nosleep(struct bpf_arena *arena, u64 uaddr, u32 page_cnt)
{
	unsigned long pgoff, end, i, flags;
	u64 full_uaddr, uaddr_end;
	bool queued = false;
	u32 uaddr32;

	/* The range arithmetic of arena_free_pages() (upstream's). */
	if (!arena_has_range(arena) || !page_cnt)
		return;
	uaddr32 = (u32)uaddr & PAGE_MASK;
	full_uaddr = arena_clear_lo32(arena->user_vm_start) + uaddr32;
	if (full_uaddr < arena->user_vm_start)
		return;
	uaddr_end = min(arena->user_vm_end, full_uaddr + ((u64)page_cnt << PAGE_SHIFT));
	if (full_uaddr >= uaddr_end)
		return;
	pgoff = arena_compute_pgoff(arena, uaddr32);
	end = pgoff + ((uaddr_end - full_uaddr) >> PAGE_SHIFT);

	/* Busy (nested in arena code, or heavily contended): the pages stay allocated. */
	if (!arena_plock_nosleep(arena, &flags))
		return;
	for (i = find_next_bit(arena->used, end, pgoff); i < end;
	     i = find_next_bit(arena->used, end, i + 1)) {
		if (test_bit(i, arena->resv)) {
			/* Reserved: no page, nothing to unmap. */
			clear_bit(i, arena->resv);
			clear_bit(i, arena->used);
		} else {
			set_bit(i, arena->freeing);
			queued = true;
		}
	}
	arena_punlock(arena, flags);
	if (queued)
		irq_work_queue(&arena->kick);
}

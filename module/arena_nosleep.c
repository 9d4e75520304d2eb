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
 *   when the pool is short; tracing and struct_ops programs (_any_) may be
 *   running inside the page allocator or under a runqueue lock, so they fall
 *   back to the allocator only where a hardware interrupt could too
 *   (interrupts enabled, not NMI, not PREEMPT_RT; nosleep_gfp()).
 * - The page tables of the whole user range are created at that load, so
 *   mapping a page in the kernel window never allocates (tables.ready is
 *   checked under plock; without it the allocation fails).
 * - A free only marks the pages freeing: the work item clears their kernel
 *   PTEs, flushes the TLB, zaps every user mapping and only then frees the
 *   pages (or keeps them in the pool's dirty half: pool_clean() zeroes them
 *   into the pool, and a pool-only allocation that finds the pool empty
 *   zeroes up to INLINE_ZERO_MAX of them itself, as upstream's allocator
 *   zeroes inline) and makes the range reusable (arena_unmap_freeing()).
 *   Until then
 *   the pages stay mapped: a program may still read what it freed, as with
 *   upstream's deferred free; nobody can reach a page after it is freed.
 * - A non-sleepable allocation first takes back pages freed that way that
 *   the work has not reached yet (reclaim_freeing(): same page, same
 *   address, zeroed), then uses the pool.
 * - The work is kicked through an irq_work (NMI-safe) and is waited for when
 *   the arena is destroyed, before its file and window go away.  It runs on
 *   the module's own unbound WQ_HIGHPRI workqueue (nice -20 workers): the
 *   pool is only as good as the work's speed at recycling freed pages, and
 *   on system_unbound_wq (nice 0) the allocating threads themselves
 *   starved it (a two-thread fentry storm failed 57-99 % of allocations).
 *   The work is bounded by what programs freed or took from the pool, so
 *   its priority lends no one more CPU than their own frees cost.
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
		 "Pre-allocated zeroed pages per arena for non-sleepable programs' bpf_arena_alloc_pages() (0-16384, 0: no pool; read when the arena's first such program loads; default 64)");

/*
 * A burst larger than the pool fails until the work has recycled pages,
 * which takes one cross-CPU TLB flush per pass.  So the pool follows
 * demand: each allocation that finds it empty doubles its target (at
 * least to that allocation's size), up to this bound; it never shrinks
 * while the arena lives.  Memory: at most this many pages per arena, only
 * for arenas whose non-sleepable programs ran the pool dry, charged to the
 * arena's memcg like every page.
 */
static unsigned int nosleep_pool_max = 2048;
module_param(nosleep_pool_max, uint, 0644);
MODULE_PARM_DESC(nosleep_pool_max,
		 "Pages the pool of an arena may grow to when non-sleepable allocations find it empty (up to 16384; read with nosleep_pool_pages; default 2048)");

static struct workqueue_struct *arena_nosleep_wq;

static void arena_kick_fn(struct irq_work *w)
{
	struct bpf_arena *arena = container_of(w, struct bpf_arena, pool.kick);

	queue_work(arena_nosleep_wq, &arena->pool.work);
}

int arena_nosleep_module_init(void)
{
	arena_nosleep_wq = alloc_workqueue("bpf_arena_nosleep", WQ_UNBOUND | WQ_HIGHPRI, 0);
	return arena_nosleep_wq ? 0 : -ENOMEM;
}

/* After the last arena is gone: each arena's destruction waited for its work. */
void arena_nosleep_module_exit(void)
{
	destroy_workqueue(arena_nosleep_wq);
}

/* Room for one more page in the pool (zeroed or not); plock held. */
static bool pool_has_room(struct bpf_arena *arena)
{
	return arena->pool.cnt + arena->pool.dirty_cnt < arena->pool.target;
}

/*
 * Tops the pool up with fresh pages, at most as many as it lacked when
 * called: while programs drain it as fast as it fills, an unbounded loop
 * here would keep the work from unmapping what they free (the cheaper
 * source of pages, and the only one that returns address space).  An
 * allocation that leaves the pool low kicks the work again.
 */
static void pool_refill(struct bpf_arena *arena)
{
	unsigned int budget;
	unsigned long flags;
	struct page *page;

	flags = arena_plock(arena);
	budget = arena->pool.target - min(arena->pool.target, arena->pool.cnt + arena->pool.dirty_cnt);
	arena_punlock(arena, flags);
	while (budget--) {
		/* Zeroed, charged to the arena's memcg; may reclaim. */
		page = arena_page_alloc(arena, NUMA_NO_NODE, NULL);
		if (!page)
			return;
		flags = arena_plock(arena);
		if (pool_has_room(arena)) {
			arena->pool.pages[arena->pool.cnt++] = page;
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

/* Zeroes the dirty pages into the pool, one at a time, outside plock. */
static void pool_clean(struct bpf_arena *arena)
{
	unsigned long flags;
	struct page *page;

	for (;;) {
		flags = arena_plock(arena);
		page = arena->pool.dirty_cnt ? arena->pool.dirty[--arena->pool.dirty_cnt] : NULL;
		arena_punlock(arena, flags);
		if (!page)
			return;
		clear_highpage(page);
		flags = arena_plock(arena);
		/* A recycle may have taken the slot meanwhile. */
		if (pool_has_room(arena)) {
			arena->pool.pages[arena->pool.cnt++] = page;
			page = NULL;
		}
		arena_punlock(arena, flags);
		if (page)
			__free_page(page);
		cond_resched();
	}
}

static void arena_pool_recycle(struct bpf_arena *arena, struct page *page)
{
	unsigned long flags;

	/*
	 * Its kernel PTE is gone and its user mappings are zapped: nobody can
	 * find it again, so a count of 1 (ours) cannot grow.  A higher count
	 * is a transient reference (the inspector, a pin): let that go, as a
	 * poisoned page (the allocator keeps it out of use).  Zeroing
	 * waits for pool_clean() (or the allocation that needs the page), so
	 * that the unmapping, which is what frees address space and lets
	 * allocations go on, is not held up by it.
	 */
	if (page_ref_count(page) == 1 && !PageHWPoison(page)) {
		flags = arena_plock(arena);
		if (arena->pool.dirty && pool_has_room(arena)) {
			arena->pool.dirty[arena->pool.dirty_cnt++] = page;
			page = NULL;
		}
		arena_punlock(arena, flags);
	}
	if (page)
		__free_page(page);
}

/* One pass: at most this many pages and runs, one TLB flush. */
#define PASS_PAGES	4096U
#define PASS_RUNS	256U
#define SMALL_PASS	16U

/* Clears the kernel PTEs of up to the limits of freeing pages; the runs done. */
static unsigned int unmap_pass_clear(struct bpf_arena *arena, unsigned long max,
				     struct page **pages, unsigned int max_pages,
				     unsigned long *runs, unsigned int max_runs,
				     unsigned int *nr_pages)
{
	unsigned long s = 0, e, flags;
	unsigned int nruns = 0, n;

	*nr_pages = 0;
	while (nruns < max_runs && *nr_pages < max_pages) {
		flags = arena_plock(arena);
		s = find_next_bit(arena->bits.freeing, max, s);
		if (s >= max) {
			arena_punlock(arena, flags);
			break;
		}
		n = min3(max - s, (unsigned long)(max_pages - *nr_pages), PLOCK_BATCH);
		e = find_next_zero_bit(arena->bits.freeing, s + n, s);
		/* The run stays used (and freeing) until no mapping of it is left. */
		*nr_pages += arena_window_clear(arena, arena_kaddr(arena, (u32)(arena->user_vm_start +
								 (s << PAGE_SHIFT))),
					e - s, pages + *nr_pages);
		arena_punlock(arena, flags);
		runs[2 * nruns] = s;
		runs[2 * nruns + 1] = e;
		nruns++;
		s = e;
	}
	return nruns;
}

/*
 * The rest of a deferred-free pass whose kernel PTEs unmap_pass_clear() (or
 * arena_unmap_freeing_page()) cleared: flush, zap user mappings, make the
 * runs reusable, recycle the pages.
 */
static void finish_pass(struct bpf_arena *arena, struct page **pages, unsigned int nr,
			const unsigned long *runs, unsigned int nruns)
{
	unsigned long lo = runs[0], hi = runs[2 * nruns - 1], flags;
	unsigned int i;

	/*
	 * One flush for the pass (x86 flushes everything past 33 pages).
	 * None when the pass cleared no PTE (the unmapped tail of a failed
	 * non-sleepable allocation): an address's earlier PTE was flushed by
	 * the pass that cleared it, before the address could be used again.
	 * The flush is an IPI round trip to every CPU, the slowest step of
	 * the deferred free.
	 */
	if (nr)
		arena_window_flush(arena_kaddr(arena, (u32)(arena->user_vm_start + (lo << PAGE_SHIFT))),
			   hi - lo);
	for (i = 0; i < nruns; i++)
		arena_zap(arena, runs[2 * i], runs[2 * i + 1] - runs[2 * i]);
	/* Only the runs this pass unmapped: newer frees wait for the next. */
	flags = arena_plock(arena);
	for (i = 0; i < nruns; i++) {
		unsigned long s = runs[2 * i], n = runs[2 * i + 1] - s;

		bitmap_clear(arena->bits.used, s, n);
		bitmap_clear(arena->bits.resv, s, n);
		bitmap_clear(arena->bits.freeing, s, n);
	}
	arena_punlock(arena, flags);
	for (i = 0; i < nr; i++) {
		arena_page_release_payer(pages[i]);
		arena_pool_recycle(arena, pages[i]);
	}
	for (i = 0; i < nruns; i++)
		arena_trim_tables(arena, runs[2 * i], runs[2 * i + 1] - runs[2 * i]);
	arena_stat_sub(arena, pages, nr);
	arena_stat_add(arena, freed, nr);
}

/*
 * The worker's unmapping of one page, for a user fault on it (bounded: a
 * fault must not do the whole arena's pending frees); arena->lock held.
 */
void arena_unmap_freeing_page(struct bpf_arena *arena, pgoff_t pgoff)
{
	unsigned long runs[2] = { pgoff, pgoff + 1 }, flags;
	struct page *page;
	unsigned int nr = 0;
	bool freeing;

	flags = arena_plock(arena);
	freeing = test_bit(pgoff, arena->bits.freeing);
	if (freeing)
		nr = arena_window_clear(arena, arena_kaddr(arena, (u32)(arena->user_vm_start +
							 (pgoff << PAGE_SHIFT))), 1, &page);
	arena_punlock(arena, flags);
	if (freeing)
		finish_pass(arena, &page, nr, runs, 1);
}

void arena_unmap_freeing(struct bpf_arena *arena)
{
	unsigned long max, *runs, small_runs[2];
	struct page **pages, *small_pages[SMALL_PASS];
	unsigned int nruns, nr, max_pages, max_runs;

	if (!arena_has_range(arena))
		return;
	max = arena_page_cnt_max(arena);
	pages = kvmalloc_array(PASS_PAGES, sizeof(*pages), GFP_KERNEL | __GFP_NOWARN);
	runs = kmalloc_array(2 * PASS_RUNS, sizeof(*runs), GFP_KERNEL | __GFP_NOWARN);
	if (pages && runs) {
		max_pages = PASS_PAGES;
		max_runs = PASS_RUNS;
	} else {
		/* Short of memory: the same, a few pages at a time. */
		kvfree(pages);
		kfree(runs);
		pages = small_pages;
		runs = small_runs;
		max_pages = SMALL_PASS;
		max_runs = 1;
	}
	for (;;) {
		nruns = unmap_pass_clear(arena, max, pages, max_pages, runs, max_runs, &nr);
		if (!nruns)
			break;
		finish_pass(arena, pages, nr, runs, nruns);
		cond_resched();
	}
	if (pages != small_pages) {
		kvfree(pages);
		kfree(runs);
	}
}

static void arena_work_fn(struct work_struct *work)
{
	struct bpf_arena *arena = container_of(work, struct bpf_arena, pool.work);

	mutex_lock(&arena->lock);
	arena_unmap_freeing(arena);
	mutex_unlock(&arena->lock);
	pool_clean(arena);
	pool_refill(arena);
}

void arena_nosleep_init(struct bpf_arena *arena)
{
	init_irq_work(&arena->pool.kick, arena_kick_fn);
	INIT_WORK(&arena->pool.work, arena_work_fn);
	arena->pool.work_ready = true;
}

void arena_nosleep_stop(struct bpf_arena *arena)
{
	unsigned int i;

	if (!arena->pool.work_ready)
		return;
	/*
	 * No program can call in any more (the companion is unlisted and a
	 * grace period has passed), so nothing queues the work again.
	 * Pages still marked freeing are mapped: arena_mem_free() frees them.
	 */
	irq_work_sync(&arena->pool.kick);
	cancel_work_sync(&arena->pool.work);
	for (i = 0; i < arena->pool.cnt; i++)
		__free_page(arena->pool.pages[i]);
	for (i = 0; i < arena->pool.dirty_cnt; i++)
		__free_page(arena->pool.dirty[i]);
	kvfree(arena->pool.pages);
	kvfree(arena->pool.dirty);
	arena->pool.pages = NULL;
	arena->pool.dirty = NULL;
	arena->pool.cnt = 0;
	arena->pool.dirty_cnt = 0;
	arena->pool.cap = 0;
	arena->pool.target = 0;
}

int arena_pool_enable(struct bpf_arena *arena)
{
	unsigned int target = min(READ_ONCE(nosleep_pool_pages), POOL_MAX);
	unsigned int cap = target ? clamp(READ_ONCE(nosleep_pool_max), target, POOL_MAX) : 0;
	struct page **pool = NULL, **dirty = NULL;
	unsigned long flags;
	int err = 0;

	if (!arena_has_range(arena))
		return 0;
	mutex_lock(&arena->lock);
	if (!arena->tables.ready) {
		/* size/512 bytes of page tables: mapping then never allocates. */
		err = arena_populate_tables(arena, arena_kaddr(arena, (u32)arena->user_vm_start),
					    arena_page_cnt_max(arena), NULL);
		if (err)
			goto out;
		flags = arena_plock(arena);
		arena->tables.ready = true;
		arena_punlock(arena, flags);
	}
	if (!arena->pool.pages && cap) {
		pool = kvcalloc(cap, sizeof(*pool), GFP_KERNEL_ACCOUNT);
		dirty = kvcalloc(cap, sizeof(*dirty), GFP_KERNEL_ACCOUNT);
		if (!pool || !dirty) {
			kvfree(pool);
			kvfree(dirty);
			err = -ENOMEM;
			goto out;
		}
		flags = arena_plock(arena);
		arena->pool.pages = pool;
		arena->pool.dirty = dirty;
		arena->pool.cap = cap;
		arena->pool.target = target;
		arena_punlock(arena, flags);
	}
out:
	mutex_unlock(&arena->lock);
	if (!err)
		pool_refill(arena);
	return err;
}

/*
 * Dirty pool pages one allocation may zero itself, under plock with
 * interrupts off: 16 x 4 KiB bounds that time like PLOCK_BATCH bounds the
 * page-table work.
 */
#define INLINE_ZERO_MAX	16U

struct nosleep_map {
	struct bpf_arena *arena;
	int node_id;
	gfp_t gfp;		/* 0: the pool only */
	unsigned int mapped, zeroed;
	/* Pages from the allocator, taken before plock (nosleep_prealloc()). */
	struct list_head extra;
};

/*
 * XDP, TC and syscall programs run in softirq or process context, never
 * inside the page allocator: GFP_NOWAIT.
 */
#define GFP_NOSLEEP_NET	(GFP_NOWAIT | __GFP_NOWARN | __GFP_ZERO | __GFP_ACCOUNT | \
			 __GFP_NOMEMALLOC)
/*
 * A tracing, LSM or struct_ops program may run anywhere, inside the page
 * allocator too.  Where interrupts are enabled (and not in NMI), a
 * hardware interrupt may arrive at that very point and allocate: 6.1's
 * allocator is reentrant there (its per-CPU lists are taken with a trylock
 * "due to a parallel drain or IRQ reentrancy", the zone lock and every
 * other lock on its path with interrupts disabled), so the program may
 * allocate there as such an interrupt would: no reclaim, not even waking
 * kswapd (fewer locks; the work item's refill does that).  With interrupts
 * disabled the caller may hold the zone lock or a runqueue lock: the pool
 * only.  Never on PREEMPT_RT, whose spinlocks do not disable interrupts,
 * so "interrupts enabled" says nothing about the locks held.
 */
#define GFP_NOSLEEP_ANY	(__GFP_NOWARN | __GFP_ZERO | __GFP_ACCOUNT | __GFP_NOMEMALLOC)

/*
 * Both without the emergency reserves (__GFP_NOMEMALLOC), and not at all
 * in a task that is reclaiming memory (PF_MEMALLOC: kswapd, direct reclaim,
 * memory.reclaim, or a softirq running on top of one): 6.1's
 * try_charge_memcg() forces such a task's charge past the memcg's limit
 * whatever the gfp flags, and the allocator lets it dip into the reserves
 * reclaim needs.  The pool only, then.
 */
static gfp_t nosleep_gfp(bool net)
{
	if (in_nmi() || (current->flags & PF_MEMALLOC))
		return 0;
	if (net)
		return GFP_NOSLEEP_NET;
	if (IS_ENABLED(CONFIG_PREEMPT_RT) || irqs_disabled())
		return 0;
	return GFP_NOSLEEP_ANY;
}

/* The pool ran dry under an allocation of want pages; plock held. */
static void pool_grow(struct bpf_arena *arena, u32 want)
{
	u64 target = max_t(u64, 2ULL * arena->pool.target, want);

	arena->pool.target = min_t(u64, target, arena->pool.cap);
}

/* apply_to_page_range() callback (the tables exist: tables.ready); plock held. */
static int nosleep_set_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct nosleep_map *m = data;
	struct bpf_arena *arena = m->arena;
	struct page *page = NULL;

	if (!pte_none(ptep_get(pte)))
		return -EBUSY;	/* excluded by the invariant; fail, do not overwrite */
	if (arena->pool.cnt) {
		page = arena->pool.pages[--arena->pool.cnt];
	} else if (arena->pool.dirty_cnt && m->zeroed < INLINE_ZERO_MAX) {
		/* Unmapped everywhere already; zeroing is all it lacks. */
		page = arena->pool.dirty[--arena->pool.dirty_cnt];
		clear_highpage(page);
		m->zeroed++;
	} else if (!list_empty(&m->extra)) {
		page = list_first_entry(&m->extra, struct page, lru);
		list_del(&page->lru);
	}
	if (!page)
		return -ENOMEM;
	set_pte_at(ksyms.init_mm, addr, pte, mk_pte(page, PAGE_KERNEL));
	m->mapped++;
	return 0;
}

/*
 * What the pool cannot give an allocation of n pages now: plock held.  (The
 * pool may change until the pages are mapped; then the allocation fails.)
 */
static unsigned int pool_shortfall(struct bpf_arena *arena, u32 n)
{
	u64 have = (u64)arena->pool.cnt + min(arena->pool.dirty_cnt, INLINE_ZERO_MAX);

	return n > have ? n - have : 0;
}

/*
 * Takes n zeroed pages from the page allocator onto m->extra, in the
 * caller's context and before plock: interrupts stay as the caller had
 * them and plock's interrupts-off section stays bounded by PTE writes (as
 * with the pool), whatever the allocation's size.  Stops at the first
 * failure; the allocation then fails as short of pages.
 */
static void nosleep_prealloc(struct nosleep_map *m, unsigned int n)
{
	struct mem_cgroup *old = set_active_memcg(m->arena->memcg);
	struct page *page;

	while (n--) {
		page = alloc_pages_node(m->node_id, m->gfp, 0);
		if (!page)
			break;
		list_add(&page->lru, &m->extra);
	}
	set_active_memcg(old);
}

/* What nosleep_set_pte() did not use; after plock. */
static void nosleep_free_extra(struct nosleep_map *m)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &m->extra, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
}

/* Pages one allocation may take back from pending frees (zeroed inline). */
#define RECLAIM_MAX	INLINE_ZERO_MAX
/* Bits of the freeing bitmap one allocation looks at, from reclaim_hint. */
#define RECLAIM_SCAN	512UL

/*
 * Takes back n pages (at *pgoff if fixed, else near the last non-sleepable
 * free) that a non-sleepable free left to the work item and that the work
 * has not taken yet: the same pages at the same addresses, so
 * nothing about any mapping changes.  Their kernel PTEs are still present
 * (the work clears a run's PTEs, under plock, before anything else, and a
 * page whose PTE is gone is not taken here), so no TLB anywhere can hold a
 * stale translation; a user PTE that still maps one of them maps the page
 * the address belongs to again (the free had not zapped it yet, and now
 * need not).  The pages stay used, counted in the pages counter and charged, as
 * they were since their allocation: only the freeing mark is dropped, so
 * the work will not unmap them.  Zeroed here, under plock with interrupts
 * off: at most RECLAIM_MAX pages, as pool-only allocations zero dirty pages.
 *
 * This is what lets a tracing program that allocates and frees in a burst
 * go on when the pool is empty: each free would otherwise wait for the work
 * item's pass, which ends in a cross-CPU TLB flush (milliseconds under
 * load), before its page could be used again.  plock held.
 */
static bool reclaim_freeing(struct bpf_arena *arena, u32 n, bool fixed, unsigned long *pgoff)
{
	unsigned long max = arena_page_cnt_max(arena), s, e, lim, i;
	struct page *pages[RECLAIM_MAX], *page;

	s = fixed ? *pgoff : arena->bits.reclaim_hint;
	if (n > RECLAIM_MAX || s >= max)
		return false;
	/* fixed: exactly [*pgoff, +n) (the caller checked it fits), else a window. */
	lim = fixed ? s + n : min(max, s + RECLAIM_SCAN);
	for (;;) {
		s = find_next_bit(arena->bits.freeing, lim, s);
		if (s >= lim || lim - s < n || (fixed && s != *pgoff))
			return false;
		e = find_next_zero_bit(arena->bits.freeing, s + n, s);
		if (e < s + n) {
			s = e + 1;
			continue;
		}
		for (i = 0; i < n; i++) {
			page = vmalloc_to_page((void *)arena_kaddr(arena,
				(u32)(arena->user_vm_start + ((s + i) << PAGE_SHIFT))));
			/*
			 * No page: taken by the work, or a failed allocation's
			 * tail.  A reference beyond the window's and one per
			 * user PTE (a pipe's from vmsplice(), direct I/O, a
			 * fault in flight, the inspector) may outlive the free:
			 * reusing the page would hand that holder the next
			 * owner's data, so leave it to the work, which lets
			 * such a page go (arena_pool_recycle()).
			 */
			if (!page || PageHWPoison(page) ||
			    page_ref_count(page) != 1 + page_mapcount(page))
				break;
			pages[i] = page;
		}
		if (i == n)
			break;
		if (fixed)
			return false;
		s += i + 1;
	}
	for (i = 0; i < n; i++)
		clear_highpage(pages[i]);
	bitmap_clear(arena->bits.freeing, s, n);
	*pgoff = s;
	return true;
}

long arena_alloc_pages_nosleep(struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
			       int node_id, bool direct, u64 *out)
{
	/* The caller's context, before plock disables interrupts. */
	struct nosleep_map m = { .arena = arena, .node_id = node_id, .gfp = nosleep_gfp(direct),
				 .extra = LIST_HEAD_INIT(m.extra) };
	unsigned long pgoff, flags, kaddr;
	unsigned int shortfall;
	bool low, ok;
	u32 uaddr32;
	long ret;

	ret = arena_alloc_check(arena, uaddr, page_cnt, node_id, &pgoff);
	if (ret)
		return ret;
	if (!arena_plock_nosleep(arena, &flags)) {
		ret = -EBUSY;
		goto fail;
	}
	/*
	 * Pages freed moments ago first (an alloc/free burst then needs
	 * neither the pool nor the work); the pool stays for what they miss.
	 * At a fixed address, exactly that range when all of it is freeing:
	 * an allocation there after a non-sleepable free then works as after
	 * a sleepable free, instead of failing until the work has run.
	 */
	if (reclaim_freeing(arena, page_cnt, uaddr != 0, &pgoff)) {
		arena_punlock(arena, flags);
		uaddr32 = (u32)(arena->user_vm_start + (pgoff << PAGE_SHIFT));
		*out = arena_clear_lo32(arena->user_vm_start) + uaddr32;
		return 0;
	}
	shortfall = m.gfp ? pool_shortfall(arena, page_cnt) : 0;
	if (shortfall) {
		arena_punlock(arena, flags);
		nosleep_prealloc(&m, shortfall);
		if (!arena_plock_nosleep(arena, &flags)) {
			nosleep_free_extra(&m);
			ret = -EBUSY;
			goto fail;
		}
	}
	/* Without every page table in place, mapping could allocate: refuse. */
	ok = arena->tables.ready &&
	     (uaddr ? arena_range_reserve(arena, pgoff, page_cnt) :
		      arena_range_alloc(arena, &pgoff, page_cnt));
	if (!ok) {
		arena_punlock(arena, flags);
		ret = uaddr ? -EBUSY : -ENOMEM;
		goto fail;
	}
	uaddr32 = (u32)(arena->user_vm_start + (pgoff << PAGE_SHIFT));
	kaddr = arena_kaddr(arena, uaddr32);
	/* The tables exist (tables.ready): this allocates nothing, only fills PTEs. */
	apply_to_page_range(ksyms.init_mm, kaddr, (unsigned long)page_cnt << PAGE_SHIFT,
			    nosleep_set_pte, &m);
	if (m.mapped < page_cnt) {
		/*
		 * Out of pages (or page tables missing: no pool_enable()).
		 * Whatever got mapped is freed the deferred way; the worker
		 * releases the whole range.
		 */
		bitmap_set(arena->bits.freeing, pgoff, page_cnt);
		pool_grow(arena, page_cnt);
		arena_punlock(arena, flags);
		arena_stat_add(arena, pages, m.mapped);
		irq_work_queue(&arena->pool.kick);
		ret = -ENOMEM;
		goto fail;
	}
	low = arena->pool.cnt < arena->pool.target / 2 + 1 && arena->pool.target;
	arena_punlock(arena, flags);
	if (low)
		irq_work_queue(&arena->pool.kick);
	arena_stat_add(arena, pages, page_cnt);
	nosleep_free_extra(&m);
	*out = arena_clear_lo32(arena->user_vm_start) + uaddr32;
	return 0;
fail:
	nosleep_free_extra(&m);
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
	arena->bits.reclaim_hint = pgoff;
	for (i = find_next_bit(arena->bits.used, end, pgoff); i < end;
	     i = find_next_bit(arena->bits.used, end, i + 1)) {
		if (test_bit(i, arena->bits.resv)) {
			/* Reserved: no page, nothing to unmap. */
			clear_bit(i, arena->bits.resv);
			clear_bit(i, arena->bits.used);
		} else {
			set_bit(i, arena->bits.freeing);
			queued = true;
		}
	}
	arena_punlock(arena, flags);
	if (queued)
		irq_work_queue(&arena->pool.kick);
}

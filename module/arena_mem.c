// SPDX-License-Identifier: GPL-2.0
/*
 * Arena pages: the kernel window, allocation, free and the page behind a
 * user fault.  Semantics follow upstream kernel/bpf/arena.c (6.12).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/pgtable.h>
#include <linux/nodemask.h>
#include <asm/pgalloc.h>

#include "arena.h"
#include "ksyms.h"

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

int arena_mem_init(struct bpf_arena *arena)
{
	/* Ioremap-style areas read as zeroes through /proc/kcore (vread). */
	arena->kern_vm = ksyms.get_vm_area(ARENA_KERN_VM_SZ, VM_IOREMAP);
	if (!arena->kern_vm)
		return -ENOMEM;
	arena->kern_vm_start = (unsigned long)arena->kern_vm->addr + ARENA_GUARD_SZ / 2;
	mutex_init(&arena->lock);
	raw_spin_lock_init(&arena->plock);
	arena->plock_owner = -1;
	arena_tables_init(arena);
	arena_nosleep_init(arena);
	if (!mem_cgroup_disabled())
		arena->memcg = get_mem_cgroup_from_mm(current->mm);
	return 0;
}

int arena_set_user_range(struct bpf_arena *arena, u64 start, u64 end)
{
	unsigned long *used;

	size_t longs = BITS_TO_LONGS((end - start) >> PAGE_SHIFT);

	/* One allocation: used, then resv, then freeing. */
	used = kvcalloc(longs * 3, sizeof(long),
			GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
	if (!used)
		return -ENOMEM;
	arena->used = used;
	arena->resv = used + longs;
	arena->freeing = used + 2 * longs;
	arena->user_vm_end = end;
	/* Lock-free readers test start (arena_has_range()) before the rest. */
	smp_store_release(&arena->user_vm_start, start);
	return 0;
}

/* Marks [pgoff, pgoff + n) used if all of it is free. */
bool arena_range_reserve(struct bpf_arena *arena, unsigned long pgoff, unsigned long n)
{
	if (find_next_bit(arena->used, pgoff + n, pgoff) < pgoff + n)
		return false;
	bitmap_set(arena->used, pgoff, n);
	return true;
}

/* Finds and marks the first free run of n pages. */
bool arena_range_alloc(struct bpf_arena *arena, unsigned long *pgoff, unsigned long n)
{
	unsigned long max = arena_page_cnt_max(arena);
	unsigned long start = bitmap_find_next_zero_area(arena->used, max, 0, n, 0);

	if (start >= max)
		return false;
	bitmap_set(arena->used, start, n);
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

static int set_pte_cb(pte_t *pte, unsigned long addr, void *data)
{
	struct page ***pages = data;

	if (WARN_ON_ONCE(!pte_none(ptep_get(pte))))
		return -EBUSY;
	set_pte_at(ksyms.init_mm, addr, pte, mk_pte(**pages, PAGE_KERNEL));
	(*pages)++;
	return 0;
}

struct clear_ctx {
	struct page **pages;
	unsigned int nr;
};

static int clear_pte_cb(pte_t *pte, unsigned long addr, void *data)
{
	struct clear_ctx *ctx = data;
	pte_t old = ptep_get_and_clear(ksyms.init_mm, addr, pte);

	if (!pte_none(old))
		ctx->pages[ctx->nr++] = pte_page(old);
	return 0;
}

/*
 * Clears [kaddr, kaddr + n pages) of the window and returns the pages that
 * were mapped there; plock held.  The caller flushes the TLB (not under
 * plock: flush_tlb_kernel_range() needs interrupts on).
 */
static unsigned int kern_clear(struct bpf_arena *arena, unsigned long kaddr, unsigned int n,
			       struct page **pages)
{
	struct clear_ctx ctx = { .pages = pages };

	arena_window_for_each_pte(arena, kaddr, n, clear_pte_cb, &ctx);
	return ctx.nr;
}

static void kern_flush(unsigned long kaddr, unsigned int n)
{
	if (!n)
		return;
	ksyms.flush_tlb_kernel_range(kaddr, kaddr + ((unsigned long)n << PAGE_SHIFT));
}

/*
 * Maps n pages at kaddr, whose page tables exist (arena_populate_tables()),
 * so apply_to_page_range() allocates nothing here; plock held.  (Its
 * _existing_ variant would skip the empty PTEs.)  Returns how many were
 * mapped: all of them unless a PTE is not empty, which the invariant excludes.
 */
static unsigned int kern_map(unsigned long kaddr, unsigned int n, struct page **pages)
{
	struct page **cursor = pages;

	apply_to_page_range(ksyms.init_mm, kaddr, (unsigned long)n << PAGE_SHIFT,
			    set_pte_cb, &cursor);
	return cursor - pages;
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
	atomic64_inc(&arena->lock_busy);
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

/*
 * Page arrays of up to SMALL_PAGES pages live on the stack (128 bytes): a
 * kvcalloc() and kvfree() cost more than the rest of a one-page alloc or
 * free.  A free short of memory for a larger array goes SMALL_PAGES at a time.
 */
#define SMALL_PAGES	16U
/* Pages one step of a free handles under plock (PLOCK_BATCH: 1 KiB of array). */
#define FREE_BATCH	128U

long arena_alloc_pages(struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
		       int node_id, struct arena_payer *payer, u64 *out)
{
	unsigned long pgoff, flags, kaddr;
	struct page **pages, *small[SMALL_PAGES];
	unsigned int i, mapped;
	u32 uaddr32;
	long ret;
	bool ok;

	ret = arena_alloc_check(arena, uaddr, page_cnt, node_id, &pgoff);
	if (ret)
		return ret;

	ret = arena_payer_charge(payer, page_cnt, arena->map.id);
	if (ret)
		return ret;
	pages = small;
	if (page_cnt <= SMALL_PAGES)
		memset(small, 0, page_cnt * sizeof(*small));
	else
		pages = kvcalloc(page_cnt, sizeof(*pages),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
	if (!pages) {
		arena_payer_uncharge(payer, page_cnt);
		return -ENOMEM;
	}

	mutex_lock(&arena->lock);
	flags = arena_plock(arena);
	ok = uaddr ? arena_range_reserve(arena, pgoff, page_cnt) :
		     arena_range_alloc(arena, &pgoff, page_cnt);
	arena_punlock(arena, flags);
	if (!ok) {
		ret = uaddr ? -EBUSY : -ENOMEM;
		goto out_unlock;
	}
	/*
	 * The range is ours (used) but empty.  A non-sleepable free of it
	 * meanwhile marks it freeing: the worker, which needs arena->lock,
	 * unmaps it after us, as if the free had come after this allocation.
	 */
	for (i = 0; i < page_cnt; i++) {
		pages[i] = arena_page_alloc(arena, node_id, payer);
		if (!pages[i]) {
			ret = -ENOMEM;
			goto out_free;
		}
	}
	uaddr32 = (u32)(arena->user_vm_start + (pgoff << PAGE_SHIFT));
	kaddr = arena_kaddr(arena, uaddr32);
	ret = arena_populate_tables(arena, kaddr, page_cnt, payer);
	if (ret)
		goto out_free;
	flags = arena_plock(arena);
	mapped = kern_map(kaddr, page_cnt, pages);
	if (mapped != page_cnt) {
		kern_clear(arena, kaddr, mapped, pages);
		arena_punlock(arena, flags);
		kern_flush(kaddr, mapped);
		ret = -EBUSY;
		goto out_free;
	}
	arena_punlock(arena, flags);
	for (i = 0; i < page_cnt; i++)
		arena_page_attach_payer(pages[i], payer);
	atomic64_add(page_cnt, &arena->pages);
	atomic64_add(page_cnt, &arena->kern_allocs);
	mutex_unlock(&arena->lock);
	if (pages != small)
		kvfree(pages);
	*out = arena_clear_lo32(arena->user_vm_start) + uaddr32;
	return 0;

out_free:
	for (i = 0; i < page_cnt && pages[i]; i++)
		__free_page(pages[i]);
	flags = arena_plock(arena);
	bitmap_clear(arena->used, pgoff, page_cnt);
	bitmap_clear(arena->freeing, pgoff, page_cnt);
	arena_punlock(arena, flags);
	arena_trim_tables(arena, pgoff, page_cnt);
out_unlock:
	mutex_unlock(&arena->lock);
	if (pages != small)
		kvfree(pages);
	arena_payer_uncharge(payer, page_cnt);
	return ret;
}

/*
 * Is the one page of a free mapped by a process?  Upstream's rule
 * (arena_free_pages() of kernel/bpf/arena.c): a single page is zapped from
 * user space only if it is mapped, a larger range always.  Asked after the
 * kernel PTE is cleared under arena->lock: faults map pages only while
 * they hold that lock (arena_fault()), so every user PTE is counted.
 */
static bool free_needs_zap(struct page **pages, unsigned int n, unsigned int nr)
{
	return n > 1 || (nr && page_mapped(pages[0]));
}

long arena_free_pages(struct bpf_arena *arena, u64 uaddr, u32 page_cnt)
{
	struct page **pages, *small[SMALL_PAGES];
	unsigned int i, nr, n, batch, done;
	unsigned long pgoff, pgoff0, flags, kaddr;
	u64 full_uaddr, uaddr_end;
	long total = 0;
	u32 uaddr32;

	if (!arena_has_range(arena) || !page_cnt)
		return 0;
	uaddr32 = (u32)uaddr & PAGE_MASK;
	full_uaddr = arena_clear_lo32(arena->user_vm_start) + uaddr32;
	if (full_uaddr < arena->user_vm_start)
		return 0;
	uaddr_end = min(arena->user_vm_end, full_uaddr + ((u64)page_cnt << PAGE_SHIFT));
	if (full_uaddr >= uaddr_end)
		return 0;
	page_cnt = (uaddr_end - full_uaddr) >> PAGE_SHIFT;
	pgoff0 = arena_compute_pgoff(arena, uaddr32);
	pgoff = pgoff0;
	kaddr = arena_kaddr(arena, uaddr32);

	/*
	 * FREE_BATCH pages at a time (a TLB flush and a zap each): the page
	 * array a caller makes the kernel hold stays small whatever the range
	 * (a 4 GiB free would need 8 MiB), and it is charged to the caller.
	 * Short of memory for it: SMALL_PAGES at a time.  A free never fails:
	 * the kfunc has no way to report it, and a program (or the stress's
	 * model) that freed must not find the pages still there.
	 */
	batch = min_t(u32, page_cnt, FREE_BATCH);
	pages = batch <= SMALL_PAGES ? small :
		kmalloc_array(batch, sizeof(*pages),
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_NORETRY);
	if (!pages) {
		pages = small;
		batch = SMALL_PAGES;
	}
	mutex_lock(&arena->lock);
	for (done = 0; done < page_cnt; done += n, pgoff += n, kaddr += (unsigned long)n << PAGE_SHIFT) {
		n = min(batch, page_cnt - done);
		cond_resched();
		flags = arena_plock(arena);
		/* Nothing used here: no page, no mapping, nothing to flush. */
		if (find_next_bit(arena->used, pgoff + n, pgoff) >= pgoff + n) {
			arena_punlock(arena, flags);
			continue;
		}
		/*
		 * The whole batch stays used until no mapping of its pages is
		 * left: also its free pages, which a non-sleepable allocation
		 * or a reservation (plock only) could otherwise take while plock
		 * is dropped for the flush and zap, and lose when the batch is
		 * made free below.
		 */
		bitmap_set(arena->used, pgoff, n);
		nr = kern_clear(arena, kaddr, n, pages);
		arena_punlock(arena, flags);
		kern_flush(kaddr, n);
		/* User mappings before the range is reusable, so nobody reaches a freed page. */
		if (free_needs_zap(pages, n, nr))
			arena_zap(arena, pgoff, n);
		flags = arena_plock(arena);
		bitmap_clear(arena->used, pgoff, n);
		bitmap_clear(arena->resv, pgoff, n);
		bitmap_clear(arena->freeing, pgoff, n);
		arena_punlock(arena, flags);
		atomic64_sub(nr, &arena->pages);
		atomic64_add(nr, &arena->kern_frees);
		for (i = 0; i < nr; i++) {
			arena_page_release_payer(pages[i]);
			__free_page(pages[i]);
		}
		total += nr;
	}
	arena_trim_tables(arena, pgoff0, page_cnt);
	mutex_unlock(&arena->lock);
	if (pages != small)
		kfree(pages);
	return total;
}

int arena_reserve_pages(struct bpf_arena *arena, u64 uaddr, u32 page_cnt)
{
	unsigned long flags;
	u64 pgoff;
	int ret = 0;

	/* Upstream's checks and errnos, in its order (kernel/bpf/arena.c). */
	if (uaddr & ~PAGE_MASK)
		return 0;
	if (!arena_has_range(arena))
		return -EINVAL;
	pgoff = arena_compute_pgoff(arena, uaddr);
	if (pgoff + page_cnt > arena_page_cnt_max(arena))
		return -EINVAL;
	if (!arena_plock_nosleep(arena, &flags))
		return -EBUSY;
	/* Cannot reserve pages that are allocated (or reserved). */
	if (find_next_bit(arena->used, pgoff + page_cnt, pgoff) < pgoff + page_cnt) {
		ret = -EBUSY;
	} else {
		bitmap_set(arena->used, pgoff, page_cnt);
		bitmap_set(arena->resv, pgoff, page_cnt);
	}
	arena_punlock(arena, flags);
	return ret;
}

/* Page table work per plock hold (bounds what a non-sleepable caller waits for). */
#define PLOCK_BATCH	128UL
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
		s = find_next_bit(arena->freeing, max, s);
		if (s >= max) {
			arena_punlock(arena, flags);
			break;
		}
		n = min3(max - s, (unsigned long)(max_pages - *nr_pages), PLOCK_BATCH);
		e = find_next_zero_bit(arena->freeing, s + n, s);
		/* The run stays used (and freeing) until no mapping of it is left. */
		*nr_pages += kern_clear(arena, arena_kaddr(arena, (u32)(arena->user_vm_start +
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
		kern_flush(arena_kaddr(arena, (u32)(arena->user_vm_start + (lo << PAGE_SHIFT))),
			   hi - lo);
	for (i = 0; i < nruns; i++)
		arena_zap(arena, runs[2 * i], runs[2 * i + 1] - runs[2 * i]);
	/* Only the runs this pass unmapped: newer frees wait for the next. */
	flags = arena_plock(arena);
	for (i = 0; i < nruns; i++) {
		unsigned long s = runs[2 * i], n = runs[2 * i + 1] - s;

		bitmap_clear(arena->used, s, n);
		bitmap_clear(arena->resv, s, n);
		bitmap_clear(arena->freeing, s, n);
	}
	arena_punlock(arena, flags);
	for (i = 0; i < nr; i++) {
		arena_page_release_payer(pages[i]);
		arena_pool_recycle(arena, pages[i]);
	}
	for (i = 0; i < nruns; i++)
		arena_trim_tables(arena, runs[2 * i], runs[2 * i + 1] - runs[2 * i]);
	atomic64_sub(nr, &arena->pages);
	atomic64_add(nr, &arena->kern_frees);
	atomic64_add(nr, &arena->deferred_frees);
}

/*
 * The worker's unmapping of one page, for a user fault on it (bounded: a
 * fault must not do the whole arena's pending frees); arena->lock held.
 */
static void arena_unmap_freeing_page(struct bpf_arena *arena, pgoff_t pgoff)
{
	unsigned long runs[2] = { pgoff, pgoff + 1 }, flags;
	struct page *page;
	unsigned int nr = 0;
	bool freeing;

	flags = arena_plock(arena);
	freeing = test_bit(pgoff, arena->freeing);
	if (freeing)
		nr = kern_clear(arena, arena_kaddr(arena, (u32)(arena->user_vm_start +
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

/* A zeroed page charged to payer, or NULL; not under arena->lock (it may reclaim). */
static struct page *arena_charged_page(struct bpf_arena *arena, struct arena_payer *payer)
{
	struct page *page;

	if (arena_payer_charge(payer, 1, arena->map.id))
		return NULL;
	page = arena_page_alloc(arena, NUMA_NO_NODE, payer);
	if (!page)
		arena_payer_uncharge(payer, 1);
	return page;
}

static void arena_uncharged_free(struct page *page, struct arena_payer *payer)
{
	__free_page(page);
	arena_payer_uncharge(payer, 1);
}

/*
 * The page at pgoff, allocating it if it is free or reserved (upstream
 * lets a user fault populate a reserved page); arena->lock held.  NULL if
 * it cannot be had.  The new page is *spare when the caller brought one
 * (arena_charged_page(), outside the lock; taken: *spare becomes NULL),
 * else, with spare NULL, allocated here; with *spare NULL the caller must
 * bring one first (*need_page).
 */
static struct page *arena_get_or_alloc(struct bpf_arena *arena, pgoff_t pgoff,
				       u32 uaddr32, struct arena_payer *payer,
				       struct page **spare, bool *need_page,
				       bool *allocated)
{
	unsigned long kaddr = arena_kaddr(arena, uaddr32), flags;
	struct page *page, *fresh;
	bool busy;

	*allocated = false;
	*need_page = false;
	flags = arena_plock(arena);
	page = vmalloc_to_page((void *)kaddr);
	/* Used, not reserved, no page: a state only the lock holders see. */
	busy = !page && test_bit(pgoff, arena->used) && !test_bit(pgoff, arena->resv);
	arena_punlock(arena, flags);
	if (page || busy)
		return page;
	if (spare && !*spare) {
		*need_page = true;
		return NULL;
	}
	fresh = spare ? *spare : arena_charged_page(arena, payer);
	if (!fresh)
		return NULL;
	if (arena_populate_tables(arena, kaddr, 1, payer))
		goto unused;
	flags = arena_plock(arena);
	page = vmalloc_to_page((void *)kaddr);
	if (!page && (!test_bit(pgoff, arena->used) || test_bit(pgoff, arena->resv)) &&
	    kern_map(kaddr, 1, &fresh) == 1) {
		set_bit(pgoff, arena->used);
		clear_bit(pgoff, arena->resv);
		page = fresh;
		*allocated = true;
	}
	arena_punlock(arena, flags);
	if (*allocated) {
		if (spare)
			*spare = NULL;
		arena_page_attach_payer(page, payer);
		atomic64_inc(&arena->pages);
		return page;
	}
unused:
	if (!spare)
		arena_uncharged_free(fresh, payer);
	arena_trim_tables(arena, pgoff, 1);
	return page;
}

long arena_prefault(struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
		    struct arena_payer *payer)
{
	u64 page_cnt_max = arena_page_cnt_max(arena);
	unsigned long pgoff;
	bool allocated, need_page;
	long done = 0;
	u32 i;

	if (!arena_has_range(arena))
		return -ENXIO;
	if (!page_cnt || (uaddr & ~PAGE_MASK))
		return -EINVAL;
	if (uaddr < arena->user_vm_start || uaddr >= arena->user_vm_end)
		return -ERANGE;
	pgoff = arena_compute_pgoff(arena, uaddr);
	if (page_cnt > page_cnt_max || pgoff > page_cnt_max - page_cnt)
		return -ERANGE;

	mutex_lock(&arena->lock);
	for (i = 0; i < page_cnt; i++) {
		u32 uaddr32 = (u32)(uaddr + ((u64)i << PAGE_SHIFT));

		if (!arena_get_or_alloc(arena, pgoff + i, uaddr32, payer, NULL, &need_page,
					&allocated)) {
			done = -ENOMEM;
			break;
		}
		done += allocated;
		if (fatal_signal_pending(current)) {
			done = -EINTR;
			break;
		}
	}
	if (done > 0)
		atomic64_add(done, &arena->kern_allocs);
	mutex_unlock(&arena->lock);
	return done;
}

/* Does a non-sleepable free wait for the worker to take pgoff out? */
static bool arena_freeing(struct bpf_arena *arena, pgoff_t pgoff)
{
	unsigned long flags = arena_plock(arena);
	bool ret = test_bit(pgoff, arena->freeing);

	arena_punlock(arena, flags);
	return ret;
}

static int noop_pte_cb(pte_t *pte, unsigned long addr, void *data)
{
	return 0;
}

vm_fault_t arena_fault(struct bpf_arena *arena, struct vm_fault *vmf,
		       struct arena_payer *payer, bool may_alloc)
{
	unsigned long uaddr = vmf->address, kaddr = arena_kaddr(arena, (u32)uaddr), flags;
	bool allocated, need_page = false;
	pgoff_t pgoff = vmf->pgoff;
	struct page *page, *spare = NULL;
	vm_fault_t ret;
	int err;

	/*
	 * What may reclaim happens before arena->lock, which every user of
	 * the arena waits for: the page table of the faulting process, and
	 * the new page (in the payer's memcg), brought in below.
	 */
	if (apply_to_page_range(vmf->vma->vm_mm, uaddr & PAGE_MASK, PAGE_SIZE, noop_pte_cb, NULL))
		return VM_FAULT_OOM;
	if (arena->map.map_flags & BPF_ARENA_F_SEGV_ON_FAULT)
		may_alloc = false;
again:
	mutex_lock(&arena->lock);
	if (!may_alloc) {
		/*
		 * User space asked for SIGSEGV on pages BPF did not allocate,
		 * or the mapping may not allocate (no write right, frozen).
		 */
		flags = arena_plock(arena);
		page = vmalloc_to_page((void *)kaddr);
		arena_punlock(arena, flags);
	} else {
		page = arena_get_or_alloc(arena, pgoff, (u32)uaddr, payer, &spare, &need_page,
					  &allocated);
		if (!page && !need_page && arena_freeing(arena, pgoff)) {
			/*
			 * A non-sleepable free (or a failed allocation's tail)
			 * waits for the worker: do its work for this page now,
			 * as upstream's free, synchronous, would have, rather
			 * than fail a fault the free will make good.
			 */
			arena_unmap_freeing_page(arena, pgoff);
			page = arena_get_or_alloc(arena, pgoff, (u32)uaddr, payer, &spare,
						  &need_page, &allocated);
		}
		if (need_page) {
			mutex_unlock(&arena->lock);
			spare = arena_charged_page(arena, payer);
			if (!spare)
				return VM_FAULT_SIGSEGV;
			goto again;
		}
		if (page && allocated)
			atomic64_inc(&arena->user_faults);
	}
	/*
	 * The user PTE is installed here, under arena->lock, which every
	 * free holds from clearing the kernel PTE to zapping the user
	 * mappings: a free either comes first (the page is not found) or
	 * zaps this PTE after.  Left to the core after this returned, a free
	 * could zap in between and the core then map a page the arena no
	 * longer has.  vm_insert_page() takes the PTE's own reference; the
	 * page table exists (above), so it allocates nothing.
	 */
	if (!page) {
		ret = VM_FAULT_SIGSEGV;
	} else if (PageHWPoison(page)) {
		ret = VM_FAULT_HWPOISON;
	} else {
		err = vm_insert_page(vmf->vma, uaddr & PAGE_MASK, page);
		/* -EBUSY: a sibling thread's fault mapped it first. */
		ret = !err || err == -EBUSY ? VM_FAULT_NOPAGE :
		      err == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
	}
	mutex_unlock(&arena->lock);
	if (spare)
		arena_uncharged_free(spare, payer);
	return ret;
}

static int free_pte_cb(pte_t *pte, unsigned long addr, void *data)
{
	pte_t old = ptep_get_and_clear(ksyms.init_mm, addr, pte);
	unsigned long *nr = data;

	if (!pte_none(old)) {
		arena_page_release_payer(pte_page(old));
		__free_page(pte_page(old));
		(*nr)++;
	}
	return 0;
}

void arena_mem_free(struct bpf_arena *arena)
{
	unsigned long nr = 0;

	if (arena->kern_vm) {
		/*
		 * No user mapping and no program is left: free every page
		 * still mapped in the window, the page tables that map only
		 * the window, then the window itself.
		 */
		arena_window_for_each_pte(arena, (unsigned long)arena->kern_vm->addr,
					  ARENA_KERN_VM_SZ >> PAGE_SHIFT, free_pte_cb, &nr);
		arena_tables_free(arena);
		free_vm_area(arena->kern_vm);
		arena->kern_vm = NULL;
	}
	kvfree(arena->used);
	if (arena->memcg)
		mem_cgroup_put(arena->memcg);
}

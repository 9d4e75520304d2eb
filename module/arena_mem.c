// SPDX-License-Identifier: GPL-2.0
/*
 * The sleepable paths of arena memory: the window's creation and
 * destruction, the user range, allocation, free, reservation, prefault and
 * the page behind a user fault.  Semantics follow upstream
 * kernel/bpf/arena.c (6.12).
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
	arena->bits.used = used;
	arena->bits.resv = used + longs;
	arena->bits.freeing = used + 2 * longs;
	arena->user_vm_end = end;
	/* Lock-free readers test start (arena_has_range()) before the rest. */
	smp_store_release(&arena->user_vm_start, start);
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
	mapped = arena_window_map(kaddr, page_cnt, pages);
	if (mapped != page_cnt) {
		arena_window_clear(arena, kaddr, mapped, pages);
		arena_punlock(arena, flags);
		arena_window_flush(kaddr, mapped);
		ret = -EBUSY;
		goto out_free;
	}
	arena_punlock(arena, flags);
	for (i = 0; i < page_cnt; i++)
		arena_page_attach_payer(pages[i], payer);
	arena_stat_add(arena, pages, page_cnt);
	mutex_unlock(&arena->lock);
	if (pages != small)
		kvfree(pages);
	*out = arena_clear_lo32(arena->user_vm_start) + uaddr32;
	return 0;

out_free:
	for (i = 0; i < page_cnt && pages[i]; i++)
		__free_page(pages[i]);
	flags = arena_plock(arena);
	bitmap_clear(arena->bits.used, pgoff, page_cnt);
	bitmap_clear(arena->bits.freeing, pgoff, page_cnt);
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
		if (find_next_bit(arena->bits.used, pgoff + n, pgoff) >= pgoff + n) {
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
		bitmap_set(arena->bits.used, pgoff, n);
		nr = arena_window_clear(arena, kaddr, n, pages);
		arena_punlock(arena, flags);
		arena_window_flush(kaddr, n);
		/* User mappings before the range is reusable, so nobody reaches a freed page. */
		if (free_needs_zap(pages, n, nr))
			arena_zap(arena, pgoff, n);
		flags = arena_plock(arena);
		bitmap_clear(arena->bits.used, pgoff, n);
		bitmap_clear(arena->bits.resv, pgoff, n);
		bitmap_clear(arena->bits.freeing, pgoff, n);
		arena_punlock(arena, flags);
		arena_stat_sub(arena, pages, nr);
		arena_stat_add(arena, freed, nr);
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
	if (find_next_bit(arena->bits.used, pgoff + page_cnt, pgoff) < pgoff + page_cnt) {
		ret = -EBUSY;
	} else {
		bitmap_set(arena->bits.used, pgoff, page_cnt);
		bitmap_set(arena->bits.resv, pgoff, page_cnt);
	}
	arena_punlock(arena, flags);
	return ret;
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
	busy = !page && test_bit(pgoff, arena->bits.used) && !test_bit(pgoff, arena->bits.resv);
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
	if (!page && (!test_bit(pgoff, arena->bits.used) || test_bit(pgoff, arena->bits.resv)) &&
	    arena_window_map(kaddr, 1, &fresh) == 1) {
		set_bit(pgoff, arena->bits.used);
		clear_bit(pgoff, arena->bits.resv);
		page = fresh;
		*allocated = true;
	}
	arena_punlock(arena, flags);
	if (*allocated) {
		if (spare)
			*spare = NULL;
		arena_page_attach_payer(page, payer);
		arena_stat_inc(arena, pages);
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
		/* A million pages that exist already take a while. */
		if ((i & 4095) == 4095)
			cond_resched();
	}
	mutex_unlock(&arena->lock);
	return done;
}

/* Does a non-sleepable free wait for the worker to take pgoff out? */
static bool arena_freeing(struct bpf_arena *arena, pgoff_t pgoff)
{
	unsigned long flags = arena_plock(arena);
	bool ret = test_bit(pgoff, arena->bits.freeing);

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
			arena_stat_inc(arena, alloc_fault);
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
		arena_window_walk_ptes(arena, (unsigned long)arena->kern_vm->addr,
					  ARENA_KERN_VM_SZ >> PAGE_SHIFT, free_pte_cb, &nr);
		arena_tables_free(arena);
		free_vm_area(arena->kern_vm);
		arena->kern_vm = NULL;
	}
	kvfree(arena->bits.used);
	if (arena->memcg)
		mem_cgroup_put(arena->memcg);
}

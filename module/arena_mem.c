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

#include "arena.h"
#include "ksyms.h"

static u64 clear_lo32(u64 val)
{
	return val & ~(u64)~0U;
}

/* Page offset of a user address inside the arena, from its low 32 bits. */
static u64 compute_pgoff(const struct bpf_arena *arena, u64 uaddr)
{
	return (u32)(uaddr - (u32)arena->user_vm_start) >> PAGE_SHIFT;
}

u64 arena_page_cnt_max(const struct bpf_arena *arena)
{
	return (arena->user_vm_end - arena->user_vm_start) >> PAGE_SHIFT;
}

static unsigned long kaddr_of(const struct bpf_arena *arena, u32 uaddr32)
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
	if (!mem_cgroup_disabled())
		arena->memcg = get_mem_cgroup_from_mm(current->mm);
	return 0;
}

int arena_set_user_range(struct bpf_arena *arena, u64 start, u64 end)
{
	unsigned long *used;

	used = kvcalloc(BITS_TO_LONGS((end - start) >> PAGE_SHIFT), sizeof(long),
			GFP_KERNEL_ACCOUNT);
	if (!used)
		return -ENOMEM;
	arena->used = used;
	arena->user_vm_end = end;
	/* Lock-free readers test start (arena_has_range()) before the rest. */
	smp_store_release(&arena->user_vm_start, start);
	return 0;
}

/* Marks [pgoff, pgoff + n) used if all of it is free. */
static bool range_reserve(struct bpf_arena *arena, unsigned long pgoff, unsigned long n)
{
	if (find_next_bit(arena->used, pgoff + n, pgoff) < pgoff + n)
		return false;
	bitmap_set(arena->used, pgoff, n);
	return true;
}

/* Finds and marks the first free run of n pages. */
static bool range_alloc(struct bpf_arena *arena, unsigned long *pgoff, unsigned long n)
{
	unsigned long max = arena_page_cnt_max(arena);
	unsigned long start = bitmap_find_next_zero_area(arena->used, max, 0, n, 0);

	if (start >= max)
		return false;
	bitmap_set(arena->used, start, n);
	*pgoff = start;
	return true;
}

/*
 * Charges n pages of a device arena to its creator's RLIMIT_MEMLOCK, as
 * io_uring's __io_account_mem() (the limit is the creator's, read at
 * creation: pages are also allocated by faults of other processes and by
 * BPF programs).  0 or -ENOMEM, reported once per arena.
 */
static int arena_charge(struct bpf_arena *arena, unsigned long n)
{
	struct user_struct *user = arena->memlock_user;
	unsigned long cur, new;

	if (!user)
		return 0;
	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + n;
		if (new < cur || new > arena->memlock_limit) {
			if (!test_and_set_bit(0, &arena->memlock_warned))
				pr_warn_ratelimited("arena %u of uid %u: %lu more pages would exceed the creator's RLIMIT_MEMLOCK (%lu of %lu pages in use): ENOMEM\n",
						    arena->map.id,
						    from_kuid_munged(&init_user_ns, user->uid),
						    n, cur, arena->memlock_limit);
			return -ENOMEM;
		}
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

static void arena_uncharge(struct bpf_arena *arena, unsigned long n)
{
	if (arena->memlock_user && n)
		atomic_long_sub(n, &arena->memlock_user->locked_vm);
}

static struct page *arena_page_alloc(struct bpf_arena *arena, int node_id)
{
	gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_ACCOUNT;
	struct mem_cgroup *old;
	struct page *page;

	/*
	 * Nobody owns a device arena's pages, so no OOM kill can free them:
	 * fail instead of invoking the global or the memcg OOM killer.
	 */
	if (arena->dev)
		gfp |= __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	old = set_active_memcg(arena->memcg);
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

/* Unmaps [kaddr, kaddr + n pages) from the window; returns the pages. */
static unsigned int kern_unmap(unsigned long kaddr, unsigned int n, struct page **pages)
{
	struct clear_ctx ctx = { .pages = pages };

	apply_to_existing_page_range(ksyms.init_mm, kaddr, (unsigned long)n << PAGE_SHIFT,
				     clear_pte_cb, &ctx);
	ksyms.flush_tlb_kernel_range(kaddr, kaddr + ((unsigned long)n << PAGE_SHIFT));
	return ctx.nr;
}

/* Maps n pages at kaddr; on failure nothing stays mapped. */
static int kern_map(unsigned long kaddr, unsigned int n, struct page **pages)
{
	struct page **cursor = pages;
	int err;

	err = apply_to_page_range(ksyms.init_mm, kaddr, (unsigned long)n << PAGE_SHIFT,
				  set_pte_cb, &cursor);
	/*
	 * Undo the part that was mapped.  It is pages[0..k) in order, so
	 * kern_unmap() rewrites those entries with the same pointers; the
	 * pages stay the caller's.
	 */
	if (err)
		kern_unmap(kaddr, n, pages);
	return err;
}

static bool node_ok(int node_id)
{
	return node_id == NUMA_NO_NODE ||
	       ((unsigned int)node_id < nr_node_ids && node_online(node_id));
}

long arena_alloc_pages(struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
		       int node_id, u64 *out)
{
	u64 page_cnt_max = arena_page_cnt_max(arena);
	unsigned long pgoff = 0;
	struct page **pages;
	unsigned int i;
	u32 uaddr32;
	long ret;

	if (!arena_has_range(arena))
		return -ENXIO;
	if (!page_cnt || !node_ok(node_id))
		return -EINVAL;
	if (page_cnt > page_cnt_max)
		return -ERANGE;
	if (uaddr) {
		if (uaddr & ~PAGE_MASK)
			return -EINVAL;
		if (uaddr < arena->user_vm_start || uaddr >= arena->user_vm_end)
			return -ERANGE;
		pgoff = compute_pgoff(arena, uaddr);
		if (pgoff > page_cnt_max - page_cnt)
			return -ERANGE;
	}

	ret = arena_charge(arena, page_cnt);
	if (ret)
		return ret;
	pages = kvcalloc(page_cnt, sizeof(*pages), GFP_KERNEL | __GFP_NOWARN);
	if (!pages) {
		arena_uncharge(arena, page_cnt);
		return -ENOMEM;
	}

	mutex_lock(&arena->lock);
	if (uaddr ? !range_reserve(arena, pgoff, page_cnt) : !range_alloc(arena, &pgoff, page_cnt)) {
		ret = uaddr ? -EBUSY : -ENOMEM;
		goto out_unlock;
	}

	for (i = 0; i < page_cnt; i++) {
		pages[i] = arena_page_alloc(arena, node_id);
		if (!pages[i]) {
			ret = -ENOMEM;
			goto out_free;
		}
	}
	uaddr32 = (u32)(arena->user_vm_start + (pgoff << PAGE_SHIFT));
	ret = kern_map(kaddr_of(arena, uaddr32), page_cnt, pages);
	if (ret)
		goto out_free;
	atomic64_add(page_cnt, &arena->pages);
	atomic64_add(page_cnt, &arena->kern_allocs);
	mutex_unlock(&arena->lock);
	kvfree(pages);
	*out = clear_lo32(arena->user_vm_start) + uaddr32;
	return 0;

out_free:
	for (i = 0; i < page_cnt && pages[i]; i++)
		__free_page(pages[i]);
	bitmap_clear(arena->used, pgoff, page_cnt);
out_unlock:
	mutex_unlock(&arena->lock);
	kvfree(pages);
	arena_uncharge(arena, page_cnt);
	return ret;
}

long arena_free_pages(struct bpf_arena *arena, u64 uaddr, u32 page_cnt)
{
	u64 full_uaddr, uaddr_end;
	struct page **pages;
	unsigned int i, nr;
	unsigned long pgoff;
	u32 uaddr32;

	if (!arena_has_range(arena) || !page_cnt)
		return 0;
	uaddr32 = (u32)uaddr & PAGE_MASK;
	full_uaddr = clear_lo32(arena->user_vm_start) + uaddr32;
	if (full_uaddr < arena->user_vm_start)
		return 0;
	uaddr_end = min(arena->user_vm_end, full_uaddr + ((u64)page_cnt << PAGE_SHIFT));
	if (full_uaddr >= uaddr_end)
		return 0;
	page_cnt = (uaddr_end - full_uaddr) >> PAGE_SHIFT;
	pgoff = compute_pgoff(arena, uaddr32);

	pages = kvcalloc(page_cnt, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	mutex_lock(&arena->lock);
	bitmap_clear(arena->used, pgoff, page_cnt);
	/* User mappings first, so nobody reaches a page after it is freed. */
	arena_zap(arena, pgoff, page_cnt);
	nr = kern_unmap(kaddr_of(arena, uaddr32), page_cnt, pages);
	atomic64_sub(nr, &arena->pages);
	atomic64_add(nr, &arena->kern_frees);
	mutex_unlock(&arena->lock);
	for (i = 0; i < nr; i++)
		__free_page(pages[i]);
	kvfree(pages);
	arena_uncharge(arena, nr);
	return nr;
}

/* Called with arena->lock held. */
static struct page *arena_get_or_alloc(struct bpf_arena *arena, pgoff_t pgoff,
				       u32 uaddr32, bool *allocated)
{
	unsigned long kaddr = kaddr_of(arena, uaddr32);
	struct page *page;

	*allocated = false;
	page = vmalloc_to_page((void *)kaddr);
	if (page)
		return page;
	if (test_and_set_bit(pgoff, arena->used))
		return NULL;	/* reserved by an allocation that failed half-way */
	if (arena_charge(arena, 1))
		goto erase;
	page = arena_page_alloc(arena, NUMA_NO_NODE);
	if (!page)
		goto uncharge;
	if (kern_map(kaddr, 1, &page)) {
		__free_page(page);
		goto uncharge;
	}
	atomic64_inc(&arena->pages);
	*allocated = true;
	return page;
uncharge:
	arena_uncharge(arena, 1);
erase:
	clear_bit(pgoff, arena->used);
	return NULL;
}

long arena_prefault(struct bpf_arena *arena, u64 uaddr, u32 page_cnt)
{
	u64 page_cnt_max = arena_page_cnt_max(arena);
	unsigned long pgoff;
	long done = 0;
	bool allocated;
	u32 i;

	if (!arena_has_range(arena))
		return -ENXIO;
	if (!page_cnt || (uaddr & ~PAGE_MASK))
		return -EINVAL;
	if (uaddr < arena->user_vm_start || uaddr >= arena->user_vm_end)
		return -ERANGE;
	pgoff = compute_pgoff(arena, uaddr);
	if (page_cnt > page_cnt_max || pgoff > page_cnt_max - page_cnt)
		return -ERANGE;

	mutex_lock(&arena->lock);
	for (i = 0; i < page_cnt; i++) {
		u32 uaddr32 = (u32)(uaddr + ((u64)i << PAGE_SHIFT));

		if (!arena_get_or_alloc(arena, pgoff + i, uaddr32, &allocated)) {
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

struct page *arena_fault_page(struct bpf_arena *arena, pgoff_t pgoff,
			      unsigned long uaddr)
{
	unsigned long kaddr = kaddr_of(arena, (u32)uaddr);
	struct page *page;
	bool allocated;

	mutex_lock(&arena->lock);
	if (arena->map.map_flags & BPF_ARENA_F_SEGV_ON_FAULT) {
		/* User space asked for SIGSEGV on pages BPF did not allocate. */
		page = vmalloc_to_page((void *)kaddr);
	} else {
		page = arena_get_or_alloc(arena, pgoff, (u32)uaddr, &allocated);
		if (page && allocated)
			atomic64_inc(&arena->user_faults);
	}
	if (page)
		get_page(page);	/* the user PTE's reference */
	mutex_unlock(&arena->lock);
	return page;
}

static int free_pte_cb(pte_t *pte, unsigned long addr, void *data)
{
	pte_t old = ptep_get_and_clear(ksyms.init_mm, addr, pte);
	unsigned long *nr = data;

	if (!pte_none(old)) {
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
		 * still mapped in the window, then the window itself.
		 */
		apply_to_existing_page_range(ksyms.init_mm, (unsigned long)arena->kern_vm->addr,
					     ARENA_KERN_VM_SZ, free_pte_cb, &nr);
		ksyms.flush_tlb_kernel_range((unsigned long)arena->kern_vm->addr,
					     (unsigned long)arena->kern_vm->addr + ARENA_KERN_VM_SZ);
		free_vm_area(arena->kern_vm);
		arena->kern_vm = NULL;
	}
	kvfree(arena->used);
	if (arena->memcg)
		mem_cgroup_put(arena->memcg);
	if (arena->memlock_user) {
		arena_uncharge(arena, nr);
		arena->memlock_user = NULL;
		put_cred(arena->memlock_cred);
		arena->memlock_cred = NULL;
	}
}

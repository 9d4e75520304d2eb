// SPDX-License-Identifier: GPL-2.0
/*
 * The arena's kernel window: its PTEs (mapped, cleared and walked here) and
 * its page tables, one PTE page per 2 MiB block that holds a page.
 *
 * Linux never frees vmalloc page tables (vunmap only clears PTEs), and
 * apply_to_page_range() allocates them charged to nobody.  An arena's window
 * is 4 GiB: left to the kernel, a user who allocates and frees one page in
 * every block would pin 8 MiB of PTE pages per arena, outside any limit.
 * So, for the blocks wholly inside the window's vm area (no other mapping
 * shares their PTE page):
 * - the PTE page is allocated here, charged like a page of the arena to the
 *   payer whose page made it (arena_payer.h: memcg, RLIMIT_MEMLOCK), and
 *   the payer is remembered (tables.payers);
 * - a PTE page charged to a payer's RLIMIT_MEMLOCK is freed, and
 *   uncharged, as soon as the block holds no page (arena_trim_tables()), so
 *   what a limited user pins is bounded by the pages it holds; unless
 *   non-sleepable programs use the arena: those map pages under plock
 *   without allocating, so the tables of their whole range stay
 *   (tables.ready, made by the program's loader).  Other PTE pages (made for
 *   an exempt payer, or for a kfunc, charged to a memcg all the same) stay
 *   while the arena lives, as upstream's do: allocating and freeing a page
 *   then costs no table and no TLB flush.
 * The two blocks that may be shared with a neighbouring vm area, and a
 * block whose PMD page does not exist yet (the first use of that GiB of
 * vmalloc space), get their tables from apply_to_page_range(): at most 2 +
 * 5 PTE pages per arena, a fixed cost bounded by the arena caps.
 *
 * Only arena->lock holders make or free tables.  A freed block is unhooked
 * (PMD entry cleared under plock, which the fault path's lookups hold),
 * the TLB flushed (which also drops the CPUs' cached PMD entries), and only
 * then freed, as the kernel's own pmd_free_pte_page().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/sched/mm.h>
#include <linux/vmalloc.h>
#include <asm/pgalloc.h>

#include "arena.h"
#include "ksyms.h"

static unsigned long table_block(const struct bpf_arena *arena, unsigned long kaddr)
{
	return (kaddr >> PMD_SHIFT) - ((unsigned long)arena->kern_vm->addr >> PMD_SHIFT);
}

static unsigned long block_addr(const struct bpf_arena *arena, unsigned long block)
{
	return (((unsigned long)arena->kern_vm->addr >> PMD_SHIFT) + block) << PMD_SHIFT;
}

/* Is the block wholly inside the vm area (guard page included)? */
static bool block_inner(const struct bpf_arena *arena, unsigned long block)
{
	unsigned long addr = block_addr(arena, block);
	unsigned long start = (unsigned long)arena->kern_vm->addr;

	return addr >= start && addr + PMD_SIZE <= start + arena->kern_vm->size;
}

/* The PMD entry of a kernel address, or NULL where a level above is empty. */
static pmd_t *kernel_pmd(unsigned long addr)
{
	pgd_t *pgd = pgd_offset_pgd(ksyms.init_mm->pgd, addr);
	p4d_t *p4d;
	pud_t *pud;

	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return NULL;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud) || pud_leaf(*pud) || pud_bad(*pud))
		return NULL;
	return pmd_offset(pud, addr);
}

/* The PTE page a PMD entry of the window points to, or NULL. */
static pte_t *pmd_table(pmd_t *pmd, unsigned long addr)
{
	if (!pmd || pmd_none(*pmd) || pmd_leaf(*pmd) || pmd_bad(*pmd))
		return NULL;
	return pte_offset_kernel(pmd, addr);
}

void arena_window_walk_ptes(struct bpf_arena *arena, unsigned long kaddr, unsigned long n,
			    pte_fn_t fn, void *data)
{
	unsigned long addr = kaddr, end = kaddr + (n << PAGE_SHIFT), next;
	pte_t *pte;

	while (addr < end) {
		next = pmd_addr_end(addr, end);
		pte = pmd_table(kernel_pmd(addr), addr);
		for (; pte && addr < next; addr += PAGE_SIZE, pte++)
			if (!pte_none(*pte))
				fn(pte, addr, data);
		addr = next;
	}
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
unsigned int arena_window_clear(struct bpf_arena *arena, unsigned long kaddr, unsigned int n,
				struct page **pages)
{
	struct clear_ctx ctx = { .pages = pages };

	arena_window_walk_ptes(arena, kaddr, n, clear_pte_cb, &ctx);
	return ctx.nr;
}

void arena_window_flush(unsigned long kaddr, unsigned int n)
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
unsigned int arena_window_map(unsigned long kaddr, unsigned int n, struct page **pages)
{
	struct page **cursor = pages;

	apply_to_page_range(ksyms.init_mm, kaddr, (unsigned long)n << PAGE_SHIFT,
			    set_pte_cb, &cursor);
	return cursor - pages;
}

static bool pte_page_empty(pte_t *ptes)
{
	int i;

	for (i = 0; i < PTRS_PER_PTE; i++)
		if (!pte_none(ptes[i]))
			return false;
	return true;
}

static int noop_pte_cb(pte_t *pte, unsigned long addr, void *data)
{
	return 0;
}

/* Releases an unhooked PTE page, as ___pte_free_tlb() does. */
static void table_free(struct page *table)
{
	/*
	 * Xen PV (Debian's kernel runs as a PV guest) made the table
	 * read-only and pinned it when pmd_populate_kernel() hooked it; freed
	 * without this, the next owner of the page faults writing it.  A
	 * no-op on bare metal and KVM.
	 */
	paravirt_release_pte(page_to_pfn(table));
	pte_free_kernel(ksyms.init_mm, page_address(table));
}

/* Gives back the charge of block's PTE page, if a payer has one. */
static void table_uncharge(struct bpf_arena *arena, unsigned long block)
{
	struct arena_payer *payer = xa_erase(&arena->tables.payers, block);

	if (payer) {
		arena_payer_uncharge(payer, 1);
		arena_payer_put(payer);
	}
}

/* Makes the PTE page of an inner block whose PMD page exists; arena->lock held. */
static int table_make(struct bpf_arena *arena, unsigned long block, pmd_t *pmd,
		      struct arena_payer *payer)
{
	gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_ZERO;
	struct mem_cgroup *old;
	struct page *table;
	bool installed = false;
	int err;

	if (!pmd_none(*pmd))
		return 0;
	err = arena_payer_charge(payer, 1, arena->map.id);
	if (err)
		return err;
	if (payer)
		gfp |= __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	old = set_active_memcg(payer ? payer->memcg : arena->memcg);
	table = alloc_page(gfp);
	set_active_memcg(old);
	if (!table)
		goto uncharge;
	if (payer && payer->user) {
		if (xa_insert(&arena->tables.payers, block, payer,
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)) {
			__free_page(table);
			goto uncharge;
		}
		arena_payer_get(payer);
	}
	/* As __pte_alloc_kernel(). */
	spin_lock(&ksyms.init_mm->page_table_lock);
	if (likely(pmd_none(*pmd))) {
		smp_wmb();	/* the zeroed table before the entry that points to it */
		pmd_populate_kernel(ksyms.init_mm, pmd, page_address(table));
		installed = true;
	}
	spin_unlock(&ksyms.init_mm->page_table_lock);
	if (!installed) {
		__free_page(table);
		table_uncharge(arena, block);
	}
	return 0;
uncharge:
	arena_payer_uncharge(payer, 1);
	return -ENOMEM;
}

int arena_populate_tables(struct bpf_arena *arena, unsigned long kaddr, unsigned long n,
			  struct arena_payer *payer)
{
	unsigned long first = table_block(arena, kaddr);
	unsigned long last = table_block(arena, kaddr + (n << PAGE_SHIFT) - 1);
	unsigned long b, addr;
	pmd_t *pmd;
	int err;

	lockdep_assert_held(&arena->lock);
	if (last >= ARENA_TABLE_BLOCKS)
		return -EINVAL;
	for (b = find_next_zero_bit(arena->tables.blocks, last + 1, first); b <= last;
	     b = find_next_zero_bit(arena->tables.blocks, last + 1, b + 1)) {
		addr = max(block_addr(arena, b), kaddr);
		pmd = block_inner(arena, b) ? kernel_pmd(addr) : NULL;
		if (pmd)
			err = table_make(arena, b, pmd, payer);
		else
			err = apply_to_page_range(ksyms.init_mm, addr, PAGE_SIZE, noop_pte_cb, NULL);
		if (err)
			return err;
		__set_bit(b, arena->tables.blocks);
	}
	return 0;
}

/* Does any page of [lo, hi) have a PTE (used and not merely reserved)?  plock held. */
static bool range_has_pages(struct bpf_arena *arena, unsigned long lo, unsigned long hi)
{
	unsigned long i;

	for (i = find_next_bit(arena->bits.used, hi, lo); i < hi;
	     i = find_next_bit(arena->bits.used, hi, i + 1))
		if (!test_bit(i, arena->bits.resv))
			return true;
	return false;
}

/* Tables unhooked per TLB flush by arena_trim_tables(). */
#define TRIM_BATCH	16

/* Flushes [lo, hi) of the window once, then frees the batch's tables. */
static void trim_flush(struct bpf_arena *arena, unsigned long lo, unsigned long hi,
		       struct page **tables, unsigned long *blocks, unsigned int nr)
{
	unsigned int i;

	if (!nr)
		return;
	ksyms.flush_tlb_kernel_range(lo, hi);
	for (i = 0; i < nr; i++) {
		table_free(tables[i]);
		table_uncharge(arena, blocks[i]);
	}
}

void arena_trim_tables(struct bpf_arena *arena, unsigned long pgoff, unsigned long n)
{
	unsigned long base, first, last, b, addr, lo, hi, max, flags, flush_lo = 0;
	unsigned long blocks[TRIM_BATCH];
	struct page *tables[TRIM_BATCH];
	unsigned int nr = 0;
	pte_t *ptes;

	lockdep_assert_held(&arena->lock);
	if (!n || arena->tables.ready || !arena_has_range(arena))
		return;
	max = arena_page_cnt_max(arena);
	/* The kernel address of page offset 0; the user range never wraps in 32 bits. */
	base = arena_kaddr(arena, (u32)arena->user_vm_start);
	first = table_block(arena, base + (pgoff << PAGE_SHIFT));
	last = table_block(arena, base + ((pgoff + n - 1) << PAGE_SHIFT));
	for (b = first; b <= last && b < ARENA_TABLE_BLOCKS; b++) {
		if (!test_bit(b, arena->tables.blocks) || !xa_load(&arena->tables.payers, b))
			continue;
		addr = block_addr(arena, b);
		lo = addr > base ? (addr - base) >> PAGE_SHIFT : 0;
		hi = min((addr + PMD_SIZE - base) >> PAGE_SHIFT, max);
		flags = arena_plock(arena);
		if (!range_has_pages(arena, lo, hi)) {
			pmd_t *pmd = kernel_pmd(addr);

			ptes = pmd_table(pmd, addr);
			/* The invariant says it is empty; a table with a PTE stays. */
			if (ptes && pte_page_empty(ptes)) {
				if (!nr)
					flush_lo = addr;
				tables[nr] = pmd_page(*pmd);
				blocks[nr++] = b;
				pmd_clear(pmd);
				__clear_bit(b, arena->tables.blocks);
			}
		}
		arena_punlock(arena, flags);
		/*
		 * One flush per batch (a user's page-per-block frees once cost
		 * an IPI to every CPU per block); the unhooked tables are freed
		 * only after it, as pmd_free_pte_page() does.
		 */
		if (nr == TRIM_BATCH) {
			trim_flush(arena, flush_lo, addr + PMD_SIZE, tables, blocks, nr);
			nr = 0;
		}
	}
	if (nr)
		trim_flush(arena, flush_lo, block_addr(arena, blocks[nr - 1]) + PMD_SIZE,
			   tables, blocks, nr);
}

void arena_tables_init(struct bpf_arena *arena)
{
	xa_init(&arena->tables.payers);
}

/*
 * Frees the PTE pages of every inner block once nothing can walk the
 * window: no user mapping, no program, no work item; every PTE already
 * cleared (a page with a PTE left stays: it is not ours to drop).  The
 * PMD pages (five a window) stay, as for every vmalloc user.  Like
 * pmd_free_pte_page(), this takes no lock a lockless walker of kernel page
 * tables would see: ptdump (debugfs, root, off in Debian's config) could
 * follow a PMD into a page being freed.
 */
void arena_tables_free(struct bpf_arena *arena)
{
	struct vm_struct *vm = arena->kern_vm;
	unsigned long addr = ALIGN((unsigned long)vm->addr, PMD_SIZE);
	unsigned long end = ALIGN_DOWN((unsigned long)vm->addr + vm->size, PMD_SIZE);
	struct page *table, *next;
	unsigned long b;
	void *payer;
	LIST_HEAD(tables);

	for (; addr < end; addr += PMD_SIZE) {
		pmd_t *pmd = kernel_pmd(addr);
		pte_t *ptes = pmd_table(pmd, addr);

		cond_resched();	/* 2048 blocks of 512 entries */
		if (!ptes || !pte_page_empty(ptes))
			continue;
		table = pmd_page(*pmd);
		pmd_clear(pmd);
		list_add(&table->lru, &tables);
	}
	ksyms.flush_tlb_kernel_range((unsigned long)vm->addr, (unsigned long)vm->addr + vm->size);
	list_for_each_entry_safe(table, next, &tables, lru) {
		list_del(&table->lru);
		table_free(table);
	}
	xa_for_each(&arena->tables.payers, b, payer)
		table_uncharge(arena, b);
	xa_destroy(&arena->tables.payers);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arena object: a bpf map of type 33 that owns a 4 GiB (+ guard) kernel
 * virtual window and the user mappings of the same pages.
 *
 * Address layout (as upstream): the kernel address of arena byte x is
 * kern_vm_start + (u32)user_address; the window is reserved whole at creation
 * and only allocated arena pages are ever mapped in it.
 */
#ifndef BPF_ARENA_ARENA_H
#define BPF_ARENA_ARENA_H

#include <linux/bpf.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/atomic.h>
#include <linux/uidgid.h>
#include <linux/irq_work.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <linux/bpf_arena.h>

#include "arena_payer.h"
#include "arena_stats.h"

/* Upstream's guard: 32 KiB below and above, covering the s16 insn offset. */
#define ARENA_GUARD_SZ		round_up(SZ_64K, PAGE_SIZE << 1)
#define ARENA_KERN_VM_SZ	(SZ_4G + ARENA_GUARD_SZ)
/* PMD-sized blocks the window's area (its guard page included) can touch. */
#define ARENA_TABLE_BLOCKS	(ARENA_KERN_VM_SZ / PMD_SIZE + 2)
#define ARENA_MAP_FLAGS		(BPF_F_MMAPABLE | BPF_ARENA_F_SEGV_ON_FAULT | \
				 BPF_ARENA_F_NO_USER_CONV)

struct mem_cgroup;

/* Which pages of the user range are taken (arena_pages.c and its callers). */
struct arena_page_bits {
	/*
	 * One bit per page, relative to user_vm_start; allocated when the range
	 * becomes known (6.1's maple tree oopses in mtree_alloc_range(), so no
	 * maple tree here).  used: allocated, or held by an allocation in
	 * flight.  Of those, resv: reserved by bpf_arena_reserve_pages(), no
	 * page behind; freeing: freed by a non-sleepable program, still mapped
	 * until the work unmaps them.  plock guards them.
	 */
	unsigned long *used;
	unsigned long *resv;
	unsigned long *freeing;
	/*
	 * Where the last non-sleepable free started: a non-sleepable allocation
	 * that finds the pool short looks for pages to reclaim from there.
	 */
	unsigned long reclaim_hint;
};

/*
 * Pre-allocated, zeroed pages the non-sleepable kfuncs map (cap is 0 until a
 * non-sleepable program that allocates is loaded), and the work that refills
 * it and unmaps freeing pages, kicked through an irq_work (safe from any
 * context, NMI included).  arena_nosleep.c; plock guards the counts.
 */
struct arena_pool {
	struct page **pages;
	unsigned int cnt, cap;
	unsigned int target;		/* pages the work keeps; grows up to cap */
	/*
	 * Pages freed by programs, unmapped everywhere (kernel PTE cleared, TLB
	 * flushed, user mappings zapped) but not zeroed yet: the work zeroes
	 * them into the pool; a pool-only allocation that finds the pool empty
	 * zeroes a few itself.  cnt + dirty_cnt <= cap; both arrays have cap
	 * slots.
	 */
	struct page **dirty;
	unsigned int dirty_cnt;
	struct irq_work kick;
	struct work_struct work;
	bool work_ready;
};

/*
 * The window's kernel page tables (arena_window.c): PMD-sized blocks whose PTE
 * page exists (arena->lock, and plock to clear), and who paid for the ones
 * charged.
 */
struct arena_tables {
	bool ready;		/* the tables of the whole user range exist */
	DECLARE_BITMAP(blocks, ARENA_TABLE_BLOCKS);
	struct xarray payers;
};

/*
 * Arenas created through /dev/bpf_arena (any device-group member, no
 * capability) are counted against the per-user and global caps (arena_map.c:
 * on node while counted, under uid = the creator's real uid).  Who pays for
 * pages does not depend on this (arena_payer.h).
 */
struct arena_dev_limit {
	bool created;		/* through the device */
	bool counted;
	kuid_t uid;
	struct list_head node;
};

/*
 * Programs (prog_companion.c): a stock ARRAY map whose value the lowered
 * program's placeholders name; created at the first program load and held
 * until the arena is freed.  On the companion list while set.
 */
struct arena_prog_state {
	struct bpf_map *companion;
	u64 companion_value;
	struct list_head companion_node;
};

struct bpf_arena {
	struct bpf_map map;
	/*
	 * The address space, with upstream's names.  user_vm_start/end: fixed
	 * by map_extra or by the first mmap, never reset.  kern_vm: the 4 GiB
	 * (+ guard) kernel window, reserved whole at creation.
	 */
	u64 user_vm_start;
	u64 user_vm_end;
	struct vm_struct *kern_vm;
	unsigned long kern_vm_start;
	/*
	 * Every user mapping of the arena uses this file, so all of them sit
	 * in one address_space and a free zaps them with unmap_mapping_range().
	 */
	struct file *vm_file;
	/*
	 * lock serialises the sleeping paths: faults, alloc, free, prefault,
	 * mmap, table changes and the deferred unmapping.
	 *
	 * plock guards the page bits, the kernel PTEs of the window and the
	 * pool; it is the only lock the non-sleepable kfuncs take (with a
	 * bounded trylock, arena_plock_nosleep()), never held across anything
	 * that sleeps or waits.  plock_owner is the CPU holding it (-1: none),
	 * so that a program nested inside a holder on the same CPU (a kprobe or
	 * an NMI in the middle of arena code) backs off instead of spinning.
	 * Invariant: a PTE in the window is present only for a used page.
	 */
	struct mutex lock;
	raw_spinlock_t plock;
	int plock_owner;
	struct arena_page_bits bits;
	struct arena_pool pool;
	struct arena_tables tables;
	/* Memory is charged to the creator's memcg (kfuncs; arena_payer.h). */
	struct mem_cgroup *memcg;
	struct arena_dev_limit dev;
	struct arena_prog_state prog;
	struct arena_stats stats;	/* inspection only (arena_stats.h) */
};

static inline struct bpf_arena *to_arena(struct bpf_map *map)
{
	return container_of(map, struct bpf_arena, map);
}

/*
 * True once the user range (and the page bitmap) is set; pairs with the
 * release in arena_set_user_range(), so the range and bitmap are visible.
 */
static inline bool arena_has_range(const struct bpf_arena *arena)
{
	/* Pairs with smp_store_release() in arena_set_user_range(). */
	return smp_load_acquire(&arena->user_vm_start) != 0;
}

/* arena_map.c */
extern const struct bpf_map_ops arena_map_ops;
bool is_arena_map(const struct bpf_map *map);
/*
 * Validates attr as upstream's arena_map_alloc and BPF_MAP_CREATE do;
 * need_cap: the bpf() path requires CAP_BPF (the device path relies on the
 * device node's permissions instead).
 */
int arena_check_attr(const union bpf_attr *attr, bool need_cap);
/*
 * A new arena with refcnt 1 (the caller's); published with an id.
 * need_cap false is the device path: the arena is counted against the caps
 * (-EMFILE/-ENFILE).
 */
struct bpf_arena *arena_create(const union bpf_attr *attr, bool need_cap);
/* Copies a bpf object name, as bpf_obj_name_cpy() checks it (-EINVAL). */
int arena_copy_name(char *dst, const char *src, size_t size);
/*
 * A bpf-map file of the arena (flags: O_RDONLY, O_WRONLY or O_RDWR;
 * O_CLOEXEC added) owning one reference, in *filep, and the fd number
 * reserved for it, not yet in the table: the caller fd_install()s it once
 * nothing can fail any more (a sibling thread cannot see, close or reuse the
 * number before), else put_unused_fd() and fput().  -errno: nothing held.
 */
int arena_new_map_file(struct bpf_arena *arena, int flags, struct file **filep);
/* BPF_MAP_CREATE of type 33: validate, create, return a map fd or -errno. */
int arena_map_create(const union bpf_attr *attr);

/*
 * The memory object in layers, each calling only those above it here:
 * arena_pages.c (primitives) <- arena_window.c (the kernel window's tables
 * and PTEs) <- arena_nosleep.c (the non-sleepable kfuncs, the pool, deferred
 * frees) <- arena_mem.c (the sleepable paths) <- arena_vm.c (user mappings).
 */

/* Page table work per plock hold (bounds what a non-sleepable caller waits for). */
#define PLOCK_BATCH	128UL

/* arena_pages.c: primitives. */
u64 arena_clear_lo32(u64 val);
/* Page offset of a user address inside the arena, from its low 32 bits. */
u64 arena_compute_pgoff(const struct bpf_arena *arena, u64 uaddr);
u64 arena_page_cnt_max(const struct bpf_arena *arena);
unsigned long arena_kaddr(const struct bpf_arena *arena, u32 uaddr32);
bool arena_node_ok(int node_id);
/* plock for sleepable callers / for any context (false: busy, give up). */
unsigned long arena_plock(struct bpf_arena *arena);
bool arena_plock_nosleep(struct bpf_arena *arena, unsigned long *flags);
void arena_punlock(struct bpf_arena *arena, unsigned long flags);
/*
 * Upstream's checks and errnos of an allocation of page_cnt pages at uaddr
 * (0: anywhere); *pgoff: the page offset of uaddr.  0 or -errno.
 */
int arena_alloc_check(const struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
		      int node_id, unsigned long *pgoff);
/* Mark a free run used (fixed / first fit); plock held. */
bool arena_range_reserve(struct bpf_arena *arena, unsigned long pgoff, unsigned long n);
bool arena_range_alloc(struct bpf_arena *arena, unsigned long *pgoff, unsigned long n);
/*
 * A zeroed page charged to payer's memcg, never invoking the OOM killer;
 * with no payer (kfuncs), to the creator's memcg as upstream.
 */
struct page *arena_page_alloc(struct bpf_arena *arena, int node_id,
			      struct arena_payer *payer);
/* Removes [pgoff, +page_cnt) from every user mapping of the arena. */
void arena_zap(struct bpf_arena *arena, pgoff_t pgoff, u64 page_cnt);

/*
 * arena_window.c: the window's kernel page tables and PTEs.  Makes the
 * tables of [kaddr, +n pages), charged to payer (NULL: the creator's memcg);
 * arena->lock held, sleeps; 0 or -ENOMEM.
 */
int arena_populate_tables(struct bpf_arena *arena, unsigned long kaddr, unsigned long n,
			  struct arena_payer *payer);
/* Frees the tables of the blocks of [pgoff, +n) left with no page; arena->lock held. */
void arena_trim_tables(struct bpf_arena *arena, unsigned long pgoff, unsigned long n);
/*
 * Calls fn on each present PTE of the window in [kaddr, +n pages); plock
 * held, or the arena has no other user.  Not apply_to_existing_page_range():
 * on 6.1 kernels before the stable fix of 2025 its PTE loop stops advancing
 * at the first empty PTE and skips the rest of the block, which would leave
 * freed pages mapped in the window.
 */
void arena_window_walk_ptes(struct bpf_arena *arena, unsigned long kaddr, unsigned long n,
			    pte_fn_t fn, void *data);
/*
 * Maps n pages at kaddr (tables made); returns how many were mapped, all
 * unless a PTE was not empty.  Clears n pages at kaddr, returning the pages
 * that were mapped.  Both with plock held; the caller flushes after unlocking.
 */
unsigned int arena_window_map(unsigned long kaddr, unsigned int n, struct page **pages);
unsigned int arena_window_clear(struct bpf_arena *arena, unsigned long kaddr, unsigned int n,
				struct page **pages);
void arena_window_flush(unsigned long kaddr, unsigned int n);
void arena_tables_init(struct bpf_arena *arena);
/* Frees every table of the window; from the arena's destruction. */
void arena_tables_free(struct bpf_arena *arena);

/*
 * arena_nosleep.c: the kfuncs of non-sleepable programs.  direct: the
 * caller is an XDP, TC or syscall program (softirq/process context, never
 * inside the allocator), which may fall back to GFP_NOWAIT when the pool is
 * short; else only where interrupts are enabled (nosleep_gfp()).
 */
long arena_alloc_pages_nosleep(struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
			       int node_id, bool direct, u64 *out);
void arena_free_pages_nosleep(struct bpf_arena *arena, u64 uaddr, u32 page_cnt);
/* Fills the pool and the window's page tables; sleepable, from program load. */
int arena_pool_enable(struct bpf_arena *arena);
void arena_nosleep_init(struct bpf_arena *arena);
/* The workqueue of the deferred work: module init and exit. */
int arena_nosleep_module_init(void);
void arena_nosleep_module_exit(void);
/* Waits for the work and drops the pool; from the arena's destruction. */
void arena_nosleep_stop(struct bpf_arena *arena);
/* Unmaps and frees the freeing pages (all / the one at pgoff); arena->lock held. */
void arena_unmap_freeing(struct bpf_arena *arena);
void arena_unmap_freeing_page(struct bpf_arena *arena, pgoff_t pgoff);

/* arena_mem.c: the sleepable paths.  Callers must not hold arena->lock. */
/*
 * Allocates page_cnt pages at user address uaddr (0 = anywhere); *out =
 * uaddr.  payer: who pays (a device handle's opener), NULL for a kfunc.
 */
long arena_alloc_pages(struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
		       int node_id, struct arena_payer *payer, u64 *out);
/* Frees the allocated pages in the range; returns how many were freed. */
long arena_free_pages(struct bpf_arena *arena, u64 uaddr, u32 page_cnt);
/* Allocates the missing pages of the range, paid by payer; returns how many. */
long arena_prefault(struct bpf_arena *arena, u64 uaddr, u32 page_cnt,
		    struct arena_payer *payer);
/*
 * A user fault: maps the page behind vmf into the faulting mapping, under
 * arena->lock; a missing page is allocated, paid by payer, only if may_alloc.
 */
vm_fault_t arena_fault(struct bpf_arena *arena, struct vm_fault *vmf,
		       struct arena_payer *payer, bool may_alloc);
int arena_mem_init(struct bpf_arena *arena);
/* Reserves [uaddr, +page_cnt) without pages, as upstream's 6.17 kfunc; any context. */
int arena_reserve_pages(struct bpf_arena *arena, u64 uaddr, u32 page_cnt);
/* Fixes the user range and sizes the page bits; arena->lock held. */
int arena_set_user_range(struct bpf_arena *arena, u64 start, u64 end);
void arena_mem_free(struct bpf_arena *arena);

/*
 * prog_companion.c: what arena programs name instead of the arena map.  Both
 * calls below run only inside an fd snapshot (fd_snapshot.h).
 */
/* Creates the arena's companion once; 0 or -errno. */
int arena_companion_get(struct bpf_arena *arena);
/* A new read-only fd of the companion in the current (snapshot) table, or -errno. */
int arena_companion_new_fd(struct bpf_arena *arena);
/*
 * The arena whose companion value is at value, with a reference taken, or
 * NULL (not a companion, or the arena is going away).
 */
struct bpf_arena *arena_get_by_companion(u64 value);
/* The same without a reference, for a caller inside rcu_read_lock(). */
struct bpf_arena *arena_find_by_companion_rcu(u64 value);
/* The live arena whose kernel window starts at kern_vm_start, under RCU. */
bool arena_kern_vm_start_is_live(u64 kern_vm_start);
/* Unpublishes and puts the companion; from map_free. */
void arena_companion_release(struct bpf_arena *arena);

/*
 * prog_view.c: what the verifier sees for an arena ld_imm64 MAP_FD (one view
 * per load, refcnt 1 held by the caller); arena_view_new_fd() makes a
 * read-only fd of it in the current (snapshot) table.
 */
struct bpf_map *arena_view_create(struct bpf_arena *arena);
int arena_view_new_fd(struct bpf_map *view);
bool arena_is_view(const struct bpf_map *map);


/* arena_vm.c: user mappings. */
int arena_vm_init(struct bpf_arena *arena);
void arena_vm_free(struct bpf_arena *arena);
/* Whether a fault of a mapping may allocate the missing page. */
enum arena_fault_alloc {
	ARENA_FAULT_NOALLOC,		/* never: SIGSEGV (no write right) */
	ARENA_FAULT_ALLOC_UNLESS_FROZEN,	/* while the arena is not frozen */
	ARENA_FAULT_ALLOC,		/* always, as upstream's map fd mappings */
};
/*
 * Checks and installs a user mapping; the caller did the generic checks.
 * Faults through it are paid by payer (the mapping holds a reference).
 */
int arena_mmap(struct bpf_arena *arena, struct vm_area_struct *vma,
	       struct arena_payer *payer, enum arena_fault_alloc alloc);
/*
 * Picks the user address of a mapping as upstream's get_unmapped_area:
 * start/end are the arena's fixed range, or 0 before the first mapping.
 */
unsigned long arena_get_unmapped_area(u64 start, u64 end, unsigned long addr,
				      unsigned long len, unsigned long pgoff,
				      unsigned long flags);
int arena_fs_init(void);
void arena_fs_exit(void);

#endif /* BPF_ARENA_ARENA_H */

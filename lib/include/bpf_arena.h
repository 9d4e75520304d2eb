/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * bpf_arena.h: BPF arena (BPF_MAP_TYPE_ARENA) for BPF programs, on kernels
 * with a native arena (6.9+) and on older kernels running the bpf_arena
 * module (bpf-arena-dkms).  It follows upstream's selftest headers
 * (tools/testing/selftests/bpf/bpf_arena_common.h, bpf_experimental.h,
 * bpf_arena_alloc.h, bpf_arena_list.h) so that upstream-style programs port
 * with few changes; every difference is marked "Differs from upstream".
 * The parts that follow upstream: Copyright (c) 2024 Meta Platforms, Inc. and
 * affiliates, GPL-2.0-only OR BSD-2-Clause upstream, used here under
 * BSD-2-Clause (see LICENSE).
 *
 * Include it after <linux/bpf.h> (or vmlinux.h) and <bpf/bpf_helpers.h>.
 * With a vmlinux.h that carries kfunc prototypes (bpftool >= 7.5), define
 * BPF_NO_KFUNC_PROTOTYPES before it, as upstream's arena programs do: its
 * arena kfunc prototypes lack the __arena address space.
 * The same source builds two ways:
 *
 * - clang >= 19 (defines __BPF_FEATURE_ADDR_SPACE_CAST): "native".
 *   __arena is __attribute__((address_space(1))); the compiler emits
 *   addr_space_cast (BPF_ALU64|BPF_MOV|BPF_X, off=1) itself before every
 *   access through an __arena pointer, so cast_kern()/cast_user() are no-ops.
 *   Use -mcpu=v3 (or v2+) as upstream does.
 * - older clang (e.g. Debian 12's clang-14), or BPF_ARENA_FORCE_ASM defined:
 *   "asm".  The program must say it does its casts itself: define
 *   BPF_ARENA_EXPLICIT_CASTS (or BPF_ARENA_FORCE_ASM) before including this
 *   header, else clang < 19 stops with "needs clang >= 19, or use the
 *   explicit cast macros".  __arena is empty (clang < 19 silently ignores address spaces for
 *   BPF anyway) and cast_kern()/cast_user() are inline asm emitting exactly
 *   upstream's instruction bytes:
 *       cast_kern(rN): bf NN 01 00 01 00 00 00   rN = addr_space_cast(rN, 0, 1)
 *       cast_user(rN): bf NN 01 00 00 00 01 00   rN = addr_space_cast(rN, 1, 0)
 *   The program must cast_kern() a pointer before dereferencing it and
 *   cast_user() it before storing it where user space (or another program
 *   run) reads it as a pointer.  A pointer loaded from the arena is a plain
 *   number to the verifier and needs cast_kern() again.
 *
 * Rules for programs that must load on 6.1 with the module as well as on
 * 6.9+ (the 6.1 verifier has no may_goto, no open-coded iterators and no
 * global-function argument tags):
 * - call the kfuncs only from sleepable programs (SEC("syscall"), "lsm.s/",
 *   "fentry.s/", ...), as upstream requires;
 * - can_loop, cond_break, bpf_for and bpf_repeat work in programs that use
 *   the arena; the module outlines such loops (README "Loops",
 *   docs/LOOPS.md).  bpf_arena_loops.h (included below) defines them with
 *   upstream's definitions where the headers lack them (Debian 12's libbpf
 *   1.1, clang-14), and struct bpf_iter_num with uapi headers older than
 *   6.4; with a vmlinux.h from a kernel before 6.4, define
 *   BPF_ARENA_ITER_NUM before including this header to have the struct;
 * - static (or inline) functions for arena pointer arguments, no __arg_arena;
 * - one arena map per program;
 * - no __arena_global variables unless the loader is libbpf >= 1.4 (Debian
 *   12: bookworm-backports' libbpf 1.4.6): libbpf 1.1 (bookworm) cannot
 *   open an object with a ".addr_space.1" section
 *   that code refers to ("bad map relo against VAR in section
 *   .addr_space.1").  Keep small state in
 *   .bss/.data (ordinary globals) and big state in arena pages allocated at
 *   run time, as the allocator below does.
 *
 * Also usable from user space (without __BPF__) for the shared data
 * structures: __arena and the casts are empty there, and the list walk
 * works on plain pointers.
 */
#ifndef BPF_ARENA_H
#define BPF_ARENA_H

#ifndef BPF_MAP_TYPE_ARENA
/* An enum in 6.9+ uapi/vmlinux.h; a macro after it is harmless. */
#define BPF_MAP_TYPE_ARENA 33
#endif
#ifndef BPF_F_SEGV_ON_FAULT
#define BPF_F_SEGV_ON_FAULT (1U << 17)
#endif
#ifndef BPF_F_NO_USER_CONV
#define BPF_F_NO_USER_CONV (1U << 18)
#endif
#ifndef BPF_ADDR_SPACE_CAST
#define BPF_ADDR_SPACE_CAST 1
#endif

#ifndef WRITE_ONCE
#define WRITE_ONCE(x, val) ((*(volatile __typeof__(x) *)&(x)) = (val))
#endif
#ifndef READ_ONCE
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#endif
#ifndef NUMA_NO_NODE
#define NUMA_NO_NODE (-1)
#endif
/*
 * Differs from upstream: upstream takes PAGE_SIZE from vmlinux.h's
 * __PAGE_SIZE enum, which 6.1 does not have.  Both supported kernels are
 * x86-64 with 4 KiB pages.
 */
#ifndef PAGE_SIZE
#define PAGE_SIZE 4096
#endif
#ifndef __bpf_arena_offsetof
#define __bpf_arena_offsetof(type, member) __builtin_offsetof(type, member)
#endif

#ifndef arena_container_of
#define arena_container_of(ptr, type, member)					\
	({									\
		void __arena *__mptr = (void __arena *)(ptr);			\
		((type *)(__mptr - __bpf_arena_offsetof(type, member)));	\
	})
#endif

#ifdef __BPF__ /* ---------------------------------- BPF program ---------- */

/* can_loop, cond_break, bpf_for, bpf_repeat where the headers lack them. */
#include "bpf_arena_loops.h"

/* rX = rX .off = BPF_ADDR_SPACE_CAST .imm32 = (dst_as << 16) | src_as
 * (as upstream's bpf_experimental.h; r10 cannot be cast). */
#ifndef bpf_addr_space_cast
#define bpf_addr_space_cast(var, dst_as, src_as)			\
	asm volatile(".byte 0xBF;					\
		     .ifc %[reg], r0;					\
		     .byte 0x00;					\
		     .endif;						\
		     .ifc %[reg], r1;					\
		     .byte 0x11;					\
		     .endif;						\
		     .ifc %[reg], r2;					\
		     .byte 0x22;					\
		     .endif;						\
		     .ifc %[reg], r3;					\
		     .byte 0x33;					\
		     .endif;						\
		     .ifc %[reg], r4;					\
		     .byte 0x44;					\
		     .endif;						\
		     .ifc %[reg], r5;					\
		     .byte 0x55;					\
		     .endif;						\
		     .ifc %[reg], r6;					\
		     .byte 0x66;					\
		     .endif;						\
		     .ifc %[reg], r7;					\
		     .byte 0x77;					\
		     .endif;						\
		     .ifc %[reg], r8;					\
		     .byte 0x88;					\
		     .endif;						\
		     .ifc %[reg], r9;					\
		     .byte 0x99;					\
		     .endif;						\
		     .short %[off];					\
		     .long %[as]"					\
		     : [reg]"+r"(var)					\
		     : [off]"i"(BPF_ADDR_SPACE_CAST)			\
		     , [as]"i"((dst_as << 16) | src_as));
#endif

#if defined(__BPF_FEATURE_ADDR_SPACE_CAST) && !defined(BPF_ARENA_FORCE_ASM)
#define BPF_ARENA_NATIVE_CASTS 1
#define __arena __attribute__((address_space(1)))
#define __arena_global __attribute__((address_space(1)))
#define cast_kern(ptr) /* nop: LLVM emits addr_space_cast(ptr, 0, 1) */
#define cast_user(ptr) /* nop: LLVM emits addr_space_cast(ptr, 1, 0) */
#else
/*
 * Without the compiler's casts, every arena pointer must be cast_kern()ed
 * before use and cast_user()ed before being stored: code written for clang
 * >= 19 (which casts by itself) compiles here but is refused at load, by
 * the verifier, far from the cause.  So the asm build must be asked for:
 * a program that does its casts defines BPF_ARENA_EXPLICIT_CASTS (or
 * BPF_ARENA_FORCE_ASM) before including this header.
 */
#if !defined(BPF_ARENA_EXPLICIT_CASTS) && !defined(BPF_ARENA_FORCE_ASM)
#error "bpf_arena.h: this compiler has no implicit arena casts (clang < 19, no __BPF_FEATURE_ADDR_SPACE_CAST): a program relying on them needs clang >= 19, or use the explicit cast macros cast_kern()/cast_user() on every arena pointer and #define BPF_ARENA_EXPLICIT_CASTS before including bpf_arena.h"
#endif
#define BPF_ARENA_NATIVE_CASTS 0
#define __arena
#define __arena_global SEC(".addr_space.1")
#define cast_kern(ptr) bpf_addr_space_cast(ptr, 0, 1)
#define cast_user(ptr) bpf_addr_space_cast(ptr, 1, 0)
#endif

/*
 * A program that casts must reference its arena map (an ld_imm64 of it),
 * else the verifier refuses the casts ("... can only be used in a program
 * that has an associated arena").  Calling a kfunc on &arena does; a program
 * that only dereferences pointers it got elsewhere says bpf_arena_use(&arena).
 */
#define bpf_arena_use(map) ({ void *__bpf_arena_m = (map); asm volatile("" : : "r"(__bpf_arena_m)); })

/*
 * The kfuncs, with upstream's prototypes (kernel: void *p__map,
 * void *addr__ign).  Both need a sleepable program.  alloc returns the user
 * address of the first page, NULL on any failure (flags must be 0; at a
 * fixed addr every page of the range must be free; node_id NUMA_NO_NODE or
 * an online node); pages are zeroed.  free ignores NULL and page_cnt 0; only
 * the low 32 bits of the addresses matter.
 */
void __arena *bpf_arena_alloc_pages(void *map, void __arena *addr, __u32 page_cnt,
				    int node_id, __u64 flags) __ksym __weak;
void bpf_arena_free_pages(void *map, void __arena *ptr, __u32 page_cnt) __ksym __weak;
/* Upstream 6.17: reserve [addr, +page_cnt) so that no allocation hands it out. */
int bpf_arena_reserve_pages(void *map, void __arena *addr, __u32 page_cnt) __ksym __weak;

#else /* ------------------------------------------------ user space --------- */

#define BPF_ARENA_NATIVE_CASTS 0
#define __arena
#define __arena_global
#define cast_kern(ptr) /* nop for user space */
#define cast_user(ptr) /* nop for user space */

#endif /* __BPF__ */

/* ------------------------------------------------------------------------ */
/* A page-frag allocator (upstream: bpf_arena_alloc.h)                       */
/*
 * bpf_arena_alloc(map, size) returns size bytes (rounded up to 8) out of
 * arena pages that it allocates with bpf_arena_alloc_pages(); the last 8
 * bytes of each page count the live objects in it, and bpf_arena_free()
 * frees the page when the count drops to 0.  Objects may be up to
 * PAGE_SIZE - 16 bytes.  Returns NULL when out of memory.  Sleepable
 * programs only.
 *
 * bpf_alloc(size) and bpf_free(addr) are upstream's names: macros that use
 * the arena map named BPF_ARENA_ALLOC_MAP (default: `arena`, as upstream),
 * expanded where they are used, so the map may be defined after this header.
 * The state is per program object, not per map: use one arena per object.  In the native build
 * it returns an __arena pointer (user form); in the asm build a pointer
 * already cast_kern()ed (as upstream): cast_user() it before storing it
 * where user space reads it.
 *
 * Differs from upstream:
 * - its state (the current page and offset of each CPU) lives in ordinary
 *   .bss globals, not in __arena globals, so objects load with libbpf 1.1;
 *   the current page pointer is kept in user form;
 * - no `goto refill` back edge (which a verifier without may_goto has to
 *   explore as a loop): straight-line code;
 * - the current page holds one extra count while it is current, so freeing
 *   every object in it does not free a page that later allocations still
 *   carve (upstream does, and then hands out use-after-free memory); the
 *   extra count is dropped when the CPU moves to a new page;
 * - the first 8 bytes of every page are never handed out.  In the asm build
 *   pointers are kernel form, i.e. the low 32 bits of the user address, so
 *   an object at offset 0 of the page at a 4 GiB boundary (the first page of
 *   an arena at map_extra 1 << 44, say) would be 0 == NULL to the program
 *   (upstream's allocator hands it out: the 170th 24-byte object after an
 *   8-byte one in arena_list);
 * - BPF_ARENA_ALLOC_NR_CPUS slots (default 128, a power of 2; CPUs beyond
 *   share slots).  Like upstream it is not safe against two programs
 *   allocating from the same slot at the same time (e.g. a sleepable program
 *   preempted inside the kfunc on the same CPU); serialise if you need that.
 */
#ifdef __BPF__

#ifndef BPF_ARENA_ALLOC_MAP
#define BPF_ARENA_ALLOC_MAP arena
#endif
#ifndef BPF_ARENA_ALLOC_NR_CPUS
#define BPF_ARENA_ALLOC_NR_CPUS 128
#endif
_Static_assert((BPF_ARENA_ALLOC_NR_CPUS & (BPF_ARENA_ALLOC_NR_CPUS - 1)) == 0,
	       "BPF_ARENA_ALLOC_NR_CPUS must be a power of 2");

#define __bpf_arena_round_up8(x) (((x) + 7) & ~7U)

/* .bss, user-form page pointers (0: none yet) and free offsets. */
static void __arena *bpf_arena_frag_page[BPF_ARENA_ALLOC_NR_CPUS];
static int bpf_arena_frag_offset[BPF_ARENA_ALLOC_NR_CPUS];

static __always_inline void __arena *bpf_arena_alloc(void *map, unsigned int size)
{
	__u32 cpu = bpf_get_smp_processor_id() & (BPF_ARENA_ALLOC_NR_CPUS - 1);
	void __arena *page = bpf_arena_frag_page[cpu];
	__u64 __arena *obj_cnt;
	int offset;

	size = __bpf_arena_round_up8(size);
	if (size > PAGE_SIZE - 16)
		return NULL;
	if (page) {
		cast_kern(page);
		obj_cnt = page + PAGE_SIZE - 8;
		offset = bpf_arena_frag_offset[cpu] - (int)size;
		if (offset >= 8)
			goto carve;
		/* The page is full: drop the allocator's own count on it. */
		if (--(*obj_cnt) == 0)
			bpf_arena_free_pages(map, page, 1);
	}
	page = bpf_arena_alloc_pages(map, NULL, 1, NUMA_NO_NODE, 0);
	if (!page) {
		bpf_arena_frag_page[cpu] = NULL;
		return NULL;
	}
	bpf_arena_frag_page[cpu] = page;	/* user form (as returned) */
	cast_kern(page);
	obj_cnt = page + PAGE_SIZE - 8;
	*obj_cnt = 1;				/* the allocator's count */
	offset = PAGE_SIZE - 8 - (int)size;
carve:
	(*obj_cnt)++;
	bpf_arena_frag_offset[cpu] = offset;
	return page + offset;
}

/* addr: as bpf_arena_alloc() returned it (kernel or user form); NULL is ignored. */
static __always_inline void bpf_arena_free(void *map, void __arena *addr)
{
	__u64 __arena *obj_cnt;

	if (!addr)
		return;
	addr = (void __arena *)(((long)addr) & ~(PAGE_SIZE - 1));
	cast_kern(addr);
	obj_cnt = addr + PAGE_SIZE - 8;
	if (--(*obj_cnt) == 0)
		bpf_arena_free_pages(map, addr, 1);
}

#define bpf_alloc(size) bpf_arena_alloc(&BPF_ARENA_ALLOC_MAP, (size))
#define bpf_free(addr) bpf_arena_free(&BPF_ARENA_ALLOC_MAP, (addr))

#endif /* __BPF__ */

/* ------------------------------------------------------------------------ */
/* A doubly linked list in the arena (upstream: bpf_arena_list.h)            */
/*
 * Nodes and heads live in the arena; every pointer stored in them is a user
 * address, so user space walks a list a program built (and the other way
 * round) with plain C.
 *
 * Differs from upstream: list_for_each_entry() stops after
 * BPF_ARENA_LIST_WALK_MAX entries (default 64; define it before including
 * this header) instead of relying on cond_break (may_goto, 6.9+).  The
 * verifier explores such a bounded loop iteration by iteration (a few tens
 * of instructions each, and the precise counter defeats state pruning), so
 * keep the bound small -- on 6.12 a bound of 1024 in a simple walk already
 * fails to load -- and walk long lists from a bpf_loop() callback, one node
 * per call (see tests/progs/arena_prog_list.bpf.c).
 */
#ifndef BPF_ARENA_LIST_WALK_MAX
#define BPF_ARENA_LIST_WALK_MAX 64
#endif

struct arena_list_node;

typedef struct arena_list_node __arena arena_list_node_t;

struct arena_list_node {
	arena_list_node_t *next;
	arena_list_node_t * __arena *pprev;
};

struct arena_list_head {
	struct arena_list_node __arena *first;
};
typedef struct arena_list_head __arena arena_list_head_t;

#define list_entry(ptr, type, member) arena_container_of(ptr, type, member)

#define list_entry_safe(ptr, type, member)					\
	({ __typeof__(*ptr) * ___ptr = (ptr);					\
	 ___ptr ? ({ cast_kern(___ptr); list_entry(___ptr, type, member); }) : NULL; \
	 })

/* Safely walk list elements (at most BPF_ARENA_LIST_WALK_MAX); the current
 * element may be deleted. */
#define list_for_each_entry(pos, head, member)					\
	for (struct { void *tmp; unsigned int n; } ___it =			\
		{ (pos = list_entry_safe((head)->first,				\
					 __typeof__(*(pos)), member),		\
		   (void *)0), 0 };						\
	     pos && ___it.n < BPF_ARENA_LIST_WALK_MAX &&			\
		({ ___it.tmp = (void *)pos->member.next; 1; });			\
	     ___it.n++,								\
	     pos = list_entry_safe((void __arena *)___it.tmp,			\
				   __typeof__(*(pos)), member))

static inline void list_add_head(arena_list_node_t *n, arena_list_head_t *h)
{
	arena_list_node_t *first = h->first, * __arena *tmp;

	cast_user(first);
	cast_kern(n);
	WRITE_ONCE(n->next, first);
	cast_kern(first);
	if (first) {
		tmp = &n->next;
		cast_user(tmp);
		WRITE_ONCE(first->pprev, tmp);
	}
	cast_user(n);
	WRITE_ONCE(h->first, n);

	tmp = &h->first;
	cast_user(tmp);
	cast_kern(n);
	WRITE_ONCE(n->pprev, tmp);
}

/*
 * Differs from upstream: upstream's __list_del() writes `next` into a local
 * copy of *pprev (WRITE_ONCE(tmp, next)), so the predecessor keeps pointing
 * at the deleted node; this one updates *pprev.
 */
static inline void __list_del(arena_list_node_t *n)
{
	arena_list_node_t *next = n->next;
	arena_list_node_t * __arena *pprev = n->pprev;

	cast_user(next);
	cast_kern(pprev);
	WRITE_ONCE(*pprev, next);
	if (next) {
		cast_user(pprev);
		cast_kern(next);
		WRITE_ONCE(next->pprev, pprev);
	}
}

#define LIST_POISON1 ((void __arena *)0x100)
#define LIST_POISON2 ((void __arena *)0x122)

static inline void list_del(arena_list_node_t *n)
{
	__list_del(n);
	n->next = LIST_POISON1;
	n->pprev = LIST_POISON2;
}

#endif /* BPF_ARENA_H */

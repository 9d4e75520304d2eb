/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page-frag allocator of lib/include/bpf_arena.h with its per-CPU state
 * in arena globals (".addr_space.1"), as upstream's bpf_arena_alloc.h keeps
 * it (`void __arena * __arena page_frag_cur_page[NR_CPUS]; int __arena
 * page_frag_cur_offset[NR_CPUS];`).  Needs libbpf >= 1.4.  Same algorithm
 * and the same differences from upstream as bpf_arena_alloc() (a count held
 * on the current page, offset 0 of a page never handed out, no back edge).
 *
 * Include after bpf_arena.h.  ag_alloc() returns a kernel-form pointer in
 * the asm build (as bpf_arena_alloc()), an __arena pointer in the native one.
 * The state is reached through cast_kern()ed pointers, so the same source
 * works with both builds (in the asm build a plain access to an arena global
 * would be an access to a scalar: the verifier rejects it).
 */
#ifndef ARENA_GLOBALS_ALLOC_H
#define ARENA_GLOBALS_ALLOC_H

#define AG_NR_CPUS 128

typedef void __arena *ag_page_t;

/* user-form page pointers (0: none yet) and free offsets, per CPU */
ag_page_t __arena_global ag_cur_page[AG_NR_CPUS];
int __arena_global ag_cur_offset[AG_NR_CPUS];

static __always_inline void __arena *ag_alloc(void *map, unsigned int size)
{
	__u32 cpu = bpf_get_smp_processor_id() & (AG_NR_CPUS - 1);
	ag_page_t __arena *pagep = &ag_cur_page[cpu];
	int __arena *offp = &ag_cur_offset[cpu];
	void __arena *page;
	__u64 __arena *obj_cnt;
	int offset;

	cast_kern(pagep);
	cast_kern(offp);
	page = *pagep;
	size = (size + 7) & ~7U;
	if (size > PAGE_SIZE - 16)
		return NULL;
	if (page) {
		cast_kern(page);
		obj_cnt = page + PAGE_SIZE - 8;
		offset = *offp - (int)size;
		if (offset >= 8)
			goto carve;
		if (--(*obj_cnt) == 0)
			bpf_arena_free_pages(map, page, 1);
	}
	page = bpf_arena_alloc_pages(map, NULL, 1, NUMA_NO_NODE, 0);
	if (!page) {
		*pagep = NULL;
		return NULL;
	}
	*pagep = page;			/* user form (as returned) */
	cast_kern(page);
	obj_cnt = page + PAGE_SIZE - 8;
	*obj_cnt = 1;
	offset = PAGE_SIZE - 8 - (int)size;
carve:
	(*obj_cnt)++;
	*offp = offset;
	return page + offset;
}

static __always_inline void ag_free(void *map, void __arena *addr)
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

#endif

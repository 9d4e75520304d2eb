// SPDX-License-Identifier: GPL-2.0
/*
 * The arena kfuncs.
 *
 * bpf_arena_alloc_pages(), bpf_arena_free_pages() and
 * bpf_arena_reserve_pages() exist in the module's BTF with upstream's names
 * and prototypes so that libbpf resolves the programs' __ksym externs; 6.1's
 * verifier cannot check those prototypes (a map pointer argument, a void *
 * return), so they are never called: the lowering switches each call to a
 * placeholder kfunc below, whose first argument is the arena's companion
 * value (docs/PLACEHOLDERS.md).  The placeholders look the arena up from that
 * address, so a forged argument (any other memory) finds nothing and they
 * return NULL / -EINVAL / do nothing.
 *
 * Which placeholder a call becomes depends on the program (prog_load.c):
 * sleepable programs get the _ph ones (may sleep, KF_SLEEPABLE); other
 * programs get the non-sleepable ones (arena_nosleep.c), as upstream since
 * late 2025 lets every program call the arena kfuncs.  The verifier enforces
 * the split: the _nosleep_ allocator (which falls back to GFP_NOWAIT) is
 * registered only for XDP, TC and SYSCALL programs, whose context never holds
 * allocator or scheduler locks; tracing and struct_ops programs, which can
 * run anywhere, get the _any_ allocator, which takes pre-allocated pages and
 * goes to the page allocator only where interrupts are enabled
 * (arena_nosleep.c, nosleep_gfp()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/module.h>
#include <linux/numa.h>
#include <linux/uaccess.h>
#include <linux/rcupdate.h>

#include "arena.h"
#include "kernel_compat.h"
#include "kfunc.h"

/* What the placeholder kfuncs receive: the companion's map value. */
struct bpf_arena_kfunc_ref {
	u64 cookie;
};

__diag_push();
__diag_ignore_all("-Wmissing-prototypes",
		  "Global functions as their definitions will be in BTF");

noinline void *bpf_arena_alloc_pages(void *p__map, void *addr__ign, u32 page_cnt,
				     int node_id, u64 flags)
{
	return NULL;
}

noinline void bpf_arena_free_pages(void *p__map, void *ptr__ign, u32 page_cnt)
{
}

/* Upstream semantics: a user address or 0; only the low 32 bits of addr count. */
noinline u64 bpf_arena_alloc_pages_ph(struct bpf_arena_kfunc_ref *ref, u64 addr,
				      u32 page_cnt, int node_id, u64 flags)
{
	struct bpf_arena *arena = arena_get_by_companion((unsigned long)ref);
	u64 uaddr = 0, out = 0;

	if (!arena)
		return 0;
	if (addr)
		uaddr = (arena->user_vm_start & ~(u64)U32_MAX) + (u32)addr;
	if (!flags && page_cnt && arena_alloc_pages(arena, uaddr, page_cnt, node_id, NULL, &out))
		out = 0;
	else if (out)
		arena_stat_add(arena, alloc_bpf, page_cnt);
	bpf_map_put(&arena->map);
	return out;
}

noinline void bpf_arena_free_pages_ph(struct bpf_arena_kfunc_ref *ref, u64 ptr, u32 page_cnt)
{
	struct bpf_arena *arena = arena_get_by_companion((unsigned long)ref);
	long nr;

	if (!arena)
		return;
	nr = arena_free_pages(arena, ptr, page_cnt);
	if (nr > 0)
		arena_stat_add(arena, free_bpf, nr);
	bpf_map_put(&arena->map);
}

/*
 * A map known only at run time (an iterator's ctx->map, verifier_arena.c's
 * iter_maps1): the verifier checked it is a struct bpf_map the program got
 * from its context (the lowering refuses other provenances); it is an arena
 * only if its ops are the arena's, read without trusting the pointer.  Any
 * other map: NULL / nothing, as upstream's kfuncs for non-arena maps.
 */
static struct bpf_arena *arena_from_map(struct bpf_map *map)
{
	const struct bpf_map_ops *ops;

	if (!map || get_kernel_nofault(ops, &map->ops) || ops != &arena_map_ops)
		return NULL;
	if (IS_ERR(bpf_map_inc_not_zero(map)))
		return NULL;
	return to_arena(map);
}

noinline u64 bpf_arena_alloc_pages_map(struct bpf_map *map, u64 addr, u32 page_cnt,
				       int node_id, u64 flags)
{
	struct bpf_arena *arena = arena_from_map(map);
	u64 uaddr = 0, out = 0;

	if (!arena)
		return 0;
	if (!arena_has_range(arena))
		goto out;
	if (addr)
		uaddr = (arena->user_vm_start & ~(u64)U32_MAX) + (u32)addr;
	if (!flags && page_cnt && arena_alloc_pages(arena, uaddr, page_cnt, node_id, NULL, &out))
		out = 0;
out:
	bpf_map_put(&arena->map);
	return out;
}

noinline void bpf_arena_free_pages_map(struct bpf_map *map, u64 ptr, u32 page_cnt)
{
	struct bpf_arena *arena = arena_from_map(map);

	if (!arena)
		return;
	if (arena_has_range(arena))
		arena_free_pages(arena, ptr, page_cnt);
	bpf_map_put(&arena->map);
}

noinline int bpf_arena_reserve_pages(void *p__map, void *ptr__ign, u32 page_cnt)
{
	return -EINVAL;
}

/*
 * The non-sleepable placeholders find the arena under RCU without taking a
 * reference (a put could free it, which is not safe in every context): the
 * arena is freed only after a grace period that follows its removal from the
 * companion list (arena_companion_release()).
 */
noinline int bpf_arena_reserve_pages_ph(struct bpf_arena_kfunc_ref *ref, u64 ptr, u32 page_cnt)
{
	struct bpf_arena *arena;
	int ret = -EINVAL;	/* upstream: not an arena */

	rcu_read_lock();
	arena = arena_find_by_companion_rcu((unsigned long)ref);
	if (arena)
		ret = page_cnt ? arena_reserve_pages(arena, ptr, page_cnt) : 0;
	rcu_read_unlock();
	return ret;
}

static u64 alloc_nosleep(struct bpf_arena_kfunc_ref *ref, u64 addr, u32 page_cnt,
			 int node_id, u64 flags, bool direct)
{
	struct bpf_arena *arena;
	u64 uaddr = 0, out = 0;

	rcu_read_lock();
	arena = arena_find_by_companion_rcu((unsigned long)ref);
	if (arena && !flags && page_cnt) {
		if (addr)
			uaddr = (READ_ONCE(arena->user_vm_start) & ~(u64)U32_MAX) + (u32)addr;
		if (arena_alloc_pages_nosleep(arena, uaddr, page_cnt, node_id, direct, &out))
			out = 0;
	}
	rcu_read_unlock();
	return out;
}

noinline u64 bpf_arena_alloc_pages_nosleep_ph(struct bpf_arena_kfunc_ref *ref, u64 addr,
					      u32 page_cnt, int node_id, u64 flags)
{
	return alloc_nosleep(ref, addr, page_cnt, node_id, flags, true);
}

noinline u64 bpf_arena_alloc_pages_any_ph(struct bpf_arena_kfunc_ref *ref, u64 addr,
					  u32 page_cnt, int node_id, u64 flags)
{
	return alloc_nosleep(ref, addr, page_cnt, node_id, flags, false);
}

noinline void bpf_arena_free_pages_nosleep_ph(struct bpf_arena_kfunc_ref *ref, u64 ptr,
					      u32 page_cnt)
{
	struct bpf_arena *arena;

	if (!ptr || !page_cnt)
		return;
	rcu_read_lock();
	arena = arena_find_by_companion_rcu((unsigned long)ref);
	if (arena)
		arena_free_pages_nosleep(arena, ptr, page_cnt);
	rcu_read_unlock();
}

/*
 * bpf_for()/bpf_repeat() (libbpf's bpf_helpers.h) call these; 6.1 has no
 * open-coded iterators.  libbpf resolves the programs' __ksym externs here
 * (6.4+ vmlinux has them, 6.1's does not); the lowering replaces every call
 * with inline code of upstream's semantics (rewrite/lower.c, docs/LOOPS.md), so
 * these bodies never run and are registered in no kfunc set: a call the
 * lowering did not replace is refused by the verifier.  The struct has
 * upstream's layout (uapi bpf.h, 6.4+): libbpf compares only kinds.
 */
#if !BPF_ARENA_KERNEL_HAS_ITER_NUM
struct bpf_iter_num {
	u64 __opaque[1];
} __aligned(8);

noinline int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end)
{
	return -EINVAL;
}

noinline int *bpf_iter_num_next(struct bpf_iter_num *it)
{
	return NULL;
}

noinline void bpf_iter_num_destroy(struct bpf_iter_num *it)
{
}
#endif

__diag_pop();

/* XDP, TC and SYSCALL programs: softirq or process context, no allocator locks held. */
BTF_SET8_START(arena_kfunc_set_net)
BTF_ID_FLAGS(func, bpf_arena_alloc_pages_ph, KF_SLEEPABLE)
BTF_ID_FLAGS(func, bpf_arena_free_pages_ph, KF_SLEEPABLE)
BTF_ID_FLAGS(func, bpf_arena_reserve_pages_ph)
BTF_ID_FLAGS(func, bpf_arena_alloc_pages_nosleep_ph)
BTF_ID_FLAGS(func, bpf_arena_free_pages_nosleep_ph)
BTF_ID_FLAGS(func, bpf_arena_alloc_pages_map, KF_SLEEPABLE)
BTF_ID_FLAGS(func, bpf_arena_free_pages_map, KF_SLEEPABLE)
BTF_SET8_END(arena_kfunc_set_net)

/* Tracing (and LSM) and struct_ops programs: any context, even NMI or under mm locks. */
BTF_SET8_START(arena_kfunc_set_any)
BTF_ID_FLAGS(func, bpf_arena_alloc_pages_ph, KF_SLEEPABLE)
BTF_ID_FLAGS(func, bpf_arena_free_pages_ph, KF_SLEEPABLE)
BTF_ID_FLAGS(func, bpf_arena_reserve_pages_ph)
BTF_ID_FLAGS(func, bpf_arena_alloc_pages_any_ph)
BTF_ID_FLAGS(func, bpf_arena_free_pages_nosleep_ph)
BTF_ID_FLAGS(func, bpf_arena_alloc_pages_map, KF_SLEEPABLE)
BTF_ID_FLAGS(func, bpf_arena_free_pages_map, KF_SLEEPABLE)
BTF_SET8_END(arena_kfunc_set_any)

/* Order: enum arena_kfunc_id. */
BTF_ID_LIST(arena_kfunc_btf_ids)
BTF_ID(func, bpf_arena_alloc_pages)
BTF_ID(func, bpf_arena_free_pages)
BTF_ID(func, bpf_arena_alloc_pages_ph)
BTF_ID(func, bpf_arena_free_pages_ph)
BTF_ID(func, bpf_arena_alloc_pages_map)
BTF_ID(func, bpf_arena_free_pages_map)
BTF_ID(func, bpf_arena_reserve_pages)
BTF_ID(func, bpf_arena_reserve_pages_ph)
BTF_ID(func, bpf_arena_alloc_pages_nosleep_ph)
BTF_ID(func, bpf_arena_alloc_pages_any_ph)
BTF_ID(func, bpf_arena_free_pages_nosleep_ph)
#if !BPF_ARENA_KERNEL_HAS_ITER_NUM
BTF_ID(func, bpf_iter_num_new)
BTF_ID(func, bpf_iter_num_next)
BTF_ID(func, bpf_iter_num_destroy)
#else
BTF_ID_UNUSED
BTF_ID_UNUSED
BTF_ID_UNUSED
#endif

static const struct btf_kfunc_id_set arena_kfunc_id_set_net = {
	.owner = THIS_MODULE,
	.set = &arena_kfunc_set_net,
};

static const struct btf_kfunc_id_set arena_kfunc_id_set_any = {
	.owner = THIS_MODULE,
	.set = &arena_kfunc_set_any,
};

/* Every program type 6.1 lets call kfuncs (LSM shares TRACING's set). */
static const struct {
	enum bpf_prog_type type;
	const struct btf_kfunc_id_set *set;
} arena_kfunc_prog_types[] = {
	{ BPF_PROG_TYPE_XDP, &arena_kfunc_id_set_net },
	{ BPF_PROG_TYPE_SCHED_CLS, &arena_kfunc_id_set_net },
	{ BPF_PROG_TYPE_SYSCALL, &arena_kfunc_id_set_net },
	{ BPF_PROG_TYPE_STRUCT_OPS, &arena_kfunc_id_set_any },
	{ BPF_PROG_TYPE_TRACING, &arena_kfunc_id_set_any },
};

static bool kfuncs_sleepable_only;
module_param(kfuncs_sleepable_only, bool, 0644);
MODULE_PARM_DESC(kfuncs_sleepable_only,
		 "Only sleepable programs may call the arena kfuncs, as on 6.12 (default: any program, as upstream since late 2025)");

bool arena_kfuncs_sleepable_only(void)
{
	return READ_ONCE(kfuncs_sleepable_only);
}

static bool kfuncs_ok;

u32 arena_kfunc_btf_id(enum arena_kfunc_id which)
{
	return kfuncs_ok ? arena_kfunc_btf_ids[which] : 0;
}

int arena_kfunc_init(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARENA_KFUNC_NR; i++) {
		if (BPF_ARENA_KERNEL_HAS_ITER_NUM && i >= ARENA_KFUNC_ITER_NEW)
			continue;	/* the kernel's own */
		if (!arena_kfunc_btf_ids[i]) {
			pr_warn("module built without BTF: arena kfuncs (bpf_arena_alloc_pages/free_pages/reserve_pages) and bpf_for/bpf_repeat (bpf_iter_num_*) are unavailable\n");
			return 0;
		}
	}
	for (i = 0; i < ARRAY_SIZE(arena_kfunc_prog_types); i++) {
		err = register_btf_kfunc_id_set(arena_kfunc_prog_types[i].type,
						arena_kfunc_prog_types[i].set);
		if (err) {
			pr_err("cannot register the arena kfuncs (%d)\n", err);
			return err;
		}
	}
	kfuncs_ok = true;
	return 0;
}

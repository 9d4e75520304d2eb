// SPDX-License-Identifier: GPL-2.0
/*
 * The arena map pointer as the stock 6.1 verifier sees it: the "view".
 *
 * Upstream programs use `&arena` as a map pointer: they pass it to the
 * kfuncs and read struct bpf_map fields through it (verifier_arena.c's
 * basic_alloc3 reads ar->map.max_entries).  The lowering turns an arena
 * ld_imm64 MAP_FD into an ld_imm64 MAP_FD of a view created for this load,
 * so the verifier types the register CONST_PTR_TO_MAP and checks every use
 * itself.  Before the JIT (prog_hooks.c) the view's address in the verified
 * program is replaced by the arena's, so at run time the program holds the
 * arena's own struct bpf_map, as on 6.12, and reads its real fields.
 *
 * Why that is sound, field by field of what the verifier knows of the view:
 *  - map_btf_id is vmlinux's struct bpf_map: check_ptr_to_map_access()
 *    lets the program read only inside a struct bpf_map, typed as one; the
 *    arena begins with a real struct bpf_map (arena.h), so every read the
 *    verifier allowed reads that struct, with the types it has.  (6.12 types
 *    it struct bpf_arena; 6.1 looks map_btf_id up in vmlinux's BTF only, and
 *    the module's struct bpf_arena is in the module's BTF.)
 *  - map_type is ARRAY only for 6.1's sleepable-program allowlist
 *    (check_map_prog_compatibility()); an ARRAY-typed map that is not a
 *    bpf_array is safe because nothing the verifier or the helpers do with
 *    ARRAY looks inside it: there are no values (value_size 0, the
 *    arena's map_direct_value_addr, which refuses, no map_gen_lookup, no
 *    timer/spin lock/kptr), and
 *    ARRAY-only helpers do not exist (the type checks that cast to a
 *    subclass are PERCPU_ARRAY, PROG_ARRAY, PERF_EVENT_ARRAY, ringbuf,
 *    storage, sockmap...: not ARRAY).
 *  - the ops are the arena's stubs (the helpers the verifier patches into
 *    direct calls of the view's ops receive the arena at run time and do
 *    what they do for the arena), plus map_btf_id and map_free.
 * The view is never in the task's own fd table (created inside the fd
 * snapshot, read-only), has no id, and holds a module reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "arena.h"
#include "ksyms.h"

static DEFINE_MUTEX(view_mutex);
static struct bpf_map_ops view_ops;
static int view_btf_id;		/* vmlinux's struct bpf_map */
static bool view_ready;

static void view_free(struct bpf_map *map)
{
	kfree(map);
	/* As arena_map_free(): the module's exit flushes this workqueue. */
	module_put(THIS_MODULE);
}

/* vmlinux's BTF id of struct bpf_map and the ops, once. */
static int view_init(void)
{
	struct btf *(*get_vmlinux)(void);
	s32 (*find)(const struct btf *btf, const char *name, u8 kind);
	struct btf *btf;
	s32 id;
	int err = 0;

	mutex_lock(&view_mutex);
	if (view_ready)
		goto out;
	get_vmlinux = (void *)ksyms_lookup("bpf_get_btf_vmlinux");
	find = (void *)ksyms_lookup("btf_find_by_name_kind");
	err = -EOPNOTSUPP;
	if (!get_vmlinux || !find)
		goto out;
	btf = get_vmlinux();
	if (IS_ERR_OR_NULL(btf))
		goto out;
	id = find(btf, "bpf_map", BTF_KIND_STRUCT);
	if (id <= 0)
		goto out;
	view_btf_id = id;
	view_ops = arena_map_ops;
	view_ops.map_free = view_free;
	view_ops.map_mmap = NULL;
	view_ops.map_btf_id = &view_btf_id;
	view_ready = true;
	err = 0;
out:
	mutex_unlock(&view_mutex);
	return err;
}

bool arena_is_view(const struct bpf_map *map)
{
	return map->ops == &view_ops;
}

struct bpf_map *arena_view_create(struct bpf_arena *arena)
{
	struct bpf_map *map;
	int err;

	err = view_init();
	if (err)
		return ERR_PTR(err);
	/* The view's reference, dropped by view_free(). */
	if (!try_module_get(THIS_MODULE))
		return ERR_PTR(-ENODEV);
	map = kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map) {
		module_put(THIS_MODULE);
		return ERR_PTR(-ENOMEM);
	}
	map->ops = &view_ops;
	map->map_type = BPF_MAP_TYPE_ARRAY;	/* see the top of this file */
	map->max_entries = arena->map.max_entries;
	map->numa_node = NUMA_NO_NODE;
	map->spin_lock_off = -EINVAL;
	map->timer_off = -EINVAL;
	memcpy(map->name, arena->map.name, sizeof(map->name));
	atomic64_set(&map->refcnt, 1);
	atomic64_set(&map->usercnt, 1);
	mutex_init(&map->freeze_mutex);
	spin_lock_init(&map->owner_lock);
	err = ksyms.security_bpf_map_alloc(map);
	if (err) {
		view_free(map);
		return ERR_PTR(err);
	}
	return map;
}

int arena_view_new_fd(struct bpf_map *view)
{
	int fd;

	bpf_map_inc_with_uref(view);
	fd = ksyms.bpf_map_new_fd(view, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		atomic64_dec(&view->usercnt);
		bpf_map_put(view);
	}
	return fd;
}

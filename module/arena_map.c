// SPDX-License-Identifier: GPL-2.0
/*
 * The arena as a bpf map of type 33: attribute checks, creation (with the
 * caps on arenas created through /dev/bpf_arena), id, fd, and the map ops (every op is set: the verifier and syscalls call some of them
 * without a NULL check).  Errnos are upstream's (kernel/bpf/arena.c and
 * kernel/bpf/syscall.c of 6.12).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/file.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/moduleparam.h>

#include "arena.h"
#include "ksyms.h"

bool notrace is_arena_map(const struct bpf_map *map)
{
	return map->ops == &arena_map_ops;
}

int arena_check_attr(const union bpf_attr *attr, bool need_cap)
{
	int numa_node = bpf_map_attr_numa_node(attr);
	u64 vm_range;

	if (attr->btf_vmlinux_value_type_id ||
	    (attr->btf_key_type_id && !attr->btf_value_type_id) || attr->map_ifindex)
		return -EINVAL;
	if (numa_node != NUMA_NO_NODE &&
	    ((unsigned int)numa_node >= nr_node_ids || !node_online(numa_node)))
		return -EINVAL;
	if (need_cap && !bpf_capable())
		return -EPERM;
	/* arena_map_alloc() */
	if (attr->key_size || attr->value_size || attr->max_entries == 0 ||
	    !(attr->map_flags & BPF_F_MMAPABLE) ||
	    (attr->map_flags & ~ARENA_MAP_FLAGS))
		return -EINVAL;
	if (attr->map_extra & ~PAGE_MASK)
		return -EINVAL;
	vm_range = (u64)attr->max_entries * PAGE_SIZE;
	if (vm_range > SZ_4G)
		return -E2BIG;
	if ((attr->map_extra >> 32) != ((attr->map_extra + vm_range - 1) >> 32))
		return -ERANGE;
	return 0;
}

static int arena_alloc_id(struct bpf_map *map)
{
	int id;

	idr_preload(GFP_KERNEL);
	spin_lock_bh(ksyms.map_idr_lock);
	id = idr_alloc_cyclic(ksyms.map_idr, map, 1, INT_MAX, GFP_ATOMIC);
	if (id > 0)
		map->id = id;
	spin_unlock_bh(ksyms.map_idr_lock);
	idr_preload_end();
	return id > 0 ? 0 : (id ? id : -ENOSPC);
}

int arena_copy_name(char *dst, const char *src, size_t size)
{
	const char *end = src + size;

	/* As bpf_obj_name_cpy(): [A-Za-z0-9_.], NUL-terminated within size. */
	memset(dst, 0, size);
	while (src < end) {
		if (!*src)
			return 0;
		if (!isalnum(*src) && *src != '_' && *src != '.')
			return -EINVAL;
		*dst++ = *src++;
	}
	return -EINVAL;
}

/*
 * Caps on arenas created through the device: each one reserves 4 GiB (+ guard)
 * of vmalloc space whatever its size (32 TiB in all with 4-level paging).
 * Root may change them at run time; 0 refuses every creation.
 */
static unsigned int max_dev_arenas_per_user = 64;
module_param(max_dev_arenas_per_user, uint, 0644);
MODULE_PARM_DESC(max_dev_arenas_per_user,
		 "arenas one user (real uid) may have created through /dev/bpf_arena at once (EMFILE beyond; default 64)");
static unsigned int max_dev_arenas = 1024;
module_param(max_dev_arenas, uint, 0644);
MODULE_PARM_DESC(max_dev_arenas,
		 "arenas all users together may have created through /dev/bpf_arena at once (ENFILE beyond; default 1024)");

/* Device arenas whose kernel window is not freed yet, and who created them. */
static LIST_HEAD(dev_arenas);
static DEFINE_SPINLOCK(dev_arenas_lock);
static unsigned long dev_arenas_gen;	/* bumped at every unaccount */
static DECLARE_WAIT_QUEUE_HEAD(dev_arenas_wq);

/*
 * -EMFILE (uid at its cap) or -ENFILE (global cap) or 0; *dying: one of the
 * arenas that count against the cap reached has dropped its last reference
 * and waits for its deferred free (bpf_map_put() frees from a workqueue).
 */
static int dev_cap_check(kuid_t uid, bool *dying)
{
	unsigned int mine = 0, all = 0;
	bool dying_mine = false, dying_all = false;
	struct bpf_arena *a;

	lockdep_assert_held(&dev_arenas_lock);
	list_for_each_entry(a, &dev_arenas, dev.node) {
		/* A refcount that reached 0 stays 0: the free is queued. */
		bool d = !atomic64_read(&a->map.refcnt);

		all++;
		dying_all |= d;
		if (uid_eq(a->dev.uid, uid)) {
			mine++;
			dying_mine |= d;
		}
	}
	if (mine >= READ_ONCE(max_dev_arenas_per_user)) {
		*dying = dying_mine;
		return -EMFILE;
	}
	if (all >= READ_ONCE(max_dev_arenas)) {
		*dying = dying_all;
		return -ENFILE;
	}
	return 0;
}

static int arena_dev_account(struct bpf_arena *arena)
{
	kuid_t uid = current_uid();
	unsigned long deadline = jiffies + 2 * HZ, gen;
	bool dying;
	int err;

	for (;;) {
		spin_lock(&dev_arenas_lock);
		err = dev_cap_check(uid, &dying);
		if (!err) {
			arena->dev.uid = uid;
			arena->dev.counted = true;
			list_add(&arena->dev.node, &dev_arenas);
		}
		gen = dev_arenas_gen;
		spin_unlock(&dev_arenas_lock);
		/*
		 * An arena released just before (close and reopen) still counts
		 * until its free runs: wait for that rather than fail.
		 */
		if (!err || !dying || time_after(jiffies, deadline))
			break;
		if (wait_event_killable_timeout(dev_arenas_wq,
						READ_ONCE(dev_arenas_gen) != gen, HZ / 10) < 0)
			return -EINTR;
	}
	if (err)
		pr_warn_ratelimited("uid %u reached %s (%u) of arenas created through /dev/%s: %s\n",
				    from_kuid_munged(&init_user_ns, uid),
				    err == -EMFILE ? "max_dev_arenas_per_user" : "max_dev_arenas",
				    err == -EMFILE ? READ_ONCE(max_dev_arenas_per_user) :
				    READ_ONCE(max_dev_arenas),
				    BPF_ARENA_DEV_NAME, err == -EMFILE ? "EMFILE" : "ENFILE");
	return err;
}

static void arena_dev_unaccount(struct bpf_arena *arena)
{
	if (!arena->dev.counted)
		return;
	spin_lock(&dev_arenas_lock);
	list_del(&arena->dev.node);
	arena->dev.counted = false;
	dev_arenas_gen++;
	spin_unlock(&dev_arenas_lock);
	wake_up_all(&dev_arenas_wq);
}

/* Frees the arena's memory, files and itself. */
static void arena_destroy(struct bpf_arena *arena)
{
	arena_companion_release(arena);
	/* After the grace period above: no kfunc can kick the work again. */
	arena_nosleep_stop(arena);
	arena_stats_free(&arena->stats);
	arena_vm_free(arena);
	arena_mem_free(arena);
	/* The kernel window is gone: the arena no longer counts. */
	arena_dev_unaccount(arena);
	kfree(arena);
}

/*
 * Frees an arena that never got a reference holder (error paths only);
 * after that, bpf_map_put() puts the BTF and calls arena_map_free().
 */
static void arena_free(struct bpf_arena *arena)
{
	if (arena->map.btf)
		ksyms.btf_put(arena->map.btf);
	arena_destroy(arena);
}

struct bpf_arena *arena_create(const union bpf_attr *attr, bool need_cap)
{
	struct bpf_arena *arena;
	struct bpf_map *map;
	int err;

	err = arena_check_attr(attr, need_cap);
	if (err)
		return ERR_PTR(err);
	arena = kzalloc_node(sizeof(*arena), GFP_KERNEL_ACCOUNT, bpf_map_attr_numa_node(attr));
	if (!arena)
		return ERR_PTR(-ENOMEM);
	map = &arena->map;
	map->ops = &arena_map_ops;
	map->map_type = BPF_ARENA_MAP_TYPE;
	map->max_entries = attr->max_entries;
	map->map_flags = attr->map_flags;
	map->map_extra = attr->map_extra;
	map->numa_node = bpf_map_attr_numa_node(attr);
	map->spin_lock_off = -EINVAL;
	map->timer_off = -EINVAL;
	atomic64_set(&map->refcnt, 1);
	atomic64_set(&map->usercnt, 1);
	mutex_init(&map->freeze_mutex);
	spin_lock_init(&map->owner_lock);
	INIT_LIST_HEAD(&arena->dev.node);
	arena_stats_init(&arena->stats);

	if (!need_cap) {
		/* The caps first: nothing large is reserved past them. */
		arena->dev.created = true;
		err = arena_dev_account(arena);
		if (err)
			goto free;
	}

	err = arena_copy_name(map->name, attr->map_name, sizeof(attr->map_name));
	if (err)
		goto free;
	if (attr->btf_key_type_id || attr->btf_value_type_id) {
		/* Upstream's arena accepts any BTF; keep it for bpftool. */
		struct btf *btf = ksyms.btf_get_by_fd(attr->btf_fd);

		if (IS_ERR(btf)) {
			err = PTR_ERR(btf);
			goto free;
		}
		map->btf = btf;
		map->btf_key_type_id = attr->btf_key_type_id;
		map->btf_value_type_id = attr->btf_value_type_id;
	}
	err = arena_mem_init(arena);
	if (err)
		goto free;
	err = arena_vm_init(arena);
	if (err)
		goto free;
	if (attr->map_extra) {
		err = arena_set_user_range(arena, attr->map_extra,
					   attr->map_extra + (u64)attr->max_entries * PAGE_SIZE);
		if (err)
			goto free;
	}
	err = ksyms.security_bpf_map_alloc(map);
	if (err)
		goto free;
	/* From here bpf_map_put() is the only way to free it (arena_map_free). */
	if (!try_module_get(THIS_MODULE)) {
		err = -ENODEV;
		goto free;
	}
	err = arena_alloc_id(map);
	if (err) {
		bpf_map_put(map);
		return ERR_PTR(err);
	}
	return arena;
free:
	arena_free(arena);
	return ERR_PTR(err);
}

int arena_new_map_file(struct bpf_arena *arena, int flags, struct file **filep)
{
	struct file *file;
	int fd, err;

	/* As bpf_map_new_fd(), with the number reserved, not installed. */
	err = ksyms.security_bpf_map(&arena->map, OPEN_FMODE(flags));
	if (err)
		return err;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	bpf_map_inc_with_uref(&arena->map);
	file = anon_inode_getfile("bpf-map", ksyms.bpf_map_fops, &arena->map, flags | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		atomic64_dec(&arena->map.usercnt);
		bpf_map_put(&arena->map);
		return PTR_ERR(file);
	}
	*filep = file;
	return fd;
}

int arena_map_create(const union bpf_attr *attr)
{
	struct bpf_arena *arena = arena_create(attr, true);
	int fd;

	if (IS_ERR(arena))
		return PTR_ERR(arena);
	/* The fd takes over the creation reference. */
	fd = ksyms.bpf_map_new_fd(&arena->map, O_RDWR);
	if (fd < 0)
		bpf_map_put(&arena->map);
	return fd;
}

static void arena_map_free(struct bpf_map *map)
{
	struct bpf_arena *arena = to_arena(map);

	/*
	 * Every VMA holds a map reference, so none is left; no program either
	 * (they hold references too).  Called from a workqueue.
	 */
	arena_destroy(arena);
	/*
	 * The module's exit flushes system_unbound_wq (where this runs), so
	 * the few instructions after this put cannot outlive the module.
	 */
	module_put(THIS_MODULE);
}

static int arena_map_mmap(struct bpf_map *map, struct vm_area_struct *vma)
{
	struct arena_payer *payer;
	int err;

	/*
	 * bpf_map_mmap() counted a writable mapping in writecnt; our vm_ops
	 * replace the ones that would uncount it, exactly as upstream's arena
	 * does, so an arena once mapped writable can never be frozen (EBUSY),
	 * as on 6.12.  bpf_map_mmap() also required VM_SHARED, which do_mmap()
	 * leaves only on a file opened for writing: the mapping has the write
	 * right.  Its faults are paid by the process that maps it (the fd may
	 * have come from a device user: /dev/bpf_arena's MAP_FD).
	 */
	payer = arena_payer_new();
	if (!payer)
		return -ENOMEM;
	err = arena_mmap(to_arena(map), vma, payer, ARENA_FAULT_ALLOC);
	arena_payer_put(payer);
	return err;
}

static void *arena_map_lookup_elem(struct bpf_map *map, void *key)
{
	return ERR_PTR(-EINVAL);
}

static int arena_map_get_next_key(struct bpf_map *map, void *key, void *next_key)
{
	return -EOPNOTSUPP;
}

static int arena_map_update_elem(struct bpf_map *map, void *key, void *value, u64 flags)
{
	return -EOPNOTSUPP;
}

static int arena_map_delete_elem(struct bpf_map *map, void *key)
{
	return -EOPNOTSUPP;
}

static int arena_map_push_elem(struct bpf_map *map, void *value, u64 flags)
{
	return -EOPNOTSUPP;
}

static int arena_map_pop_elem(struct bpf_map *map, void *value)
{
	return -EOPNOTSUPP;
}

static int arena_map_check_btf(const struct bpf_map *map, const struct btf *btf,
			       const struct btf_type *key_type,
			       const struct btf_type *value_type)
{
	return 0;
}

/*
 * The stock 6.1 verifier must never get an address from an arena: arena
 * globals are lowered to constants before it runs (rewrite/lower.c), so it only
 * sees an arena ld_imm64 MAP_VALUE when something bypassed the lowering (a
 * BPF_PROG_TYPE_SYSCALL program's bpf_sys_bpf(), or a sibling thread that
 * swapped an fd after the module looked).  Refuse it there.
 */
static int arena_map_direct_value_addr(const struct bpf_map *map, u64 *imm, u32 off)
{
	return -EINVAL;
}

static void *arena_map_lookup_percpu_elem(struct bpf_map *map, void *key, u32 cpu)
{
	return NULL;
}

static int arena_map_redirect(struct bpf_map *map, u32 ifindex, u64 flags)
{
	return XDP_ABORTED;
}

static int arena_map_set_foreach_cb_args(struct bpf_verifier_env *env,
						struct bpf_func_state *caller,
						struct bpf_func_state *callee)
{
	return -EOPNOTSUPP;
}

static int arena_map_foreach_cb(struct bpf_map *map, bpf_callback_t callback_fn,
				       void *callback_ctx, u64 flags)
{
	return -EOPNOTSUPP;
}

static int arena_map_lookup_and_delete_elem(struct bpf_map *map, void *key,
					    void *value, u64 flags)
{
	return -EOPNOTSUPP;
}

const struct bpf_map_ops arena_map_ops = {
	/*
	 * No map_meta_equal: 6.1's bpf_map_meta_alloc() then refuses an arena
	 * as an inner-map template (ENOTSUPP).  With one, the template would
	 * copy this ops pointer and outlive the module's reference.
	 */
	.map_free = arena_map_free,
	.map_mmap = arena_map_mmap,
	.map_get_next_key = arena_map_get_next_key,
	.map_push_elem = arena_map_push_elem,
	.map_peek_elem = arena_map_pop_elem,
	.map_pop_elem = arena_map_pop_elem,
	.map_lookup_elem = arena_map_lookup_elem,
	.map_lookup_percpu_elem = arena_map_lookup_percpu_elem,
	.map_update_elem = arena_map_update_elem,
	.map_delete_elem = arena_map_delete_elem,
	.map_lookup_and_delete_elem = arena_map_lookup_and_delete_elem,
	.map_check_btf = arena_map_check_btf,
	.map_direct_value_addr = arena_map_direct_value_addr,
	.map_redirect = arena_map_redirect,
	.map_set_for_each_callback_args = arena_map_set_foreach_cb_args,
	.map_for_each_callback = arena_map_foreach_cb,
};

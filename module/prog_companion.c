// SPDX-License-Identifier: GPL-2.0
/*
 * The companion of an arena: a stock BPF_MAP_TYPE_ARRAY (one 8-byte value)
 * that lowered programs name instead of the arena map.
 *
 * Why: the stock verifier always types the contents of a BTF-less map value
 * as an unknown scalar, so a load from the companion value is a sound model
 * of an arena load whatever the program did before (docs/PLACEHOLDERS.md);
 * sleepable programs may use an ARRAY map (6.1 refuses type 33 there); and
 * the value's address identifies the arena at JIT time and in the kfuncs.
 *
 * Lifetime: the arena holds its companion until the arena is freed; a
 * program holds the arena (the companion's used_maps slot is switched to the
 * arena before the program is published, see prog_hooks.c).  The companion
 * has no id, so nobody can get an fd of it by id.
 *
 * Identity: the companion is created, and its fds exist, only inside the
 * loading task's private fd table (fd_snapshot.c): no other thread can
 * replace the fd between creation and the fdget() below, nor use it.  From
 * then on the module knows it by the struct bpf_map pointer it holds (the
 * raise matches its value address, select_runtime its pointer), never by an
 * fd number or a shape.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/rculist.h>

#include "arena.h"
#include "kernel_compat.h"
#include "ksyms.h"

static DEFINE_MUTEX(companion_mutex);
static DEFINE_SPINLOCK(companion_list_lock);
static LIST_HEAD(companion_list);

#define COMPANION_VALUE_SIZE	8

/* Hides a map created through kern_sys_bpf(): no id, no GET_FD_BY_ID. */
static void companion_unpublish_id(struct bpf_map *map)
{
	spin_lock_bh(ksyms.map_idr_lock);
	if (map->id)
		idr_remove(ksyms.map_idr, map->id);
	map->id = 0;
	spin_unlock_bh(ksyms.map_idr_lock);
}

static struct bpf_map *companion_create(void)
{
	union bpf_attr attr = {
		.map_type = BPF_MAP_TYPE_ARRAY,
		.key_size = sizeof(u32),
		.value_size = COMPANION_VALUE_SIZE,
		.max_entries = 1,
		/*
		 * Read-only fds only (BPF_F_RDONLY is a property of the fd):
		 * whoever sees one (pidfd_getfd() reads the loader's table,
		 * docs/SECURITY.md) cannot update the map.  6.1 lets any fd
		 * freeze it; harmless only because it is never
		 * BPF_F_RDONLY_PROG: the verifier would then read the value
		 * of a frozen companion as a constant, not as the unknown
		 * scalar the placeholders need.
		 */
		.map_flags = BPF_F_RDONLY,
		.map_name = "arena_companion",
	};
	struct bpf_map *map;
	struct fd f;
	int fd;

	fd = kern_sys_bpf(BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return ERR_PTR(fd);
	f = fdget(fd);
	if (!f.file || f.file->f_op != ksyms.bpf_map_fops) {
		/* Cannot happen in a private table; refuse rather than guess. */
		fdput(f);
		return ERR_PTR(-EBUSY);
	}
	map = f.file->private_data;
	bpf_map_inc(map);
	fdput(f);
	close_fd(fd);
	if (map->map_type != BPF_MAP_TYPE_ARRAY || map->value_size != COMPANION_VALUE_SIZE) {
		bpf_map_put(map);
		return ERR_PTR(-EBUSY);
	}
	companion_unpublish_id(map);
	return map;
}

int arena_companion_get(struct bpf_arena *arena)
{
	struct bpf_map *map;
	u64 value;
	int err = 0;

	mutex_lock(&companion_mutex);
	if (arena->prog.companion)
		goto out;
	map = companion_create();
	if (IS_ERR(map)) {
		err = PTR_ERR(map);
		goto out;
	}
	err = map->ops->map_direct_value_addr(map, &value, 0);
	if (err) {
		bpf_map_put(map);
		goto out;
	}
	arena->prog.companion = map;
	arena->prog.companion_value = value;
	spin_lock(&companion_list_lock);
	list_add_tail_rcu(&arena->prog.companion_node, &companion_list);
	spin_unlock(&companion_list_lock);
out:
	mutex_unlock(&companion_mutex);
	return err;
}

int arena_companion_new_fd(struct bpf_arena *arena)
{
	struct bpf_map *map = arena->prog.companion;
	int fd;

	bpf_map_inc_with_uref(map);
	fd = ksyms.bpf_map_new_fd(map, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		atomic64_dec(&map->usercnt);
		bpf_map_put(map);
	}
	return fd;
}

struct bpf_arena *arena_get_by_companion(u64 value)
{
	struct bpf_arena *arena, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(arena, &companion_list, prog.companion_node) {
		if (arena->prog.companion_value != value)
			continue;
		if (!IS_ERR(bpf_map_inc_not_zero(&arena->map)))
			found = arena;
		break;
	}
	rcu_read_unlock();
	return found;
}

struct bpf_arena *arena_find_by_companion_rcu(u64 value)
{
	struct bpf_arena *arena;

	list_for_each_entry_rcu(arena, &companion_list, prog.companion_node) {
		if (arena->prog.companion_value == value)
			return arena;
	}
	return NULL;
}

bool arena_kern_vm_start_is_live(u64 kern_vm_start)
{
	struct bpf_arena *arena;
	bool live = false;

	rcu_read_lock();
	list_for_each_entry_rcu(arena, &companion_list, prog.companion_node) {
		if (arena->kern_vm_start == kern_vm_start) {
			live = true;
			break;
		}
	}
	rcu_read_unlock();
	return live;
}

/* Inspection counter (arena_stats.h); may run in the page-fault fixup path. */
void notrace arena_stat_fixup(u64 kern_vm_start)
{
	struct bpf_arena *arena;

	rcu_read_lock();
	list_for_each_entry_rcu(arena, &companion_list, prog.companion_node) {
		if (arena->kern_vm_start == kern_vm_start) {
			arena_stat_inc(arena, fixups);
			break;
		}
	}
	rcu_read_unlock();
}

void arena_companion_release(struct bpf_arena *arena)
{
	if (!arena->prog.companion)
		return;
	spin_lock(&companion_list_lock);
	list_del_rcu(&arena->prog.companion_node);
	spin_unlock(&companion_list_lock);
	/* Lock-free lookups (kfuncs, fault fixups) may still see the arena. */
	synchronize_rcu();
	bpf_map_put(arena->prog.companion);
	arena->prog.companion = NULL;
}

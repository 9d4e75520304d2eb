// SPDX-License-Identifier: GPL-2.0
/*
 * Read-only inspection of arenas: BPF_ARENA_IOC_INSPECT, _PAGES and _DUMP on
 * /dev/bpf_arena, used by the bpf-arena tool (inspect/).
 *
 * Who reaches it: a process that can open /dev/bpf_arena (the device group;
 * root only by default), with any open mode.  It controls the argument
 * struct (copied once, then only the copy is used), the user buffers it
 * names (written with copy_to_user/clear_user, never under arena->lock: a
 * buffer inside an arena mapping faults into that arena), the map id, and
 * the timing against the arena's free and page frees.
 *
 * Rules (docs/SECURITY.md, "Inspection"):
 * - an arena named by map id needs CAP_SYS_ADMIN, as BPF_MAP_GET_FD_BY_ID
 *   (which hands the same caller a read-write fd of the map, whose mmap
 *   reads the memory anyway) and the LSM's read permission on the map;
 * - map id 0 names the handle's own arena, under the handle's rights:
 *   info needs none, the page map and dumps need the read right.
 * Identity and lifetime: the id is looked up in the kernel's map idr under
 * map_idr_lock with the reference taken there, exactly as
 * BPF_MAP_GET_FD_BY_ID does, and the map is accepted only if its ops are the
 * module's; the reference is held for the whole call.  Nothing returned is a
 * kernel address: user addresses, counters, the pid and uid translated into
 * the caller's namespaces, an inode number and a cgroup id.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <linux/vmalloc.h>

#include <linux/bpf_arena.h>

#include "arena.h"
#include "dev.h"
#include "dev_inspect.h"
#include "ksyms.h"

/* The inspect structs start with size and map_id. */
static long inspect_get_arg(void *karg, size_t ksize, void __user *uarg)
{
	return arena_dev_get_arg(karg, ksize, uarg, 2 * sizeof(u32));
}

/* The LSM's say on reading the map, as for a read-only fd of it. */
static int inspect_lsm(struct bpf_map *map)
{
#ifdef CONFIG_SECURITY
	static int (*fn)(struct bpf_map *map, fmode_t fmode);
	typeof(fn) f = READ_ONCE(fn);

	if (!f) {
		/* Not exported on 6.1; never skipped when the kernel has LSMs. */
		f = (typeof(fn))ksyms_lookup("security_bpf_map");
		if (!f) {
			pr_warn_ratelimited("security_bpf_map not found: inspection by map id refused\n");
			return -EOPNOTSUPP;
		}
		WRITE_ONCE(fn, f);
	}
	return f(map, FMODE_READ);
#else
	return security_bpf_map(map, FMODE_READ);
#endif
}

/* The arena whose map id is id, referenced, or NULL; as bpf_map_get_fd_by_id(). */
static struct bpf_arena *arena_get_by_id(u32 id)
{
	struct bpf_map *map;

	spin_lock_bh(ksyms.map_idr_lock);
	map = idr_find(ksyms.map_idr, id);
	/*
	 * A map in the idr is not freed yet (bpf_map_put() removes the id
	 * under this lock before queueing the free), but its refcount may
	 * already be 0: take a reference only if it is not
	 * (__bpf_map_inc_not_zero(), which is not exported).
	 */
	if (map && (!is_arena_map(map) || !atomic64_fetch_add_unless(&map->refcnt, 1, 0)))
		map = NULL;
	spin_unlock_bh(ksyms.map_idr_lock);
	return map ? to_arena(map) : NULL;
}

/* The arena named by map_id (0: the handle's), referenced, or ERR_PTR. */
static struct bpf_arena *inspect_target(u32 map_id, struct bpf_arena *own, bool own_read,
					bool need_read)
{
	struct bpf_arena *arena;
	int err;

	if (!map_id) {
		if (!own)
			return ERR_PTR(-ENXIO);
		if (need_read && !own_read)
			return ERR_PTR(-EACCES);
		bpf_map_inc(&own->map);
		return own;
	}
	if (!capable(CAP_SYS_ADMIN))
		return ERR_PTR(-EPERM);
	arena = arena_get_by_id(map_id);
	if (!arena)
		return ERR_PTR(-ENOENT);
	err = inspect_lsm(&arena->map);
	if (err) {
		bpf_map_put(&arena->map);
		return ERR_PTR(err);
	}
	return arena;
}

/* Kernel address of page pg of the user range (range set). */
static unsigned long page_kaddr(const struct bpf_arena *arena, u64 pg)
{
	return arena->kern_vm_start + (u32)(arena->user_vm_start + (pg << PAGE_SHIFT));
}

static u32 creator_pid_nr(const struct arena_stats *st)
{
	u32 nr = 0;

	rcu_read_lock();
	/* Only while the process lives: a dead one's number may be reused. */
	if (st->creator_pid && pid_task(st->creator_pid, PIDTYPE_TGID))
		nr = pid_vnr(st->creator_pid);
	rcu_read_unlock();
	return nr;
}

static long inspect_info(void __user *uarg, struct bpf_arena *own, bool own_read)
{
	struct bpf_arena_inspect in;
	long usize = inspect_get_arg(&in, sizeof(in), uarg);
	struct bpf_arena *arena;
	struct bpf_map *map;

	if (usize < 0)
		return usize;
	arena = inspect_target(in.map_id, own, own_read, false);
	if (IS_ERR(arena))
		return PTR_ERR(arena);
	map = &arena->map;
	memset(&in, 0, sizeof(in));
	in.size = sizeof(in);
	in.map_id = map->id;
	in.map_flags = map->map_flags;
	in.max_entries = map->max_entries;
	in.map_extra = map->map_extra;
	memcpy(in.name, map->name, sizeof(in.name));
	in.origin = arena->dev.created ? BPF_ARENA_INSPECT_ORIGIN_DEV : BPF_ARENA_INSPECT_ORIGIN_BPF;
	in.frozen = READ_ONCE(map->frozen);
	in.creator_pid = creator_pid_nr(&arena->stats);
	in.creator_uid = from_kuid_munged(current_user_ns(), arena->stats.creator_uid);
	BUILD_BUG_ON(sizeof(in.creator_comm) < sizeof(arena->stats.creator_comm));
	memcpy(in.creator_comm, arena->stats.creator_comm, sizeof(arena->stats.creator_comm));
	if (arena->vm_file)
		in.vm_ino = file_inode(arena->vm_file)->i_ino;
#ifdef CONFIG_MEMCG
	if (arena->memcg)
		in.memcg_id = cgroup_id(arena->memcg->css.cgroup);
#endif
	in.mapped_vmas = arena_stat_read(arena, mapped_vmas);
	if (arena_has_range(arena)) {
		u64 used;

		in.user_vm_start = arena->user_vm_start;
		in.user_vm_end = arena->user_vm_end;
		/* Pages and bitmap change together under the lock. */
		mutex_lock(&arena->lock);
		used = bitmap_weight(arena->bits.used, arena_page_cnt_max(arena));
		in.pages = arena_stat_read(arena, pages);
		mutex_unlock(&arena->lock);
		in.pages_reserved = used > in.pages ? used - in.pages : 0;
	}
	in.alloc_bpf = atomic64_read(&arena->stats.alloc_bpf);
	in.alloc_fault = arena_stat_read(arena, alloc_fault);
	in.alloc_ioctl = atomic64_read(&arena->stats.alloc_ioctl);
	in.alloc_prefault = atomic64_read(&arena->stats.alloc_prefault);
	in.free_bpf = atomic64_read(&arena->stats.free_bpf);
	in.free_ioctl = atomic64_read(&arena->stats.free_ioctl);
	in.freed = arena_stat_read(arena, freed);
	in.user_faults = atomic64_read(&arena->stats.faults);
	in.user_faults_segv = atomic64_read(&arena->stats.faults_segv);
	in.fixups = atomic64_read(&arena->stats.fixups);
	bpf_map_put(map);
	return arena_dev_put_arg(uarg, &in, sizeof(in), usize);
}

static long inspect_pages(void __user *uarg, struct bpf_arena *own, bool own_read)
{
	struct bpf_arena_inspect_pages req;
	long usize = inspect_get_arg(&req, sizeof(req), uarg);
	u8 __user *ubuf;
	struct bpf_arena *arena;
	u64 total = 0, n = 0, done, i;
	long ret = 0;
	u8 *kbuf;

	if (usize < 0)
		return usize;
	if (req.flags)
		return -EINVAL;
	arena = inspect_target(req.map_id, own, own_read, true);
	if (IS_ERR(arena))
		return PTR_ERR(arena);
	if (arena_has_range(arena))
		total = arena_page_cnt_max(arena);
	if (req.first < total)
		n = min_t(u64, req.cnt, total - req.first);
	kbuf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!kbuf) {
		ret = -ENOMEM;
		goto out;
	}
	ubuf = u64_to_user_ptr(req.buf);
	for (done = 0; done < n; done += i) {
		u64 chunk = min_t(u64, n - done, PAGE_SIZE);

		mutex_lock(&arena->lock);
		for (i = 0; i < chunk; i++) {
			u64 pg = req.first + done + i;

			if (!test_bit(pg, arena->bits.used))
				kbuf[i] = BPF_ARENA_PAGE_FREE;
			else if (vmalloc_to_page((void *)page_kaddr(arena, pg)))
				kbuf[i] = BPF_ARENA_PAGE_ALLOCATED;
			else
				kbuf[i] = BPF_ARENA_PAGE_RESERVED;
		}
		mutex_unlock(&arena->lock);
		/* Outside the lock: the buffer may be in this arena's mapping. */
		if (copy_to_user(ubuf + done, kbuf, chunk)) {
			ret = -EFAULT;
			goto out;
		}
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out;
		}
		cond_resched();
	}
	req.cnt = n;
	req.total = total;
	ret = arena_dev_put_arg(uarg, &req, sizeof(req), usize);
out:
	kfree(kbuf);
	bpf_map_put(&arena->map);
	return ret;
}

/* Copies n bytes at offset off of page pg to ubuf (zeroes if unallocated). */
static int inspect_dump_page(struct bpf_arena *arena, u64 pg, unsigned int off, unsigned int n,
		     u8 __user *ubuf, bool *present)
{
	struct page *page = NULL;
	void *src;
	int err;

	mutex_lock(&arena->lock);
	if (test_bit(pg, arena->bits.used)) {
		page = vmalloc_to_page((void *)page_kaddr(arena, pg));
		/* Our own reference: a racing free cannot return it to the allocator. */
		if (page)
			get_page(page);
	}
	mutex_unlock(&arena->lock);
	*present = page != NULL;
	if (!page)
		return clear_user(ubuf, n) ? -EFAULT : 0;
	/* Through the page, not the window: the window entry may go away now. */
	src = kmap_local_page(page);
	err = copy_to_user(ubuf, src + off, n) ? -EFAULT : 0;
	kunmap_local(src);
	put_page(page);
	return err;
}

static long inspect_dump(void __user *uarg, struct bpf_arena *own, bool own_read)
{
	struct bpf_arena_inspect_dump req;
	long usize = inspect_get_arg(&req, sizeof(req), uarg);
	u64 first, last, pg, addr, end;
	struct bpf_arena *arena;
	u8 __user *ubuf;
	long ret = 0;

	if (usize < 0)
		return usize;
	if (!req.len || req.flags)
		return -EINVAL;
	arena = inspect_target(req.map_id, own, own_read, true);
	if (IS_ERR(arena))
		return PTR_ERR(arena);
	if (!arena_has_range(arena)) {
		ret = -ENXIO;
		goto out;
	}
	if (req.addr < arena->user_vm_start || req.addr >= arena->user_vm_end ||
	    req.len > arena->user_vm_end - req.addr) {
		ret = -ERANGE;
		goto out;
	}
	first = (req.addr - arena->user_vm_start) >> PAGE_SHIFT;
	last = (req.addr + req.len - 1 - arena->user_vm_start) >> PAGE_SHIFT;
	if (last - first >= BPF_ARENA_INSPECT_DUMP_MAX_PAGES) {
		ret = -E2BIG;
		goto out;
	}
	req.present = 0;
	ubuf = u64_to_user_ptr(req.buf);
	addr = req.addr;
	end = req.addr + req.len;
	for (pg = first; pg <= last; pg++) {
		unsigned int off = offset_in_page(addr);
		unsigned int n = min_t(u64, PAGE_SIZE - off, end - addr);
		bool present;

		ret = inspect_dump_page(arena, pg, off, n, ubuf, &present);
		if (ret)
			goto out;
		if (present)
			req.present |= 1ULL << (pg - first);
		ubuf += n;
		addr += n;
	}
	ret = arena_dev_put_arg(uarg, &req, sizeof(req), usize);
out:
	bpf_map_put(&arena->map);
	return ret;
}

long arena_inspect_ioctl(unsigned int cmd, void __user *uarg,
			 struct bpf_arena *own, bool own_read)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(BPF_ARENA_IOC_INSPECT):
		return inspect_info(uarg, own, own_read);
	case _IOC_NR(BPF_ARENA_IOC_INSPECT_PAGES):
		return inspect_pages(uarg, own, own_read);
	case _IOC_NR(BPF_ARENA_IOC_INSPECT_DUMP):
		return inspect_dump(uarg, own, own_read);
	default:
		return -ENOTTY;
	}
}

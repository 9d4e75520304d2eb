// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bpf_arena: each open file is an arena handle.  mmap() creates the
 * arena (from BPF_ARENA_IOC_CONFIGURE's settings, or defaults with the size
 * of the mapping) unless the handle already has one; ioctls create it too,
 * attach an existing arena map, and do what upstream user space cannot:
 * allocate, free and prefault pages, and report counters.
 *
 * Who reaches it: any process that can open the node (the device group), with
 * no capability.  So (docs/SECURITY.md):
 * - a handle's rights are its open mode, narrowed by ATTACH to the attached
 *   map fd's mode (FMODE_CAN_READ/WRITE, as map_get_sys_perms()), and a
 *   frozen arena refuses writes, as bpf map fds do;
 * - arenas created here are capped per user and globally (each reserves
 *   4 GiB of kernel address space: arena_map.c);
 * - every page a handle causes (ioctl, or a fault of a mapping made through
 *   it), whatever created its arena, is paid by the handle's opener
 *   (arena_payer.h): RLIMIT_MEMLOCK, memcg, no OOM killer;
 * - a mapping made without the write right never allocates.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <linux/bpf_arena.h>

#include "arena.h"
#include "dev.h"
#include "dev_inspect.h"
#include "ksyms.h"

/* A handle's rights. */
#define H_READ	1U
#define H_WRITE	2U

struct arena_handle {
	struct mutex lock;
	struct bpf_arena *arena;	/* holds one map reference once set */
	/*
	 * H_READ/H_WRITE: the open mode, narrowed by ATTACH to the map fd's;
	 * set with arena, never widened.  A frozen arena has no H_WRITE.
	 */
	unsigned int rights;
	union bpf_attr attr;		/* configuration until the arena exists */
	struct arena_payer *payer;	/* the opener: pays for what the handle causes */
};

static int arena_dev_open(struct inode *inode, struct file *file)
{
	struct arena_handle *h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);

	if (!h)
		return -ENOMEM;
	h->payer = arena_payer_new();
	if (!h->payer) {
		kfree(h);
		return -ENOMEM;
	}
	mutex_init(&h->lock);
	h->attr.map_type = BPF_ARENA_MAP_TYPE;
	h->attr.map_flags = BPF_F_MMAPABLE;
	h->rights = (file->f_mode & FMODE_READ ? H_READ : 0) |
		    (file->f_mode & FMODE_WRITE ? H_WRITE : 0);
	file->private_data = h;
	return 0;
}

/* The handle's arena (or NULL) and rights, frozen taken into account. */
static struct bpf_arena *handle_get(struct arena_handle *h, unsigned int *rights)
{
	struct bpf_arena *arena;

	mutex_lock(&h->lock);
	arena = h->arena;
	*rights = h->rights;
	mutex_unlock(&h->lock);
	/* As map_get_sys_perms(): a frozen map cannot be changed from user space. */
	if (arena && READ_ONCE(arena->map.frozen))
		*rights &= ~H_WRITE;
	return arena;
}

static int arena_dev_release(struct inode *inode, struct file *file)
{
	struct arena_handle *h = file->private_data;

	if (h->arena)
		bpf_map_put(&h->arena->map);
	arena_payer_put(h->payer);
	kfree(h);
	return 0;
}

/* Creates the handle's arena if needed (h->lock held); page_cnt 0 = configured size. */
static struct bpf_arena *handle_arena(struct arena_handle *h, u64 len)
{
	union bpf_attr attr = h->attr;
	struct bpf_arena *arena;

	if (h->arena)
		return h->arena;
	/* Creating an arena (memory, address space) needs a writable handle. */
	if (!(h->rights & H_WRITE))
		return ERR_PTR(-EPERM);
	if (!attr.max_entries) {
		if (!len || len > SZ_4G)
			return ERR_PTR(len ? -E2BIG : -EINVAL);
		attr.max_entries = len >> PAGE_SHIFT;
	}
	arena = arena_create(&attr, false);
	if (!IS_ERR(arena))
		h->arena = arena;
	return arena;
}

long arena_dev_get_arg(void *karg, size_t ksize, void __user *uarg, size_t min_usize)
{
	u32 usize;
	int err;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_usize || usize > PAGE_SIZE)
		return -EINVAL;
	err = copy_struct_from_user(karg, ksize, uarg, usize);
	/* Not "err ? err : usize": that converts err to u32, a positive size. */
	if (err)
		return err;
	return usize;
}

long arena_dev_put_arg(void __user *uarg, const void *karg, size_t ksize, size_t usize)
{
	return copy_to_user(uarg, karg, min(ksize, usize)) ? -EFAULT : 0;
}

static long get_arg(void *karg, size_t ksize, void __user *uarg)
{
	return arena_dev_get_arg(karg, ksize, uarg, sizeof(u32));
}

static long ioc_configure(struct arena_handle *h, void __user *uarg)
{
	struct bpf_arena_config cfg;
	union bpf_attr attr;
	unsigned int rights;
	long ret;

	handle_get(h, &rights);
	if (!(rights & H_WRITE))
		return -EPERM;
	ret = get_arg(&cfg, sizeof(cfg), uarg);
	if (ret < 0)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_ARENA_MAP_TYPE;
	attr.map_flags = cfg.map_flags;
	attr.max_entries = cfg.max_entries;
	attr.map_extra = cfg.map_extra;
	if (cfg.numa_node != NUMA_NO_NODE) {
		attr.map_flags |= BPF_F_NUMA_NODE;
		attr.numa_node = cfg.numa_node;
	}
	/* A fixed address needs a size; otherwise the first mmap gives it. */
	if (!cfg.max_entries && cfg.map_extra)
		return -EINVAL;
	{
		union bpf_attr check = attr;

		if (!check.max_entries)
			check.max_entries = 1;
		ret = arena_check_attr(&check, false);
		if (ret)
			return ret;
	}
	ret = arena_copy_name(attr.map_name, cfg.name, sizeof(cfg.name));
	if (ret)
		return ret;
	mutex_lock(&h->lock);
	if (h->arena) {
		ret = -EBUSY;
	} else {
		h->attr = attr;
		ret = 0;
	}
	mutex_unlock(&h->lock);
	return ret;
}

static long ioc_get_info(struct arena_handle *h, void __user *uarg)
{
	struct bpf_arena_info info;
	long usize = get_arg(&info, sizeof(info), uarg);
	const struct bpf_map *map;

	if (usize < 0)
		return usize;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.uapi_version = BPF_ARENA_UAPI_VERSION;
	mutex_lock(&h->lock);
	if (h->arena) {
		map = &h->arena->map;
		info.map_flags = map->map_flags;
		info.max_entries = map->max_entries;
		info.map_extra = map->map_extra;
		info.user_vm_start = READ_ONCE(h->arena->user_vm_start);
		info.user_vm_end = READ_ONCE(h->arena->user_vm_end);
		info.map_id = map->id;
		info.created = 1;
		memcpy(info.name, map->name, sizeof(info.name));
	} else {
		info.map_flags = h->attr.map_flags & ~BPF_F_NUMA_NODE;
		info.max_entries = h->attr.max_entries;
		info.map_extra = h->attr.map_extra;
		memcpy(info.name, h->attr.map_name, sizeof(info.name));
	}
	mutex_unlock(&h->lock);
	return arena_dev_put_arg(uarg, &info, sizeof(info), usize);
}

static long ioc_map_fd(struct arena_handle *h, void __user *uarg)
{
	struct bpf_arena_map_fd req;
	long usize = get_arg(&req, sizeof(req), uarg);
	struct bpf_arena *arena;
	struct file *file;
	unsigned int rights;
	int fd;

	if (usize < 0)
		return usize;
	if (req.flags || req.__reserved)
		return -EINVAL;
	mutex_lock(&h->lock);
	arena = handle_arena(h, 0);
	if (IS_ERR(arena)) {
		mutex_unlock(&h->lock);
		return PTR_ERR(arena);
	}
	/*
	 * No more rights than the handle, as BPF_MAP_GET_FD_BY_ID's open_flags,
	 * and, as handle_get(), no write right once the arena is frozen: a
	 * read-write fd would let its holder's read faults make pages appear
	 * (a map fd's mapping allocates, as upstream's), which the handle's
	 * own read-only mapping of a frozen arena never does.  Under
	 * freeze_mutex, so no freeze lands between the check and the fd (an
	 * fd made before a freeze keeps its mode, as any bpf map fd).
	 */
	mutex_lock(&arena->map.freeze_mutex);
	rights = h->rights;
	if (arena->map.frozen)
		rights &= ~H_WRITE;
	if (!rights)
		fd = -EPERM;	/* a write-only handle of a frozen arena */
	else if (rights == (H_READ | H_WRITE))
		fd = arena_new_map_file(arena, O_RDWR, &file);
	else
		fd = arena_new_map_file(arena, rights & H_WRITE ? O_WRONLY : O_RDONLY, &file);
	mutex_unlock(&arena->map.freeze_mutex);
	mutex_unlock(&h->lock);
	if (fd < 0)
		return fd;
	req.fd = fd;
	if (arena_dev_put_arg(uarg, &req, sizeof(req), usize)) {
		put_unused_fd(fd);
		fput(file);
		return -EFAULT;
	}
	fd_install(fd, file);
	return 0;
}

static long ioc_attach(struct arena_handle *h, void __user *uarg)
{
	struct bpf_arena_attach req;
	long usize = get_arg(&req, sizeof(req), uarg);
	unsigned int map_rights;
	struct bpf_map *map;
	struct fd f;
	long ret = 0;

	if (usize < 0)
		return usize;
	f = fdget(req.map_fd);
	if (!f.file)
		return -EBADF;
	if (f.file->f_op != ksyms.bpf_map_fops || !is_arena_map(f.file->private_data)) {
		fdput(f);
		return -EINVAL;
	}
	map = f.file->private_data;
	/* The map fd's rights, as map_get_sys_perms() reads them (frozen: later). */
	map_rights = (f.file->f_mode & FMODE_CAN_READ ? H_READ : 0) |
		     (f.file->f_mode & FMODE_CAN_WRITE ? H_WRITE : 0);
	mutex_lock(&h->lock);
	if (h->arena) {
		ret = -EBUSY;
	} else if (!(h->rights & map_rights)) {
		ret = -EACCES;	/* no right would be left */
	} else {
		bpf_map_inc(map);
		h->arena = to_arena(map);
		h->rights &= map_rights;
	}
	mutex_unlock(&h->lock);
	fdput(f);
	return ret;
}

static long ioc_alloc(struct arena_handle *h, struct bpf_arena *arena, void __user *uarg)
{
	struct bpf_arena_alloc req;
	long usize = get_arg(&req, sizeof(req), uarg);
	u64 addr;
	long ret;

	if (usize < 0)
		return usize;
	if (req.flags)
		return -EINVAL;
	ret = arena_alloc_pages(arena, req.addr, req.page_cnt, req.node_id, h->payer, &addr);
	if (ret)
		return ret;
	req.addr = addr;
	if (arena_dev_put_arg(uarg, &req, sizeof(req), usize)) {
		arena_free_pages(arena, addr, req.page_cnt);
		return -EFAULT;
	}
	arena_stat_add(arena, alloc_ioctl, req.page_cnt);
	return 0;
}

/* Copies and checks a FREE/PREFAULT range as the alloc ioctl checks its address. */
static long get_range(struct bpf_arena *arena, void __user *uarg, struct bpf_arena_range *r)
{
	long ret = get_arg(r, sizeof(*r), uarg);

	if (ret < 0)
		return ret;
	if (!arena_has_range(arena))
		return -ENXIO;
	if (!r->page_cnt || (r->addr & ~PAGE_MASK))
		return -EINVAL;
	if (r->addr < arena->user_vm_start || r->addr >= arena->user_vm_end ||
	    r->page_cnt > arena_page_cnt_max(arena) ||
	    r->addr + ((u64)r->page_cnt << PAGE_SHIFT) > arena->user_vm_end)
		return -ERANGE;
	return 0;
}

static long ioc_free(struct bpf_arena *arena, void __user *uarg)
{
	struct bpf_arena_range req;
	long ret = get_range(arena, uarg, &req);

	if (ret)
		return ret;
	ret = arena_free_pages(arena, req.addr, req.page_cnt);
	if (ret > 0)
		arena_stat_add(arena, free_ioctl, ret);
	return ret ? ret : -ENOENT;
}

static long ioc_prefault(struct arena_handle *h, struct bpf_arena *arena, void __user *uarg)
{
	struct bpf_arena_range req;
	long ret = get_range(arena, uarg, &req);

	if (ret)
		return ret;
	if (arena->map.map_flags & BPF_ARENA_F_SEGV_ON_FAULT)
		return -EPERM;	/* only BPF (or the alloc ioctl) allocates those */
	ret = arena_prefault(arena, req.addr, req.page_cnt, h->payer);
	if (ret > 0)
		arena_stat_add(arena, alloc_prefault, ret);
	return ret;
}

/*
 * Page alloc/free/prefault change the arena: as map_update_elem() does, mark
 * a write in progress (map_freeze() refuses then) and check the right and
 * frozen; EPERM as a read-only or frozen map fd gives.
 */
static long ioc_write_op(struct arena_handle *h, struct bpf_arena *arena, unsigned int cmd,
			 void __user *uarg)
{
	struct bpf_map *map = &arena->map;
	long ret;

	atomic64_inc(&map->writecnt);
	if (READ_ONCE(map->frozen))
		ret = -EPERM;
	else if (_IOC_NR(cmd) == _IOC_NR(BPF_ARENA_IOC_ALLOC_PAGES))
		ret = ioc_alloc(h, arena, uarg);
	else if (_IOC_NR(cmd) == _IOC_NR(BPF_ARENA_IOC_FREE_PAGES))
		ret = ioc_free(arena, uarg);
	else
		ret = ioc_prefault(h, arena, uarg);
	atomic64_dec(&map->writecnt);
	return ret;
}

/*
 * User memory is copied with h->lock released: mmap takes h->lock under
 * mmap_lock, so a fault on an ioctl argument must not happen under h->lock.
 */
static long arena_dev_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct arena_handle *h = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct bpf_arena *arena;
	unsigned int rights;

	if (_IOC_TYPE(cmd) != BPF_ARENA_IOC_MAGIC)
		return -ENOTTY;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(BPF_ARENA_IOC_CONFIGURE):
		return ioc_configure(h, uarg);
	case _IOC_NR(BPF_ARENA_IOC_GET_INFO):
		return ioc_get_info(h, uarg);
	case _IOC_NR(BPF_ARENA_IOC_MAP_FD):
		return ioc_map_fd(h, uarg);
	case _IOC_NR(BPF_ARENA_IOC_ATTACH):
		return ioc_attach(h, uarg);
	case _IOC_NR(BPF_ARENA_IOC_ALLOC_PAGES):
	case _IOC_NR(BPF_ARENA_IOC_FREE_PAGES):
	case _IOC_NR(BPF_ARENA_IOC_PREFAULT):
		break;
	case _IOC_NR(BPF_ARENA_IOC_INSPECT):
	case _IOC_NR(BPF_ARENA_IOC_INSPECT_PAGES):
	case _IOC_NR(BPF_ARENA_IOC_INSPECT_DUMP):
		/* Read-only; by map id or on this handle's arena (dev_inspect.c). */
		arena = handle_get(h, &rights);
		return arena_inspect_ioctl(cmd, uarg, arena, rights & H_READ);
	default:
		return -ENOTTY;
	}
	/* Once set, h->arena never changes; the handle's reference keeps it. */
	arena = handle_get(h, &rights);
	/* The right first, before anything is read from user memory. */
	if (!(rights & H_WRITE))
		return -EPERM;
	if (!arena)
		return -ENXIO;
	return ioc_write_op(h, arena, cmd, uarg);
}

static unsigned long arena_dev_get_unmapped_area(struct file *file, unsigned long addr,
						 unsigned long len, unsigned long pgoff,
						 unsigned long flags)
{
	struct arena_handle *h = file->private_data;
	u64 start = 0, end = 0;

	mutex_lock(&h->lock);
	if (h->arena) {
		start = READ_ONCE(h->arena->user_vm_start);
		end = READ_ONCE(h->arena->user_vm_end);
	} else if (h->attr.map_extra) {
		start = h->attr.map_extra;
		end = start + ((u64)h->attr.max_entries << PAGE_SHIFT);
	}
	mutex_unlock(&h->lock);
	return arena_get_unmapped_area(start, end, addr, len, pgoff, flags);
}

static int arena_dev_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct arena_handle *h = file->private_data;
	bool write = vma->vm_flags & VM_WRITE, may_write;
	struct bpf_arena *arena;
	struct bpf_map *map;
	int err;

	/*
	 * The generic checks bpf_map_mmap() does for a map fd.  A read-only
	 * open of the node loses VM_SHARED in do_mmap() (it can never be
	 * written), so test VM_MAYSHARE: MAP_SHARED was asked for.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	mutex_lock(&h->lock);
	if (!h->arena && !(h->rights & H_WRITE))
		arena = ERR_PTR(-EPERM);	/* would create it */
	else if (!(h->rights & H_READ) || (write && !(h->rights & H_WRITE)))
		arena = ERR_PTR(-EACCES);	/* as do_mmap() for the fd's mode */
	else
		arena = handle_arena(h, vma->vm_end - vma->vm_start);
	may_write = h->rights & H_WRITE;
	mutex_unlock(&h->lock);
	if (IS_ERR(arena))
		return PTR_ERR(arena);
	/*
	 * No later mprotect(PROT_WRITE) of a read-only mapping.  Its faults
	 * allocate only while the handle may write (handle_get(): not once
	 * the arena is frozen); a reader's mapping never makes pages appear:
	 * SIGSEGV on a page that does not exist.
	 */
	if (!write) {
		vma->vm_flags &= ~VM_MAYWRITE;
		return arena_mmap(arena, vma, h->payer, may_write ?
				  ARENA_FAULT_ALLOC_UNLESS_FROZEN : ARENA_FAULT_NOALLOC);
	}
	/*
	 * As bpf_map_mmap(): no writable mapping of a frozen map, and a
	 * writable mapping counts as a writer for good (the arena's vm_ops
	 * never uncount it, as upstream's), so the map cannot be frozen after.
	 */
	map = &arena->map;
	mutex_lock(&map->freeze_mutex);
	if (map->frozen) {
		err = -EPERM;
	} else {
		err = arena_mmap(arena, vma, h->payer, ARENA_FAULT_ALLOC);
		if (!err)
			atomic64_inc(&map->writecnt);
	}
	mutex_unlock(&map->freeze_mutex);
	return err;
}

static const struct file_operations arena_dev_fops = {
	.owner = THIS_MODULE,
	.open = arena_dev_open,
	.release = arena_dev_release,
	.unlocked_ioctl = arena_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = arena_dev_mmap,
	.get_unmapped_area = arena_dev_get_unmapped_area,
	.llseek = noop_llseek,
};

static struct miscdevice arena_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = BPF_ARENA_DEV_NAME,
	.fops = &arena_dev_fops,
	.mode = 0600,
};

int arena_dev_init(void)
{
	int err = misc_register(&arena_miscdev);

	if (err)
		pr_err("cannot register /dev/%s (%d)\n", BPF_ARENA_DEV_NAME, err);
	return err;
}

void arena_dev_exit(void)
{
	misc_deregister(&arena_miscdev);
}

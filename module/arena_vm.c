// SPDX-License-Identifier: GPL-2.0
/*
 * User mappings of an arena: address choice, mmap checks, the fault handler
 * and zapping freed pages from every process.
 *
 * Whichever fd user space maps (the bpf map fd or /dev/bpf_arena), the VMA's
 * file is switched to one private file per arena.  All mappings of an arena
 * then share that file's address_space, so a free zaps them all with
 * unmap_mapping_range() under i_mmap_rwsem, without touching any mm's lock.
 * Each VMA holds a reference on the arena map and one on its payer
 * (vm_private_data, arena_payer.h), who pays for the pages its faults
 * allocate.  Whether a fault may allocate is the mapping's kind (its vm_ops):
 * a map fd's mapping always may, as upstream's (a map fd that maps has the
 * write right: bpf_map_mmap() requires VM_SHARED); a device mapping only
 * with the handle's write right, which a frozen arena takes away.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>

#include "arena.h"

#define ARENA_FS_MAGIC 0x62706661	/* "bpfa" */

static struct vfsmount *arena_mnt;

/*
 * /proc/PID/maps names a mapping by its file's path: on 6.12 the arena's
 * mappings use the map fd's file, "anon_inode:bpf-map".  Ours have their
 * own inode (one address_space per arena, see arena_zap()) and print the
 * same name, as anon_inodefs_dname() does (dynamic_dname() is not exported).
 */
#define ARENA_VM_NAME	"anon_inode:bpf-map"

static char *arena_fs_dname(struct dentry *dentry, char *buffer, int buflen)
{
	int sz = sizeof(ARENA_VM_NAME);

	if (sz > buflen)
		return ERR_PTR(-ENAMETOOLONG);
	return memcpy(buffer + buflen - sz, ARENA_VM_NAME, sz);
}

static const struct dentry_operations arena_fs_dops = {
	.d_dname = arena_fs_dname,
};

static int arena_fs_init_fs_context(struct fs_context *fc)
{
	struct pseudo_fs_context *ctx = init_pseudo(fc, ARENA_FS_MAGIC);

	if (!ctx)
		return -ENOMEM;
	ctx->dops = &arena_fs_dops;
	return 0;
}

static struct file_system_type arena_fs_type = {
	.name = "bpf_arena",
	.init_fs_context = arena_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

int arena_fs_init(void)
{
	arena_mnt = kern_mount(&arena_fs_type);
	return PTR_ERR_OR_ZERO(arena_mnt);
}

void arena_fs_exit(void)
{
	kern_unmount(arena_mnt);
}

static const struct file_operations arena_vm_file_fops = {
	.owner = THIS_MODULE,
};

int arena_vm_init(struct bpf_arena *arena)
{
	struct inode *inode = alloc_anon_inode(arena_mnt->mnt_sb);
	struct file *file;

	if (IS_ERR(inode))
		return PTR_ERR(inode);
	inode->i_size = SZ_4G;
	/* __fput() drops a module reference for f_op->owner: take it here. */
	__module_get(THIS_MODULE);
	file = alloc_file_pseudo(inode, arena_mnt, "bpf-map", O_RDWR,
				 &arena_vm_file_fops);
	if (IS_ERR(file)) {
		module_put(THIS_MODULE);
		iput(inode);
		return PTR_ERR(file);
	}
	/* Not a reference: each VMA holds the map, the map holds the file. */
	file->private_data = arena;
	arena->vm_file = file;
	return 0;
}

void arena_vm_free(struct bpf_arena *arena)
{
	if (arena->vm_file)
		fput(arena->vm_file);
	arena->vm_file = NULL;
}

static void arena_vm_open(struct vm_area_struct *vma)
{
	struct bpf_arena *arena = vma->vm_file->private_data;

	bpf_map_inc(&arena->map);
	arena_payer_get(vma->vm_private_data);
	arena_stat_inc(arena, mapped_vmas);
}

static void arena_vm_close(struct vm_area_struct *vma)
{
	struct bpf_arena *arena = vma->vm_file->private_data;

	arena_stat_dec(arena, mapped_vmas);
	arena_payer_put(vma->vm_private_data);
	bpf_map_put(&arena->map);
}

static const struct vm_operations_struct arena_vm_ops, arena_vm_ops_unless_frozen;

static vm_fault_t arena_vm_fault(struct vm_fault *vmf)
{
	struct bpf_arena *arena = vmf->vma->vm_file->private_data;
	const struct vm_operations_struct *ops = vmf->vma->vm_ops;
	bool may_alloc = ops == &arena_vm_ops ||
			 (ops == &arena_vm_ops_unless_frozen && !READ_ONCE(arena->map.frozen));
	vm_fault_t ret;

	arena_stat_inc(arena, faults);
	ret = arena_fault(arena, vmf, vmf->vma->vm_private_data, may_alloc);
	if (ret & VM_FAULT_SIGSEGV)
		arena_stat_inc(arena, faults_segv);
	return ret;
}

/* Splitting would leave pieces whose start is not user_vm_start. */
static int arena_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static int arena_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct arena_vm_ops = {
	.open = arena_vm_open,
	.close = arena_vm_close,
	.fault = arena_vm_fault,
	.may_split = arena_vm_may_split,
	.mremap = arena_vm_mremap,
};

static const struct vm_operations_struct arena_vm_ops_unless_frozen = {
	.open = arena_vm_open,
	.close = arena_vm_close,
	.fault = arena_vm_fault,
	.may_split = arena_vm_may_split,
	.mremap = arena_vm_mremap,
};

static const struct vm_operations_struct arena_vm_ops_noalloc = {
	.open = arena_vm_open,
	.close = arena_vm_close,
	.fault = arena_vm_fault,
	.may_split = arena_vm_may_split,
	.mremap = arena_vm_mremap,
};

int arena_mmap(struct bpf_arena *arena, struct vm_area_struct *vma,
	       struct arena_payer *payer, enum arena_fault_alloc alloc)
{
	int err = 0;

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start > SZ_4G)
		return -EINVAL;
	mutex_lock(&arena->lock);
	/*
	 * Without map_extra the first mapping picks user_vm_start; every
	 * later one, in any process, must use the same address and length.
	 */
	if ((arena->user_vm_start && arena->user_vm_start != vma->vm_start) ||
	    (arena->user_vm_end && arena->user_vm_end != vma->vm_end)) {
		err = -EBUSY;
		goto out;
	}
	if (!arena->user_vm_start) {
		/*
		 * Fixing the address is a change of the arena: not for a
		 * mapping without the write right (a reader would choose
		 * where the owner must map, in every process).
		 */
		if (alloc == ARENA_FAULT_NOALLOC) {
			err = -EPERM;
			goto out;
		}
		err = arena_set_user_range(arena, vma->vm_start, vma->vm_end);
		if (err)
			goto out;
	}
	/* VM_MIXEDMAP: the fault handler inserts pages itself (arena_fault()). */
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTCOPY | VM_MIXEDMAP;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_ops = alloc == ARENA_FAULT_ALLOC ? &arena_vm_ops :
		      alloc == ARENA_FAULT_ALLOC_UNLESS_FROZEN ? &arena_vm_ops_unless_frozen :
		      &arena_vm_ops_noalloc;
	vma->vm_private_data = payer;
	vma_set_file(vma, arena->vm_file);
	arena_vm_open(vma);
out:
	mutex_unlock(&arena->lock);
	return err;
}

unsigned long arena_get_unmapped_area(u64 start, u64 end, unsigned long addr,
				      unsigned long len, unsigned long pgoff,
				      unsigned long flags)
{
	unsigned long ret;

	if (pgoff)
		return -EINVAL;
	if (len > SZ_4G)
		return -E2BIG;
	if (start) {
		if (len > end - start)
			return -E2BIG;
		if (len != end - start)
			return -EINVAL;
		if (addr != start)
			return -EINVAL;
	}
	/*
	 * As upstream: ask for twice the length so that a range inside it
	 * never crosses a 4 GiB boundary.  A NULL file keeps the generic
	 * (anonymous shared) placement and skips this hook.
	 */
	ret = get_unmapped_area(NULL, addr, len * 2, 0, flags);
	if (IS_ERR_VALUE(ret))
		return ret;
	if ((ret >> 32) == ((ret + len - 1) >> 32))
		return ret;
	if (start)
		return -EFAULT;	/* the checks above make this unreachable */
	return round_up(ret, SZ_4G);
}

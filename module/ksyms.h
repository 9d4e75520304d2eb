/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols the module needs but 6.1 does not export, resolved once at
 * load time through kallsyms (itself found through a kprobe).
 */
#ifndef BPF_ARENA_KSYMS_H
#define BPF_ARENA_KSYMS_H

#include <linux/bpf.h>
#include <linux/fdtable.h>
#include <linux/idr.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

struct arena_ksyms {
	int (*bpf_map_new_fd)(struct bpf_map *map, int flags);
	const struct file_operations *bpf_map_fops;
	struct idr *map_idr;
	spinlock_t *map_idr_lock;
	int (*security_bpf)(int cmd, union bpf_attr *attr, unsigned int size);
	int (*security_bpf_map_alloc)(struct bpf_map *map);
	int (*security_bpf_map)(struct bpf_map *map, fmode_t fmode);
	struct vm_struct *(*get_vm_area)(unsigned long size, unsigned long flags);
	void (*flush_tlb_kernel_range)(unsigned long start, unsigned long end);
	struct mm_struct *init_mm;
	struct btf *(*btf_get_by_fd)(int fd);
	void (*btf_put)(struct btf *btf);
	bool (*btf_is_kernel)(const struct btf *btf);
	const char *(*btf_name_by_offset)(const struct btf *btf, u32 offset);
	int *bpf_jit_enable;
	bool (*is_bpf_text_address)(unsigned long addr);
	typeof(&dup_fd) dup_fd;
	void (*put_files_struct)(struct files_struct *files);
	int *sysctl_unprivileged_bpf_disabled;
};

extern struct arena_ksyms ksyms;

/* Looks up a symbol by name; 0 if absent.  Valid after ksyms_init(). */
unsigned long ksyms_lookup(const char *name);
int ksyms_init(void);

#endif /* BPF_ARENA_KSYMS_H */

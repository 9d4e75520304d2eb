/* SPDX-License-Identifier: GPL-2.0 */
/* /dev/bpf_arena (dev.c) and what its ioctl files share. */
#ifndef BPF_ARENA_DEV_H
#define BPF_ARENA_DEV_H

#include <linux/compiler.h>
#include <linux/types.h>

int arena_dev_init(void);
void arena_dev_exit(void);

/*
 * Copies an ioctl argument that starts with its own __u32 size (at least
 * min_usize, at most a page), once, as copy_struct_from_user(): older
 * (smaller) structs are extended with zeroes, newer ones are accepted if
 * the unknown tail is zero.  Returns the user size or -errno.
 */
long arena_dev_get_arg(void *karg, size_t ksize, void __user *uarg, size_t min_usize);
/* Copies the kernel struct back, no more than the caller's size. */
long arena_dev_put_arg(void __user *uarg, const void *karg, size_t ksize, size_t usize);

#endif /* BPF_ARENA_DEV_H */

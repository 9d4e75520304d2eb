/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_DEV_INSPECT_H
#define BPF_ARENA_DEV_INSPECT_H

#include <linux/compiler.h>

struct bpf_arena;

/*
 * BPF_ARENA_IOC_INSPECT*: own is the handle's arena (NULL if none; the
 * handle's reference keeps it during the call), own_read its read right.
 */
long arena_inspect_ioctl(unsigned int cmd, void __user *uarg,
			 struct bpf_arena *own, bool own_read);

#endif /* BPF_ARENA_DEV_INSPECT_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_arena: BPF_MAP_TYPE_ARENA for kernels that lack it.
 *
 * Module entry and exit.  Each subsystem (arena object, device, hooks) has
 * its own file and its own init/exit pair, called from here in order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>

#include "kernel_compat.h"

static int __init bpf_arena_init(void)
{
	if (BPF_ARENA_KERNEL_HAS_NATIVE_ARENA) {
		pr_err("this kernel has native BPF arena (Linux >= 6.9); the module is not needed and refuses to load\n");
		return -EOPNOTSUPP;
	}
	pr_info("version %s loaded\n", BPF_ARENA_VERSION);
	return 0;
}

static void __exit bpf_arena_exit(void)
{
	pr_info("unloaded\n");
}

module_init(bpf_arena_init);
module_exit(bpf_arena_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("BPF arena (BPF_MAP_TYPE_ARENA) for kernels without native support");
MODULE_VERSION(BPF_ARENA_VERSION);
MODULE_AUTHOR("bpf-arena-dkms developers");

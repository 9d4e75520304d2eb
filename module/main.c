// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_arena: BPF_MAP_TYPE_ARENA for kernels that lack it.
 *
 * Module entry and exit.  Each part (symbols, arena files, hooks, device)
 * has its own file and init/exit pair, called from here in order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>
#include <linux/workqueue.h>

#include "arena.h"
#include "dev.h"
#include "kernel_compat.h"
#include "hook.h"
#include "kfunc.h"
#include "ksyms.h"
#include "prog_ctx.h"
#include "bpf_hook.h"

#if BPF_ARENA_KERNEL_HAS_NATIVE_ARENA
/*
 * Built as this stub only (see Kbuild): the in-tree arena is the authority
 * and the stub touches nothing.  It loads, rather than failing, because a
 * host with the module installed through DKMS also builds it for its newer
 * kernels and loads it at boot (modules-load.d): a refusal there would fail
 * the kernel package's DKMS hook (dkms 3.0.10 counts an excluded build as a
 * failed autoinstall) and systemd-modules-load at every boot.
 */
static int __init bpf_arena_init(void)
{
	pr_info("version %s: this kernel has native BPF arena (Linux >= 6.9); the module is an inactive stub, BPF_MAP_TYPE_ARENA is the kernel's own\n",
		BPF_ARENA_VERSION);
	return 0;
}

static void __exit bpf_arena_exit(void)
{
}
#else
static int __init bpf_arena_init(void)
{
	int err;

	err = ksyms_init();
	if (err)
		return err;
	err = arena_nosleep_module_init();
	if (err)
		return err;
	err = arena_fs_init();
	if (err)
		goto nosleep_exit;
	err = arena_kfunc_init();
	if (err)
		goto fs_exit;
	/* Program hooks first: bpf() lowers programs only once they are in. */
	err = arena_prog_hooks_init();
	if (err)
		goto fs_exit;
	err = arena_bpf_hook_init();
	if (err)
		goto prog_hooks_exit;
	err = arena_dev_init();
	if (err)
		goto syscall_exit;
	pr_info("version %s loaded\n", BPF_ARENA_VERSION);
	return 0;

syscall_exit:
	arena_bpf_hook_exit();
prog_hooks_exit:
	arena_prog_hooks_exit();
	hooks_quiesce();
fs_exit:
	arena_fs_exit();
nosleep_exit:
	arena_nosleep_module_exit();
	return err;
}

static void __exit bpf_arena_exit(void)
{
	arena_dev_exit();
	arena_bpf_hook_exit();
	arena_prog_hooks_exit();
	hooks_quiesce();
	/*
	 * The last arena's map_free() ran on system_unbound_wq and dropped the
	 * module reference as its last statement: let it return first.
	 */
	__flush_workqueue(system_unbound_wq);
	arena_fs_exit();
	arena_nosleep_module_exit();
	pr_info("unloaded\n");
}
#endif

module_init(bpf_arena_init);
module_exit(bpf_arena_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("BPF arena (BPF_MAP_TYPE_ARENA) for kernels without native support");
MODULE_VERSION(BPF_ARENA_VERSION);
MODULE_AUTHOR("bpf-arena-dkms developers");

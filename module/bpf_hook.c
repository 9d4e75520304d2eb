// SPDX-License-Identifier: GPL-2.0
/*
 * Hooks on the bpf() syscall and on get_unmapped_area():
 *  - BPF_MAP_CREATE of BPF_MAP_TYPE_ARENA creates an arena (6.1 rejects the
 *    type); BPF_PROG_LOAD of a program naming an arena is lowered
 *    (prog_load.c); BPF_BTF_LOAD retypes "arg:arena" parameters
 *    (btf_load.c); every other bpf() call reaches the kernel untouched (the
 *    filter redirects only these four commands, and the first two only pay
 *    a 4-byte peek);
 *  - mmap of an arena map fd picks its address as upstream does (6.1's
 *    bpf_map_fops has no get_unmapped_area).
 * The 32-bit entry (__ia32_sys_bpf: int 0x80 and 32-bit programs) is hooked
 * too and takes the same path, so that no bpf() call reaches the stock code
 * with an arena the module did not see (a program naming an arena would
 * load unlowered, without the module's checks), and 32-bit callers get
 * 6.12's answers, as on a native kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "arena.h"
#include "btf_load.h"
#include "hook.h"
#include "ksyms.h"
#include "prog_load.h"
#include "bpf_hook.h"

static long arena_sys_bpf(const struct pt_regs *regs);
static unsigned long arena_hook_get_unmapped_area(struct file *file, unsigned long addr,
						  unsigned long len, unsigned long pgoff,
						  unsigned long flags);

/*
 * bpf(int cmd, ...): 6.1 takes the command from the low 32 bits of rdi
 * (SYSCALL_DEFINE3's int), so the hook must too: bpf(5 | 1 << 32) is a
 * BPF_PROG_LOAD, which a hook reading all of rdi would pass on unlowered.
 */
static int notrace sys_bpf_cmd(const struct pt_regs *regs)
{
	return (int)regs->di;
}

static bool notrace sys_bpf_cmd_hooked(int cmd)
{
	return cmd == BPF_MAP_CREATE || cmd == BPF_MAP_FREEZE ||
	       cmd == BPF_PROG_LOAD || cmd == BPF_BTF_LOAD;
}

/* The filters get the traced function's own registers: its argument is regs. */
static bool notrace sys_bpf_filter(const struct pt_regs *regs)
{
	return sys_bpf_cmd_hooked(sys_bpf_cmd((const struct pt_regs *)regs->di));
}

#ifdef CONFIG_IA32_EMULATION
/* The 32-bit entry: cmd, uattr and size in ebx, ecx, edx (32 bits each). */
static bool notrace ia32_sys_bpf_filter(const struct pt_regs *regs)
{
	return sys_bpf_cmd_hooked((int)((const struct pt_regs *)regs->di)->bx);
}

static long arena_ia32_sys_bpf(const struct pt_regs *regs);
#endif

static bool notrace get_unmapped_area_filter(const struct pt_regs *regs)
{
	struct file *file = (struct file *)regs->di;

	return file && file->f_op == ksyms.bpf_map_fops &&
	       is_arena_map(file->private_data);
}

enum {
	HOOK_SYS_BPF, HOOK_GET_UNMAPPED_AREA,
#ifdef CONFIG_IA32_EMULATION
	HOOK_IA32_SYS_BPF,
#endif
	NR_HOOKS
};

static struct arena_hook hooks[NR_HOOKS] = {
	[HOOK_SYS_BPF] = {
		.name = "__x64_sys_bpf",
		.replacement = arena_sys_bpf,
		.filter = sys_bpf_filter,
	},
	[HOOK_GET_UNMAPPED_AREA] = {
		.name = "get_unmapped_area",
		.replacement = arena_hook_get_unmapped_area,
		.filter = get_unmapped_area_filter,
	},
#ifdef CONFIG_IA32_EMULATION
	[HOOK_IA32_SYS_BPF] = {
		.name = "__ia32_sys_bpf",
		.replacement = arena_ia32_sys_bpf,
		.filter = ia32_sys_bpf_filter,
	},
#endif
};

/* End of 6.12's BPF_MAP_CREATE attributes: map_extra, then two __u32 fds. */
#define MAP_CREATE_ATTR_END (offsetofend(union bpf_attr, map_extra) + 2 * sizeof(__u32))
#define MAP_TOKEN_FD_OFF (offsetofend(union bpf_attr, map_extra) + sizeof(__u32))
#define BPF_F_TOKEN_FD_612 (1U << 16)

/*
 * 6.12 resolves a BPF token (BPF_F_TOKEN_FD) before the arena checks: a bad
 * fd is EBADF, any other fd is not a token (6.1 has none) and is EINVAL.
 */
static int arena_check_token(const union bpf_attr *attr)
{
	s32 token_fd;
	struct fd f;

	if (!(attr->map_flags & BPF_F_TOKEN_FD_612))
		return 0;
	memcpy(&token_fd, (const void *)attr + MAP_TOKEN_FD_OFF, sizeof(token_fd));
	f = fdget(token_fd);
	if (!f.file)
		return -EBADF;
	fdput(f);
	return -EINVAL;
}

/* The BPF_MAP_CREATE part of __sys_bpf() and map_create() for type 33. */
static long arena_sys_map_create(void __user *uattr, unsigned int size)
{
	union bpf_attr attr;
	int err;

	/* bpf_check_uarg_tail_zero() */
	if (size > PAGE_SIZE)
		return -E2BIG;
	if (size > sizeof(attr)) {
		err = check_zeroed_user(uattr + sizeof(attr), size - sizeof(attr));
		if (err <= 0)
			return err ? err : -E2BIG;
		size = sizeof(attr);
	}
	memset(&attr, 0, sizeof(attr));
	if (copy_from_user(&attr, uattr, size))
		return -EFAULT;
	err = ksyms.security_bpf(BPF_MAP_CREATE, &attr, size);
	if (err < 0)
		return err;
	/*
	 * CHECK_ATTR(BPF_MAP_CREATE) of 6.12: its last fields follow map_extra
	 * (value_type_btf_obj_fd, map_token_fd); they are read only with their
	 * flags, which an arena rejects, and everything after must be zero.
	 */
	if (memchr_inv((void *)&attr + MAP_CREATE_ATTR_END, 0,
		       sizeof(attr) - MAP_CREATE_ATTR_END))
		return -EINVAL;
	err = arena_check_token(&attr);
	if (err)
		return err;
	return arena_map_create(&attr);
}

/*
 * 6.1's map_freeze() answers EBUSY to a second freeze; 6.12 answers EPERM.
 * Arena maps get 6.12's answer; other maps are not touched.
 */
static bool arena_refrozen(void __user *uattr, unsigned int size)
{
	struct bpf_map *map;
	bool frozen = false;
	u32 map_fd;
	struct fd f;

	if (size < sizeof(map_fd) || copy_from_user(&map_fd, uattr, sizeof(map_fd)))
		return false;
	f = fdget(map_fd);
	if (!f.file)
		return false;
	if (f.file->f_op == ksyms.bpf_map_fops) {
		map = f.file->private_data;
		frozen = is_arena_map(map) && READ_ONCE(map->frozen);
	}
	fdput(f);
	return frozen;
}

static long arena_sys_bpf(const struct pt_regs *regs)
{
	long (*orig)(const struct pt_regs *regs) = (void *)hooks[HOOK_SYS_BPF].orig;
	void __user *uattr = (void __user *)regs->si;
	unsigned int size = regs->dx;
	u32 map_type;
	long ret;
	int cmd;

	hook_enter();
	cmd = sys_bpf_cmd(regs);
	if (cmd == BPF_MAP_CREATE && size >= sizeof(map_type) &&
	    !copy_from_user(&map_type, uattr, sizeof(map_type)) &&
	    map_type == BPF_ARENA_MAP_TYPE)
		ret = arena_sys_map_create(uattr, size);
	else if (cmd == BPF_MAP_FREEZE && arena_refrozen(uattr, size))
		ret = -EPERM;
	else if (cmd == BPF_PROG_LOAD)
		ret = arena_prog_load(regs, orig);
	else if (cmd == BPF_BTF_LOAD)
		ret = arena_btf_load(regs, orig);
	else
		ret = orig(regs);
	hook_exit();
	return ret;
}

#ifdef CONFIG_IA32_EMULATION
/*
 * Both entries end in the same __sys_bpf(): the 32-bit call is answered as
 * the 64-bit one with its arguments (zero-extended, as the 32-bit stub
 * does), through the 64-bit path, whose original also serves its calls
 * the module passes on.  in_compat_syscall() stays true for the task.
 */
static long arena_ia32_sys_bpf(const struct pt_regs *regs)
{
	struct pt_regs regs64 = {
		.di = (u32)regs->bx,
		.si = (u32)regs->cx,
		.dx = (u32)regs->dx,
	};

	return arena_sys_bpf(&regs64);
}
#endif

static unsigned long arena_hook_get_unmapped_area(struct file *file, unsigned long addr,
						  unsigned long len, unsigned long pgoff,
						  unsigned long flags)
{
	struct bpf_arena *arena = to_arena(file->private_data);

	return arena_get_unmapped_area(READ_ONCE(arena->user_vm_start),
				       READ_ONCE(arena->user_vm_end),
				       addr, len, pgoff, flags);
}

int arena_bpf_hook_init(void)
{
	return hooks_install(hooks, NR_HOOKS);
}

void arena_bpf_hook_exit(void)
{
	hooks_remove(hooks, NR_HOOKS);
}

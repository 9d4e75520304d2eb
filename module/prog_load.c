// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_PROG_LOAD of programs that use an arena (docs/DESIGN.md "Programs"):
 * the orchestration.
 *
 * The bpf() hook sends every BPF_PROG_LOAD here.  A program that names no
 * arena map goes to the kernel untouched (prog_scan.c decides).  One that
 * does is checked as upstream checks it, LOWERED (rewrite/lower.c) into a
 * program the stock 6.1 verifier can check, its may_goto loops outlined
 * (rewrite/loops.c), and loaded with kern_sys_bpf() from kernel copies of
 * the instructions, func_info, line_info, core_relos and fd_array
 * (prog_attr.c; the verifier log stays the user's).  The stock verifier
 * decides; the JIT hook raises the verified placeholders (prog_hooks.c); a
 * program that ends up not JITed is refused before it gets an id or an fd,
 * so no arena program runs unraised.
 *
 * Who reaches this: any caller of bpf(BPF_PROG_LOAD).  The stock path's
 * permission checks come first (stock_checks.c): a caller the kernel would
 * turn away costs nothing here.  Every user buffer (attr, insns, fd_array,
 * func_info, line_info, core_relos, license) is read ONCE into kernel
 * memory and only the copy is used.  An arena program is loaded inside a
 * private copy of the task's fd table (fd_snapshot.c), so no other thread
 * can change what an fd number means between the module's lookups and the
 * verifier's, and the companion map (prog_companion.c), the map view
 * (prog_view.c) and the new program never appear in the task's own table
 * until the load has passed every check.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/filter.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "arena.h"
#include "kernel_compat.h"
#include "kfunc.h"
#include "ksyms.h"
#include "lower.h"
#include "loops.h"
#include "btf_load.h"
#include "fd_snapshot.h"
#include "prog_ctx.h"
#include "prog_load.h"
#include "prog_tag.h"
#include "stock_checks.h"

/* The lowering's view of the kernel (rewrite/lower.h). */

static void *lower_zalloc(void *ctx, size_t size)
{
	return kvzalloc(size, GFP_KERNEL);
}

static void lower_free(void *ctx, void *p)
{
	kvfree(p);
}

static const void *u64_to_ptr(u64 v)
{
	return (const void *)(unsigned long)v;
}

static const struct bpfa_loops_env loops_free_env = {
	.zalloc = lower_zalloc,
	.free = lower_free,
};

/*
 * How a loop body may take main's context (rewrite/loops.h): the struct
 * 6.1's btf_get_prog_ctx_type() matches a global function's argument
 * against, by program type (include/linux/bpf_types.h; kprobe's
 * bpf_user_pt_regs_t resolves to struct pt_regs), or memory for syscall
 * programs, whose context the verifier checks at run time.  Tracing, LSM,
 * struct_ops and extension programs have none: their loops may not use it.
 */
static void loops_ctx(enum bpf_prog_type type, struct bpfa_loops_env *env)
{
	switch (type) {
	case BPF_PROG_TYPE_SOCKET_FILTER:
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_CGROUP_SKB:
	case BPF_PROG_TYPE_LWT_IN:
	case BPF_PROG_TYPE_LWT_OUT:
	case BPF_PROG_TYPE_LWT_XMIT:
	case BPF_PROG_TYPE_LWT_SEG6LOCAL:
	case BPF_PROG_TYPE_SK_SKB:
	case BPF_PROG_TYPE_FLOW_DISSECTOR:
		env->ctx_struct = "__sk_buff";
		break;
	case BPF_PROG_TYPE_XDP:
		env->ctx_struct = "xdp_md";
		break;
	case BPF_PROG_TYPE_KPROBE:
		env->ctx_struct = "pt_regs";
		break;
	case BPF_PROG_TYPE_PERF_EVENT:
		env->ctx_struct = "bpf_perf_event_data";
		break;
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE:
		env->ctx_struct = "bpf_raw_tracepoint_args";
		break;
	case BPF_PROG_TYPE_SYSCALL:
		env->ctx_mem = true;
		break;
	default:
		break;
	}
}

/*
 * may_goto loops (can_loop, cond_break) are outlined after the lowering
 * (rewrite/loops.c, docs/LOOPS.md) into global functions the pass describes in
 * BTF it generates; that BTF is loaded here, inside the fd snapshot.  kattr
 * then names the pass's instructions, BTF and func_info (kernel memory).
 */
static int apply_loops(struct prog_load *pl, const struct bpfa_lower_result *res,
		       union bpf_attr *kattr, struct bpfa_loops_result *lres)
{
	struct bpfa_loops_env env = loops_free_env;
	struct btf *btf = NULL;
	struct btf_header h;
	int fd, ret;

	env.new_idx = res->new_idx;
	env.old_len = pl->len;
	env.nr_cpu_ids = nr_cpu_ids;
	loops_ctx(pl->attr.prog_type, &env);
	env.has_btf = kattr->func_info_cnt || kattr->line_info_cnt || kattr->core_relo_cnt;
	if (kattr->core_relo_cnt) {
		prog_log(&pl->attr,
			 "bpf_arena: may_goto (can_loop/cond_break) with CO-RE relocations is not supported on this kernel yet\n");
		return -EINVAL;
	}
	if (env.has_btf) {
		/* Inside the snapshot: the fd names what the verifier would use. */
		btf = ksyms.btf_get_by_fd(kattr->prog_btf_fd);
		if (IS_ERR(btf))
			return PTR_ERR(btf);
		if (ksyms.btf_is_kernel(btf)) {
			ksyms.btf_put(btf);
			return -EACCES;		/* the verifier's answer */
		}
		memcpy(&h, arena_btf_data(btf), sizeof(h));
		env.btf = arena_btf_data(btf);
		env.btf_size = h.hdr_len + h.type_len + h.str_len;
		env.func_info = u64_to_ptr(kattr->func_info);
		env.func_info_cnt = kattr->func_info_cnt;
		env.func_info_rec_size = kattr->func_info_rec_size;
		env.line_info = u64_to_ptr(kattr->line_info);
		env.line_info_cnt = kattr->line_info_cnt;
		env.line_info_rec_size = kattr->line_info_rec_size;
	}
	ret = bpfa_loops(&env, res->insns, res->len, lres);
	if (btf)
		ksyms.btf_put(btf);
	if (ret) {
		prog_log(&pl->attr, lres->msg);
		return ret;
	}
	fd = arena_btf_load_generated(lres->btf, lres->btf_size);
	if (fd < 0) {
		prog_log(&pl->attr, "bpf_arena: the BTF generated for may_goto loops was refused\n");
		bpfa_loops_free(&env, lres);
		return fd;
	}
	kattr->insns = (u64)(unsigned long)lres->insns;
	kattr->insn_cnt = lres->len;
	kattr->prog_btf_fd = fd;
	kattr->func_info = (u64)(unsigned long)lres->func_info;
	kattr->func_info_rec_size = sizeof(struct bpf_func_info);
	kattr->func_info_cnt = lres->func_info_cnt;
	kattr->line_info = (u64)(unsigned long)lres->line_info;
	kattr->line_info_rec_size = sizeof(struct bpf_line_info);
	kattr->line_info_cnt = lres->line_info_cnt;
	return 0;
}

/*
 * After the load, inside the snapshot: the new program's file, if it is the
 * program the hooks raised and published with its arena.  The select_runtime
 * hook already refused anything else before the program got an id or an fd;
 * this is the second look, on the object itself.
 */
static struct file *loaded_file(int fd, const union bpf_attr *kattr,
				const struct arena_load_ctx *ctx)
{
	struct bpf_prog *prog = bpf_prog_get_type_dev(fd, kattr->prog_type, false);
	struct file *file;
	bool ok;

	if (IS_ERR(prog))
		return ERR_CAST(prog);
	/* Without an arena nothing was lowered into placeholders: no JIT needed. */
	ok = !ctx->err && ctx->used_maps_done && (prog->jited || !ctx->arena);
	bpf_prog_put(prog);
	if (!ok)
		return ERR_PTR(-EOPNOTSUPP);
	/* The snapshot is private: fd still names the same file. */
	file = fget(fd);
	return file ? file : ERR_PTR(-EBADF);
}

/*
 * Which placeholders the program's arena kfunc calls become (kfunc.c):
 * sleepable programs get the ones that may sleep; XDP, TC and syscall
 * programs the non-sleepable allocator that may fall back to GFP_NOWAIT;
 * every other program (tracing, LSM, struct_ops: any context) the one that
 * only takes pre-allocated pages.  The verifier refuses any other pairing.
 */
static bool pick_kfuncs(const union bpf_attr *attr, struct bpfa_lower_env *env)
{
	bool sleepable = attr->prog_flags & BPF_F_SLEEPABLE;

	env->sleepable = sleepable || !arena_kfuncs_sleepable_only();
	env->kf_reserve_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_RESERVE_PH);
	if (sleepable) {
		env->kf_alloc_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_PH);
		env->kf_free_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_FREE_PH);
		return false;
	}
	switch (attr->prog_type) {
	case BPF_PROG_TYPE_XDP:
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SYSCALL:
		env->kf_alloc_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_NOSLEEP_PH);
		break;
	default:
		env->kf_alloc_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_ANY_PH);
		break;
	}
	env->kf_free_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_FREE_NOSLEEP_PH);
	return true;
}

/* Does the lowered program call the (non-sleepable) allocator? */
static bool calls_kfunc(const struct bpfa_lower_result *res, s32 id)
{
	u32 i;

	for (i = 0; id && i < res->len; i++)
		if (res->insns[i].code == (BPF_JMP | BPF_CALL) &&
		    res->insns[i].src_reg == BPF_PSEUDO_KFUNC_CALL && res->insns[i].imm == id)
			return true;
	return false;
}

/*
 * The arena's part of the lowering's env: its window, the companion map and
 * the load's map view (*view, referenced), their fds in the snapshot.
 */
static int lower_env_arena(struct prog_load *pl, struct bpfa_lower_env *env,
			   struct bpf_map **view)
{
	int ret;

	env->user_vm_start = pl->arena->user_vm_start;
	env->arena_size = pl->arena->user_vm_end - pl->arena->user_vm_start;
	env->no_user_conv = pl->arena->map.map_flags & BPF_ARENA_F_NO_USER_CONV;
	ret = arena_companion_get(pl->arena);
	if (ret)
		return ret;
	/* An fd of the snapshot: it never exists in the task's own table. */
	ret = arena_companion_new_fd(pl->arena);
	if (ret < 0)
		return ret;
	env->companion_fd = ret;
	/*
	 * Only the lowering names module objects: a user's ld_imm64 of the
	 * companion's fd (a number the user can predict) would give the
	 * program a plain, writable ARRAY map.
	 */
	if (names_snapshot_fd(pl, env->companion_fd)) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "bpf_arena: the program names fd %d, which is not open (the load's companion map takes it in a private fd table)\n",
			 env->companion_fd);
		prog_log(&pl->attr, msg);
		return -EBADF;	/* 6.1's answer: in the caller's own table the fd is free */
	}
	/* &arena: a map pointer the verifier checks (prog_view.c); its fd lives in the snapshot. */
	*view = arena_view_create(pl->arena);
	if (IS_ERR(*view)) {
		ret = PTR_ERR(*view);
		*view = NULL;
		return ret;
	}
	ret = arena_view_new_fd(*view);
	if (ret < 0)
		return ret;
	env->map_view = true;
	env->view_fd = ret;
	if (names_snapshot_fd(pl, env->view_fd)) {
		prog_log(&pl->attr,
			 "bpf_arena: the program names the fd of the load's own map view\n");
		return -EBADF;	/* 6.1's answer: in the caller's own table the fd is free */
	}
	return 0;
}

/*
 * The attr of the stock load: the user's, naming kernel memory only (the
 * lowered program res, the license, the fd_array copy, and the records in
 * rec, which the caller frees); kern_sys_bpf() takes every pointer in it as
 * a kernel pointer.
 */
static int lowered_attr(struct prog_load *pl, const struct bpfa_lower_result *res,
			union bpf_attr *kattr, char *license, size_t license_size,
			struct prog_records *rec)
{
	long ret;

	*kattr = pl->attr;
	kattr->insns = (u64)(unsigned long)res->insns;
	kattr->insn_cnt = res->len;
	ret = strncpy_from_user(license, u64_to_user_ptr(pl->attr.license), license_size - 1);
	if (ret < 0)
		return ret;
	license[ret] = '\0';
	kattr->license = (u64)(unsigned long)license;
	/* A kernel pointer or 0, never the user's value. */
	kattr->fd_array = (u64)(unsigned long)pl->fds;
	return prog_attr_records(pl, res, kattr, rec);
}

/*
 * The stock load of the final program kattr, inside a load context for the
 * hooks (prog_hooks.c); the new program's file or ERR_PTR.
 */
static struct file *load_verified(struct prog_load *pl, union bpf_attr *kattr,
				  struct bpf_map *view, const struct bpfa_lower_result *res,
				  const struct prog_records *rec,
				  const struct bpfa_loops_result *lres,
				  union bpf_attr __user *uattr)
{
	struct arena_load_ctx ctx;
	struct file *file;
	long ret;

	arena_load_ctx_enter(&ctx, pl->arena);
	ctx.view = view;
	ctx.has_tag = !arena_prog_tag(pl->insns, pl->len, ctx.tag);
	if (res->untrusted_map_arg) {
		/* Refused once the verifier has checked R1's type (prog_hooks.c). */
		ctx.untrusted = true;
		snprintf(ctx.untrusted_msg, sizeof(ctx.untrusted_msg),
			 "bpf_arena: insn %u: arg#0 is untrusted_ptr_bpf_map expected ptr_bpf_map or socket (R1 is not the arena map nor a field of the context)\n",
			 res->untrusted_insn);
	}
	ret = kern_sys_bpf(BPF_PROG_LOAD, kattr, sizeof(*kattr));
	arena_load_ctx_leave(&ctx);
	if (ret == -E2BIG)
		copy_rec_sizes_back(uattr, kattr);
	/* ret is the answer already: the translation cannot change it. */
	prog_log_translate(pl, res, rec, lres, kattr->insn_cnt);
	if (ctx.err)
		prog_log(&pl->attr, ctx.msg);
	if (ret < 0)
		return ERR_PTR(ctx.err ? ctx.err : ret);
	file = loaded_file(ret, kattr, &ctx);
	if (IS_ERR(file) && !ctx.err)
		prog_log(&pl->attr, "JIT is required to use arena\n");
	return file;
}

/*
 * Lowers and loads pl inside the fd snapshot; the new program's file or
 * ERR_PTR.  In order: the arena's companion and view, the lowering, the
 * allocator pool, the kernel attr, the loop pass, the view check on the
 * final program, the stock load.
 */
static struct file *load_lowered(struct prog_load *pl, union bpf_attr __user *uattr)
{
	struct bpfa_lower_env env = {
		.ctx = pl,
		.zalloc = lower_zalloc,
		.free = lower_free,
		.classify_ldimm64 = lower_classify_ldimm64,
		.classify_kfunc = lower_classify_kfunc,
		.classify_ksym = lower_classify_ksym,
		.map_sizes = lower_map_sizes,
		.sleepable = pl->attr.prog_flags & BPF_F_SLEEPABLE,
		.kf_alloc_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_PH),
		.kf_free_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_FREE_PH),
		.kf_alloc_map_id = arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_MAP),
		.kf_free_map_id = arena_kfunc_btf_id(ARENA_KFUNC_FREE_MAP),
		.companion_fd = -1,
	};
	struct prog_records rec = { };
	struct file *file = ERR_PTR(-ENOMEM);
	struct bpfa_loops_result *lres = NULL;
	struct bpfa_lower_result *res;
	union bpf_attr kattr;
	char license[128];
	struct bpf_map *view = NULL;
	bool nosleep;
	long ret;

	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!res)
		return file;
	/*
	 * No arena map: kfunc calls on a map known at run time (iterators)
	 * or only loops to translate.
	 */
	if (pl->arena) {
		ret = lower_env_arena(pl, &env, &view);
		if (ret)
			goto out_res;
	}
	nosleep = pick_kfuncs(&pl->attr, &env);
	ret = bpfa_lower(&env, pl->insns, pl->len, res);
	if (ret) {
		prog_log(&pl->attr, res->msg);
		goto out_res;
	}
	/* Its pages must be there before it first runs. */
	if (nosleep && pl->arena &&
	    (calls_kfunc(res, arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_NOSLEEP_PH)) ||
	     calls_kfunc(res, arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_ANY_PH)))) {
		ret = arena_pool_enable(pl->arena);
		if (ret)
			goto out_lowered;
	}
	ret = lowered_attr(pl, res, &kattr, license, sizeof(license), &rec);
	if (!ret && bpfa_loops_needed(res->insns, res->len)) {
		lres = kzalloc(sizeof(*lres), GFP_KERNEL);
		ret = lres ? apply_loops(pl, res, &kattr, lres) : -ENOMEM;
	}
	if (!ret && view)
		ret = view_no_constant_names(pl, (struct bpf_insn *)(unsigned long)kattr.insns,
					     kattr.insn_cnt, &view, &env.view_fd);
	if (!ret) {
		file = load_verified(pl, &kattr, view, res, &rec, lres, uattr);
		ret = 0;
	}

	if (lres) {
		bpfa_loops_free(&loops_free_env, lres);
		kfree(lres);
	}
	prog_attr_records_free(&rec);
out_lowered:
	kvfree(res->insns);
	kvfree(res->new_idx);
out_res:
	if (view)
		bpf_map_put(view);
	kfree(res);
	return ret ? ERR_PTR(ret) : file;
}

/*
 * The arena program pl, loaded with the task switched to a private copy of
 * its fd table; the new program fd in the task's own table, or -errno.
 * Everything is looked up again in the copy: what the first look (in the
 * shared table) found may have changed since.
 */
static long load_in_snapshot(struct prog_load *pl, union bpf_attr __user *uattr,
			     const struct pt_regs *regs,
			     long (*orig)(const struct pt_regs *regs))
{
	struct fd_snapshot snap;
	struct file *file;
	long ret;

	if (pl->arena)
		bpf_map_put(&pl->arena->map);
	pl->arena = NULL;
	ret = fd_snapshot_enter(&snap);
	if (ret)
		return ret;
	ret = find_arena(pl);
	/* Looked up again: a sibling thread may have changed what the fds name. */
	if (!ret && !pl->arena && !pl->kfuncs && pl->loops)
		ret = loops_allowed(pl);
	if (!ret && (pl->arena || pl->kfuncs || pl->loops))
		ret = check_fd_indexes(pl);
	if (ret || (!pl->arena && !pl->kfuncs && !pl->loops)) {
		fd_snapshot_leave(&snap);
		/* Not an arena program after all: the stock path decides. */
		return ret ? ret : orig(regs);
	}
	file = load_lowered(pl, uattr);
	fd_snapshot_leave(&snap);
	if (IS_ERR(file))
		return PTR_ERR(file);
	return fd_snapshot_publish(file, O_CLOEXEC);
}

long arena_prog_load(const struct pt_regs *regs, long (*orig)(const struct pt_regs *regs))
{
	union bpf_attr __user *uattr = (void __user *)regs->si;
	unsigned int size = regs->dx;
	struct prog_load *pl;
	union bpf_attr attr;
	bool bpf;
	long ret;

	/*
	 * Malformed attrs are the kernel's to reject (E2BIG).  From here on,
	 * a read of user memory that faults or an allocation that fails is
	 * this call's answer (EFAULT, ENOMEM), as the stock path gives it:
	 * never a pass to the stock path, which would read the buffers again
	 * and, if that read works, load an arena program unlowered - refused
	 * with an unrelated message ("Sleepable programs can only use array,
	 * hash, and ringbuf maps": fault injection in make stress-faults).
	 */
	bpf = stock_bpf_capable();
	if (size > PAGE_SIZE || stock_sys_bpf_refuses_unread(BPF_PROG_LOAD, bpf))
		return orig(regs);
	if (size > sizeof(attr)) {
		ret = check_zeroed_user((void __user *)uattr + sizeof(attr), size - sizeof(attr));
		if (ret <= 0)
			return ret ? ret : orig(regs);
		size = sizeof(attr);
	}
	/*
	 * The attr on the stack, as __sys_bpf() keeps it: a program that is
	 * no arena program goes back to the stock path without an allocation.
	 */
	memset(&attr, 0, sizeof(attr));
	if (copy_from_user(&attr, uattr, size))
		return -EFAULT;
	/* Permissions before work: nothing is copied for a caller 6.1 refuses. */
	if (stock_prog_load_check(&attr, size, bpf) || !may_use_arena(&attr))
		return orig(regs);
	pl = kzalloc(sizeof(*pl), GFP_KERNEL);
	if (!pl)
		return -ENOMEM;
	pl->attr = attr;
	pl->len = pl->attr.insn_cnt;	/* bounded by stock_prog_load_check() */
	pl->insns = kvmalloc_array(pl->len, sizeof(*pl->insns), GFP_KERNEL | __GFP_NOWARN);
	ret = -ENOMEM;
	if (!pl->insns)
		goto out;
	ret = -EFAULT;
	if (copy_from_user(pl->insns, u64_to_user_ptr(pl->attr.insns),
			   pl->len * sizeof(*pl->insns)))
		goto out;
	/*
	 * bpf_check() refuses bad log attrs before it reads fd_array; then
	 * EFAULT only where 6.1 reads: an entry the program names.
	 */
	if (!stock_log_attr_ok(pl->attr.log_level, pl->attr.log_buf, pl->attr.log_size))
		goto pass;
	ret = copy_fd_array(pl);
	if (ret)
		goto out;
	/* First look, in the shared table: is there an arena at all? */
	ret = find_arena(pl);
	if (!ret && !pl->arena && !pl->kfuncs) {
		if (!pl->loops)
			goto pass;
		ret = loops_allowed(pl);
		if (ret)
			goto out;
	}
	if (!ret)
		ret = load_in_snapshot(pl, uattr, regs, orig);
	goto out;
pass:
	ret = orig(regs);
out:
	if (pl->arena)
		bpf_map_put(&pl->arena->map);
	kvfree(pl->fds);
	kvfree(pl->insns);
	kfree(pl);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_PROG_LOAD of programs that use an arena (DESIGN.md "Programs").
 *
 * The bpf() hook sends every BPF_PROG_LOAD here.  A program that names no
 * arena map goes to the kernel untouched.  One that does is checked as
 * upstream checks it, LOWERED (rewrite/lower.c) into a program the stock 6.1
 * verifier can check, and loaded with kern_sys_bpf() from kernel copies of
 * the instructions, func_info, line_info, core_relos and fd_array (the
 * verifier log stays the user's).  The stock verifier decides; the JIT hook
 * raises the verified placeholders (prog_hooks.c); a program that ends up
 * not JITed is refused before it gets an id or an fd, so no arena program
 * runs unraised.
 *
 * Who reaches this: any caller of bpf(BPF_PROG_LOAD).  The stock path's
 * permission checks come first (stock_checks.c): a caller the kernel would
 * turn away costs nothing here.  Every user buffer (attr, insns, fd_array,
 * func_info, line_info, core_relos, license) is read ONCE into kernel
 * memory and only the copy is used.  An arena program is loaded inside a
 * private copy of the task's fd table (fd_snapshot.c), so no other thread
 * can change what an fd number means between the module's lookups and the
 * verifier's, and the companion map and the new program never appear in the
 * task's own table until the load has passed every check.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/capability.h>
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

/* The verifier's limits on func_info, line_info and core_relo records. */
#define REC_SIZE_MAX		252
#define FD_ARRAY_MAX		(1U << 16)

struct prog_load {
	union bpf_attr attr;			/* the user's, copied once */
	struct bpf_insn *insns;			/* the user's, copied once */
	u32 len;
	u32 *fds;				/* fd_array, copied once (fd_cnt entries) */
	u32 fd_cnt;
	struct bpf_arena *arena;		/* referenced */
	bool kfuncs;				/* calls bpf_arena_alloc/free_pages */
	/* may_goto or bpf_iter_num_* (bpf_for): translated even without an arena */
	bool loops;
	u32 loops_insn;				/* the first such insn */
	const char *loops_what;			/* and what it is */
};

static enum bpfa_kf_kind lower_classify_kfunc(void *ctx, const struct bpf_insn *insn);
static enum bpfa_kf_kind lower_classify_ksym(void *ctx, const struct bpf_insn *insn);

static bool is_idx_ldimm64(const struct bpf_insn *insn)
{
	return insn->src_reg == BPF_PSEUDO_MAP_IDX || insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE;
}

/* fd_array[idx] from the kernel copy, or -1 where the copy has no such entry. */
static int pl_fd(const struct prog_load *pl, s64 idx)
{
	if (!pl->fds || idx < 0 || idx >= pl->fd_cnt)
		return -1;
	return pl->fds[idx];
}

/* The map an ld_imm64 names, if it is an arena; a reference is taken. */
static struct bpf_arena *ldimm64_arena(const struct prog_load *pl, const struct bpf_insn *insn)
{
	struct bpf_arena *arena = NULL;
	struct fd f;
	int fd;

	fd = is_idx_ldimm64(insn) ? pl_fd(pl, insn->imm) : insn->imm;
	if (fd < 0)
		return NULL;
	f = fdget(fd);
	if (f.file && f.file->f_op == ksyms.bpf_map_fops && is_arena_map(f.file->private_data)) {
		arena = to_arena(f.file->private_data);
		bpf_map_inc(&arena->map);
	}
	fdput(f);
	return arena;
}

/* Writes msg at the start of the user's verifier log, as the verifier would. */
static void prog_log(const union bpf_attr *attr, const char *msg)
{
	char __user *buf = u64_to_user_ptr(attr->log_buf);
	size_t n = strlen(msg);

	if (!attr->log_level || !buf || attr->log_size < 2)
		return;
	n = min_t(size_t, n, attr->log_size - 1);
	if (!copy_to_user(buf, msg, n))
		put_user('\0', buf + n);
}

static bool is_arena_kfunc(enum bpfa_kf_kind kind)
{
	return kind == BPFA_KF_ALLOC || kind == BPFA_KF_FREE || kind == BPFA_KF_RESERVE;
}

static void note_loops(struct prog_load *pl, u32 insn, const char *what)
{
	pl->loops = true;
	pl->loops_insn = insn;
	pl->loops_what = what;
}

/*
 * Finds the program's arena and applies upstream's checks, in upstream's
 * order (the first arena ld_imm64 checks the loader; a second arena is
 * EBUSY).  0 with pl->arena NULL: not an arena program.
 */
static int find_arena(struct prog_load *pl)
{
	struct bpf_arena *arena;
	bool casts = false;
	u32 i;

	pl->kfuncs = false;
	pl->loops = false;
	for (i = 0; i < pl->len; i++) {
		enum bpfa_kf_kind kind;

		casts |= bpfa_is_cast(&pl->insns[i]);
		if (pl->insns[i].code == BPFA_MAY_GOTO_CODE && !pl->loops)
			note_loops(pl, i, "may_goto (can_loop/cond_break)");
		/* An arena kfunc without an arena map: the map comes at run time. */
		if (pl->insns[i].code == (BPF_JMP | BPF_CALL) &&
		    pl->insns[i].src_reg == BPF_PSEUDO_KFUNC_CALL && (!pl->kfuncs || !pl->loops)) {
			kind = lower_classify_kfunc(pl, &pl->insns[i]);
			pl->kfuncs |= is_arena_kfunc(kind);
			if (kind != BPFA_KF_OTHER && !is_arena_kfunc(kind) && !pl->loops)
				note_loops(pl, i, "bpf_iter_num_* (bpf_for/bpf_repeat)");
		}
		if (!bpfa_is_ldimm64(&pl->insns[i]) || i + 1 == pl->len)
			continue;
		/* bpf_ksym_exists(bpf_iter_num_*): 6.1 has no ld_imm64 of a function. */
		if (pl->insns[i].src_reg == BPF_PSEUDO_BTF_ID && !pl->loops &&
		    lower_classify_ksym(pl, &pl->insns[i]) != BPFA_KF_OTHER)
			note_loops(pl, i, "bpf_ksym_exists(bpf_iter_num_*)");
		if (!bpfa_is_map_ldimm64(&pl->insns[i])) {
			i++;
			continue;
		}
		arena = ldimm64_arena(pl, &pl->insns[i++]);
		if (!arena)
			continue;
		if (!pl->arena) {
			pl->arena = arena;
			if (!bpf_capable() || !perfmon_capable()) {
				prog_log(&pl->attr, "CAP_BPF and CAP_PERFMON are required to use arena\n");
				return -EPERM;
			}
			if (!READ_ONCE(*ksyms.bpf_jit_enable)) {
				prog_log(&pl->attr, "JIT is required to use arena\n");
				return -EOPNOTSUPP;
			}
			if (!arena_has_range(arena)) {
				prog_log(&pl->attr,
					 "arena's user address must be set via map_extra or mmap()\n");
				return -EINVAL;
			}
			continue;
		}
		bpf_map_put(&arena->map);
		if (arena != pl->arena) {
			prog_log(&pl->attr, "Only one arena per program\n");
			return -EBUSY;
		}
	}
	if (!pl->arena && casts) {
		/* 6.1 would say "BPF_MOV uses reserved fields": give upstream's reason. */
		prog_log(&pl->attr,
			 "addr_space_cast insn can only be used in a program that has an associated arena\n");
		return -EINVAL;
	}
	if (pl->arena && (pl->attr.prog_flags & BPF_F_TEST_RND_HI32)) {
		prog_log(&pl->attr,
			 "bpf_arena: BPF_F_TEST_RND_HI32 is not supported for arena programs on this kernel\n");
		return -EINVAL;
	}
	return 0;
}

/* The lowering's view of the kernel (rewrite/lower.h). */

static void *lower_zalloc(void *ctx, size_t size)
{
	return kvzalloc(size, GFP_KERNEL);
}

static void lower_free(void *ctx, void *p)
{
	kvfree(p);
}

static enum bpfa_ld_kind lower_classify_ldimm64(void *ctx, const struct bpf_insn *insn)
{
	struct prog_load *pl = ctx;
	struct bpf_arena *arena = ldimm64_arena(pl, insn);
	bool ours = arena == pl->arena;

	if (!arena)
		return BPFA_LD_OTHER;
	bpf_map_put(&arena->map);
	if (!ours)
		return BPFA_LD_OTHER;
	if (insn->src_reg == BPF_PSEUDO_MAP_FD || insn->src_reg == BPF_PSEUDO_MAP_IDX)
		return BPFA_LD_ARENA_MAP;
	return BPFA_LD_ARENA_VALUE;
}

static bool btf_func_is(struct btf *btf, u32 id, enum arena_kfunc_id which, const char *name)
{
	const struct btf_type *t;

	/* A kernel BTF (the module's): a user's BTF cannot pose as it. */
	if (!id || id != arena_kfunc_btf_id(which) || !ksyms.btf_is_kernel(btf))
		return false;
	t = btf_type_by_id(btf, id);
	return t && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC &&
	       !strcmp(ksyms.btf_name_by_offset(btf, t->name_off), name);
}

/* Which of the module's number iterator functions the BTF type id names, if any. */
static enum bpfa_kf_kind iter_kind(struct btf *btf, u32 id)
{
	if (btf_func_is(btf, id, ARENA_KFUNC_ITER_NEW, "bpf_iter_num_new"))
		return BPFA_KF_ITER_NEW;
	if (btf_func_is(btf, id, ARENA_KFUNC_ITER_NEXT, "bpf_iter_num_next"))
		return BPFA_KF_ITER_NEXT;
	if (btf_func_is(btf, id, ARENA_KFUNC_ITER_DESTROY, "bpf_iter_num_destroy"))
		return BPFA_KF_ITER_DESTROY;
	return BPFA_KF_OTHER;
}

static enum bpfa_kf_kind lower_classify_kfunc(void *ctx, const struct bpf_insn *insn)
{
	struct prog_load *pl = ctx;
	enum bpfa_kf_kind kind = BPFA_KF_OTHER;
	struct btf *btf;
	int fd;

	/* Module kfuncs come with their BTF's fd at fd_array[off] (off > 0). */
	if (insn->off <= 0)
		return BPFA_KF_OTHER;
	fd = pl_fd(pl, insn->off);
	if (fd < 0)
		return BPFA_KF_OTHER;
	btf = ksyms.btf_get_by_fd(fd);
	if (IS_ERR(btf))
		return BPFA_KF_OTHER;
	if (btf_func_is(btf, insn->imm, ARENA_KFUNC_ALLOC, "bpf_arena_alloc_pages"))
		kind = BPFA_KF_ALLOC;
	else if (btf_func_is(btf, insn->imm, ARENA_KFUNC_FREE, "bpf_arena_free_pages"))
		kind = BPFA_KF_FREE;
	else if (btf_func_is(btf, insn->imm, ARENA_KFUNC_RESERVE, "bpf_arena_reserve_pages"))
		kind = BPFA_KF_RESERVE;
	else
		kind = iter_kind(btf, insn->imm);
	ksyms.btf_put(btf);
	return kind;
}

/* An ld_imm64 BPF_PSEUDO_BTF_ID naming one of the module's iterator functions? */
static enum bpfa_kf_kind lower_classify_ksym(void *ctx, const struct bpf_insn *insn)
{
	enum bpfa_kf_kind kind = BPFA_KF_OTHER;
	struct btf *btf;

	/* 6.1 takes the BTF object's fd from insn[1].imm, not from fd_array. */
	if (insn[1].imm <= 0)
		return BPFA_KF_OTHER;
	btf = ksyms.btf_get_by_fd(insn[1].imm);
	if (IS_ERR(btf))
		return BPFA_KF_OTHER;
	kind = iter_kind(btf, insn->imm);
	ksyms.btf_put(btf);
	return kind;
}

/*
 * A kernel copy of cnt user records of rec_size bytes whose first u32 is an
 * instruction offset (in units of unit bytes), moved to the lowered program.
 * one_to_one: each record must name an instruction the lowering kept as one
 * instruction (-EOPNOTSUPP otherwise), checked on the copy itself.
 */
static int remap_records(u64 *uptr, u32 cnt, u32 rec_size, u32 unit, bool one_to_one,
			 const struct bpfa_lower_result *res, u32 old_len, void **kbuf)
{
	u32 i, off;
	u8 *buf;

	*kbuf = NULL;
	/*
	 * kern_sys_bpf() takes every pointer in attr as a kernel pointer: a
	 * user value must never pass through.  No records: no pointer.
	 * Records at NULL: the stock answer for a user NULL.
	 */
	if (!cnt) {
		*uptr = 0;
		return 0;
	}
	if (!*uptr)
		return -EFAULT;
	if (rec_size < sizeof(u32) || rec_size > REC_SIZE_MAX || cnt > BPF_COMPLEXITY_LIMIT_INSNS)
		return -EINVAL;
	buf = kvmalloc_array(cnt, rec_size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, u64_to_user_ptr(*uptr), (size_t)cnt * rec_size)) {
		kvfree(buf);
		return -EFAULT;
	}
	for (i = 0; i < cnt; i++) {
		u32 *insn_off = (u32 *)(buf + (size_t)i * rec_size);

		off = *insn_off / unit;
		if (*insn_off % unit)
			continue;	/* the verifier rejects it */
		if (off < old_len && one_to_one &&
		    res->new_idx[off + 1] - res->new_idx[off] != 1) {
			kvfree(buf);
			return -EOPNOTSUPP;
		}
		/* Past the end stays past the end: the verifier refuses it. */
		*insn_off = (off < old_len ? res->new_idx[off] : res->len) * unit;
	}
	*uptr = (u64)(unsigned long)buf;
	*kbuf = buf;
	return 0;
}

/* The fd_array index insn names (an entry 6.1 reads), or -1. */
static s64 named_fd_index(const struct bpf_insn *insn)
{
	if (bpfa_is_ldimm64(insn) && is_idx_ldimm64(insn) && insn->imm >= 0 &&
	    insn->imm < FD_ARRAY_MAX)
		return insn->imm;
	if (insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_KFUNC_CALL &&
	    insn->off > 0)
		return insn->off;
	return -1;
}

/*
 * The kernel copy of fd_array, read once before anything looks at it: it
 * covers the entries the program can name (ld_imm64 MAP_IDX indexes and
 * kfunc BTF slots), which is what 6.1 will read from it.  Indexes that
 * cannot be covered (negative, or FD_ARRAY_MAX and above) are left out here
 * and refused for arena programs (check_fd_indexes()); 6.1 would read them
 * out of the copy's bounds.  Like 6.1, only named entries are read: none
 * named, nothing is read; an unreadable entry between two named ones is no
 * fault (it is -1 in the copy, and nothing reads it).
 */
static int copy_fd_array(struct prog_load *pl)
{
	const u32 __user *ufds = u64_to_user_ptr(pl->attr.fd_array);
	u32 i, n = 0;
	s64 idx;

	if (!ufds)
		return 0;
	for (i = 0; i < pl->len; i++) {
		idx = named_fd_index(&pl->insns[i]);
		if (idx >= 0)
			n = max_t(u32, n, idx + 1);
	}
	if (!n)
		return 0;
	pl->fds = kvmalloc_array(n, sizeof(u32), GFP_KERNEL | __GFP_NOWARN);
	if (!pl->fds)
		return -ENOMEM;
	if (copy_from_user(pl->fds, ufds, n * sizeof(u32))) {
		memset(pl->fds, 0xff, n * sizeof(u32));
		for (i = 0; i < pl->len; i++) {
			idx = named_fd_index(&pl->insns[i]);
			/* A named entry 6.1 could not read either: its EFAULT. */
			if (idx >= 0 && get_user(pl->fds[idx], ufds + idx)) {
				kvfree(pl->fds);
				pl->fds = NULL;
				return -EFAULT;
			}
		}
	}
	pl->fd_cnt = n;
	return 0;
}

/* Every fd_array index of an arena program must be inside the kernel copy. */
static int check_fd_indexes(const struct prog_load *pl)
{
	char msg[96];
	u32 i;

	for (i = 0; i + 1 < pl->len; i++) {
		const struct bpf_insn *insn = &pl->insns[i];

		if (!bpfa_is_ldimm64(insn))
			continue;
		if (is_idx_ldimm64(insn) && pl->attr.fd_array &&
		    (insn->imm < 0 || insn->imm >= FD_ARRAY_MAX)) {
			snprintf(msg, sizeof(msg), "bpf_arena: insn %u: fd_array index %d out of range\n",
				 i, insn->imm);
			prog_log(&pl->attr, msg);
			return -EINVAL;
		}
		i++;
	}
	return 0;
}

/* The verifier reports a too-new record size through uattr: pass it on. */
static void copy_rec_sizes_back(union bpf_attr __user *uattr, const union bpf_attr *kattr)
{
	put_user(kattr->func_info_rec_size, &uattr->func_info_rec_size);
	put_user(kattr->line_info_rec_size, &uattr->line_info_rec_size);
	put_user(kattr->core_relo_rec_size, &uattr->core_relo_rec_size);
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

/* The 64-bit value of an ld_imm64 in p[0..1]. */
static u64 ldimm64_value(const struct bpf_insn *p)
{
	return (u64)(u32)p[0].imm | (u64)(u32)p[1].imm << 32;
}

/*
 * Does a constant of the program (an ld_imm64 with src_reg 0) equal the
 * view's address?  The JIT-time rewrite finds the view's loads by that
 * address (prog_hooks.c view_to_arena()), so such a constant would become
 * &arena after the verifier proved it a known scalar: arithmetic the
 * verifier never checked (attack review of d8f6911).  A constant is the
 * user's own or an arena global's user_vm_start + off (map_extra chooses
 * it); the ld_imm64s the verifier resolves or adds name other live objects
 * (maps, map values, kernel symbols, BPF_PSEUDO_FUNC keeps its src_reg), so
 * once no constant names the live view, only the view's own loads do.
 */
static bool constant_names_view(const struct bpf_insn *p, u32 len, const struct bpf_map *view)
{
	u32 i;

	for (i = 0; i + 1 < len; i++) {
		if (!bpfa_is_ldimm64(&p[i]))
			continue;
		if (!p[i].src_reg && ldimm64_value(&p[i]) == (unsigned long)view)
			return true;
		i++;
	}
	return false;
}

/*
 * Does the user's program name fd (the load's view, in the snapshot) in a map
 * ld_imm64, directly or through fd_array?  Only the lowering's own loads may:
 * the user's could only have guessed the number (attack review of 2079f98:
 * an unlowered MAP_IDX of the view), and the view stands for &arena only
 * where the lowering put it.
 */
static bool names_view_fd(const struct prog_load *pl, int fd)
{
	const struct bpf_insn *insn;
	u32 i;

	for (i = 0; i + 1 < pl->len; i++) {
		insn = &pl->insns[i];
		if (!bpfa_is_ldimm64(insn))
			continue;
		i++;
		if (!bpfa_is_map_ldimm64(insn))
			continue;
		if ((is_idx_ldimm64(insn) ? pl_fd(pl, insn->imm) : insn->imm) == fd)
			return true;
	}
	return false;
}

/* At most this many views per load; a program whose constants name them all is refused. */
#define VIEW_TRIES 16

/*
 * Gives the load a view no constant of the final program p[0..len) names:
 * a new one for as long as one does, whose fd the lowering's view loads
 * then name (the user's program names no view fd: names_view_fd()).  A
 * view given up stays alive through its fd in the snapshot until the load
 * is over, so every new one has a new address, and none of them is left in
 * the program.  0, or -errno.
 */
static int view_no_constant_names(struct prog_load *pl, struct bpf_insn *p, u32 len,
				  struct bpf_map **view, int *view_fd)
{
	struct bpf_map *v;
	int tries, fd;
	u32 i;

	for (tries = 0; constant_names_view(p, len, *view); tries++) {
		if (tries == VIEW_TRIES) {
			prog_log(&pl->attr,
				 "bpf_arena: the program's constants name every map view the load was given\n");
			return -EBUSY;
		}
		v = arena_view_create(pl->arena);
		if (IS_ERR(v))
			return PTR_ERR(v);
		fd = arena_view_new_fd(v);
		if (fd < 0) {
			bpf_map_put(v);
			return fd;
		}
		if (names_view_fd(pl, fd)) {
			bpf_map_put(v);	/* its fd keeps it until the load ends */
			prog_log(&pl->attr,
				 "bpf_arena: the program names the fd of the load's own map view\n");
			return -EBADF;
		}
		for (i = 0; i + 1 < len; i++) {
			if (!bpfa_is_ldimm64(&p[i]))
				continue;
			if (p[i].src_reg == BPF_PSEUDO_MAP_FD && p[i].imm == *view_fd)
				p[i].imm = fd;
			i++;
		}
		/* Its fd keeps the old one alive (and its address taken) until the load ends. */
		bpf_map_put(*view);
		*view = v;
		*view_fd = fd;
	}
	return 0;
}

/* Lowers and loads pl inside the fd snapshot; the new program's file or ERR_PTR. */
static struct file *load_lowered(struct prog_load *pl, union bpf_attr __user *uattr)
{
	struct bpfa_lower_env env = {
		.ctx = pl,
		.zalloc = lower_zalloc,
		.free = lower_free,
		.classify_ldimm64 = lower_classify_ldimm64,
		.classify_kfunc = lower_classify_kfunc,
		.classify_ksym = lower_classify_ksym,
		.sleepable = pl->attr.prog_flags & BPF_F_SLEEPABLE,
		.kf_alloc_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_PH),
		.kf_free_ph_id = arena_kfunc_btf_id(ARENA_KFUNC_FREE_PH),
		.kf_alloc_map_id = arena_kfunc_btf_id(ARENA_KFUNC_ALLOC_MAP),
		.kf_free_map_id = arena_kfunc_btf_id(ARENA_KFUNC_FREE_MAP),
		.companion_fd = -1,
	};
	void *kfinfo = NULL, *klinfo = NULL, *krelos = NULL;
	struct file *file = ERR_PTR(-ENOMEM);
	struct bpfa_loops_result *lres = NULL;
	struct bpfa_lower_result *res;
	struct arena_load_ctx ctx;
	union bpf_attr kattr;
	char license[128];
	struct bpf_map *view = NULL;
	bool nosleep;
	long ret;
	int cfd;

	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!res)
		return file;
	/*
	 * No arena map: kfunc calls on a map known at run time (iterators)
	 * or only loops to translate.
	 */
	if (!pl->arena)
		goto lower;
	env.user_vm_start = pl->arena->user_vm_start;
	env.arena_size = pl->arena->user_vm_end - pl->arena->user_vm_start;
	env.no_user_conv = pl->arena->map.map_flags & BPF_ARENA_F_NO_USER_CONV;
	ret = arena_companion_get(pl->arena);
	if (ret)
		goto out_res;
	/* An fd of the snapshot: it never exists in the task's own table. */
	cfd = arena_companion_new_fd(pl->arena);
	if (cfd < 0) {
		ret = cfd;
		goto out_res;
	}
	env.companion_fd = cfd;
	/* &arena: a map pointer the verifier checks (map_view.c); its fd lives in the snapshot. */
	view = arena_view_create(pl->arena);
	if (IS_ERR(view)) {
		ret = PTR_ERR(view);
		view = NULL;
		goto out_res;
	}
	ret = arena_view_new_fd(view);
	if (ret < 0)
		goto out_res;
	env.map_view = true;
	env.view_fd = ret;
	if (names_view_fd(pl, env.view_fd)) {
		prog_log(&pl->attr,
			 "bpf_arena: the program names the fd of the load's own map view\n");
		ret = -EBADF;	/* 6.1's answer: in the caller's own table the fd is free */
		goto out_res;
	}
lower:
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

	kattr = pl->attr;
	kattr.insns = (u64)(unsigned long)res->insns;
	kattr.insn_cnt = res->len;
	ret = strncpy_from_user(license, u64_to_user_ptr(pl->attr.license), sizeof(license) - 1);
	if (ret < 0)
		goto out_lowered;
	license[ret] = '\0';
	kattr.license = (u64)(unsigned long)license;
	/* A kernel pointer or 0, never the user's value (see remap_records()). */
	kattr.fd_array = (u64)(unsigned long)pl->fds;
	ret = remap_records(&kattr.func_info, kattr.func_info_cnt, kattr.func_info_rec_size, 1,
			    false, res, pl->len, &kfinfo);
	if (!ret)
		ret = remap_records(&kattr.line_info, kattr.line_info_cnt,
				    kattr.line_info_rec_size, 1, false, res, pl->len, &klinfo);
	if (!ret && kattr.core_relo_cnt) {
		ret = remap_records(&kattr.core_relos, kattr.core_relo_cnt,
				    kattr.core_relo_rec_size, sizeof(struct bpf_insn), true,
				    res, pl->len, &krelos);
		if (ret == -EOPNOTSUPP) {
			prog_log(&pl->attr,
				 "bpf_arena: kernel CO-RE relocations on arena accesses are not supported\n");
			ret = -EINVAL;
		}
	}
	if (!ret && bpfa_loops_needed(res->insns, res->len)) {
		lres = kzalloc(sizeof(*lres), GFP_KERNEL);
		ret = lres ? apply_loops(pl, res, &kattr, lres) : -ENOMEM;
	}
	if (!ret && view)
		ret = view_no_constant_names(pl, (struct bpf_insn *)(unsigned long)kattr.insns,
					     kattr.insn_cnt, &view, &env.view_fd);
	if (ret)
		goto out_infos;

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
	ret = kern_sys_bpf(BPF_PROG_LOAD, &kattr, sizeof(kattr));
	arena_load_ctx_leave(&ctx);
	if (ret == -E2BIG)
		copy_rec_sizes_back(uattr, &kattr);
	if (ctx.err)
		prog_log(&pl->attr, ctx.msg);
	if (ret >= 0) {
		file = loaded_file(ret, &kattr, &ctx);
		if (IS_ERR(file) && !ctx.err)
			prog_log(&pl->attr, "JIT is required to use arena\n");
		ret = 0;
	} else if (ctx.err) {
		ret = ctx.err;
	}

out_infos:
	if (lres) {
		bpfa_loops_free(&loops_free_env, lres);
		kfree(lres);
	}
	kvfree(krelos);
	kvfree(klinfo);
	kvfree(kfinfo);
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
 * 6.1 has no may_goto (can_loop/cond_break) and no open-coded iterators
 * (bpf_for/bpf_repeat); the module translates both (docs/LOOPS.md) in any
 * program, arena or not: a program that probes the iterators with
 * bpf_ksym_exists() finds the module's and must then work.  The translation
 * needs what an arena program needs: CAP_BPF (as any kfunc call) and
 * CAP_PERFMON (the translated next() compares a stack pointer with NULL, a
 * pointer comparison 6.1 allows only with it).  Without them: EPERM, named.
 */
static int loops_allowed(struct prog_load *pl)
{
	char msg[224];

	if (bpf_capable() && perfmon_capable())
		return 0;
	snprintf(msg, sizeof(msg),
		 "bpf_arena: insn %u: %s needs CAP_BPF and CAP_PERFMON on this kernel, which has no such loops of its own\n",
		 pl->loops_insn, pl->loops_what);
	prog_log(&pl->attr, msg);
	return -EPERM;
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

/*
 * The fast path (issue 15): can the program at all be one find_arena() acts
 * on?  One pass over the caller's instructions in place (no allocation, no
 * copy), looking for what find_arena() looks for: an ld_imm64 naming a map,
 * an addr_space_cast, or a kfunc call (the arena kfuncs also take a map
 * known only at run time).  None: the stock path loads it exactly as
 * without the module.  Any doubt (a fault, a size the stock path will
 * refuse): true, and the full look below decides.  Runs after
 * stock_prog_load_check(): a caller 6.1 refuses costs no read.
 *
 * Most instructions are decided by their opcode byte alone, eight at a time:
 * byte loads and table tests (scan_opcode[]), about three guest instructions
 * per BPF instruction; only the four opcodes find_arena() cares about read
 * the rest of the instruction.  (Reading all 8 bytes and comparing fields
 * for every instruction cost ~21 guest instructions per BPF instruction,
 * four at a time with an index ~5: the module's largest cost on a non-arena
 * load.)
 *
 * Who: any caller of BPF_PROG_LOAD; they control the buffer and may change
 * it after this read.  That gives them nothing new: the stock path reads the
 * program again in any case (after the full look as well), so what it
 * verifies is whatever the buffer holds then, judged by 6.1's own verifier
 * (an arena map fd in a stock-loaded program is a plain map pointer there,
 * and a cast is rejected as a reserved field) - as with the module unloaded.
 */
static const u8 scan_opcode[256] = {
	[BPF_LD | BPF_IMM | BPF_DW] = 1,	/* map ld_imm64, typed ksym */
	[BPF_ALU64 | BPF_MOV | BPF_X] = 1,	/* addr_space_cast: off 1 or 2 */
	[BPF_JMP | BPF_CALL] = 1,		/* kfunc call */
	[BPFA_MAY_GOTO_CODE] = 1,		/* named below if there is no arena */
};

/*
 * True if none of the eight instructions at q needs a closer look.  A fault
 * is false: the one-at-a-time read in may_use_arena() faults too ("maybe").
 */
static __always_inline bool eight_plain(const struct bpf_insn __user *q)
{
	u8 c0, c1, c2, c3, c4, c5, c6, c7;

	unsafe_get_user(c0, &q[0].code, fault);
	unsafe_get_user(c1, &q[1].code, fault);
	unsafe_get_user(c2, &q[2].code, fault);
	unsafe_get_user(c3, &q[3].code, fault);
	unsafe_get_user(c4, &q[4].code, fault);
	unsafe_get_user(c5, &q[5].code, fault);
	unsafe_get_user(c6, &q[6].code, fault);
	unsafe_get_user(c7, &q[7].code, fault);
	return !(scan_opcode[c0] | scan_opcode[c1] | scan_opcode[c2] | scan_opcode[c3] |
		 scan_opcode[c4] | scan_opcode[c5] | scan_opcode[c6] | scan_opcode[c7]);
fault:
	return false;
}

static bool may_use_arena(const union bpf_attr *attr)
{
	const struct bpf_insn __user *p = u64_to_user_ptr(attr->insns), *end, *stop8, *slow;
	u32 n = attr->insn_cnt;
	u8 code, src;
	s16 off;
	u64 v;

	if (!n || n > BPF_COMPLEXITY_LIMIT_INSNS)
		return true;
	if (!user_access_begin(p, (size_t)n * sizeof(*p)))
		return true;
	end = p + n;
	/* p < stop8: eight instructions left (never a pointer below the buffer). */
	stop8 = n >= 8 ? end - 7 : p;
	slow = p;
	for (; p < end; p++) {
		/*
		 * Eight at a time while none of the eight needs a closer look;
		 * then one at a time through the eight that did (or the tail),
		 * so no opcode is read twice.
		 */
		if (p >= slow) {
			while (p < stop8 && eight_plain(p))
				p += 8;
			slow = end - p > 8 ? p + 8 : end;
		}
		if (p >= end)
			break;
		unsafe_get_user(code, &p->code, fault);
		if (likely(!scan_opcode[code]))
			continue;
		/*
		 * The tests of bpfa_is_map_ldimm64() and bpfa_is_cast()
		 * (insn.h), on the raw bytes: no function calls while user
		 * access is open.
		 */
		unsafe_get_user(v, (const u64 __user *)p, fault);
		code = v & 0xff;		/* struct bpf_insn, little endian */
		src = (v >> 12) & 0xf;
		off = (s16)(v >> 16);
		if (code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (src == BPF_PSEUDO_MAP_FD || src == BPF_PSEUDO_MAP_VALUE ||
			    src == BPF_PSEUDO_MAP_IDX || src == BPF_PSEUDO_MAP_IDX_VALUE)
				goto yes;
			if (++p >= end)
				break;
			/*
			 * A typed ksym in a module's BTF (second slot's imm: a
			 * BTF fd; 0 is vmlinux, which on 6.1 has no iterator):
			 * maybe bpf_ksym_exists(bpf_iter_num_*).
			 */
			if (src == BPF_PSEUDO_BTF_ID) {
				unsafe_get_user(v, (const u64 __user *)p, fault);
				if (v >> 32)
					goto yes;
			}
		} else if (code == (BPF_ALU64 | BPF_MOV | BPF_X)) {
			if (off == 1 || off == 2)
				goto yes;
		} else if (code == (BPF_JMP | BPF_CALL)) {
			if (src == BPF_PSEUDO_KFUNC_CALL)
				goto yes;	/* maybe an arena kfunc on a run-time map */
		} else {
			goto yes;		/* BPFA_MAY_GOTO_CODE */
		}
	}
	user_access_end();
	return false;
yes:
fault:
	user_access_end();
	return true;
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

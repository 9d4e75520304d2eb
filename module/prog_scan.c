// SPDX-License-Identifier: GPL-2.0
/*
 * Is this BPF_PROG_LOAD ours?  The program path's questions about the
 * user's program, before anything is lowered:
 *  - may_use_arena(): the fast scan of the caller's buffer in place, so a
 *    program that can be no arena program costs no copy;
 *  - find_arena(): the full look at the kernel copy (the arena map, arena
 *    kfuncs, may_goto and number iterators), with upstream's checks in
 *    upstream's order; loops_allowed() and check_fd_indexes() for what the
 *    module translates;
 *  - the lowering's classify callbacks (rewrite/lower.h): which ld_imm64
 *    names this load's arena, which kfunc call is an arena kfunc or one of
 *    the module's number iterator functions, a map's key and value sizes.
 *
 * Who reaches this: any caller of bpf(BPF_PROG_LOAD) whom the stock path's
 * permission checks let through (stock_checks.c); they control the program
 * and fd_array.  Everything but may_use_arena() reads the kernel copies
 * (prog_load.c, prog_attr.c); fds are looked up as the verifier will look
 * them up, in the fd snapshot when it matters (prog_load.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/filter.h>
#include <linux/uaccess.h>

#include "arena.h"
#include "kfunc.h"
#include "ksyms.h"
#include "prog_ctx.h"

/*
 * The map an ld_imm64 MAP_FD/MAP_IDX names, looked up as the verifier will
 * look it up (in the fd snapshot when it matters); a reference is taken.
 */
static struct bpf_map *ldimm64_map(const struct prog_load *pl, const struct bpf_insn *insn)
{
	struct bpf_map *map = NULL;
	struct fd f;
	int fd;

	fd = bpfa_is_idx_ldimm64(insn) ? pl_fd(pl, insn->imm) : insn->imm;
	if (fd < 0)
		return NULL;
	f = fdget(fd);
	if (f.file && f.file->f_op == ksyms.bpf_map_fops) {
		map = f.file->private_data;
		bpf_map_inc(map);
	}
	fdput(f);
	return map;
}

/* The map an ld_imm64 names, if it is an arena; a reference is taken. */
static struct bpf_arena *ldimm64_arena(const struct prog_load *pl, const struct bpf_insn *insn)
{
	struct bpf_map *map = ldimm64_map(pl, insn);

	if (map && is_arena_map(map))
		return to_arena(map);
	if (map)
		bpf_map_put(map);
	return NULL;
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

/* Upstream's words, then the usual cause on 6.1: libbpf 1.1 without libbpfarena. */
static const char no_user_address_msg[] =
	"arena's user address must be set via map_extra or mmap()\n"
	"bpf_arena: libbpf < 1.4 neither maps an arena nor sets its address: call bpf_arena_object_prepare(obj) (libbpfarena) between bpf_object__open() and bpf_object__load()\n";

/*
 * Finds the program's arena and applies upstream's checks, in upstream's
 * order (the first arena ld_imm64 checks the loader; a second arena is
 * EBUSY).  0 with pl->arena NULL: not an arena program.
 */
int find_arena(struct prog_load *pl)
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
				prog_log(&pl->attr, no_user_address_msg);
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

enum bpfa_ld_kind lower_classify_ldimm64(void *ctx, const struct bpf_insn *insn)
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

enum bpfa_kf_kind lower_classify_kfunc(void *ctx, const struct bpf_insn *insn)
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
enum bpfa_kf_kind lower_classify_ksym(void *ctx, const struct bpf_insn *insn)
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
 * The key and value sizes of the map an ld_imm64 MAP_FD/MAP_IDX names: only
 * bounds of what a helper may touch on the stack (rewrite/lower_iter_state.c).
 */
bool lower_map_sizes(void *ctx, const struct bpf_insn *insn, u32 *key, u32 *value)
{
	struct bpf_map *map = ldimm64_map(ctx, insn);

	if (!map)
		return false;
	*key = map->key_size;
	*value = map->value_size;
	bpf_map_put(map);
	return true;
}

/* Every fd_array index of an arena program must be inside the kernel copy. */
int check_fd_indexes(const struct prog_load *pl)
{
	char msg[96];
	u32 i;

	for (i = 0; i + 1 < pl->len; i++) {
		const struct bpf_insn *insn = &pl->insns[i];

		if (!bpfa_is_ldimm64(insn))
			continue;
		if (bpfa_is_idx_ldimm64(insn) && pl->attr.fd_array &&
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

/*
 * 6.1 has no may_goto (can_loop/cond_break) and no open-coded iterators
 * (bpf_for/bpf_repeat); the module translates both (docs/LOOPS.md) in any
 * program, arena or not: a program that probes the iterators with
 * bpf_ksym_exists() finds the module's and must then work.  The translation
 * needs what an arena program needs: CAP_BPF (as any kfunc call) and
 * CAP_PERFMON (the translated next() compares a stack pointer with NULL, a
 * pointer comparison 6.1 allows only with it).  Without them: EPERM, named.
 */
int loops_allowed(struct prog_load *pl)
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
 * The fast path: can the program at all be one find_arena() acts
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

bool may_use_arena(const union bpf_attr *attr)
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

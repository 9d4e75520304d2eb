// SPDX-License-Identifier: GPL-2.0
/*
 * The arena map pointer as the stock 6.1 verifier sees it: the "view".
 *
 * Upstream programs use `&arena` as a map pointer: they pass it to the
 * kfuncs and read struct bpf_map fields through it (verifier_arena.c's
 * basic_alloc3 reads ar->map.max_entries).  The lowering turns an arena
 * ld_imm64 MAP_FD into an ld_imm64 MAP_FD of a view created for this load,
 * so the verifier types the register CONST_PTR_TO_MAP and checks every use
 * itself.  Before the JIT (view_to_arena(), from prog_hooks.c) the view's
 * address in the verified program is replaced by the arena's, so at run time the program holds the
 * arena's own struct bpf_map, as on 6.12, and reads its real fields.
 *
 * Why that is sound, field by field of what the verifier knows of the view:
 *  - map_btf_id is vmlinux's struct bpf_map: check_ptr_to_map_access()
 *    lets the program read only inside a struct bpf_map, typed as one; the
 *    arena begins with a real struct bpf_map (arena.h), so every read the
 *    verifier allowed reads that struct, with the types it has.  (6.12 types
 *    it struct bpf_arena; 6.1 looks map_btf_id up in vmlinux's BTF only, and
 *    the module's struct bpf_arena is in the module's BTF.)
 *  - map_type is ARRAY only for 6.1's sleepable-program allowlist
 *    (check_map_prog_compatibility()); an ARRAY-typed map that is not a
 *    bpf_array is safe because nothing the verifier or the helpers do with
 *    ARRAY looks inside it: there are no values (value_size 0, the
 *    arena's map_direct_value_addr, which refuses, no map_gen_lookup, no
 *    timer/spin lock/kptr), and
 *    ARRAY-only helpers do not exist (the type checks that cast to a
 *    subclass are PERCPU_ARRAY, PROG_ARRAY, PERF_EVENT_ARRAY, ringbuf,
 *    storage, sockmap...: not ARRAY).
 *  - the ops are the arena's stubs (the helpers the verifier patches into
 *    direct calls of the view's ops receive the arena at run time and do
 *    what they do for the arena), plus map_btf_id and map_free.
 * The view is never in the task's own fd table (created inside the fd
 * snapshot, read-only), has no id, and holds a module reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/filter.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "arena.h"
#include "ksyms.h"
#include "prog_ctx.h"

static DEFINE_MUTEX(view_mutex);
static struct bpf_map_ops view_ops;
static int view_btf_id;		/* vmlinux's struct bpf_map */
static bool view_ready;

static void view_free(struct bpf_map *map)
{
	kfree(map);
	/* As arena_map_free(): the module's exit flushes this workqueue. */
	module_put(THIS_MODULE);
}

/* vmlinux's BTF id of struct bpf_map and the ops, once. */
static int view_init(void)
{
	struct btf *(*get_vmlinux)(void);
	s32 (*find)(const struct btf *btf, const char *name, u8 kind);
	struct btf *btf;
	s32 id;
	int err = 0;

	mutex_lock(&view_mutex);
	if (view_ready)
		goto out;
	get_vmlinux = (void *)ksyms_lookup("bpf_get_btf_vmlinux");
	find = (void *)ksyms_lookup("btf_find_by_name_kind");
	err = -EOPNOTSUPP;
	if (!get_vmlinux || !find)
		goto out;
	btf = get_vmlinux();
	if (IS_ERR_OR_NULL(btf))
		goto out;
	id = find(btf, "bpf_map", BTF_KIND_STRUCT);
	if (id <= 0)
		goto out;
	view_btf_id = id;
	view_ops = arena_map_ops;
	view_ops.map_free = view_free;
	view_ops.map_mmap = NULL;
	view_ops.map_btf_id = &view_btf_id;
	view_ready = true;
	err = 0;
out:
	mutex_unlock(&view_mutex);
	return err;
}

bool arena_is_view(const struct bpf_map *map)
{
	return map->ops == &view_ops;
}

struct bpf_map *arena_view_create(struct bpf_arena *arena)
{
	struct bpf_map *map;
	int err;

	err = view_init();
	if (err)
		return ERR_PTR(err);
	/* The view's reference, dropped by view_free(). */
	if (!try_module_get(THIS_MODULE))
		return ERR_PTR(-ENODEV);
	map = kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map) {
		module_put(THIS_MODULE);
		return ERR_PTR(-ENOMEM);
	}
	map->ops = &view_ops;
	map->map_type = BPF_MAP_TYPE_ARRAY;	/* see the top of this file */
	map->max_entries = arena->map.max_entries;
	map->numa_node = NUMA_NO_NODE;
	map->spin_lock_off = -EINVAL;
	map->timer_off = -EINVAL;
	memcpy(map->name, arena->map.name, sizeof(map->name));
	atomic64_set(&map->refcnt, 1);
	atomic64_set(&map->usercnt, 1);
	mutex_init(&map->freeze_mutex);
	spin_lock_init(&map->owner_lock);
	err = ksyms.security_bpf_map_alloc(map);
	if (err) {
		view_free(map);
		return ERR_PTR(err);
	}
	return map;
}

int arena_view_new_fd(struct bpf_map *view)
{
	int fd;

	bpf_map_inc_with_uref(view);
	fd = ksyms.bpf_map_new_fd(view, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		atomic64_dec(&view->usercnt);
		bpf_map_put(view);
	}
	return fd;
}

/* The 64-bit value of an ld_imm64 in p[0..1]. */
static u64 ldimm64_value(const struct bpf_insn *p)
{
	return (u64)(u32)p[0].imm | (u64)(u32)p[1].imm << 32;
}

/*
 * Does a constant of the program (an ld_imm64 with src_reg 0) equal the
 * view's address?  The JIT-time rewrite finds the view's loads by that
 * address (view_to_arena()), so such a constant would become
 * &arena after the verifier proved it a known scalar: arithmetic the
 * verifier never checked (a user with CAP_BPF and CAP_PERFMON can learn
 * freed view addresses and guess the next one).  A constant is the
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
 * Does the user's program name fd (the load's view or companion, in the
 * snapshot) in a map ld_imm64, directly or through fd_array?  Only the
 * lowering's own loads may: the user's could only have guessed the number
 * (an unlowered MAP_IDX of the view would stay the view in subprograms, and
 * the view stands for &arena only where the lowering put it; the companion
 * is a plain writable ARRAY map).
 */
bool names_snapshot_fd(const struct prog_load *pl, int fd)
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
		if ((bpfa_is_idx_ldimm64(insn) ? pl_fd(pl, insn->imm) : insn->imm) == fd)
			return true;
	}
	return false;
}

/* At most this many views per load; a program whose constants name them all is refused. */
#define VIEW_TRIES 16

/*
 * Test hook: the first test_view_renewals views of every load count as
 * named by a program constant, so that the renewal and its EBUSY end run
 * without guessing heap addresses (arena_conformance_test).  Root only; 0,
 * the default, changes nothing.
 */
static unsigned int test_view_renewals;
module_param(test_view_renewals, uint, 0600);
MODULE_PARM_DESC(test_view_renewals,
		 "for tests only: renew the map view of every arena load this many times first (default 0)");

/*
 * Gives the load a view no constant of the final program p[0..len) names:
 * a new one for as long as one does, whose fd the lowering's view loads
 * then name (the user's program names no view fd: names_snapshot_fd()).  A
 * view given up stays alive through its fd in the snapshot until the load
 * is over, so every new one has a new address, and none of them is left in
 * the program.  0, or -errno.
 */
int view_no_constant_names(struct prog_load *pl, struct bpf_insn *p, u32 len,
			   struct bpf_map **view, int *view_fd)
{
	unsigned int forced = READ_ONCE(test_view_renewals), tries;
	struct bpf_map *v;
	int fd;
	u32 i;

	for (tries = 0; tries < forced || constant_names_view(p, len, *view); tries++) {
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
		if (names_snapshot_fd(pl, fd)) {
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

/*
 * The load's map view becomes the arena in a verified program (from the JIT
 * and select_runtime hooks, prog_hooks.c): ld_imm64 of the view's address
 * now loads the arena's struct bpf_map, whose prefix is what the verifier
 * checked every use against.  Runs before constant blinding; idempotent.
 *
 * src_reg is still set (BPF_PSEUDO_MAP_FD, or _IDX for an fd_array entry)
 * in the func[i] copies jit_subprogs() JITs: 6.1's bpf_check() clears it
 * (convert_pseudo_ld_imm64()) only after fixup_call_args().  Matching only
 * src_reg 0 would leave the view's address in every subprogram's image, and
 * the view is freed once the load ends: a read of &arena's fields there
 * would read freed memory (arena_conformance_test
 * map_fields_read_through_arena_pointer_in_a_subprogram).  Identity is the
 * view's address, which nothing else in the program holds: no constant
 * names it (view_no_constant_names()), the user's program may not name the
 * view's fd (names_snapshot_fd()), and what the verifier resolves names other
 * live objects.  The JIT ignores src_reg of an ld_imm64.
 */
void view_to_arena(struct bpf_insn *insn, u32 len, const struct arena_load_ctx *ctx)
{
	u64 from = (unsigned long)ctx->view, to = (unsigned long)&ctx->arena->map;
	u32 i;

	if (!ctx->view)
		return;
	for (i = 0; i + 1 < len; i++) {
		if (!bpfa_is_ldimm64(&insn[i]))
			continue;
		/*
		 * Every src_reg 6.1 resolves to an object and later clears
		 * (all but BPF_PSEUDO_FUNC); never the raise's own constants
		 * (AX: user_vm_start & ~U32_MAX, which map_extra chooses).
		 */
		if (insn[i].src_reg != BPF_PSEUDO_FUNC && insn[i].dst_reg != BPF_REG_AX &&
		    ((u64)(u32)insn[i].imm | (u64)(u32)insn[i + 1].imm << 32) == from) {
			insn[i].imm = (u32)to;
			insn[i + 1].imm = (u32)(to >> 32);
		}
		i++;
	}
}

/* Drops the view from used_maps: the arena (or its slot) holds what it stood for. */
void drop_view(struct bpf_prog_aux *aux, struct bpf_map *view)
{
	u32 i;

	for (i = 0; view && i < aux->used_map_cnt; i++) {
		if (aux->used_maps[i] != view)
			continue;
		memmove(&aux->used_maps[i], &aux->used_maps[i + 1],
			(aux->used_map_cnt - i - 1) * sizeof(*aux->used_maps));
		aux->used_map_cnt--;
		bpf_map_put(view);
		return;
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The program-side hooks (docs/DESIGN.md "Programs"):
 *  - bpf_int_jit_compile(): raise the verified placeholders of a program
 *    loaded inside a load context (prog_ctx.h), in place, before the stock
 *    JIT (and so before constant blinding).  Programs with subprograms are
 *    JITed as func[i] copies, twice: the first pass raises, the extra pass
 *    finds nothing left to raise.
 *  - bpf_prog_select_runtime(): after bpf_check() and before the program
 *    gets an id or an fd, its used_maps slot of the companion becomes the
 *    arena, so the program holds its arena (and bpftool shows it); after
 *    the JIT, a program that is not JITed or whose raise failed is refused
 *    there, so it never gets an id or an fd.
 *  - search_bpf_extables(): fault fixups of raised accesses (prog_fault.c).
 * Any program outside a load context passes all three untouched; with no
 * load context at all, the first two are not even redirected.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "arena.h"
#include "prog_fault.h"
#include "hook.h"
#include "ksyms.h"
#include "prog_ctx.h"
#include "raise.h"

static DEFINE_SPINLOCK(ctx_lock);
static LIST_HEAD(ctx_list);

void arena_load_ctx_enter(struct arena_load_ctx *ctx, struct bpf_arena *arena)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->task = current;
	ctx->arena = arena;
	spin_lock(&ctx_lock);
	list_add(&ctx->node, &ctx_list);
	spin_unlock(&ctx_lock);
}

void arena_load_ctx_leave(struct arena_load_ctx *ctx)
{
	spin_lock(&ctx_lock);
	list_del(&ctx->node);
	spin_unlock(&ctx_lock);
}

struct arena_load_ctx *arena_load_ctx_current(void)
{
	struct arena_load_ctx *ctx, *found = NULL;

	if (list_empty_careful(&ctx_list))
		return NULL;
	spin_lock(&ctx_lock);
	list_for_each_entry(ctx, &ctx_list, node) {
		if (ctx->task == current) {
			found = ctx;
			break;
		}
	}
	spin_unlock(&ctx_lock);
	return found;
}

static struct bpf_prog *arena_jit_compile(struct bpf_prog *prog);
static struct bpf_prog *arena_select_runtime(struct bpf_prog *fp, int *err);

/*
 * The filter of the JIT and select_runtime hooks: with no load
 * context anywhere, no program can be one of ours, and the call goes on
 * without the redirect and the second trip through ftrace that calling the
 * original costs.  Lockless, so it may see a context another task is just
 * adding or removing: then the replacement looks properly (under ctx_lock,
 * by task).  A task always sees its own context: it added it itself before
 * its load reached these functions.
 */
static bool notrace any_load_ctx(const struct pt_regs *regs)
{
	return !list_empty_careful(&ctx_list);
}
static const struct exception_table_entry *arena_search_bpf_extables(unsigned long addr);

enum { HOOK_JIT, HOOK_SELECT_RUNTIME, HOOK_EXTABLES, NR_HOOKS };

static struct arena_hook hooks[NR_HOOKS] = {
	[HOOK_JIT] = {
		.name = "bpf_int_jit_compile",
		.replacement = arena_jit_compile,
		.filter = any_load_ctx,
	},
	[HOOK_SELECT_RUNTIME] = {
		.name = "bpf_prog_select_runtime",
		.replacement = arena_select_runtime,
		.filter = any_load_ctx,
	},
	[HOOK_EXTABLES] = {
		.name = "search_bpf_extables",
		.replacement = arena_search_bpf_extables,
	},
};

/*
 * "file:line" of insn i of prog (the program or a func[i] copy), from the
 * line_info the verifier kept in step with its own rewrites; false without.
 * The raise sees the program after those rewrites, whose numbers are
 * neither the user's nor the lowered program's: the source line is what
 * names the place in the user's terms.
 */
static bool jit_where(const struct bpf_prog *prog, u32 i, char *buf, size_t size)
{
	const struct bpf_prog_aux *aux = prog->aux;
	const struct bpf_line_info *li = NULL;
	const char *file, *base;
	u32 k, at;

	if (!aux->linfo || !aux->btf || aux->linfo_idx >= aux->nr_linfo)
		return false;
	/* A function's first line_info is at its first insn (check_btf_line()). */
	at = aux->linfo[aux->linfo_idx].insn_off + i;
	for (k = aux->linfo_idx; k < aux->nr_linfo && aux->linfo[k].insn_off <= at; k++)
		li = &aux->linfo[k];
	if (!li)
		return false;
	file = ksyms.btf_name_by_offset(aux->btf, li->file_name_off);
	if (!file || !*file)
		return false;
	base = strrchr(file, '/');
	snprintf(buf, size, "%.48s:%u", base ? base + 1 : file,
		 BPF_LINE_INFO_LINE_NUM(li->line_col));
	return true;
}

/*
 * The raise's refusal for the user's log: res->msg ("bpf_arena: insn N:
 * text") with the place said as a source line, or as an insn of the
 * program as the verifier left it when there is no line_info.
 */
static void jit_refusal(const struct bpf_prog *prog, const struct bpfa_raise_result *res,
			char *msg, size_t size)
{
	const char *text = strstr(res->msg, ": ");
	char where[64];

	text = text ? strstr(text + 2, ": ") : NULL;
	if (!text) {
		strscpy(msg, res->msg, size);
		return;
	}
	if (jit_where(prog, res->err_insn, where, sizeof(where)))
		snprintf(msg, size, "bpf_arena: at %s: %s", where, text + 2);
	else
		snprintf(msg, size, "bpf_arena: insn %u of the program as verified: %s",
			 res->err_insn, text + 2);
}

static struct bpf_prog *jit_compile(struct bpf_prog *prog)
{
	struct bpf_prog *(*orig)(struct bpf_prog *prog) = (void *)hooks[HOOK_JIT].orig;
	struct arena_load_ctx *ctx = arena_load_ctx_current();
	struct bpfa_raise_result res;
	struct bpfa_raise_env env;
	int err;

	if (!ctx || ctx->err || !ctx->arena || !prog->jit_requested ||
	    bpf_prog_was_classic(prog))
		return orig(prog);
	/* The companion the module created and holds: identity by pointer. */
	if (prog != ctx->viewed)
		view_to_arena(prog->insnsi, prog->len, ctx);
	env.companion_value = ctx->arena->prog.companion_value;
	env.kern_vm_start = ctx->arena->kern_vm_start;
	env.user_vm_start = ctx->arena->user_vm_start;
	env.refuse_st_imm = prog->blinding_requested;
	/* The same field bpf_jit_blind_constants() reads, in this same JIT call. */
	env.blinding = prog->blinding_requested;
	/* The raise's optimisations need a bitmap of jump targets; without it, none. */
	env.targets = kvcalloc(BITS_TO_LONGS(prog->len), sizeof(long), GFP_KERNEL | __GFP_NOWARN);
	err = bpfa_raise(&env, prog->insnsi, prog->len, &res);
	kvfree(env.targets);
	if (err) {
		/* Not JITed: the load fails (see prog_load.c), nothing runs. */
		ctx->err = err;
		jit_refusal(prog, &res, ctx->msg, sizeof(ctx->msg));
		return prog;
	}
	ctx->raised += res.raised;
	return orig(prog);
}

/* Puts the arena where the program holds its companion (or appends it). */
static int arena_swap_used_map(struct bpf_prog_aux *aux, struct bpf_arena *arena)
{
	struct bpf_map **maps = aux->used_maps;
	u32 i, n = aux->used_map_cnt;
	bool have_arena = false;
	int slot = -1;

	for (i = 0; i < n; i++) {
		if (maps[i] == arena->prog.companion)
			slot = i;
		else if (maps[i] == &arena->map)
			have_arena = true;
	}
	if (slot >= 0 && !have_arena) {
		bpf_map_inc(&arena->map);
		maps[slot] = &arena->map;
		bpf_map_put(arena->prog.companion);
		return 0;
	}
	if (slot >= 0) {
		memmove(&maps[slot], &maps[slot + 1], (n - slot - 1) * sizeof(*maps));
		aux->used_map_cnt--;
		bpf_map_put(arena->prog.companion);
		return 0;
	}
	if (have_arena)
		return 0;
	maps = krealloc_array(maps, n + 1, sizeof(*maps), GFP_KERNEL);
	if (!maps)
		return -ENOMEM;
	bpf_map_inc(&arena->map);
	maps[n] = &arena->map;
	aux->used_maps = maps;
	aux->used_map_cnt = n + 1;
	return 0;
}

static struct bpf_prog *select_runtime(struct bpf_prog *fp, int *err)
{
	struct bpf_prog *(*orig)(struct bpf_prog *fp, int *err) =
		(void *)hooks[HOOK_SELECT_RUNTIME].orig;
	struct arena_load_ctx *ctx = arena_load_ctx_current();
	int ret;

	if (!ctx || ctx->used_maps_done || bpf_prog_was_classic(fp))
		return orig(fp, err);
	/* The stock tag of the user's program, before any id or symbol exists. */
	if (ctx->has_tag)
		memcpy(fp->tag, ctx->tag, sizeof(fp->tag));
	/* The verifier accepted R1's type: now 6.12's trust check (prog_load.c). */
	if (ctx->untrusted) {
		ctx->err = -EINVAL;
		strscpy(ctx->msg, ctx->untrusted_msg, sizeof(ctx->msg));
		*err = -EINVAL;
		return fp;
	}
	if (!ctx->arena) {
		ctx->used_maps_done = true;
		return orig(fp, err);
	}
	view_to_arena(fp->insnsi, fp->len, ctx);
	/*
	 * Without subprograms, orig() below JITs this same fp with nothing
	 * between that writes its instructions: the JIT hook need not look for
	 * view loads again (a pass over the whole program).  Any
	 * other program the JIT sees (func[i] of jit_subprogs()) is looked at.
	 */
	ctx->viewed = fp;
	mutex_lock(&fp->aux->used_maps_mutex);
	ret = arena_swap_used_map(fp->aux, ctx->arena);
	if (!ret)
		drop_view(fp->aux, ctx->view);
	mutex_unlock(&fp->aux->used_maps_mutex);
	if (ret) {
		*err = ret;
		return fp;
	}
	ctx->used_maps_done = true;
	fp = orig(fp, err);
	/*
	 * Refuse here, before the program gets an id or an fd: once either
	 * exists another thread can reach it (GET_FD_BY_ID, dup()).  A raise
	 * that failed, or a program the JIT gave up on (with subprograms,
	 * jit_subprogs() falls back to the interpreter, where placeholders
	 * would run unraised), never becomes visible.
	 */
	if (*err)
		return fp;
	if (ctx->err) {
		*err = ctx->err;
	} else if (!fp->jited) {
		*err = -EOPNOTSUPP;
		ctx->err = -EOPNOTSUPP;
		strscpy(ctx->msg, "JIT is required to use arena\n", sizeof(ctx->msg));
	}
	return fp;
}

static const struct exception_table_entry *arena_search_bpf_extables(unsigned long addr)
{
	const struct exception_table_entry *(*orig)(unsigned long addr) =
		(void *)hooks[HOOK_EXTABLES].orig;
	const struct exception_table_entry *e;

	hook_enter();
	e = orig(addr);
	if (!e)
		e = arena_fault_fixup(addr);
	hook_exit();
	return e;
}

static struct bpf_prog *arena_jit_compile(struct bpf_prog *prog)
{
	hook_enter();
	prog = jit_compile(prog);
	hook_exit();
	return prog;
}

static struct bpf_prog *arena_select_runtime(struct bpf_prog *fp, int *err)
{
	hook_enter();
	fp = select_runtime(fp, err);
	hook_exit();
	return fp;
}

int arena_prog_hooks_init(void)
{
	arena_fault_init();
	return hooks_install(hooks, NR_HOOKS);
}

void arena_prog_hooks_exit(void)
{
	hooks_remove(hooks, NR_HOOKS);
}

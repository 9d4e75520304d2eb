/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The load context: set by the BPF_PROG_LOAD path (prog_load.c) around the
 * load of a lowered arena program, found by the JIT and select_runtime hooks
 * (prog_hooks.c) through the loading task.  Only programs loaded inside a
 * context are ever raised: any other program is left exactly as it is.
 */
#ifndef BPF_ARENA_PROG_CTX_H
#define BPF_ARENA_PROG_CTX_H

#include <linux/list.h>
#include <linux/sched.h>

struct bpf_arena;

struct arena_load_ctx {
	struct list_head node;
	struct task_struct *task;
	struct bpf_arena *arena;	/* a reference is held by the loader; NULL: kfuncs only */
	struct bpf_map *view;		/* the load's map view (map_view.c), or NULL */
	const struct bpf_prog *viewed;	/* select_runtime rewrote its view loads */
	u32 raised;			/* placeholders raised, all passes */
	bool used_maps_done;		/* the arena replaced the companion */
	int err;			/* a refused raise */
	char msg[192];			/* its reason, for the user's log */
	bool untrusted;			/* refuse after the verifier (see lower.h) */
	bool has_tag;			/* tag: of the user's program (prog_tag.c) */
	u8 tag[8];
	char untrusted_msg[192];
};

void arena_load_ctx_enter(struct arena_load_ctx *ctx, struct bpf_arena *arena);
void arena_load_ctx_leave(struct arena_load_ctx *ctx);
/* The current task's context, or NULL (the common case, lock-free). */
struct arena_load_ctx *arena_load_ctx_current(void);

/* prog_hooks.c */
int arena_prog_hooks_init(void);
void arena_prog_hooks_exit(void);

#endif /* BPF_ARENA_PROG_CTX_H */

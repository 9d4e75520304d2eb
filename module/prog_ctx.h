/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The program path's shared state (BPF_PROG_LOAD of arena programs):
 *  - struct prog_load: one load, from the bpf() hook to the stock load
 *    (prog_load.c), with the kernel copies the other prog_*.c files read;
 *  - the load context: set by prog_load.c around the stock load of a
 *    lowered arena program, found by the JIT and select_runtime hooks
 *    (prog_hooks.c) through the loading task.  Only programs loaded inside
 *    a context are ever raised: any other program is left exactly as it is.
 */
#ifndef BPF_ARENA_PROG_CTX_H
#define BPF_ARENA_PROG_CTX_H

#include <linux/bpf.h>
#include <linux/list.h>
#include <linux/sched.h>

#include "lower.h"

struct bpf_arena;

/* The verifier's limit on fd_array indexes the kernel copy covers. */
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

/* fd_array[idx] from the kernel copy, or -1 where the copy has no such entry. */
static inline int pl_fd(const struct prog_load *pl, s64 idx)
{
	if (!pl->fds || idx < 0 || idx >= pl->fd_cnt)
		return -1;
	return pl->fds[idx];
}

/* Kernel copies of the records of one load, moved to the lowered program. */
struct prog_records {
	void *func_info;
	void *line_info;
	void *core_relos;
};

/* prog_attr.c: the user's attr and buffers, copied once. */
/* Writes msg at the start of the user's verifier log, as the verifier would. */
void prog_log(const union bpf_attr *attr, const char *msg);
int copy_fd_array(struct prog_load *pl);
int prog_attr_records(struct prog_load *pl, const struct bpfa_lower_result *res,
		      union bpf_attr *kattr, struct prog_records *rec);
void prog_attr_records_free(struct prog_records *rec);

struct bpfa_loops_result;

/*
 * prog_log.c: the verifier's log of the final program (final_len insns:
 * res lowered, then lres if the loop pass ran) rewritten in the user's
 * numbers; the log stays as it is where that cannot be done.
 */
void prog_log_translate(const struct prog_load *pl, const struct bpfa_lower_result *res,
			const struct prog_records *rec, const struct bpfa_loops_result *lres,
			u32 final_len);
void copy_rec_sizes_back(union bpf_attr __user *uattr, const union bpf_attr *kattr);

/* prog_scan.c: is this program ours? */
bool may_use_arena(const union bpf_attr *attr);
int find_arena(struct prog_load *pl);
int loops_allowed(struct prog_load *pl);
int check_fd_indexes(const struct prog_load *pl);
/* The lowering's classify callbacks; ctx is the struct prog_load. */
enum bpfa_ld_kind lower_classify_ldimm64(void *ctx, const struct bpf_insn *insn);
enum bpfa_kf_kind lower_classify_kfunc(void *ctx, const struct bpf_insn *insn);
enum bpfa_kf_kind lower_classify_ksym(void *ctx, const struct bpf_insn *insn);
bool lower_map_sizes(void *ctx, const struct bpf_insn *insn, u32 *key, u32 *value);

struct arena_load_ctx {
	struct list_head node;
	struct task_struct *task;
	struct bpf_arena *arena;	/* a reference is held by the loader; NULL: kfuncs only */
	struct bpf_map *view;		/* the load's map view (prog_view.c), or NULL */
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

/* prog_view.c: &arena as a map pointer (the map view). */
bool names_snapshot_fd(const struct prog_load *pl, int fd);
int view_no_constant_names(struct prog_load *pl, struct bpf_insn *p, u32 len,
			   struct bpf_map **view, int *view_fd);
void view_to_arena(struct bpf_insn *insn, u32 len, const struct arena_load_ctx *ctx);
void drop_view(struct bpf_prog_aux *aux, struct bpf_map *view);

#endif /* BPF_ARENA_PROG_CTX_H */

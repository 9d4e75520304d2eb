/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hook engine: a table of kernel functions whose entry is redirected to a
 * module function with the same prototype, through ftrace with IPMODIFY (the
 * livepatch mechanism).  A call from inside this module reaches the original,
 * so a replacement calls the original through hook->orig.
 */
#ifndef BPF_ARENA_HOOK_H
#define BPF_ARENA_HOOK_H

#include <linux/ftrace.h>
#include <linux/ptrace.h>

struct arena_hook {
	const char *name;		/* kernel function */
	void *replacement;		/* same prototype */
	/*
	 * Optional: decides in the ftrace callback (atomic context, may not
	 * sleep or fault) whether this call is redirected; NULL = always.
	 */
	bool (*filter)(const struct pt_regs *regs);
	unsigned long orig;		/* resolved address */
	struct ftrace_ops ops;
	bool installed;
};

/*
 * Replacements run between hook_enter() and hook_exit(), so unload can wait
 * for tasks sleeping inside them (tasks-RCU alone counts a sleeping task as
 * quiescent even if it will return into module text).
 */
extern atomic_t hooks_inflight;

static inline void hook_enter(void)
{
	atomic_inc(&hooks_inflight);
}

static inline void hook_exit(void)
{
	atomic_dec(&hooks_inflight);
}

/* After removing hooks: waits until no task can be inside a replacement. */
void hooks_quiesce(void);

/* Installs all or none; on failure the message names the function. */
int hooks_install(struct arena_hook *hooks, unsigned int n);
void hooks_remove(struct arena_hook *hooks, unsigned int n);

#endif /* BPF_ARENA_HOOK_H */

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

/* Installs all or none; on failure the message names the function. */
int hooks_install(struct arena_hook *hooks, unsigned int n);
void hooks_remove(struct arena_hook *hooks, unsigned int n);

#endif /* BPF_ARENA_HOOK_H */

// SPDX-License-Identifier: GPL-2.0
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/delay.h>
#include <linux/rcupdate_wait.h>

#include "hook.h"
#include "ksyms.h"

static void notrace hook_callback(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct arena_hook *hook = container_of(ops, struct arena_hook, ops);
	struct pt_regs *regs = ftrace_get_regs(fregs);

	/* The replacement calling the original must reach the original. */
	if (!regs || within_module(parent_ip, THIS_MODULE))
		return;
	if (hook->filter && !hook->filter(regs))
		return;
	instruction_pointer_set(regs, (unsigned long)hook->replacement);
}

static void hook_remove_one(struct arena_hook *hook)
{
	if (!hook->installed)
		return;
	unregister_ftrace_function(&hook->ops);
	ftrace_set_filter_ip(&hook->ops, hook->orig, 1, 0);
	hook->installed = false;
}

static int hook_install_one(struct arena_hook *hook)
{
	int err;

	hook->orig = ksyms_lookup(hook->name);
	if (!hook->orig) {
		pr_err("cannot hook %s: symbol not found\n", hook->name);
		return -ENOENT;
	}
	hook->ops.func = hook_callback;
	/*
	 * No FTRACE_OPS_FL_RECURSION: in 6.1 that flag asks ftrace to wrap the
	 * callback in its recursion guard, which silently skips it when a
	 * trace is already nested in this context.  A skipped redirect of
	 * search_bpf_extables() would leave a faulting arena access without
	 * its fixup (an oops), so the callback must always run; it is
	 * stateless, notrace and calls nothing traceable, so it is safe to
	 * re-enter (docs/SECURITY.md, "ftrace and the fault fixup").
	 */
	hook->ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY;
	err = ftrace_set_filter_ip(&hook->ops, hook->orig, 0, 0);
	if (err) {
		pr_err("cannot hook %s: ftrace_set_filter_ip failed (%d)\n", hook->name, err);
		return err;
	}
	err = register_ftrace_function(&hook->ops);
	if (err) {
		ftrace_set_filter_ip(&hook->ops, hook->orig, 1, 0);
		if (err == -EBUSY)
			pr_err("cannot hook %s: another IPMODIFY user (a livepatch or module) owns it\n",
			       hook->name);
		else
			pr_err("cannot hook %s: register_ftrace_function failed (%d)\n",
			       hook->name, err);
		return err;
	}
	hook->installed = true;
	return 0;
}

int hooks_install(struct arena_hook *hooks, unsigned int n)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		err = hook_install_one(&hooks[i]);
		if (err) {
			hooks_remove(hooks, i);
			return err;
		}
	}
	return 0;
}

void hooks_remove(struct arena_hook *hooks, unsigned int n)
{
	while (n--)
		hook_remove_one(&hooks[n]);
}

atomic_t hooks_inflight = ATOMIC_INIT(0);

void hooks_quiesce(void)
{
	/* Tasks redirected before the removal reached hook_enter() or never will. */
	synchronize_rcu_tasks();
	while (atomic_read(&hooks_inflight))
		msleep(20);
	/* ... and left the last instructions after hook_exit(). */
	synchronize_rcu_tasks();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Payers of arena memory (arena_payer.h).  RLIMIT_MEMLOCK is charged as
 * io_uring's __io_account_mem() does: user_struct->locked_vm against the
 * limit read when the payer was made.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>

#include "arena_payer.h"

static bool memlock_exempt(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK) ||
	       ns_capable_noaudit(&init_user_ns, CAP_BPF) ||
	       ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

struct arena_payer *arena_payer_new(void)
{
	struct arena_payer *payer = kzalloc(sizeof(*payer), GFP_KERNEL_ACCOUNT);

	if (!payer)
		return NULL;
	refcount_set(&payer->ref, 1);
	if (!memlock_exempt()) {
		/*
		 * The cred keeps its user_struct alive: free_uid() is not
		 * exported by every 6.1 ABI, put_cred() is.
		 */
		payer->cred = get_current_cred();
		payer->user = payer->cred->user;
		payer->limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	}
	if (!mem_cgroup_disabled() && current->mm)
		payer->memcg = get_mem_cgroup_from_mm(current->mm);
	return payer;
}

void arena_payer_get(struct arena_payer *payer)
{
	refcount_inc(&payer->ref);
}

void arena_payer_put(struct arena_payer *payer)
{
	if (!payer || !refcount_dec_and_test(&payer->ref))
		return;
	if (payer->memcg)
		mem_cgroup_put(payer->memcg);
	if (payer->cred)
		put_cred(payer->cred);
	kfree(payer);
}

int arena_payer_charge(struct arena_payer *payer, unsigned long n, u32 map_id)
{
	struct user_struct *user = payer ? payer->user : NULL;
	unsigned long cur, new;

	if (!user)
		return 0;
	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + n;
		if (new < cur || new > payer->limit) {
			if (!test_and_set_bit(0, &payer->warned))
				pr_warn_ratelimited("uid %u: %lu more pages for arena %u would exceed RLIMIT_MEMLOCK (%lu of %lu pages in use): ENOMEM\n",
						    from_kuid_munged(&init_user_ns, user->uid),
						    n, map_id, cur, payer->limit);
			return -ENOMEM;
		}
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

void arena_payer_uncharge(struct arena_payer *payer, unsigned long n)
{
	if (payer && payer->user && n)
		atomic_long_sub(n, &payer->user->locked_vm);
}

void arena_page_attach_payer(struct page *page, struct arena_payer *payer)
{
	if (!payer || !payer->user)
		return;
	arena_payer_get(payer);
	set_page_private(page, (unsigned long)payer);
}

void arena_page_release_payer(struct page *page)
{
	struct arena_payer *payer = (struct arena_payer *)page_private(page);

	if (!payer)
		return;
	set_page_private(page, 0);
	arena_payer_uncharge(payer, 1);
	arena_payer_put(payer);
}

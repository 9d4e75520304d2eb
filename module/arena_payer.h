/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who pays for arena memory that user space causes.
 *
 * A page allocated because of a device ioctl or a user-space fault is paid
 * for by the actor, whatever created the arena: the opener of the device
 * handle that asked, or the process that made the faulting mapping.  It is
 * charged to that user's RLIMIT_MEMLOCK (unless exempt) and to that
 * process's memory cgroup, and allocated without invoking the OOM killer.
 * So are the kernel page tables such a page makes the window grow by.
 * Pages BPF programs allocate through the kfuncs have no payer: they are
 * charged to the creator's memcg, as upstream's.
 *
 * Exempt from RLIMIT_MEMLOCK: CAP_IPC_LOCK (as io_uring and mlock), and
 * CAP_BPF or CAP_SYS_ADMIN, who may load a program that allocates arena
 * pages without any limit, as upstream allows; a charge would refuse them
 * nothing and break upstream's fault semantics for their own arenas.
 */
#ifndef BPF_ARENA_ARENA_PAYER_H
#define BPF_ARENA_ARENA_PAYER_H

#include <linux/cred.h>
#include <linux/mm_types.h>
#include <linux/refcount.h>

struct mem_cgroup;

struct arena_payer {
	refcount_t ref;		/* holders: handles, VMAs, charged pages and tables */
	/* The charged user, kept alive by cred; NULL: exempt. */
	struct user_struct *user;
	const struct cred *cred;
	unsigned long limit;	/* RLIMIT_MEMLOCK in pages, read when made */
	struct mem_cgroup *memcg;	/* NULL with memcg disabled */
	unsigned long warned;	/* bit 0: the limit was reported */
};

/* The current task as a payer, or NULL (out of memory). */
struct arena_payer *arena_payer_new(void);
void arena_payer_get(struct arena_payer *payer);
void arena_payer_put(struct arena_payer *payer);
/*
 * Charges n pages to payer's RLIMIT_MEMLOCK: 0, or -ENOMEM (reported once
 * per payer, naming map_id).  A NULL payer is never charged.
 */
int arena_payer_charge(struct arena_payer *payer, unsigned long n, u32 map_id);
void arena_payer_uncharge(struct arena_payer *payer, unsigned long n);
/*
 * Charged pages know their payer (page->private, free for a page nobody
 * else owns: not in the page cache, not on the LRU): a free uncharges
 * whoever paid, whoever frees.  attach moves one page of a charge made
 * with arena_payer_charge() onto page, taking a reference; release gives
 * that page's charge back, if it has one, before the page is freed or
 * reused.
 */
void arena_page_attach_payer(struct page *page, struct arena_payer *payer);
void arena_page_release_payer(struct page *page);

#endif /* BPF_ARENA_ARENA_PAYER_H */

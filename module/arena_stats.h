/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-arena counters and creator record for the read-only inspection
 * interface (module/dev_inspect.c, BPF_ARENA_IOC_INSPECT*).  The counters are
 * bumped where the events already happen, one line each, through the
 * helpers below; they are statistics only, never used for a decision.
 *
 * The creator is kept as a struct pid reference (translated into the
 * reader's pid namespace at read time, 0 if not visible there) and a kuid
 * (translated into the reader's user namespace): never a raw number from
 * another namespace, never a pointer.
 */
#ifndef BPF_ARENA_ARENA_STATS_H
#define BPF_ARENA_ARENA_STATS_H

#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uidgid.h>

struct arena_stats {
	atomic64_t pages;		/* pages allocated now */
	atomic64_t mapped_vmas;		/* user mappings now */
	atomic64_t alloc_bpf;		/* pages, bpf_arena_alloc_pages() */
	atomic64_t alloc_ioctl;		/* pages, BPF_ARENA_IOC_ALLOC_PAGES */
	atomic64_t alloc_prefault;	/* pages, BPF_ARENA_IOC_PREFAULT */
	atomic64_t alloc_fault;		/* pages, user page faults */
	atomic64_t free_bpf;		/* pages, bpf_arena_free_pages() */
	atomic64_t free_ioctl;		/* pages, BPF_ARENA_IOC_FREE_PAGES */
	atomic64_t freed;		/* pages, every free */
	atomic64_t faults;		/* user page faults handled */
	atomic64_t faults_segv;		/* of which answered SIGSEGV */
	atomic64_t fixups;		/* faulting BPF accesses fixed up */
	struct pid *creator_pid;	/* the creating process (tgid), a reference */
	kuid_t creator_uid;		/* its euid */
	char creator_comm[TASK_COMM_LEN];
};

#define arena_stat_add(arena, field, n) \
	atomic64_add((n), &(arena)->stats.field)
#define arena_stat_sub(arena, field, n) \
	atomic64_sub((n), &(arena)->stats.field)
#define arena_stat_inc(arena, field) \
	atomic64_inc(&(arena)->stats.field)
#define arena_stat_dec(arena, field) \
	atomic64_dec(&(arena)->stats.field)
#define arena_stat_read(arena, field) \
	atomic64_read(&(arena)->stats.field)

/* At creation, in the creating task. */
static inline void arena_stats_init(struct arena_stats *st)
{
	st->creator_pid = get_pid(task_tgid(current));
	st->creator_uid = current_euid();
	get_task_comm(st->creator_comm, current);
}

/* At destruction (also on creation error paths: NULL is fine). */
static inline void arena_stats_free(struct arena_stats *st)
{
	put_pid(st->creator_pid);
	st->creator_pid = NULL;
}

/* prog_companion.c: counts one fixup of the arena whose window starts there. */
void arena_stat_fixup(u64 kern_vm_start);

#endif /* BPF_ARENA_ARENA_STATS_H */

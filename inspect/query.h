/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bpf-arena knows about one arena, and where it comes from:
 * - the stock kernel (any kernel, 6.1 with the module or 6.9+ natively):
 *   BPF_MAP_GET_NEXT_ID / BPF_MAP_GET_FD_BY_ID / BPF_OBJ_GET_INFO_BY_FD for
 *   the map, BPF_PROG_GET_NEXT_ID and program info's map_ids for the
 *   programs using it.  Needs CAP_SYS_ADMIN, as bpftool map/prog list;
 * - the module only: /dev/bpf_arena's read-only BPF_ARENA_IOC_INSPECT*
 *   (creator, origin, pages, counters, page map, dump), and the user
 *   mappings, found in /proc/PID/maps by the inode the module reports.
 */
#ifndef BPF_ARENA_INSPECT_QUERY_H
#define BPF_ARENA_INSPECT_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf_arena.h>

struct q_prog {
	uint32_t id;
	uint32_t type;
	char name[17];
};

struct q_mapping {
	int pid;
	char comm[17];
	char perms[5];
	uint64_t start, end;
};

struct q_arena {
	/* stock kernel */
	uint32_t id;
	char name[17];
	uint32_t map_flags;
	uint32_t max_entries;
	uint64_t map_extra;
	uint32_t btf_id;
	/* Every program using it: the table and the JSON list the same ones. */
	uint32_t nprogs;
	struct q_prog *progs;
	/*
	 * The user range when known: the module's, or without the module the
	 * one map_extra fixes at creation (the stock kernel's rule); 0 when
	 * the module says it is not fixed yet.  have_range false: unknown.
	 */
	bool have_range;
	uint64_t range_start, range_end;
	/* module only: valid when have_mod */
	bool have_mod;
	int mod_err;			/* -errno of BPF_ARENA_IOC_INSPECT when !have_mod */
	struct bpf_arena_inspect mod;
	char creator_comm[17];		/* mod.creator_comm, terminated and made printable */
	uint32_t nmappings;
	struct q_mapping *mappings;
};

/*
 * The inspection device, opened read-only once; -errno when absent
 * (q_dev_reason() says why in words).
 */
int q_dev(void);
const char *q_dev_reason(void);

/* Every arena map id on the system, sorted; -errno (EPERM: not CAP_SYS_ADMIN). */
int q_arena_ids(uint32_t **ids, size_t *n);
/*
 * Fills a for map id; -ENOENT if no such map, -EINVAL if it is not an
 * arena, other -errno from the kernel.  progs: also walk the programs.
 */
int q_arena(uint32_t id, struct q_arena *a, bool progs);
/* Frees what q_arena() allocated in a (not a itself). */
void q_arena_release(struct q_arena *a);

/*
 * Makes s printable in place, for the table and the JSON alike: control
 * characters and bytes that are not UTF-8 become '?'.
 */
void q_printable(char *s);

/* Page states (BPF_ARENA_PAGE_*) of pages [first, first + cnt); *total = range pages. */
int q_pages(uint32_t id, uint64_t first, uint8_t *states, uint32_t *cnt, uint64_t *total);
/* Bytes of the arena; *present: bit per page spanned (at most 64). */
int q_dump(uint32_t id, uint64_t addr, void *buf, uint32_t len, uint64_t *present);

/* Path of a cgroup v2 directory by cgroup id (its inode number), or NULL. */
const char *q_cgroup_path(uint64_t id);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * htab.bpf.c: a hash table in the arena, built by a sleepable SEC("syscall")
 * program: buckets are lists of elements that bpf_alloc() (bpf_arena.h's
 * page-frag allocator over bpf_arena_alloc_pages()) carves out of arena
 * pages.  User space walks the same table through the mmapped arena.
 *
 * The casts are written out (cast_kern() before dereferencing, cast_user()
 * before storing a pointer user space reads), so the same source builds with
 * clang-19 (native casts: the macros are no-ops) and Debian 12's clang-14
 * (the macros emit the cast instructions).  No __arena_global variables: the
 * table's address lives in .bss, so bookworm's libbpf 1.1 loads it too.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#define BPF_ARENA_EXPLICIT_CASTS	/* this file casts by itself: clang-14 builds it */
#include "bpf_arena.h"
#include "htab.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 256);	/* pages: 1 MiB */
} arena SEC(".maps");

/* The table, as a user address; NULL until the first update. */
struct htab __arena *table;

/* Insert key or update its value.  Sleepable: bpf_alloc() may allocate a page. */
SEC("syscall")
int htab_update(struct htab_args *a)
{
	struct htab __arena *t = table;
	struct htab_elem __arena *e;
	arena_list_head_t *bucket;

	if (!t) {
		/* The first call: a page, zeroed by the kernel, holds the buckets. */
		t = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
		if (!t)
			return HTAB_NOMEM;
		table = t;	/* as returned: the user address */
	}
	a->table = (__u64)t;
	cast_kern(t);
	bucket = &t->buckets[htab_bucket(a->key)];
	/* Bounded walk (BPF_ARENA_LIST_WALK_MAX nodes): chains here are short. */
	list_for_each_entry(e, bucket, node) {
		if (e->key == a->key) {
			e->value = a->value;
			return HTAB_OK;
		}
	}
	e = bpf_alloc(sizeof(*e));
	if (!e)
		return HTAB_NOMEM;
	cast_kern(e);
	e->key = a->key;
	e->value = a->value;
	list_add_head(&e->node, bucket);	/* stores user addresses in the list */
	t->count++;
	return HTAB_OK;
}

/* Look key up: reads what user space may have written in the meantime. */
SEC("syscall")
int htab_lookup(struct htab_args *a)
{
	struct htab __arena *t = table;
	struct htab_elem __arena *e;

	bpf_arena_use(&arena);	/* no kfunc call here: tie the program to the arena */
	if (!t)
		return HTAB_NOENT;
	cast_kern(t);
	list_for_each_entry(e, &t->buckets[htab_bucket(a->key)], node) {
		if (e->key == a->key) {
			a->value = e->value;
			return HTAB_OK;
		}
	}
	return HTAB_NOENT;
}

char _license[] SEC("license") = "GPL";

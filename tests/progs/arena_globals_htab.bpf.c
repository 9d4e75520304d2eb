// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream's progs/arena_htab.c in its upstream form as far as 6.1 allows,
 * loaded by libbpf >= 1.4 alone: the page-frag allocator keeps its per-CPU
 * state in arena globals (arena_globals_alloc.h), `char __arena arr1[100000]`
 * is an arena global the program fills (arr1[i] = i), htab_for_user is in
 * .bss.  User space touches page 0 first (upstream: "fault-in a page with
 * pgoff == 0 as sanity check"), then walks the table.
 *
 * Differs from upstream as arena_prog_htab.bpf.c does (static
 * subprograms instead of __weak global functions with __arg_arena; bpf_loop
 * instead of can_loop; AGH_KEYS keys updated AGH_ROUNDS + 1 times instead of
 * 100000 inserts).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define BPF_ARENA_LIST_WALK_MAX 16
#include "bpf_arena.h"
#include "arena_prog_common.h"
#include "arena_globals_common.h"
#include "arena_globals_alloc.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, AGH_PAGES);
} arena SEC(".maps");

void __arena *htab_for_user;	/* .bss, user form */
char __arena_global arr1[AGH_ARR_SZ];

static __always_inline htab_bucket_t *__select_bucket(struct htab __arena *htab, __u32 hash)
{
	htab_bucket_t *b = htab->buckets;

	cast_kern(b);
	return &b[hash & (htab->n_buckets - 1)];
}

static __always_inline arena_list_head_t *select_bucket(struct htab __arena *htab, __u32 hash)
{
	return &__select_bucket(htab, hash)->head;
}

static __always_inline hashtab_elem_t *lookup_elem_raw(arena_list_head_t *head, __u32 hash,
						       int key)
{
	hashtab_elem_t *l;

	list_for_each_entry(l, head, hash_node)
		if (l->hash == (int)hash && l->key == key)
			return l;
	return NULL;
}

static __noinline int htab_lookup_elem(struct htab __arena *htab, int key)
{
	hashtab_elem_t *l_old;
	arena_list_head_t *head;

	cast_kern(htab);
	head = select_bucket(htab, key);
	l_old = lookup_elem_raw(head, key, key);
	if (l_old)
		return l_old->value;
	return 0;
}

static __noinline int htab_update_elem(struct htab __arena *htab, int key, int value)
{
	hashtab_elem_t *l_new = NULL, *l_old;
	arena_list_head_t *head;

	cast_kern(htab);
	head = select_bucket(htab, key);
	l_old = lookup_elem_raw(head, key, key);

	l_new = ag_alloc(&arena, sizeof(*l_new));
	if (!l_new)
		return -1;
	l_new->key = key;
	l_new->hash = key;
	l_new->value = value;

	list_add_head(&l_new->hash_node, head);
	if (l_old) {
		list_del(&l_old->hash_node);
		ag_free(&arena, l_old);
	}
	return 0;
}

struct upd_ctx {
	struct htab __arena *htab;	/* user form */
	__u64 err;
};

static int update_cb(__u32 i, void *data)
{
	struct upd_ctx *c = data;

	if (htab_update_elem(c->htab, i % AGH_KEYS, i)) {
		c->err = AG_ERR_ALLOC;
		return 1;
	}
	return 0;
}

static int arr_cb(__u32 i, void *data)
{
	char __arena *arr = arr1;

	cast_kern(arr);
	arr[i] = (char)i;
	return 0;
}

SEC("syscall")
int arena_htab_llvm(struct ag_args *args)
{
	struct htab __arena *htab = ag_alloc(&arena, sizeof(*htab));
	void __arena *buckets;
	struct upd_ctx c = {};

	if (!htab) {
		args->err = AG_ERR_ALLOC;
		return 0;
	}
	buckets = bpf_arena_alloc_pages(&arena, NULL, 2, NUMA_NO_NODE, 0);
	if (!buckets) {
		args->err = AG_ERR_ALLOC;
		return 0;
	}
	cast_user(buckets);
	htab->buckets = buckets;
	htab->n_buckets = 2 * PAGE_SIZE / sizeof(struct htab_bucket);
	cast_user(htab);
	htab_for_user = htab;
	bpf_loop(AGH_ARR_SZ, arr_cb, NULL, 0);
	c.htab = htab;
	bpf_loop(AGH_KEYS * (AGH_ROUNDS + 1), update_cb, &c, 0);
	if (!c.err && htab_lookup_elem(htab, 7) != AGH_KEYS * AGH_ROUNDS + 7)
		c.err = AG_ERR_WALK;
	args->addr = (__u64)htab;
	args->err = c.err;
	return 0;
}

char _license[] SEC("license") = "GPL";

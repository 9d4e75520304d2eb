// SPDX-License-Identifier: GPL-2.0
/*
 * Port of upstream's progs/arena_htab.c + bpf_arena_htab.h: a hash table of
 * arena lists, built by the program with the page-frag allocator; user space
 * looks keys up by walking the buckets and lists through pointers the
 * program wrote.
 *
 * Differs from upstream: htab_update_elem()/htab_lookup_elem() are static
 * subprograms (upstream: __weak global functions with arena arguments, which
 * need 6.9's argument tags); the update loop is a bpf_loop() callback (no
 * can_loop); HTAB_KEYS keys updated HTAB_ROUNDS + 1 times each (every update
 * allocates a new element and frees the old one), instead of 100000 inserts;
 * the htab struct itself comes from bpf_alloc() (no arena globals).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* Buckets hold one or two elements here: keep the unrolled walk short. */
#define BPF_ARENA_LIST_WALK_MAX 16
#include "bpf_arena.h"
#include "arena_prog_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 200);	/* pages */
} arena SEC(".maps");

struct htab __arena *htab_for_user;	/* user form */

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

static __always_inline int htab_hash(int key)
{
	return key;
}

/* htab: kernel form (cast_kern()ed) in the asm build. */
static __noinline int htab_lookup_elem(struct htab __arena *htab, int key)
{
	hashtab_elem_t *l_old;
	arena_list_head_t *head;

	cast_kern(htab);
	head = select_bucket(htab, key);
	l_old = lookup_elem_raw(head, htab_hash(key), key);
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
	l_old = lookup_elem_raw(head, htab_hash(key), key);

	l_new = bpf_alloc(sizeof(*l_new));
	if (!l_new)
		return -1;
	l_new->key = key;
	l_new->hash = htab_hash(key);
	l_new->value = value;

	list_add_head(&l_new->hash_node, head);
	if (l_old) {
		list_del(&l_old->hash_node);
		bpf_free(l_old);
	}
	return 0;
}

static __always_inline int htab_init(struct htab __arena *htab)
{
	void __arena *buckets = bpf_arena_alloc_pages(&arena, NULL, 2, NUMA_NO_NODE, 0);

	if (!buckets)
		return -1;
	cast_user(buckets);
	htab->buckets = buckets;
	htab->n_buckets = 2 * PAGE_SIZE / sizeof(struct htab_bucket);
	return 0;
}

struct upd_ctx {
	struct htab __arena *htab;	/* user form */
	__u64 err;
};

static int update_cb(__u32 i, void *data)
{
	struct upd_ctx *c = data;

	if (htab_update_elem(c->htab, i % HTAB_KEYS, i)) {
		c->err = ERR_ALLOC;
		return 1;
	}
	return 0;
}

SEC("syscall")
int arena_htab(struct htab_args *args)
{
	struct htab __arena *htab = bpf_alloc(sizeof(*htab));
	struct upd_ctx c = {};

	if (!htab) {
		args->err = ERR_ALLOC;
		return 0;
	}
	if (htab_init(htab)) {
		args->err = ERR_ALLOC;
		return 0;
	}
	cast_user(htab);
	htab_for_user = htab;
	c.htab = htab;
	bpf_loop(HTAB_KEYS * (HTAB_ROUNDS + 1), update_cb, &c, 0);
	/* the program's own lookups agree with the last round */
	if (!c.err && htab_lookup_elem(htab, 7) != HTAB_KEYS * HTAB_ROUNDS + 7)
		c.err = ERR_WALK;
	args->htab = (__u64)htab;
	args->err = c.err;
	return 0;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark programs (bench/arena_bench.c): the list and hash table of
 * tests/progs/arena_prog_list.bpf.c and arena_prog_htab.bpf.c (upstream's arena_list and
 * arena_htab), reshaped so one run does a whole timed step and the arena
 * reaches a steady state across repetitions; and page alloc/free loops.
 * Every program is SEC("syscall"), run with BPF_PROG_TEST_RUN on a struct
 * bench_args context.  Same source on 6.1 + module and on 6.12.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define BPF_ARENA_LIST_WALK_MAX 16
#include "bpf_arena.h"
#include "arena_prog_common.h"
#include "bench_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BENCH_ARENA_PAGES);
} arena SEC(".maps");

/* ---- list: add cnt elements, then delete them all (arena_list) ---------- */

struct arena_list_head __arena *list_head;	/* user form */

static int add_cb(__u32 i, void *data)
{
	struct bench_args *a = data;
	struct list_elem __arena *n = bpf_alloc(sizeof(*n));
	arena_list_head_t *h = list_head;

	if (!n || !h) {
		a->err = n ? ERR_STATE : ERR_ALLOC;
		return 1;
	}
	n->value = i;
	cast_kern(h);
	list_add_head(&n->node, h);
	return 0;
}

SEC("syscall")
int list_add(struct bench_args *args)
{
	struct bench_args c = {};

	if (!list_head) {
		arena_list_head_t *h = bpf_alloc(sizeof(*h));

		if (!h) {
			args->err = ERR_ALLOC;
			return 0;
		}
		h->first = NULL;
		cast_user(h);
		list_head = h;
	}
	bpf_loop(args->cnt, add_cb, &c, 0);
	args->err = c.err;
	return 0;
}

struct walk_ctx {
	__u64 cur;
	__u64 n;
};

static int del_cb(__u32 i, void *data)
{
	struct walk_ctx *c = data;
	struct list_elem __arena *n = (struct list_elem __arena *)c->cur;

	if (!n)
		return 1;
	cast_kern(n);
	c->cur = (__u64)n->node.next;
	c->n++;
	list_del(&n->node);
	bpf_free(n);
	return 0;
}

SEC("syscall")
int list_del_all(struct bench_args *args)
{
	arena_list_head_t *h = list_head;
	struct walk_ctx c = {};

	if (!h) {
		args->err = ERR_STATE;
		return 0;
	}
	cast_kern(h);
	c.cur = (__u64)h->first;
	bpf_loop(1 << 23, del_cb, &c, 0);
	args->n = c.n;
	args->err = c.cur ? ERR_WALK : 0;
	return 0;
}

/* ---- list walk: cnt times, the first 16 elements (instruction counts) ---- */

static int walk16_cb(__u32 i, void *data)
{
	struct walk_ctx *c = data;
	arena_list_head_t *h = list_head;
	arena_list_node_t *n;
	int k;

	if (!h)
		return 1;
	cast_kern(h);
	n = h->first;
	for (k = 0; k < 16 && n; k++) {
		cast_kern(n);
		c->n += ((struct list_elem __arena *)n)->value;
		n = n->next;
	}
	return 0;
}

SEC("syscall")
int list_walk16(struct bench_args *args)
{
	struct walk_ctx c = {};

	/* never taken; names the arena (addr_space_cast needs one) */
	if (args->pages)
		bpf_arena_free_pages(&arena, NULL, 0);
	bpf_loop(args->cnt, walk16_cb, &c, 0);
	args->n = c.n;
	return 0;
}

/* ---- hash table: cnt updates then cnt lookups (arena_htab) -------------- */

struct htab __arena *htab_u;	/* user form, built on the first run */

static __always_inline hashtab_elem_t *lookup_elem_raw(arena_list_head_t *head, __u32 hash,
						       int key)
{
	hashtab_elem_t *l;

	list_for_each_entry(l, head, hash_node)
		if (l->hash == (int)hash && l->key == key)
			return l;
	return NULL;
}

static __always_inline arena_list_head_t *select_bucket(struct htab __arena *htab, __u32 hash)
{
	htab_bucket_t *b = htab->buckets;

	cast_kern(b);
	return &b[hash & (htab->n_buckets - 1)].head;
}

static __noinline int htab_lookup_elem(struct htab __arena *htab, int key)
{
	hashtab_elem_t *l;

	cast_kern(htab);
	l = lookup_elem_raw(select_bucket(htab, key), key, key);
	return l ? l->value : -1;
}

static __noinline int htab_update_elem(struct htab __arena *htab, int key, int value)
{
	hashtab_elem_t *l_new, *l_old;
	arena_list_head_t *head;

	cast_kern(htab);
	head = select_bucket(htab, key);
	l_old = lookup_elem_raw(head, key, key);
	l_new = bpf_alloc(sizeof(*l_new));
	if (!l_new)
		return -1;
	l_new->key = key;
	l_new->hash = key;
	l_new->value = value;
	list_add_head(&l_new->hash_node, head);
	if (l_old) {
		list_del(&l_old->hash_node);
		bpf_free(l_old);
	}
	return 0;
}

static int upd_cb(__u32 i, void *data)
{
	struct bench_args *a = data;

	if (htab_update_elem(htab_u, i % BENCH_HTAB_KEYS, i)) {
		a->err = ERR_ALLOC;
		return 1;
	}
	return 0;
}

static int look_cb(__u32 i, void *data)
{
	struct bench_args *a = data;

	if (htab_lookup_elem(htab_u, i % BENCH_HTAB_KEYS) < 0) {
		a->err = ERR_WALK;
		return 1;
	}
	a->n++;
	return 0;
}

SEC("syscall")
int htab_upd_lookup(struct bench_args *args)
{
	struct bench_args c = {};

	if (!htab_u) {
		struct htab __arena *h = bpf_alloc(sizeof(*h));
		void __arena *buckets = bpf_arena_alloc_pages(&arena, NULL, 2, NUMA_NO_NODE, 0);

		if (!h || !buckets) {
			args->err = ERR_ALLOC;
			return 0;
		}
		cast_user(buckets);
		h->buckets = buckets;
		h->n_buckets = 2 * PAGE_SIZE / sizeof(struct htab_bucket);
		cast_user(h);
		htab_u = h;
	}
	bpf_loop(args->cnt, upd_cb, &c, 0);
	if (!c.err)
		bpf_loop(args->cnt, look_cb, &c, 0);
	args->err = c.err;
	return c.n;	/* the count: returned, not stored (clang would vary the ctx offset) */
}

/* ---- bpf_arena_alloc_pages / free_pages of args->pages, cnt times ------- */

static int alloc_cb(__u32 i, void *data)
{
	struct bench_args *a = data;
	void __arena *p = bpf_arena_alloc_pages(&arena, NULL, a->pages, NUMA_NO_NODE, 0);

	if (!p) {
		a->err = ERR_ALLOC;
		return 1;
	}
	bpf_arena_free_pages(&arena, p, a->pages);
	a->n++;
	return 0;
}

SEC("syscall")
int alloc_free(struct bench_args *args)
{
	struct bench_args c = { .pages = args->pages };

	bpf_loop(args->cnt, alloc_cb, &c, 0);
	args->err = c.err;
	return c.n;	/* the count: returned, not stored (clang would vary the ctx offset) */
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/* Loaded by arena_prog_test; arena_skel_libbpf11_test loads its skeleton too. */
/*
 * Port of upstream's progs/arena_list.c: a program adds cnt elements to a
 * list in the arena (user space then walks it with plain pointers), another
 * one deletes them all, and a third sums (and doubles) the values of a list
 * user space built in the arena.
 *
 * Differs from upstream: no arena globals (libbpf 1.1): the head is
 * allocated from the arena at run time and its address kept in .bss;
 * arena_sum and test_val are .bss/.data; loops are bpf_loop() callbacks
 * (no can_loop/cond_break); map_extra (1 << 44) is set by the loader with
 * bpf_map__set_map_extra() since libbpf 1.1 reads only 32 bits of it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"
#include "arena_prog_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 100);	/* pages */
} arena SEC(".maps");

struct arena_list_head __arena *list_head;	/* user form */
long arena_sum;
int test_val = 1;

struct add_ctx {
	__u64 err;
};

static int add_cb(__u32 i, void *data)
{
	struct add_ctx *c = data;
	struct list_elem __arena *n = bpf_alloc(sizeof(*n));
	arena_list_head_t *h = list_head;

	if (!n || !h) {
		c->err = n ? ERR_STATE : ERR_ALLOC;
		return 1;
	}
	test_val++;
	n->value = i;
	arena_sum += i;
	cast_kern(h);
	list_add_head(&n->node, h);
	return 0;
}

SEC("syscall")
int arena_list_add(struct list_args *args)
{
	struct add_ctx c = {};

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
	args->head = (__u64)list_head;
	args->err = c.err;
	return 0;
}

struct walk_ctx {
	__u64 cur;	/* user address of the current element, 0 at the end */
	__s64 sum;
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
	c->sum += n->value;
	c->n++;
	arena_sum += n->value;
	list_del(&n->node);
	bpf_free(n);
	return 0;
}

SEC("syscall")
int arena_list_del(struct list_args *args)
{
	arena_list_head_t *h = list_head;
	struct walk_ctx c = {};

	if (!h) {
		args->err = ERR_STATE;
		return 0;
	}
	cast_kern(h);
	/* elements start with their node: the node pointer is the element's */
	c.cur = (__u64)h->first;
	arena_sum = 0;
	bpf_loop(1 << 20, del_cb, &c, 0);
	args->sum = c.sum;
	args->n = c.n;
	args->err = c.cur ? ERR_WALK : 0;
	return 0;
}

struct sum_ctx {
	__u64 cur;	/* user address of the current element, 0 at the end */
	__s64 sum;
	__u64 n;
};

static int sum_cb(__u32 i, void *data)
{
	struct sum_ctx *c = data;
	struct list_elem __arena *n = (struct list_elem __arena *)c->cur;

	if (!n)
		return 1;
	cast_kern(n);
	c->cur = (__u64)n->node.next;
	c->sum += n->value;
	n->value *= 2;
	c->n++;
	return 0;
}

/* Walks a list user space built (head at args->head), sums the values and
 * doubles each. */
SEC("syscall")
int arena_list_sum(struct list_args *args)
{
	arena_list_head_t *h = (arena_list_head_t *)args->head;
	struct sum_ctx c = {};

	bpf_arena_use(&arena);	/* no kfunc call here: reference the arena */
	if (!h) {
		args->err = ERR_STATE;
		return 0;
	}
	cast_kern(h);
	c.cur = (__u64)h->first;
	bpf_loop(1 << 20, sum_cb, &c, 0);
	args->sum = c.sum;
	args->n = c.n;
	args->err = c.cur ? ERR_WALK : 0;
	return 0;
}

/* The bounded list_for_each_entry() of bpf_arena.h on the same list: counts
 * at most BPF_ARENA_LIST_WALK_MAX nodes. */
SEC("syscall")
int arena_list_count(struct list_args *args)
{
	arena_list_head_t *h = (arena_list_head_t *)args->head;
	struct list_elem __arena *n;
	__u64 cnt = 0;

	bpf_arena_use(&arena);
	if (!h) {
		args->err = ERR_STATE;
		return 0;
	}
	cast_kern(h);
	list_for_each_entry(n, h, node)
		cnt++;
	args->n = cnt;
	args->err = 0;
	return 0;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * The demo's BPF program: builds a chained hash table in the arena.
 *
 * A sleepable SEC("syscall") program, run once by user space with
 * bpf_prog_test_run_opts().  It allocates from the arena the bucket array
 * (a page, with the bpf_arena_alloc_pages() kfunc), the table header and one
 * element per key (bpf_alloc(), the page-frag allocator of bpf_arena.h),
 * links every element into its bucket's chain with user-form pointers
 * (cast_user), and publishes the table's user address in its context and in
 * the .bss global demo_htab.  User space then walks the table with plain
 * pointers: the arena is mapped at the same address there.
 *
 * Written for both kernels: static functions only, bpf_loop() instead of
 * open-coded loops or may_goto, no arena globals (libbpf 1.1).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf_arena.h"
#include "demo_htab.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16);	/* pages */
} arena SEC(".maps");

struct demo_htab __arena *demo_htab;	/* .bss, user form */

struct insert_ctx {
	struct demo_htab __arena *htab;	/* user form */
	__u64 err;
};

/* bpf_loop() callback: insert key i + 1 at the head of its bucket's chain. */
static int insert_cb(__u32 i, void *data)
{
	struct insert_ctx *c = data;
	struct demo_htab __arena *htab = c->htab;
	demo_elem_t * __arena *buckets;
	demo_elem_t *e;
	__u32 key = i + 1, b = demo_bucket_of(key);

	e = bpf_alloc(sizeof(*e));
	if (!e) {
		c->err = DEMO_ERR_ALLOC_ELEM;
		return 1;
	}
	cast_kern(htab);
	buckets = htab->buckets;
	cast_kern(buckets);
	b &= DEMO_BUCKETS - 1;

	e->key = key;
	e->bucket = b;
	e->value = (__u64)key * key;
	e->next = buckets[b];		/* already a user address (or NULL) */
	cast_user(e);
	buckets[b] = e;			/* publish the element in user form */
	htab->count++;
	htab->sum += (__u64)key * key;
	return 0;
}

SEC("syscall")
int build_htab(struct demo_args *args)
{
	struct demo_htab __arena *htab;
	demo_elem_t * __arena *buckets;
	struct insert_ctx c = {};
	__u64 keys = args->keys;

	if (keys < 1 || keys > DEMO_KEYS) {
		args->err = DEMO_ERR_ARGS;
		return 0;
	}
	htab = bpf_alloc(sizeof(*htab));
	if (!htab) {
		args->err = DEMO_ERR_ALLOC_HTAB;
		return 0;
	}
	/*
	 * The bucket array: a page of its own, from the kfunc directly.  Fresh
	 * arena pages are zeroed, so every chain starts out NULL.  (Not a loop
	 * of NULL stores: clang-19 turns that into a memset, which it lowers
	 * without the address-space casts, and the verifier refuses it.)
	 */
	buckets = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	if (!buckets) {
		args->err = DEMO_ERR_ALLOC_BUCKETS;
		return 0;
	}
	cast_kern(htab);
	htab->n_buckets = DEMO_BUCKETS;
	htab->count = 0;
	htab->sum = 0;
	cast_user(buckets);
	htab->buckets = buckets;

	cast_user(htab);
	c.htab = htab;
	bpf_loop((__u32)keys, insert_cb, &c, 0);

	demo_htab = htab;
	args->htab = (__u64)htab;
	args->err = c.err;
	return 0;
}

char _license[] SEC("license") = "GPL";

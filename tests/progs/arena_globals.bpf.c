// SPDX-License-Identifier: GPL-2.0
/* Loaded by arena_globals_test; arena_skel_test loads its skeleton too. */
/*
 * Arena globals (".addr_space.1"), loaded by libbpf >= 1.4 alone: libbpf
 * creates the arena (map_extra from the object, 64 bits), mmaps it and
 * copies the initial values of the globals to its start before any program
 * is loaded; every reference to a global is an ld_imm64 BPF_PSEUDO_MAP_VALUE
 * (arena fd, offset) the kernel (or the module) resolves to
 * user_vm_start + offset.
 *
 * Native build (clang-19): `int __arena_global x = 5;` is address_space(1),
 * LLVM casts every access itself.  Asm build (clang-14): __arena_global is
 * SEC(".addr_space.1") and the program reaches each global through a
 * cast_kern()ed pointer (AG()).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"
#include "arena_globals_common.h"
#include "arena_globals_alloc.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, AG_PAGES);
	__ulong(map_extra, AG_MAP_EXTRA);
} arena SEC(".maps");

/* A cast_kern()ed pointer to arena global v (same code for both builds). */
#define AG(v) ({ __typeof__(v) *__p = &(v); cast_kern(__p); __p; })

typedef struct arena_list_head __arena *ag_head_ptr_t;

int __arena_global init_val = AG_INIT_VAL;
__u64 __arena_global init_arr[4] = { 1, 2, 3, 4 };
__u64 __arena_global zero_arr[AG_ZERO_N];
struct arena_list_head __arena_global global_head;
ag_head_ptr_t __arena_global head_ptr;	/* &global_head once list_add ran */
long __arena_global arena_sum;
int __arena_global test_val = 1;
__u64 __arena_global counter;

struct nz_ctx {
	__u64 nz;
	__u64 last;
};

static int nz_cb(__u32 i, void *data)
{
	struct nz_ctx *c = data;
	__u64 __arena *a = AG(zero_arr[0]);

	/* no branch on c's fields: they stay imprecise, the verifier converges */
	if (a[i & (AG_ZERO_N - 1)]) {
		c->last = i;
		c->nz++;
	}
	return 0;
}

/* val: init_val; sum: init_arr[]; n: non-zero entries of zero_arr (idx: the
 * last of them); addr: &init_val (user address, as the program sees it). */
SEC("syscall")
int read_globals(struct ag_args *args)
{
	__u64 __arena *arr = AG(init_arr[0]);
	struct nz_ctx c = {};

	args->val = *AG(init_val);
	args->sum = arr[0] + arr[1] + arr[2] + arr[3];
	bpf_loop(AG_ZERO_N, nz_cb, &c, 0);
	args->n = c.nz;
	args->idx = c.last;
	args->addr = (__u64)&init_val;
	args->err = 0;
	return 0;
}

/* init_val = in; zero_arr[idx] = in + 1; init_arr[3] += in; counter += 1
 * (atomic); returns the old counter in val. */
SEC("syscall")
int write_globals(struct ag_args *args)
{
	__u64 __arena *arr = AG(zero_arr[0]);

	*AG(init_val) = (int)args->in;
	arr[args->idx & (AG_ZERO_N - 1)] = args->in + 1;
	AG(init_arr[0])[3] += args->in;
	args->val = __sync_fetch_and_add(AG(counter), 1);
	args->err = 0;
	return 0;
}

struct add_ctx {
	__u64 err;
};

static int add_cb(__u32 i, void *data)
{
	struct add_ctx *c = data;
	struct ag_elem __arena *n = ag_alloc(&arena, sizeof(*n));
	arena_list_head_t *h = *AG(head_ptr);

	if (!n || !h) {
		c->err = n ? AG_ERR_STATE : AG_ERR_ALLOC;
		return 1;
	}
	(*AG(test_val))++;
	n->value = i;
	*AG(arena_sum) += i;
	cast_kern(h);
	list_add_head(&n->node, h);
	return 0;
}

/* Adds in elements (values 0..in-1) to global_head; head_ptr = &global_head. */
SEC("syscall")
int list_add(struct ag_args *args)
{
	struct add_ctx c = {};

	*AG(head_ptr) = &global_head;	/* the user address of the global */
	bpf_loop(args->in, add_cb, &c, 0);
	args->addr = (__u64)*AG(head_ptr);
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
	struct ag_elem __arena *n = (void __arena *)c->cur;

	if (!n)
		return 1;
	cast_kern(n);
	c->cur = (__u64)n->node.next;
	c->sum += n->value;
	c->n++;
	list_del(&n->node);
	ag_free(&arena, n);
	return 0;
}

/* Walks the list from head_ptr, deletes and frees every element. */
SEC("syscall")
int list_del_all(struct ag_args *args)
{
	arena_list_head_t *h = *AG(head_ptr);
	struct walk_ctx c = {};

	if (!h) {
		args->err = AG_ERR_STATE;
		return 0;
	}
	cast_kern(h);
	c.cur = (__u64)h->first;
	bpf_loop(1 << 20, del_cb, &c, 0);
	args->sum = c.sum;
	args->n = c.n;
	args->err = c.cur ? AG_ERR_WALK : 0;
	return 0;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_for / bpf_repeat and the raw number iterator (bpf_iter_num_*), as
 * upstream code writes them, in arena programs: clang-19, libbpf 1.4.6's
 * bpf_helpers.h (bookworm-backports), struct bpf_iter_num from bpf_arena.h
 * (Debian 12's uapi headers predate it).  On 6.1 the module inlines the
 * iterator and outlines each loop (docs/LOOPS.md); on 6.12 it is native.
 * The arena global `runs` ties every program to the arena.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#define BPF_ARENA_ITER_NUM
#include "bpf_arena.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1024);
} arena SEC(".maps");

__u64 __arena runs;

/* The raw iterator: new()'s result, the values next() yields, their number. */
struct range_args {
	int start, end;
	long long ret, sum, n, first, last;
};

SEC("syscall")
int range_sum(struct range_args *a)
{
	long long sum = 0, n = 0, first = -1, last = -1;
	struct bpf_iter_num it;
	int *v;

	a->ret = bpf_iter_num_new(&it, a->start, a->end);
	while ((v = bpf_iter_num_next(&it))) {
		if (!n)
			first = *v;
		last = *v;
		sum += *v;
		n++;
	}
	bpf_iter_num_destroy(&it);
	a->sum = sum;
	a->n = n;
	a->first = first;
	a->last = last;
	runs++;
	return 0;
}

struct node {
	struct node __arena *next;
	__u64 value;
};

/* ctx[0] = head (user address), ctx[1] = at most this many hops; ctx[2] = sum, ctx[3] = hops. */
SEC("syscall")
int list_walk(__u64 *ctx)
{
	struct node __arena *p = (struct node __arena *)ctx[0];
	int max = (int)ctx[1], i;
	__u64 sum = 0, hops = 0;

	bpf_for(i, 0, max) {
		if (!p)
			break;
		sum += p->value;
		hops++;
		p = p->next;
	}
	ctx[2] = sum;
	ctx[3] = hops;
	runs++;
	return 0;
}

/* ctx[0] outer, ctx[1] inner; ctx[2] = repeats, ctx[3] = sum of i * j. */
SEC("syscall")
int nested(__u64 *ctx)
{
	int outer = (int)ctx[0], inner = (int)ctx[1], i, j;
	__u64 reps = 0, sum = 0;

	bpf_for(i, 0, outer) {
		bpf_repeat(inner)
			reps++;
		bpf_for(j, 0, inner)
			sum += (__u64)i * j;
	}
	ctx[2] = reps;
	ctx[3] = sum;
	runs++;
	return 0;
}

/*
 * bpf_printk inside loop bodies, as upstream's iters.c writes them: the
 * helper's unchecked 3rd-5th arguments are not values the loop carries.
 * Returns the bodies run (a while loop on the raw iterator, then bpf_for).
 */
SEC("syscall")
int printk_in_loops(void *ctx)
{
	struct bpf_iter_num it;
	int *v, i, n = 0;

	bpf_iter_num_new(&it, 0, 3);
	while ((v = bpf_iter_num_next(&it))) {
		bpf_printk("bpf_for test: while loop v=%d", *v);
		n++;
	}
	bpf_iter_num_destroy(&it);
	bpf_for(i, 0, 3) {
		bpf_printk("bpf_for test: bpf_for");
		n++;
	}
	runs++;
	return n;
}

/*
 * A new user's first loop: results written into the argument struct from a
 * bpf_for body (the context crosses the loop head).
 */
struct push_args {
	__u64 pushed, sum;
};

__u64 __arena pushed_vals[64];

SEC("syscall")
int push_into_args(struct push_args *a)
{
	int i;

	bpf_for(i, 0, 64) {
		pushed_vals[i] = i;
		a->pushed++;
		a->sum += pushed_vals[i];
	}
	return 0;
}

/*
 * The same with more live values than callee-saved registers across the
 * body's call: clang keeps the context in a stack slot the loop reads.
 */
struct spill_args {
	__u64 pushed, s1, s2, s3, s4;
};

SEC("syscall")
int push_with_spilled_ctx(struct spill_args *a)
{
	__u64 s1 = 0, s2 = 0, s3 = 0, s4 = 0;
	int i;

	bpf_for(i, 0, 16) {
		bpf_get_prandom_u32();
		s1 += i;
		s2 ^= i * 7;
		s3 += i * 3;
		s4 |= 1ull << i;
		a->pushed++;
	}
	a->s1 = s1;
	a->s2 = s2;
	a->s3 = s3;
	a->s4 = s4;
	return 0;
}

/* A context the verifier types (struct __sk_buff) read in every iteration. */
SEC("tc")
int skb_len_in_loop(struct __sk_buff *skb)
{
	__u32 n = 0;
	int i;

	bpf_for(i, 0, 10)
		n += skb->len;
	return n;
}

char _license[] SEC("license") = "GPL";

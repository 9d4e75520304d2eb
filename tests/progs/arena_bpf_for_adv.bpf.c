// SPDX-License-Identifier: GPL-2.0
/*
 * review-iter: adversarial / edge bpf_for shapes, each loaded alone by
 * tests/arena_bpf_for_adv_test.c.  Each must either be refused with a
 * message or run with upstream's result, within bounded time, without a
 * kernel warning.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#define BPF_ARENA_ITER_NUM
#include "bpf_arena.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16);
} arena SEC(".maps");

__u64 __arena runs;

/* 5 nested bpf_for: one more level than the pass outlines (BPFA_LOOPS_MAX_DEPTH). */
SEC("syscall")
int nest5(__u64 *ctx)
{
	int n = (int)ctx[0], a, b, c, d, e;
	__u64 s = 0;

	bpf_for(a, 0, n)
		bpf_for(b, 0, n)
			bpf_for(c, 0, n)
				bpf_for(d, 0, n)
					bpf_for(e, 0, n)
						s++;
	ctx[1] = s;
	runs++;
	return 0;
}

/* 4 nested: the deepest the pass takes. */
SEC("syscall")
int nest4(__u64 *ctx)
{
	int n = (int)ctx[0], a, b, c, d;
	__u64 s = 0;

	bpf_for(a, 0, n)
		bpf_for(b, 0, n)
			bpf_for(c, 0, n)
				bpf_for(d, 0, n)
					s += a + b + c + d;
	ctx[1] = s;
	runs++;
	return 0;
}

struct cb_ctx {
	__u64 sum;
	int n;
};

static int cb(__u32 idx, struct cb_ctx *c)
{
	int i;

	bpf_for(i, 0, c->n)
		c->sum += i + idx;
	return 0;
}

/* An iterator loop inside a bpf_loop() callback. */
SEC("syscall")
int in_callback(__u64 *ctx)
{
	struct cb_ctx c = { .sum = 0, .n = (int)ctx[0] };

	bpf_loop((__u32)ctx[1], cb, &c, 0);
	ctx[2] = c.sum;
	runs++;
	return 0;
}

static __noinline __u64 sub(int n)
{
	__u64 s = 0;
	int i;

	bpf_for(i, 0, n)
		s += i;
	return s;
}

/* An iterator loop in a static subprogram. */
SEC("syscall")
int in_subprog(__u64 *ctx)
{
	ctx[1] = sub((int)ctx[0]);
	runs++;
	return 0;
}

/* Two iterators, the outer advanced inside the inner loop (interleaved next() calls). */
SEC("syscall")
int interleaved(__u64 *ctx)
{
	struct bpf_iter_num a, b;
	__u64 s = 0;
	int *p, *q;

	bpf_iter_num_new(&a, 0, (int)ctx[0]);
	bpf_iter_num_new(&b, 0, (int)ctx[1]);
	while ((q = bpf_iter_num_next(&b))) {
		p = bpf_iter_num_next(&a);
		if (!p)
			break;
		s += *p * 1000 + *q;
	}
	bpf_iter_num_destroy(&b);
	bpf_iter_num_destroy(&a);
	ctx[2] = s;
	runs++;
	return 0;
}

/* bpf_repeat with the iterator's value pointer used after the loop exits non-NULL. */
SEC("syscall")
int find_first(__u64 *ctx)
{
	struct bpf_iter_num it;
	int *v, r = -1, lim = (int)ctx[1];

	bpf_iter_num_new(&it, 0, (int)ctx[0]);
	while ((v = bpf_iter_num_next(&it))) {
		if (*v * *v >= lim)
			break;
	}
	if (v)
		r = *v;
	bpf_iter_num_destroy(&it);
	ctx[2] = (__u64)(__s64)r;
	runs++;
	return 0;
}

char _license[] SEC("license") = "GPL";

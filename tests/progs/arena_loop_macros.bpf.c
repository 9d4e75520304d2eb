// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream's loop macros with whatever headers the system has: built with
 * clang-14 and bookworm's libbpf 1.1 headers (no bpf_for, no can_loop, no
 * struct bpf_iter_num) and with clang-19 and libbpf 1.4.6's; neither build
 * defines anything to ask for them.  bpf_arena.h supplies what is missing.
 * One syscall program runs each macro over the range the context gives.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#ifndef __BPF_FEATURE_ADDR_SPACE_CAST
#define BPF_ARENA_EXPLICIT_CASTS
#endif
#include "bpf_arena.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 4);
} arena SEC(".maps");

struct loop_macro_args {
	int start, end;
	long long for_sum, repeat_n, can_loop_n, cond_break_n, raw_sum;
};

SEC("syscall")
int loop_macros(struct loop_macro_args *a)
{
	int start = a->start, end = a->end;
	long long sum = 0, n = 0;
	struct bpf_iter_num it;
	int i, *v;

	bpf_arena_use(&arena);

	bpf_for(i, start, end)
		sum += i;
	a->for_sum = sum;

	n = 0;
	bpf_repeat(end - start)
		n++;
	a->repeat_n = n;

	n = 0;
	i = start;
	while (i < end && can_loop) {
		n++;
		i++;
	}
	a->can_loop_n = n;

	n = 0;
	for (i = start; i < end; i++) {
		cond_break;
		n++;
	}
	a->cond_break_n = n;

	sum = 0;
	bpf_iter_num_new(&it, start, end);
	while ((v = bpf_iter_num_next(&it)))
		sum += *v;
	bpf_iter_num_destroy(&it);
	a->raw_sum = sum;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * A can_loop list walk over arena memory as upstream code writes it
 * (clang-19 native arena pointers, upstream's can_loop from
 * bpf_experimental.h), loaded by libbpf >= 1.4 with its BTF, func_info and
 * line_info.  ctx[0] = head (user address); ctx[1] = sum, ctx[2] = count;
 * the arena global `walks` counts runs.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

/* Debian 12's uapi headers predate arena (6.9). */
#define BPF_MAP_TYPE_ARENA 33

#ifndef __BPF_FEATURE_MAY_GOTO
#error "clang with may_goto (clang-19) is needed"
#endif
/* As tools/testing/selftests/bpf/bpf_experimental.h (v6.12) defines it. */
#define can_loop					\
	({ __label__ l_break, l_continue;		\
	bool ret = true;				\
	asm volatile goto("may_goto %l[l_break]"	\
		      :::: l_break);			\
	goto l_continue;				\
	l_break: ret = false;				\
	l_continue:;					\
	ret;						\
	})

#define __arena __attribute__((address_space(1)))

struct node {
	struct node __arena *next;
	__u64 value;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1024);
} arena SEC(".maps");

/* An arena global: what ties the program to its arena (as upstream's do). */
__u64 __arena walks;

SEC("syscall")
int walk(__u64 *ctx)
{
	struct node __arena *n = (struct node __arena *)ctx[0];
	__u64 sum = 0, cnt = 0;

	while (n && can_loop) {
		sum += n->value;
		cnt++;
		n = n->next;
	}
	ctx[1] = sum;
	ctx[2] = cnt;
	walks++;
	return 0;
}

char _license[] SEC("license") = "GPL";

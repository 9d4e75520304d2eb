// SPDX-License-Identifier: GPL-2.0
/*
 * Written for clang >= 19, as upstream's arena selftests are: no cast_kern()
 * or cast_user(), an arena global used directly, pointers loaded from the
 * arena and followed.  tests/unit/bpf_header_test.sh builds it: clang-19
 * must compile it; clang-14 must stop at bpf_arena.h's #error instead of
 * producing an object the verifier refuses at load.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 4);
} arena SEC(".maps");

struct elem {
	struct elem __arena *next;
	long value;
};

struct elem __arena *__arena_global head;
long __arena_global sum;

SEC("syscall")
int walk(void *ctx)
{
	struct elem __arena *e = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);

	if (!e)
		return 1;
	e->value = 7;
	e->next = head;		/* implicit cast_user() */
	head = e;		/* arena global, no cast */
	for (e = head; e; e = e->next)	/* implicit cast_kern() of loaded pointers */
		sum += e->value;
	return 0;
}

char _license[] SEC("license") = "GPL";

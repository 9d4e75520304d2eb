#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16);			/* pages */
} arena SEC(".maps");

struct args { __u64 list; };			/* out: a user address */

SEC("syscall")
int build(struct args *args)
{
	__u64 __arena *p = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);

	if (!p)
		return 1;
	p[0] = 42;				/* a zeroed page, now ours */
	p[1] = (__u64)&p[0];			/* a pointer, stored in user form */
	args->list = (__u64)p;
	return 0;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * Iterator programs loaded one at a time.  no_arena: uses no arena; both
 * kernels run it (6.1 + module: translated as in arena programs).  reset_iter: writes
 * its iterator's state, which both refuse (6.1's verifier cannot tell: the
 * module's lowering checks the iterator rules as upstream's verifier does).
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

/* ctx[0] = n; ctx[1] = 0 + 1 + ... + (n - 1). */
SEC("syscall")
int no_arena(__u64 *ctx)
{
	int i, n = (int)ctx[0];	/* read before: main's ctx cannot be used inside a loop on 6.1 */
	__u64 sum = 0;

	bpf_for(i, 0, n)
		sum += i;
	ctx[1] = sum;
	return 0;
}

/* ctx[0] = bodies run. */
SEC("syscall")
int reset_iter(__u64 *ctx)
{
	struct bpf_iter_num it;
	__u64 n = 0;

	bpf_iter_num_new(&it, 0, 10);
	while (bpf_iter_num_next(&it)) {
		n++;
		*(volatile int *)&it = 0;	/* cur = 0: next() never ends */
	}
	bpf_iter_num_destroy(&it);
	ctx[0] = n;
	runs++;
	return 0;
}

char _license[] SEC("license") = "GPL";

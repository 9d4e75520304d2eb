// SPDX-License-Identifier: GPL-2.0
/*
 * A program both kernels refuse inside a bpf_for loop body, for
 * tests/arena_log_xlate_test.c: the verifier's log must name the user's
 * instructions and source lines, on 6.1 + module (translated) as on 6.12.
 * The arena global before the loop makes the lowered program longer than
 * this one, so lowered numbers differ from the user's.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#define BPF_ARENA_ITER_NUM
#include "bpf_arena.h"
#include "arena_log_xlate.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16);
} arena SEC(".maps");

__u64 __arena runs;

/* ctx[0] = n; the loop reads v[i] for i < n, which nothing bounds: refused. */
SEC("syscall")
int in_loop(__u64 *ctx)
{
	__u64 v[4] = { 1, 2, 3, 4 }, sum = 0;
	int i, n = (int)ctx[0];

	runs++;
	runs += n;
	bpf_for(i, 0, n) {
		if (i & 1)
			sum += 2;
		sum += v[i];
		_Static_assert(__LINE__ == LOG_XLATE_FAIL_LINE + 1, "LOG_XLATE_FAIL_LINE");
	}
	ctx[1] = sum;
	return 0;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * A program that uses NO arena and feature-probes the
 * open-coded iterators the documented way (bpf_ksym_exists() on the __weak
 * __ksym libbpf's bpf_helpers.h declares), falling back to a bounded loop
 * where they are missing.  Portable programs (CO-RE objects meant for 6.1
 * and newer) do exactly this.  On stock 6.1 libbpf finds no
 * bpf_iter_num_new, the probe is 0 and the fallback runs; on 6.12 the
 * kernel's iterators run.  With bpf_arena.ko on 6.1 the module's BTF makes
 * the probe say "present", so the module must run the iterators (attack
 * review 3 found it refused them in programs without an arena).
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#define BPF_ARENA_ITER_NUM
#include "bpf_arena.h"

/* ctx[0] = 0 + 1 + ... + 99; ctx[1] = 1 (iterators) or 2 (fallback). */
SEC("syscall")
int probe_sum(__u64 *ctx)
{
	__u64 sum = 0;
	int i;

	if (bpf_ksym_exists(bpf_iter_num_new)) {
		bpf_for(i, 0, 100)
			sum += i;
		ctx[1] = 1;
	} else {
		for (i = 0; i < 100; i++)
			sum += i;
		ctx[1] = 2;
	}
	ctx[0] = sum;
	return 0;
}

char _license[] SEC("license") = "GPL";

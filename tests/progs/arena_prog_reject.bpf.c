// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that misuse arena pointers: each must fail to load.  The test
 * loads them one at a time and, on a kernel with native arena, checks the
 * verifier log for upstream's message.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"
#include "arena_prog_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 4);
} arena SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 4);
} arena2 SEC(".maps");

/* Two arenas in one program. */
SEC("syscall")
int two_arenas(void *ctx)
{
	void __arena *a = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	void __arena *b = bpf_arena_alloc_pages(&arena2, NULL, 1, NUMA_NO_NODE, 0);

	return a && b;
}

/* An arena access (a cast) in a program that references no arena. */
SEC("syscall")
int cast_without_arena(struct fault_args *args)
{
	volatile int __arena *p = (volatile int __arena *)args->addr;

	cast_kern(p);
	return *p;
}

/* A cast between address spaces other than 0 and 1 (imm 0x20000). */
SEC("syscall")
int bad_cast(struct fault_args *args)
{
	__u64 v = args->addr;

	bpf_arena_use(&arena);
	bpf_addr_space_cast(v, 2, 0);
	return v != 0;
}

/* The sleepable kfunc from a program that is not sleepable. */
SEC("tc")
int not_sleepable(void *ctx)
{
	return bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0) != NULL;
}

#if !BPF_ARENA_NATIVE_CASTS
/*
 * asm build only (clang >= 19 always emits the cast): dereferencing the
 * kfunc's result without cast_kern(): it is a plain number to the verifier.
 */
SEC("syscall")
int deref_without_cast(void *ctx)
{
	int *p = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);

	if (!p)
		return 1;
	*p = 1;
	return 0;
}

/* A pointer loaded from the arena needs cast_kern() again before use. */
SEC("syscall")
int deref_loaded_pointer(void *ctx)
{
	int **p = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);
	int *q;

	if (!p)
		return 1;
	cast_kern(p);
	q = *p;
	return *q;
}
#endif

char _license[] SEC("license") = "GPL";

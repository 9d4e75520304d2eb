// SPDX-License-Identifier: GPL-2.0
/*
 * Fault semantics of program accesses (upstream's, from the x86 JIT's
 * exception table): a load from an unpopulated arena page reads 0, a store
 * to one is dropped and does not populate the page; cast_user of NULL stays
 * NULL.  The arena has BPF_F_SEGV_ON_FAULT, so user space can tell a
 * populated page from an unpopulated one (a guarded read gives -EFAULT).
 * Addresses come in ctx (user addresses), results go back in ctx.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf_arena.h"
#include "arena_prog_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_SEGV_ON_FAULT);
	__uint(max_entries, 16);	/* pages; map_extra 1 << 44 set by the loader */
} arena SEC(".maps");

/* val = *addr (8 bytes), val2 = *(u32 *)addr2, val3 = *(u8 *)addr3 */
SEC("syscall")
int fault_load(struct fault_args *args)
{
	volatile __u64 __arena *p = (volatile __u64 __arena *)args->addr;
	volatile __u32 __arena *q = (volatile __u32 __arena *)args->addr2;
	volatile __u8 __arena *r = (volatile __u8 __arena *)args->addr3;

	bpf_arena_use(&arena);	/* programs that cast must reference their arena */
	cast_kern(p);
	cast_kern(q);
	cast_kern(r);
	args->val = *p;
	args->val2 = *q;
	args->val3 = *r;
	return 0;
}

/* *addr = 0x4242..., then val = *addr; *(u8 *)addr2 = 0x42 */
SEC("syscall")
int fault_store(struct fault_args *args)
{
	volatile __u64 __arena *p = (volatile __u64 __arena *)args->addr;
	volatile __u8 __arena *q = (volatile __u8 __arena *)args->addr2;

	bpf_arena_use(&arena);
	cast_kern(p);
	cast_kern(q);
	*p = 0x4242424242424242ULL;
	*q = 0x42;
	args->val = *p;
	return 0;
}

/* Allocates the page at addr, stores 0x1234 to addr + 8 and reads it back
 * (val); the same through a populated page works as usual. */
SEC("syscall")
int populate_store(struct fault_args *args)
{
	void __arena *page = bpf_arena_alloc_pages(&arena, (void __arena *)args->addr, 1,
						   NUMA_NO_NODE, 0);
	volatile __u64 __arena *p;

	if (!page)
		return 1;
	p = page + 8;
	cast_kern(p);
	*p = 0x1234;
	args->val = *p;
	args->val2 = (__u64)page;
	return 0;
}

/*
 * val = cast_user(addr as a kernel pointer): NULL stays NULL.
 * val2 = cast_user(cast_kern(addr2)): a user address survives the round trip.
 * val3 = cast_user(cast_kern(addr3)): upstream's x86 cast_user maps every
 * value whose low 32 bits are 0 to NULL (the arena's first byte, when the
 * arena starts at a 4 GiB boundary, as here).
 */
SEC("syscall")
int cast_null(struct fault_args *args)
{
#if BPF_ARENA_NATIVE_CASTS
	void *k = (void *)args->addr;
	void __arena *u = (void __arena *)k;			/* addr_space_cast(1, 0) */
	void __arena *u2 = (void __arena *)args->addr2;
	void *k2 = (void *)u2;					/* addr_space_cast(0, 1) */
	void __arena *u3 = (void __arena *)args->addr3;
	void *k3 = (void *)u3;

	bpf_arena_use(&arena);
	barrier_var(k2);
	barrier_var(k3);
	args->val = (__u64)u;
	args->val2 = (__u64)(void __arena *)k2;
	args->val3 = (__u64)(void __arena *)k3;
#else
	void *u = (void *)args->addr;
	void *u2 = (void *)args->addr2;
	void *u3 = (void *)args->addr3;

	bpf_arena_use(&arena);
	cast_user(u);
	cast_kern(u2);
	cast_user(u2);
	cast_kern(u3);
	cast_user(u3);
	args->val = (__u64)u;
	args->val2 = (__u64)u2;
	args->val3 = (__u64)u3;
#endif
	return 0;
}

char _license[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0
/*
 * ring.bpf.c: an XDP program that records every IPv4/UDP packet into a ring
 * in the arena, for user space to consume through its mapping of the arena.
 *
 * The ring's page comes from a sleepable SEC("syscall") program: on kernels
 * 6.9 to 6.18 the arena kfuncs may be called from sleepable programs only,
 * while any program may read and write arena memory that exists.  (The
 * bpf_arena module on 6.1, like upstream since late 2025, would also let the
 * XDP program allocate: docs/USAGE.md, "Arena kfuncs from any program".)
 *
 * Explicit casts (cast_kern() before use): builds with clang-19 and clang-14.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#define BPF_ARENA_EXPLICIT_CASTS	/* this file casts by itself: clang-14 builds it */
#include "bpf_arena.h"
#include "ring.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16);	/* pages */
} arena SEC(".maps");

/* The ring, as a user address; NULL until ring_init ran. */
struct ring __arena *ring;

SEC("syscall")
int ring_init(void *ctx)
{
	struct ring __arena *r;

	if (ring)
		return 0;
	r = bpf_arena_alloc_pages(&arena, NULL, 1, NUMA_NO_NODE, 0);	/* zeroed */
	if (!r)
		return 1;
	ring = r;
	return 0;
}

SEC("xdp")
int ring_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);	/* IPv4 options are not followed */
	struct ring __arena *r = ring;
	struct ring_rec __arena *rec;
	__u64 head;

	bpf_arena_use(&arena);	/* no kfunc call here: tie the program to the arena */
	if ((void *)(udp + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;	/* not ours: nothing recorded */
	if (!r)
		return XDP_ABORTED;	/* ring_init has not run */
	cast_kern(r);
	head = r->head;
	if (head - READ_ONCE(r->tail) >= RING_SLOTS) {
		r->dropped++;
		return XDP_DROP;
	}
	rec = &r->rec[head & (RING_SLOTS - 1)];
	rec->seq = head;
	rec->pkt_len = (__u32)(data_end - data);
	rec->saddr = ip->saddr;
	rec->sport = bpf_ntohs(udp->source);
	rec->dport = bpf_ntohs(udp->dest);
	/*
	 * Publish the record only after writing it.  The barrier keeps the
	 * compiler from reordering the stores; x86-64 keeps stores in order
	 * (the consumer pairs it with an acquire load of head).
	 */
	asm volatile("" ::: "memory");
	WRITE_ONCE(r->head, head + 1);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";

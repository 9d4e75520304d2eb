/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring.h: what ring.bpf.c and ring.c share: a single-producer,
 * single-consumer ring in one arena page.  The XDP program produces (writes
 * a record, then advances head); user space consumes (reads records up to
 * head, then advances tail).  Each index has one writer, so no atomic
 * read-modify-write is needed, only ordered stores and loads.
 */
#ifndef RING_H
#define RING_H

#include <linux/types.h>

#define RING_SLOTS 64	/* a power of 2: a slot is index & (RING_SLOTS - 1) */

/* What the XDP program records of each IPv4/UDP packet. */
struct ring_rec {
	__u64 seq;	/* the producer's count: records are numbered 0, 1, ... */
	__u32 pkt_len;
	__u32 saddr;	/* network byte order, as in the packet */
	__u16 sport;	/* host byte order */
	__u16 dport;
	__u32 pad;
};

struct ring {
	__u64 head;	/* written by the producer only: [tail, head) are ready */
	__u64 tail;	/* written by the consumer only: slots before it are free */
	__u64 dropped;	/* packets not recorded because the ring was full */
	struct ring_rec rec[RING_SLOTS];
};

_Static_assert(sizeof(struct ring) <= 4096, "the ring fits in one arena page");

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c: runs ring.bpf.c's XDP program on packets built here
 * (BPF_PROG_TEST_RUN: no network needed) and consumes the records it puts
 * into the arena ring, through the arena's mapping.  First in rounds (every
 * record checked against the packet it came from, then the ring filled up
 * until the program drops), then with a consumer thread running while the
 * packets go in.  Exits 1 on any wrong result.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_arena_libbpf.h"
#include "ring.h"
#include "ring.skel.h"

#define DPORT 4242
#define THREADED_PKTS 3000

/* Packet number n is UDP from 10.0.0.(n % 256), port n, with n % 64 bytes of payload. */
static __u32 pkt_len(unsigned int n)
{
	return ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr) + n % 64;
}

/* Runs the XDP program on packet n (UDP, or ARP when !udp); returns its verdict. */
static int send_pkt(int prog_fd, unsigned int n, bool udp)
{
	unsigned char pkt[128] = {};
	struct ethhdr *eth = (struct ethhdr *)pkt;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *uh = (struct udphdr *)(ip + 1);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = pkt_len(n));

	eth->h_proto = htons(udp ? ETH_P_IP : ETH_P_ARP);
	ip->version = 4;
	ip->ihl = 5;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = htonl(0x0a000000 | (n % 256));
	uh->source = htons((__u16)n);
	uh->dest = htons(DPORT);
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	return (int)opts.retval;
}

/* The consumer's state: the next record number, the last packet seen. */
struct consumer {
	struct ring *r;
	__u64 next_seq;
	long last_pkt;
	unsigned long consumed, bad;
};

/* Takes every ready record; returns how many. */
static unsigned int consume(struct consumer *c)
{
	/* Acquire: the record's contents are visible once head says so. */
	__u64 head = __atomic_load_n(&c->r->head, __ATOMIC_ACQUIRE), tail = c->r->tail;
	unsigned int got = 0;

	for (; tail != head; tail++, got++) {
		const struct ring_rec *rec = &c->r->rec[tail & (RING_SLOTS - 1)];
		unsigned int n = rec->sport;

		/* In order, none lost between producer and consumer; packets
		 * the producer dropped (ring full) are simply skipped. */
		if (rec->seq != c->next_seq++ || (long)n <= c->last_pkt ||
		    rec->pkt_len != pkt_len(n) || rec->saddr != htonl(0x0a000000 | (n % 256)) ||
		    rec->dport != DPORT) {
			if (c->bad++ < 5)
				fprintf(stderr, "record %llu: seq %llu packet %u len %u: wrong\n",
					(unsigned long long)tail, (unsigned long long)rec->seq, n,
					rec->pkt_len);
		}
		c->last_pkt = n;
	}
	/* Release: the slots are free only after they were read. */
	__atomic_store_n(&c->r->tail, tail, __ATOMIC_RELEASE);
	c->consumed += got;
	return got;
}

static bool producing;

static void *consumer_thread(void *arg)
{
	struct consumer *c = arg;

	while (__atomic_load_n(&producing, __ATOMIC_ACQUIRE))
		consume(c);
	consume(c);	/* what came after the last look */
	return NULL;
}

int main(void)
{
	struct consumer c = { .last_pkt = -1 };
	unsigned long sent = 0, drops = 0, wrong = 0;
	struct ring_bpf *skel;
	unsigned int n = 0, i, round;
	pthread_t th;
	int fd, v, err;
	char *base;

	/* On 6.1 the bpf_arena module must be loaded: if not, this says what to do. */
	if (bpf_arena_kernel_ready())
		return 1;
	skel = ring_bpf__open();
	if (!skel)
		return fprintf(stderr, "open: %s\n", strerror(errno)), 1;
	/* Between open and load: with libbpf 1.1 this creates and maps the arena. */
	err = bpf_arena_object_prepare(skel->obj);
	err = err ?: ring_bpf__load(skel);
	if (!err) {
		LIBBPF_OPTS(bpf_test_run_opts, opts);

		err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ring_init), &opts);
		err = err ? -errno : -(int)opts.retval;
	}
	if (err) {
		fprintf(stderr, "load or ring_init: %s\n", strerror(-err));
		goto out;
	}
	base = bpf_arena_object_base(skel->maps.arena);
	c.r = (struct ring *)skel->bss->ring;	/* the user address ring_init stored */
	if ((char *)c.r < base || (char *)(c.r + 1) > base + bpf_arena_size(
			bpf_arena_object_arena(skel->maps.arena))) {
		fprintf(stderr, "ring at %p, outside the arena at %p\n", (void *)c.r, base);
		err = 1;
		goto out;
	}
	fd = bpf_program__fd(skel->progs.ring_xdp);

	/* Rounds: 20 UDP packets (recorded) and 5 ARP ones (passed over), then consume. */
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 25; i++, n++) {
			v = send_pkt(fd, n, i % 5 != 4);
			wrong += v != XDP_PASS;
			sent += i % 5 != 4;
		}
		if (consume(&c) != 20)
			wrong++;
	}
	/* No consumer: the ring fills up, then the program drops and counts. */
	for (i = 0; i < RING_SLOTS + 5; i++, n++, sent++) {
		v = send_pkt(fd, n, true);
		wrong += v != (i < RING_SLOTS ? XDP_PASS : XDP_DROP);
	}
	drops = 5;
	if (skel->bss->ring->dropped != drops || consume(&c) != RING_SLOTS)
		wrong++;

	/* A consumer thread while the packets go in: drops allowed, counted. */
	producing = true;
	if (pthread_create(&th, NULL, consumer_thread, &c)) {
		err = 1;
		goto out;
	}
	for (i = 0; i < THREADED_PKTS; i++, n++, sent++) {
		v = send_pkt(fd, n, true);
		wrong += v != XDP_PASS && v != XDP_DROP;
		if (v == XDP_DROP)
			sched_yield();	/* full: let the consumer catch up */
	}
	__atomic_store_n(&producing, false, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	drops = skel->bss->ring->dropped;
	if (c.consumed + drops != sent)
		wrong++;

	printf("ring: %lu UDP packets through XDP, %lu records consumed in order, "
	       "%lu dropped when the ring was full: %s\n", sent, c.consumed, drops,
	       wrong || c.bad ? "WRONG" : "ok");
	if (wrong || c.bad)
		fprintf(stderr, "%lu wrong verdicts or counts, %lu wrong records\n", wrong, c.bad);
out:
	bpf_arena_object_release(skel->obj);
	ring_bpf__destroy(skel);
	return err || wrong || c.bad;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * alloc.h: what alloc.bpf.c and alloc.c share: objects of varying size that
 * the program allocates from the arena and links into a list, and the
 * programs' argument struct.  Pointers in the arena are user addresses.
 */
#ifndef ALLOC_H
#define ALLOC_H

#include <linux/types.h>
#include "bpf_arena.h"

struct obj;
typedef struct obj __arena obj_t;

struct obj {
	obj_t *next;
	__u32 id;
	__u32 nwords;		/* words[] has nwords entries */
	__u64 words[];		/* words[j] == obj_word(id, j) */
};

static inline __u32 obj_nwords(__u32 id)
{
	return 1 + id % 8;	/* objects of 24 to 80 bytes */
}

static inline __u64 obj_word(__u32 id, __u32 j)
{
	return ((__u64)id << 32) | j;
}

struct alloc_args {
	__u64 n;	/* in (alloc_objs): objects to allocate */
	__u64 first;	/* in (alloc_objs): id of the first one */
	__u64 head;	/* in/out: the list (user address) */
	__u64 count;	/* out: objects in the list afterwards */
	__u64 freed;	/* out (free_odd): objects freed */
};

enum { ALLOC_OK = 0, ALLOC_NOMEM = 1, ALLOC_TOO_LONG = 2 };

#endif

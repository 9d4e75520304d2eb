// SPDX-License-Identifier: GPL-2.0
/*
 * alloc.bpf.c: bpf_arena.h's allocator (bpf_alloc()/bpf_free(), upstream's
 * names) called from loops written as upstream writes them: bpf_for() to
 * allocate objects and, nested, to fill them, a can_loop walk to free some.
 * On 6.9+ the kernel runs these loops natively; on Debian 12's 6.1 the
 * bpf_arena module translates them (docs/LOOPS.md).  bpf_arena.h supplies
 * bpf_for, can_loop and struct bpf_iter_num where the headers lack them
 * (libbpf 1.1, the 6.1 uapi headers), so the same source builds with both
 * toolchains.
 *
 * Explicit casts (cast_kern() before use, cast_user() before a pointer is
 * stored): builds with clang-19 and clang-14.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#define BPF_ARENA_EXPLICIT_CASTS	/* this file casts by itself: clang-14 builds it */
#include "bpf_arena.h"
#include "alloc.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 256);	/* pages */
} arena SEC(".maps");

/*
 * One object of id: allocated, filled (a loop of its own), pushed on the
 * front of the list head.  Returns the new head (user form), NULL when the
 * arena is full.  A function of its own, not inlined: inlined into the loop
 * below, clang moves bpf_alloc()'s store to its .bss state on failure past
 * the loop's exit, and 6.1 with the module then refuses the program
 * ("invalid mem access 'scalar'": a .bss pointer carried out of a loop in a
 * stack slot); 6.12 does not mind either way.
 */
static __noinline obj_t *push_obj(obj_t *head, __u32 id)
{
	__u32 nw = obj_nwords(id);
	obj_t *o = bpf_alloc(sizeof(*o) + nw * sizeof(__u64));
	int j;

	if (!o)
		return NULL;
	cast_kern(o);
	o->id = id;
	o->nwords = nw;
	bpf_for(j, 0, nw)
		o->words[j] = obj_word(id, j);
	o->next = head;
	cast_user(o);
	return o;
}

/* Allocates n objects (ids first, first + 1, ...) on the front of the list. */
SEC("syscall")
int alloc_objs(struct alloc_args *a)
{
	obj_t *head = (obj_t *)a->head;	/* user form, as stored */
	int n = (int)a->n, i, ret = ALLOC_OK;
	__u32 first = (__u32)a->first;
	__u64 count = 0;

	bpf_for(i, 0, n) {
		obj_t *o = push_obj(head, first + i);

		if (!o) {
			ret = ALLOC_NOMEM;
			break;
		}
		head = o;
		count++;
	}
	a->head = (__u64)head;
	a->count = count;
	return ret;
}

/*
 * Frees the objects with an odd id and keeps the others, in reverse order.
 * The walk is a can_loop loop: it ends at the list's end, or when the
 * program's loop budget is spent (then ALLOC_TOO_LONG).
 */
SEC("syscall")
int free_odd(struct alloc_args *a)
{
	obj_t *cur = (obj_t *)a->head, *kept = NULL;
	__u64 count = 0, freed = 0;

	while (cur && can_loop) {
		obj_t *o = cur;

		cast_kern(o);
		cur = o->next;		/* user form */
		if (o->id & 1) {
			bpf_free(o);	/* the page goes back once all its objects are freed */
			freed++;
			continue;
		}
		o->next = kept;
		cast_user(o);
		kept = o;
		count++;
	}
	a->head = (__u64)kept;
	a->count = count;
	a->freed = freed;
	return cur ? ALLOC_TOO_LONG : ALLOC_OK;
}

char _license[] SEC("license") = "GPL";

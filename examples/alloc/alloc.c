// SPDX-License-Identifier: GPL-2.0
/*
 * alloc.c: has alloc.bpf.c allocate objects of varying size in bpf_for
 * loops, free every other one in a can_loop walk, and allocate again; after
 * each step it walks the list through the mmapped arena and checks every
 * object's contents, that objects lie inside the arena and that no two
 * overlap (freed memory handed out again while still in use would).  Exits 1
 * on any wrong result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_arena_libbpf.h"
#include "alloc.h"
#include "alloc.skel.h"

#define FIRST_N 600
#define SECOND_N 200

struct span {
	unsigned long start, end;
};

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int run(struct bpf_program *prog, struct alloc_args *a)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = a, .ctx_size_in = sizeof(*a));

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
		return -errno;
	return (int)opts.retval;
}

/*
 * Walks the list from head; the ids must be those of want(i) for i = 0 ..
 * count - 1.  Returns the number of wrong things seen.
 */
static int check_list(__u64 head, unsigned long count, __u32 (*want)(unsigned long),
		      const char *base, size_t size)
{
	static struct span spans[FIRST_N + SECOND_N];
	unsigned long i = 0;
	int bad = 0;

	for (const struct obj *o = (const struct obj *)head; o; o = o->next, i++) {
		unsigned long end = (unsigned long)&o->words[o->nwords];

		if (i >= count || (const char *)o < base || end > (unsigned long)base + size) {
			fprintf(stderr, "object %lu at %p: past the list's length or outside the arena\n",
				i, (const void *)o);
			return bad + 1;
		}
		if (o->id != want(i) || o->nwords != obj_nwords(o->id)) {
			fprintf(stderr, "object %lu: id %u nwords %u, want id %u\n", i, o->id,
				o->nwords, want(i));
			bad++;
			continue;
		}
		for (__u32 j = 0; j < o->nwords; j++)
			bad += o->words[j] != obj_word(o->id, j);
		spans[i] = (struct span){ (unsigned long)o, end };
	}
	if (i != count) {
		fprintf(stderr, "%lu objects in the list, want %lu\n", i, count);
		return bad + 1;
	}
	qsort(spans, count, sizeof(spans[0]), by_start);
	for (i = 1; i < count; i++)
		if (spans[i].start < spans[i - 1].end) {
			fprintf(stderr, "objects at %#lx and %#lx overlap\n", spans[i - 1].start,
				spans[i].start);
			bad++;
		}
	return bad;
}

/* The list orders, front to back: alloc_objs pushes on the front, free_odd reverses. */
static __u32 first_round(unsigned long i) { return FIRST_N - 1 - i; }
static __u32 evens(unsigned long i) { return 2 * i; }
static __u32 second_round(unsigned long i)
{
	return i < SECOND_N ? FIRST_N + SECOND_N - 1 - i : evens(i - SECOND_N);
}

int main(void)
{
	struct alloc_args a = {};
	struct alloc_bpf *skel;
	int err, bad = 0;
	char *base;
	size_t size;

	/* On 6.1 the bpf_arena module must be loaded: if not, this says what to do. */
	if (bpf_arena_kernel_ready())
		return 1;
	skel = alloc_bpf__open();
	if (!skel)
		return fprintf(stderr, "open: %s\n", strerror(errno)), 1;
	/* Between open and load: with libbpf 1.1 this creates and maps the arena. */
	err = bpf_arena_object_prepare(skel->obj);
	err = err ?: alloc_bpf__load(skel);
	if (err) {
		fprintf(stderr, "load: %s\n", strerror(-err));
		goto out;
	}
	base = bpf_arena_object_base(skel->maps.arena);
	size = bpf_arena_size(bpf_arena_object_arena(skel->maps.arena));

	a.n = FIRST_N;
	err = run(skel->progs.alloc_objs, &a);
	if (err || a.count != FIRST_N) {
		fprintf(stderr, "alloc_objs: %d, %llu objects\n", err, (unsigned long long)a.count);
		goto fail;
	}
	bad += check_list(a.head, FIRST_N, first_round, base, size);

	err = run(skel->progs.free_odd, &a);
	if (err || a.count != FIRST_N / 2 || a.freed != FIRST_N / 2) {
		fprintf(stderr, "free_odd: %d, %llu kept, %llu freed\n", err,
			(unsigned long long)a.count, (unsigned long long)a.freed);
		goto fail;
	}
	bad += check_list(a.head, FIRST_N / 2, evens, base, size);

	/* More objects on the front of the survivors: none may overlap them. */
	a.n = SECOND_N;
	a.first = FIRST_N;
	err = run(skel->progs.alloc_objs, &a);
	if (err || a.count != SECOND_N) {
		fprintf(stderr, "alloc_objs again: %d, %llu objects\n", err,
			(unsigned long long)a.count);
		goto fail;
	}
	bad += check_list(a.head, SECOND_N + FIRST_N / 2, second_round, base, size);

	printf("alloc: %d objects allocated and filled in bpf_for loops, %d freed in a "
	       "can_loop walk, %d more allocated; contents and layout checked from user "
	       "space: %s\n", FIRST_N, FIRST_N / 2, SECOND_N, bad ? "WRONG" : "ok");
	goto out;
fail:
	err = err ?: 1;
out:
	bpf_arena_object_release(skel->obj);
	alloc_bpf__destroy(skel);
	return err || bad;
}

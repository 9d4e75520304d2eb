// SPDX-License-Identifier: GPL-2.0
/*
 * htab.c: fills a hash table in the arena by running htab.bpf.c's
 * htab_update once per key, walks every bucket with plain pointers, changes
 * values in place, and has htab_lookup read them back.  Exits 1 on any wrong
 * result.  Works with libbpf 1.1 (bpf_arena_object_prepare() creates and
 * maps the arena) and libbpf >= 1.4 (which does it itself), on 6.1 with the
 * bpf_arena module and on 6.9+.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_arena_libbpf.h"
#include "htab.h"
#include "htab.skel.h"

#define NKEYS 1000

static int run(struct bpf_program *prog, struct htab_args *a)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = a, .ctx_size_in = sizeof(*a));

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
		return -errno;
	return (int)opts.retval;
}

static __u64 expected(__u64 key)
{
	return key % 3 ? key * key : key * key + 1;	/* multiples of 3 were updated */
}

/* Walks every bucket from user space; returns the number of wrong things seen. */
static int check_table(const struct htab *t, const char *base, size_t size, unsigned int *longest)
{
	static unsigned char seen[NKEYS];
	unsigned int b, n = 0, chain;
	int bad = 0;

	memset(seen, 0, sizeof(seen));
	*longest = 0;
	for (b = 0; b < HTAB_BUCKETS; b++) {
		chain = 0;
		for (const struct arena_list_node *p = t->buckets[b].first; p; p = p->next) {
			const struct htab_elem *e = (const struct htab_elem *)p;

			if ((const char *)p < base || (const char *)(e + 1) > base + size) {
				fprintf(stderr, "bucket %u: pointer %p outside the arena\n", b, (void *)p);
				return bad + 1;
			}
			if (e->key >= NKEYS || seen[e->key]++ || htab_bucket(e->key) != b ||
			    e->value != expected(e->key)) {
				fprintf(stderr, "bucket %u: key %llu value %llu: wrong\n", b,
					(unsigned long long)e->key, (unsigned long long)e->value);
				bad++;
			}
			n++;
			chain++;
		}
		if (chain > *longest)
			*longest = chain;
	}
	if (n != NKEYS || t->count != NKEYS) {
		fprintf(stderr, "%u elements walked, count %llu, want %d\n", n,
			(unsigned long long)t->count, NKEYS);
		bad++;
	}
	return bad;
}

int main(void)
{
	struct htab_args a = {};
	struct htab_bpf *skel;
	unsigned int longest;
	struct htab *t;
	char *base;
	size_t size;
	int err, bad = 0;
	__u64 k;

	/* On 6.1 the bpf_arena module must be loaded: if not, this says what to do. */
	if (bpf_arena_kernel_ready())
		return 1;
	skel = htab_bpf__open();
	if (!skel)
		return fprintf(stderr, "open: %s\n", strerror(errno)), 1;
	/* Between open and load: with libbpf 1.1 this creates and maps the arena. */
	err = bpf_arena_object_prepare(skel->obj);
	err = err ?: htab_bpf__load(skel);
	if (err) {
		fprintf(stderr, "load: %s\n", strerror(-err));
		goto out;
	}
	base = bpf_arena_object_base(skel->maps.arena);
	size = bpf_arena_size(bpf_arena_object_arena(skel->maps.arena));

	/* Every key once, then the multiples of 3 again: an update in place. */
	for (k = 0; k < NKEYS && !err; k++) {
		a.key = k;
		a.value = k * k;
		err = run(skel->progs.htab_update, &a);
	}
	for (k = 0; k < NKEYS && !err; k += 3) {
		a.key = k;
		a.value = k * k + 1;
		err = run(skel->progs.htab_update, &a);
	}
	if (err) {
		fprintf(stderr, "htab_update(%llu): %d\n", (unsigned long long)a.key, err);
		goto out;
	}

	/* The program's pointer, kept in .bss and returned in the context. */
	t = (struct htab *)(unsigned long)a.table;
	if ((void *)t != (void *)skel->bss->table || (char *)t < base || (char *)(t + 1) > base + size) {
		fprintf(stderr, "table at %p, arena [%p, +%zu)\n", (void *)t, base, size);
		err = 1;
		goto out;
	}
	bad += check_table(t, base, size, &longest);

	/* User space writes through the same pointers; the program sees it. */
	for (unsigned int b = 0; b < HTAB_BUCKETS; b++)
		for (struct arena_list_node *p = t->buckets[b].first; p; p = p->next)
			((struct htab_elem *)p)->value += 1000000;
	for (k = 0; k < NKEYS; k += 7) {
		a.key = k;
		a.value = 0;
		err = run(skel->progs.htab_lookup, &a);
		if (err || a.value != expected(k) + 1000000) {
			fprintf(stderr, "htab_lookup(%llu): %d, value %llu\n",
				(unsigned long long)k, err, (unsigned long long)a.value);
			bad++;
		}
	}
	a.key = NKEYS;	/* never inserted */
	if (run(skel->progs.htab_lookup, &a) != HTAB_NOENT) {
		fprintf(stderr, "htab_lookup(%d) found a key never inserted\n", NKEYS);
		bad++;
	}
	err = 0;
	printf("htab: %d keys in %d buckets (longest chain %u), built by BPF, walked and "
	       "changed by user space, read back by BPF: %s\n",
	       NKEYS, HTAB_BUCKETS, longest, bad ? "WRONG" : "ok");
out:
	/* The arena first (libbpfarena's mapping), then the skeleton. */
	bpf_arena_object_release(skel->obj);
	htab_bpf__destroy(skel);
	return err || bad;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* This process's arena-like mappings, from /proc/self/maps. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/*
 * A mapping of a BPF map fd (native arena: "anon_inode:bpf-map"), or of the
 * bpf_arena module, which names its mappings "[bpf_arena]" whichever fd was
 * mapped (older module builds: the mapped file, e.g. /dev/bpf_arena).
 */
static bool arena_like(const char *path)
{
	return !strcmp(path, "anon_inode:bpf-map") || strstr(path, "bpf_arena");
}

/* Collects the starts of the arena-like mappings of exactly size bytes. */
static int collect(size_t size, uintptr_t **starts, size_t *n)
{
	FILE *f = fopen("/proc/self/maps", "re");
	size_t cap = 0;
	char line[512];

	*starts = NULL;
	*n = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		int path_off = 0;
		char *path;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end, &path_off) < 2 ||
		    !path_off)
			continue;
		path = line + path_off;
		path[strcspn(path, "\n")] = 0;
		if (end - start != size || !arena_like(path))
			continue;
		if (*n == cap) {
			uintptr_t *p = realloc(*starts, (cap ? cap * 2 : 8) * sizeof(*p));

			if (!p) {
				fclose(f);
				free(*starts);
				*starts = NULL;
				return -ENOMEM;
			}
			*starts = p;
			cap = cap ? cap * 2 : 8;
		}
		(*starts)[(*n)++] = start;
	}
	fclose(f);
	return 0;
}

int lbpfa_for_each_mapping(size_t size, int (*fn)(uintptr_t start, void *ctx), void *ctx)
{
	uintptr_t *starts;
	size_t n, i;
	int err, r = 0;

	err = collect(size, &starts, &n);
	if (err)
		return err;
	for (i = 0; i < n && !r; i++)
		r = fn(starts[i], ctx);
	free(starts);
	return r;
}

static int match(uintptr_t start, void *ctx)
{
	return start == *(uintptr_t *)ctx;
}

bool lbpfa_find_mapping(uintptr_t addr, size_t size)
{
	return lbpfa_for_each_mapping(size, match, &addr) > 0;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* struct bpf_arena: allocation, mapping, release. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

struct bpf_arena *lbpfa_alloc(const char *func, __u32 page_cnt, __u32 map_flags,
			       __u64 map_extra, enum bpf_arena_backend backend)
{
	struct bpf_arena *a = calloc(1, sizeof(*a));

	if (!a) {
		pr_warn("%s: out of memory\n", func);
		return NULL;
	}
	a->map_fd = -1;
	a->dev_fd = -1;
	a->base = MAP_FAILED;
	a->page_cnt = page_cnt;
	a->size = (size_t)page_cnt * lbpfa_page_size();
	a->map_flags = map_flags;
	a->map_extra = map_extra;
	a->backend = backend;
	pthread_mutex_init(&a->lock, NULL);
	return a;
}

enum bpf_arena_backend lbpfa_bpf_backend(void)
{
	return bpf_arena_kernel_has_native() ? BPF_ARENA_BACKEND_KERNEL
					     : BPF_ARENA_BACKEND_MODULE;
}

int lbpfa_create_begin(const char *func, __u32 page_cnt,
		       const struct bpf_arena_create_opts *opts,
		       struct bpf_arena **arena, struct lbpfa_params *p)
{
	if (!arena) {
		pr_warn("%s: the arena out-pointer is NULL\n", func);
		return -EINVAL;
	}
	*arena = NULL;
	return lbpfa_parse_opts(func, page_cnt, opts, p);
}

void lbpfa_free(struct bpf_arena *a)
{
	int saved_errno = errno;

	if (!a)
		return;
	if (a->base != MAP_FAILED && a->owns_mapping)
		munmap(a->base, a->size);
	if (a->map_fd >= 0)
		close(a->map_fd);
	if (a->dev_fd >= 0)
		close(a->dev_fd);
	pthread_mutex_destroy(&a->lock);
	free(a);
	errno = saved_errno;
}

int lbpfa_mmap(struct bpf_arena *a, int fd, void *addr)
{
	int flags = MAP_SHARED | (addr ? MAP_FIXED_NOREPLACE : 0);
	void *p;

	p = mmap(addr, a->size, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (addr && p != addr) {
		/* A kernel older than 4.17 took MAP_FIXED_NOREPLACE as a hint. */
		munmap(p, a->size);
		return -EEXIST;
	}
	a->base = p;
	a->owns_mapping = true;
	return 0;
}

int lbpfa_publish(struct bpf_arena *a, const char *how, struct bpf_arena **out)
{
	pr_debug("%s: %u pages at %p, flags 0x%x, %s\n", how, a->page_cnt, a->base,
		 a->map_flags, a->backend == BPF_ARENA_BACKEND_KERNEL ? "native" : "module");
	*out = a;
	return 0;
}

BA_API void bpf_arena_destroy(struct bpf_arena *arena)
{
	lbpfa_free(arena);
}

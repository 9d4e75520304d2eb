// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* bpf_arena_create(): BPF_MAP_CREATE of type 33, then mmap of the map fd. */
#include <sys/mman.h>

#include "internal.h"

static int map_create(const struct lbpfa_params *p)
{
	union bpf_attr attr;
	char buf[BA_ERRSTR_LEN], hint[BA_HINT_LEN];
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_ARENA_MAP_TYPE;
	attr.key_size = 0;
	attr.value_size = 0;
	attr.max_entries = p->page_cnt;
	attr.map_flags = p->map_flags;
	attr.map_extra = p->map_extra;
	if (p->numa_node >= 0)
		attr.numa_node = (__u32)p->numa_node;
	memcpy(attr.map_name, p->name, sizeof(attr.map_name));

	fd = (int)lbpfa_sys_bpf(BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd >= 0)
		return fd;
	fd = -errno;
	pr_warn("bpf_arena_create: BPF_MAP_CREATE (arena, %u pages, flags 0x%x, map_extra 0x%llx): "
		"%s: %s\n", p->page_cnt, p->map_flags, (unsigned long long)p->map_extra,
		lbpfa_strerror(fd, buf, sizeof(buf)), lbpfa_create_hint(fd, p, hint, sizeof(hint)));
	return fd;
}

BA_API int bpf_arena_create(__u32 page_cnt, const struct bpf_arena_create_opts *opts,
			    struct bpf_arena **arena)
{
	char buf[BA_ERRSTR_LEN];
	struct lbpfa_params p;
	struct bpf_arena *a;
	int err;

	err = lbpfa_create_begin("bpf_arena_create", page_cnt, opts, arena, &p);
	if (err)
		return lbpfa_err(err);
	a = lbpfa_alloc("bpf_arena_create", p.page_cnt, p.map_flags, p.map_extra,
			lbpfa_bpf_backend());
	if (!a)
		return lbpfa_err(-ENOMEM);
	a->map_fd = map_create(&p);
	if (a->map_fd < 0) {
		err = a->map_fd;
		goto err;
	}
	err = lbpfa_mmap(a, a->map_fd, (void *)(uintptr_t)p.map_extra);
	if (err) {
		pr_warn("bpf_arena_create: mmap of the arena map (%zu bytes at %s): %s%s\n",
			a->size, p.map_extra ? "map_extra" : "a kernel-chosen address",
			lbpfa_strerror(err, buf, sizeof(buf)),
			err == -EEXIST ? ": the range at map_extra is already mapped in this process"
				       : "");
		goto err;
	}
	return lbpfa_publish(a, "bpf_arena_create", arena);
err:
	lbpfa_free(a);
	return lbpfa_err(err);
}

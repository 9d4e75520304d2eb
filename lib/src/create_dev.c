// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* bpf_arena_create_dev(): /dev/bpf_arena, BPF_ARENA_IOC_CONFIGURE, mmap. */
#include <sys/ioctl.h>

#include "internal.h"

static int configure(int fd, const struct lbpfa_params *p)
{
	struct bpf_arena_config cfg = { .size = sizeof(cfg) };
	char buf[BA_ERRSTR_LEN], hint[BA_HINT_LEN];
	int err;

	/* The config has its own numa_node field: the flag is not passed. */
	cfg.map_flags = p->map_flags & ~BPF_F_NUMA_NODE_FLAG;
	cfg.max_entries = p->page_cnt;
	cfg.numa_node = p->numa_node;
	cfg.map_extra = p->map_extra;
	memcpy(cfg.name, p->name, sizeof(cfg.name));
	if (!p->page_cnt) {
		/* 0 means "from the mmap length" to the device; here it is an error. */
		err = -EINVAL;
	} else if (ioctl(fd, BPF_ARENA_IOC_CONFIGURE, &cfg) < 0) {
		err = -errno;
	} else {
		return 0;
	}
	pr_warn("bpf_arena_create_dev: BPF_ARENA_IOC_CONFIGURE (%u pages, flags 0x%x, "
		"map_extra 0x%llx): %s: %s\n", p->page_cnt, cfg.map_flags,
		(unsigned long long)p->map_extra, lbpfa_strerror(err, buf, sizeof(buf)),
		lbpfa_create_hint(err, p, hint, sizeof(hint)));
	return err;
}

BA_API int bpf_arena_create_dev(__u32 page_cnt, const struct bpf_arena_create_opts *opts,
				struct bpf_arena **arena)
{
	char buf[BA_ERRSTR_LEN];
	struct lbpfa_params p;
	struct bpf_arena *a;
	int err;

	err = lbpfa_create_begin("bpf_arena_create_dev", page_cnt, opts, arena, &p);
	if (err)
		return lbpfa_err(err);
	a = lbpfa_alloc("bpf_arena_create_dev", p.page_cnt, p.map_flags & ~BPF_F_NUMA_NODE_FLAG,
			p.map_extra, BPF_ARENA_BACKEND_MODULE);
	if (!a)
		return lbpfa_err(-ENOMEM);
	a->dev_fd = lbpfa_dev_open("bpf_arena_create_dev");
	if (a->dev_fd < 0) {
		err = a->dev_fd;
		goto err;
	}
	err = configure(a->dev_fd, &p);
	if (err)
		goto err;
	err = lbpfa_mmap(a, a->dev_fd, (void *)(uintptr_t)p.map_extra);
	if (err) {
		pr_warn("bpf_arena_create_dev: mmap of " BPF_ARENA_DEV_PATH " (%zu bytes%s): %s%s\n",
			a->size, p.map_extra ? " at map_extra" : "",
			lbpfa_strerror(err, buf, sizeof(buf)),
			err == -EEXIST ? ": the range at map_extra is already mapped in this process" :
			err == -EMFILE ? ": this user has max_dev_arenas_per_user arenas (module parameter)" :
			err == -ENFILE ? ": max_dev_arenas arenas exist (module parameter)" : "");
		goto err;
	}
	return lbpfa_publish(a, "bpf_arena_create_dev", arena);
err:
	lbpfa_free(a);
	return lbpfa_err(err);
}

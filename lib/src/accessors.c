// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Accessors of struct bpf_arena. */
#include <sys/ioctl.h>

#include "internal.h"

BA_API void *bpf_arena_base(const struct bpf_arena *arena)
{
	return arena->base;
}

BA_API size_t bpf_arena_size(const struct bpf_arena *arena)
{
	return arena->size;
}

BA_API __u32 bpf_arena_page_cnt(const struct bpf_arena *arena)
{
	return arena->page_cnt;
}

BA_API __u32 bpf_arena_map_flags(const struct bpf_arena *arena)
{
	return arena->map_flags;
}

BA_API enum bpf_arena_backend bpf_arena_backend(const struct bpf_arena *arena)
{
	return arena->backend;
}

BA_API int bpf_arena_map_fd(struct bpf_arena *arena)
{
	struct bpf_arena_map_fd req = { .size = sizeof(req) };
	char buf[BA_ERRSTR_LEN];
	int fd;

	if (!arena) {
		pr_warn("bpf_arena_map_fd: arena is NULL\n");
		return lbpfa_err(-EINVAL);
	}
	fd = __atomic_load_n(&arena->map_fd, __ATOMIC_ACQUIRE);
	if (fd >= 0)
		return fd;

	pthread_mutex_lock(&arena->lock);
	fd = arena->map_fd;
	if (fd < 0) {
		/* Only an arena created through the device lacks a map fd. */
		if (ioctl(arena->dev_fd, BPF_ARENA_IOC_MAP_FD, &req) < 0) {
			fd = -errno;
			pr_warn("bpf_arena_map_fd: BPF_ARENA_IOC_MAP_FD on /dev/bpf_arena: %s\n",
				lbpfa_strerror(fd, buf, sizeof(buf)));
		} else {
			fd = req.fd;
			__atomic_store_n(&arena->map_fd, fd, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&arena->lock);
	return lbpfa_err(fd);
}

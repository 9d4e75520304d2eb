// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* User-side page operations through the /dev/bpf_arena ioctls. */
#include <sys/ioctl.h>

#include "internal.h"

static int check_arena(const struct bpf_arena *a, const char *func)
{
	if (!a) {
		pr_warn("%s: arena is NULL\n", func);
		return -EINVAL;
	}
	return 0;
}

/* ioctl on the arena's device handle: the result (>= 0) or -errno, with a message. */
static int arena_ioctl(struct bpf_arena *a, const char *func, const char *cmd_name,
		       unsigned long cmd, void *arg, void *addr, __u32 page_cnt)
{
	char buf[BA_ERRSTR_LEN];
	int fd, ret;

	fd = lbpfa_dev_handle(a, func);
	if (fd < 0)
		return fd;
	ret = ioctl(fd, cmd, arg);
	if (ret >= 0)
		return ret;
	ret = -errno;
	pr_warn("%s: %s (%u pages at %p, arena %p..%p): %s%s\n", func, cmd_name, page_cnt,
		addr, a->base, (char *)a->base + a->size, lbpfa_strerror(ret, buf, sizeof(buf)),
		ret == -ERANGE ? ": the range is not inside the arena" :
		ret == -EBUSY ? ": a page in the range is already allocated" :
		ret == -ENOENT ? ": no page in the range was allocated" :
		ret == -ENXIO ? ": the arena is not mapped yet" :
		ret == -EINVAL ? ": page_cnt 0, unaligned address, or bad node" :
		ret == -ENOMEM ? ": over the RLIMIT_MEMLOCK of the process that opened the handle (see dmesg), or out of memory" :
		ret == -EPERM ? (cmd == BPF_ARENA_IOC_PREFAULT ?
				 ": a BPF_F_SEGV_ON_FAULT arena, a frozen arena or a read-only map fd" :
				 ": a frozen arena or a read-only map fd") : "");
	return ret;
}

BA_API int bpf_arena_user_alloc_pages(struct bpf_arena *arena, void *addr, __u32 page_cnt,
				      int node_id, void **pages)
{
	struct bpf_arena_alloc req = {
		.size = sizeof(req),
		.page_cnt = page_cnt,
		.addr = (__u64)(uintptr_t)addr,
		.node_id = node_id,
	};
	int err = check_arena(arena, __func__);

	if (!err)
		err = arena_ioctl(arena, __func__, "BPF_ARENA_IOC_ALLOC_PAGES",
				  BPF_ARENA_IOC_ALLOC_PAGES, &req, addr, page_cnt);
	if (err < 0)
		return lbpfa_err(err);
	if (pages)
		*pages = (void *)(uintptr_t)req.addr;
	return 0;
}

static int range_op(struct bpf_arena *arena, const char *func, const char *cmd_name,
		    unsigned long cmd, void *addr, __u32 page_cnt)
{
	struct bpf_arena_range req = {
		.size = sizeof(req),
		.page_cnt = page_cnt,
		.addr = (__u64)(uintptr_t)addr,
	};
	int err = check_arena(arena, func);

	if (!err)
		err = arena_ioctl(arena, func, cmd_name, cmd, &req, addr, page_cnt);
	return lbpfa_err(err);
}

BA_API int bpf_arena_user_free_pages(struct bpf_arena *arena, void *addr, __u32 page_cnt)
{
	return range_op(arena, __func__, "BPF_ARENA_IOC_FREE_PAGES", BPF_ARENA_IOC_FREE_PAGES,
			addr, page_cnt);
}

BA_API int bpf_arena_prefault(struct bpf_arena *arena, void *addr, __u32 page_cnt)
{
	return range_op(arena, __func__, "BPF_ARENA_IOC_PREFAULT", BPF_ARENA_IOC_PREFAULT,
			addr, page_cnt);
}

BA_API int bpf_arena_inspect(struct bpf_arena *arena, struct bpf_arena_inspect *info,
			     size_t info_sz)
{
	char buf[BA_ERRSTR_LEN];
	int err = check_arena(arena, __func__), fd;

	if (err)
		return lbpfa_err(err);
	if (!info || info_sz < sizeof(info->size) + sizeof(info->map_id) || info_sz > UINT32_MAX) {
		pr_warn("%s: buffer %p of %zu bytes is invalid\n", __func__, (void *)info, info_sz);
		return lbpfa_err(-EINVAL);
	}
	fd = lbpfa_dev_handle(arena, __func__);
	if (fd < 0)
		return lbpfa_err(fd);
	memset(info, 0, info_sz);
	info->size = (__u32)info_sz;	/* map_id 0: this handle's arena */
	if (ioctl(fd, BPF_ARENA_IOC_INSPECT, info) < 0) {
		err = -errno;
		pr_warn("%s: BPF_ARENA_IOC_INSPECT: %s\n", __func__, lbpfa_strerror(err, buf, sizeof(buf)));
		return lbpfa_err(err);
	}
	return 0;
}

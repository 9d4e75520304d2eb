// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpf_arena_from_fd(): wrap an arena fd received from another process (a
 * BPF arena map fd or a /dev/bpf_arena fd) and map it at the arena's fixed
 * address, so that pointers the other process stored in it are valid here.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "internal.h"

#define FUNC "bpf_arena_from_fd"

/* Whether fd is an open /dev/bpf_arena (same character device). */
static bool is_dev_fd(int fd)
{
	struct stat st, dev;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	       !stat(BPF_ARENA_DEV_PATH, &dev) && S_ISCHR(dev.st_mode) &&
	       st.st_rdev == dev.st_rdev;
}

static int from_dev_fd(int fd, struct bpf_arena **arena)
{
	struct bpf_arena_info info = { .size = sizeof(info) };
	char buf[BA_ERRSTR_LEN];
	struct bpf_arena *a;
	int err;

	if (ioctl(fd, BPF_ARENA_IOC_GET_INFO, &info) < 0) {
		err = -errno;
		pr_warn(FUNC ": BPF_ARENA_IOC_GET_INFO on device fd %d: %s\n", fd,
			lbpfa_strerror(err, buf, sizeof(buf)));
		return err;
	}
	if (!info.created || !info.user_vm_start) {
		pr_warn(FUNC ": device fd %d has no arena yet (%s): the sender must create "
			"it (mmap the device) before passing the fd\n", fd,
			info.created ? "created, not mapped" : "configured, not created");
		return -EINVAL;
	}
	a = lbpfa_alloc(FUNC, info.max_entries, info.map_flags, info.map_extra,
			BPF_ARENA_BACKEND_MODULE);
	if (!a)
		return -ENOMEM;
	/* The device handle is the arena's: page ops and the map fd use it. */
	a->dev_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (a->dev_fd < 0) {
		err = -errno;
		pr_warn(FUNC ": dup of device fd %d: %s\n", fd, lbpfa_strerror(err, buf, sizeof(buf)));
		goto err;
	}
	err = lbpfa_mmap(a, a->dev_fd, (void *)(uintptr_t)info.user_vm_start);
	if (err == -EEXIST && lbpfa_find_mapping(info.user_vm_start, a->size)) {
		/* This process maps the arena there already: use that mapping,
		 * as bpf_arena_from_map_fd() does (not unmapped on destroy). */
		a->base = (void *)(uintptr_t)info.user_vm_start;
		a->owns_mapping = false;
		err = 0;
	}
	if (err) {
		pr_warn(FUNC ": mmap of device fd %d (%zu bytes at the arena's address 0x%llx): "
			"%s%s\n", fd, a->size, (unsigned long long)info.user_vm_start,
			lbpfa_strerror(err, buf, sizeof(buf)),
			err == -EEXIST ? ": this process maps something else there" : "");
		goto err;
	}
	return lbpfa_publish(a, FUNC " (device fd)", arena);
err:
	lbpfa_free(a);
	return err;
}

BA_API int bpf_arena_from_fd(int fd, struct bpf_arena **arena)
{
	if (!arena) {
		pr_warn(FUNC ": the arena out-pointer is NULL\n");
		return lbpfa_err(-EINVAL);
	}
	*arena = NULL;
	if (fd < 0) {
		pr_warn(FUNC ": fd %d is not a file descriptor\n", fd);
		return lbpfa_err(-EBADF);
	}
	if (is_dev_fd(fd))
		return lbpfa_err(from_dev_fd(fd, arena));
	/* Anything else must be an arena map fd; wrap() names what it is not. */
	return bpf_arena_from_map_fd(fd, arena);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* bpf_arena_from_map_fd(), bpf_arena_from_map_fd_at(): wrap an existing arena map. */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "internal.h"

/*
 * Every mapping of an arena starts at the arena's user_vm_start, and once
 * that is fixed the kernel refuses any other address (EINVAL, from the
 * arena's get_unmapped_area) before do_mmap() checks whether the range is
 * free: a MAP_FIXED_NOREPLACE mmap at an occupied candidate fails with
 * EEXIST exactly when the candidate is the arena's address.
 */
static int try_candidate(uintptr_t start, void *ctx)
{
	struct bpf_arena *a = ctx;
	int err = lbpfa_mmap(a, a->map_fd, (void *)start);

	if (!err)
		return 1;	/* unmapped meanwhile: now it is ours */
	if (err == -EEXIST) {
		a->base = (void *)start;
		a->owns_mapping = false;
		return 1;
	}
	return 0;
}

/* Borrows or maps at addr. */
static int map_at(struct bpf_arena *a, void *addr, const char *func)
{
	char buf[BA_ERRSTR_LEN];
	int err = lbpfa_mmap(a, a->map_fd, addr);

	if (err == -EEXIST && lbpfa_find_mapping((uintptr_t)addr, a->size)) {
		a->base = addr;
		a->owns_mapping = false;
		pr_debug("%s: using this process's mapping of the arena at %p\n", func, addr);
		return 0;
	}
	if (err)
		pr_warn("%s: mmap of arena map fd %d (%zu bytes at %p): %s%s\n", func, a->map_fd,
			a->size, addr, lbpfa_strerror(err, buf, sizeof(buf)),
			err == -EEXIST ? ": the range is already mapped, and not by this arena" :
			err == -EINVAL ? ": the arena lives at another address" : "");
	return err;
}

/* Maps where the kernel chooses, or finds the mapping that fixed the address. */
static int map_anywhere(struct bpf_arena *a, const char *func)
{
	char buf[BA_ERRSTR_LEN];
	int err = lbpfa_mmap(a, a->map_fd, NULL);

	if (err != -EINVAL && err != -EBUSY) {
		if (err)
			pr_warn("%s: mmap of arena map fd %d (%zu bytes): %s\n", func, a->map_fd,
				a->size, lbpfa_strerror(err, buf, sizeof(buf)));
		return err;
	}
	/*
	 * The arena's address was fixed by an earlier mapping.  The module
	 * reports it (BPF_ARENA_IOC_GET_INFO); for a native arena, find this
	 * process's mapping.
	 */
	if (a->backend == BPF_ARENA_BACKEND_MODULE && lbpfa_dev_present()) {
		struct bpf_arena_info info = { .size = sizeof(info) };
		int fd = lbpfa_dev_handle(a, NULL);

		if (fd >= 0 && !ioctl(fd, BPF_ARENA_IOC_GET_INFO, &info) && info.user_vm_start)
			return map_at(a, (void *)(uintptr_t)info.user_vm_start, func);
	}
	if (lbpfa_for_each_mapping(a->size, try_candidate, a) > 0) {
		pr_debug("%s: the arena is mapped at %p in this process%s\n", func, a->base,
			 a->owns_mapping ? "" : ": using that mapping");
		return 0;
	}
	pr_warn("%s: arena map fd %d was mapped before at an address the kernel does not "
		"report (no map_extra), and this process does not map it now: pass that "
		"address to bpf_arena_from_map_fd_at() (mmap: %s)\n", func, a->map_fd,
		lbpfa_strerror(err, buf, sizeof(buf)));
	return -EBUSY;
}

static int wrap(int map_fd, void *addr, const char *func, struct bpf_arena **arena)
{
	char buf[BA_ERRSTR_LEN];
	struct bpf_map_info info;
	struct bpf_arena *a;
	int err;

	if (!arena) {
		pr_warn("%s: the arena out-pointer is NULL\n", func);
		return lbpfa_err(-EINVAL);
	}
	*arena = NULL;
	if ((uintptr_t)addr & (lbpfa_page_size() - 1)) {
		pr_warn("%s: address %p is not page aligned\n", func, addr);
		return lbpfa_err(-EINVAL);
	}
	err = lbpfa_map_info(map_fd, &info);
	if (err) {
		pr_warn("%s: BPF_OBJ_GET_INFO_BY_FD of fd %d: %s%s\n", func, map_fd,
			lbpfa_strerror(err, buf, sizeof(buf)),
			err == -EINVAL || err == -EBADF || err == -EBADFD ? " (not a BPF map fd?)" : "");
		return lbpfa_err(err);
	}
	if (info.type != BPF_ARENA_MAP_TYPE) {
		pr_warn("%s: fd %d is a BPF map of type %u, not an arena (type %d)\n", func,
			map_fd, info.type, BPF_ARENA_MAP_TYPE);
		return lbpfa_err(-EINVAL);
	}

	a = lbpfa_alloc(func, info.max_entries, info.map_flags, info.map_extra,
			lbpfa_bpf_backend());
	if (!a)
		return lbpfa_err(-ENOMEM);
	a->map_fd = fcntl(map_fd, F_DUPFD_CLOEXEC, 0);
	if (a->map_fd < 0) {
		err = -errno;
		pr_warn("%s: dup of map fd %d: %s\n", func, map_fd, lbpfa_strerror(err, buf, sizeof(buf)));
		goto err;
	}
	if (!addr)
		addr = (void *)(uintptr_t)info.map_extra;
	err = addr ? map_at(a, addr, func) : map_anywhere(a, func);
	if (err)
		goto err;
	return lbpfa_publish(a, func, arena);
err:
	lbpfa_free(a);
	return lbpfa_err(err);
}

BA_API int bpf_arena_from_map_fd(int map_fd, struct bpf_arena **arena)
{
	return wrap(map_fd, NULL, "bpf_arena_from_map_fd", arena);
}

BA_API int bpf_arena_from_map_fd_at(int map_fd, void *addr, struct bpf_arena **arena)
{
	return wrap(map_fd, addr, "bpf_arena_from_map_fd_at", arena);
}

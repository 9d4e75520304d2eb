// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* /dev/bpf_arena handles: opening, and attaching one to a bpf()-created arena. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

bool lbpfa_dev_present(void)
{
	return access(BPF_ARENA_DEV_PATH, F_OK) == 0;
}

int lbpfa_dev_open(const char *func)
{
	char buf[BA_ERRSTR_LEN], text[BA_HINT_LEN];
	int fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	fd = -errno;
	if (!func)
		return fd == -ENOENT || fd == -ENODEV || fd == -ENXIO ? -EOPNOTSUPP : fd;
	if (fd == -ENOENT || fd == -ENODEV || fd == -ENXIO) {
		if (!lbpfa_no_arena_text(text, sizeof(text)))
			snprintf(text, sizeof(text), "%s",
				 bpf_arena_kernel_has_native()
				 ? "this kernel's native arena offers no user-space page or "
				   "device operations"
				 : "the bpf_arena module is loaded but has no device");
		pr_warn("%s: needs the bpf_arena module's " BPF_ARENA_DEV_PATH " (%s): %s\n",
			func, lbpfa_strerror(fd, buf, sizeof(buf)), text);
		return -EOPNOTSUPP;
	}
	if (fd == -EACCES || fd == -EPERM) {
		lbpfa_dev_access_text(text, sizeof(text));
		pr_warn("%s: cannot open " BPF_ARENA_DEV_PATH ": %s: %s\n", func,
			lbpfa_strerror(fd, buf, sizeof(buf)), text);
		return fd;
	}
	pr_warn("%s: cannot open " BPF_ARENA_DEV_PATH ": %s\n", func,
		lbpfa_strerror(fd, buf, sizeof(buf)));
	return fd;
}

int lbpfa_dev_handle(struct bpf_arena *a, const char *func)
{
	struct bpf_arena_attach req = { .size = sizeof(req) };
	char buf[BA_ERRSTR_LEN];
	int fd = __atomic_load_n(&a->dev_fd, __ATOMIC_ACQUIRE);

	if (fd >= 0)
		return fd;

	pthread_mutex_lock(&a->lock);
	fd = a->dev_fd;
	if (fd >= 0)
		goto out;
	fd = lbpfa_dev_open(func);
	if (fd < 0)
		goto out;
	req.map_fd = a->map_fd;
	if (ioctl(fd, BPF_ARENA_IOC_ATTACH, &req) < 0) {
		int err = -errno;

		if (func)
			pr_warn("%s: BPF_ARENA_IOC_ATTACH of map fd %d to " BPF_ARENA_DEV_PATH ": %s%s\n",
				func, a->map_fd, lbpfa_strerror(err, buf, sizeof(buf)),
				err == -EINVAL ? " (the arena is not one of the bpf_arena module's)" : "");
		close(fd);
		fd = err;
		goto out;
	}
	__atomic_store_n(&a->dev_fd, fd, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&a->lock);
	return fd;
}

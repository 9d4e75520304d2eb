// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The raw bpf() syscall and the page size. */
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

size_t lbpfa_page_size(void)
{
	static size_t page_size;
	size_t sz = __atomic_load_n(&page_size, __ATOMIC_RELAXED);

	if (!sz) {
		sz = (size_t)sysconf(_SC_PAGESIZE);
		__atomic_store_n(&page_size, sz, __ATOMIC_RELAXED);
	}
	return sz;
}

/* Returns the syscall's result, or -1 with errno set. */
long lbpfa_sys_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return syscall(__NR_bpf, cmd, attr, size);
}

int lbpfa_map_info(int map_fd, struct bpf_map_info *info)
{
	union bpf_attr attr;

	memset(info, 0, sizeof(*info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (__u32)map_fd;
	attr.info.info_len = sizeof(*info);
	attr.info.info = (__u64)(uintptr_t)info;
	if (lbpfa_sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) < 0)
		return -errno;
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Does the running kernel implement BPF arena itself?  See the header. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

bool lbpfa_module_present(void)
{
	return access("/sys/module/bpf_arena", F_OK) == 0 || lbpfa_dev_present();
}

/* 1 native, 0 not, -1 unknown (no privilege). */
static int probe_map_create(void)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_ARENA_MAP_TYPE;
	attr.max_entries = 1;
	attr.map_flags = BPF_ARENA_F_MMAPABLE;
	fd = (int)lbpfa_sys_bpf(BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	switch (errno) {
	case EOPNOTSUPP:	/* known type, JIT without arena support */
		return 1;
	case EINVAL:		/* unknown map type */
		return 0;
	default:		/* EPERM, EACCES (LSM), ENOMEM, ... */
		return -1;
	}
}

/* Searches the kernel's BTF strings for the enumerator name: 1, 0, -1 (no BTF). */
static int probe_btf(void)
{
	static const char needle[] = "\0BPF_MAP_TYPE_ARENA";	/* + its NUL */
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, keep = sizeof(needle) - 1, have = 0;
	char *buf;
	int found = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	buf = malloc(cap + keep);
	if (!buf) {
		close(fd);
		return -1;
	}
	/* Stream the file, keeping the tail of each block to match across blocks. */
	while (!found && (n = read(fd, buf + have, cap)) > 0) {
		size_t len = have + (size_t)n, i;

		for (i = 0; i + sizeof(needle) <= len; i++) {
			if (!memcmp(buf + i, needle, sizeof(needle))) {
				found = 1;
				break;
			}
		}
		have = len < keep ? len : keep;
		memmove(buf, buf + len - have, have);
	}
	if (!found && n < 0)
		found = -1;
	free(buf);
	close(fd);
	return found;
}

static int probe_uname(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj > 6 || (maj == 6 && min >= 9);
}

/*
 * The kernel's own BTF first: the module adds nothing to it, and on a 6.9+
 * kernel the module loads as an inactive stub, so its presence alone says
 * nothing.  Without BTF, the module's presence means not native (with it
 * loaded, BPF_MAP_CREATE of type 33 succeeds either way).
 */
static int probe(void)
{
	int r;

	r = probe_btf();
	if (r >= 0) {
		pr_debug("native arena probe: vmlinux BTF says %d\n", r);
		return r;
	}
	if (lbpfa_module_present()) {
		pr_debug("native arena probe: no vmlinux BTF, the bpf_arena module is present: not native\n");
		return 0;
	}
	r = probe_map_create();
	if (r >= 0) {
		pr_debug("native arena probe: BPF_MAP_CREATE of type 33 says %d\n", r);
		return r;
	}
	r = probe_uname();
	pr_debug("native arena probe: kernel release says %d\n", r);
	return r;
}

BA_API int bpf_arena_kernel_has_native(void)
{
	static int cached = -1;
	int r = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);

	if (r < 0) {
		/* Racing first calls both probe and agree: no lock needed. */
		r = probe();
		__atomic_store_n(&cached, r, __ATOMIC_RELEASE);
	}
	return r;
}

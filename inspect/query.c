// SPDX-License-Identifier: GPL-2.0
#include "query.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr)) < 0 ? -errno : 0;
}

static int sys_bpf_fd(int cmd, union bpf_attr *attr)
{
	int fd = (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return fd < 0 ? -errno : fd;
}

static int dev_fd = -2;
static const char *dev_reason = "";

int q_dev(void)
{
	if (dev_fd == -2) {
		/* Inspection needs no write right: never open it for writing. */
		dev_fd = open(BPF_ARENA_DEV_PATH, O_RDONLY | O_CLOEXEC);
		if (dev_fd < 0) {
			dev_fd = -errno;
			if (errno == ENOENT)
				dev_reason = "no " BPF_ARENA_DEV_PATH
					     ": the bpf_arena module is not loaded (on Linux >= 6.9 arena is native: the module is an inactive stub without a device)";
			else if (errno == EACCES || errno == EPERM)
				dev_reason = "no access to " BPF_ARENA_DEV_PATH
					     " (root or the device group)";
			else
				dev_reason = "cannot open " BPF_ARENA_DEV_PATH;
		}
	}
	return dev_fd;
}

const char *q_dev_reason(void)
{
	return dev_reason;
}

static int map_fd_by_id(uint32_t id)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_id = id;
	attr.open_flags = BPF_F_RDONLY;
	return sys_bpf_fd(BPF_MAP_GET_FD_BY_ID, &attr);
}

static int obj_info(int fd, void *info, uint32_t len)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = len;
	attr.info.info = (uint64_t)(uintptr_t)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr);
}

static int next_id(int cmd, uint32_t *id)
{
	union bpf_attr attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.start_id = *id;
	err = sys_bpf(cmd, &attr);
	if (!err)
		*id = attr.next_id;
	return err;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int q_arena_ids(uint32_t **ids, size_t *n)
{
	size_t cap = 0;
	uint32_t id = 0;
	int err;

	*ids = NULL;
	*n = 0;
	for (;;) {
		struct bpf_map_info info;
		int fd;

		err = next_id(BPF_MAP_GET_NEXT_ID, &id);
		if (err == -ENOENT)
			break;
		if (err)
			goto fail;
		fd = map_fd_by_id(id);
		if (fd == -ENOENT)
			continue;	/* freed meanwhile */
		if (fd < 0) {
			err = fd;
			goto fail;
		}
		memset(&info, 0, sizeof(info));
		err = obj_info(fd, &info, sizeof(info));
		close(fd);
		if (err || info.type != BPF_ARENA_MAP_TYPE)
			continue;
		if (*n == cap) {
			uint32_t *p = realloc(*ids, (cap = cap ? cap * 2 : 16) * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				goto fail;
			}
			*ids = p;
		}
		(*ids)[(*n)++] = id;
	}
	qsort(*ids, *n, sizeof(**ids), cmp_u32);
	return 0;
fail:
	free(*ids);
	*ids = NULL;
	*n = 0;
	return err;
}

/* Programs whose map_ids name the arena. */
static int find_progs(struct q_arena *a)
{
	uint32_t id = 0, cap = 0;

	while (!next_id(BPF_PROG_GET_NEXT_ID, &id)) {
		struct bpf_prog_info info;
		uint32_t map_ids[256], n;
		union bpf_attr attr;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.prog_id = id;
		fd = sys_bpf_fd(BPF_PROG_GET_FD_BY_ID, &attr);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.nr_map_ids = sizeof(map_ids) / sizeof(map_ids[0]);
		info.map_ids = (uint64_t)(uintptr_t)map_ids;
		if (obj_info(fd, &info, sizeof(info))) {
			close(fd);
			continue;
		}
		close(fd);
		n = info.nr_map_ids < 256 ? info.nr_map_ids : 256;
		for (uint32_t i = 0; i < n; i++) {
			struct q_prog *p;

			if (map_ids[i] != a->id)
				continue;
			if (a->nprogs == cap) {
				p = realloc(a->progs, (cap = cap ? cap * 2 : 8) * sizeof(*p));
				if (!p)
					return -ENOMEM;
				a->progs = p;
			}
			p = &a->progs[a->nprogs++];
			p->id = info.id;
			p->type = info.type;
			memcpy(p->name, info.name, sizeof(info.name));
			p->name[16] = 0;
			q_printable(p->name);
			break;
		}
	}
	return 0;
}

/* Processes mapping the module's arena file (inode vm_ino): /proc/PID/maps. */
static int find_mappings(struct q_arena *a)
{
	DIR *d = opendir("/proc");
	uint32_t cap = 0;
	struct dirent *e;
	int err = 0;

	if (!d || !a->mod.vm_ino) {
		if (d)
			closedir(d);
		return 0;
	}
	while ((e = readdir(d))) {
		char path[64], line[512];
		FILE *f;
		int pid;

		if (sscanf(e->d_name, "%d", &pid) != 1 || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (!err && fgets(line, sizeof(line), f)) {
			struct q_mapping *m;
			uint64_t start, end, ino;
			char perms[5], dev[16];
			unsigned long long off;
			int pos = 0;

			if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %llx %15s %" SCNu64 " %n",
				   &start, &end, perms, &off, dev, &ino, &pos) < 6 || !pos)
				continue;
			/* The module names arena mappings as 6.12 does: anon_inode:bpf-map. */
			if (ino != a->mod.vm_ino || (!strstr(line + pos, "anon_inode:bpf-map") &&
						     !strstr(line + pos, "bpf_arena")))
				continue;
			if (a->nmappings == cap) {
				m = realloc(a->mappings, (cap = cap ? cap * 2 : 4) * sizeof(*m));
				if (!m) {
					err = -ENOMEM;
					break;
				}
				a->mappings = m;
			}
			m = &a->mappings[a->nmappings++];
			m->pid = pid;
			m->start = start;
			m->end = end;
			memcpy(m->perms, perms, sizeof(perms));
			m->comm[0] = 0;
			{
				char cpath[64];
				FILE *c;

				snprintf(cpath, sizeof(cpath), "/proc/%d/comm", pid);
				c = fopen(cpath, "re");
				if (c) {
					if (fgets(m->comm, sizeof(m->comm), c))
						m->comm[strcspn(m->comm, "\n")] = 0;
					fclose(c);
				}
			}
			q_printable(m->comm);
		}
		fclose(f);
	}
	closedir(d);
	return err;
}

int q_arena(uint32_t id, struct q_arena *a, bool progs)
{
	struct bpf_map_info info;
	int fd, err, dev;

	memset(a, 0, sizeof(*a));
	fd = map_fd_by_id(id);
	if (fd < 0)
		return fd;
	memset(&info, 0, sizeof(info));
	err = obj_info(fd, &info, sizeof(info));
	close(fd);
	if (err)
		return err;
	if (info.type != BPF_ARENA_MAP_TYPE)
		return -EINVAL;
	a->id = info.id;
	memcpy(a->name, info.name, sizeof(info.name));
	q_printable(a->name);
	a->map_flags = info.map_flags;
	a->max_entries = info.max_entries;
	a->map_extra = info.map_extra;
	a->btf_id = info.btf_id;
	if (progs) {
		err = find_progs(a);
		if (err)
			goto fail;
	}
	/* The stock kernel fixes the range at map_extra when it is set. */
	if (a->map_extra) {
		a->have_range = true;
		a->range_start = a->map_extra;
		a->range_end = a->map_extra + (uint64_t)a->max_entries * 4096;
	}
	dev = q_dev();
	if (dev >= 0) {
		a->mod.size = sizeof(a->mod);
		a->mod.map_id = id;
		if (!ioctl(dev, BPF_ARENA_IOC_INSPECT, &a->mod)) {
			a->have_mod = true;
			a->have_range = true;
			a->range_start = a->mod.user_vm_start;
			a->range_end = a->mod.user_vm_end;
			memcpy(a->creator_comm, a->mod.creator_comm, sizeof(a->mod.creator_comm));
			a->creator_comm[sizeof(a->mod.creator_comm)] = 0;
			q_printable(a->creator_comm);
			err = find_mappings(a);
			if (err)
				goto fail;
		} else {
			a->mod_err = -errno;
		}
	} else {
		a->mod_err = dev;
	}
	return 0;
fail:
	q_arena_release(a);
	return err;
}

void q_arena_release(struct q_arena *a)
{
	free(a->progs);
	free(a->mappings);
	a->progs = NULL;
	a->mappings = NULL;
	a->nprogs = a->nmappings = 0;
}

/* Length of the UTF-8 sequence at s if it is a valid, printable one; else 0. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 :
		s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, surrogates, past U+10FFFF, C1 controls. */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f) ||
	    (s[0] == 0xc2 && s[1] < 0xa0))
		return 0;
	return n;
}

void q_printable(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		int n = *p >= 0x20 && *p < 0x7f ? 1 : utf8_len(p);

		if (!n) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

int q_pages(uint32_t id, uint64_t first, uint8_t *states, uint32_t *cnt, uint64_t *total)
{
	struct bpf_arena_inspect_pages req;
	int dev = q_dev();

	if (dev < 0)
		return dev;
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.map_id = id;
	req.first = first;
	req.buf = (uint64_t)(uintptr_t)states;
	req.cnt = *cnt;
	if (ioctl(dev, BPF_ARENA_IOC_INSPECT_PAGES, &req))
		return -errno;
	*cnt = req.cnt;
	*total = req.total;
	return 0;
}

int q_dump(uint32_t id, uint64_t addr, void *buf, uint32_t len, uint64_t *present)
{
	struct bpf_arena_inspect_dump req;
	int dev = q_dev();

	if (dev < 0)
		return dev;
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.map_id = id;
	req.addr = addr;
	req.buf = (uint64_t)(uintptr_t)buf;
	req.len = len;
	if (ioctl(dev, BPF_ARENA_IOC_INSPECT_DUMP, &req))
		return -errno;
	*present = req.present;
	return 0;
}

static uint64_t cg_want;
static char cg_found[4096];

static int cg_visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D && (uint64_t)st->st_ino == cg_want) {
		snprintf(cg_found, sizeof(cg_found), "%s", path);
		return 1;
	}
	return 0;
}

const char *q_cgroup_path(uint64_t id)
{
	cg_want = id;
	cg_found[0] = 0;
	/* cgroup v2: a cgroup's id is its directory's inode number. */
	if (id && nftw("/sys/fs/cgroup", cg_visit, 16, FTW_PHYS | FTW_MOUNT) == 1) {
		q_printable(cg_found);
		return cg_found;
	}
	return NULL;
}

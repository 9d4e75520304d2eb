/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for tests that load, unload and inspect bpf_arena.ko in the guest. */
#ifndef BPF_ARENA_TESTS_KMOD_UTIL_H
#define BPF_ARENA_TESTS_KMOD_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define BPF_ARENA_MODNAME "bpf_arena"

static inline const char *kmod_path(void)
{
	const char *p = getenv("BPF_ARENA_KO");

	return p ? p : "/opt/bpf-arena/bpf_arena.ko";
}

/* 0 or -errno, like the syscall. */
static inline int kmod_load(void)
{
	int fd = open(kmod_path(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int kmod_unload(void)
{
	return syscall(SYS_delete_module, BPF_ARENA_MODNAME, O_NONBLOCK) ? -errno : 0;
}

/*
 * Unloads the module once the maps and programs freed just before are gone:
 * the stock kernel frees them through RCU and work queues, and until then
 * the module is in use (EAGAIN with O_NONBLOCK, or EBUSY).  Tries for up to
 * ms milliseconds; 0 or the last -errno.
 */
static inline int kmod_unload_when_idle(int ms)
{
	int err, waited;

	for (waited = 0;; waited += 20) {
		err = kmod_unload();
		if ((err != -EAGAIN && err != -EBUSY) || waited >= ms)
			return err;
		usleep(20000);
	}
}

static inline bool kmod_is_loaded(void)
{
	return access("/sys/module/" BPF_ARENA_MODNAME, F_OK) == 0;
}

/* Reads a small sysfs/proc file into buf, newline stripped; false on error. */
static inline bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* True on kernels with in-tree BPF arena (6.9+), where the module is an inactive stub. */
/* Writes s to a sysfs/proc/debugfs file in one write(); false on error. */
static inline bool write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok;
}

static inline bool kernel_has_native_arena(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return false;
	return maj > 6 || (maj == 6 && min >= 9);
}

/*
 * True on a PREEMPT_RT kernel (Debian's -rt-amd64 flavour): kernel code is
 * preemptible inside BPF programs, and the module's non-sleepable
 * allocations use the pool only.
 */
static inline bool kernel_is_preempt_rt(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, "PREEMPT_RT") != NULL;
}

/* The whole kernel log, NUL-terminated, malloc'd (caller frees); NULL on error. */
static inline char *kernel_log(void)
{
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf;

	if (len <= 0)
		return NULL;
	buf = malloc((size_t)len + 1);
	if (!buf)
		return NULL;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (len < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

/* Number of times needle occurs in the kernel log; -1 if it cannot be read. */
static inline int kernel_log_count(const char *needle)
{
	char *log = kernel_log(), *p;
	int n = 0;

	if (!log)
		return -1;
	for (p = log; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(log);
	return n;
}

/* `modinfo -F field` of the module file, newline stripped; false on error. */
static inline bool modinfo_field(const char *field, char *buf, size_t len)
{
	char cmd[512];
	FILE *p;
	bool ok;

	snprintf(cmd, sizeof(cmd), "modinfo -F %s %s", field, kmod_path());
	p = popen(cmd, "r");
	if (!p)
		return false;
	ok = fgets(buf, (int)len, p) != NULL;
	if (pclose(p) != 0)
		ok = false;
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

#endif

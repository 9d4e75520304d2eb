/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests need of the kernel besides their programs' instructions
 * (bpf_insn.h): bpf(2) and the loading and running of raw programs, kernel
 * BTF, the module (load, unload, modinfo), sysfs and procfs files, the
 * kernel log.
 */
#ifndef BPF_ARENA_TESTS_TEST_UTIL_H
#define BPF_ARENA_TESTS_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>

/*
 * bpf(2) with size bytes of attr: what the syscall returns, errno set on
 * failure.  Every helper here reaches the kernel through it; a file that
 * defines TEST_UTIL_SYS_BPF before including this header brings its own
 * (tests/fuzz/dump_progs.c records the programs a test loads).
 */
#ifndef TEST_UTIL_SYS_BPF
static inline long sys_bpf(int cmd, void *attr, unsigned int size)
{
	return syscall(__NR_bpf, cmd, attr, size);
}
#endif

/* bpf(2) with a whole union bpf_attr. */
static inline long bpf_sys(int cmd, union bpf_attr *attr)
{
	return sys_bpf(cmd, attr, sizeof(*attr));
}

/* bpf(2) with a whole union bpf_attr: what the syscall returns, or -errno. */
static inline long bpf_sys_err(int cmd, union bpf_attr *attr)
{
	long r = bpf_sys(cmd, attr);

	return r < 0 ? -errno : r;
}

static inline uint64_t ptr_u64(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* Loads insns; returns a prog fd or -errno, with the verifier log in log. */
static inline int load_prog_flags(enum bpf_prog_type type, const struct bpf_insn *insns,
				  unsigned int cnt, unsigned int flags, char *log, size_t log_size)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = cnt;
	attr.license = ptr_u64("GPL");
	attr.prog_flags = flags;
	if (log && log_size) {
		log[0] = '\0';
		attr.log_buf = ptr_u64(log);
		attr.log_size = log_size;
		attr.log_level = 1;
	}
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	return fd < 0 ? -errno : (int)fd;
}

/* A sleepable SYSCALL program (the type arena kfuncs need, run by test_run). */
static inline int load_syscall_prog(const struct bpf_insn *insns, unsigned int cnt,
				    char *log, size_t log_size)
{
	return load_prog_flags(BPF_PROG_TYPE_SYSCALL, insns, cnt, BPF_F_SLEEPABLE, log, log_size);
}

/* Runs a SYSCALL program on ctx (in and out); returns its r0 or -errno. */
static inline long run_syscall_prog(int fd, void *ctx, size_t ctx_size)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = fd;
	attr.test.ctx_in = ptr_u64(ctx);
	attr.test.ctx_size_in = ctx_size;
	if (bpf_sys(BPF_PROG_TEST_RUN, &attr))
		return -errno;
	return attr.test.retval;
}

/* A sleepable SYSCALL program with an fd_array; returns a prog fd or -errno. */
static inline int load_prog_fd_array(const struct bpf_insn *insns, unsigned int cnt,
				     const int *fds, char *log, size_t log_size)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = cnt;
	attr.license = ptr_u64("GPL");
	attr.fd_array = ptr_u64(fds);
	if (log && log_size) {
		log[0] = '\0';
		attr.log_buf = ptr_u64(log);
		attr.log_size = log_size;
		attr.log_level = 1;
	}
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	return fd < 0 ? -errno : (int)fd;
}

/* Raw BTF: the size of the type record at t (header included), 0 if unknown. */
static inline size_t btf_rec_size(const struct btf_type *t)
{
	unsigned int vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: return sizeof(*t) + 4;
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT:
	case 18 /* TYPE_TAG */:
		return sizeof(*t);
	case BTF_KIND_ARRAY: return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return sizeof(*t) + vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return sizeof(*t) + vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return sizeof(*t) + vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(*t) + 4;
	case BTF_KIND_DATASEC: return sizeof(*t) + vlen * sizeof(struct btf_var_secinfo);
	case 17 /* DECL_TAG */: return sizeof(*t) + 4;
	case 19 /* ENUM64 */: return sizeof(*t) + vlen * 12;
	default: return 0;
	}
}

/* The raw data of BTF object fd (malloc'd) and its name; NULL on error. */
static inline void *btf_raw(int fd, uint32_t *size, char *name, size_t name_len)
{
	struct bpf_btf_info info;
	union bpf_attr attr;
	void *data;

	memset(&info, 0, sizeof(info));
	info.name = ptr_u64(name);
	info.name_len = name_len;
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr))
		return NULL;
	data = malloc(info.btf_size);
	if (!data)
		return NULL;
	*size = info.btf_size;
	memset(&info, 0, sizeof(info));
	info.btf = ptr_u64(data);
	info.btf_size = *size;
	info.name = ptr_u64(name);
	info.name_len = name_len;
	attr.info.info_len = sizeof(info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
		free(data);
		return NULL;
	}
	return data;
}

/*
 * Walks one BTF blob: *nr_types = its type count; returns the local index (1-based)
 * of FUNC `func` or 0.  str_base: the base BTF's string size (split BTF's name
 * offsets continue the base's strings), 0 for vmlinux.
 */
static inline uint32_t btf_walk(const void *data, uint32_t size, const char *func,
				uint32_t str_base, uint32_t *nr_types)
{
	const struct btf_header *h = data;
	const char *types = (const char *)data + h->hdr_len + h->type_off;
	const char *strs = (const char *)data + h->hdr_len + h->str_off;
	uint32_t off = 0, n = 0, found = 0;

	if (size < sizeof(*h) || h->magic != BTF_MAGIC)
		return 0;
	while (off + sizeof(struct btf_type) <= h->type_len) {
		const struct btf_type *t = (const void *)(types + off);
		size_t sz = btf_rec_size(t);

		if (!sz)
			break;
		n++;
		if (func && !found && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC &&
		    t->name_off >= str_base && t->name_off - str_base < h->str_len &&
		    !strcmp(strs + (t->name_off - str_base), func))
			found = n;
		off += sz;
	}
	*nr_types = n;
	return found;
}

/*
 * Finds kernel FUNC `func` in BTF object `btf_name` ("vmlinux" or a module):
 * returns its BTF id (absolute: module ids follow vmlinux's), *btf_fd an open fd of
 * that BTF (caller closes); 0 if not found.
 */
static inline uint32_t find_kernel_func(const char *btf_name, const char *func, int *btf_fd)
{
	uint32_t id = 0, vmlinux_nr = 0, vmlinux_str = 0, result = 0;
	union bpf_attr attr;

	*btf_fd = -1;
	for (;;) {
		char name[64] = "";
		uint32_t size, nr, idx;
		void *data;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.start_id = id;
		if (bpf_sys(BPF_BTF_GET_NEXT_ID, &attr))
			break;
		id = attr.next_id;
		memset(&attr, 0, sizeof(attr));
		attr.btf_id = id;
		fd = bpf_sys(BPF_BTF_GET_FD_BY_ID, &attr);
		if (fd < 0)
			continue;
		data = btf_raw(fd, &size, name, sizeof(name));
		if (!data) {
			close(fd);
			continue;
		}
		if (!strcmp(name, "vmlinux")) {
			idx = btf_walk(data, size, !strcmp(btf_name, "vmlinux") ? func : NULL, 0,
				       &nr);
			vmlinux_nr = nr;
			vmlinux_str = ((const struct btf_header *)data)->str_len;
			if (idx) {
				result = idx;
				*btf_fd = fd;
				free(data);
				break;
			}
		} else if (!strcmp(name, btf_name)) {
			idx = btf_walk(data, size, func, vmlinux_str, &nr);
			if (idx) {
				result = idx;	/* relative until vmlinux_nr is known */
				*btf_fd = fd;
				free(data);
				data = NULL;
				if (vmlinux_nr)
					break;
				continue;
			}
		}
		free(data);
		if (fd != *btf_fd)
			close(fd);
		if (result && vmlinux_nr)
			break;
	}
	if (!result)
		return 0;
	if (strcmp(btf_name, "vmlinux"))
		result += vmlinux_nr;
	return result;
}

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

#endif /* BPF_ARENA_TESTS_TEST_UTIL_H */

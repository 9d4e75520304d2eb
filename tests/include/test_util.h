/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests need of the system besides their programs' instructions
 * (bpf_insn.h): bpf(2) without libbpf (maps, arenas, raw programs, kernel
 * BTF), the module, files of sysfs and procfs, memory figures, faults,
 * capabilities and cgroups.  That part uses nothing of the project, so a
 * test can prove the kernel's ABI with it alone (arena_abi_test).  Two more
 * sections exist where a test included their headers first: /dev/bpf_arena's
 * (<linux/bpf_arena.h>, the module's uapi) and libbpf's (<bpf/libbpf.h>; it
 * also uses libbpfarena's bpf_arena_object_prepare()).  The helpers that
 * fail a test (LOAD_RUN(), obj_run_ctx(), ...) want kselftest_harness.h
 * included first.
 */
#ifndef BPF_ARENA_TESTS_TEST_UTIL_H
#define BPF_ARENA_TESTS_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/capability.h>

#include "bpf_insn.h"

/* The host's <linux/bpf.h> is 6.1's: it has no arena. */
#ifndef BPF_MAP_TYPE_ARENA
#define BPF_MAP_TYPE_ARENA 33
#endif

#define JIT_HARDEN_SYSCTL	"/proc/sys/net/core/bpf_jit_harden"

/* ---- bpf(2) ---- */

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

/* The last n bytes of s (a log's cause is at its end). */
static inline const char *str_tail(const char *s, size_t n)
{
	size_t len = strlen(s);

	return s + (len > n ? len - n : 0);
}

/* BPF_OBJ_GET_INFO_BY_FD into info (len bytes, as the caller prepared it): 0 or -errno. */
static inline int obj_info(int fd, void *info, __u32 len)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = len;
	attr.info.info = ptr_u64(info);
	return bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr) ? -errno : 0;
}

static inline int map_info(int fd, struct bpf_map_info *info)
{
	memset(info, 0, sizeof(*info));
	return obj_info(fd, info, sizeof(*info));
}

static inline int prog_info(int fd, struct bpf_prog_info *info)
{
	memset(info, 0, sizeof(*info));
	return obj_info(fd, info, sizeof(*info));
}

/* The id of map fd, 0 on error. */
static inline __u32 map_id(int fd)
{
	struct bpf_map_info info;

	return map_info(fd, &info) ? 0 : info.id;
}

/* The id of program fd, 0 on error. */
static inline __u32 prog_id(int fd)
{
	struct bpf_prog_info info;

	return prog_info(fd, &info) ? 0 : info.id;
}

/* ---- maps ---- */

/* The attributes of an arena of pages pages, map_flags BPF_F_MMAPABLE | flags. */
static inline void arena_attr(union bpf_attr *a, __u32 pages, __u32 flags, __u64 map_extra)
{
	memset(a, 0, sizeof(*a));
	a->map_type = BPF_MAP_TYPE_ARENA;
	a->key_size = 0;
	a->value_size = 0;
	a->max_entries = pages;
	a->map_flags = BPF_F_MMAPABLE | flags;
	a->map_extra = map_extra;
}

/* An arena made with bpf(2), named name (NULL: no name); fd or -errno. */
static inline int arena_create_named(const char *name, __u32 pages, __u32 flags,
				     __u64 map_extra)
{
	union bpf_attr a;

	arena_attr(&a, pages, flags, map_extra);
	if (name)
		strncpy(a.map_name, name, sizeof(a.map_name) - 1);
	return (int)bpf_sys_err(BPF_MAP_CREATE, &a);
}

/* An arena made with bpf(2); fd or -errno. */
static inline int arena_create(__u32 pages, __u32 flags, __u64 map_extra)
{
	return arena_create_named(NULL, pages, flags, map_extra);
}

/* An arena and, once mapped, its user mapping. */
struct arena {
	int fd;
	char *base;	/* NULL while not mapped */
	size_t size;
};

/*
 * Creates a, pages pages of map_flags BPF_F_MMAPABLE | flags, and with map
 * maps all of it read-write (a is closed if that fails); 0 or -errno.
 */
static inline int arena_open(struct arena *a, __u32 pages, __u32 flags, bool map)
{
	void *p;

	a->fd = arena_create(pages, flags, 0);
	if (a->fd < 0)
		return a->fd;
	a->size = (size_t)pages * getpagesize();
	a->base = NULL;
	if (!map)
		return 0;
	p = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		close(a->fd);
		return err;
	}
	a->base = p;
	return 0;
}

static inline void arena_close(struct arena *a)
{
	if (a->base)
		munmap(a->base, a->size);
	close(a->fd);
}

/* A one-entry ARRAY with 4-byte keys and value_size-byte values; fd or -errno. */
static inline int array_create(__u32 value_size, __u32 map_flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = 1;
	a.map_flags = map_flags;
	return (int)bpf_sys_err(BPF_MAP_CREATE, &a);
}

/* BPF_MAP_UPDATE_ELEM (flags BPF_ANY): 0 or -errno. */
static inline int map_update(int fd, const void *key, const void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = ptr_u64(key);
	a.value = ptr_u64(value);
	return (int)bpf_sys_err(BPF_MAP_UPDATE_ELEM, &a);
}

/* BPF_MAP_LOOKUP_ELEM: 0 or -errno. */
static inline int map_lookup(int fd, const void *key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = ptr_u64(key);
	a.value = ptr_u64(value);
	return (int)bpf_sys_err(BPF_MAP_LOOKUP_ELEM, &a);
}

/* BPF_MAP_FREEZE: 0 or -errno. */
static inline int map_freeze(int fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	return (int)bpf_sys_err(BPF_MAP_FREEZE, &a);
}

/* ---- raw programs ---- */

/*
 * Loads cnt insns as a program of type with prog_flags flags and, if not
 * NULL, fd_array; a prog fd or -errno, the verifier's log in log (if given).
 */
static inline int prog_load(enum bpf_prog_type type, unsigned int flags,
			    const struct bpf_insn *insns, unsigned int cnt, const int *fd_array,
			    char *log, size_t log_size)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = cnt;
	attr.license = ptr_u64("GPL");
	attr.prog_flags = flags;
	attr.fd_array = ptr_u64(fd_array);
	if (log && log_size) {
		log[0] = '\0';
		attr.log_buf = ptr_u64(log);
		attr.log_size = log_size;
		attr.log_level = 1;
	}
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	return fd < 0 ? -errno : (int)fd;
}

static inline int load_prog_flags(enum bpf_prog_type type, const struct bpf_insn *insns,
				  unsigned int cnt, unsigned int flags, char *log, size_t log_size)
{
	return prog_load(type, flags, insns, cnt, NULL, log, log_size);
}

/* A sleepable SYSCALL program (the type arena kfuncs need, run by test_run). */
static inline int load_syscall_prog(const struct bpf_insn *insns, unsigned int cnt,
				    char *log, size_t log_size)
{
	return prog_load(BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, insns, cnt, NULL, log, log_size);
}

/* A sleepable SYSCALL program with an fd_array (module kfuncs). */
static inline int load_prog_fd_array(const struct bpf_insn *insns, unsigned int cnt,
				     const int *fds, char *log, size_t log_size)
{
	return prog_load(BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, insns, cnt, fds, log, log_size);
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

/*
 * Loads cnt insns as a sleepable SYSCALL program (the verifier's log in log,
 * and on stderr if the load fails), runs it once on ctx (copied back) and
 * closes it: r0, or -errno.
 */
static inline long load_run_once(const struct bpf_insn *insns, unsigned int cnt, void *ctx,
				 size_t ctx_size, char *log, size_t log_size)
{
	int fd = load_syscall_prog(insns, cnt, log, log_size);
	long r;

	if (fd < 0) {
		fprintf(stderr, "# load: %s\n%s\n", strerror(-fd), log);
		return fd;
	}
	r = run_syscall_prog(fd, ctx, ctx_size);
	close(fd);
	return r;
}

/*
 * Loads insns (an array) as a sleepable SYSCALL program, failing the test
 * (kselftest_harness.h) with the verifier's log, kept in log, if that fails;
 * runs it once on ctx (an array, copied back) and closes it: r0, or -errno.
 */
#define LOAD_RUN(insns, ctx, log, log_size)					\
	({									\
		int __fd = load_syscall_prog(insns, ARRAY_SIZE(insns), log, log_size); \
		long __r;							\
		if (__fd < 0)							\
			TH_LOG("load: %s\n%s", strerror(-__fd), log);		\
		ASSERT_LE(0, __fd);						\
		__r = run_syscall_prog(__fd, ctx, sizeof(ctx));		\
		close(__fd);							\
		__r;								\
	})

/*
 * The size of the JIT image of cnt insns loaded as a sleepable SYSCALL
 * program; 0 (and the verifier's log on stderr) if the load fails.
 */
static inline __u32 prog_jited_len(const struct bpf_insn *insns, unsigned int cnt, char *log,
				   size_t log_size)
{
	struct bpf_prog_info info;
	int fd = load_syscall_prog(insns, cnt, log, log_size);

	if (fd < 0) {
		fprintf(stderr, "# load: %s\n%s\n", strerror(-fd), log);
		return 0;
	}
	if (prog_info(fd, &info))
		info.jited_prog_len = 0;
	close(fd);
	return info.jited_prog_len;
}

/* ---- kernel BTF ---- */

/* The size of the BTF type record at t, its header included; 0 for a kind unknown here. */
static inline size_t btf_type_size(const struct btf_type *t)
{
	unsigned int vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: return sizeof(*t) + 4;
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return sizeof(*t);
	case BTF_KIND_ARRAY: return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return sizeof(*t) + vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return sizeof(*t) + vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return sizeof(*t) + vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(*t) + 4;
	case BTF_KIND_DATASEC: return sizeof(*t) + vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG: return sizeof(*t) + 4;
	case BTF_KIND_ENUM64: return sizeof(*t) + vlen * sizeof(struct btf_enum64);
	default: return 0;
	}
}

/*
 * The type of kind named name in the raw BTF data (size bytes): its index
 * there (the first type is 1; 0 if absent), and the type in *tp (if tp).
 * str_base: the base BTF's string size (a split BTF's name offsets continue
 * the base's strings), 0 for vmlinux.  *nr_types (if nr_types): how many
 * types data has; name NULL only counts them.
 */
static inline __u32 btf_find(const void *data, __u32 size, __u32 str_base, __u32 kind,
			     const char *name, const struct btf_type **tp, __u32 *nr_types)
{
	const struct btf_header *h = data;
	const char *types, *strs;
	__u32 off = 0, n = 0, found = 0;

	if (nr_types)
		*nr_types = 0;
	if (size < sizeof(*h) || h->magic != BTF_MAGIC ||
	    h->hdr_len + h->type_off + h->type_len > size ||
	    h->hdr_len + h->str_off + h->str_len > size)
		return 0;
	types = (const char *)data + h->hdr_len + h->type_off;
	strs = (const char *)data + h->hdr_len + h->str_off;
	while (off + sizeof(struct btf_type) <= h->type_len) {
		const struct btf_type *t = (const void *)(types + off);
		size_t sz = btf_type_size(t);

		if (!sz)
			break;
		n++;
		if (name && !found && BTF_INFO_KIND(t->info) == kind &&
		    t->name_off >= str_base && t->name_off - str_base < h->str_len &&
		    !strcmp(strs + (t->name_off - str_base), name)) {
			found = n;
			if (tp)
				*tp = t;
			if (!nr_types)
				break;
		}
		off += sz;
	}
	if (nr_types)
		*nr_types = n;
	return found;
}

/* Writes a type record's header at p (a raw BTF being built); returns the end. */
static inline __u32 *btf_put_type(__u32 *p, __u32 name, __u32 kind, __u32 vlen, __u32 size_type)
{
	*p++ = name;
	*p++ = kind << 24 | vlen;
	*p++ = size_type;
	return p;
}

/* The string at name offset off of the raw BTF data (str_base as for btf_find()). */
static inline const char *btf_str(const void *data, __u32 str_base, __u32 off)
{
	const struct btf_header *h = data;

	return (const char *)data + h->hdr_len + h->str_off + (off - str_base);
}

/* /sys/kernel/btf/name (vmlinux or a module) read whole, malloc'd; NULL and errno on error. */
static inline void *btf_sysfs(const char *name, __u32 *size)
{
	char path[128];
	size_t cap = 1 << 20, len = 0;
	char *buf = NULL;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		char *p = realloc(buf, cap);

		if (!p) {
			err = ENOMEM;
			goto fail;
		}
		buf = p;
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			err = errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap)
			cap *= 2;
	}
	close(fd);
	*size = (__u32)len;
	return buf;
fail:
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}

/* The BTF id of FUNC name in vmlinux's BTF (from sysfs: no privilege needed), or -errno. */
static inline int vmlinux_func_id(const char *name)
{
	__u32 size, id;
	void *data = btf_sysfs("vmlinux", &size);

	if (!data)
		return -errno;
	id = btf_find(data, size, 0, BTF_KIND_FUNC, name, NULL, NULL);
	free(data);
	return id ? (int)id : -ENOENT;
}

/* The raw data of BTF object fd (malloc'd) and its name; NULL on error. */
static inline void *btf_raw(int fd, uint32_t *size, char *name, size_t name_len)
{
	struct bpf_btf_info info;
	void *data;

	memset(&info, 0, sizeof(info));
	info.name = ptr_u64(name);
	info.name_len = name_len;
	if (obj_info(fd, &info, sizeof(info)))
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
	if (obj_info(fd, &info, sizeof(info))) {
		free(data);
		return NULL;
	}
	return data;
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
			idx = btf_find(data, size, 0, BTF_KIND_FUNC,
				       !strcmp(btf_name, "vmlinux") ? func : NULL, NULL, &nr);
			vmlinux_nr = nr;
			vmlinux_str = ((const struct btf_header *)data)->str_len;
			if (idx) {
				result = idx;
				*btf_fd = fd;
				free(data);
				break;
			}
		} else if (!strcmp(name, btf_name)) {
			idx = btf_find(data, size, vmlinux_str, BTF_KIND_FUNC, func, NULL, &nr);
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

/* ---- files of sysfs, procfs, cgroupfs ---- */

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

/* The number a sysfs/proc file starts with ("max": 0); -1 if it cannot be read. */
static inline long long read_num(const char *path)
{
	char buf[64];

	return read_line(path, buf, sizeof(buf)) ? strtoll(buf, NULL, 10) : -1;
}

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

/* Writes v in decimal to a sysfs/proc file; false on error. */
static inline bool write_num(const char *path, long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld", v);
	return write_str(path, s);
}

/*
 * Runs shell command cmd, its output in out (size bytes, NUL-terminated):
 * its exit status, -1 if it did not exit.
 */
static inline int run_cmd(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	if (!p)
		return -1;
	while (n + 1 < size) {
		size_t r = fread(out + n, 1, size - 1 - n, p);

		if (!r)
			break;
		n += r;
	}
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- the module ---- */

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

/* Sets the module's kfuncs_sleepable_only parameter (no module, as on 6.12: nothing). */
static inline void kmod_sleepable_only(bool on)
{
	write_str("/sys/module/" BPF_ARENA_MODNAME "/parameters/kfuncs_sleepable_only",
		  on ? "Y" : "N");
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

/*
 * The BTF id of kfunc name, as libbpf resolves a __ksym: in vmlinux (*btf_fd
 * 0; 6.12), else in the module's BTF (*btf_fd an fd of it, the caller
 * closes it; 6.1).  -errno if neither has it.
 */
static inline int kfunc_btf_id(const char *name, int *btf_fd)
{
	int id;

	*btf_fd = 0;
	id = vmlinux_func_id(name);
	if (id > 0 || !kmod_is_loaded())
		return id;
	id = (int)find_kernel_func(BPF_ARENA_MODNAME, name, btf_fd);
	if (!id) {
		if (*btf_fd >= 0)
			close(*btf_fd);
		*btf_fd = 0;
		return -ENOENT;
	}
	return id;
}

/*
 * Runs a sleepable SYSCALL program doing
 *   alloc: r0 = bpf_arena_alloc_pages(map, addr, cnt, -1, 0); return r0 != 0;
 *   free:  bpf_arena_free_pages(map, addr, cnt); return 1;
 * with the kfunc resolved as kfunc_btf_id() does.  The program's return
 * value (1 on success), or -errno; the verifier's log in log (if given).
 */
static inline int arena_kfunc_run(int map_fd, bool alloc, __u64 addr, __u32 cnt, char *log,
				  size_t log_size)
{
	int btf_fd, id = kfunc_btf_id(alloc ? "bpf_arena_alloc_pages" : "bpf_arena_free_pages",
				      &btf_fd);
	int fds[2] = { -1, btf_fd }, fd;
	unsigned int n;
	struct bpf_insn p[] = {
		I_LD_MAP_FD(BPF_REG_1, map_fd),
		I_LD_IMM64(BPF_REG_2, addr),
		I_MOV64_IMM(BPF_REG_3, (__s32)cnt),
		I_MOV64_IMM(BPF_REG_4, -1),
		I_MOV64_IMM(BPF_REG_5, 0),
		I_CALL_KFUNC(id, btf_fd ? 1 : 0),
		/* alloc: return r0 != 0; free (void): return 1 */
		alloc ? I_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2) : I_MOV64_IMM(BPF_REG_0, 1),
		I_MOV64_IMM(BPF_REG_0, 1),
		I_EXIT(),
		I_MOV64_IMM(BPF_REG_0, 0),
		I_EXIT(),
	};
	long ret;

	if (id <= 0)
		return id ?: -ENOENT;
	/* free: the tail after the first exit would be unreachable */
	n = sizeof(p) / sizeof(p[0]) - (alloc ? 0 : 2);
	fd = load_prog_fd_array(p, n, btf_fd ? fds : NULL, NULL, 0);
	if (fd < 0 && log && log_size)	/* again, for the verifier's reason */
		fd = load_prog_fd_array(p, n, btf_fd ? fds : NULL, log, log_size);
	if (btf_fd)
		close(btf_fd);
	if (fd < 0)
		return fd;
	ret = run_syscall_prog(fd, NULL, 0);
	close(fd);
	return (int)ret;
}

/* ---- the kernel ---- */

/* True on kernels with in-tree BPF arena (6.9+), where the module is an inactive stub. */
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

/* ---- memory ---- */

/* The value of key ("MemFree", "VmallocUsed", ...) in /proc/meminfo, in KiB; -1 if absent. */
static inline long long meminfo_kib(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	size_t n = strlen(key);
	long long v = -1;
	char line[128];

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = atoll(line + n + 1);
			break;
		}
	}
	if (f)
		fclose(f);
	return v;
}

/*
 * Free memory as the allocator sees it, in KiB: MemFree plus the pages freed
 * onto the per-CPU lists (/proc/zoneinfo's "count:"), which MemFree and
 * MemAvailable do not count until they are drained back (up to tens of MiB
 * on a small machine), so that where a page is freed does not look like a
 * page kept (measured: MemFree alone moved by up to 27 MB over
 * arena_dev_test while MemFree + those lists stayed within 0.5 MB); -1 on
 * error.
 */
static inline long long free_kib(void)
{
	long long pcp = 0, free = meminfo_kib("MemFree");
	FILE *f = fopen("/proc/zoneinfo", "r");
	char line[128];
	long long n;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %lld", &n) == 1)
			pcp += n;
	if (f)
		fclose(f);
	return free < 0 ? -1 : free + pcp * (getpagesize() / 1024);
}

/* ---- faults ---- */

/* How the last access_faults() that faulted did: signal, si_code, address. */
static volatile int fault_signo __attribute__((unused)), fault_code __attribute__((unused));
static void *volatile fault_addr __attribute__((unused));
static sigjmp_buf fault_jmp __attribute__((unused));

static inline void fault_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	fault_signo = sig;
	fault_addr = si->si_addr;
	fault_code = si->si_code;
	siglongjmp(fault_jmp, 1);
}

/*
 * Reads p, or writes 0x5a to it; true if that raised SIGSEGV or SIGBUS (the
 * process lives on), fault_signo/addr/code say how.
 */
static inline bool access_faults(volatile char *p, bool write)
{
	struct sigaction sa, old_segv, old_bus;
	volatile bool faulted = false;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	fault_signo = 0;
	fault_addr = NULL;
	fault_code = 0;
	if (sigsetjmp(fault_jmp, 1) == 0) {
		if (write)
			*p = 0x5a;
		else
			(void)*p;
	} else {
		faulted = true;
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return faulted;
}

/* ---- capabilities, cgroups, time ---- */

/* Sets the calling thread's effective and permitted capabilities to caps (a bit mask). */
static inline int set_caps(__u64 caps)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {
		{ (__u32)caps, (__u32)caps, 0 },
		{ (__u32)(caps >> 32), (__u32)(caps >> 32), 0 },
	};

	return (int)syscall(SYS_capset, &hdr, data);
}

#define CG_ROOT "/sys/fs/cgroup"

/* cgroup v2 at CG_ROOT, the memory controller on for its children; false if impossible. */
static inline bool memcg_enable(void)
{
	mkdir(CG_ROOT, 0755);
	if (access(CG_ROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		return false;
	return write_str(CG_ROOT "/cgroup.subtree_control", "+memory");
}

/* Moves process pid into the cgroup directory cg; false on error. */
static inline bool cg_move(const char *cg, pid_t pid)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	return write_num(path, pid);
}

/* CLOCK_MONOTONIC in seconds. */
static inline double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * ---- /dev/bpf_arena ----
 * Defined where the test included <linux/bpf_arena.h>, the module's uapi,
 * before this header.
 */
#ifdef BPF_ARENA_DEV_PATH
#include <sys/ioctl.h>

static inline bool have_dev(void)
{
	return access(BPF_ARENA_DEV_PATH, F_OK) == 0;
}

/* Skips the test where there is no device (a kernel with native arena). */
#define NEED_DEV()								\
	do {									\
		if (!have_dev())						\
			SKIP(return, "no " BPF_ARENA_DEV_PATH ": the bpf_arena module is not loaded (native arena kernel)"); \
	} while (0)

static inline int dev_open(void)
{
	return open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
}

/*
 * ioctl(2): what it returns, or -errno.  The device helpers below call it;
 * a file that defines TEST_UTIL_XIOCTL before including this header brings
 * its own (the stress load injects faults into its own calls).
 */
#ifndef TEST_UTIL_XIOCTL
static inline long xioctl(int fd, unsigned long cmd, void *arg)
{
	long r = ioctl(fd, cmd, arg);

	return r < 0 ? -errno : r;
}
#endif

/* BPF_ARENA_IOC_CONFIGURE: pages pages, map_flags flags, map_extra, any NUMA node. */
static inline int dev_configure(int fd, __u32 flags, __u32 pages, __u64 map_extra)
{
	struct bpf_arena_config c = { .size = sizeof(c), .map_flags = flags,
				      .max_entries = pages, .numa_node = -1,
				      .map_extra = map_extra };

	return (int)xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c);
}

/* BPF_ARENA_IOC_ALLOC_PAGES of cnt pages at addr (0: anywhere), the address in *out. */
static inline long dev_alloc(int fd, __u64 addr, __u32 cnt, __u64 *out)
{
	struct bpf_arena_alloc a = { .size = sizeof(a), .page_cnt = cnt,
				     .addr = addr, .node_id = -1 };
	long r = xioctl(fd, BPF_ARENA_IOC_ALLOC_PAGES, &a);

	if (!r && out)
		*out = a.addr;
	return r;
}

/* cmd (BPF_ARENA_IOC_FREE_PAGES or _PREFAULT) on cnt pages at addr. */
static inline long dev_range(int fd, unsigned long cmd, __u64 addr, __u32 cnt)
{
	struct bpf_arena_range r = { .size = sizeof(r), .page_cnt = cnt, .addr = addr };

	return xioctl(fd, cmd, &r);
}

static inline long dev_attach(int fd, int map_fd)
{
	struct bpf_arena_attach at = { .size = sizeof(at), .map_fd = map_fd };

	return xioctl(fd, BPF_ARENA_IOC_ATTACH, &at);
}

/* BPF_ARENA_IOC_MAP_FD: a new map fd of the arena, or -errno. */
static inline long dev_map_fd(int fd)
{
	struct bpf_arena_map_fd m = { .size = sizeof(m) };
	long r = xioctl(fd, BPF_ARENA_IOC_MAP_FD, &m);

	return r ? r : m.fd;
}

/*
 * The pages allocated in the handle's arena (BPF_ARENA_IOC_INSPECT with
 * map_id 0), or -errno.  A plain ioctl(), never a file's own xioctl(): the
 * stress load counts pages with no fault injected.
 */
static inline long dev_pages_allocated(int fd)
{
	struct bpf_arena_inspect s = { .size = sizeof(s) };

	return ioctl(fd, BPF_ARENA_IOC_INSPECT, &s) ? -errno : (long)s.pages;
}
#endif /* BPF_ARENA_DEV_PATH */

/*
 * ---- libbpfarena ----
 * Defined where the test included bpf_arena_lib.h before this header.
 */
#ifdef BPF_ARENA_LIB_H
/* libbpfarena's messages since the last lib_capture(), debug ones left out. */
static char lib_msgs[8192] __attribute__((unused));

static inline int lib_keep(enum bpf_arena_print_level level, const char *fmt, va_list args)
{
	size_t len = strlen(lib_msgs);

	if (level == BPF_ARENA_DEBUG || len >= sizeof(lib_msgs) - 1)
		return 0;
	vsnprintf(lib_msgs + len, sizeof(lib_msgs) - len, fmt, args);
	return 0;
}

/* From now on libbpfarena's messages are kept in lib_msgs (emptied here). */
static inline void lib_capture(void)
{
	lib_msgs[0] = 0;
	bpf_arena_set_print(lib_keep);
}
#endif /* BPF_ARENA_LIB_H */

/*
 * ---- libbpf ----
 * Defined where the test included <bpf/libbpf.h> before this header.  The
 * objects a test embeds come from tests/progs/ (tests/progs/progs.mk builds
 * them into BPF_OBJ_DIR).
 */
#ifdef LIBBPF_MAJOR_VERSION
#include <stdarg.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "bpf_arena_libbpf.h"

/* Embeds BPF_OBJ_DIR/file in the test binary: sym##_start[] to sym##_end[]. */
#define EMBED(sym, file)							\
	extern const char sym##_start[], sym##_end[];				\
	__asm__(".pushsection .rodata\n.balign 8\n.global " #sym "_start\n"	\
		#sym "_start:\n.incbin \"" BPF_OBJ_DIR "/" file "\"\n"		\
		".global " #sym "_end\n" #sym "_end:\n.popsection\n")

/* An embedded object and the name libbpf gives it (its maps' names follow). */
struct obj_img {
	const char *name;
	const char *start, *end;
};

#define IMG(n, sym) { n, sym##_start, sym##_end }

/*
 * libbpf's messages, but debug ones, go to stderr as KTAP comments, unless
 * the test captures them (libbpf_capture()).
 */
static inline int libbpf_print_ktap(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	fprintf(stderr, "# ");
	return vfprintf(stderr, fmt, args);
}

static void __attribute__((constructor, unused)) libbpf_print_ktap_init(void)
{
	libbpf_set_print(libbpf_print_ktap);
}

/* libbpf's messages since the last libbpf_capture(), debug ones included. */
static char libbpf_msgs[1 << 20] __attribute__((unused));
static size_t libbpf_msgs_len __attribute__((unused));
static bool libbpf_msgs_echo __attribute__((unused));

static inline int libbpf_keep(enum libbpf_print_level level, const char *fmt, va_list args)
{
	va_list copy;
	int n;

	va_copy(copy, args);
	if (libbpf_msgs_len < sizeof(libbpf_msgs) - 1) {
		n = vsnprintf(libbpf_msgs + libbpf_msgs_len, sizeof(libbpf_msgs) - libbpf_msgs_len,
			      fmt, copy);
		if (n > 0)
			libbpf_msgs_len += (size_t)n;
		if (libbpf_msgs_len > sizeof(libbpf_msgs) - 1)
			libbpf_msgs_len = sizeof(libbpf_msgs) - 1;
	}
	va_end(copy);
	if (!libbpf_msgs_echo || (level == LIBBPF_DEBUG && !getenv("TEST_LIBBPF_DEBUG")))
		return 0;
	fprintf(stderr, "# ");
	return vfprintf(stderr, fmt, args);
}

/*
 * From now on libbpf's messages are kept in libbpf_msgs (emptied here), and
 * with echo also shown on stderr as KTAP comments (debug ones too with
 * TEST_LIBBPF_DEBUG=1 in the environment).
 */
static inline void libbpf_capture(bool echo)
{
	libbpf_msgs_len = 0;
	libbpf_msgs[0] = 0;
	libbpf_msgs_echo = echo;
	libbpf_set_print(libbpf_keep);
}

/* Tunes a loaded object before bpf_object__load(). */
typedef void (*obj_tune_fn)(struct bpf_object *obj, void *arg);

/*
 * Opens img, autoloads only the programs named in the NULL-terminated list
 * (NULL list: all), sets map "arena"'s map_extra, lets tune adjust, prepares
 * the arenas and loads.  *objp is set either way; returns the load's result,
 * with the verifier log in log (if given).
 */
static inline int obj_open_load(const struct obj_img *img, struct bpf_object **objp,
			       const char *const *only, __u64 map_extra, obj_tune_fn tune,
			       void *arg, char *log, size_t log_sz)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = img->name,
		    .kernel_log_buf = log, .kernel_log_size = log ? log_sz : 0,
		    .kernel_log_level = log ? 1 : 0);
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *map;
	int err;

	*objp = NULL;
	obj = bpf_object__open_mem(img->start, (size_t)(img->end - img->start), &oo);
	if (libbpf_get_error(obj))
		return (int)libbpf_get_error(obj);
	*objp = obj;
	if (only) {
		bpf_object__for_each_program(prog, obj) {
			bool me = false;
			unsigned int i;

			for (i = 0; only[i]; i++)
				me |= !strcmp(bpf_program__name(prog), only[i]);
			bpf_program__set_autoload(prog, me);
		}
	}
	map = bpf_object__find_map_by_name(obj, "arena");
	if (!map)
		return -ENOENT;
	if (map_extra && bpf_map__set_map_extra(map, map_extra))
		return -EINVAL;
	if (tune)
		tune(obj, arg);
	err = bpf_arena_object_prepare(obj);
	if (err)
		return err;
	return bpf_object__load(obj);
}

static inline int obj_prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	return p ? bpf_program__fd(p) : -ENOENT;
}

/*
 * Test-runs program name once: SEC("syscall") with no context, SEC("tc")
 * and SEC("xdp") with a 64-byte packet, fentry with none.  The program's
 * return value in *retval; 0 or -errno.
 */
static inline int obj_run(struct bpf_object *obj, const char *name, __u32 *retval)
{
	static char pkt[64];
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);
	LIBBPF_OPTS(bpf_test_run_opts, o);
	enum bpf_prog_type t;

	if (!p)
		return -ENOENT;
	t = bpf_program__type(p);
	if (t == BPF_PROG_TYPE_SCHED_CLS || t == BPF_PROG_TYPE_XDP) {
		o.data_in = pkt;
		o.data_size_in = sizeof(pkt);
	}
	if (bpf_prog_test_run_opts(bpf_program__fd(p), &o))
		return -errno;
	*retval = o.retval;
	return 0;
}

/* Reads (write false) or writes global var of .bss/.data; 0 or -errno. */
static inline int obj_global(struct bpf_object *obj, const char *var, void *val, size_t size,
			    bool write)
{
	static const char *const secs[] = { ".bss", ".data" };
	struct btf *btf = bpf_object__btf(obj);
	static char buf[65536];
	unsigned int s;

	if (!btf)
		return -ENOENT;
	for (s = 0; s < 2; s++) {
		int id = btf__find_by_name_kind(btf, secs[s], BTF_KIND_DATASEC);
		struct bpf_map *map, *found = NULL;
		const struct btf_var_secinfo *vs;
		const struct btf_type *t;
		__u32 key = 0;
		int i;

		if (id < 0)
			continue;
		t = btf__type_by_id(btf, (__u32)id);
		bpf_object__for_each_map(map, obj) {
			const char *mn = bpf_map__name(map);
			size_t n = strlen(mn);

			if (bpf_map__is_internal(map) && n >= strlen(secs[s]) &&
			    !strcmp(mn + n - strlen(secs[s]), secs[s]))
				found = map;
		}
		if (!found || bpf_map__value_size(found) > sizeof(buf))
			return -ENOENT;
		vs = btf_var_secinfos(t);
		for (i = 0; i < btf_vlen(t); i++, vs++) {
			const struct btf_type *v = btf__type_by_id(btf, vs->type);

			if (strcmp(btf__name_by_offset(btf, v->name_off), var))
				continue;
			if (vs->size != size)
				return -EINVAL;
			if (bpf_map_lookup_elem(bpf_map__fd(found), &key, buf))
				return -errno;
			if (!write) {
				memcpy(val, buf + vs->offset, size);
				return 0;
			}
			memcpy(buf + vs->offset, val, size);
			return bpf_map_update_elem(bpf_map__fd(found), &key, buf, 0) ? -errno : 0;
		}
	}
	return -ENOENT;
}
/*
 * Opens the object embedded at start..end and loads only its program name,
 * libbpf's messages captured (libbpf_capture()): that program's fd, or
 * -errno; *objp is the object (NULL if it did not open).
 */
static inline int obj_load_one(const char *start, const char *end, const char *name,
			       struct bpf_object **objp)
{
	struct bpf_program *p;
	struct bpf_object *obj;
	int err;

	libbpf_capture(false);
	*objp = NULL;
	obj = bpf_object__open_mem(start, (size_t)(end - start), NULL);
	if (libbpf_get_error(obj))
		return -EINVAL;
	*objp = obj;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	err = bpf_object__load(obj);
	return err ?: obj_prog_fd(obj, name);
}

/* Sets __u32 global var of .bss/.data; 0 or -errno. */
static inline int obj_set_u32(struct bpf_object *obj, const char *var, __u32 v)
{
	return obj_global(obj, var, &v, sizeof(v), true);
}

#ifdef TH_LOG	/* kselftest_harness.h */
/* Test-runs program p on ctx (copied back), failing the test if the run fails; its r0. */
static inline __u32 prog_run_ctx(struct __test_metadata *_metadata, struct bpf_program *p,
				 void *ctx, size_t ctx_sz)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = ctx, .ctx_size_in = (__u32)ctx_sz);

	ASSERT_EQ(0, bpf_prog_test_run_opts(bpf_program__fd(p), &o))
		TH_LOG("test_run %s: %s", bpf_program__name(p), strerror(errno));
	return o.retval;
}

/* prog_run_ctx() of obj's program name, failing the test if there is none. */
static inline __u32 obj_run_ctx(struct __test_metadata *_metadata, struct bpf_object *obj,
				const char *name, void *ctx, size_t ctx_sz)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	ASSERT_NE(NULL, p) TH_LOG("no program %s", name);
	return prog_run_ctx(_metadata, p, ctx, ctx_sz);
}
#endif /* TH_LOG */
#endif /* LIBBPF_MAJOR_VERSION */

#endif /* BPF_ARENA_TESTS_TEST_UTIL_H */

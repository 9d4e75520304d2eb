/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libbpfarena internals shared by the files in lib/src; not installed. */
#ifndef BPF_ARENA_LIB_INTERNAL_H
#define BPF_ARENA_LIB_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/bpf.h>

#include "bpf_arena_lib.h"

#define BA_API __attribute__((visibility("default")))
#define BA_PRINTF(a, b) __attribute__((format(printf, a, b)))

#ifndef BPF_F_NUMA_NODE_FLAG
#define BPF_F_NUMA_NODE_FLAG (1U << 2)	/* BPF_F_NUMA_NODE, an enum in linux/bpf.h */
#endif

struct bpf_arena {
	void *base;
	size_t size;
	__u32 page_cnt;
	__u32 map_flags;
	__u64 map_extra;
	enum bpf_arena_backend backend;
	bool owns_mapping;	/* false: borrowed, not unmapped on destroy */
	pthread_mutex_t lock;	/* guards the lazily created fds below */
	int map_fd;		/* -1 until created (device path) */
	int dev_fd;		/* /dev/bpf_arena handle, -1 until needed */
};

/* print.c */
void lbpfa_print(enum bpf_arena_print_level level, const char *fmt, ...) BA_PRINTF(2, 3);
#define pr_warn(fmt, ...)  lbpfa_print(BPF_ARENA_WARN, "libbpfarena: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)  lbpfa_print(BPF_ARENA_INFO, "libbpfarena: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) lbpfa_print(BPF_ARENA_DEBUG, "libbpfarena: " fmt, ##__VA_ARGS__)

/* Returns err (a negative errno or >= 0), setting errno if negative. */
static inline int lbpfa_err(int err)
{
	if (err < 0)
		errno = -err;
	return err;
}

/* strerror() that is thread-safe and never fails (errors.c). */
const char *lbpfa_strerror(int err, char *buf, size_t len);
#define BA_ERRSTR_LEN 64

/* opts.c: validated creation parameters. */
struct lbpfa_params {
	__u32 page_cnt;
	__u32 map_flags;	/* with BPF_ARENA_F_MMAPABLE */
	__s32 numa_node;	/* -1 unless BPF_F_NUMA_NODE */
	__u64 map_extra;
	char name[BPF_OBJ_NAME_LEN];
};
int lbpfa_parse_opts(const char *func, __u32 page_cnt,
		  const struct bpf_arena_create_opts *opts, struct lbpfa_params *p);

/*
 * errors.c: why an arena creation with these parameters got err (< 0), in
 * the caller's numbers; buf (BA_HINT_LEN) may hold the text.
 */
#define BA_HINT_LEN 384
const char *lbpfa_create_hint(int err, const struct lbpfa_params *p, char *buf, size_t len);

/*
 * kernel_ready.c: if the kernel has no arena for us (none of its own, module
 * not loaded), what to do, into buf (BA_HINT_LEN), and true; else false.
 */
bool lbpfa_no_arena_text(char *buf, size_t len);
/* Why the caller may not open the device and who can change that, into buf. */
void lbpfa_dev_access_text(char *buf, size_t len);

/* sys.c */
size_t lbpfa_page_size(void);
long lbpfa_sys_bpf(int cmd, union bpf_attr *attr, unsigned int size);
int lbpfa_map_info(int map_fd, struct bpf_map_info *info);	/* 0 or -errno */

/* arena.c: allocation and mapping of struct bpf_arena. */
/* A zeroed arena with no fds or mapping yet; NULL (with a message) if out of memory. */
struct bpf_arena *lbpfa_alloc(const char *func, __u32 page_cnt, __u32 map_flags,
			       __u64 map_extra, enum bpf_arena_backend backend);
/* The backend of an arena made through bpf(): the native kernel or the module. */
enum bpf_arena_backend lbpfa_bpf_backend(void);
/*
 * The common start of bpf_arena_create*(): checks the out-pointer, clears
 * it and parses opts into p.  0 or -errno (with a message).
 */
int lbpfa_create_begin(const char *func, __u32 page_cnt,
		       const struct bpf_arena_create_opts *opts,
		       struct bpf_arena **arena, struct lbpfa_params *p);
void lbpfa_free(struct bpf_arena *a);	/* closes fds, unmaps if owned */
/*
 * Maps fd (a map or device fd) for a: at addr (MAP_FIXED_NOREPLACE) if not
 * NULL, else where the kernel chooses.  0 or -errno, without a message.
 */
int lbpfa_mmap(struct bpf_arena *a, int fd, void *addr);
/* Finishes a successful creation: *out = a, debug message, returns 0. */
int lbpfa_publish(struct bpf_arena *a, const char *how, struct bpf_arena **out);

/* maps.c: is [addr, addr + size) exactly one arena-like mapping of ours? */
bool lbpfa_find_mapping(uintptr_t addr, size_t size);
/* Calls fn(start, ctx) for every bpf-map/bpf_arena mapping of exactly size bytes. */
int lbpfa_for_each_mapping(size_t size, int (*fn)(uintptr_t start, void *ctx), void *ctx);

/*
 * device.c: a new /dev/bpf_arena fd, or a's (attached on first use), or
 * -errno (-EOPNOTSUPP: no device); func names the caller in the warning,
 * NULL for none.
 */
int lbpfa_dev_open(const char *func);
int lbpfa_dev_handle(struct bpf_arena *a, const char *func);
bool lbpfa_dev_present(void);

/* probe.c */
bool lbpfa_module_present(void);

#endif /* BPF_ARENA_LIB_INTERNAL_H */

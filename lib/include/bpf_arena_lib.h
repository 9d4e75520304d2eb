/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libbpfarena: BPF arenas (BPF_MAP_TYPE_ARENA, Linux 6.9+) from user space,
 * on kernels with a native arena and on older kernels running the bpf_arena
 * module (bpf-arena-dkms).
 *
 * Conventions, as in libbpf:
 *
 * - Every function that can fail returns 0 (or a non-negative count) on
 *   success and a negative errno on failure, and then also sets errno to the
 *   positive value.  Functions returning a pointer or a size cannot fail.
 * - Every failure emits one message naming its cause through the print
 *   callback (bpf_arena_set_print()).  Messages start with "libbpfarena: ".
 * - Optional arguments come in an options struct whose first member is its
 *   size (BPF_ARENA_OPTS() fills it in), so the struct can grow.
 *
 * Thread safety: a struct bpf_arena may be used by several threads at once
 * (page operations, accessors, guarded copies), but bpf_arena_destroy() must
 * not race with any other use of the same arena.
 */
#ifndef BPF_ARENA_LIB_H
#define BPF_ARENA_LIB_H

#include <stdarg.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/bpf_arena.h>	/* BPF_ARENA_F_*, struct bpf_arena_inspect */

#ifdef __cplusplus
extern "C" {
#endif

#define BPF_ARENA_LIB_VERSION_MAJOR 0
#define BPF_ARENA_LIB_VERSION_MINOR 1
#define BPF_ARENA_LIB_VERSION_PATCH 0
#define BPF_ARENA_LIB_VERSION_STRING "0.1.0"

/* The library's version, "MAJOR.MINOR.PATCH" (BPF_ARENA_LIB_VERSION_STRING of the build). */
const char *bpf_arena_lib_version(void);

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */

enum bpf_arena_print_level {
	BPF_ARENA_WARN,		/* a call failed; the message names the cause */
	BPF_ARENA_INFO,		/* something the caller may want to know */
	BPF_ARENA_DEBUG,	/* details, and expected failures (a guarded copy's EFAULT) */
};

typedef int (*bpf_arena_print_fn_t)(enum bpf_arena_print_level level,
				    const char *format, va_list args);

/*
 * Sets the function that receives every message and returns the previous one.
 * The default prints BPF_ARENA_WARN and BPF_ARENA_INFO messages to stderr and
 * drops BPF_ARENA_DEBUG ones; NULL silences the library.  The format already
 * carries the "libbpfarena: " prefix and ends with a newline.  The callback
 * may be called from any thread that calls into the library (never from a
 * signal handler); errno is preserved across it.
 */
bpf_arena_print_fn_t bpf_arena_set_print(bpf_arena_print_fn_t fn);

/* ------------------------------------------------------------------------ */
/* Creation                                                                  */

struct bpf_arena;	/* opaque */

struct bpf_arena_create_opts {
	size_t sz;		/* sizeof(struct bpf_arena_create_opts) */
	/*
	 * BPF map flags.  BPF_ARENA_F_MMAPABLE is always added.  Arena maps
	 * accept BPF_ARENA_F_SEGV_ON_FAULT and BPF_ARENA_F_NO_USER_CONV; the
	 * kernel (or the module) rejects others with EINVAL.
	 */
	__u32 map_flags;
	/*
	 * NUMA node of the arena's own data structures, used only when map_flags
	 * holds BPF_F_NUMA_NODE (1U << 2), as with BPF_MAP_CREATE.  Note: the
	 * upstream arena rejects BPF_F_NUMA_NODE (EINVAL), so on a native kernel
	 * this is for completeness only; bpf_arena_create_dev() passes it to the
	 * device as bpf_arena_config.numa_node and does not pass the flag.
	 * Pages are placed per allocation (bpf_arena_user_alloc_pages()'s node_id).
	 */
	__s32 numa_node;
	/*
	 * Fixed user address of the arena (page aligned; the range must not
	 * cross a 4 GiB boundary), or 0 to let the kernel choose.
	 */
	__u64 map_extra;
	/* BPF map name; longer than 15 characters is truncated.  NULL: none. */
	const char *name;
};

/* Declares and zero-fills a struct bpf_arena_create_opts NAME, with sz set. */
#define BPF_ARENA_OPTS(NAME, ...)					\
	struct bpf_arena_create_opts NAME = {				\
		.sz = sizeof(struct bpf_arena_create_opts),		\
		__VA_ARGS__						\
	}

/*
 * Creates an arena of page_cnt pages with the bpf() syscall (BPF_MAP_CREATE
 * of type 33, key and value size 0) and maps it MAP_SHARED read-write: at
 * opts->map_extra if set (never replacing an existing mapping: EEXIST if the
 * range is in use), else where the kernel chooses.  Works on kernels with a
 * native arena and on kernels where the bpf_arena module handles bpf().
 * opts may be NULL.  On success *arena is the new arena and 0 is returned.
 * The kernel's errno is returned as is (EINVAL: bad flags, page_cnt 0, or an
 * unaligned map_extra; E2BIG: larger than 4 GiB; ERANGE: map_extra range
 * crosses a 4 GiB boundary; EPERM: no CAP_BPF), with a message saying which.
 */
int bpf_arena_create(__u32 page_cnt, const struct bpf_arena_create_opts *opts,
		     struct bpf_arena **arena);

/*
 * Creates an arena through the module's device: opens /dev/bpf_arena,
 * configures it (BPF_ARENA_IOC_CONFIGURE with the same rules and errnos as
 * bpf_arena_create()) and maps the device fd.  The BPF map fd is created on
 * first use (bpf_arena_map_fd()).  Needs the bpf_arena module: where
 * /dev/bpf_arena does not exist (e.g. a kernel with native arena) it returns
 * -EOPNOTSUPP.
 */
int bpf_arena_create_dev(__u32 page_cnt, const struct bpf_arena_create_opts *opts,
			 struct bpf_arena **arena);

/*
 * Wraps an existing arena map, e.g. one libbpf created.  map_fd is not taken
 * over: the arena holds its own duplicate.  BPF_OBJ_GET_INFO_BY_FD gives the
 * size and map_extra; then:
 *
 * - map_extra set: maps the arena there; if this process already maps the
 *   arena there (libbpf does), that mapping is used ("borrowed": it is not
 *   unmapped by bpf_arena_destroy() and must outlive the struct bpf_arena).
 * - no map_extra and the arena was never mapped: maps it where the kernel
 *   chooses.
 * - no map_extra and the arena's address is already fixed by an earlier
 *   mapping: every mapping of an arena must be at that address.  The
 *   bpf_arena module reports it (BPF_ARENA_IOC_GET_INFO), and the arena is
 *   mapped (or this process's mapping borrowed) there.  A native kernel
 *   does not report it: if this process still maps the arena, the mapping
 *   is found in /proc/self/maps (a bpf-map mapping of the arena's exact size
 *   for which the kernel confirms that the arena lives at its start) and
 *   borrowed; otherwise (mapped only by another process, or unmapped since)
 *   this fails with -EBUSY: pass the address to bpf_arena_from_map_fd_at().
 *
 * The size is the map's max_entries pages: an arena whose first mapping
 * had another length (the kernel allows that without map_extra) cannot be
 * wrapped.  A non-arena map gives -EINVAL.
 */
int bpf_arena_from_map_fd(int map_fd, struct bpf_arena **arena);

/*
 * As bpf_arena_from_map_fd(), at a known user address addr (page aligned):
 * borrows this process's existing mapping of the arena at addr, or maps the
 * arena there (never replacing another mapping).  The kernel refuses (EINVAL)
 * an address other than the arena's.  addr NULL: as bpf_arena_from_map_fd().
 */
int bpf_arena_from_map_fd_at(int map_fd, void *addr, struct bpf_arena **arena);

/*
 * Unmaps the arena (unless the mapping was borrowed) and closes the library's
 * fds.  The arena's memory lives on while any other fd, mapping or BPF
 * program holds the map.  NULL is ignored.  errno is preserved.
 */
void bpf_arena_destroy(struct bpf_arena *arena);

/* ------------------------------------------------------------------------ */
/* Accessors (cannot fail)                                                   */

enum bpf_arena_backend {
	BPF_ARENA_BACKEND_KERNEL = 1,	/* the kernel's own arena (6.9+) */
	BPF_ARENA_BACKEND_MODULE = 2,	/* the bpf_arena module */
};

/* The user address of the arena's first byte. */
void *bpf_arena_base(const struct bpf_arena *arena);
/* The arena's size in bytes (page_cnt * page size). */
size_t bpf_arena_size(const struct bpf_arena *arena);
/* The arena's size in pages (the map's max_entries). */
__u32 bpf_arena_page_cnt(const struct bpf_arena *arena);
/* The map flags the arena was created with (BPF_ARENA_F_MMAPABLE included). */
__u32 bpf_arena_map_flags(const struct bpf_arena *arena);
/* Which implementation backs the arena. */
enum bpf_arena_backend bpf_arena_backend(const struct bpf_arena *arena);

/*
 * The arena's BPF map fd, owned by the arena (closed by bpf_arena_destroy();
 * dup() it to keep it).  For an arena from bpf_arena_create_dev() it is
 * created on the first call (BPF_ARENA_IOC_MAP_FD).  Returns the fd or a
 * negative errno.
 */
int bpf_arena_map_fd(struct bpf_arena *arena);

/* ------------------------------------------------------------------------ */
/* Page operations (need the bpf_arena module's /dev/bpf_arena)              */
/*
 * These use the device's ioctls; for an arena not created through the device
 * a device handle is opened and attached to the map on first use.  Where
 * /dev/bpf_arena does not exist (a kernel with native arena, whose bpf()
 * interface has no user-space page allocation) they return -EOPNOTSUPP.
 * Addresses are user addresses inside the arena.
 */

/*
 * Allocates page_cnt zeroed pages at addr (page aligned) or, addr NULL,
 * wherever they fit, on NUMA node node_id (-1: any).  On success *pages (if
 * not NULL) is the address of the first page.  Errors: EINVAL, ERANGE
 * (outside the arena), EBUSY (a page in the range is already allocated),
 * ENOMEM, ENXIO (arena not mapped yet).
 */
int bpf_arena_user_alloc_pages(struct bpf_arena *arena, void *addr, __u32 page_cnt,
			       int node_id, void **pages);

/*
 * Frees the allocated pages in [addr, addr + page_cnt pages), removing them
 * from every process's mapping.  Returns the number of pages freed, or
 * -ENOENT if none of them was allocated.  (Was bpf_arena_free_pages(), the
 * kfunc's name.)
 */
int bpf_arena_user_free_pages(struct bpf_arena *arena, void *addr, __u32 page_cnt);

/*
 * Allocates the missing pages of [addr, addr + page_cnt pages), as user
 * faults would.  Returns the number of pages it allocated.  -EPERM on a
 * BPF_ARENA_F_SEGV_ON_FAULT arena, whose pages only BPF programs and
 * bpf_arena_user_alloc_pages() allocate.
 */
int bpf_arena_prefault(struct bpf_arena *arena, void *addr, __u32 page_cnt);

/*
 * Fills what the module knows of the arena and its counters since creation
 * (struct bpf_arena_inspect of the uapi header: pages allocated now, by
 * origin, frees, user faults, mappings...) into info, of which info_sz bytes
 * are writable (pass sizeof(*info)); what the bpf-arena tool shows.  Needs no
 * right on the arena.
 */
int bpf_arena_inspect(struct bpf_arena *arena, struct bpf_arena_inspect *info, size_t info_sz);

/* ------------------------------------------------------------------------ */
/* Guarded copies (BPF_ARENA_F_SEGV_ON_FAULT arenas)                         */
/*
 * A user access to an unallocated page of an arena created with
 * BPF_ARENA_F_SEGV_ON_FAULT raises SIGSEGV.  These copy like memcpy() but
 * return -EFAULT instead when such a page is hit (the destination may then
 * be partly written).  [src, src + len) (read) or [dst, dst + len) (write)
 * must lie inside the arena, else -ERANGE.  The other buffer must be valid
 * memory: a fault there is not caught.
 *
 * On first use a SIGSEGV handler is installed (sigaction, SA_SIGINFO |
 * SA_ONSTACK).  It takes over only a kernel-raised fault (si_code > 0) whose
 * address lies in the arena-side buffer of a guarded copy running on the
 * same thread; every other SIGSEGV goes to the handler that was installed
 * before it (with that handler's sa_mask), or gets the default action.  A
 * handler installed later must chain to it for guarded copies to keep
 * working.  The handler is async-signal-safe and the copies are
 * thread-safe.  A signal handler may do a guarded copy, also while it
 * interrupts one, once an earlier call installed the handler and if the
 * print callback is async-signal-safe or NULL (the EFAULT message is
 * BPF_ARENA_DEBUG, which the default callback drops without printing).
 * On an arena without BPF_ARENA_F_SEGV_ON_FAULT they are plain copies
 * (touching a page allocates it).
 */
int bpf_arena_read(const struct bpf_arena *arena, void *dst, const void *src, size_t len);
int bpf_arena_write(const struct bpf_arena *arena, void *dst, const void *src, size_t len);

/* ------------------------------------------------------------------------ */
/* Sharing an arena with another process                                     */

/*
 * Wraps an arena fd this process received from another one (SCM_RIGHTS over
 * a Unix socket, pidfd_getfd(), or inherited across exec): either a BPF map
 * fd of an arena, or a /dev/bpf_arena fd whose arena exists.  fd is not
 * taken over: the arena holds its own duplicate (close yours when done).
 * The arena is mapped at its fixed address, as every mapping of an arena
 * must be, so pointers stored in it by the other process are valid here:
 *
 * - device fd: the address the module reports (BPF_ARENA_IOC_GET_INFO);
 *   -EINVAL if the device fd has no arena yet (configured, never mapped);
 * - map fd: as bpf_arena_from_map_fd(): map_extra if set; else, through
 *   the module, the address it reports.  A native kernel does not report
 *   the address of an arena created without map_extra: then this fails
 *   with -EBUSY, and the sender should send the address along for
 *   bpf_arena_from_map_fd_at() (or create the arena with map_extra).
 *
 * If this process already maps the arena there, that mapping is used
 * (borrowed: not unmapped by bpf_arena_destroy()); -EEXIST: this process
 * maps something else at that address.
 * Other fds give -EINVAL ("not an arena").
 */
int bpf_arena_from_fd(int fd, struct bpf_arena **arena);

/* ------------------------------------------------------------------------ */
/* Probes                                                                    */

/*
 * 1 if the running kernel implements BPF arena itself (Linux 6.9+, or a
 * backport), 0 if not.  Cannot fail.  How (first answer wins, cached):
 *  1. The kernel's BTF (/sys/kernel/btf/vmlinux) names BPF_MAP_TYPE_ARENA
 *     -> 1, else 0.  The module adds nothing there, and on a 6.9+ kernel it
 *     loads as an inactive stub, so its presence alone proves nothing.
 *  2. No BTF: /sys/module/bpf_arena or /dev/bpf_arena exists -> 0.
 *  3. BPF_MAP_CREATE of a 1-page arena: created (or EOPNOTSUPP: the type
 *     exists but the JIT lacks arena support) -> 1; EINVAL (unknown map
 *     type) -> 0.
 *  4. Without the privilege for that (EPERM/EACCES): uname release >= 6.9
 *     -> 1, else 0.
 */
int bpf_arena_kernel_has_native(void);

/*
 * 0 if arena maps can be created on the running kernel: it has its own
 * (6.9+), or the bpf_arena module is loaded.  Otherwise -EOPNOTSUPP and one
 * message saying what to do (load the module, or install it for this
 * kernel).  Call it before loading a BPF object that has an arena: libbpf's
 * own error for a kernel without one is a bare "map 'arena': failed to
 * create: Invalid argument(-22)".
 */
int bpf_arena_kernel_ready(void);

#ifdef __cplusplus
}
#endif

#endif /* BPF_ARENA_LIB_H */

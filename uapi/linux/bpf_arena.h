/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * bpf-arena-dkms user ABI: the /dev/bpf_arena device and the upstream BPF
 * arena constants, for headers that predate Linux 6.9.
 *
 * The device: open("/dev/bpf_arena") gives an arena handle.  mmap() of the
 * device fd creates the arena with defaults (size = the mmap length, flags =
 * BPF_F_MMAPABLE) unless BPF_ARENA_IOC_CONFIGURE set them first, or
 * BPF_ARENA_IOC_ATTACH made the handle refer to an existing arena map.
 *
 * Every ioctl argument starts with a __u32 size that user space sets to the
 * sizeof() of the struct it was compiled with.  The kernel accepts a smaller
 * (older) struct, and a larger (newer) one if the bytes it does not know are
 * zero (E2BIG otherwise), so the structs can grow at the end.  Commands are
 * matched on type and number only.
 *
 * Access modes, as bpf map fds: a handle's rights are the mode the device
 * was opened with, narrowed by BPF_ARENA_IOC_ATTACH to the attached map fd's
 * mode (BPF_F_RDONLY / BPF_F_WRONLY fds); a frozen arena (BPF_MAP_FREEZE) has
 * no write right.
 * - Without the write right, CONFIGURE, ALLOC_PAGES, FREE_PAGES, PREFAULT,
 *   and creating an arena (by mmap or MAP_FD) fail with EPERM, as updates
 *   through a read-only or frozen map fd.  The right is checked first.
 * - mmap() needs the read right, and PROT_WRITE the write right: EACCES
 *   otherwise (as mmap of a file opened without it); PROT_WRITE on a frozen
 *   arena: EPERM (as bpf_map_mmap()).  A mapping made without PROT_WRITE can
 *   never be made writable (mprotect: EACCES).  A writable mapping counts as
 *   a writer for good: BPF_MAP_FREEZE fails with EBUSY after it (as a
 *   writable mmap of an arena map fd on 6.9+).
 * - GET_INFO needs no right (as BPF_OBJ_GET_INFO_BY_FD).
 * - INSPECT, INSPECT_PAGES and INSPECT_DUMP (read-only, for the bpf-arena
 *   tool): see "Inspection" below.
 *
 * Who pays: every page a handle causes (ALLOC_PAGES, PREFAULT, a fault of
 * a mapping made through it), whatever created its arena, and the kernel
 * page table it needs, is charged to the memory cgroup and RLIMIT_MEMLOCK
 * of the process that opened the handle (read at open), as io_uring's; a
 * fault of a map fd's mapping, to the process that mapped it.  Processes
 * with CAP_IPC_LOCK, CAP_BPF or CAP_SYS_ADMIN are not limited by
 * RLIMIT_MEMLOCK.  Beyond it ALLOC_PAGES and PREFAULT fail with ENOMEM and
 * a user fault gets SIGSEGV (as any failed arena fault); the kernel logs
 * the reason.  When memory is short they fail the same way instead of
 * invoking the OOM killer.  A mapping made without the write right (or a
 * read-only mapping of a frozen arena) never allocates: a read of a page
 * that does not exist gets SIGSEGV.
 *
 * Limits on arenas created through the device (not on BPF_MAP_CREATE ones,
 * which need CAP_BPF):
 * - creating one more arena than the module parameter
 *   max_dev_arenas_per_user (per real uid) allows fails with EMFILE, than
 *   max_dev_arenas (all users) allows with ENFILE (as inotify instances).
 */
#ifndef _UAPI_LINUX_BPF_ARENA_H
#define _UAPI_LINUX_BPF_ARENA_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Upstream (6.9+) values, identical to include/uapi/linux/bpf.h. */
#define BPF_ARENA_MAP_TYPE		33	/* BPF_MAP_TYPE_ARENA */
#define BPF_ARENA_F_MMAPABLE		(1U << 10)	/* BPF_F_MMAPABLE */
#define BPF_ARENA_F_SEGV_ON_FAULT	(1U << 17)	/* BPF_F_SEGV_ON_FAULT */
#define BPF_ARENA_F_NO_USER_CONV	(1U << 18)	/* BPF_F_NO_USER_CONV */
#define BPF_ARENA_MAX_BYTES		(1ULL << 32)	/* 4 GiB */

#define BPF_ARENA_DEV_NAME		"bpf_arena"
#define BPF_ARENA_DEV_PATH		"/dev/bpf_arena"
#define BPF_ARENA_UAPI_VERSION		1

/*
 * BPF_ARENA_IOC_CONFIGURE: before the arena exists (no mmap, no MAP_FD, no
 * ATTACH yet; EBUSY after).  Same rules and errnos as BPF_MAP_CREATE of an
 * arena map: map_flags must include BPF_F_MMAPABLE and must not include
 * BPF_F_NUMA_NODE (numa_node has its own field); max_entries is the size in
 * pages (0 here means "take it from the first mmap length"); map_extra is
 * the fixed user address or 0 (a fixed address needs max_entries).
 */
struct bpf_arena_config {
	__u32 size;
	__u32 map_flags;
	__u32 max_entries;
	__s32 numa_node;	/* must be -1: upstream arenas refuse BPF_F_NUMA_NODE */
	__u64 map_extra;
	char name[16];		/* bpf map name, as BPF_MAP_CREATE's map_name */
};

/*
 * BPF_ARENA_IOC_GET_INFO: what the arena is: its configuration before it
 * exists; once it exists (created here or attached), its map's attributes
 * and the user address range fixed by map_extra or the first mmap.
 */
struct bpf_arena_info {
	__u32 size;
	__u32 uapi_version;	/* out: BPF_ARENA_UAPI_VERSION */
	__u32 map_flags;
	__u32 max_entries;
	__u64 map_extra;
	__u64 user_vm_start;	/* 0 until the first mmap (or map_extra) */
	__u64 user_vm_end;
	__u32 map_id;		/* bpf map id, 0 before creation */
	__u32 created;		/* 1 once the arena exists */
	char name[16];
};

/*
 * BPF_ARENA_IOC_MAP_FD: a new bpf map fd for the arena (creating it from the
 * configuration if needed), usable with BPF programs, bpftool and bpf().
 * It has the handle's rights: O_RDWR, or O_RDONLY / O_WRONLY for a
 * read-only / write-only handle.
 */
struct bpf_arena_map_fd {
	__u32 size;
	__u32 flags;		/* must be 0: the fd is O_CLOEXEC with the handle's rights */
	__s32 fd;		/* out */
	__u32 __reserved;
};

/*
 * BPF_ARENA_IOC_ATTACH: make this (unused) device handle refer to an
 * existing arena map.  The handle keeps the rights it has and map_fd has:
 * EACCES if none is left (a read-only handle and a write-only map fd).
 */
struct bpf_arena_attach {
	__u32 size;
	__s32 map_fd;
};

/*
 * BPF_ARENA_IOC_ALLOC_PAGES: allocate page_cnt zeroed pages at addr (a user
 * address inside the arena, page aligned) or anywhere (addr == 0); on success
 * addr is the user address of the first page.  Errors: EINVAL (page_cnt 0,
 * unaligned addr, flags, bad node), ERANGE (outside the arena), EBUSY (a page
 * in the range is already allocated), ENOMEM, ENXIO (arena not mapped yet).
 */
struct bpf_arena_alloc {
	__u32 size;
	__u32 page_cnt;
	__u64 addr;		/* in/out */
	__s32 node_id;		/* -1: any node */
	__u32 flags;		/* must be 0 */
};

/*
 * BPF_ARENA_IOC_FREE_PAGES and BPF_ARENA_IOC_PREFAULT: a page-aligned range
 * of user addresses inside the arena.  FREE frees the allocated pages in it
 * (and zaps them from every process); it returns the number of pages freed,
 * or ENOENT if none of them was allocated.  PREFAULT allocates the missing
 * pages of the range (as a user fault would); it returns the number of pages
 * it allocated, or EPERM on a BPF_F_SEGV_ON_FAULT arena, whose pages only
 * BPF or BPF_ARENA_IOC_ALLOC_PAGES allocate.  Both: EINVAL (page_cnt 0,
 * unaligned addr), ERANGE (outside the arena), ENXIO (no address yet).
 */
struct bpf_arena_range {
	__u32 size;
	__u32 page_cnt;
	__u64 addr;
};

/*
 * Inspection (the bpf-arena tool): read-only views of an arena, named by its
 * bpf map id, or by map_id 0 for the arena of this handle.  A read-only open
 * of the device is enough; none of these changes anything (no page is
 * allocated, a dump of an unallocated page reads zeroes).
 * Access (docs/SECURITY.md):
 * - by map id: CAP_SYS_ADMIN (EPERM otherwise), as BPF_MAP_GET_NEXT_ID and
 *   BPF_MAP_GET_FD_BY_ID, which would give the same caller a read-write fd
 *   (and so the memory, by mmap) of any map; the LSM's bpf_map hook is asked
 *   for read access, as for such an fd.  An id that is not an arena: ENOENT.
 * - map_id 0: the handle's arena (ENXIO if none); INSPECT needs no right (as
 *   GET_INFO), INSPECT_PAGES and INSPECT_DUMP need the read right
 *   (EACCES), which lets the caller mmap and read the pages anyway.
 */
#define BPF_ARENA_INSPECT_ORIGIN_BPF	0	/* created by bpf(BPF_MAP_CREATE) */
#define BPF_ARENA_INSPECT_ORIGIN_DEV	1	/* created through /dev/bpf_arena */

/* BPF_ARENA_IOC_INSPECT: what the arena is and its counters since creation. */
struct bpf_arena_inspect {
	__u32 size;
	__u32 map_id;		/* in */
	__u32 map_flags;
	__u32 max_entries;
	__u64 map_extra;
	__u64 user_vm_start;	/* 0 until fixed by map_extra or the first mmap */
	__u64 user_vm_end;
	char name[16];
	__u32 origin;		/* BPF_ARENA_INSPECT_ORIGIN_* */
	__u32 frozen;
	/* The creating process: its tgid in the caller's pid namespace (0 if not
	 * visible there, or gone), its euid in the caller's user namespace
	 * (65534 if unmapped), its comm at creation. */
	__u32 creator_pid;
	__u32 creator_uid;
	char creator_comm[16];
	__u64 vm_ino;		/* inode of "[bpf_arena]" in /proc/PID/maps */
	__u64 memcg_id;		/* cgroup id of the memory cgroup charged; 0: none */
	__u64 mapped_vmas;	/* user mappings now */
	__u64 pages;		/* pages allocated now */
	__u64 pages_reserved;	/* held by the allocator with no page behind (see below) */
	/* Pages allocated and freed since creation, by origin. */
	__u64 alloc_bpf;	/* bpf_arena_alloc_pages() */
	__u64 alloc_fault;	/* user page faults */
	__u64 alloc_ioctl;	/* BPF_ARENA_IOC_ALLOC_PAGES */
	__u64 alloc_prefault;	/* BPF_ARENA_IOC_PREFAULT */
	__u64 free_bpf;		/* bpf_arena_free_pages() */
	__u64 free_ioctl;	/* BPF_ARENA_IOC_FREE_PAGES */
	__u64 freed;		/* all frees */
	__u64 user_faults;	/* user page faults handled (allocating or not) */
	__u64 user_faults_segv;	/* of which answered SIGSEGV */
	__u64 fixups;		/* faulting BPF accesses fixed up (load 0, store skipped) */
};

/*
 * BPF_ARENA_IOC_INSPECT_PAGES: one byte per page, from page first (counted
 * from user_vm_start), for at most cnt pages of the user range.  Out: cnt =
 * pages written, total = pages in the user range (0 before it is fixed).
 * A reserved page is held by the allocator with nothing mapped: only seen
 * while an allocation is in flight.
 */
#define BPF_ARENA_PAGE_FREE		0
#define BPF_ARENA_PAGE_ALLOCATED	1
#define BPF_ARENA_PAGE_RESERVED		2

struct bpf_arena_inspect_pages {
	__u32 size;
	__u32 map_id;		/* in */
	__u64 first;		/* in */
	__u64 buf;		/* in: user pointer to cnt bytes */
	__u32 cnt;		/* in/out */
	__u32 flags;		/* must be 0 */
	__u64 total;		/* out */
};

/*
 * BPF_ARENA_IOC_INSPECT_DUMP: copies len bytes of the arena from user
 * address addr (inside the user range; the range spans at most
 * BPF_ARENA_INSPECT_DUMP_MAX_PAGES pages) to buf.  Bytes of unallocated
 * pages read as zero and allocate nothing; out: present bit i is set when
 * the i-th page spanned was allocated when it was read.  Errors: EINVAL
 * (len 0, flags), E2BIG (too many pages), ERANGE (outside the range), ENXIO
 * (no user range yet).
 */
#define BPF_ARENA_INSPECT_DUMP_MAX_PAGES	64

struct bpf_arena_inspect_dump {
	__u32 size;
	__u32 map_id;		/* in */
	__u64 addr;		/* in */
	__u64 buf;		/* in: user pointer to len bytes */
	__u32 len;		/* in */
	__u32 flags;		/* must be 0 */
	__u64 present;		/* out */
};

#define BPF_ARENA_IOC_MAGIC		0xBA
#define BPF_ARENA_IOC_CONFIGURE		_IOW(BPF_ARENA_IOC_MAGIC, 1, struct bpf_arena_config)
#define BPF_ARENA_IOC_GET_INFO		_IOWR(BPF_ARENA_IOC_MAGIC, 2, struct bpf_arena_info)
#define BPF_ARENA_IOC_MAP_FD		_IOWR(BPF_ARENA_IOC_MAGIC, 3, struct bpf_arena_map_fd)
#define BPF_ARENA_IOC_ATTACH		_IOW(BPF_ARENA_IOC_MAGIC, 4, struct bpf_arena_attach)
#define BPF_ARENA_IOC_ALLOC_PAGES	_IOWR(BPF_ARENA_IOC_MAGIC, 5, struct bpf_arena_alloc)
#define BPF_ARENA_IOC_FREE_PAGES	_IOW(BPF_ARENA_IOC_MAGIC, 6, struct bpf_arena_range)
#define BPF_ARENA_IOC_PREFAULT		_IOW(BPF_ARENA_IOC_MAGIC, 7, struct bpf_arena_range)
/* 8 is retired (an early counters ioctl, now INSPECT with map_id 0): never reuse it. */
/* Inspection: numbers from 0x40, away from the handle's own commands. */
#define BPF_ARENA_IOC_INSPECT		_IOWR(BPF_ARENA_IOC_MAGIC, 0x40, struct bpf_arena_inspect)
#define BPF_ARENA_IOC_INSPECT_PAGES	_IOWR(BPF_ARENA_IOC_MAGIC, 0x41, struct bpf_arena_inspect_pages)
#define BPF_ARENA_IOC_INSPECT_DUMP	_IOWR(BPF_ARENA_IOC_MAGIC, 0x42, struct bpf_arena_inspect_dump)

#endif /* _UAPI_LINUX_BPF_ARENA_H */

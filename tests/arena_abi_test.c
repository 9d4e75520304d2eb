// SPDX-License-Identifier: GPL-2.0
/*
 * The user-space ABI of BPF_MAP_TYPE_ARENA, as a plain program written for a
 * 6.12 kernel sees it: creation and its errnos, BPF_OBJ_GET_INFO_BY_FD, map
 * ops, the mmap rules, page semantics, fork/exec, mremap/munmap/mprotect,
 * BPF_F_SEGV_ON_FAULT, concurrent faults, a full 4 GiB arena, capabilities.
 *
 * Only the raw bpf() syscall (through test_util.h's wrappers, which use
 * nothing of the project), mmap & co. and libc are used -- no project header
 * or library -- so the same binary proves that 6.1 + bpf_arena.ko behaves
 * like the in-tree arena.  Every expectation below was measured on
 * the stock Debian 6.12.118 kernel (tests/vm/run --kernel 6.12); where that
 * differs from what a reading of the source suggested, a comment says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "test_util.h"

/* The host's <linux/bpf.h> is 6.1's: it has no arena (test_util.h defines its map type). */
#ifndef BPF_F_SEGV_ON_FAULT
#define BPF_F_SEGV_ON_FAULT (1U << 17)
#endif
#ifndef BPF_F_NO_USER_CONV
#define BPF_F_NO_USER_CONV (1U << 18)
#endif
/* 6.9+ generic map-create flags, unknown to 6.1's header. */
#define ARENA_TEST_F_VTYPE_BTF_OBJ_FD (1U << 15)
#define ARENA_TEST_F_TOKEN_FD (1U << 16)
/*
 * 6.12's BPF_MAP_CREATE has two more fields after map_extra:
 * __s32 value_type_btf_obj_fd; __s32 map_token_fd (the last one).
 */
#define ATTR_VALUE_TYPE_BTF_OBJ_FD_OFF (offsetof(union bpf_attr, map_extra) + 8)
#define ATTR_MAP_TOKEN_FD_OFF (offsetof(union bpf_attr, map_extra) + 12)
#define ATTR_MAP_CREATE_END (offsetof(union bpf_attr, map_extra) + 16)
/* The kernel-internal ENOTSUPP leaks to user space from some map ops. */
#define KERNEL_ENOTSUPP 524

#define PAGE 4096UL
#define SZ_4G (1ULL << 32)
#define ARENA_MAX_PAGES (1U << 20) /* 4 GiB of 4 KiB pages */
#define EXEC_CHILD_ARG "--arena-exec-child"

/* ---------------------------------------------------------------- helpers */

/* fd, or -errno. */
static int create_attr(union bpf_attr *a)
{
	int fd = sys_bpf(BPF_MAP_CREATE, a, sizeof(*a));

	return fd < 0 ? -errno : fd;
}

/* fd, or -errno; an fd that was created is closed and reported as 0. */
static int create_result(union bpf_attr *a)
{
	int fd = create_attr(a);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* 0 or errno of an element op on map fd. */
static int elem_op(int cmd, int fd, void *key, void *value, void *next_key)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		a.next_key = (uintptr_t)next_key;
	else
		a.value = (uintptr_t)value;
	return sys_bpf(cmd, &a, sizeof(a)) ? errno : 0;
}

static int batch_op(int cmd, int fd)
{
	__u64 keys[1] = { 0 }, values[1] = { 0 }, out = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.batch.map_fd = fd;
	a.batch.keys = (uintptr_t)keys;
	a.batch.values = (uintptr_t)values;
	a.batch.count = 1;
	if (cmd == BPF_MAP_LOOKUP_BATCH || cmd == BPF_MAP_LOOKUP_AND_DELETE_BATCH)
		a.batch.out_batch = (uintptr_t)&out;
	return sys_bpf(cmd, &a, sizeof(a)) ? errno : 0;
}

/* 0 and *out = the mapping, or errno. */
static int do_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, char **out)
{
	void *p = mmap(addr, len, prot, flags, fd, off);

	if (p == MAP_FAILED) {
		*out = NULL;
		return errno;
	}
	*out = p;
	return 0;
}

static int map_shared(int fd, void *addr, size_t len, int extra_flags, char **out)
{
	return do_mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | extra_flags, fd, 0, out);
}

static bool crosses_4g(uintptr_t start, size_t len)
{
	return (start >> 32) != ((start + len - 1) >> 32);
}

/* Is [start, start+len) (or any part of it) listed in /proc/self/maps? */
static bool in_proc_maps(uintptr_t start, size_t len)
{
	unsigned long lo, hi;
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return true; /* be pessimistic: the caller expects absence */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo < start + len && hi > start)
			found = true;
	}
	fclose(f);
	return found;
}

/*
 * Runs fn in a forked child and returns its exit status (0..255), or -1 if
 * it was killed by a signal (the signal is stored in *sig when sig != NULL).
 */
static int run_in_child(int (*fn)(void *), void *arg, int *sig)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -2;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid)
		return -2;
	if (WIFSIGNALED(status)) {
		if (sig)
			*sig = WTERMSIG(status);
		return -1;
	}
	return WEXITSTATUS(status);
}

/* ------------------------------------------------------------ creation */

TEST(create_key0_value0_mmapable_gives_an_fd)
{
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));
	/* One page is the smallest arena (libbpf's feature probe uses it). */
	fd = arena_create(1, 0, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));
}

TEST(map_fd_is_close_on_exec)
{
	int fd = arena_create(16, 0, 0);
	int fl;

	ASSERT_LE(0, fd);
	fl = fcntl(fd, F_GETFD);
	EXPECT_EQ(FD_CLOEXEC, fl & FD_CLOEXEC);
	close(fd);
}

TEST(info_reports_type_sizes_entries_flags_extra_name_and_an_id)
{
	const __u64 extra = 0x4000010000ULL;
	const __u32 flags = BPF_F_MMAPABLE | BPF_F_SEGV_ON_FAULT | BPF_F_NO_USER_CONV;
	struct bpf_map_info info;
	union bpf_attr a;
	int fd;

	arena_attr(&a, 16, BPF_F_SEGV_ON_FAULT | BPF_F_NO_USER_CONV, extra);
	strcpy(a.map_name, "abi_arena.1");
	fd = create_attr(&a);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_info(fd, &info));
	EXPECT_EQ(BPF_MAP_TYPE_ARENA, info.type);
	EXPECT_NE(0, info.id);
	EXPECT_EQ(0, info.key_size);
	EXPECT_EQ(0, info.value_size);
	EXPECT_EQ(16, info.max_entries);
	EXPECT_EQ(flags, info.map_flags);
	EXPECT_EQ(extra, info.map_extra);
	EXPECT_STREQ("abi_arena.1", info.name);
	EXPECT_EQ(0, info.ifindex);
	EXPECT_EQ(0, info.btf_id);
	close(fd);
}

TEST(info_of_two_arenas_has_distinct_ids)
{
	struct bpf_map_info i1, i2;
	int fd1 = arena_create(1, 0, 0), fd2 = arena_create(1, 0, 0);

	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, map_info(fd1, &i1));
	ASSERT_EQ(0, map_info(fd2, &i2));
	EXPECT_NE(0, i1.id);
	EXPECT_NE(0, i2.id);
	EXPECT_NE(i1.id, i2.id);
	close(fd1);
	close(fd2);
}

TEST(map_get_fd_by_id_opens_the_same_arena)
{
	struct bpf_map_info info, info2;
	union bpf_attr a;
	int fd, fd2;

	fd = arena_create(8, 0, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_info(fd, &info));
	memset(&a, 0, sizeof(a));
	a.map_id = info.id;
	fd2 = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, map_info(fd2, &info2));
	EXPECT_EQ(info.id, info2.id);
	EXPECT_EQ(BPF_MAP_TYPE_ARENA, info2.type);
	EXPECT_EQ(8, info2.max_entries);
	close(fd2);
	close(fd);
}

TEST(fdinfo_shows_type_33_and_the_arena_attributes)
{
	char path[64], buf[2048], want[128];
	int fd, f;
	ssize_t n;

	fd = arena_create(16, BPF_F_SEGV_ON_FAULT, 0x4000000000ULL);
	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	ASSERT_LE(0, f);
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	ASSERT_LT(0, n);
	buf[n] = '\0';
	EXPECT_NE(NULL, strstr(buf, "map_type:\t33\n"));
	EXPECT_NE(NULL, strstr(buf, "key_size:\t0\n"));
	EXPECT_NE(NULL, strstr(buf, "value_size:\t0\n"));
	EXPECT_NE(NULL, strstr(buf, "max_entries:\t16\n"));
	snprintf(want, sizeof(want), "map_flags:\t%#x\n", BPF_F_MMAPABLE | BPF_F_SEGV_ON_FAULT);
	EXPECT_NE(NULL, strstr(buf, want));
	EXPECT_NE(NULL, strstr(buf, "map_extra:\t0x4000000000\n"));
	close(fd);
}

TEST(pinned_arena_reopens_as_type_33)
{
	const char *pin = "/sys/fs/bpf/arena_abi_test_pin";
	struct bpf_map_info info;
	union bpf_attr a;
	int fd, fd2;

	fd = arena_create(4, 0, 0);
	ASSERT_LE(0, fd);
	unlink(pin);
	memset(&a, 0, sizeof(a));
	a.bpf_fd = fd;
	a.pathname = (uintptr_t)pin;
	if (sys_bpf(BPF_OBJ_PIN, &a, sizeof(a))) {
		close(fd);
		SKIP(return, "no bpffs at /sys/fs/bpf (errno %d)", errno);
	}
	memset(&a, 0, sizeof(a));
	a.pathname = (uintptr_t)pin;
	fd2 = sys_bpf(BPF_OBJ_GET, &a, sizeof(a));
	unlink(pin);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, map_info(fd2, &info));
	EXPECT_EQ(BPF_MAP_TYPE_ARENA, info.type);
	EXPECT_EQ(4, info.max_entries);
	close(fd2);
	close(fd);
}

TEST(create_map_name_of_alnum_underscore_dot_is_accepted)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	strcpy(a.map_name, "Arena_0.x");
	EXPECT_EQ(0, create_result(&a));
	arena_attr(&a, 16, 0, 0);
	memset(a.map_name, 'a', BPF_OBJ_NAME_LEN - 1); /* 15 chars + NUL */
	EXPECT_EQ(0, create_result(&a));
}

TEST(create_map_name_with_invalid_char_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	strcpy(a.map_name, "bad-name");
	EXPECT_EQ(-EINVAL, create_result(&a));
}

TEST(create_map_name_without_nul_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	memset(a.map_name, 'a', BPF_OBJ_NAME_LEN);
	EXPECT_EQ(-EINVAL, create_result(&a));
}

TEST(create_segv_on_fault_and_no_user_conv_are_accepted)
{
	union bpf_attr a;

	arena_attr(&a, 16, BPF_F_SEGV_ON_FAULT, 0);
	EXPECT_EQ(0, create_result(&a));
	arena_attr(&a, 16, BPF_F_NO_USER_CONV, 0);
	EXPECT_EQ(0, create_result(&a));
	arena_attr(&a, 16, BPF_F_SEGV_ON_FAULT | BPF_F_NO_USER_CONV, 0);
	EXPECT_EQ(0, create_result(&a));
}

TEST(create_of_exactly_4g_is_accepted)
{
	union bpf_attr a;

	arena_attr(&a, ARENA_MAX_PAGES, 0, 0);
	EXPECT_EQ(0, create_result(&a));
	arena_attr(&a, ARENA_MAX_PAGES, 0, 0x7000000000ULL); /* 4 GiB aligned */
	EXPECT_EQ(0, create_result(&a));
}

/*
 * 6.12 ignores these 6.9+ fields unless their flag is set (on 6.1 they lie
 * past the last BPF_MAP_CREATE field, where 6.1 itself would say EINVAL).
 */
TEST(create_ignores_btf_obj_fd_and_token_fd_fields_without_their_flags)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	*(__s32 *)((char *)&a + ATTR_VALUE_TYPE_BTF_OBJ_FD_OFF) = 1;
	EXPECT_EQ(0, create_result(&a));
	arena_attr(&a, 16, 0, 0);
	*(__s32 *)((char *)&a + ATTR_MAP_TOKEN_FD_OFF) = 1;
	EXPECT_EQ(0, create_result(&a));
}

/* ------------------------------------------------- bad attributes + errno */

TEST(create_nonzero_key_size_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	a.key_size = 4;
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, 16, 0, 0);
	a.key_size = 8;
	EXPECT_EQ(-EINVAL, create_result(&a));
}

TEST(create_nonzero_value_size_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	a.value_size = 4;
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, 16, 0, 0);
	a.value_size = 8;
	EXPECT_EQ(-EINVAL, create_result(&a));
}

/* The v1 patch series wanted key_size = value_size = 8: the final ABI does not. */
TEST(create_v1_style_key8_value8_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	a.key_size = 8;
	a.value_size = 8;
	EXPECT_EQ(-EINVAL, create_result(&a));
}

TEST(create_max_entries_zero_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 0, 0, 0);
	EXPECT_EQ(-EINVAL, create_result(&a));
}

TEST(create_without_mmapable_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	a.map_flags = 0;
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, 16, 0, 0);
	a.map_flags = BPF_F_SEGV_ON_FAULT | BPF_F_NO_USER_CONV;
	EXPECT_EQ(-EINVAL, create_result(&a));
}

/* Anything but MMAPABLE | SEGV_ON_FAULT | NO_USER_CONV, generic flags included. */
TEST(create_with_any_other_flag_is_einval)
{
	static const __u32 bad[] = {
		BPF_F_NO_PREALLOC, BPF_F_NO_COMMON_LRU, BPF_F_RDONLY, BPF_F_WRONLY,
		BPF_F_RDONLY | BPF_F_WRONLY, BPF_F_STACK_BUILD_ID, BPF_F_ZERO_SEED,
		BPF_F_RDONLY_PROG, BPF_F_WRONLY_PROG, BPF_F_CLONE, 1U << 11, 1U << 12,
		1U << 13, 1U << 14, ARENA_TEST_F_VTYPE_BTF_OBJ_FD, 1U << 19, 1U << 20,
		1U << 31,
	};
	union bpf_attr a;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		arena_attr(&a, 16, bad[i], 0);
		EXPECT_EQ(-EINVAL, create_result(&a))
			TH_LOG("flag %#x", bad[i]);
	}
}

TEST(create_larger_than_4g_is_e2big)
{
	union bpf_attr a;

	arena_attr(&a, ARENA_MAX_PAGES + 1, 0, 0);
	EXPECT_EQ(-E2BIG, create_result(&a));
	arena_attr(&a, 0xffffffffU, 0, 0);
	EXPECT_EQ(-E2BIG, create_result(&a));
}

TEST(create_unaligned_map_extra_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 1);
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, 16, 0, 0x4000000800ULL);
	EXPECT_EQ(-EINVAL, create_result(&a));
}

TEST(create_map_extra_range_crossing_4g_is_erange)
{
	union bpf_attr a;

	/* 16 pages starting 8 pages below the 256 GiB boundary. */
	arena_attr(&a, 16, 0, 0x4000000000ULL - 8 * PAGE);
	EXPECT_EQ(-ERANGE, create_result(&a));
	/* A full 4 GiB arena must start 4 GiB aligned. */
	arena_attr(&a, ARENA_MAX_PAGES, 0, 0x4000001000ULL);
	EXPECT_EQ(-ERANGE, create_result(&a));
	/* Ending exactly at the boundary is fine. */
	arena_attr(&a, 16, 0, 0x4000000000ULL - 16 * PAGE);
	EXPECT_EQ(0, create_result(&a));
}

/* Measured order of the arena checks: alignment, then size, then crossing. */
TEST(create_checks_map_extra_alignment_then_size_then_crossing)
{
	union bpf_attr a;

	arena_attr(&a, ARENA_MAX_PAGES + 1, 0, 1);
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, ARENA_MAX_PAGES + 1, 0, 0x4000000000ULL - PAGE);
	EXPECT_EQ(-E2BIG, create_result(&a));
	/* key_size is checked before everything else. */
	arena_attr(&a, ARENA_MAX_PAGES + 1, 0, 0x4000000000ULL - PAGE);
	a.key_size = 8;
	EXPECT_EQ(-EINVAL, create_result(&a));
}

TEST(create_invalid_numa_node_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, BPF_F_NUMA_NODE, 0);
	a.numa_node = 4096;
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, 16, BPF_F_NUMA_NODE, 0);
	a.numa_node = 0x7fffffff;
	EXPECT_EQ(-EINVAL, create_result(&a));
}

/*
 * The arena's flag mask has no BPF_F_NUMA_NODE: even node 0 is refused.
 * (Without the flag, numa_node is ignored.)
 */
TEST(create_numa_node_flag_is_einval_even_for_node_0)
{
	union bpf_attr a;

	arena_attr(&a, 16, BPF_F_NUMA_NODE, 0);
	a.numa_node = 0;
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, 16, 0, 0);
	a.numa_node = 5;
	EXPECT_EQ(0, create_result(&a));
}

/* map_ifindex selects the offload ops, which only take ARRAY and HASH. */
TEST(create_with_map_ifindex_is_einval)
{
	union bpf_attr a;

	arena_attr(&a, 16, 0, 0);
	a.map_ifindex = 1;
	EXPECT_EQ(-EINVAL, create_result(&a));
}

TEST(create_with_btf_type_ids_but_no_btf_is_einval)
{
	union bpf_attr a;
	int other = arena_create(1, 0, 0);

	ASSERT_LE(0, other);
	arena_attr(&a, 16, 0, 0);
	a.btf_fd = other; /* not a BTF object */
	a.btf_key_type_id = 1;
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, 16, 0, 0);
	a.btf_fd = other;
	a.btf_value_type_id = 1;
	EXPECT_EQ(-EINVAL, create_result(&a));
	/* Only struct_ops maps may name a vmlinux value type. */
	arena_attr(&a, 16, 0, 0);
	a.btf_vmlinux_value_type_id = 1;
	EXPECT_EQ(-EINVAL, create_result(&a));
	close(other);
}

TEST(create_token_flag_without_a_token_is_ebadf_or_einval)
{
	union bpf_attr a;
	int other = arena_create(1, 0, 0);

	ASSERT_LE(0, other);
	arena_attr(&a, 16, ARENA_TEST_F_TOKEN_FD, 0);
	*(__s32 *)((char *)&a + ATTR_MAP_TOKEN_FD_OFF) = -1;
	EXPECT_EQ(-EBADF, create_result(&a));
	arena_attr(&a, 16, ARENA_TEST_F_TOKEN_FD, 0);
	*(__s32 *)((char *)&a + ATTR_MAP_TOKEN_FD_OFF) = other; /* not a token */
	EXPECT_EQ(-EINVAL, create_result(&a));
	close(other);
}

TEST(create_nonzero_bytes_past_the_last_field_are_refused)
{
	unsigned char big[256];
	union bpf_attr a;

	/* Inside the kernel's union bpf_attr: CHECK_ATTR says EINVAL. */
	arena_attr(&a, 16, 0, 0);
	((unsigned char *)&a)[ATTR_MAP_CREATE_END] = 1;
	EXPECT_EQ(-EINVAL, create_result(&a));
	arena_attr(&a, 16, 0, 0);
	((unsigned char *)&a)[sizeof(a) - 1] = 1;
	EXPECT_EQ(-EINVAL, create_result(&a));
	/* Beyond the kernel's union: bpf_check_uarg_tail_zero says E2BIG. */
	arena_attr(&a, 16, 0, 0);
	memset(big, 0, sizeof(big));
	memcpy(big, &a, sizeof(a));
	big[sizeof(big) - 1] = 1;
	errno = 0;
	EXPECT_GT(0, sys_bpf(BPF_MAP_CREATE, big, sizeof(big)));
	EXPECT_EQ(E2BIG, errno);
}

/* --------------------------------------------------------- capabilities */

struct caps_child {
	__u64 caps;
	bool setuid_nobody;
	__u32 key_size;
};

/* Exit status: 0 if the arena was created, else errno; 255 on setup failure. */
static int caps_child_fn(void *arg)
{
	const struct caps_child *c = arg;
	union bpf_attr a;
	int fd;

	if (c->setuid_nobody) {
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) ||
		    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			return 255;
	} else if (set_caps(c->caps)) {
		return 255;
	}
	arena_attr(&a, 16, 0, 0);
	a.key_size = c->key_size;
	fd = create_attr(&a);
	return fd < 0 ? -fd : 0;
}

TEST(create_without_any_capability_is_eperm)
{
	struct caps_child c = { .caps = 0 };

	EXPECT_EQ(EPERM, run_in_child(caps_child_fn, &c, NULL));
}

TEST(create_as_unprivileged_uid_is_eperm)
{
	struct caps_child c = { .setuid_nobody = true };

	EXPECT_EQ(EPERM, run_in_child(caps_child_fn, &c, NULL));
}

/* The capability check comes before the arena's own attribute checks. */
TEST(create_without_capabilities_is_eperm_before_attribute_checks)
{
	struct caps_child c = { .caps = 0, .key_size = 8 };

	EXPECT_EQ(EPERM, run_in_child(caps_child_fn, &c, NULL));
}

TEST(create_with_cap_bpf_alone_succeeds)
{
	struct caps_child c = { .caps = 1ULL << CAP_BPF };

	EXPECT_EQ(0, run_in_child(caps_child_fn, &c, NULL));
}

TEST(create_with_cap_sys_admin_alone_succeeds)
{
	struct caps_child c = { .caps = 1ULL << CAP_SYS_ADMIN };

	EXPECT_EQ(0, run_in_child(caps_child_fn, &c, NULL));
}

TEST(create_with_cap_perfmon_alone_is_eperm)
{
	struct caps_child c = { .caps = 1ULL << CAP_PERFMON };

	EXPECT_EQ(EPERM, run_in_child(caps_child_fn, &c, NULL));
}

/* --------------------------------------------------------- map ops */

/*
 * key_size is 0, so a non-NULL key pointer is refused by the generic code
 * (EINVAL) before the arena's op runs; with a NULL key the op's own errno
 * comes back.
 */
TEST(lookup_elem_is_einval)
{
	__u64 key = 0, value = 0;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, elem_op(BPF_MAP_LOOKUP_ELEM, fd, NULL, NULL, NULL));
	EXPECT_EQ(EINVAL, elem_op(BPF_MAP_LOOKUP_ELEM, fd, NULL, &value, NULL));
	EXPECT_EQ(EINVAL, elem_op(BPF_MAP_LOOKUP_ELEM, fd, &key, &value, NULL));
	close(fd);
}

TEST(update_elem_is_eopnotsupp_and_einval_with_a_key)
{
	__u64 key = 0, value = 0;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EOPNOTSUPP, elem_op(BPF_MAP_UPDATE_ELEM, fd, NULL, NULL, NULL));
	EXPECT_EQ(EOPNOTSUPP, elem_op(BPF_MAP_UPDATE_ELEM, fd, NULL, &value, NULL));
	EXPECT_EQ(EINVAL, elem_op(BPF_MAP_UPDATE_ELEM, fd, &key, &value, NULL));
	close(fd);
}

TEST(delete_elem_is_eopnotsupp_and_einval_with_a_key)
{
	__u64 key = 0;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EOPNOTSUPP, elem_op(BPF_MAP_DELETE_ELEM, fd, NULL, NULL, NULL));
	EXPECT_EQ(EINVAL, elem_op(BPF_MAP_DELETE_ELEM, fd, &key, NULL, NULL));
	close(fd);
}

TEST(get_next_key_is_eopnotsupp_and_einval_with_a_key)
{
	__u64 key = 0, next = 0;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EOPNOTSUPP, elem_op(BPF_MAP_GET_NEXT_KEY, fd, NULL, NULL, &next));
	EXPECT_EQ(EOPNOTSUPP, elem_op(BPF_MAP_GET_NEXT_KEY, fd, NULL, NULL, NULL));
	EXPECT_EQ(EINVAL, elem_op(BPF_MAP_GET_NEXT_KEY, fd, &key, NULL, &next));
	close(fd);
}

/* Not in the research notes: the kernel-internal ENOTSUPP (524) leaks out. */
TEST(lookup_and_delete_elem_is_enotsupp_524_and_einval_with_a_key)
{
	__u64 key = 0, value = 0;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(KERNEL_ENOTSUPP, elem_op(BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, NULL, NULL, NULL));
	EXPECT_EQ(KERNEL_ENOTSUPP, elem_op(BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, NULL, &value, NULL));
	EXPECT_EQ(EINVAL, elem_op(BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, &key, &value, NULL));
	close(fd);
}

TEST(batch_ops_are_enotsupp_524)
{
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(KERNEL_ENOTSUPP, batch_op(BPF_MAP_LOOKUP_BATCH, fd));
	EXPECT_EQ(KERNEL_ENOTSUPP, batch_op(BPF_MAP_LOOKUP_AND_DELETE_BATCH, fd));
	EXPECT_EQ(KERNEL_ENOTSUPP, batch_op(BPF_MAP_UPDATE_BATCH, fd));
	EXPECT_EQ(KERNEL_ENOTSUPP, batch_op(BPF_MAP_DELETE_BATCH, fd));
	close(fd);
}

/* A second freeze is EPERM (a frozen map is no longer writable), not EBUSY. */
TEST(freeze_of_an_unmapped_arena_works_and_a_second_freeze_is_eperm)
{
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, map_freeze(fd));
	EXPECT_EQ(-EPERM, map_freeze(fd));
	close(fd);
}

TEST(frozen_arena_refuses_writable_mmap_eperm_allows_readonly)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_freeze(fd));
	EXPECT_EQ(EPERM, map_shared(fd, NULL, len, 0, &p));
	ASSERT_EQ(0, do_mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0, &p));
	/* A read fault still allocates a (zeroed) page. */
	EXPECT_EQ(0, ((volatile char *)p)[3 * PAGE]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(freeze_with_a_readonly_mapping_works)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, do_mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0, &p));
	EXPECT_EQ(0, map_freeze(fd));
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

/*
 * The arena replaces the generic bpf-map vm_ops, whose close would drop the
 * map's write count: once mapped writable, an arena can never be frozen,
 * even after munmap.  (A 6.12 quirk, not in the research notes.)
 */
TEST(freeze_is_ebusy_once_mapped_writable_even_after_munmap)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	EXPECT_EQ(-EBUSY, map_freeze(fd));
	ASSERT_EQ(0, munmap(p, len));
	EXPECT_EQ(-EBUSY, map_freeze(fd));
	close(fd);
}

/* ----------------------------------------------------------- mmap rules */

TEST(mmap_private_is_einval)
{
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, do_mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0, &p));
	EXPECT_EQ(EINVAL, do_mmap(NULL, 16 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0, &p));
	/* The refusals did not fix an address: a normal mmap still works. */
	ASSERT_EQ(0, map_shared(fd, NULL, 16 * PAGE, 0, &p));
	munmap(p, 16 * PAGE);
	close(fd);
}

TEST(mmap_nonzero_pgoff_is_einval)
{
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, do_mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, PAGE, &p));
	EXPECT_EQ(EINVAL, do_mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 8 * PAGE, &p));
	close(fd);
}

TEST(mmap_longer_than_4g_is_e2big)
{
	char *p;
	int fd = arena_create(ARENA_MAX_PAGES, 0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(E2BIG, map_shared(fd, NULL, SZ_4G + PAGE, 0, &p));
	EXPECT_EQ(E2BIG, map_shared(fd, NULL, 2 * SZ_4G, 0, &p));
	close(fd);
}

/* Without map_extra, the kernel checks the first length against 4 GiB only. */
TEST(first_mmap_length_is_not_bound_by_max_entries_without_map_extra)
{
	const size_t len = 256 * PAGE;
	char *p;
	int fd = arena_create(1, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	EXPECT_FALSE(crosses_4g((uintptr_t)p, len));
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(later_mmap_without_the_first_address_is_einval)
{
	const size_t len = 16 * PAGE;
	char *p, *q;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	EXPECT_EQ(EINVAL, map_shared(fd, NULL, len, 0, &q));
	/* Another (free) address, as a hint or with MAP_FIXED / _NOREPLACE. */
	ASSERT_FALSE(in_proc_maps((uintptr_t)p + 64 * len, len));
	EXPECT_EQ(EINVAL, map_shared(fd, p + 64 * len, len, 0, &q));
	EXPECT_EQ(EINVAL, map_shared(fd, p + 64 * len, len, MAP_FIXED, &q));
	EXPECT_EQ(EINVAL, map_shared(fd, p + 64 * len, len, MAP_FIXED_NOREPLACE, &q));
	EXPECT_FALSE(in_proc_maps((uintptr_t)p + 64 * len, len));
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(later_mmap_longer_is_e2big_shorter_is_einval)
{
	const size_t len = 16 * PAGE;
	char *p, *q;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	EXPECT_EQ(E2BIG, map_shared(fd, NULL, 2 * len, 0, &q));
	EXPECT_EQ(E2BIG, map_shared(fd, p, 2 * len, MAP_FIXED, &q));
	EXPECT_EQ(EINVAL, map_shared(fd, NULL, len / 2, 0, &q));
	EXPECT_EQ(EINVAL, map_shared(fd, p, len / 2, MAP_FIXED, &q));
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

/*
 * The right address as a mere hint while the arena is mapped there: the mm
 * picks another place, and the arena's mmap refuses it with EBUSY.
 */
TEST(later_mmap_hint_at_the_occupied_start_is_ebusy)
{
	const size_t len = 16 * PAGE;
	char *p, *q;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	EXPECT_EQ(EBUSY, map_shared(fd, p, len, 0, &q));
	EXPECT_EQ(EEXIST, map_shared(fd, p, len, MAP_FIXED_NOREPLACE, &q));
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(same_address_and_length_with_map_fixed_works_and_keeps_data)
{
	const size_t len = 16 * PAGE;
	char *p, *q;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	p[5] = 42;
	p[9 * PAGE] = 43;
	ASSERT_EQ(0, map_shared(fd, p, len, MAP_FIXED, &q));
	EXPECT_EQ((uintptr_t)p, (uintptr_t)q);
	EXPECT_EQ(42, q[5]);
	EXPECT_EQ(43, q[9 * PAGE]);
	/* Replacing it again, read-only this time, is fine as well. */
	ASSERT_EQ(0, do_mmap(p, len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0, &q));
	EXPECT_EQ(42, q[5]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(mmap_never_crosses_a_4g_boundary)
{
	static const size_t sizes[] = {
		PAGE, 16 * PAGE, 2UL << 20, 256UL << 20, 1UL << 30, 3UL << 30,
		(3UL << 30) + PAGE, SZ_4G - PAGE, SZ_4G,
	};
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int fd = arena_create(sizes[i] / PAGE, 0, 0);
		char *p;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, map_shared(fd, NULL, sizes[i], 0, &p))
			TH_LOG("size %#zx", sizes[i]);
		EXPECT_FALSE(crosses_4g((uintptr_t)p, sizes[i]))
			TH_LOG("size %#zx mapped at %p", sizes[i], p);
		EXPECT_EQ(0, (uintptr_t)p % PAGE);
		munmap(p, sizes[i]);
		close(fd);
	}
}

TEST(full_4g_arena_is_mapped_4g_aligned)
{
	char *p;
	int fd = arena_create(ARENA_MAX_PAGES, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, SZ_4G, 0, &p));
	EXPECT_EQ(0, (uintptr_t)p % SZ_4G);
	EXPECT_EQ(0, munmap(p, SZ_4G));
	close(fd);
}

/* A hint whose range would cross 4 GiB is rounded up to the boundary. */
TEST(first_mmap_hint_crossing_4g_is_moved_up_to_the_boundary)
{
	const uintptr_t boundary = 0x200000000ULL; /* 8 GiB: free in a PIE process */
	const size_t len = 1UL << 20;
	char *p;
	int fd = arena_create(len / PAGE, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_FALSE(in_proc_maps(boundary - PAGE, 3 * len));
	ASSERT_EQ(0, map_shared(fd, (void *)(boundary - PAGE), len, 0, &p));
	EXPECT_EQ(boundary, (uintptr_t)p);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

/*
 * 6.12 quirk: MAP_FIXED (and MAP_FIXED_NOREPLACE) at an address whose range
 * would cross 4 GiB is not refused: arena_get_unmapped_area rounds it up
 * like a hint, and mmap returns the boundary, not the requested address.
 */
TEST(first_mmap_fixed_crossing_4g_is_moved_up_to_the_boundary)
{
	const size_t len = 1UL << 20;
	static const uintptr_t boundary[2] = { 0x300000000ULL, 0x400000000ULL };
	static const int flags[2] = { MAP_FIXED, MAP_FIXED_NOREPLACE };
	int i;

	for (i = 0; i < 2; i++) {
		char *p;
		int fd = arena_create(len / PAGE, 0, 0);

		ASSERT_LE(0, fd);
		ASSERT_FALSE(in_proc_maps(boundary[i] - PAGE, 3 * len));
		ASSERT_EQ(0, map_shared(fd, (void *)(boundary[i] - PAGE), len, flags[i], &p));
		EXPECT_EQ(boundary[i], (uintptr_t)p);
		EXPECT_FALSE(in_proc_maps(boundary[i] - PAGE, PAGE));
		EXPECT_EQ(0, munmap(p, len));
		close(fd);
	}
}

TEST(map_extra_mmap_must_be_exactly_there)
{
	const uintptr_t x = 0x4000010000ULL; /* page aligned, not 4 GiB aligned */
	const size_t len = 16 * PAGE;
	char *p, *q;
	int fd;

	ASSERT_FALSE(in_proc_maps(x, 2 * len));
	fd = arena_create(16, 0, x);
	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, map_shared(fd, NULL, len, 0, &q));
	EXPECT_EQ(EINVAL, map_shared(fd, (void *)(x + len), len, MAP_FIXED, &q));
	EXPECT_EQ(EINVAL, map_shared(fd, (void *)(x - PAGE), len, 0, &q));
	EXPECT_EQ(E2BIG, map_shared(fd, (void *)x, 2 * len, MAP_FIXED, &q));
	EXPECT_EQ(EINVAL, map_shared(fd, (void *)x, len / 2, MAP_FIXED, &q));
	/* As a hint while the place is free, and with MAP_FIXED. */
	ASSERT_EQ(0, map_shared(fd, (void *)x, len, 0, &p));
	EXPECT_EQ(x, (uintptr_t)p);
	p[0] = 1;
	ASSERT_EQ(0, map_shared(fd, (void *)x, len, MAP_FIXED, &q));
	EXPECT_EQ(x, (uintptr_t)q);
	EXPECT_EQ(1, q[0]);
	/* As a hint while the arena is mapped there: EBUSY. */
	EXPECT_EQ(EBUSY, map_shared(fd, (void *)x, len, 0, &q));
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(map_extra_hint_over_another_mapping_is_ebusy)
{
	const uintptr_t x = 0x4100000000ULL;
	const size_t len = 16 * PAGE;
	char *blk, *q;
	int fd;

	ASSERT_FALSE(in_proc_maps(x, len));
	fd = arena_create(16, 0, x);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, do_mmap((void *)x, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			     -1, 0, &blk));
	EXPECT_EQ(EBUSY, map_shared(fd, (void *)x, len, 0, &q));
	munmap(blk, PAGE);
	close(fd);
}

/* ---------------------------------------------------------------- pages */

TEST(untouched_pages_read_as_zero_after_first_touch)
{
	const size_t len = 16 * PAGE;
	size_t i;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	/* First touch by a read. */
	for (i = 0; i < PAGE; i++)
		ASSERT_EQ(0, p[3 * PAGE + i]);
	/* First touch by a write: the rest of the page is zero. */
	p[7 * PAGE + 100] = 1;
	for (i = 0; i < PAGE; i++)
		ASSERT_EQ(i == 100 ? 1 : 0, p[7 * PAGE + i]);
	/* Neighbours are untouched and zero. */
	for (i = 0; i < PAGE; i++) {
		ASSERT_EQ(0, p[6 * PAGE + i]);
		ASSERT_EQ(0, p[8 * PAGE + i]);
	}
	/* The last byte of the arena. */
	EXPECT_EQ(0, p[len - 1]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(data_survives_munmap_and_mmap_at_the_same_address)
{
	const size_t len = 64 * PAGE;
	char *p, *q;
	int fd = arena_create(64, 0, 0), i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	for (i = 0; i < 64; i += 3)
		p[i * PAGE + i] = (char)(i + 1);
	ASSERT_EQ(0, munmap(p, len));
	ASSERT_FALSE(in_proc_maps((uintptr_t)p, len));
	/* The address stays fixed after munmap: NULL is refused ... */
	EXPECT_EQ(EINVAL, map_shared(fd, NULL, len, 0, &q));
	/* ... the old address as a hint works ... */
	ASSERT_EQ(0, map_shared(fd, p, len, 0, &q));
	ASSERT_EQ((uintptr_t)p, (uintptr_t)q);
	for (i = 0; i < 64; i++)
		EXPECT_EQ(i % 3 ? 0 : (char)(i + 1), q[i * PAGE + i]);
	ASSERT_EQ(0, munmap(q, len));
	/* ... and so does MAP_FIXED. */
	ASSERT_EQ(0, map_shared(fd, p, len, MAP_FIXED, &q));
	ASSERT_EQ((uintptr_t)p, (uintptr_t)q);
	for (i = 0; i < 64; i += 3)
		EXPECT_EQ((char)(i + 1), q[i * PAGE + i]);
	EXPECT_EQ(0, munmap(q, len));
	close(fd);
}

TEST(madvise_dontneed_keeps_arena_data)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	p[5] = 42;
	p[5 * PAGE] = 43;
	ASSERT_EQ(0, madvise(p, len, MADV_DONTNEED));
	EXPECT_EQ(42, p[5]);
	EXPECT_EQ(43, p[5 * PAGE]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

static bool map_id_exists(__u32 id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_id = id;
	fd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	if (fd < 0)
		return errno != ENOENT;
	close(fd);
	return true;
}

/*
 * The mapping keeps the map alive after close(); whichever of close() and
 * munmap() comes last frees it (its id is gone at once), without a WARNING.
 */
TEST(last_close_and_munmap_free_the_arena_in_a_loop)
{
	const size_t len = 16 * PAGE;
	int i;

	for (i = 0; i < 300; i++) {
		struct bpf_map_info info;
		char *p;
		int fd = arena_create(16, 0, 0);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, map_info(fd, &info));
		ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
		p[(i % 16) * PAGE] = 1;
		if (i & 1) {
			ASSERT_EQ(0, close(fd));
			ASSERT_TRUE(map_id_exists(info.id));
			ASSERT_EQ(1, p[(i % 16) * PAGE]);
			ASSERT_EQ(0, munmap(p, len));
		} else {
			ASSERT_EQ(0, munmap(p, len));
			ASSERT_TRUE(map_id_exists(info.id));
			ASSERT_EQ(0, close(fd));
		}
		ASSERT_FALSE(map_id_exists(info.id)) TH_LOG("iteration %d", i);
	}
}

/* ----------------------------------------------------------------- fork */

struct fork_arg {
	char *p;
	size_t len;
	int fd;
};

static int child_maps_check(void *arg)
{
	const struct fork_arg *f = arg;

	return in_proc_maps((uintptr_t)f->p, f->len) ? 1 : 0;
}

static int child_touch(void *arg)
{
	const struct fork_arg *f = arg;

	return ((volatile char *)f->p)[0] == 7 ? 10 : 11; /* should not return */
}

TEST(fork_child_does_not_inherit_the_mapping)
{
	struct fork_arg f = { .len = 16 * PAGE };
	int sig = 0;

	f.fd = arena_create(16, 0, 0);
	ASSERT_LE(0, f.fd);
	ASSERT_EQ(0, map_shared(f.fd, NULL, f.len, 0, &f.p));
	f.p[0] = 7;
	ASSERT_TRUE(in_proc_maps((uintptr_t)f.p, f.len));
	EXPECT_EQ(0, run_in_child(child_maps_check, &f, NULL));
	EXPECT_EQ(-1, run_in_child(child_touch, &f, &sig));
	EXPECT_EQ(SIGSEGV, sig);
	/* The parent's mapping is unaffected. */
	EXPECT_EQ(7, f.p[0]);
	EXPECT_EQ(0, munmap(f.p, f.len));
	close(f.fd);
}

/* Exit 0 if the child could map the arena and saw the parent's byte. */
static int child_remap(void *arg)
{
	const struct fork_arg *f = arg;
	char *q;

	if (map_shared(f->fd, NULL, f->len, 0, &q) != EINVAL)
		return 1;
	if (map_shared(f->fd, f->p, f->len, MAP_FIXED, &q) || q != f->p)
		return 2;
	if (q[0] != 7)
		return 3;
	q[1] = 9;
	q[12 * PAGE] = 10;
	return 0;
}

TEST(fork_child_maps_again_at_the_same_address_and_shares_data)
{
	struct fork_arg f = { .len = 16 * PAGE };

	f.fd = arena_create(16, 0, 0);
	ASSERT_LE(0, f.fd);
	ASSERT_EQ(0, map_shared(f.fd, NULL, f.len, 0, &f.p));
	f.p[0] = 7;
	EXPECT_EQ(0, run_in_child(child_remap, &f, NULL));
	EXPECT_EQ(9, f.p[1]);
	EXPECT_EQ(10, f.p[12 * PAGE]);
	EXPECT_EQ(0, munmap(f.p, f.len));
	close(f.fd);
}

/*
 * The exec'ed child: argv = { prog, EXEC_CHILD_ARG, fd, addr, len }.
 * Exit status 0 on success, a step number otherwise.
 */
static int exec_child_main(int argc, char **argv)
{
	unsigned long addr, len;
	char *p;
	int fd;

	if (argc != 5)
		return 20;
	fd = atoi(argv[2]);
	addr = strtoul(argv[3], NULL, 0);
	len = strtoul(argv[4], NULL, 0);
	/* The inherited fd is still the arena. */
	{
		struct bpf_map_info info;

		if (map_info(fd, &info) || info.type != BPF_MAP_TYPE_ARENA)
			return 21;
	}
	/* The exec'ed image has no arena mapping ... */
	if (in_proc_maps(addr, len))
		return 22;
	/* ... may not pick its own address ... */
	if (map_shared(fd, NULL, len, 0, &p) != EINVAL)
		return 23;
	/* ... and maps it at the parent's address with MAP_FIXED. */
	if (map_shared(fd, (void *)addr, len, MAP_FIXED, &p) || (unsigned long)p != addr)
		return 24;
	if (p[0] != 0x11 || p[5 * PAGE + 1] != 0x22 || p[7 * PAGE] != 0)
		return 25;
	p[5 * PAGE + 2] = 0x33;
	p[7 * PAGE] = 0x44; /* a page the parent never touched */
	if (munmap(p, len))
		return 26;
	return 0;
}

TEST(exec_child_maps_at_the_same_address_and_shares_data_both_ways)
{
	const size_t len = 16 * PAGE;
	char fdstr[16], addrstr[32], lenstr[32];
	int fd, cfd, status;
	char *p;
	pid_t pid;

	fd = arena_create(16, 0, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	p[0] = 0x11;
	p[5 * PAGE + 1] = 0x22;
	/* bpf fds are O_CLOEXEC: hand the child a dup without it. */
	cfd = fcntl(fd, F_DUPFD, 0);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, fcntl(cfd, F_GETFD) & FD_CLOEXEC);
	snprintf(fdstr, sizeof(fdstr), "%d", cfd);
	snprintf(addrstr, sizeof(addrstr), "%#lx", (unsigned long)p);
	snprintf(lenstr, sizeof(lenstr), "%#zx", len);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *argv[] = { "arena_abi_test", EXEC_CHILD_ARG, fdstr, addrstr, lenstr, NULL };

		execv("/proc/self/exe", argv);
		_exit(99);
	}
	close(cfd);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0x33, p[5 * PAGE + 2]);
	EXPECT_EQ(0x44, p[7 * PAGE]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

/* ------------------------------------------------ mremap munmap mprotect */

TEST(mremap_grow_is_efault)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	p[3] = 3;
	errno = 0;
	EXPECT_EQ((uintptr_t)MAP_FAILED, (uintptr_t)mremap(p, len, 2 * len, 0));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ((uintptr_t)MAP_FAILED, (uintptr_t)mremap(p, len, 2 * len, MREMAP_MAYMOVE));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(3, p[3]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(mremap_shrink_is_einval)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	p[15 * PAGE] = 15;
	errno = 0;
	EXPECT_EQ((uintptr_t)MAP_FAILED, (uintptr_t)mremap(p, len, len / 2, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(in_proc_maps((uintptr_t)p + len - PAGE, PAGE));
	EXPECT_EQ(15, p[15 * PAGE]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(mremap_move_is_einval)
{
	const size_t len = 16 * PAGE;
	char *p, *dst;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	p[3] = 3;
	/* A free destination, 1 GiB away from the arena. */
	dst = p + (1UL << 30);
	if (in_proc_maps((uintptr_t)dst, len))
		dst = p - (1UL << 30);
	ASSERT_FALSE(in_proc_maps((uintptr_t)dst, len));
	errno = 0;
	EXPECT_EQ((uintptr_t)MAP_FAILED,
		  (uintptr_t)mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ((uintptr_t)MAP_FAILED,
		  (uintptr_t)mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, dst));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_FALSE(in_proc_maps((uintptr_t)dst, len));
	EXPECT_EQ(3, p[3]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(partial_munmap_is_einval)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	p[0] = 1;
	p[len - 1] = 2;
	errno = 0;
	EXPECT_EQ(-1, munmap(p + PAGE, PAGE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, munmap(p, PAGE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, munmap(p + len - PAGE, 2 * PAGE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, munmap(p - PAGE, 2 * PAGE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1, p[0]);
	EXPECT_EQ(2, p[len - 1]);
	EXPECT_EQ(0, munmap(p, len));
	EXPECT_FALSE(in_proc_maps((uintptr_t)p, len));
	close(fd);
}

TEST(partial_mprotect_is_einval)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	errno = 0;
	EXPECT_EQ(-1, mprotect(p + PAGE, PAGE, PROT_READ));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, mprotect(p, PAGE, PROT_READ));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, mprotect(p + len - PAGE, PAGE, PROT_NONE));
	EXPECT_EQ(EINVAL, errno);
	/* The whole range can change protection. */
	EXPECT_EQ(0, mprotect(p, len, PROT_READ));
	EXPECT_EQ(0, mprotect(p, len, PROT_READ | PROT_WRITE));
	p[0] = 1;
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(mprotect_exec_is_eacces)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	errno = 0;
	EXPECT_EQ(-1, mprotect(p, len, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(readonly_mapping_cannot_become_writable_eacces)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, do_mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0, &p));
	errno = 0;
	EXPECT_EQ(-1, mprotect(p, len, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_TRUE(access_faults(p, true));
	EXPECT_EQ(SIGSEGV, fault_signo);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

/* ---------------------------------------------------- BPF_F_SEGV_ON_FAULT */

TEST(segv_on_fault_touching_an_unallocated_page_is_sigsegv)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, BPF_F_SEGV_ON_FAULT, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	EXPECT_TRUE(access_faults(p + 3 * PAGE, false));
	EXPECT_EQ(SIGSEGV, fault_signo);
	EXPECT_EQ(SEGV_MAPERR, fault_code);
	EXPECT_EQ((uintptr_t)(p + 3 * PAGE), (uintptr_t)fault_addr);
	EXPECT_TRUE(access_faults(p + 3 * PAGE + 8, true));
	EXPECT_EQ(SIGSEGV, fault_signo);
	EXPECT_EQ((uintptr_t)(p + 3 * PAGE + 8), (uintptr_t)fault_addr);
	/* A fault does not allocate: the page still faults, and so do others. */
	EXPECT_TRUE(access_faults(p + 3 * PAGE, false));
	EXPECT_TRUE(access_faults(p, true));
	EXPECT_TRUE(access_faults(p + len - 1, false));
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

TEST(without_segv_on_fault_touching_allocates_the_page)
{
	const size_t len = 16 * PAGE;
	char *p;
	int fd = arena_create(16, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
	EXPECT_FALSE(access_faults(p + 3 * PAGE, false));
	EXPECT_FALSE(access_faults(p + 4 * PAGE, true));
	EXPECT_EQ(0x5a, p[4 * PAGE]);
	EXPECT_EQ(0, munmap(p, len));
	close(fd);
}

/* --------------------------------------------------------- concurrency */

#define NTHREADS 4
#define SHARED_PAGES 16
#define OWN_PAGES 16
#define ROUNDS 4

struct thr {
	pthread_barrier_t *bar;
	volatile __u64 *base;
	int id;
	int errors;
};

static __u64 marker(int tid, int page)
{
	return 0xa1e0000000000000ULL | ((__u64)tid << 32) | (__u64)page << 8 | 1;
}

static volatile __u64 *own_slot(volatile __u64 *base, int tid, int page, int i)
{
	return base + ((SHARED_PAGES + tid * OWN_PAGES + page) * PAGE + i * 512) / sizeof(__u64);
}

static void *thread_fn(void *arg)
{
	struct thr *t = arg;
	int j, k, i;

	pthread_barrier_wait(t->bar);
	/* Everyone faults the shared pages at once, each in a rotated order. */
	for (k = 0; k < SHARED_PAGES; k++) {
		j = (k + t->id * 3) % SHARED_PAGES;
		t->base[(j * PAGE) / sizeof(__u64) + t->id] = marker(t->id, j);
	}
	/* And its own pages, while the others fault theirs. */
	for (j = 0; j < OWN_PAGES; j++)
		for (i = 0; i < 8; i++)
			*own_slot(t->base, t->id, j, i) = marker(t->id, 1000 + j * 8 + i);
	pthread_barrier_wait(t->bar);
	/* Every thread sees every other thread's writes. */
	for (k = 0; k < NTHREADS; k++) {
		for (j = 0; j < SHARED_PAGES; j++)
			if (t->base[(j * PAGE) / sizeof(__u64) + k] != marker(k, j))
				t->errors++;
		for (j = 0; j < OWN_PAGES; j++)
			for (i = 0; i < 8; i++)
				if (*own_slot(t->base, k, j, i) != marker(k, 1000 + j * 8 + i))
					t->errors++;
	}
	return NULL;
}

TEST(threads_faulting_same_and_different_pages_see_each_others_writes)
{
	const size_t pages = SHARED_PAGES + NTHREADS * OWN_PAGES;
	const size_t len = pages * PAGE;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		struct thr t[NTHREADS];
		pthread_t tid[NTHREADS];
		pthread_barrier_t bar;
		char *p;
		int fd = arena_create(pages, 0, 0), i;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, map_shared(fd, NULL, len, 0, &p));
		ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, NTHREADS));
		for (i = 0; i < NTHREADS; i++) {
			t[i] = (struct thr){ .bar = &bar, .base = (volatile __u64 *)p, .id = i };
			ASSERT_EQ(0, pthread_create(&tid[i], NULL, thread_fn, &t[i]));
		}
		for (i = 0; i < NTHREADS; i++) {
			ASSERT_EQ(0, pthread_join(tid[i], NULL));
			EXPECT_EQ(0, t[i].errors) TH_LOG("round %d thread %d", round, i);
		}
		/* Untouched parts of the shared pages are still zero. */
		for (i = 0; i < SHARED_PAGES; i++)
			EXPECT_EQ(0, ((volatile __u64 *)p)[(i * PAGE) / sizeof(__u64) + NTHREADS]);
		pthread_barrier_destroy(&bar);
		EXPECT_EQ(0, munmap(p, len));
		close(fd);
	}
}

/* ---------------------------------------------------------- 4 GiB arena */

TEST(full_4g_arena_with_a_byte_every_256mib_works)
{
	const size_t step = 256UL << 20;
	size_t off;
	char *p;
	int fd = arena_create(ARENA_MAX_PAGES, 0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_shared(fd, NULL, SZ_4G, 0, &p));
	for (off = 0; off < SZ_4G; off += step)
		p[off + (off / step)] = (char)(off / step + 1);
	p[SZ_4G - 1] = 0x7f;
	for (off = 0; off < SZ_4G; off += step) {
		EXPECT_EQ((char)(off / step + 1), p[off + (off / step)]);
		EXPECT_EQ(0, p[off + step / 2]); /* a page nobody wrote */
	}
	EXPECT_EQ(0x7f, p[SZ_4G - 1]);
	EXPECT_EQ(0, munmap(p, SZ_4G));
	close(fd);
}

/* The harness defines main(); ours dispatches the exec'ed child first. */
#define main arena_abi_harness_main
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], EXEC_CHILD_ARG) == 0)
		return exec_child_main(argc, argv);
	return arena_abi_harness_main(argc, argv);
}

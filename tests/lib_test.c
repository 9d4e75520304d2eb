// SPDX-License-Identifier: GPL-2.0
/*
 * libbpfarena: creation through bpf() and through /dev/bpf_arena, wrapping
 * existing arena maps, persistence of the data, the map fd, page operations,
 * guarded copies on BPF_F_SEGV_ON_FAULT arenas (also from several threads),
 * SIGSEGV chaining, and the error paths with their messages.
 *
 * Module-only features (/dev/bpf_arena) are exercised where the device
 * exists; elsewhere the tests assert that they fail with EOPNOTSUPP and say
 * why.  Each TEST runs in its own process (the harness forks), so every test
 * starts with the library's SIGSEGV handler not yet installed.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "bpf_arena_lib.h"
#include "test_util.h"

#define PAGE ((size_t)sysconf(_SC_PAGESIZE))

/* ---- messages captured through the print callback ---------------------- */

static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char msgs[16384];
static size_t msgs_len;
static int warn_count;

static int capture(enum bpf_arena_print_level level, const char *fmt, va_list args)
{
	char line[1024];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, args);
	pthread_mutex_lock(&msg_lock);
	if (level == BPF_ARENA_WARN)
		warn_count++;
	n = strlen(line);
	if (msgs_len + n < sizeof(msgs)) {
		memcpy(msgs + msgs_len, line, n + 1);
		msgs_len += n;
	}
	pthread_mutex_unlock(&msg_lock);
	return 0;
}

static void msgs_reset(void)
{
	pthread_mutex_lock(&msg_lock);
	msgs[0] = 0;
	msgs_len = 0;
	warn_count = 0;
	pthread_mutex_unlock(&msg_lock);
}

static bool msgs_have(const char *needle)
{
	return strstr(msgs, needle) != NULL;
}

/* ---- helpers ------------------------------------------------------------ */

static bool is_mapped(const void *addr)
{
	unsigned char vec;

	return mincore((void *)((uintptr_t)addr & ~(PAGE - 1)), PAGE, &vec) == 0;
}

/* Arenas of the module can tell their address (BPF_ARENA_IOC_GET_INFO). */
static bool module_reports_address(void)
{
	return !bpf_arena_kernel_has_native() && have_dev();
}

/* A 4 GiB-aligned address with at least 4 GiB free after it (a moment ago). */
static void *free_window(void)
{
	size_t len = 8ULL << 30;
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, len);
	a = ((uintptr_t)p + (4ULL << 30) - 1) & ~((uintptr_t)(4ULL << 30) - 1);
	return (void *)a;
}

static void fill(void *p, size_t len, unsigned int seed)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char)(seed * 131 + i * 7 + 1);
}

static bool check_fill(const void *p, size_t len, unsigned int seed)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (unsigned char)(seed * 131 + i * 7 + 1))
			return false;
	return true;
}

static char verifier_log[65536];

/*
 * Allocates page_cnt pages at addr of a (SEGV_ON_FAULT) arena: through the
 * device where it exists, else through a BPF program calling the kfunc.
 * 0 or -errno.
 */
static int alloc_pages(struct bpf_arena *a, void *addr, __u32 cnt)
{
	void *got = NULL;
	int ret;

	if (have_dev()) {
		ret = bpf_arena_user_alloc_pages(a, addr, cnt, -1, &got);
		return ret ? ret : (got == addr ? 0 : -EFAULT);
	}
	ret = arena_kfunc_run(bpf_arena_map_fd(a), true, ptr_u64(addr), cnt, verifier_log,
			      sizeof(verifier_log));
	if (ret < 0)
		fprintf(stderr, "# kfunc program: %d\n%s\n", ret, verifier_log);
	return ret == 1 ? 0 : (ret < 0 ? ret : -ENOMEM);
}

static int free_pages(struct bpf_arena *a, void *addr, __u32 cnt)
{
	int ret;

	if (have_dev()) {
		ret = bpf_arena_user_free_pages(a, addr, cnt);
		return ret < 0 ? ret : 0;
	}
	ret = arena_kfunc_run(bpf_arena_map_fd(a), false, ptr_u64(addr), cnt, verifier_log,
			      sizeof(verifier_log));
	if (ret < 0)
		fprintf(stderr, "# kfunc program: %d\n%s\n", ret, verifier_log);
	return ret == 1 ? 0 : (ret < 0 ? ret : -EINVAL);
}

/* ---- version, print, probe --------------------------------------------- */

TEST(version_and_print_callback)
{
	bpf_arena_print_fn_t prev;

	EXPECT_STREQ(BPF_ARENA_LIB_VERSION_STRING, bpf_arena_lib_version());
	EXPECT_STREQ(BPF_ARENA_VERSION, bpf_arena_lib_version());
	prev = bpf_arena_set_print(capture);
	EXPECT_TRUE(prev != NULL);	/* the default prints to stderr */
	EXPECT_TRUE(bpf_arena_set_print(NULL) == capture);
	EXPECT_TRUE(bpf_arena_set_print(prev) == NULL);
}

TEST(kernel_has_native_matches_the_kernel)
{
	int native = bpf_arena_kernel_has_native();

	EXPECT_EQ(kernel_has_native_arena() ? 1 : 0, native);
	EXPECT_EQ(native, bpf_arena_kernel_has_native());	/* cached, same answer */
	TH_LOG("native arena: %d, /dev/bpf_arena: %s", native, have_dev() ? "yes" : "no");
}

/* ---- creation through bpf() --------------------------------------------- */

TEST(create_maps_a_usable_arena)
{
	struct bpf_map_info info;
	struct bpf_arena *a = NULL;
	uintptr_t base;
	char *p;
	int i;

	bpf_arena_set_print(capture);
	ASSERT_EQ(0, bpf_arena_create(16, NULL, &a));
	ASSERT_NE(NULL, a);
	p = bpf_arena_base(a);
	base = (uintptr_t)p;
	ASSERT_NE(NULL, p);
	EXPECT_EQ(0, base & (PAGE - 1));
	EXPECT_EQ(16 * PAGE, bpf_arena_size(a));
	EXPECT_EQ(16, bpf_arena_page_cnt(a));
	EXPECT_EQ(BPF_ARENA_F_MMAPABLE, bpf_arena_map_flags(a));
	/* The kernel keeps the user range inside one 4 GiB window. */
	EXPECT_EQ(base >> 32, (base + 16 * PAGE - 1) >> 32);
	EXPECT_EQ(bpf_arena_kernel_has_native() ? BPF_ARENA_BACKEND_KERNEL
						: BPF_ARENA_BACKEND_MODULE,
		  bpf_arena_backend(a));

	/* Every page is there on first touch, zeroed, and keeps what is written. */
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(0, p[i * PAGE + 5]);
		fill(p + i * PAGE, 64, i);
	}
	for (i = 0; i < 16; i++)
		EXPECT_TRUE(check_fill(p + i * PAGE, 64, i));

	/* The map fd is a type-33 map that BPF_OBJ_GET_INFO_BY_FD describes. */
	ASSERT_GE(bpf_arena_map_fd(a), 0);
	EXPECT_EQ(bpf_arena_map_fd(a), bpf_arena_map_fd(a));
	ASSERT_EQ(0, map_info(bpf_arena_map_fd(a), &info));
	EXPECT_EQ(BPF_ARENA_MAP_TYPE, info.type);
	EXPECT_EQ(0, info.key_size);
	EXPECT_EQ(0, info.value_size);
	EXPECT_EQ(16, info.max_entries);
	EXPECT_EQ(BPF_ARENA_F_MMAPABLE, info.map_flags);
	EXPECT_EQ(0, info.map_extra);
	EXPECT_NE(0, info.id);
	EXPECT_EQ(0, warn_count) TH_LOG("%s", msgs);

	bpf_arena_destroy(a);
	EXPECT_FALSE(is_mapped(p));
	bpf_arena_destroy(NULL);
}

TEST(create_with_opts_fixed_address_flags_name)
{
	void *win = free_window();
	BPF_ARENA_OPTS(opts,
		.map_flags = BPF_ARENA_F_SEGV_ON_FAULT | BPF_ARENA_F_NO_USER_CONV,
		.map_extra = (__u64)(uintptr_t)win,
		.name = "lib_test_arena_long_name");
	struct bpf_map_info info;
	struct bpf_arena *a = NULL;

	ASSERT_NE(NULL, win);
	bpf_arena_set_print(capture);
	ASSERT_EQ(0, bpf_arena_create(4, &opts, &a)) TH_LOG("%s", msgs);
	EXPECT_EQ(win, bpf_arena_base(a));
	EXPECT_EQ(BPF_ARENA_F_MMAPABLE | BPF_ARENA_F_SEGV_ON_FAULT | BPF_ARENA_F_NO_USER_CONV,
		  bpf_arena_map_flags(a));
	ASSERT_EQ(0, map_info(bpf_arena_map_fd(a), &info));
	EXPECT_EQ(BPF_ARENA_MAP_TYPE, info.type);
	EXPECT_EQ(4, info.max_entries);
	EXPECT_EQ((__u64)(uintptr_t)win, info.map_extra);
	EXPECT_EQ(opts.map_flags | BPF_ARENA_F_MMAPABLE, info.map_flags);
	EXPECT_STREQ("lib_test_arena_", info.name);	/* truncated to 15 */
	bpf_arena_destroy(a);
	EXPECT_FALSE(is_mapped(win));
}

TEST(create_at_an_occupied_address_is_eexist_and_keeps_the_mapping)
{
	void *win = free_window();
	BPF_ARENA_OPTS(opts, .map_extra = (__u64)(uintptr_t)win);
	struct bpf_arena *a = (void *)1;
	char *p;

	ASSERT_NE(NULL, win);
	p = mmap(win, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(win, p);
	strcpy(p, "mine");
	bpf_arena_set_print(capture);
	EXPECT_EQ(-EEXIST, bpf_arena_create(4, &opts, &a));
	EXPECT_EQ(EEXIST, errno);
	EXPECT_EQ(NULL, a);
	EXPECT_TRUE(msgs_have("libbpfarena: bpf_arena_create: mmap")) TH_LOG("%s", msgs);
	EXPECT_TRUE(msgs_have("already mapped")) TH_LOG("%s", msgs);
	EXPECT_STREQ("mine", p);	/* not replaced */
	munmap(p, PAGE);
}

/* Every bad attribute gives the kernel's errno and a message naming it. */
TEST(create_errors_give_the_kernel_errno_and_the_cause)
{
	void *win = free_window();
	__u64 w = (__u64)(uintptr_t)win;
	const struct {
		__u32 pages, flags;
		__u64 map_extra;
		int err;
		const char *cause;
	} cases[] = {
		{ 0, 0, 0, -EINVAL, "0 pages: an arena has at least 1" },
		{ 4, 1U << 0 /* BPF_F_NO_PREALLOC */, 0, -EINVAL,
		  "map_flags 0x401 holds 0x1, which arena maps do not accept" },
		{ 4, 0, w + 1, -EINVAL, "the fixed user address (map_extra) 0x%llx is not a "
		  "multiple of the page size (4096)" },
		{ (__u32)((4ULL << 30) / PAGE) + 1, 0, 0, -E2BIG,
		  "1048577 pages (4096 MiB) exceed the 4 GiB limit of an arena (1048576 pages)" },
		{ 2, 0, w + (4ULL << 30) - PAGE, -ERANGE, "the range [0x%llx, 0x%llx) of the fixed "
		  "user address (map_extra) crosses a 4 GiB boundary" },
	};
	char cause[256];
	struct bpf_arena *a;
	size_t i;

	ASSERT_NE(NULL, win);
	bpf_arena_set_print(capture);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		BPF_ARENA_OPTS(opts, .map_flags = cases[i].flags, .map_extra = cases[i].map_extra);

		msgs_reset();
		a = (void *)1;
		errno = 0;
		EXPECT_EQ(cases[i].err, bpf_arena_create(cases[i].pages, &opts, &a))
			TH_LOG("case %zu: %s", i, msgs);
		EXPECT_EQ(-cases[i].err, errno);
		EXPECT_EQ(NULL, a);
		EXPECT_EQ(1, warn_count);
		EXPECT_TRUE(msgs_have("libbpfarena: bpf_arena_create: BPF_MAP_CREATE"))
			TH_LOG("case %zu: %s", i, msgs);
		/* In the caller's numbers. */
		snprintf(cause, sizeof(cause), cases[i].cause,
			 (unsigned long long)cases[i].map_extra,
			 (unsigned long long)(cases[i].map_extra + 2 * PAGE));
		EXPECT_TRUE(msgs_have(cause)) TH_LOG("case %zu: want \"%s\" in %s", i, cause, msgs);
		EXPECT_TRUE(msgs_have(strerror(-cases[i].err))) TH_LOG("case %zu: %s", i, msgs);
	}
}

TEST(create_rejects_bad_opts_and_null_out_pointer)
{
	struct {
		struct bpf_arena_create_opts o;
		char newer[8];
	} big;
	struct bpf_arena_create_opts tiny = { .sz = 1 };
	struct bpf_arena *a = (void *)1;

	bpf_arena_set_print(capture);
	EXPECT_EQ(-EINVAL, bpf_arena_create(1, &tiny, &a));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, a);
	EXPECT_TRUE(msgs_have("opts->sz is 1")) TH_LOG("%s", msgs);

	/* A newer caller's struct: fine while the unknown tail is zero. */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	ASSERT_EQ(0, bpf_arena_create(1, &big.o, &a)) TH_LOG("%s", msgs);
	bpf_arena_destroy(a);
	msgs_reset();
	big.newer[3] = 1;
	EXPECT_EQ(-EINVAL, bpf_arena_create(1, &big.o, &a));
	EXPECT_TRUE(msgs_have("newer libbpfarena")) TH_LOG("%s", msgs);

	msgs_reset();
	EXPECT_EQ(-EINVAL, bpf_arena_create(1, NULL, NULL));
	EXPECT_TRUE(msgs_have("out-pointer is NULL")) TH_LOG("%s", msgs);
	EXPECT_EQ(-EINVAL, bpf_arena_map_fd(NULL));
}

/* ---- wrapping existing maps --------------------------------------------- */

TEST(from_map_fd_in_the_same_process_uses_the_existing_mapping)
{
	struct bpf_arena *a = NULL, *b = NULL;
	char *p;

	bpf_arena_set_print(capture);
	ASSERT_EQ(0, bpf_arena_create(8, NULL, &a));
	p = bpf_arena_base(a);
	fill(p + 3 * PAGE, 128, 3);

	ASSERT_EQ(0, bpf_arena_from_map_fd(bpf_arena_map_fd(a), &b)) TH_LOG("%s", msgs);
	EXPECT_EQ(p, bpf_arena_base(b));
	EXPECT_EQ(8 * PAGE, bpf_arena_size(b));
	EXPECT_EQ(bpf_arena_map_flags(a), bpf_arena_map_flags(b));
	EXPECT_EQ(bpf_arena_backend(a), bpf_arena_backend(b));
	EXPECT_NE(bpf_arena_map_fd(a), bpf_arena_map_fd(b));	/* its own dup */
	EXPECT_TRUE(check_fill((char *)bpf_arena_base(b) + 3 * PAGE, 128, 3));
	/* Borrowed: destroying b leaves a's mapping alone. */
	bpf_arena_destroy(b);
	EXPECT_TRUE(is_mapped(p));
	EXPECT_TRUE(check_fill(p + 3 * PAGE, 128, 3));
	EXPECT_EQ(0, warn_count) TH_LOG("%s", msgs);
	bpf_arena_destroy(a);
}

/*
 * Mapped by someone else (as libbpf does), no map_extra: among several
 * mappings of the same size, the right one is found and borrowed.
 */
TEST(from_map_fd_finds_the_right_existing_mapping)
{
	struct bpf_arena *a = NULL, *b = NULL;
	int fd[3], i;
	char *p[3];

	bpf_arena_set_print(capture);
	for (i = 0; i < 3; i++) {
		fd[i] = arena_create(4, 0, 0);
		ASSERT_GE(fd[i], 0) TH_LOG("raw BPF_MAP_CREATE: %s", strerror(-fd[i]));
		p[i] = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd[i], 0);
		ASSERT_NE(MAP_FAILED, p[i]);
		snprintf(p[i], 16, "arena %d", i);
	}
	ASSERT_EQ(0, bpf_arena_from_map_fd(fd[1], &a)) TH_LOG("%s", msgs);
	EXPECT_EQ(p[1], bpf_arena_base(a));
	EXPECT_STREQ("arena 1", bpf_arena_base(a));
	ASSERT_EQ(0, bpf_arena_from_map_fd(fd[2], &b)) TH_LOG("%s", msgs);
	EXPECT_EQ(p[2], bpf_arena_base(b));
	bpf_arena_destroy(a);
	bpf_arena_destroy(b);
	for (i = 0; i < 3; i++) {
		EXPECT_TRUE(is_mapped(p[i]));	/* borrowed, not unmapped */
		munmap(p[i], 4 * PAGE);
		close(fd[i]);
	}
}

/* Pages belong to the map: unmapping and remapping keeps them. */
TEST(data_persists_while_the_map_lives)
{
	struct bpf_arena *a = NULL, *b = NULL;
	int fd;
	char *p;

	bpf_arena_set_print(capture);
	ASSERT_EQ(0, bpf_arena_create(8, NULL, &a));
	p = bpf_arena_base(a);
	fill(p, 256, 10);
	fill(p + 7 * PAGE, 256, 17);
	fd = dup(bpf_arena_map_fd(a));
	ASSERT_GE(fd, 0);
	bpf_arena_destroy(a);
	ASSERT_FALSE(is_mapped(p));

	/*
	 * No map_extra, and the address is fixed by the first mmap: the module
	 * reports it, a native kernel does not.
	 */
	msgs_reset();
	if (module_reports_address()) {
		ASSERT_EQ(0, bpf_arena_from_map_fd(fd, &b)) TH_LOG("%s", msgs);
		EXPECT_EQ(p, bpf_arena_base(b));
		EXPECT_TRUE(check_fill(p, 256, 10));
		bpf_arena_destroy(b);
		EXPECT_FALSE(is_mapped(p));
	} else {
		EXPECT_EQ(-EBUSY, bpf_arena_from_map_fd(fd, &b));
		EXPECT_EQ(EBUSY, errno);
		EXPECT_TRUE(msgs_have("bpf_arena_from_map_fd_at()")) TH_LOG("%s", msgs);
	}

	/* Elsewhere: the kernel refuses. */
	msgs_reset();
	EXPECT_EQ(-EINVAL, bpf_arena_from_map_fd_at(fd, p + 4ULL * PAGE, &b));
	EXPECT_TRUE(msgs_have("lives at another address")) TH_LOG("%s", msgs);

	ASSERT_EQ(0, bpf_arena_from_map_fd_at(fd, p, &b)) TH_LOG("%s", msgs);
	EXPECT_EQ(p, bpf_arena_base(b));
	EXPECT_TRUE(check_fill(p, 256, 10));
	EXPECT_TRUE(check_fill(p + 7 * PAGE, 256, 17));
	bpf_arena_destroy(b);
	EXPECT_FALSE(is_mapped(p));	/* b mapped it, so b unmapped it */
	close(fd);
}

/* A map made with raw bpf() (as libbpf does), shared with a child process. */
TEST(from_map_fd_maps_a_foreign_map_and_shares_it_across_fork)
{
	struct bpf_arena *a = NULL;
	int fd, status;
	char *p;
	pid_t pid;

	bpf_arena_set_print(capture);
	fd = arena_create(4, 0, 0);
	ASSERT_GE(fd, 0) TH_LOG("raw BPF_MAP_CREATE: %s", strerror(-fd));
	ASSERT_EQ(0, bpf_arena_from_map_fd(fd, &a)) TH_LOG("%s", msgs);
	p = bpf_arena_base(a);
	EXPECT_EQ(4 * PAGE, bpf_arena_size(a));
	strcpy(p + PAGE, "from the parent");

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct bpf_arena *c = NULL;

		/* Arena mappings are not inherited (VM_DONTCOPY). */
		if (is_mapped(p))
			_exit(10);
		if (module_reports_address()) {
			if (bpf_arena_from_map_fd(fd, &c))
				_exit(11);
		} else {
			if (bpf_arena_from_map_fd(fd, &c) != -EBUSY)
				_exit(11);
			if (bpf_arena_from_map_fd_at(fd, p, &c))
				_exit(12);
		}
		if (bpf_arena_base(c) != p || strcmp(p + PAGE, "from the parent"))
			_exit(13);
		strcpy(p + 2 * PAGE, "from the child");
		bpf_arena_destroy(c);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_STREQ("from the child", p + 2 * PAGE);
	bpf_arena_destroy(a);
	close(fd);
}

TEST(from_map_fd_with_map_extra_maps_there_in_a_child)
{
	void *win = free_window();
	struct bpf_arena *a = NULL;
	int fd, status;
	pid_t pid;

	ASSERT_NE(NULL, win);
	bpf_arena_set_print(capture);
	fd = arena_create(2, 0, (__u64)(uintptr_t)win);
	ASSERT_GE(fd, 0) TH_LOG("raw BPF_MAP_CREATE: %s", strerror(-fd));
	ASSERT_EQ(0, bpf_arena_from_map_fd(fd, &a)) TH_LOG("%s", msgs);
	EXPECT_EQ(win, bpf_arena_base(a));
	strcpy(win, "fixed");
	{
		struct bpf_arena *b = NULL;

		/* Already mapped here at map_extra: borrowed. */
		ASSERT_EQ(0, bpf_arena_from_map_fd(fd, &b)) TH_LOG("%s", msgs);
		EXPECT_EQ(win, bpf_arena_base(b));
		bpf_arena_destroy(b);
		EXPECT_STREQ("fixed", win);
	}

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct bpf_arena *c = NULL;

		if (bpf_arena_from_map_fd(fd, &c))
			_exit(11);
		if (bpf_arena_base(c) != win || strcmp(win, "fixed"))
			_exit(12);
		strcpy((char *)win + PAGE, "child");
		bpf_arena_destroy(c);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_STREQ("child", (char *)win + PAGE);
	bpf_arena_destroy(a);
	close(fd);
}

TEST(from_map_fd_errors)
{
	struct bpf_arena *a = (void *)1;
	int fd, ret;

	bpf_arena_set_print(capture);
	fd = array_create(8, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, bpf_arena_from_map_fd(fd, &a));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, a);
	EXPECT_TRUE(msgs_have("not an arena (type 33)")) TH_LOG("%s", msgs);
	close(fd);

	msgs_reset();
	ret = bpf_arena_from_map_fd(fd, &a);	/* closed: EBADF, or EBADFD on 6.12 */
	EXPECT_TRUE(ret == -EBADF || ret == -EBADFD) TH_LOG("%d", ret);
	EXPECT_TRUE(msgs_have("BPF_OBJ_GET_INFO_BY_FD of fd")) TH_LOG("%s", msgs);

	msgs_reset();
	fd = arena_create(1, 0, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, bpf_arena_from_map_fd_at(fd, (void *)(uintptr_t)(PAGE + 1), &a));
	EXPECT_TRUE(msgs_have("not page aligned")) TH_LOG("%s", msgs);
	EXPECT_EQ(-EINVAL, bpf_arena_from_map_fd(fd, NULL));
	close(fd);
}

/* ---- the device (module only) ------------------------------------------ */

TEST(create_dev)
{
	struct bpf_arena *a = (void *)1, *b = NULL;
	struct bpf_map_info info;
	int fd;
	char *p;

	bpf_arena_set_print(capture);
	if (!have_dev()) {
		TH_LOG("no " BPF_ARENA_DEV_PATH ": checking the EOPNOTSUPP path");
		EXPECT_EQ(-EOPNOTSUPP, bpf_arena_create_dev(4, NULL, &a));
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_EQ(NULL, a);
		EXPECT_TRUE(msgs_have("libbpfarena: bpf_arena_create_dev: needs the bpf_arena module"))
			TH_LOG("%s", msgs);
		return;
	}
	ASSERT_EQ(0, bpf_arena_create_dev(4, NULL, &a)) TH_LOG("%s", msgs);
	p = bpf_arena_base(a);
	EXPECT_EQ(4 * PAGE, bpf_arena_size(a));
	EXPECT_EQ(BPF_ARENA_BACKEND_MODULE, bpf_arena_backend(a));
	fill(p + 2 * PAGE, 100, 2);
	fd = bpf_arena_map_fd(a);	/* created now */
	ASSERT_GE(fd, 0) TH_LOG("%s", msgs);
	EXPECT_EQ(fd, bpf_arena_map_fd(a));
	ASSERT_EQ(0, map_info(fd, &info));
	EXPECT_EQ(BPF_ARENA_MAP_TYPE, info.type);
	EXPECT_EQ(4, info.max_entries);
	EXPECT_EQ(BPF_ARENA_F_MMAPABLE, info.map_flags);
	ASSERT_EQ(0, bpf_arena_from_map_fd(fd, &b)) TH_LOG("%s", msgs);
	EXPECT_EQ(p, bpf_arena_base(b));
	EXPECT_TRUE(check_fill((char *)bpf_arena_base(b) + 2 * PAGE, 100, 2));
	bpf_arena_destroy(b);
	bpf_arena_destroy(a);
	EXPECT_FALSE(is_mapped(p));
}

TEST(create_dev_errors_match_bpf)
{
	BPF_ARENA_OPTS(opts, .map_extra = 12345);
	struct bpf_arena *a = (void *)1;

	bpf_arena_set_print(capture);
	if (!have_dev()) {
		EXPECT_EQ(-EOPNOTSUPP, bpf_arena_create_dev(4, &opts, &a));
		EXPECT_TRUE(msgs_have("bpf_arena module")) TH_LOG("%s", msgs);
		return;
	}
	EXPECT_EQ(-EINVAL, bpf_arena_create_dev(4, &opts, &a));
	EXPECT_EQ(NULL, a);
	EXPECT_TRUE(msgs_have("BPF_ARENA_IOC_CONFIGURE")) TH_LOG("%s", msgs);
	EXPECT_TRUE(msgs_have("the fixed user address (map_extra) 0x3039 is not a multiple of "
			      "the page size (4096)")) TH_LOG("%s", msgs);
	msgs_reset();
	EXPECT_EQ(-E2BIG, bpf_arena_create_dev((__u32)((4ULL << 30) / PAGE) + 1, NULL, &a));
	EXPECT_TRUE(msgs_have("1048577 pages (4096 MiB) exceed the 4 GiB limit of an arena "
			      "(1048576 pages)")) TH_LOG("%s", msgs);
}

/* Page operations need the device; without it they say so. */
TEST(page_ops)
{
	BPF_ARENA_OPTS(opts, .map_flags = BPF_ARENA_F_SEGV_ON_FAULT);
	struct bpf_arena_inspect st;
	struct bpf_arena *a = NULL;
	void *got = NULL;
	char *p, c;

	bpf_arena_set_print(capture);
	ASSERT_EQ(0, bpf_arena_create(16, &opts, &a)) TH_LOG("%s", msgs);
	p = bpf_arena_base(a);
	if (!have_dev()) {
		TH_LOG("no " BPF_ARENA_DEV_PATH ": checking the EOPNOTSUPP path");
		EXPECT_EQ(-EOPNOTSUPP, bpf_arena_user_alloc_pages(a, NULL, 1, -1, &got));
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_TRUE(msgs_have("libbpfarena: bpf_arena_user_alloc_pages: needs the bpf_arena module"))
			TH_LOG("%s", msgs);
		if (bpf_arena_kernel_has_native())
			EXPECT_TRUE(msgs_have("native arena")) TH_LOG("%s", msgs);
		msgs_reset();
		EXPECT_EQ(-EOPNOTSUPP, bpf_arena_user_free_pages(a, p, 1));
		EXPECT_TRUE(msgs_have("bpf_arena_user_free_pages: needs the bpf_arena module"));
		EXPECT_EQ(-EOPNOTSUPP, bpf_arena_prefault(a, p, 1));
		EXPECT_TRUE(msgs_have("bpf_arena_prefault: needs the bpf_arena module"));
		EXPECT_EQ(-EOPNOTSUPP, bpf_arena_inspect(a, &st, sizeof(st)));
		EXPECT_TRUE(msgs_have("bpf_arena_inspect: needs the bpf_arena module"));
		EXPECT_EQ(3, warn_count);
		bpf_arena_destroy(a);
		return;
	}
	ASSERT_EQ(0, bpf_arena_user_alloc_pages(a, p + 2 * PAGE, 2, -1, &got)) TH_LOG("%s", msgs);
	EXPECT_EQ(p + 2 * PAGE, got);
	EXPECT_EQ(0, p[2 * PAGE]);	/* allocated: no SIGSEGV */
	p[3 * PAGE] = 7;
	msgs_reset();
	EXPECT_EQ(-EBUSY, bpf_arena_user_alloc_pages(a, p + 3 * PAGE, 1, -1, NULL));
	EXPECT_TRUE(msgs_have("already allocated")) TH_LOG("%s", msgs);
	EXPECT_EQ(-ERANGE, bpf_arena_user_alloc_pages(a, p + 16 * PAGE, 1, -1, NULL));
	EXPECT_TRUE(msgs_have("not inside the arena")) TH_LOG("%s", msgs);
	EXPECT_EQ(-EINVAL, bpf_arena_user_alloc_pages(a, p + 1, 1, -1, NULL));
	EXPECT_EQ(-EINVAL, bpf_arena_user_alloc_pages(a, NULL, 0, -1, NULL));
	EXPECT_EQ(0, bpf_arena_user_alloc_pages(a, NULL, 1, -1, &got));
	EXPECT_EQ(p, got);	/* the first free page */
	EXPECT_EQ(0, p[0]);
	ASSERT_EQ(0, bpf_arena_inspect(a, &st, sizeof(st))) TH_LOG("%s", msgs);
	EXPECT_EQ(3, st.pages);
	EXPECT_EQ(3, st.alloc_ioctl);
	EXPECT_EQ(0, st.alloc_fault);
	EXPECT_EQ(1, st.mapped_vmas);
	EXPECT_EQ((__u64)(uintptr_t)p, st.user_vm_start);
	/* A SEGV_ON_FAULT arena is not prefaulted. */
	msgs_reset();
	EXPECT_EQ(-EPERM, bpf_arena_prefault(a, p, 6));
	EXPECT_TRUE(msgs_have("BPF_F_SEGV_ON_FAULT")) TH_LOG("%s", msgs);
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, &c, p + 5 * PAGE, 1));
	EXPECT_EQ(3, bpf_arena_user_free_pages(a, p, 6));
	EXPECT_EQ(-ENOENT, bpf_arena_user_free_pages(a, p, 6));
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, &c, p + 2 * PAGE, 1));	/* zapped */
	ASSERT_EQ(0, bpf_arena_inspect(a, &st, sizeof(st)));
	EXPECT_EQ(0, st.pages);
	EXPECT_EQ(3, st.free_ioctl);
	EXPECT_EQ(3, st.freed);
	/* An older caller's smaller struct is fine. */
	EXPECT_EQ(0, bpf_arena_inspect(a, &st, offsetof(struct bpf_arena_inspect, user_vm_start)));
	bpf_arena_destroy(a);

	/* An ordinary arena: prefault fills the holes that faults left. */
	ASSERT_EQ(0, bpf_arena_create(8, NULL, &a)) TH_LOG("%s", msgs);
	p = bpf_arena_base(a);
	p[PAGE] = 1;
	EXPECT_EQ(3, bpf_arena_prefault(a, p, 4));
	EXPECT_EQ(0, bpf_arena_prefault(a, p, 4));
	ASSERT_EQ(0, bpf_arena_inspect(a, &st, sizeof(st)));
	EXPECT_EQ(4, st.pages);
	EXPECT_EQ(1, st.alloc_fault);
	EXPECT_EQ(3, st.alloc_prefault);
	EXPECT_EQ(1, p[PAGE]);
	EXPECT_EQ(4, bpf_arena_user_free_pages(a, p, 8));
	EXPECT_EQ(0, p[PAGE]);	/* freed, and a new zeroed page on this fault */
	bpf_arena_destroy(a);
}

/* ---- guarded copies ----------------------------------------------------- */

/* A SEGV_ON_FAULT arena of 4 pages with page 1 allocated and filled. */
static int segv_arena(struct bpf_arena **a)
{
	BPF_ARENA_OPTS(opts, .map_flags = BPF_ARENA_F_SEGV_ON_FAULT);
	char *p;
	int err;

	err = bpf_arena_create(4, &opts, a);
	if (err)
		return err;
	p = bpf_arena_base(*a);
	err = alloc_pages(*a, p + PAGE, 1);
	if (err)
		return err;
	fill(p + PAGE, PAGE, 1);
	return 0;
}

TEST(guarded_copies_on_a_segv_on_fault_arena)
{
	struct bpf_arena *a = NULL;
	char buf[256], *p;

	bpf_arena_set_print(capture);
	ASSERT_EQ(0, segv_arena(&a)) TH_LOG("%s", msgs);
	p = bpf_arena_base(a);

	/* Allocated page: the data. */
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0, bpf_arena_read(a, buf, p + PAGE + 16, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, p + PAGE + 16, sizeof(buf)));
	EXPECT_TRUE(check_fill(p + PAGE, PAGE, 1));

	/* Unallocated page: EFAULT instead of SIGSEGV, and a debug message. */
	msgs_reset();
	errno = 0;
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, buf, p + 40, 8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, warn_count);
	EXPECT_TRUE(msgs_have("bpf_arena_read: 8 bytes at")) TH_LOG("%s", msgs);
	EXPECT_TRUE(msgs_have("is not allocated (BPF_F_SEGV_ON_FAULT arena)")) TH_LOG("%s", msgs);
	/* Across the end of the allocated page: EFAULT (dst partly written). */
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, buf, p + 2 * PAGE - 8, 16));
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, buf, p + PAGE - 100, 200));
	/* Writes likewise. */
	memset(buf, 0x5a, sizeof(buf));
	EXPECT_EQ(-EFAULT, bpf_arena_write(a, p + 3 * PAGE, buf, 8));
	EXPECT_EQ(0, bpf_arena_write(a, p + PAGE + 100, buf, 8));
	EXPECT_EQ(0x5a, p[PAGE + 107]);
	/* Still working after many faults. */
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(-EFAULT, bpf_arena_read(a, buf, p + 2 * PAGE, 1));
	EXPECT_EQ(0, bpf_arena_read(a, buf, p + PAGE, 1));
	EXPECT_EQ(0, bpf_arena_read(a, buf, p, 0));

	/* Outside the arena: ERANGE with a warning. */
	msgs_reset();
	EXPECT_EQ(-ERANGE, bpf_arena_read(a, buf, p + 4 * PAGE - 4, 8));
	EXPECT_EQ(ERANGE, errno);
	EXPECT_EQ(-ERANGE, bpf_arena_write(a, buf, p, 8));	/* dst not in the arena */
	EXPECT_EQ(-ERANGE, bpf_arena_read(a, buf, p - 1, 1));
	EXPECT_TRUE(msgs_have("is not inside the arena")) TH_LOG("%s", msgs);
	EXPECT_EQ(3, warn_count);

	/* Freed: EFAULT again. */
	ASSERT_EQ(0, free_pages(a, p + PAGE, 1));
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, buf, p + PAGE, 8));
	bpf_arena_destroy(a);
}

struct thread_arg {
	struct bpf_arena *a;
	int id;
	int errors;
};

#define THREADS 8
#define ITERS 400

static void *guard_thread(void *arg)
{
	struct thread_arg *t = arg;
	char *p = bpf_arena_base(t->a), buf[64], mine[64];
	int i;

	memset(mine, t->id + 1, sizeof(mine));
	for (i = 0; i < ITERS; i++) {
		char *slot = p + PAGE + 1024 + t->id * 64;

		errno = 0;
		if (bpf_arena_read(t->a, buf, p + 2 * PAGE + (i % 64) * 8, 8) != -EFAULT ||
		    errno != EFAULT)
			t->errors++;
		if (bpf_arena_write(t->a, p + 3 * PAGE + t->id, buf, 1) != -EFAULT)
			t->errors++;
		mine[i % 64] = (char)i;
		if (bpf_arena_write(t->a, slot, mine, sizeof(mine)) ||
		    bpf_arena_read(t->a, buf, slot, sizeof(buf)) ||
		    memcmp(buf, mine, sizeof(buf)))
			t->errors++;
		if (bpf_arena_read(t->a, buf, p + PAGE, 16) || !check_fill(buf, 16, 1))
			t->errors++;
	}
	return NULL;
}

TEST(guarded_copies_from_several_threads)
{
	struct thread_arg args[THREADS];
	pthread_t th[THREADS];
	struct bpf_arena *a = NULL;
	int i;

	bpf_arena_set_print(capture);
	ASSERT_EQ(0, segv_arena(&a)) TH_LOG("%s", msgs);
	for (i = 0; i < THREADS; i++) {
		args[i] = (struct thread_arg){ .a = a, .id = i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, guard_thread, &args[i]));
	}
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, args[i].errors) TH_LOG("thread %d", i);
	}
	bpf_arena_destroy(a);
}

static sigjmp_buf test_jb;
static void *volatile test_fault_addr;
static volatile int test_handler_calls;

static void test_segv_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	test_handler_calls++;
	test_fault_addr = si->si_addr;
	siglongjmp(test_jb, 1);
}

/* SIGSEGVs that are not a guarded copy's reach the handler installed before. */
TEST(other_faults_reach_the_previous_handler)
{
	struct sigaction sa = { .sa_sigaction = test_segv_handler, .sa_flags = SA_SIGINFO };
	struct bpf_arena *a = NULL;
	volatile char sink;
	char buf[8], *p, *none;

	bpf_arena_set_print(capture);
	ASSERT_EQ(0, segv_arena(&a)) TH_LOG("%s", msgs);
	p = bpf_arena_base(a);
	none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));

	/* Installs the library's handler on top of ours. */
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, buf, p, 1));
	EXPECT_EQ(0, test_handler_calls);

	/* Unallocated arena page touched directly: ours, with its address. */
	if (!sigsetjmp(test_jb, 1))
		sink = p[2 * PAGE + 3];
	EXPECT_EQ(1, test_handler_calls);
	EXPECT_EQ(p + 2 * PAGE + 3, test_fault_addr);
	/* A fault outside the arena: ours. */
	if (!sigsetjmp(test_jb, 1))
		sink = none[1];
	EXPECT_EQ(2, test_handler_calls);
	EXPECT_EQ(none + 1, test_fault_addr);
	/* A SIGSEGV sent with kill(): ours, even during nothing guarded. */
	if (!sigsetjmp(test_jb, 1))
		raise(SIGSEGV);
	EXPECT_EQ(3, test_handler_calls);
	/* And guarded copies still work. */
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, buf, p + 3 * PAGE, 1));
	EXPECT_EQ(0, bpf_arena_read(a, buf, p + PAGE, 1));
	EXPECT_EQ(3, test_handler_calls);
	(void)sink;
	munmap(none, PAGE);
	bpf_arena_destroy(a);
}

/* With no handler before the library's, a stray fault still kills. */
TEST(other_faults_still_kill_by_default)
{
	int kinds[] = { 0, 1, 2 }, status;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		pid_t pid = fork();

		ASSERT_GE(pid, 0);
		if (pid == 0) {
			struct bpf_arena *a = NULL;
			volatile char *p, sink;
			volatile uintptr_t null_page = 8;
			char buf[1];

			bpf_arena_set_print(NULL);
			if (segv_arena(&a))
				_exit(20);
			p = bpf_arena_base(a);
			if (bpf_arena_read(a, buf, (char *)p, 1) != -EFAULT)
				_exit(21);
			if (kinds[i] == 0)
				sink = p[2 * PAGE];	/* unallocated arena page, unguarded */
			else if (kinds[i] == 1)
				sink = *(volatile char *)null_page;	/* NULL page */
			else
				kill(getpid(), SIGSEGV);
			(void)sink;
			_exit(22);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("kind %d: status 0x%x", kinds[i], status);
		if (WIFSIGNALED(status))
			EXPECT_EQ(SIGSEGV, WTERMSIG(status));
	}
}

static struct bpf_arena *usr1_arena;
static volatile int usr1_result = 1;

static void usr1_handler(int sig)
{
	char buf[4];

	(void)sig;
	usr1_result = bpf_arena_read(usr1_arena, buf, bpf_arena_base(usr1_arena), sizeof(buf));
}

/* A signal handler may do a guarded copy (once a first call installed the handler). */
TEST(guarded_copy_in_a_signal_handler)
{
	struct sigaction sa = { .sa_handler = usr1_handler };
	struct bpf_arena *a = NULL;
	char buf[4];

	bpf_arena_set_print(NULL);	/* messages are not async-signal-safe */
	ASSERT_EQ(0, segv_arena(&a));
	usr1_arena = a;
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	EXPECT_EQ(0, bpf_arena_read(a, buf, (char *)bpf_arena_base(a) + PAGE, 4));
	raise(SIGUSR1);
	EXPECT_EQ(-EFAULT, usr1_result);
	/* The outer copy's guard is back in place. */
	EXPECT_EQ(-EFAULT, bpf_arena_read(a, buf, (char *)bpf_arena_base(a) + 2 * PAGE, 4));
	EXPECT_EQ(0, bpf_arena_read(a, buf, (char *)bpf_arena_base(a) + PAGE, 4));
	bpf_arena_destroy(a);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bpf_arena: creation by mmap, configuration, the bpf map fd, attaching
 * a bpf()-created arena, page alloc/free/prefault, stats, every bad argument
 * of every ioctl, and module lifetime (unload refused while an arena lives,
 * memory back to baseline after).  Needs the module: skipped where there is
 * no /dev/bpf_arena (kernels with native arena).
 */
#include <linux/bpf.h>
#include <linux/bpf_arena.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "test_util.h"

#define PG 4096UL

/* The handle's arena's counters (INSPECT with map_id 0). */
static struct bpf_arena_inspect stats(int fd)
{
	struct bpf_arena_inspect s = { .size = sizeof(s) };

	if (xioctl(fd, BPF_ARENA_IOC_INSPECT, &s))
		memset(&s, 0xff, sizeof(s));
	return s;
}

static struct bpf_arena_info info(int fd)
{
	struct bpf_arena_info i = { .size = sizeof(i) };

	if (xioctl(fd, BPF_ARENA_IOC_GET_INFO, &i))
		memset(&i, 0xff, sizeof(i));
	return i;
}

static char *dev_map(int fd, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

/* Waits (up to 5 s) for deferred arena frees to drop the module's refcount. */
static int wait_refcnt_zero(void)
{
	char buf[32];
	int i;

	for (i = 0; i < 500; i++) {
		if (read_line("/sys/module/bpf_arena/refcnt", buf, sizeof(buf)) &&
		    !strcmp(buf, "0"))
			return 0;
		usleep(10000);
	}
	return -1;
}

TEST(mmap_of_device_creates_arena_with_defaults)
{
	struct bpf_arena_info i;
	int fd;
	char *p;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	i = info(fd);
	EXPECT_EQ(0, i.created);
	EXPECT_EQ(BPF_ARENA_UAPI_VERSION, i.uapi_version);
	p = dev_map(fd, 256 * PG);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, p[0]);
	p[0] = 1;
	p[255 * PG] = 2;
	EXPECT_EQ(2, p[255 * PG]);
	i = info(fd);
	EXPECT_EQ(1, i.created);
	EXPECT_EQ(256, i.max_entries);
	EXPECT_EQ(BPF_ARENA_F_MMAPABLE, i.map_flags);
	EXPECT_EQ((__u64)(unsigned long)p, i.user_vm_start);
	EXPECT_EQ((__u64)(unsigned long)p + 256 * PG, i.user_vm_end);
	EXPECT_NE(0, i.map_id);
	EXPECT_EQ(((unsigned long)p) >> 32, ((unsigned long)p + 256 * PG - 1) >> 32);
	EXPECT_EQ(2, stats(fd).alloc_fault);
	EXPECT_EQ(1, stats(fd).mapped_vmas);
	munmap(p, 256 * PG);
	EXPECT_EQ(0, stats(fd).mapped_vmas);
	EXPECT_EQ(2, stats(fd).pages);
	close(fd);
}

TEST(configure_sets_flags_size_and_name)
{
	struct bpf_arena_config c = { .size = sizeof(c), .map_flags = BPF_ARENA_F_MMAPABLE,
				      .max_entries = 16, .numa_node = -1, .name = "cfg_test" };
	struct bpf_arena_info i;
	int fd;
	char *p;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c));
	i = info(fd);
	EXPECT_EQ(16, i.max_entries);
	EXPECT_STREQ("cfg_test", i.name);
	p = dev_map(fd, 16 * PG);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(1, info(fd).created);
	EXPECT_STREQ("cfg_test", info(fd).name);
	/* Too late once the arena exists. */
	EXPECT_EQ(-EBUSY, dev_configure(fd, BPF_ARENA_F_MMAPABLE, 16, 0));
	munmap(p, 16 * PG);
	close(fd);
}

TEST(configure_rejects_bad_arguments)
{
	struct bpf_arena_config c;
	struct {
		struct bpf_arena_config c;
		__u64 tail;
	} big;
	int fd;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, dev_configure(fd, 0, 16, 0));			/* no MMAPABLE */
	EXPECT_EQ(-EINVAL, dev_configure(fd, BPF_ARENA_F_MMAPABLE | 1, 16, 0));	/* BPF_F_NO_PREALLOC */
	EXPECT_EQ(-EINVAL, dev_configure(fd, BPF_ARENA_F_MMAPABLE | (1U << 20), 16, 0));
	EXPECT_EQ(-E2BIG, dev_configure(fd, BPF_ARENA_F_MMAPABLE, (1U << 20) + 1, 0));
	EXPECT_EQ(-EINVAL, dev_configure(fd, BPF_ARENA_F_MMAPABLE, 16, (1ULL << 40) + 1));
	EXPECT_EQ(-ERANGE, dev_configure(fd, BPF_ARENA_F_MMAPABLE, 16, (1ULL << 40) - PG));
	EXPECT_EQ(-EINVAL, dev_configure(fd, BPF_ARENA_F_MMAPABLE, 0, 1ULL << 40));	/* address, no size */

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.map_flags = BPF_ARENA_F_MMAPABLE;
	c.max_entries = 1;
	c.numa_node = 1 << 20;
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c));	/* no such node */
	c.numa_node = 0;	/* upstream arenas refuse BPF_F_NUMA_NODE */
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c));
	c.numa_node = -1;
	memcpy(c.name, "bad name", 9);
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c));
	memset(c.name, 'a', sizeof(c.name));				/* not terminated */
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c));
	memset(c.name, 0, sizeof(c.name));
	c.size = 2;
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c));	/* size too small */
	EXPECT_EQ(-EFAULT, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, (void *)8));

	/* A newer, larger struct: fine with a zero tail, E2BIG otherwise. */
	memset(&big, 0, sizeof(big));
	big.c = c;
	big.c.size = sizeof(big);
	EXPECT_EQ(0, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &big));
	big.tail = 1;
	EXPECT_EQ(-E2BIG, xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &big));

	EXPECT_EQ(-ENOTTY, xioctl(fd, _IO(BPF_ARENA_IOC_MAGIC, 99), NULL));
	EXPECT_EQ(-ENOTTY, xioctl(fd, _IO('x', 1), NULL));
	/* Page operations need an arena. */
	EXPECT_EQ(-ENXIO, dev_alloc(fd, 0, 1, NULL));
	EXPECT_EQ(-ENXIO, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, 0, 1));
	EXPECT_EQ(-ENXIO, dev_range(fd, BPF_ARENA_IOC_PREFAULT, 0, 1));
	close(fd);
}

TEST(mmap_of_device_follows_upstream_rules)
{
	int fd, fd2;
	char *p, *q;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, PG));
	EXPECT_EQ(EINVAL, errno);
	p = dev_map(fd, 16 * PG);
	ASSERT_NE(MAP_FAILED, p);
	strcpy(p, "shared");
	/* Another length, or another address: refused. */
	EXPECT_EQ(MAP_FAILED, dev_map(fd, 8 * PG));
	EXPECT_EQ(MAP_FAILED, mmap(p + 64 * PG, 16 * PG, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0));
	EXPECT_EQ(MAP_FAILED, mremap(p, 16 * PG, 32 * PG, MREMAP_MAYMOVE));
	EXPECT_EQ(EFAULT, errno);	/* VM_DONTEXPAND, as 6.12 */
	EXPECT_EQ(-1, munmap(p + PG, PG));	/* no split */
	EXPECT_EQ(EINVAL, errno);
	/* Same address and length again, from the bpf map fd. */
	{
		struct bpf_arena_map_fd m = { .size = sizeof(m) };

		ASSERT_EQ(0, xioctl(fd, BPF_ARENA_IOC_MAP_FD, &m));
		fd2 = m.fd;
	}
	q = mmap(p, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd2, 0);
	ASSERT_EQ(p, q);
	EXPECT_STREQ("shared", q);
	munmap(q, 16 * PG);
	close(fd2);
	close(fd);
}

TEST(map_fd_is_a_type_33_bpf_map)
{
	struct bpf_arena_map_fd m = { .size = sizeof(m) };
	struct bpf_map_info mi;
	int fd;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	/* No size yet: the map needs max_entries. */
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_MAP_FD, &m));
	ASSERT_EQ(0, dev_configure(fd, BPF_ARENA_F_MMAPABLE, 64, 0));
	m.flags = 1;
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_MAP_FD, &m));
	m.flags = 0;
	ASSERT_EQ(0, xioctl(fd, BPF_ARENA_IOC_MAP_FD, &m));
	ASSERT_LE(0, m.fd);
	ASSERT_EQ(0, map_info(m.fd, &mi));
	EXPECT_EQ(BPF_ARENA_MAP_TYPE, mi.type);
	EXPECT_EQ(0, mi.key_size);
	EXPECT_EQ(0, mi.value_size);
	EXPECT_EQ(64, mi.max_entries);
	EXPECT_EQ(BPF_ARENA_F_MMAPABLE, mi.map_flags);
	EXPECT_EQ(info(fd).map_id, mi.id);
	EXPECT_NE(0, mi.id);
	close(m.fd);
	close(fd);
}

TEST(attach_wraps_a_bpf_created_arena)
{
	struct bpf_arena_attach at = { .size = sizeof(at) };
	int mfd, fd, afd;
	__u64 addr;
	char *p;

	NEED_DEV();
	mfd = arena_create(32, 0, 0);
	ASSERT_LE(0, mfd);
	p = mmap(NULL, 32 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, p);
	fd = dev_open();
	ASSERT_LE(0, fd);
	at.map_fd = 1000;
	EXPECT_EQ(-EBADF, xioctl(fd, BPF_ARENA_IOC_ATTACH, &at));
	at.map_fd = fd;					/* not a bpf map */
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_ATTACH, &at));
	afd = array_create(4, 0);
	ASSERT_LE(0, afd);
	at.map_fd = afd;				/* not an arena */
	EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_ATTACH, &at));
	at.map_fd = mfd;
	ASSERT_EQ(0, xioctl(fd, BPF_ARENA_IOC_ATTACH, &at));
	EXPECT_EQ(-EBUSY, xioctl(fd, BPF_ARENA_IOC_ATTACH, &at));
	EXPECT_EQ((__u64)(unsigned long)p, info(fd).user_vm_start);
	ASSERT_EQ(0, dev_alloc(fd, 0, 1, &addr));
	EXPECT_EQ((__u64)(unsigned long)p, addr);
	p[0] = 9;
	EXPECT_EQ(9, p[0]);
	EXPECT_EQ(0, stats(fd).alloc_fault);	/* the page came from the ioctl */
	close(afd);
	close(mfd);
	close(fd);
	munmap(p, 32 * PG);
}

TEST(alloc_pages_at_address_and_anywhere)
{
	__u64 a1, a2, base;
	int fd;
	char *p;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	p = dev_map(fd, 8 * PG);
	ASSERT_NE(MAP_FAILED, p);
	base = (unsigned long)p;
	ASSERT_EQ(0, dev_alloc(fd, base + 2 * PG, 2, &a1));
	EXPECT_EQ(base + 2 * PG, a1);
	EXPECT_EQ(0, p[2 * PG]);
	p[3 * PG] = 5;
	ASSERT_EQ(0, dev_alloc(fd, 0, 2, &a2));	/* first free run */
	EXPECT_EQ(base, a2);
	EXPECT_EQ(-EBUSY, dev_alloc(fd, base + 3 * PG, 1, NULL));
	EXPECT_EQ(-EBUSY, dev_alloc(fd, base + PG, 2, NULL));
	EXPECT_EQ(-EINVAL, dev_alloc(fd, base + 1, 1, NULL));
	EXPECT_EQ(-EINVAL, dev_alloc(fd, 0, 0, NULL));
	EXPECT_EQ(-ERANGE, dev_alloc(fd, base + 8 * PG, 1, NULL));
	EXPECT_EQ(-ERANGE, dev_alloc(fd, base - PG, 1, NULL));
	EXPECT_EQ(-ERANGE, dev_alloc(fd, base + 7 * PG, 2, NULL));
	EXPECT_EQ(-ERANGE, dev_alloc(fd, 0, 9, NULL));
	{
		struct bpf_arena_alloc a = { .size = sizeof(a), .page_cnt = 1,
					     .node_id = -1, .flags = 1 };

		EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_ALLOC_PAGES, &a));
		a.flags = 0;
		a.node_id = 1 << 20;
		EXPECT_EQ(-EINVAL, xioctl(fd, BPF_ARENA_IOC_ALLOC_PAGES, &a));
	}
	ASSERT_EQ(0, dev_alloc(fd, 0, 4, &a2));	/* pages 4..7 */
	EXPECT_EQ(-ENOMEM, dev_alloc(fd, 0, 1, NULL));	/* full */
	EXPECT_EQ(8, stats(fd).pages);
	EXPECT_EQ(8, stats(fd).alloc_ioctl);
	EXPECT_EQ(5, p[3 * PG]);
	munmap(p, 8 * PG);
	close(fd);
}

TEST(free_pages_zaps_every_process)
{
	int fd, go[2], done[2], status;
	char *p, c;
	pid_t pid;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	p = dev_map(fd, 4 * PG);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 7;
	p[PG] = 8;
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* fork does not copy the mapping: map it again, same address. */
		char *q = mmap(p, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);

		if (q != p || q[0] != 7 || q[PG] != 8)
			_exit(1);
		if (write(done[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		/* Freed by the parent: the old data is gone here too. */
		_exit(q[0] == 0 && q[PG] == 8 ? 0 : 3);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	EXPECT_EQ(2, stats(fd).mapped_vmas);
	EXPECT_EQ(1, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 1));
	EXPECT_EQ(-ENOENT, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 1));
	EXPECT_EQ(0, p[0]);		/* faults in a new zero page */
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(1, stats(fd).freed);
	EXPECT_EQ(-EINVAL, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p + 1, 1));
	EXPECT_EQ(-EINVAL, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 0));
	EXPECT_EQ(-ERANGE, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p + 4 * PG, 1));
	EXPECT_EQ(-ERANGE, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 5));
	EXPECT_EQ(2, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 4));
	EXPECT_EQ(0, stats(fd).pages);
	munmap(p, 4 * PG);
	close(fd);
}

/*
 * A one-page free zaps user mappings only when the page is mapped
 * somewhere (upstream's rule; module/arena_mem.c, free_needs_zap()): here
 * only in another process, which must see it go.  Two runs: the page
 * touched by the other process only, then by this one only.
 */
TEST(one_page_free_zaps_it_wherever_it_is_mapped)
{
	int fd, go[2], done[2], status, round;
	__u64 a;
	pid_t pid;
	char *p, c;

	NEED_DEV();
	for (round = 0; round < 2; round++) {
		fd = dev_open();
		ASSERT_LE(0, fd);
		p = dev_map(fd, 4 * PG);
		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, dev_alloc(fd, 0, 1, &a));
		ASSERT_EQ((unsigned long)p, a);
		if (round == 1)
			p[0] = 5;
		ASSERT_EQ(0, pipe(go));
		ASSERT_EQ(0, pipe(done));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			char *q = mmap(p, 4 * PG, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_FIXED, fd, 0);

			if (q != p)
				_exit(1);
			if (round == 0)
				q[0] = 9;	/* only this process maps the page */
			if (write(done[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
				_exit(2);
			_exit(q[0] == 0 ? 0 : 3);
		}
		ASSERT_EQ(1, read(done[0], &c, 1));
		EXPECT_EQ(1, dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, a, 1));
		EXPECT_EQ(0, stats(fd).pages);
		EXPECT_EQ(0, p[0]) TH_LOG("round %d: this process still sees the freed page", round);
		ASSERT_EQ(1, write(go[1], "g", 1));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("round %d: the other process kept it", round);
		close(go[0]);
		close(go[1]);
		close(done[0]);
		close(done[1]);
		munmap(p, 4 * PG);
		close(fd);
	}
}

TEST(prefault_allocates_missing_pages)
{
	int fd;
	char *p;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	p = dev_map(fd, 16 * PG);
	ASSERT_NE(MAP_FAILED, p);
	p[PG] = 1;
	EXPECT_EQ(7, dev_range(fd, BPF_ARENA_IOC_PREFAULT, (unsigned long)p, 8));
	EXPECT_EQ(0, dev_range(fd, BPF_ARENA_IOC_PREFAULT, (unsigned long)p, 8));
	EXPECT_EQ(8, stats(fd).pages);
	EXPECT_EQ(1, p[PG]);
	EXPECT_EQ(-ERANGE, dev_range(fd, BPF_ARENA_IOC_PREFAULT, (unsigned long)p + 8 * PG, 9));
	EXPECT_EQ(-EINVAL, dev_range(fd, BPF_ARENA_IOC_PREFAULT, (unsigned long)p + 2, 1));
	munmap(p, 16 * PG);
	close(fd);
}

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(segv_jmp, 1);
}

TEST(segv_on_fault_needs_allocated_pages)
{
	struct sigaction sa = { .sa_handler = on_segv }, old;
	volatile char *p;
	int fd, faulted;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dev_configure(fd, BPF_ARENA_F_MMAPABLE | BPF_ARENA_F_SEGV_ON_FAULT, 4, 0));
	p = dev_map(fd, 4 * PG);
	ASSERT_NE(MAP_FAILED, p);
	sigaction(SIGSEGV, &sa, &old);
	faulted = sigsetjmp(segv_jmp, 1);
	if (!faulted)
		(void)p[0];
	EXPECT_EQ(1, faulted);
	EXPECT_EQ(-EPERM, dev_range(fd, BPF_ARENA_IOC_PREFAULT, (unsigned long)p, 1));
	ASSERT_EQ(0, dev_alloc(fd, (unsigned long)p, 1, NULL));
	faulted = sigsetjmp(segv_jmp, 1);
	if (!faulted)
		p[0] = 3;
	sigaction(SIGSEGV, &old, NULL);
	EXPECT_EQ(0, faulted);
	EXPECT_EQ(3, p[0]);
	EXPECT_EQ(0, stats(fd).alloc_fault);
	munmap((void *)p, 4 * PG);
	close(fd);
}

TEST(four_gib_arena_with_sparse_touches)
{
	unsigned long len = 1UL << 32, off;
	int fd;
	char *p;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	p = dev_map(fd, len);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, (unsigned long)p & (len - 1));	/* 4 GiB aligned */
	for (off = 0; off < len; off += 256UL << 20)
		p[off] = (char)(off >> 28);
	for (off = 0; off < len; off += 256UL << 20)
		EXPECT_EQ((char)(off >> 28), p[off]);
	p[len - 1] = 1;
	EXPECT_EQ(17, stats(fd).pages);
	munmap(p, len);
	close(fd);
}

TEST(unload_refused_while_arena_lives_and_memory_returns)
{
	long before, after;
	int fd, i;
	char *p;

	NEED_DEV();
	fd = dev_open();
	ASSERT_LE(0, fd);
	p = dev_map(fd, 16 * PG);
	ASSERT_NE(MAP_FAILED, p);
	close(fd);			/* the mapping alone keeps the arena */
	p[0] = 1;
	EXPECT_NE(0, kmod_unload());
	EXPECT_TRUE(kmod_is_loaded());
	munmap(p, 16 * PG);
	ASSERT_EQ(0, wait_refcnt_zero());

	/* 20 rounds of 8 MiB touched and torn down: no page may stay behind. */
	before = free_kib();
	for (i = 0; i < 20; i++) {
		fd = dev_open();
		ASSERT_LE(0, fd);
		p = dev_map(fd, 2048 * PG);
		ASSERT_NE(MAP_FAILED, p);
		memset(p, 1, 2048 * PG);
		munmap(p, 2048 * PG);
		close(fd);
	}
	ASSERT_EQ(0, wait_refcnt_zero());
	/*
	 * 160 MiB went through; slab caches keep a little, and page tables
	 * come back after an RCU grace period: give them up to 5 s (a page
	 * left behind never comes back).
	 */
	for (i = 0; i < 50; i++) {
		after = free_kib();
		if (before - after < 4 * 1024)
			break;
		usleep(100 * 1000);
	}
	TH_LOG("free memory (with per-CPU lists) %ld kB lower after %d00 ms", before - after, i);
	EXPECT_LT(before - after, 4 * 1024);
	EXPECT_EQ(0, kmod_unload());
	EXPECT_EQ(0, kmod_load());
}

TEST_HARNESS_MAIN

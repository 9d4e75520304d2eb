// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bpf_arena as an unprivileged entry point (issue 12, docs/SECURITY.md):
 *
 * - access modes: a handle's rights are the device open mode intersected with
 *   the attached map fd's mode; frozen arenas refuse writes as bpf map fds do
 *   (table-driven over device mode x map fd mode x operation);
 * - memory: pages of device arenas are charged to the creator's
 *   RLIMIT_MEMLOCK (user_struct->locked_vm, as io_uring), whatever allocates
 *   them (ioctl, prefault, user fault);
 * - address space: per-user and global caps on device arenas (module
 *   parameters), prompt teardown, root's bpf() arenas unaffected.
 *
 * The guest runs tests as root: the tests that need an unprivileged caller
 * open the device node to everyone for their duration and fork children that
 * drop to uid 1000/1001 (which clears every capability).
 */
#include <linux/bpf.h>
#include <linux/bpf_arena.h>
#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "test_util.h"

#define PG 4096UL
#define FIXED_ADDR (1ULL << 40)
#define PARAMS "/sys/module/bpf_arena/parameters/"

/* In children: report a failed check and return from the child function. */
#define CK(cond)                                                            \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "# child uid %d, line %d: %s (errno %d)\n", \
				(int)getuid(), __LINE__, #cond, errno);     \
			return 1;                                           \
		}                                                           \
	} while (0)

/* A new fd of the map behind fd, opened with open_flags (BPF_F_RDONLY...). */
static int reopen_map(int fd, __u32 open_flags)
{
	struct bpf_map_info mi;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	memset(&mi, 0, sizeof(mi));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(mi);
	a.info.info = (__u64)(unsigned long)&mi;
	if (bpf_sys_err(BPF_OBJ_GET_INFO_BY_FD, &a))
		return -1;
	memset(&a, 0, sizeof(a));
	a.map_id = mi.id;
	a.open_flags = open_flags;
	return (int)bpf_sys_err(BPF_MAP_GET_FD_BY_ID, &a);
}

/* -errno of mmap at addr (MAP_FIXED_NOREPLACE unless 0), or 0 and *out. */
static int try_mmap(int fd, __u64 addr, size_t len, int prot, char **out)
{
	int flags = MAP_SHARED | (addr ? MAP_FIXED_NOREPLACE : 0);
	char *p = mmap((void *)(unsigned long)addr, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	return 0;
}

static int norm(long r)
{
	return r < 0 ? (int)r : 0;
}

/* ------------------------------------------------------------------ */
/* 1. Access modes                                                     */

enum op { CONF, ATT, INFO, INSPECT, MRO, MPROT, MRW, ALLOC, PREF, FREE, MAPFD, NR_OPS };

static const char *const op_names[NR_OPS] = {
	"configure", "attach", "get_info", "inspect", "mmap_ro", "mprotect_rw",
	"mmap_rw", "alloc", "prefault", "free", "map_fd",
};

#define NA 1		/* not applicable in this row */
#define NONE (-1)	/* no map fd: the handle creates its own arena */

struct access_row {
	int dev_mode;		/* O_RDONLY / O_RDWR */
	int map_mode;		/* NONE / O_RDONLY / O_WRONLY / O_RDWR */
	int expect[NR_OPS];	/* 0, -errno or NA */
	int fd_mode;		/* O_ACCMODE of the MAP_FD fd when it succeeds */
};

/*
 * Rights = device mode & map fd mode.  Writes without the write right: EPERM
 * (as map_update_elem on a read-only map fd); mmap without the needed right:
 * EACCES (as do_mmap on a file opened without it); creating an arena needs a
 * writable handle (EPERM); attach with no right left: EACCES.
 */
static const struct access_row access_table[] = {
	/*                          conf    att      info insp     mro      mprot    mrw      alloc   pref    free    mapfd */
	{ O_RDWR,   NONE,     { 0,      NA,      0, -ENXIO, 0,       -EACCES, 0,       0,      0,      0,      0      }, O_RDWR },
	{ O_RDWR,   O_RDONLY, { 0,      0,       0, 0,      0,       -EACCES, -EACCES, -EPERM, -EPERM, -EPERM, 0      }, O_RDONLY },
	{ O_RDWR,   O_WRONLY, { 0,      0,       0, 0,      -EACCES, NA,      -EACCES, 0,      0,      0,      0      }, O_WRONLY },
	{ O_RDWR,   O_RDWR,   { 0,      0,       0, 0,      0,       -EACCES, 0,       0,      0,      0,      0      }, O_RDWR },
	{ O_RDONLY, NONE,     { -EPERM, NA,      0, -ENXIO, -EPERM,  NA,      -EACCES, -EPERM, -EPERM, -EPERM, -EPERM }, 0 },
	{ O_RDONLY, O_RDONLY, { -EPERM, 0,       0, 0,      0,       -EACCES, -EACCES, -EPERM, -EPERM, -EPERM, 0      }, O_RDONLY },
	{ O_RDONLY, O_WRONLY, { -EPERM, -EACCES, 0, -ENXIO, -EPERM,  NA,      -EACCES, -EPERM, -EPERM, -EPERM, -EPERM }, 0 },
	{ O_RDONLY, O_RDWR,   { -EPERM, 0,       0, 0,      0,       -EACCES, -EACCES, -EPERM, -EPERM, -EPERM, 0      }, O_RDONLY },
};

static const char *mode_name(int m)
{
	return m == NONE ? "none" : m == O_RDONLY ? "rdonly" : m == O_WRONLY ? "wronly" : "rdwr";
}

/* Runs one row; returns the number of mismatches (each logged). */
static int run_access_row(struct __test_metadata *_metadata, const struct access_row *row)
{
	int got[NR_OPS], owner_map = -1, owner_dev = -1, map = -1, h, i, bad = 0;
	long owner_pages = -1;
	__u64 base = 0;
	char *p = NULL, *q = NULL;
	long r;

	for (i = 0; i < NR_OPS; i++)
		got[i] = NA;
	if (row->map_mode != NONE) {
		/* The owner: a bpf() arena at a fixed address, page 0 holds 'M'. */
		owner_map = arena_create(16, 0, FIXED_ADDR);
		ASSERT_LE(0, owner_map);
		ASSERT_EQ(0, try_mmap(owner_map, FIXED_ADDR, 16 * PG, PROT_READ | PROT_WRITE, &p));
		p[0] = 'M';
		munmap(p, 16 * PG);
		owner_dev = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, owner_dev);
		ASSERT_EQ(0, dev_attach(owner_dev, owner_map));
		owner_pages = dev_pages_allocated(owner_dev);
		ASSERT_EQ(1, owner_pages);
		map = row->map_mode == O_RDWR ? dup(owner_map) :
		      reopen_map(owner_map, row->map_mode == O_RDONLY ? BPF_F_RDONLY : BPF_F_WRONLY);
		ASSERT_LE(0, map);
		base = FIXED_ADDR;
	}
	h = open(BPF_ARENA_DEV_PATH, row->dev_mode | O_CLOEXEC);
	ASSERT_LE(0, h);

	got[CONF] = dev_configure(h, BPF_ARENA_F_MMAPABLE, 16, 0);
	if (row->map_mode != NONE)
		got[ATT] = norm(dev_attach(h, map));
	{
		struct bpf_arena_info inf = { .size = sizeof(inf) };

		got[INFO] = norm(xioctl(h, BPF_ARENA_IOC_GET_INFO, &inf));
	}
	got[INSPECT] = norm(dev_pages_allocated(h));
	got[MRO] = try_mmap(h, base, 16 * PG, PROT_READ, &p);
	if (!got[MRO]) {
		if (row->map_mode != NONE && p[0] != 'M') {
			TH_LOG("dev %s map %s: read-only mapping does not show the owner's data",
			       mode_name(row->dev_mode), mode_name(row->map_mode));
			bad++;
		}
		(void)*(volatile char *)p;
		base = (unsigned long)p;
		got[MPROT] = mprotect(p, 16 * PG, PROT_READ | PROT_WRITE) ? -errno : 0;
		munmap(p, 16 * PG);
	}
	got[MRW] = try_mmap(h, base, 16 * PG, PROT_READ | PROT_WRITE, &q);
	if (!got[MRW]) {
		q[PG] = 'w';
		munmap(q, 16 * PG);
	}
	got[ALLOC] = norm(dev_alloc(h, base + 2 * PG, 1, NULL));
	got[PREF] = norm(dev_range(h, BPF_ARENA_IOC_PREFAULT, base + 3 * PG, 1));
	/* Page 0: the owner's page in attached rows. */
	got[FREE] = norm(dev_range(h, BPF_ARENA_IOC_FREE_PAGES, base, 1));
	r = dev_map_fd(h);
	got[MAPFD] = norm(r);
	if (r >= 0) {
		int fd = (int)r, mode = fcntl(fd, F_GETFL) & O_ACCMODE;
		union bpf_attr a;
		long upd;

		if (mode != row->fd_mode) {
			TH_LOG("dev %s map %s: MAP_FD gave a %s fd, expected %s",
			       mode_name(row->dev_mode), mode_name(row->map_mode),
			       mode_name(mode), mode_name(row->fd_mode));
			bad++;
		}
		/* A write through the new fd: EPERM unless it may write. */
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		upd = bpf_sys_err(BPF_MAP_UPDATE_ELEM, &a);
		if ((upd == -EPERM) != (row->fd_mode == O_RDONLY)) {
			TH_LOG("dev %s map %s: update through the MAP_FD fd gave %ld",
			       mode_name(row->dev_mode), mode_name(row->map_mode), upd);
			bad++;
		}
		/* Writable mapping through the new fd only if it is O_RDWR. */
		r = try_mmap(fd, base, 16 * PG, PROT_READ | PROT_WRITE, &q);
		if (!r)
			munmap(q, 16 * PG);
		if ((r == 0) != (row->fd_mode == O_RDWR)) {
			TH_LOG("dev %s map %s: writable mmap of the MAP_FD fd gave %ld",
			       mode_name(row->dev_mode), mode_name(row->map_mode), r);
			bad++;
		}
		close(fd);
	}
	for (i = 0; i < NR_OPS; i++) {
		if (row->expect[i] == NA || got[i] == row->expect[i])
			continue;
		TH_LOG("dev %s map %s: %s gave %d (%s), expected %d (%s)",
		       mode_name(row->dev_mode), mode_name(row->map_mode), op_names[i],
		       got[i], got[i] == NA ? "not run" : strerror(-got[i]),
		       row->expect[i], strerror(-row->expect[i]));
		bad++;
	}
	/* A refused FREE (or ALLOC) left the owner's pages alone. */
	if (owner_dev >= 0 && row->expect[FREE] && dev_pages_allocated(owner_dev) != owner_pages) {
		TH_LOG("dev %s map %s: the owner's page count changed to %ld",
		       mode_name(row->dev_mode), mode_name(row->map_mode),
		       dev_pages_allocated(owner_dev));
		bad++;
	}
	close(h);
	if (map >= 0)
		close(map);
	if (owner_dev >= 0)
		close(owner_dev);
	if (owner_map >= 0)
		close(owner_map);
	return bad;
}

TEST(access_modes_table)
{
	unsigned int i;
	int bad = 0;

	NEED_DEV();
	for (i = 0; i < sizeof(access_table) / sizeof(access_table[0]); i++)
		bad += run_access_row(_metadata, &access_table[i]);
	EXPECT_EQ(0, bad);
}

TEST(frozen_arena_refuses_writes_through_the_device)
{
	int mfd, h;
	char *p = NULL;

	NEED_DEV();
	mfd = arena_create(16, 0, FIXED_ADDR);
	ASSERT_LE(0, mfd);
	{
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_fd = mfd;
		ASSERT_EQ(0, bpf_sys_err(BPF_MAP_FREEZE, &a));
	}
	h = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, dev_attach(h, mfd));
	EXPECT_EQ(-EPERM, try_mmap(h, FIXED_ADDR, 16 * PG, PROT_READ | PROT_WRITE, &p));
	EXPECT_EQ(-EPERM, dev_alloc(h, FIXED_ADDR, 1, NULL));
	EXPECT_EQ(-EPERM, dev_range(h, BPF_ARENA_IOC_PREFAULT, FIXED_ADDR, 1));
	EXPECT_EQ(-EPERM, dev_range(h, BPF_ARENA_IOC_FREE_PAGES, FIXED_ADDR, 1));
	ASSERT_EQ(0, try_mmap(h, FIXED_ADDR, 16 * PG, PROT_READ, &p));
	EXPECT_EQ(-1, mprotect(p, 16 * PG, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(p, 16 * PG);
	close(h);
	close(mfd);
}

TEST(writable_device_mapping_blocks_freeze)
{
	union bpf_attr a;
	int h, mfd;
	char *p = NULL;

	NEED_DEV();
	h = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, try_mmap(h, 0, 16 * PG, PROT_READ | PROT_WRITE, &p));
	mfd = (int)dev_map_fd(h);
	ASSERT_LE(0, mfd);
	memset(&a, 0, sizeof(a));
	a.map_fd = mfd;
	/* As a writable mmap of the map fd: never frozen afterwards. */
	EXPECT_EQ(-EBUSY, bpf_sys_err(BPF_MAP_FREEZE, &a));
	munmap(p, 16 * PG);
	close(mfd);
	close(h);
}

/* ------------------------------------------------------------------ */
/* Unprivileged children                                               */

/* Opens the device to everyone for the test's duration (restored by the fixture). */
FIXTURE(unpriv) {
	mode_t old_mode;
	char per_user[32], global[32];
};

static void read_param(const char *name, char *buf, size_t len)
{
	if (!read_line(name, buf, len))
		buf[0] = 0;
}

FIXTURE_SETUP(unpriv)
{
	struct stat st;

	memset(self, 0, sizeof(*self));
	NEED_DEV();
	ASSERT_EQ(0, stat(BPF_ARENA_DEV_PATH, &st));
	self->old_mode = st.st_mode & 07777;
	ASSERT_EQ(0, chmod(BPF_ARENA_DEV_PATH, 0666));
	read_param(PARAMS "max_dev_arenas_per_user", self->per_user, sizeof(self->per_user));
	read_param(PARAMS "max_dev_arenas", self->global, sizeof(self->global));
}

FIXTURE_TEARDOWN(unpriv)
{
	if (self->old_mode)
		chmod(BPF_ARENA_DEV_PATH, self->old_mode);
	if (self->per_user[0])
		write_str(PARAMS "max_dev_arenas_per_user", self->per_user);
	if (self->global[0])
		write_str(PARAMS "max_dev_arenas", self->global);
}

/*
 * Forks; the child sets RLIMIT_MEMLOCK (unless memlock_pages < 0), drops to
 * uid (unless 0) and returns fn(arg) as its exit status.  Returns the child's
 * pid (wait with child_status()).
 */
static pid_t run_as(uid_t uid, long memlock_pages, int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (memlock_pages >= 0) {
		struct rlimit rl = { memlock_pages * PG, memlock_pages * PG };

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(100);
	}
	if (uid && (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
		_exit(101);
	_exit(fn(arg));
}

static int child_status(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 200 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* ------------------------------------------------------------------ */
/* 2. Memory: RLIMIT_MEMLOCK of the creator                            */

#define MEMLOCK_PAGES 64

static int touch_faults(volatile char *p)
{
	return access_faults(p, true);
}

/* Writes one byte in each page from the first until one faults; the count. */
static long touch_until_fault(char *p, long max_pages)
{
	long i;

	for (i = 0; i < max_pages; i++)
		if (touch_faults(p + i * PG))
			break;
	return i;
}

static int memlock_child(void *arg)
{
	int fd, fd2, i, held;
	char *p = NULL, *p2 = NULL;
	long r;

	(void)arg;
	fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	CK(fd >= 0);
	CK(try_mmap(fd, 0, 256 * PG, PROT_READ | PROT_WRITE, &p) == 0);
	/*
	 * The whole budget, then not one page more: the pages and the one or
	 * two page tables (one per 2 MiB block of the kernel window) they need.
	 */
	CK(dev_alloc(fd, 0, MEMLOCK_PAGES - 2, NULL) == 0);
	for (held = MEMLOCK_PAGES - 2; dev_alloc(fd, 0, 1, NULL) == 0; held++)
		;
	CK(held <= MEMLOCK_PAGES - 1);
	CK(dev_alloc(fd, 0, 1, NULL) == -ENOMEM);
	CK(dev_alloc(fd, 0, 1048576, NULL) == -ERANGE);	/* more than the arena: checked first */
	/* Free gives the budget back. */
	CK(dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 1) == 1);
	CK(dev_alloc(fd, (unsigned long)p, 1, NULL) == 0);
	/* Prefault and user faults are charged too. */
	CK(dev_range(fd, BPF_ARENA_IOC_PREFAULT, (unsigned long)p + 100 * PG, 1) == -ENOMEM);
	CK(touch_faults(p + 101 * PG) == 1);
	CK(dev_pages_allocated(fd) == held);
	/* The budget is the user's, not the arena's. */
	fd2 = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	CK(fd2 >= 0);
	CK(try_mmap(fd2, 0, 16 * PG, PROT_READ | PROT_WRITE, &p2) == 0);
	CK(touch_faults(p2) == 1);
	CK(dev_alloc(fd2, 0, 1, NULL) == -ENOMEM);
	CK(dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 256) == held);
	CK(dev_alloc(fd2, 0, 16, NULL) == 0);
	p2[0] = 1;
	CK(touch_faults(p + 101 * PG) == 0);	/* 17 of 64 now */
	/* Destroying an arena gives its pages back (its free is deferred). */
	munmap(p2, 16 * PG);
	close(fd2);
	CK(dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 256) == 1);
	for (i = 0, r = -1; i < 500 && r; i++) {
		r = dev_alloc(fd, 0, MEMLOCK_PAGES - 2, NULL);
		if (r)
			usleep(10000);
	}
	CK(r == 0);
	munmap(p, 256 * PG);
	close(fd);
	return 0;
}

TEST_F(unpriv, memlock_limits_device_arena_pages)
{
	NEED_DEV();
	ASSERT_EQ(0, child_status(run_as(1000, MEMLOCK_PAGES, memlock_child, NULL)));
}

static int cap_ipc_lock_child(void *arg)
{
	char *p = NULL;
	int fd;

	(void)arg;
	fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	CK(fd >= 0);
	CK(try_mmap(fd, 0, 256 * PG, PROT_READ | PROT_WRITE, &p) == 0);
	CK(dev_alloc(fd, 0, 4 * MEMLOCK_PAGES, NULL) == 0);
	munmap(p, 256 * PG);
	close(fd);
	return 0;
}

TEST_F(unpriv, cap_ipc_lock_is_not_limited)
{
	NEED_DEV();
	ASSERT_EQ(0, child_status(run_as(0, MEMLOCK_PAGES, cap_ipc_lock_child, NULL)));
}

#define CG_TEST CG_ROOT "/arena_dev_security"

static long long cg_read(const char *file, const char *key)
{
	char path[128], line[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), CG_TEST "/%s", file);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		size_t n = strlen(key);

		if (!strncmp(line, key, n) && line[n] == ' ') {
			v = atoll(line + n + 1);
			break;
		}
	}
	if (f)
		fclose(f);
	return v;
}

#define OOM_SHARED_PAGES 32768

/*
 * In a 32 MiB memcg with no memlock limit: ENOMEM, never an OOM kill, for a
 * device arena of its own (*arg < 0) or a bpf() arena it attached (*arg: its
 * map fd).  (User faults share the allocation; they are not tested here
 * because with the memcg full the SIGSEGV delivery itself may need memory.)
 */
static int oom_child(void *arg)
{
	int mfd = *(int *)arg, fd;
	size_t len = mfd >= 0 ? OOM_SHARED_PAGES * PG : 1UL << 32;
	char *p = NULL;
	long r;

	fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	CK(fd >= 0);
	if (mfd >= 0) {
		CK(dev_attach(fd, mfd) == 0);
		close(mfd);
	}
	CK(try_mmap(fd, mfd >= 0 ? FIXED_ADDR : 0, len, PROT_READ | PROT_WRITE, &p) == 0);
	r = dev_alloc(fd, 0, 16384, NULL);		/* 64 MiB */
	CK(r == -ENOMEM);
	CK(dev_pages_allocated(fd) == 0);
	/* Prefault keeps what it allocated before failing: free it at once. */
	r = dev_range(fd, BPF_ARENA_IOC_PREFAULT, (unsigned long)p, 16384);
	dev_range(fd, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 16384);
	CK(r == -ENOMEM);
	CK(dev_pages_allocated(fd) == 0);
	CK(touch_faults(p) == 0);
	munmap(p, len);
	close(fd);
	return 0;
}

/* Runs oom_child(&mfd) as uid 1000 in a 32 MiB memcg; no OOM event may follow. */
static void oom_test(struct __test_metadata *_metadata, int mfd)
{
	pid_t pid;
	int go[2], st;
	char c;

	if (!memcg_enable())
		SKIP(return, "no cgroup v2 memory controller in this guest");
	rmdir(CG_TEST);
	ASSERT_EQ(0, mkdir(CG_TEST, 0755));
	ASSERT_TRUE(write_str(CG_TEST "/memory.max", "33554432"));
	ASSERT_EQ(0, pipe(go));
	/* The child joins the memcg as root, then drops to uid 1000. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(102);
		_exit(child_status(run_as(1000, RLIM_INFINITY / PG, oom_child, &mfd)));
	}
	ASSERT_TRUE(cg_move(CG_TEST, pid));
	close(go[0]);
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, cg_read("memory.events", "oom_kill"));
	EXPECT_EQ(0, cg_read("memory.events", "oom"));
	rmdir(CG_TEST);
}

TEST_F(unpriv, device_arena_pages_never_invoke_the_oom_killer)
{
	NEED_DEV();
	oom_test(_metadata, -1);
}

/* The same for a bpf() arena a CAP_BPF daemon shares: the device user's memcg pays. */
TEST_F(unpriv, attached_bpf_arena_pages_never_invoke_the_oom_killer)
{
	int mfd;

	NEED_DEV();
	mfd = arena_create(OOM_SHARED_PAGES, 0, FIXED_ADDR);
	ASSERT_LE(0, mfd);
	oom_test(_metadata, mfd);
	close(mfd);
}

/* ------------------------------------------------------------------ */
/* 3. Address space: caps on device arenas                             */

struct fill_arg {
	int max;		/* stop after this many */
	int report, go;		/* pipes: child writes {count, errno}, waits for a byte */
};

/* The red team's loop: open, mmap 4 KiB, close; the mappings keep the arenas. */
static int fill_child(void *argp)
{
	struct fill_arg *a = argp;
	int out[2] = { 0, 0 }, fd;
	char c, *p;

	for (out[0] = 0; out[0] < a->max; out[0]++) {
		fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			out[1] = errno;
			break;
		}
		p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		out[1] = errno;
		close(fd);
		if (p == MAP_FAILED)
			break;
		out[1] = 0;
	}
	if (write(a->report, out, sizeof(out)) != sizeof(out))
		return 1;
	if (read(a->go, &c, 1) != 1)
		return 1;
	return 0;
}

/* Starts fill_child as uid; *count, *err: what it created and why it stopped. */
static pid_t fill_as(uid_t uid, int max, int *go_w, int *count, int *err)
{
	int rep[2], go[2], out[2] = { -1, -1 };
	struct fill_arg a = { .max = max };
	pid_t pid;

	if (pipe(rep) || pipe(go))
		return -1;
	a.report = rep[1];
	a.go = go[0];
	pid = run_as(uid, -1, fill_child, &a);
	close(rep[1]);
	close(go[0]);
	if (read(rep[0], out, sizeof(out)) != sizeof(out))
		out[0] = -1;
	close(rep[0]);
	*count = out[0];
	*err = out[1];
	*go_w = go[1];
	return pid;
}

static int release(pid_t pid, int go_w)
{
	if (write(go_w, "g", 1) != 1)
		return -1;
	close(go_w);
	return child_status(pid);
}

TEST_F(unpriv, per_user_cap_on_device_arenas)
{
	int go, count, err, go2, count2, err2, mfd, per_user = -1;
	char buf[32];
	struct stat st;
	pid_t pid, pid2;

	NEED_DEV();
	if (read_line(PARAMS "max_dev_arenas_per_user", buf, sizeof(buf)))
		per_user = atoi(buf);
	/*
	 * The defaults: one user stops at the per-user cap with EMFILE (without
	 * it, 8192 arenas exhaust a 4-level-paging kernel's vmalloc space).
	 */
	pid = fill_as(1000, 8192, &go, &count, &err);
	TH_LOG("uid 1000 created %d device arenas, then errno %d", count, err);
	EXPECT_EQ(per_user, count);
	EXPECT_EQ(EMFILE, err);
	/* Root's bpf() arenas are unaffected, and so is another user. */
	mfd = arena_create(16, 0, 0);
	EXPECT_LE(0, mfd);
	if (mfd >= 0)
		close(mfd);
	pid2 = fill_as(1001, 1, &go2, &count2, &err2);
	EXPECT_EQ(1, count2);
	EXPECT_EQ(0, release(pid2, go2));
	EXPECT_EQ(0, release(pid, go));

	/* Root may change the caps at run time. */
	ASSERT_EQ(0, stat(PARAMS "max_dev_arenas_per_user", &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
	ASSERT_EQ(0, stat(PARAMS "max_dev_arenas", &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
	EXPECT_LT(0, per_user);
	EXPECT_GE(256, per_user);
}

TEST_F(unpriv, global_cap_on_device_arenas)
{
	int go, count, err, go2, count2, err2, mfd;
	pid_t pid, pid2;

	NEED_DEV();
	ASSERT_TRUE(write_str(PARAMS "max_dev_arenas_per_user", "4"));
	ASSERT_TRUE(write_str(PARAMS "max_dev_arenas", "6"));
	pid = fill_as(1000, 100, &go, &count, &err);
	EXPECT_EQ(4, count);
	EXPECT_EQ(EMFILE, err);
	pid2 = fill_as(1001, 100, &go2, &count2, &err2);
	EXPECT_EQ(2, count2);
	EXPECT_EQ(ENFILE, err2);
	mfd = arena_create(16, 0, 0);
	EXPECT_LE(0, mfd);
	if (mfd >= 0)
		close(mfd);
	EXPECT_EQ(0, release(pid2, go2));
	EXPECT_EQ(0, release(pid, go));
}

static int reopen_child(void *arg)
{
	int i, fd, n = *(int *)arg;
	char *p = NULL;

	for (i = 0; i < n; i++) {
		fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		CK(fd >= 0);
		p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		CK(p != MAP_FAILED);
		p[0] = 1;
		munmap(p, PG);
		close(fd);
	}
	return 0;
}

/* Arenas freed from a workqueue must not count against a cap of 1. */
TEST_F(unpriv, close_and_reopen_never_hits_the_cap)
{
	int n = 200;

	NEED_DEV();
	ASSERT_TRUE(write_str(PARAMS "max_dev_arenas_per_user", "1"));
	ASSERT_EQ(0, child_status(run_as(1000, MEMLOCK_PAGES, reopen_child, &n)));
}

/* ------------------------------------------------------------------ */
/* 4. Who pays: the actor, whatever created the arena                  */

struct reader_case {
	const char *name;
	int dev_mode;		/* the reader's device handle: O_RDONLY / O_RDWR */
	int map_ro;		/* it attaches a read-only fd of the map */
	int frozen;		/* the map is frozen first */
	int via_map;		/* the reader maps the map fd, not the handle */
	int allocates;		/* reading a missing page allocates it */
};

/*
 * A device mapping makes pages appear only with the handle's write right,
 * which a frozen arena takes away; every other device mapping reads the
 * pages that exist and gets SIGSEGV on the rest.  The last rows are the
 * controls: a writer's mapping, and a map fd's, which follows upstream (a
 * read of a missing page allocates it, frozen or not: arena_abi_test).
 */
static const struct reader_case reader_cases[] = {
	{ "read-only device handle",            O_RDONLY, 0, 0, 0, 0 },
	{ "handle narrowed by read-only map fd", O_RDWR,  1, 0, 0, 0 },
	{ "read-write handle, frozen arena",    O_RDWR,   0, 1, 0, 0 },
	{ "read-only handle, frozen arena",     O_RDONLY, 0, 1, 0, 0 },
	{ "read-write handle (control)",        O_RDWR,   0, 0, 0, 1 },
	{ "map fd (control)",                   O_RDWR,   0, 0, 1, 1 },
	{ "map fd, frozen arena (control)",     O_RDWR,   0, 1, 1, 1 },
};

static int run_reader_case(struct __test_metadata *_metadata, const struct reader_case *c)
{
	int mfd, owner, m, h, i, bad = 0, faults = 0;
	long before, after;
	char *p = NULL;

	mfd = arena_create(64, 0, FIXED_ADDR);
	ASSERT_LE(0, mfd);
	owner = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, owner);
	ASSERT_EQ(0, dev_attach(owner, mfd));
	ASSERT_EQ(0, dev_alloc(owner, FIXED_ADDR, 1, NULL));
	if (c->frozen)
		ASSERT_EQ(0, map_freeze(mfd));
	m = c->map_ro ? reopen_map(mfd, BPF_F_RDONLY) : dup(mfd);
	ASSERT_LE(0, m);
	h = open(BPF_ARENA_DEV_PATH, c->dev_mode | O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, dev_attach(h, m));
	before = dev_pages_allocated(owner);
	ASSERT_EQ(0, try_mmap(c->via_map ? m : h, FIXED_ADDR, 64 * PG, PROT_READ, &p));
	if (access_faults(p, false)) {
		TH_LOG("%s: reading the page that exists faulted", c->name);
		bad++;
	}
	for (i = 1; i < 64; i++)
		faults += access_faults(p + i * PG, 0);
	after = dev_pages_allocated(owner);
	if (c->allocates ? (faults || after != 64) : (faults != 63 || after != before)) {
		TH_LOG("%s: reading 63 missing pages gave %d SIGSEGV and %ld -> %ld pages",
		       c->name, faults, before, after);
		bad++;
	}
	munmap(p, 64 * PG);
	close(h);
	close(m);
	close(owner);
	close(mfd);
	return bad;
}

TEST(mappings_without_the_write_right_never_allocate)
{
	unsigned int i;
	int bad = 0;

	NEED_DEV();
	for (i = 0; i < sizeof(reader_cases) / sizeof(reader_cases[0]); i++)
		bad += run_reader_case(_metadata, &reader_cases[i]);
	EXPECT_EQ(0, bad);
	/* As upstream, a read-only map fd cannot be mapped at all. */
	{
		int mfd = arena_create(16, 0, FIXED_ADDR), ro;
		char *p = NULL;

		ASSERT_LE(0, mfd);
		ro = reopen_map(mfd, BPF_F_RDONLY);
		ASSERT_LE(0, ro);
		EXPECT_EQ(-EINVAL, try_mmap(ro, FIXED_ADDR, 16 * PG, PROT_READ, &p));
		close(ro);
		close(mfd);
	}
}

#define SHARED_PAGES 1024

/*
 * A device user driving a bpf() arena that a CAP_BPF daemon shares with it
 * (ATTACH of an O_RDWR map fd, the documented use) pays for what it causes
 * with its own RLIMIT_MEMLOCK: ioctls, and faults of its mappings, whether
 * made through the handle or through a map fd from MAP_FD.
 */
static int attached_payer_child(void *arg)
{
	int mfd = *(int *)arg, h, fd2;
	char *p = NULL;
	long n;

	h = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	CK(h >= 0);
	CK(dev_attach(h, mfd) == 0);
	close(mfd);
	CK(dev_alloc(h, 0, 4 * MEMLOCK_PAGES, NULL) == -ENOMEM);
	CK(dev_alloc(h, 0, MEMLOCK_PAGES / 2, NULL) == 0);
	CK(dev_alloc(h, 0, MEMLOCK_PAGES / 2 + 8, NULL) == -ENOMEM);
	CK(dev_range(h, BPF_ARENA_IOC_PREFAULT, FIXED_ADDR, SHARED_PAGES) == -ENOMEM);
	CK(dev_range(h, BPF_ARENA_IOC_FREE_PAGES, FIXED_ADDR, SHARED_PAGES) > 0);
	CK(dev_pages_allocated(h) == 0);
	/* Faults through the handle's mapping. */
	CK(try_mmap(h, FIXED_ADDR, SHARED_PAGES * PG, PROT_READ | PROT_WRITE, &p) == 0);
	n = touch_until_fault(p, SHARED_PAGES);
	fprintf(stderr, "# handle mapping: %ld pages before SIGSEGV\n", n);
	CK(n <= MEMLOCK_PAGES && n >= MEMLOCK_PAGES - 2);
	munmap(p, SHARED_PAGES * PG);
	CK(dev_range(h, BPF_ARENA_IOC_FREE_PAGES, FIXED_ADDR, SHARED_PAGES) == n);
	/* Faults through a map fd the handle gave out. */
	fd2 = (int)dev_map_fd(h);
	CK(fd2 >= 0);
	CK(try_mmap(fd2, FIXED_ADDR, SHARED_PAGES * PG, PROT_READ | PROT_WRITE, &p) == 0);
	n = touch_until_fault(p, SHARED_PAGES);
	fprintf(stderr, "# map fd mapping: %ld pages before SIGSEGV\n", n);
	CK(n <= MEMLOCK_PAGES && n >= MEMLOCK_PAGES - 2);
	munmap(p, SHARED_PAGES * PG);
	CK(dev_range(h, BPF_ARENA_IOC_FREE_PAGES, FIXED_ADDR, SHARED_PAGES) == n);
	close(fd2);
	close(h);
	return 0;
}

/*
 * Fixing an arena's address (its first mapping) changes it: a holder without
 * the write right may not, or it would choose where the owner must map the
 * arena in every process.  Once the owner has mapped it, the reader maps it
 * at the same address.
 */
TEST(a_reader_cannot_fix_the_address_of_an_arena)
{
	struct bpf_arena_info info = { .size = sizeof(info) };
	int mfd, ro, h;
	char *p, *q;

	if (access(BPF_ARENA_DEV_PATH, F_OK))
		SKIP(return, "no " BPF_ARENA_DEV_PATH);
	mfd = arena_create(16, 0, 0);
	ASSERT_LE(0, mfd);
	ro = reopen_map(mfd, BPF_F_RDONLY);
	ASSERT_LE(0, ro);
	h = open(BPF_ARENA_DEV_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, dev_attach(h, ro));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 16 * PG, PROT_READ, MAP_SHARED, h, 0));
	EXPECT_EQ(EPERM, errno);
	ASSERT_EQ(0, xioctl(h, BPF_ARENA_IOC_GET_INFO, &info));
	EXPECT_EQ(0, info.user_vm_start);
	/* The owner fixes it; the reader then maps it where the owner did. */
	q = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, q);
	q[0] = 1;
	ASSERT_EQ(0, munmap(q, 16 * PG));
	p = mmap(q, 16 * PG, PROT_READ, MAP_SHARED | MAP_FIXED, h, 0);
	ASSERT_EQ(q, p);
	EXPECT_EQ(1, p[0]);
	munmap(p, 16 * PG);
	close(h);
	close(ro);
	close(mfd);
}

static int open_fds(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * A MAP_FD whose answer cannot be copied out (EFAULT) leaves no fd behind,
 * and the number never reached the table: a sibling thread sharing it could
 * otherwise have used, closed or reused it in between.
 */
TEST(map_fd_whose_answer_cannot_be_written_leaves_no_fd)
{
	struct bpf_arena_map_fd *m;
	int h, before, i;

	if (access(BPF_ARENA_DEV_PATH, F_OK))
		SKIP(return, "no " BPF_ARENA_DEV_PATH);
	h = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, dev_configure(h, BPF_ARENA_F_MMAPABLE, 16, 0));
	m = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	m->size = sizeof(*m);
	ASSERT_EQ(0, mprotect(m, PG, PROT_READ));
	before = open_fds();
	for (i = 0; i < 100; i++)
		ASSERT_EQ(-EFAULT, xioctl(h, BPF_ARENA_IOC_MAP_FD, m));
	EXPECT_EQ(before, open_fds());
	ASSERT_EQ(0, mprotect(m, PG, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, xioctl(h, BPF_ARENA_IOC_MAP_FD, m));
	EXPECT_EQ(before + 1, open_fds());
	close(m->fd);
	munmap(m, PG);
	close(h);
}

TEST_F(unpriv, attached_bpf_arena_is_paid_by_the_device_user)
{
	int mfd;

	NEED_DEV();
	mfd = arena_create(SHARED_PAGES, 0, FIXED_ADDR);
	ASSERT_LE(0, mfd);
	EXPECT_EQ(0, child_status(run_as(1000, MEMLOCK_PAGES, attached_payer_child, &mfd)));
	close(mfd);
}

/* ------------------------------------------------------------------ */
/* 4b. A free racing a fault                                           */

struct reader {
	volatile char *page;
	volatile int stop;
};

static void *read_loop(void *arg)
{
	struct reader *r = arg;

	while (!r->stop)
		(void)*r->page;
	return NULL;
}

/*
 * One thread reads a page in a loop (faulting it in after every free)
 * while another frees the page, reads it (a fresh, zeroed page) and writes
 * to it.  A fault that found the page before the free must not map it
 * after the free's zap: the freeing thread would then read the freed
 * page's data through the stale mapping instead of a fresh page.
 */
TEST(a_free_racing_a_fault_leaves_no_stale_mapping)
{
	struct reader r = { 0 };
	long i, stale = 0, rounds = 0;
	struct timespec t0, t;
	pthread_t th;
	char *p = NULL;
	int h;

	NEED_DEV();
	h = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, try_mmap(h, 0, 16 * PG, PROT_READ | PROT_WRITE, &p));
	r.page = p;
	p[0] = 1;
	ASSERT_EQ(0, pthread_create(&th, NULL, read_loop, &r));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 200000; i++) {
		/*
		 * Nothing to free: the last write went through a stale
		 * mapping, not into the arena.  A two-page free always zaps.
		 */
		if (dev_range(h, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 1) != 1) {
			stale++;
			dev_range(h, BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p, 2);
		}
		if (p[0] != 0)
			stale++;
		p[0] = (char)(i | 1);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 20)
			break;
	}
	r.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%ld frees racing a reader, %ld saw a stale mapping", rounds, stale);
	EXPECT_EQ(0, stale);
	munmap(p, 16 * PG);
	close(h);
}

/* ------------------------------------------------------------------ */
/* 5. Kernel page tables of the window                                 */

#define BLOCK_PAGES 512		/* pages one PTE page maps */
#define WINDOW (1UL << 32)

#define TABLE_MEMLOCK 128
#define TABLE_ARENAS 8

/*
 * The attack first: a page allocated and freed in every block of 8 arenas
 * pins nothing (it pinned 8 MiB of PTE pages per arena, outside any limit).
 * Then each 2 MiB block's PTE page is the payer's, like a page: with a
 * budget of 128 pages, one page in each of 64 blocks takes it all (64 + 64
 * tables); freeing the last page of a block frees its table and its charge.
 */
static int tables_child(void *arg)
{
	long long before, after;
	int fd[TABLE_ARENAS], a, k;
	char *p[TABLE_ARENAS];

	(void)arg;
	for (a = 0; a < TABLE_ARENAS; a++) {
		fd[a] = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		CK(fd[a] >= 0);
		CK(try_mmap(fd[a], 0, WINDOW, PROT_READ | PROT_WRITE, &p[a]) == 0);
	}
	before = free_kib();
	for (a = 0; a < TABLE_ARENAS; a++) {
		for (k = 0; k < (int)(WINDOW / PG / BLOCK_PAGES); k++) {
			unsigned long at = (unsigned long)p[a] + (unsigned long)k * BLOCK_PAGES * PG;

			CK(dev_alloc(fd[a], at, 1, NULL) == 0);
			CK(dev_range(fd[a], BPF_ARENA_IOC_FREE_PAGES, at, 1) == 1);
		}
	}
	after = free_kib();
	fprintf(stderr, "# a page allocated and freed in each of %d blocks: free %lld -> %lld KiB\n",
		TABLE_ARENAS * (int)(WINDOW / PG / BLOCK_PAGES), before, after);
	/*
	 * Pinned tables would be 8 MiB per arena (64 MiB); half of that
	 * leaves room for the debug kernel's KASAN quarantine, which keeps
	 * the 16384 freed xarray nodes and arrays for a while (~20 MiB).
	 */
	CK(before - after < 32768);
	for (k = 0; k < TABLE_MEMLOCK / 2; k++)
		CK(dev_alloc(fd[0], (unsigned long)p[0] + (unsigned long)k * BLOCK_PAGES * PG, 1,
			     NULL) == 0);
	CK(dev_alloc(fd[0], (unsigned long)p[0] + (unsigned long)k * BLOCK_PAGES * PG, 1,
		     NULL) == -ENOMEM);
	CK(dev_range(fd[0], BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p[0], WINDOW / PG) ==
	   TABLE_MEMLOCK / 2);
	/* All of it back: a dense run needs one or two tables. */
	CK(dev_alloc(fd[0], (unsigned long)p[0], TABLE_MEMLOCK - 2, NULL) == 0);
	CK(dev_range(fd[0], BPF_ARENA_IOC_FREE_PAGES, (unsigned long)p[0], WINDOW / PG) ==
	   TABLE_MEMLOCK - 2);

	for (a = 0; a < TABLE_ARENAS; a++) {
		munmap(p[a], WINDOW);
		close(fd[a]);
	}
	return 0;
}

TEST_F_TIMEOUT(unpriv, page_tables_are_paid_for_and_freed_with_the_last_page, 300)
{
	NEED_DEV();
	ASSERT_EQ(0, child_status(run_as(1000, TABLE_MEMLOCK, tables_child, NULL)));
}

/* Holds a page in every block of 8 arenas (tables kept while they live), then exits. */
static int tables_hold_child(void *arg)
{
	int fd, a, k;
	char *p = NULL;

	(void)arg;
	for (a = 0; a < TABLE_ARENAS; a++) {
		fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		CK(fd >= 0);
		CK(try_mmap(fd, 0, WINDOW, PROT_READ | PROT_WRITE, &p) == 0);
		for (k = 0; k < (int)(WINDOW / PG / BLOCK_PAGES); k++)
			CK(dev_alloc(fd, (unsigned long)p + (unsigned long)k * BLOCK_PAGES * PG, 1,
				     NULL) == 0);
	}
	return 0;
}

/*
 * When the arenas go, their pages and page tables come back at once (the
 * deferred map free runs from a workqueue): 8 arenas with a page in each
 * block (64 MiB of pages, 64 MiB of tables) are back within seconds.
 */
TEST(arena_memory_returns_promptly_after_exit)
{
	long long base, low, now = 0;
	int i;

	NEED_DEV();
	base = free_kib();
	ASSERT_EQ(0, child_status(run_as(0, -1, tables_hold_child, NULL)));
	low = free_kib();
	for (i = 0; i < 100; i++) {
		now = free_kib();
		if (base - now < 16384)
			break;
		usleep(100000);
	}
	TH_LOG("free %lld KiB before, %lld after exit, %lld after %d ms (MemFree %lld)",
	       base, low, now, i * 100, meminfo_kib("MemFree"));
	EXPECT_GT(16384, base - now);
}

/* ------------------------------------------------------------------ */
/* 6. Frozen arenas and MAP_FD; the cost of a free                      */

/*
 * A read-write handle of an arena frozen since: the handle lost its write
 * right, so its own read-only mapping never allocates, and MAP_FD gives no
 * more (an O_RDONLY fd, which cannot be mapped, as upstream), not a
 * read-write fd whose mapping's read faults would make pages appear.
 */
static int frozen_map_fd_child(void *arg)
{
	int h = *(int *)arg, fd;
	char *p = NULL;

	fd = (int)dev_map_fd(h);
	CK(fd >= 0);
	CK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
	CK(try_mmap(fd, FIXED_ADDR, 64 * PG, PROT_READ, &p) == -EINVAL);
	close(fd);
	CK(dev_pages_allocated(h) == 1);
	return 0;
}

TEST_F(unpriv, map_fd_of_a_frozen_arena_has_no_write_right)
{
	int h, mfd, wo;
	char *p = NULL;

	NEED_DEV();
	h = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, dev_configure(h, BPF_ARENA_F_MMAPABLE, 64, FIXED_ADDR));
	mfd = (int)dev_map_fd(h);		/* creates the arena */
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, dev_alloc(h, FIXED_ADDR, 1, NULL));
	ASSERT_EQ(0, map_freeze(mfd));
	ASSERT_EQ(0, try_mmap(h, FIXED_ADDR, 64 * PG, PROT_READ, &p));
	EXPECT_EQ(1, access_faults(p + 5 * PG, 0));
	munmap(p, 64 * PG);
	EXPECT_EQ(0, child_status(run_as(1000, 128, frozen_map_fd_child, &h)));
	/* A write-only handle of a frozen arena has no right left to give. */
	wo = open(BPF_ARENA_DEV_PATH, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, wo);
	ASSERT_EQ(0, dev_attach(wo, mfd));
	EXPECT_EQ(-EPERM, dev_map_fd(wo));
	close(wo);
	close(mfd);
	close(h);
}

#define FREE_THREADS 48

struct free_storm {
	int h;
	unsigned long base;
	volatile int stop;
};

static void *free_storm_fn(void *arg)
{
	struct free_storm *s = arg;

	while (!s->stop)
		dev_range(s->h, BPF_ARENA_IOC_FREE_PAGES, s->base, (__u32)(WINDOW / PG));
	return NULL;
}

/* uid 1000, no page at all: threads free the whole 4 GiB range, again and again. */
static int free_storm_child(void *arg)
{
	struct free_storm s = { 0 };
	pthread_t th[FREE_THREADS];
	int i, n = 0, secs = *(int *)arg;
	char *p = NULL;

	s.h = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	CK(s.h >= 0);
	CK(try_mmap(s.h, 0, WINDOW, PROT_READ | PROT_WRITE, &p) == 0);
	s.base = (unsigned long)p;
	for (i = 0; i < FREE_THREADS; i++)
		if (!pthread_create(&th[i], NULL, free_storm_fn, &s))
			n++;
	sleep(secs);
	s.stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	munmap(p, WINDOW);
	close(s.h);
	return 0;
}

/*
 * A free holds a small page array, whatever its range: a free of 4 GiB
 * made the kernel allocate 8 MiB (charged to nobody, the OOM killer
 * allowed) before it waited for the arena lock, so 48 threads of a user
 * with no page at all held 386 MiB of vmalloc memory outside their 16 MiB
 * memcg (and 400 threads drove the machine into the global OOM killer).
 */
TEST_F_TIMEOUT(unpriv, free_of_a_large_range_holds_little_memory, 120)
{
	long long v0, v, vmax = 0;
	int secs = 4, st, i, go[2];
	char c;
	pid_t pid;

	NEED_DEV();
	if (!memcg_enable())
		SKIP(return, "no cgroup v2 memory controller in this guest");
	rmdir(CG_TEST);
	ASSERT_EQ(0, mkdir(CG_TEST, 0755));
	ASSERT_TRUE(write_str(CG_TEST "/memory.max", "16777216"));
	ASSERT_EQ(0, pipe(go));
	v0 = meminfo_kib("VmallocUsed");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(102);
		_exit(child_status(run_as(1000, 64, free_storm_child, &secs)));
	}
	ASSERT_TRUE(cg_move(CG_TEST, pid));
	close(go[0]);
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	for (i = 0; i < (secs + 1) * 1000; i++) {
		v = meminfo_kib("VmallocUsed") - v0;
		if (v > vmax)
			vmax = v;
		usleep(1000);
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
	}
	if (i == (secs + 1) * 1000)
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
	TH_LOG("%d threads freeing 4 GiB: VmallocUsed at most +%lld KiB", FREE_THREADS, vmax);
	rmdir(CG_TEST);
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_GT(16384, vmax);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf-arena inspector (inspect/) and the module's read-only inspection
 * ioctls (module/dev_inspect.c), on both kernels:
 *  - list/show on 6.12 give the stock (bpftool-level) columns and mark the
 *    module-only ones null; on 6.1 with the module, every column;
 *  - show's counters by origin, pages' allocation map, dump's bytes, on 6.1
 *    (module-only: skipped with the reason on 6.12);
 *  - the access rules of docs/SECURITY.md ("Inspection"): an unprivileged
 *    caller, even one holding the device open, cannot inspect or dump an
 *    arena by id; its own handle's arena it can, under the handle's rights;
 *    ids that are not arenas are ENOENT;
 *  - a dump of unallocated pages reads zeroes and allocates nothing;
 *  - inspection racing with page frees and with the arena's own free.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf_arena.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PG		4096
#define NOBODY		65534
#define LOG_SIZE	(1 << 20)

static char vlog[LOG_SIZE];
static char out[1 << 20];

#define NEED_INSPECT_IOCTLS()							\
	do {									\
		if (!have_dev())						\
			SKIP(return, "module-only: no " BPF_ARENA_DEV_PATH	\
			     " (native arena kernel: the inspection ioctls are the module's)"); \
	} while (0)

/* Runs a shell command, stdout and stderr into out; returns its exit status. */
static int run(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return run_cmd(cmd, out, sizeof(out));
}

/*
 * Copies the JSON object that starts with {"id":ID, (an arena, not a program:
 * those sit inside an arena's "programs" array) into obj; false if absent.
 */
static bool json_arena(const char *json, uint32_t id, char *obj, size_t len)
{
	char key[32];
	const char *p = json;

	snprintf(key, sizeof(key), "{\"id\":%u,\"name\"", id);
	while ((p = strstr(p, key))) {
		int depth = 0;
		bool str = false;
		size_t i;

		/* A program object is preceded by "programs":[ or a program's }, */
		for (i = 0; p[i]; i++) {
			char c = p[i];

			if (str) {
				if (c == '\\' && p[i + 1])
					i++;
				else if (c == '"')
					str = false;
				continue;
			}
			if (c == '"')
				str = true;
			else if (c == '{')
				depth++;
			else if (c == '}' && !--depth)
				break;
		}
		if (strstr(p, "\"max_entries\"") && strstr(p, "\"max_entries\"") < p + i) {
			snprintf(obj, len, "%.*s", (int)(i + 1), p);
			return true;
		}
		p++;
	}
	return false;
}

/* A device arena of pages pages, mapped; returns the device fd, *base, *id. */
static int dev_arena(unsigned int pages, char **base, uint32_t *id)
{
	struct bpf_arena_info info = { .size = sizeof(info) };
	int fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return -errno;
	p = mmap(NULL, (size_t)pages * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || ioctl(fd, BPF_ARENA_IOC_GET_INFO, &info)) {
		close(fd);
		return -EIO;
	}
	*base = p;
	*id = info.map_id;
	return fd;
}

static int inspect(int dev, uint32_t id, struct bpf_arena_inspect *in)
{
	memset(in, 0, sizeof(*in));
	in->size = sizeof(*in);
	in->map_id = id;
	return ioctl(dev, BPF_ARENA_IOC_INSPECT, in) ? -errno : 0;
}

static int dump(int dev, uint32_t id, uint64_t addr, void *buf, uint32_t len, uint64_t *present)
{
	struct bpf_arena_inspect_dump d = { .size = sizeof(d), .map_id = id, .addr = addr,
					    .buf = ptr_u64(buf), .len = len };
	int ret = ioctl(dev, BPF_ARENA_IOC_INSPECT_DUMP, &d) ? -errno : 0;

	if (present)
		*present = d.present;
	return ret;
}

static int pages(int dev, uint32_t id, uint64_t first, uint8_t *buf, uint32_t *cnt,
		 uint64_t *total)
{
	struct bpf_arena_inspect_pages p = { .size = sizeof(p), .map_id = id, .first = first,
					     .buf = ptr_u64(buf), .cnt = *cnt };
	int ret = ioctl(dev, BPF_ARENA_IOC_INSPECT_PAGES, &p) ? -errno : 0;

	*cnt = p.cnt;
	*total = p.total;
	return ret;
}

/*
 * A program that names the arena and loads from *ctx[0] (an arena address):
 * on an unallocated page the load faults and is fixed up (reads 0).
 */
static int load_reader(int arena_fd)
{
	struct bpf_insn insns[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, arena_fd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_CAST_KERN(2, 2),
		I_LDX(BPF_DW, 3, 2, 0),
		I_STX(BPF_DW, 6, 3, 8),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	int fd = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, LOG_SIZE);

	if (fd < 0)
		fprintf(stderr, "# reader program: %s\n%s\n", strerror(-fd), vlog);
	return fd;
}

/* bpf_arena_alloc_pages(arena, ctx[0], 1) / bpf_arena_free_pages(): 6.1's module BTF. */
static int run_kfunc(int arena_fd, bool alloc, void *addr)
{
	int btf_fd = -1, fds[2], fd;
	uint64_t ctx[1] = { ptr_u64(addr) };
	uint32_t id = find_kernel_func(have_dev() ? "bpf_arena" : "vmlinux",
				       alloc ? "bpf_arena_alloc_pages" : "bpf_arena_free_pages",
				       &btf_fd);
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(1, arena_fd),
		I_LD_IMM64(2, ptr_u64(addr)),
		I_MOV64_IMM(3, 1),
		I_MOV64_IMM(4, -1),
		I_MOV64_IMM(5, 0),
		I_CALL_KFUNC(id, have_dev() ? 1 : 0),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	long r;

	if (!id)
		return -ENOENT;
	fds[0] = arena_fd;
	fds[1] = btf_fd;
	fd = load_prog_fd_array(insns, ARRAY_SIZE(insns), fds, vlog, LOG_SIZE);
	close(btf_fd);
	if (fd < 0) {
		fprintf(stderr, "# kfunc program: %s\n%s\n", strerror(-fd), vlog);
		return fd;
	}
	r = run_syscall_prog(fd, ctx, sizeof(ctx));
	close(fd);
	return r < 0 ? (int)r : 0;
}

/* ---- list and show: both kernels ---------------------------------------- */

TEST(list_shows_a_bpf_arena_with_its_programs)
{
	char obj[8192], want[128];
	int fd = arena_create_named("insp_list", 16, 0, 0), prog;
	uint32_t id, pid_;
	uint64_t ctx[2];
	char *base;

	ASSERT_LE(0, fd) TH_LOG("BPF_MAP_CREATE: %s", strerror(errno));
	id = map_id(fd);
	base = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, base);
	base[0] = base[PG] = base[5 * PG] = 1;	/* 3 pages by user faults */
	prog = load_reader(fd);
	ASSERT_LE(0, prog);
	pid_ = prog_id(prog);
	ctx[0] = ptr_u64(base + 9 * PG);	/* unallocated: a fixup on 6.1 */
	ASSERT_EQ(0, run_syscall_prog(prog, ctx, sizeof(ctx)));
	EXPECT_EQ(0, ctx[1]);

	ASSERT_EQ(0, run("bpf-arena --json list"));
	ASSERT_TRUE(json_arena(out, id, obj, sizeof(obj))) TH_LOG("arena %u not in %s", id, out);
	EXPECT_NE(NULL, strstr(obj, "\"name\":\"insp_list\",\"max_entries\":16,\"size\":65536"))
		TH_LOG("%s", obj);
	snprintf(want, sizeof(want), "\"programs\":[{\"id\":%u,", pid_);
	EXPECT_NE(NULL, strstr(obj, want)) TH_LOG("program %u missing: %s", pid_, obj);
	if (have_dev()) {
		snprintf(want, sizeof(want), "\"creator\":{\"pid\":%d,\"uid\":0,\"comm\":\"arena_inspect_t\"}",
			 getpid());
		EXPECT_NE(NULL, strstr(obj, want)) TH_LOG("%s", obj);
		EXPECT_NE(NULL, strstr(obj, "\"module_info\":true,\"created_by\":\"bpf\""));
		EXPECT_NE(NULL, strstr(obj, "\"pages\":3,")) TH_LOG("%s", obj);
		snprintf(want, sizeof(want), "\"mappings\":[{\"pid\":%d,\"comm\":\"arena_inspect_t\",\"start\":\"0x%lx\"",
			 getpid(), (unsigned long)base);
		EXPECT_NE(NULL, strstr(obj, want)) TH_LOG("%s", obj);
		ASSERT_EQ(0, run("bpf-arena --json show %u", id));
		EXPECT_NE(NULL, strstr(out, "\"allocated\":{\"bpf\":0,\"user_fault\":3,\"ioctl\":0,\"prefault\":0}"))
			TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "\"user_faults\":3,\"user_faults_segv\":0,\"fixups\":1"))
			TH_LOG("%s", out);
	} else {
		/* 6.12: stock columns only, module-only ones null. */
		EXPECT_NE(NULL, strstr(obj, "\"module_info\":false,\"created_by\":null,\"creator\":null"))
			TH_LOG("%s", obj);
		EXPECT_NE(NULL, strstr(obj, "\"pages\":null")) TH_LOG("%s", obj);
		ASSERT_EQ(0, run("bpf-arena list"));
		EXPECT_NE(NULL, strstr(out, "'-': module-only column")) TH_LOG("%s", out);
		ASSERT_EQ(0, run("bpf-arena show %u", id));
		EXPECT_NE(NULL, strstr(out, "module-only information unavailable")) TH_LOG("%s", out);
		EXPECT_NE(0, run("bpf-arena pages %u", id));
		EXPECT_NE(NULL, strstr(out, "this needs the module")) TH_LOG("%s", out);
	}
	/* Text form: one row naming the arena (printed: README's example). */
	ASSERT_EQ(0, run("bpf-arena list"));
	EXPECT_NE(NULL, strstr(out, "insp_list"));
	TH_LOG("example: bpf-arena list\n%s", out);
	ASSERT_EQ(0, run("bpf-arena show %u", id));
	TH_LOG("example: bpf-arena show %u\n%s", id, out);
	ASSERT_EQ(0, run("bpf-arena --pretty show %u", id));
	EXPECT_EQ('{', out[0]);
	EXPECT_NE(NULL, strstr(out, "\n    \"name\": \"insp_list\",\n")) TH_LOG("%s", out);
	TH_LOG("example: bpf-arena --pretty show %u\n%s", id, out);
	ASSERT_EQ(0, run("bpf-arena --json list"));
	TH_LOG("example: bpf-arena --json list\n%s", out);
	close(prog);
	munmap(base, 16 * PG);
	close(fd);
}

TEST(errors_name_their_cause)
{
	int fd;

	EXPECT_EQ(2, run("bpf-arena show notanid"));
	EXPECT_NE(NULL, strstr(out, "bad map id")) TH_LOG("%s", out);
	EXPECT_EQ(1, run("bpf-arena show 2147483647"));
	EXPECT_NE(NULL, strstr(out, "No such file or directory")) TH_LOG("%s", out);
	fd = array_create(8, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, run("bpf-arena show %u", map_id(fd)));
	EXPECT_NE(NULL, strstr(out, "is not an arena")) TH_LOG("%s", out);
	EXPECT_EQ(2, run("bpf-arena dump"));
	close(fd);
}

/* ---- show/pages/dump: the module ----------------------------------------- */

TEST(show_counts_pages_by_origin)
{
	struct bpf_arena_map_fd mf = { .size = sizeof(mf) };
	char *base;
	uint32_t id;
	int dev, err;

	NEED_INSPECT_IOCTLS();
	dev = dev_arena(64, &base, &id);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, ioctl(dev, BPF_ARENA_IOC_MAP_FD, &mf));
	ASSERT_EQ(0, dev_alloc(dev, ptr_u64(base), 2, NULL));					/* ioctl 2 */
	ASSERT_EQ(3, dev_range(dev, BPF_ARENA_IOC_PREFAULT, ptr_u64(base + 8 * PG), 3));	/* prefault 3 */
	base[16 * PG] = 1;							/* fault 1 */
	err = run_kfunc(mf.fd, true, base + 20 * PG);				/* bpf 1 */
	ASSERT_EQ(0, err);
	ASSERT_EQ(1, dev_range(dev, BPF_ARENA_IOC_FREE_PAGES, ptr_u64(base), 1));	/* ioctl free 1 */
	ASSERT_EQ(0, run_kfunc(mf.fd, false, base + 20 * PG));			/* bpf free 1 */

	ASSERT_EQ(0, run("bpf-arena --json show %u", id));
	EXPECT_NE(NULL, strstr(out, "\"created_by\":\"device\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"pages\":5,\"pages_reserved\":0,\"mapped_vmas\":1"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"allocated\":{\"bpf\":1,\"user_fault\":1,\"ioctl\":2,\"prefault\":3}"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"freed\":{\"bpf\":1,\"ioctl\":1,\"total\":2}")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"user_faults\":1,\"user_faults_segv\":0,\"fixups\":0"))
		TH_LOG("%s", out);
	ASSERT_EQ(0, run("bpf-arena show %u", id));
	EXPECT_NE(NULL, strstr(out, "allocated     bpf 1, user fault 1, ioctl 2, prefault 3"));
	TH_LOG("example: bpf-arena show %u\n%s", id, out);
	close(mf.fd);
	munmap(base, 64 * PG);
	close(dev);
}

TEST(pages_map_shows_each_allocated_run)
{
	uint8_t st[64];
	uint64_t total;
	uint32_t id, cnt;
	char *base, want[320];
	int dev;

	NEED_INSPECT_IOCTLS();
	dev = dev_arena(32, &base, &id);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, dev_alloc(dev, ptr_u64(base), 2, NULL));
	ASSERT_EQ(0, dev_alloc(dev, ptr_u64(base + 5 * PG), 1, NULL));

	cnt = sizeof(st);
	memset(st, 0xee, sizeof(st));
	ASSERT_EQ(0, pages(dev, id, 0, st, &cnt, &total));
	EXPECT_EQ(32, cnt);
	EXPECT_EQ(32, total);
	EXPECT_EQ(BPF_ARENA_PAGE_ALLOCATED, st[0]);
	EXPECT_EQ(BPF_ARENA_PAGE_ALLOCATED, st[1]);
	EXPECT_EQ(BPF_ARENA_PAGE_FREE, st[2]);
	EXPECT_EQ(BPF_ARENA_PAGE_ALLOCATED, st[5]);
	EXPECT_EQ(0xee, st[32]);	/* nothing past the range */
	cnt = 8;
	ASSERT_EQ(0, pages(dev, id, 40, st, &cnt, &total));	/* past the end */
	EXPECT_EQ(0, cnt);

	ASSERT_EQ(0, run("bpf-arena --json pages %u", id));
	TH_LOG("example: bpf-arena --json pages %u\n%s", id, out);
	snprintf(want, sizeof(want),
		 "\"total\":32,\"allocated\":3,\"reserved\":0,\"free\":29,\"ranges\":[{\"start\":\"0x%lx\",\"first_page\":0,\"pages\":2,\"state\":\"allocated\",\"end\":\"0x%lx\",\"last_page\":1},{\"start\":\"0x%lx\",\"first_page\":5,\"pages\":1,",
		 (unsigned long)base, (unsigned long)base + 2 * PG, (unsigned long)base + 5 * PG);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s\nwant %s", out, want);
	ASSERT_EQ(0, run("bpf-arena pages %u", id));
	snprintf(want, sizeof(want), "0x%lx ##...#..........................", (unsigned long)base);
	EXPECT_NE(NULL, strstr(out, want));
	TH_LOG("example: bpf-arena pages %u\n%s", id, out);
	munmap(base, 32 * PG);
	close(dev);
}

TEST(dump_reads_bytes_and_zeroes_for_unallocated_pages)
{
	static uint8_t buf[65 * PG];
	struct bpf_arena_inspect in;
	uint64_t present;
	uint32_t id;
	char *base;
	int dev;

	NEED_INSPECT_IOCTLS();
	dev = dev_arena(128, &base, &id);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, dev_alloc(dev, ptr_u64(base), 1, NULL));
	strcpy(base + 16, "hello inspector");

	memset(buf, 0xaa, sizeof(buf));
	ASSERT_EQ(0, dump(dev, id, ptr_u64(base + 8), buf, 2 * PG, &present));
	EXPECT_EQ(1, present);		/* page 0 only */
	EXPECT_EQ(0, memcmp(buf + 8, "hello inspector", 16));
	EXPECT_EQ(0, buf[PG + 100]);	/* unallocated: zeroes, not the 0xaa left there */
	EXPECT_EQ(0xaa, buf[2 * PG]);	/* nothing written past len */

	/* A range of only unallocated pages, and proof that nothing got allocated. */
	memset(buf, 0xaa, sizeof(buf));
	ASSERT_EQ(0, dump(dev, id, ptr_u64(base + 10 * PG), buf, 64 * PG, &present));
	EXPECT_EQ(0, present);
	EXPECT_EQ(0, buf[0]);
	EXPECT_EQ(0, buf[64 * PG - 1]);
	ASSERT_EQ(0, inspect(dev, id, &in));
	EXPECT_EQ(1, in.pages);
	EXPECT_EQ(0, in.alloc_fault);

	EXPECT_EQ(-E2BIG, dump(dev, id, ptr_u64(base + 8), buf, 64 * PG, NULL));	/* 65 pages */
	EXPECT_EQ(-ERANGE, dump(dev, id, ptr_u64(base + 127 * PG), buf, PG + 1, NULL));
	EXPECT_EQ(-ERANGE, dump(dev, id, ptr_u64(base - PG), buf, 1, NULL));
	EXPECT_EQ(-EINVAL, dump(dev, id, ptr_u64(base), buf, 0, NULL));
	EXPECT_EQ(-EFAULT, dump(dev, id, ptr_u64(base), (void *)8, 16, NULL));
	/* A destination inside the arena's own mapping (the copy may fault into it). */
	EXPECT_EQ(0, dump(dev, id, ptr_u64(base + 16), base + 2 * PG, 16, &present));
	EXPECT_EQ(0, memcmp(base + 2 * PG, "hello inspector", 16));

	ASSERT_EQ(0, run("bpf-arena dump %u +0 8192", id));
	EXPECT_NE(NULL, strstr(out, "|hello inspector.|")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "unallocated page(s) from here"));
	ASSERT_EQ(0, run("bpf-arena dump %u +0 64", id));
	TH_LOG("example: bpf-arena dump %u +0 64\n%s", id, out);
	ASSERT_EQ(0, run("bpf-arena dump %u +4064 64", id));
	TH_LOG("example: bpf-arena dump %u +4064 64\n%s", id, out);
	ASSERT_EQ(0, run("bpf-arena --json dump %u 0x%lx 32", id, (unsigned long)base + 16));
	EXPECT_NE(NULL, strstr(out, "\"allocated\":true,\"hex\":\"68656c6c6f20696e73706563746f7200"))
		TH_LOG("%s", out);
	EXPECT_EQ(1, run("bpf-arena dump %u +%u 16", id, 128 * PG));
	EXPECT_NE(NULL, strstr(out, "outside arena")) TH_LOG("%s", out);
	ASSERT_EQ(0, inspect(dev, id, &in));
	EXPECT_EQ(2, in.pages);		/* page 0 and the faulted-in page 2 above */
	munmap(base, 128 * PG);
	close(dev);
}

/* ---- access rules ------------------------------------------------------- */

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		_exit(99);
}

/*
 * Root's arena, with a secret in it; an unprivileged process that even holds
 * the device open (as a device-group member would) cannot list it, show it,
 * read its page map or dump it.
 */
TEST(non_root_cannot_see_or_dump_another_users_arena)
{
	int fd = arena_create_named("insp_secret", 4, 0, 0), dev = -1, status;
	uint32_t id;
	char *base;
	pid_t pid;

	ASSERT_LE(0, fd);
	id = map_id(fd);
	base = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, base);
	strcpy(base, "s3cr3t-of-root");
	if (have_dev()) {
		dev = open(BPF_ARENA_DEV_PATH, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, dev);
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct bpf_arena_inspect in;
		uint8_t b[64];
		uint32_t cnt = sizeof(b);
		uint64_t total, present;
		int bad = 0;

		drop_to_nobody();
		if (dev >= 0) {
			bad |= inspect(dev, id, &in) != -EPERM;
			bad |= (dump(dev, id, ptr_u64(base), b, 16, &present) != -EPERM) << 1;
			bad |= (pages(dev, id, 0, b, &cnt, &total) != -EPERM) << 2;
			bad |= (inspect(dev, 0, &in) != -ENXIO) << 3;	/* no arena of its own */
		}
		if (run("bpf-arena list") != 1 || !strstr(out, "CAP_SYS_ADMIN") ||
		    strstr(out, "insp_secret"))
			bad |= 16;
		if (run("bpf-arena --json dump %u +0 16", id) == 0 || strstr(out, "s3cr3t") ||
		    strstr(out, "733363723374"))
			bad |= 32;
		if (bad)
			fprintf(stderr, "# child: bad=%#x, last output: %s\n", bad, out);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	if (dev >= 0)
		close(dev);
	munmap(base, 4 * PG);
	close(fd);
}

/*
 * The handle's own arena (map_id 0) under the handle's rights: an
 * unprivileged holder of a readable handle can inspect and dump it; a
 * write-only handle gets the info but not the memory (EACCES).
 */
TEST(own_handle_inspection_follows_the_handle_rights)
{
	struct bpf_arena_config cfg = { .size = sizeof(cfg), .map_flags = BPF_ARENA_F_MMAPABLE,
					.max_entries = 8, .numa_node = -1 };
	struct bpf_arena_map_fd mf = { .size = sizeof(mf) };
	int wdev, status;
	char *base;
	uint32_t id;
	pid_t pid;

	NEED_INSPECT_IOCTLS();
	wdev = open(BPF_ARENA_DEV_PATH, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, wdev);
	ASSERT_EQ(0, ioctl(wdev, BPF_ARENA_IOC_CONFIGURE, &cfg));
	ASSERT_EQ(0, ioctl(wdev, BPF_ARENA_IOC_MAP_FD, &mf));	/* creates it: W suffices */
	close(mf.fd);
	{
		int rdev = dev_arena(8, &base, &id);

		ASSERT_LE(0, rdev);
		ASSERT_EQ(0, dev_alloc(rdev, ptr_u64(base), 1, NULL));
		strcpy(base, "mine");
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct bpf_arena_inspect in;
			uint64_t present = 0;
			char b[8] = "";
			int bad = 0;

			drop_to_nobody();
			bad |= inspect(rdev, 0, &in) != 0 || in.map_id != id || in.pages != 1;
			bad |= (dump(rdev, 0, ptr_u64(base), b, 5, &present) || strcmp(b, "mine") ||
				present != 1) << 1;
			bad |= (inspect(wdev, 0, &in) != 0) << 2;
			bad |= (dump(wdev, 0, in.user_vm_start, b, 1, &present) != -EACCES) << 3;
			bad |= (inspect(rdev, id, &in) != -EPERM) << 4;	/* by id: still admin-only */
			_exit(bad);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("bad=%#x", WEXITSTATUS(status));
		munmap(base, 8 * PG);
		close(rdev);
	}
	close(wdev);
}

TEST(ids_that_are_not_arenas_are_enoent)
{
	struct bpf_arena_inspect in;
	int dev, fd;

	NEED_INSPECT_IOCTLS();
	dev = open(BPF_ARENA_DEV_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, dev);
	fd = array_create(8, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOENT, inspect(dev, map_id(fd), &in));
	EXPECT_EQ(-ENOENT, inspect(dev, 0x7fffffff, &in));
	EXPECT_EQ(-ENOENT, inspect(dev, 0xffffffff, &in));
	/* A short struct (older user space) is accepted; bad sizes are not. */
	in.size = 4;
	EXPECT_EQ(-1, ioctl(dev, BPF_ARENA_IOC_INSPECT, &in));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
	close(dev);
}

/*
 * Argument copies fail as copy_struct_from_user() says: a newer, larger
 * struct with a non-zero tail is E2BIG, an unreadable one EFAULT, for the
 * inspection ioctls as for the others (an int error once came back as a
 * large positive size there, and the call went on with the struct unread).
 */
TEST(argument_copy_errors_reach_the_caller)
{
	struct {
		struct bpf_arena_inspect in;
		uint64_t tail;
	} big;
	struct {
		struct bpf_arena_config c;
		uint64_t tail;
	} cbig;
	int dev;

	NEED_INSPECT_IOCTLS();
	dev = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	memset(&big, 0, sizeof(big));
	big.in.size = sizeof(big);
	big.tail = 1;
	EXPECT_EQ(-1, ioctl(dev, BPF_ARENA_IOC_INSPECT, &big));
	EXPECT_EQ(E2BIG, errno);
	memset(&cbig, 0, sizeof(cbig));
	cbig.c.size = sizeof(cbig);
	cbig.c.map_flags = BPF_ARENA_F_MMAPABLE;
	cbig.c.numa_node = -1;
	cbig.tail = 1;
	EXPECT_EQ(-1, ioctl(dev, BPF_ARENA_IOC_CONFIGURE, &cbig));
	EXPECT_EQ(E2BIG, errno);
	/* The size is readable, the rest of the struct is not. */
	{
		char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint32_t *size;

		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, munmap(p + 4096, 4096));
		size = (uint32_t *)(p + 4096 - sizeof(*size));
		*size = sizeof(struct bpf_arena_inspect);
		EXPECT_EQ(-1, ioctl(dev, BPF_ARENA_IOC_INSPECT, size));
		EXPECT_EQ(EFAULT, errno);
		munmap(p, 4096);
	}
	close(dev);
}

/* ---- races -------------------------------------------------------------- */

struct race {
	int dev;
	volatile uint32_t id;
	volatile bool stop;
	volatile int bad;
	volatile unsigned long calls, hits, gone;
	char *base;
};

/* Inspects and dumps whatever id is current; every answer must be a legal one. */
static void *race_reader(void *arg)
{
	uint8_t *buf = malloc(4 * PG), st[64];	/* per thread */
	struct race *r = arg;

	while (buf && !r->stop) {
		struct bpf_arena_inspect in;
		uint32_t id = r->id, cnt = sizeof(st);
		uint64_t present, total;
		int e1, e2, e3;

		if (!id)
			continue;	/* no arena yet (0 would name the handle's own) */
		e1 = inspect(r->dev, id, &in);
		e2 = pages(r->dev, id, 0, st, &cnt, &total);
		e3 = in.user_vm_start ? dump(r->dev, id, in.user_vm_start, buf, 4 * PG, &present) :
			-ENOENT;
		if ((e1 && e1 != -ENOENT) || (e2 && e2 != -ENOENT) ||
		    (e3 && e3 != -ENOENT && e3 != -ENXIO))
			r->bad = e1 ? e1 : e2 ? e2 : e3;
		if (e1 == -ENOENT)
			r->gone++;
		if (!e3) {
			/* Allocated pages hold 0 or the writer's 0x5a; unallocated read 0. */
			for (int p = 0; p < 4; p++)
				for (int i = 0; i < PG; i += 512)
					if (buf[p * PG + i] != 0 &&
					    (!(present >> p & 1) || buf[p * PG + i] != 0x5a))
						r->bad = 1000 + p;
			r->hits++;
		}
		r->calls++;
	}
	free(buf);
	return NULL;
}

TEST(inspection_races_with_page_frees_and_arena_free)
{
	struct race r = { 0 };
	struct timespec t0, t;
	pthread_t th[2];
	int rounds = 0;

	NEED_INSPECT_IOCTLS();
	r.dev = open(BPF_ARENA_DEV_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, r.dev);
	ASSERT_EQ(0, pthread_create(&th[0], NULL, race_reader, &r));
	ASSERT_EQ(0, pthread_create(&th[1], NULL, race_reader, &r));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* A new arena, pages allocated, filled and freed under the readers, then freed. */
		char *base;
		uint32_t id;
		int dev = dev_arena(4, &base, &id);

		ASSERT_LE(0, dev);
		r.id = id;
		for (int i = 0; i < 3; i++) {
			if (!dev_alloc(dev, ptr_u64(base), 4, NULL))
				memset(base, 0x5a, 4 * PG);
			dev_range(dev, BPF_ARENA_IOC_FREE_PAGES, ptr_u64(base + (i & 1) * PG), 3);
			dev_range(dev, BPF_ARENA_IOC_FREE_PAGES, ptr_u64(base), 4);
		}
		munmap(base, 4 * PG);
		close(dev);	/* last reference: the arena is freed under the readers */
		usleep(2000);	/* let them meet the free */
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 3 && !r.bad);
	r.stop = true;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	EXPECT_EQ(0, r.bad);
	TH_LOG("%d arenas, %lu inspections, %lu dumps that found the arena, %lu ENOENT (freed)",
	       rounds, r.calls, r.hits, r.gone);
	EXPECT_LT(0, r.hits);
	EXPECT_LT(0, r.gone);	/* the free did happen under the readers */
	/* The last arena is gone (its free is deferred): ENOENT once it ran. */
	for (int i = 0; i < 200; i++) {
		struct bpf_arena_inspect in;

		if (inspect(r.dev, r.id, &in) == -ENOENT)
			break;
		usleep(10000);
	}
	{
		struct bpf_arena_inspect in;

		EXPECT_EQ(-ENOENT, inspect(r.dev, r.id, &in));
	}
	/* The open device holds the module: it cannot go away under an ioctl. */
	EXPECT_EQ(-EWOULDBLOCK, kmod_unload());
	close(r.dev);
}

TEST_HARNESS_MAIN

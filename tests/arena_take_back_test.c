// SPDX-License-Identifier: GPL-2.0
/*
 * The take-back (module/arena_nosleep.c, reclaim_freeing()): a non-sleepable
 * allocation reuses a page that a non-sleepable free left to the work item.
 * From attack review 4.
 *
 * pin_from_before_the_free_never_sees_the_next_owner: a page reference taken
 *   before the free (vmsplice of the arena page into a pipe: the pipe holds
 *   the struct page) must not read the page after it is allocated again:
 *   the take-back leaves a page with such a reference to the work item,
 *   which lets it go (arena_pool_recycle()).  Before that check, 19 of 20
 *   rounds leaked the next owner's data to the pipe.  The control lets the
 *   work item unmap the free first.
 * storm_accounting: mixed-size alloc/free storms through the take-back path
 *   beside sleepable alloc/free, user faults and MADV_DONTNEED; every fresh
 *   page zero, user mapping coherent with the kernel's, and at the end no
 *   page left counted (inspect: pages == 0) and no kernel warning.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf_arena.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "test_util.h"

EMBED(rr_v3, "arena_take_back.v3.bpf.o");

#define RR_PAGES	4096
#define RR_MAP_EXTRA	(1ULL << 45)

static const struct obj_img img = { "arena_take_back", rr_v3_start, rr_v3_end };

static struct bpf_object *load(struct __test_metadata *_metadata, const char *const *only)
{
	struct bpf_object *obj = NULL;
	int err = obj_open_load(&img, &obj, only, RR_MAP_EXTRA, NULL, NULL, NULL, 0);

	EXPECT_EQ(0, err) TH_LOG("load: %d", err);
	return err ? NULL : obj;
}

static void run(struct __test_metadata *_metadata, struct bpf_object *obj, const char *name,
		__u32 want)
{
	__u32 ret = ~0U;

	ASSERT_EQ(0, obj_run(obj, name, &ret)) TH_LOG("run %s", name);
	ASSERT_EQ(want, ret) TH_LOG("%s returned %u", name, ret);
}

static __u64 g64(struct __test_metadata *_metadata, struct bpf_object *obj, const char *v)
{
	__u64 x = 0;

	EXPECT_EQ(0, obj_global(obj, v, &x, sizeof(x), false)) TH_LOG("%s", v);
	return x;
}

static int one_pin_round(struct __test_metadata *_metadata, struct bpf_object *obj,
			 bool let_work_run, __u64 *seen, bool *same)
{
	struct iovec iov;
	__u64 page, again, buf[512];
	int pfd[2];
	ssize_t n;

	run(_metadata, obj, "tc_alloc_keep", 0);
	page = g64(_metadata, obj, "last_page");
	if (!page)
		return -1;
	if (*(volatile __u64 *)(uintptr_t)page != 0x1111)
		return -2;
	if (pipe(pfd))
		return -3;
	/* The pipe now holds a reference to the arena page behind page. */
	iov.iov_base = (void *)(uintptr_t)page;
	iov.iov_len = 4096;
	n = vmsplice(pfd[1], &iov, 1, 0);
	if (n != 4096) {
		close(pfd[0]);
		close(pfd[1]);
		return -4;
	}
	if (let_work_run) {
		run(_metadata, obj, "tc_free_last", 0);
		usleep(200 * 1000);	/* the work item unmaps the free */
		run(_metadata, obj, "tc_alloc_secret", 0);
	} else {
		run(_metadata, obj, "tc_free_realloc_secret", 0);
	}
	again = g64(_metadata, obj, "realloc_page");
	*same = again == page;
	n = read(pfd[0], buf, sizeof(buf));
	close(pfd[0]);
	close(pfd[1]);
	if (n != sizeof(buf))
		return -5;
	*seen = buf[0];
	/* Free what the round holds. */
	EXPECT_EQ(0, obj_global(obj, "last_page", &again, sizeof(again), true));
	run(_metadata, obj, "tc_free_last", 0);
	usleep(20 * 1000);
	return 0;
}

TEST(pin_from_before_the_free_never_sees_the_next_owner)
{
	const char *only[] = { "tc_alloc_keep", "tc_free_realloc_secret", "tc_free_last",
			       "tc_alloc_secret", NULL };
	unsigned int i, rounds = 20, leak = 0, same = 0, ctl_leak = 0, ctl_same = 0;
	struct bpf_object *obj;

	if (kernel_has_native_arena())
		SKIP(return, "native arena: non-sleepable kfuncs are upstream's");
	obj = load(_metadata, only);
	ASSERT_NE(NULL, obj);
	for (i = 0; i < rounds; i++) {
		__u64 seen = 0;
		bool s = false;

		ASSERT_EQ(0, one_pin_round(_metadata, obj, false, &seen, &s));
		same += s;
		leak += s && seen == 0x2222;
		if (s)
			ksft_print_msg("take-back round %u: pipe (reference from before the free) reads %#llx\n",
				       i, (unsigned long long)seen);
	}
	for (i = 0; i < rounds; i++) {
		__u64 seen = 0;
		bool s = false;

		ASSERT_EQ(0, one_pin_round(_metadata, obj, true, &seen, &s));
		ctl_same += s;
		ctl_leak += seen == 0x2222;
	}
	ksft_print_msg("take-back: same address %u/%u, pre-free reference saw the next owner's data %u/%u\n",
		       same, rounds, leak, rounds);
	ksft_print_msg("control (work ran first): same address %u/%u, pre-free reference saw the next owner's data %u/%u\n",
		       ctl_same, rounds, ctl_leak, rounds);
	bpf_arena_object_close(obj);
	EXPECT_EQ(0, ctl_leak);
	/* A reference from before the free never reads the next allocation. */
	EXPECT_EQ(0, leak);
}

/* ---- storm -------------------------------------------------------------------- */

struct worker {
	int fd;
	bool pkt;
	unsigned int runs;
	int err;
};

static volatile int stop_user;

static void *prog_thread(void *arg)
{
	struct worker *w = arg;
	static char pkt[64];
	unsigned int i;

	for (i = 0; i < w->runs && !w->err; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o);

		if (w->pkt) {
			o.data_in = pkt;
			o.data_size_in = sizeof(pkt);
		}
		if (bpf_prog_test_run_opts(w->fd, &o))
			w->err = errno;
	}
	return NULL;
}

static unsigned long incoherent, user_reads;

/* Reads random pages through the mapping (faults, also allocating free ones) and drops them. */
static void *user_thread(void *arg)
{
	unsigned int seed = 12345, k = 0;
	char *base = (char *)(uintptr_t)RR_MAP_EXTRA;

	(void)arg;
	while (!stop_user) {
		unsigned int pg = rand_r(&seed) % RR_PAGES;
		volatile __u64 *q = (volatile __u64 *)(base + (size_t)pg * 4096);
		__u64 a = q[0], b = q[1];

		user_reads++;
		/*
		 * A page the storm tagged says where it is: q[1] is the start of
		 * its allocation, at most 15 pages below.  (Racy: a tag being
		 * written or zeroed reads as 0; only a wrong address counts.)
		 */
		if (a >= 0xdead0000 && a < 0xdead0010 && b &&
		    b != (__u64)(uintptr_t)q - (a - 0xdead0000) * 4096) {
			__u64 a2 = q[0], b2 = q[1];

			if (a2 == a && b2 == b)
				incoherent++;
		}
		if (!(++k % 64))
			madvise(base, (size_t)RR_PAGES * 4096, MADV_DONTNEED);
	}
	return NULL;
}

FIXTURE(st) {};
FIXTURE_SETUP(st) {}
FIXTURE_TEARDOWN(st) {}

TEST_F_TIMEOUT(st, storm_accounting, 600)
{
	const char *only[] = { "tc_storm", "sys_round", "sys_free_all", NULL };
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	struct bpf_arena_inspect in;
	struct worker w[3];
	pthread_t t[3], ut;
	struct bpf_object *obj;
	char *log;
	int dev, warn0, i;

	if (kernel_has_native_arena())
		SKIP(return, "native arena");
	warn0 = kernel_log_count("WARNING") + kernel_log_count("BUG");
	obj = load(_metadata, only);
	ASSERT_NE(NULL, obj);
	w[0] = (struct worker){ .fd = obj_prog_fd(obj, "tc_storm"), .pkt = true, .runs = 5000 };
	w[1] = w[0];
	w[2] = (struct worker){ .fd = obj_prog_fd(obj, "sys_round"), .runs = 1000 };
	stop_user = 0;
	ASSERT_EQ(0, pthread_create(&ut, NULL, user_thread, NULL));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, prog_thread, &w[i]));
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	stop_user = 1;
	pthread_join(ut, NULL);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, w[i].err);
	ksft_print_msg("bad_sys %llu last bad value %#llx at %#llx\n",
		       (unsigned long long)g64(_metadata, obj, "bad_sys"),
		       (unsigned long long)g64(_metadata, obj, "bad_val"),
		       (unsigned long long)g64(_metadata, obj, "bad_addr"));
	ksft_print_msg("storm: allocs %llu fails %llu bad_data %llu; user reads %lu, incoherent %lu\n",
		       (unsigned long long)g64(_metadata, obj, "allocs"),
		       (unsigned long long)g64(_metadata, obj, "fails"),
		       (unsigned long long)g64(_metadata, obj, "bad_data"),
		       user_reads, incoherent);
	EXPECT_EQ(0, g64(_metadata, obj, "bad_data"));
	EXPECT_EQ(0, incoherent);
	/* Everything freed, the work drained: nothing counted any more. */
	madvise((void *)(uintptr_t)RR_MAP_EXTRA, (size_t)RR_PAGES * 4096, MADV_DONTNEED);
	run(_metadata, obj, "sys_free_all", 0);
	usleep(300 * 1000);
	ASSERT_EQ(0, bpf_obj_get_info_by_fd(bpf_map__fd(bpf_object__find_map_by_name(obj, "arena")),
					    &info, &info_len));
	dev = open("/dev/bpf_arena", O_RDONLY);
	if (dev >= 0) {
		memset(&in, 0, sizeof(in));
		in.size = sizeof(in);
		in.map_id = info.id;
		ASSERT_EQ(0, ioctl(dev, BPF_ARENA_IOC_INSPECT, &in)) TH_LOG("inspect: %s", strerror(errno));
		ksft_print_msg("after free-all: pages %llu reserved %llu freed %llu\n",
			       (unsigned long long)in.pages, (unsigned long long)in.pages_reserved,
			       (unsigned long long)in.freed);
		EXPECT_EQ(0, in.pages);
		close(dev);
	}
	bpf_arena_object_close(obj);
	log = kernel_log();
	EXPECT_EQ(warn0, kernel_log_count("WARNING") + kernel_log_count("BUG"))
		TH_LOG("kernel log: %s", log ? log : "");
	free(log);
}

TEST_HARNESS_MAIN

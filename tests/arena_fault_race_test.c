// SPDX-License-Identifier: GPL-2.0
/*
 * A user fault racing a free of the same page (module only).  The fault
 * handler finds the page under arena->lock and the core maps it after the
 * handler returns; a free that zaps in between used to leave the user PTE of
 * a page the arena no longer had: user space kept writing a stale page while
 * the arena (BPF, other processes, the inspector) saw the new one.  Since
 * the fault returns its page locked and a free waits on each page's lock
 * before its zap, no PTE outlives the free.
 *
 * One thread faults the page in and writes a tag; another frees and
 * reallocates it (the generation is odd meanwhile).  When the generation did
 * not move across the write and the read of the arena's own copy (the
 * inspector, which reads the kernel's page), the two must agree.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/bpf_arena.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "kmod_util.h"

#define PG		4096UL
#define PAGES		4
#define SECONDS		15

static atomic_uint gen;		/* odd while the page is being freed and reallocated */
static atomic_int freeing;	/* the free ioctl runs: the zapper keeps faults coming */
static atomic_int stop;
static int fd;
static volatile uint64_t *page;
static uint32_t map_id;

static void *churn(void *arg)
{
	struct bpf_arena_range r = { .size = sizeof(r), .page_cnt = 1,
				     .addr = (uint64_t)(uintptr_t)page };
	struct bpf_arena_alloc a = { .size = sizeof(a), .page_cnt = 1,
				     .addr = (uint64_t)(uintptr_t)page, .node_id = -1 };
	long *cycles = arg;

	while (!atomic_load(&stop)) {
		atomic_fetch_add(&gen, 1);
		atomic_store(&freeing, 1);
		ioctl(fd, BPF_ARENA_IOC_FREE_PAGES, &r);
		atomic_store(&freeing, 0);
		a.addr = (uint64_t)(uintptr_t)page;
		ioctl(fd, BPF_ARENA_IOC_ALLOC_PAGES, &a);
		atomic_fetch_add(&gen, 1);
		(*cycles)++;
		usleep(500);	/* a quiet window for the comparison */
	}
	return NULL;
}

/* While a free runs, the writer's PTE keeps going, so its faults are in flight. */
static void *zapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		if (atomic_load(&freeing))
			madvise((void *)page, PG, MADV_DONTNEED);
	return NULL;
}

/* The arena's own copy of the page's first word (the kernel's page). */
static int arena_word(uint64_t *v, uint64_t *present)
{
	struct bpf_arena_inspect_dump d = { .size = sizeof(d), .map_id = map_id,
					    .addr = (uint64_t)(uintptr_t)page,
					    .buf = (uint64_t)(uintptr_t)v, .len = sizeof(*v) };

	if (ioctl(fd, BPF_ARENA_IOC_INSPECT_DUMP, &d))
		return -errno;
	*present = d.present;
	return 0;
}

TEST(no_user_pte_outlives_a_free)
{
	struct bpf_arena_config c = { .size = sizeof(c), .map_flags = BPF_ARENA_F_MMAPABLE,
				      .max_entries = PAGES, .numa_node = -1 };
	struct bpf_arena_info info = { .size = sizeof(info) };
	uint64_t tag, v, present, checks = 0, stale = 0;
	long cycles = 0;
	pthread_t th, zt;
	time_t end;
	void *base;
	unsigned int g;

	if (access(BPF_ARENA_DEV_PATH, F_OK))
		SKIP(return, "no " BPF_ARENA_DEV_PATH ": the bpf_arena module is not loaded (native arena kernel)");
	fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c));
	base = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, base);
	ASSERT_EQ(0, ioctl(fd, BPF_ARENA_IOC_GET_INFO, &info));
	map_id = info.map_id;
	page = (volatile uint64_t *)((char *)base + PG);

	ASSERT_EQ(0, pthread_create(&th, NULL, churn, &cycles));
	ASSERT_EQ(0, pthread_create(&zt, NULL, zapper, NULL));
	end = time(NULL) + SECONDS;
	for (tag = 1; time(NULL) < end && stale < 3; tag++) {
		g = atomic_load(&gen);
		if (g & 1)
			continue;
		*page = tag;		/* faults the page in when it is not mapped */
		if (arena_word(&v, &present))
			continue;
		if (atomic_load(&gen) != g)
			continue;	/* a free came between: nothing to compare */
		checks++;
		if (v != tag || !(present & 1)) {
			stale++;
			TH_LOG("user space wrote %llu, the arena has %llu (present %llu): a stale PTE",
			       (unsigned long long)tag, (unsigned long long)v,
			       (unsigned long long)present);
		}
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	pthread_join(zt, NULL);
	TH_LOG("%llu comparisons, %ld free/alloc cycles", (unsigned long long)checks, cycles);
	EXPECT_EQ(0, stale);
	EXPECT_LT(1000, checks);
	munmap(base, PAGES * PG);
	close(fd);
}

TEST_HARNESS_MAIN

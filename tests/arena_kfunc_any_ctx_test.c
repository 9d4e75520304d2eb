// SPDX-License-Identifier: GPL-2.0
/*
 * The arena kfuncs from non-sleepable programs (upstream since late 2025)
 * on 6.1 + bpf_arena.ko: XDP, TC and non-sleepable syscall programs (pool,
 * then GFP_NOWAIT) and fentry programs (pool only); upstream's *_nosleep
 * selftests (basic_alloc1_nosleep, big_alloc3) as TC programs; a program
 * running inside the arena's locked section fails cleanly; pages freed by a
 * non-sleepable program are unmapped from user space before reuse and come
 * back zeroed; and an allocation storm, whose failure counts are printed
 * beside those of the sleepable-only way 6.12 allows (README).  On 6.12 only
 * the sleepable baseline runs: its arena kfuncs are sleepable-only.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "arena_kfunc_common.h"
#include "test_util.h"

EMBED(any_v3, "arena_kfunc_any_ctx.v3.bpf.o");
EMBED(any_asm, "arena_kfunc_any_ctx.asm.bpf.o");

static const struct obj_img imgs[2] = {
	{ "arena_any_ctx", any_v3_start, any_v3_end },
	{ "arena_any_ctx", any_asm_start, any_asm_end },
};

FIXTURE(any) {
	struct bpf_object *obj;
	struct bpf_link *links[4];
	unsigned int nlinks;
};

FIXTURE_VARIANT(any) {
	int build;
};

FIXTURE_VARIANT_ADD(any, v3) { .build = 0 };
FIXTURE_VARIANT_ADD(any, asm) { .build = 1 };

FIXTURE_SETUP(any)
{
	self->obj = NULL;
	self->nlinks = 0;
}

FIXTURE_TEARDOWN(any)
{
	while (self->nlinks)
		bpf_link__destroy(self->links[--self->nlinks]);
	bpf_arena_object_close(self->obj);
}

#define NEED_ANY_CTX()								\
	do {									\
		if (kernel_has_native_arena())					\
			SKIP(return, "this kernel's arena kfuncs are sleepable-only (any context is upstream after 6.12)"); \
	} while (0)

/*
 * "syscall" is sleepable for libbpf: the _nosleep program is loaded without
 * the flag.  arg: the arena's size in pages (NULL: as in the object).
 */
static void tune(struct bpf_object *obj, void *arg)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, "syscall_nosleep_round");

	if (p)
		bpf_program__set_flags(p, bpf_program__flags(p) & ~BPF_F_SLEEPABLE);
	if (arg)
		bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "arena"),
					 *(unsigned int *)arg);
}

/* Loads the named programs (pages: arena size, 0: default) and attaches the fentry ones. */
static void load_sized(struct __test_metadata *_metadata, FIXTURE_DATA(any) *self, int build,
		       const char *const *only, unsigned int pages)
{
	struct bpf_program *p;
	int err;

	/* No log buffer: loops make long logs; libbpf prints one if the load fails. */
	err = obj_open_load(&imgs[build], &self->obj, only, ANY_MAP_EXTRA, tune,
			   pages ? &pages : NULL, NULL, 0);
	ASSERT_EQ(0, err) TH_LOG("load: %d", err);
	bpf_object__for_each_program(p, self->obj) {
		if (!bpf_program__autoload(p) || bpf_program__type(p) != BPF_PROG_TYPE_TRACING)
			continue;
		ASSERT_GT(4, self->nlinks);
		self->links[self->nlinks] = bpf_program__attach(p);
		ASSERT_EQ(0, libbpf_get_error(self->links[self->nlinks]))
			TH_LOG("attach %s", bpf_program__name(p));
		self->nlinks++;
	}
}

static void load(struct __test_metadata *_metadata, FIXTURE_DATA(any) *self, int build,
		 const char *const *only)
{
	load_sized(_metadata, self, build, only, 0);
}

static struct any_stats get_stats(struct __test_metadata *_metadata, struct bpf_object *obj)
{
	struct any_stats st;

	memset(&st, 0, sizeof(st));
	EXPECT_EQ(0, obj_global(obj, "stats", &st, sizeof(st), false));
	return st;
}

static void run_n(struct __test_metadata *_metadata, struct bpf_object *obj, const char *name,
		  unsigned int n)
{
	__u32 ret;

	while (n--)
		ASSERT_EQ(0, obj_run(obj, name, &ret)) TH_LOG("run %s: %s", name, strerror(errno));
}

#define POOL_PARAM "/sys/module/bpf_arena/parameters/nosleep_pool_pages"
#define POOL_MAX_PARAM "/sys/module/bpf_arena/parameters/nosleep_pool_max"

static unsigned int pool_pages(void)
{
	long long n = read_num(POOL_PARAM);

	return n < 0 ? 64 : (unsigned int)n;
}

static unsigned int pool_max(void)
{
	long long n = read_num(POOL_MAX_PARAM);

	return n < 0 ? 0 : (unsigned int)n;
}

/*
 * n rounds of alloc / check zeroed / write / read back / free from program
 * name; fentry programs run through test-running themselves.
 */
static void rounds(struct __test_metadata *_metadata, FIXTURE_DATA(any) *self, int build,
		   const char *name, unsigned int n)
{
	const char *only[] = { name, NULL };
	struct any_stats st;

	load(_metadata, self, build, only);
	ASSERT_EQ(0, obj_set_u32(self->obj, "armed_tgid", (__u32)getpid()))
		TH_LOG("set armed_tgid");
	run_n(_metadata, self->obj, name, n);
	st = get_stats(_metadata, self->obj);
	EXPECT_EQ(n, st.runs);
	EXPECT_EQ(n, st.allocs);
	EXPECT_EQ(0, st.fails);
	EXPECT_EQ(0, st.bad_data);
}

TEST_F(any, xdp_alloc_free) { NEED_ANY_CTX(); rounds(_metadata, self, variant->build, "xdp_round", 200); }
TEST_F(any, tc_alloc_free) { NEED_ANY_CTX(); rounds(_metadata, self, variant->build, "tc_round", 200); }
TEST_F(any, syscall_nosleep_alloc_free)
{
	NEED_ANY_CTX();
	rounds(_metadata, self, variant->build, "syscall_nosleep_round", 200);
}

/* Pool only: as many rounds as the pool holds pages, so no refill is needed. */
TEST_F(any, fentry_alloc_free)
{
	NEED_ANY_CTX();
	rounds(_metadata, self, variant->build, "fentry_round", pool_pages() / 2);
}

TEST_F(any, sleepable_alloc_free)
{
	rounds(_metadata, self, variant->build, "syscall_sleepable_round", 200);
}

/* Upstream's verifier_arena.c basic_alloc1_nosleep and verifier_arena_large.c big_alloc3. */
TEST_F(any, upstream_basic_alloc1_nosleep)
{
	const char *only[] = { "basic_alloc1_nosleep", NULL };
	__u32 ret = ~0U;

	NEED_ANY_CTX();
	load(_metadata, self, variant->build, only);
	ASSERT_EQ(0, obj_run(self->obj, "basic_alloc1_nosleep", &ret));
	EXPECT_EQ(0, ret);
}

TEST_F(any, upstream_big_alloc3)
{
	const char *only[] = { "big_alloc3", NULL };
	__u32 ret = ~0U;

	NEED_ANY_CTX();
	load(_metadata, self, variant->build, only);
	ASSERT_EQ(0, obj_run(self->obj, "big_alloc3", &ret));
	EXPECT_EQ(0, ret);
}

/*
 * More pages in one call than the pool holds: a tracing program that runs
 * with interrupts disabled (tp_btf/sched_switch, under the runqueue lock)
 * gets NULL (the pool only); one with interrupts enabled (fentry from
 * test_run; not on PREEMPT_RT, where tracing programs are pool-only) and a
 * TC program (GFP_NOWAIT) get the pages from the page allocator.
 */
TEST_F(any, pool_only_where_interrupts_are_disabled)
{
	const char *only[] = { "fentry_round", "tc_round", "irqs_off_round", NULL };
	unsigned int n = pool_pages() + 36, i;
	struct any_stats st;
	__u32 armed = 1;

	NEED_ANY_CTX();
	load(_metadata, self, variant->build, only);
	ASSERT_EQ(0, obj_set_u32(self->obj, "armed_tgid", (__u32)getpid()))
		TH_LOG("set armed_tgid");
	ASSERT_EQ(0, obj_set_u32(self->obj, "pages_per_call", n)) TH_LOG("set pages_per_call");
	ASSERT_EQ(0, obj_set_u32(self->obj, "irqs_off_armed", 1)) TH_LOG("set irqs_off_armed");
	for (i = 0; i < 500 && armed; i++) {
		usleep(1000);	/* switched out: sched_switch runs the round */
		ASSERT_EQ(0, obj_global(self->obj, "irqs_off_armed", &armed, sizeof(armed), false));
	}
	ASSERT_EQ(0, armed);
	st = get_stats(_metadata, self->obj);
	EXPECT_EQ(1, st.runs);
	EXPECT_EQ(1, st.fails) TH_LOG("sched_switch got %u pages with a pool of %u", n, n - 36);
	run_n(_metadata, self->obj, "fentry_round", 1);
	st = get_stats(_metadata, self->obj);
	EXPECT_EQ(2, st.runs);
	if (kernel_is_preempt_rt()) {
		/*
		 * Tracing programs take the pool only on PREEMPT_RT; whether
		 * it has grown to n pages by now is the work item's timing.
		 */
		ksft_print_msg("PREEMPT_RT: fentry is pool-only, got %s (not checked)\n",
			       st.allocs ? "the pages" : "NULL");
		EXPECT_GE(1, st.allocs);
	} else {
		EXPECT_EQ(1, st.allocs) TH_LOG("fentry (interrupts enabled) got no %u pages", n);
	}
	i = st.allocs;
	run_n(_metadata, self->obj, "tc_round", 1);
	st = get_stats(_metadata, self->obj);
	EXPECT_EQ(3, st.runs);
	EXPECT_EQ(i + 1, st.allocs) TH_LOG("tc (GFP_NOWAIT) got no %u pages", n);
	EXPECT_EQ(0, st.bad_data);
}

/*
 * fentry on apply_to_page_range(), which a non-sleepable allocation calls
 * with the arena's page lock held: the program's kfunc calls run nested
 * inside the lock on the same CPU.  They must fail cleanly (NULL, -EBUSY),
 * and the outer allocation must complete.
 */
TEST_F(any, nested_inside_arena_lock_fails_cleanly)
{
	const char *only[] = { "nested_in_lock", "tc_round", NULL };
	struct any_stats st;

	NEED_ANY_CTX();
	load(_metadata, self, variant->build, only);
	ASSERT_EQ(0, obj_set_u32(self->obj, "keep", 1)) TH_LOG("set keep");
	ASSERT_EQ(0, obj_set_u32(self->obj, "armed_tgid", (__u32)getpid()))
		TH_LOG("set armed_tgid");
	run_n(_metadata, self->obj, "tc_round", 10);
	ASSERT_EQ(0, obj_set_u32(self->obj, "armed_tgid", 0)) TH_LOG("set armed_tgid");
	st = get_stats(_metadata, self->obj);
	EXPECT_EQ(10, st.allocs);
	EXPECT_EQ(0, st.fails);
	EXPECT_EQ(0, st.bad_data);
	EXPECT_LE(10, st.nested_calls) TH_LOG("the fentry program did not run inside the lock");
	EXPECT_EQ(0, st.nested_allocs);
	EXPECT_EQ(-EBUSY, st.nested_reserve);
}

/* Waits until program name's allocation of n pages succeeds (deferred frees done). */
static bool alloc_succeeds_within(struct __test_metadata *_metadata, struct bpf_object *obj,
				  const char *name, unsigned int ms)
{
	struct any_stats before = get_stats(_metadata, obj), after;
	unsigned int waited;

	for (waited = 0; waited <= ms; waited += 20) {
		run_n(_metadata, obj, name, 1);
		after = get_stats(_metadata, obj);
		if (after.allocs > before.allocs)
			return true;
		before = after;
		usleep(20000);
	}
	return false;
}

/*
 * A whole-arena allocation, freed from the TC program (deferred), becomes
 * available again once the worker has run, and the recycled pool pages
 * come back zeroed (bad_data counts a non-zero first word).
 */
TEST_F(any, deferred_free_releases_everything)
{
	const char *only[] = { "tc_round", NULL };
	struct any_stats st;

	NEED_ANY_CTX();
	load(_metadata, self, variant->build, only);
	ASSERT_EQ(0, obj_set_u32(self->obj, "pages_per_call", ANY_PAGES))
		TH_LOG("set pages_per_call");
	run_n(_metadata, self->obj, "tc_round", 1);
	st = get_stats(_metadata, self->obj);
	ASSERT_EQ(1, st.allocs);
	EXPECT_TRUE(alloc_succeeds_within(_metadata, self->obj, "tc_round", 5000));
	ASSERT_EQ(0, obj_set_u32(self->obj, "pages_per_call", 1)) TH_LOG("set pages_per_call");
	run_n(_metadata, self->obj, "tc_round", 100);
	st = get_stats(_metadata, self->obj);
	EXPECT_EQ(0, st.bad_data);
}

/*
 * A page user space has mapped and written, freed by a non-sleepable
 * program: once the deferred unmapping has run, the user's old mapping is
 * gone (a new access faults in a fresh zero page) and the next allocation
 * of that page is zeroed.
 */
TEST_F(any, nosleep_free_zaps_user_mappings)
{
	const char *only[] = { "tc_round", "tc_free_last", NULL };
	volatile __u64 *u;
	__u64 page = 0;
	unsigned int i;

	NEED_ANY_CTX();
	load(_metadata, self, variant->build, only);
	ASSERT_EQ(0, obj_set_u32(self->obj, "keep", 1)) TH_LOG("set keep");
	run_n(_metadata, self->obj, "tc_round", 1);
	ASSERT_EQ(0, obj_global(self->obj, "last_page", &page, sizeof(page), false));
	ASSERT_EQ(ANY_MAP_EXTRA, page);
	u = (volatile __u64 *)(uintptr_t)page;
	EXPECT_EQ(0x5a5a, u[0]);
	u[1] = 0x77;
	run_n(_metadata, self->obj, "tc_free_last", 1);
	/* The worker zaps it; then user space sees a fresh page. */
	for (i = 0; i < 250 && u[1] == 0x77; i++)
		usleep(20000);
	EXPECT_EQ(0, u[1]);
	EXPECT_EQ(0, u[0]);
}

/*
 * A page user space has mapped and written, freed by a non-sleepable
 * program that at once allocates a page again.  The allocation takes back
 * the page the work item has not unmapped yet: the same address, zeroed for
 * the program, and the user's mapping shows what the program wrote there
 * now, not the old data.  (When the work item's pass has just taken the
 * page, the allocation gets another address; the data checks hold for every
 * round, the take-back is counted by address and user PTE (mincore()).)
 */
/*
 * rounds of: allocate (keep), write from user space, then free and at once
 * allocate again from one program (at any address, or at the freed page's
 * if fixed); returns how many times the page was taken back.
 */
static unsigned int free_then_alloc(struct __test_metadata *_metadata, FIXTURE_DATA(any) *self,
				    bool fixed, unsigned int rounds)
{
	unsigned int i, taken = 0, nulls = 0;
	__u64 page = 0, again = 0;
	volatile __u64 *u, *v;
	unsigned char vec;

	ASSERT_EQ(0, obj_set_u32(self->obj, "keep", 1)) TH_LOG("set keep");
	ASSERT_EQ(0, obj_set_u32(self->obj, "realloc_fixed", fixed)) TH_LOG("set realloc_fixed");
	for (i = 0; i < rounds; i++) {
		run_n(_metadata, self->obj, "tc_round", 1);
		ASSERT_EQ(0, obj_global(self->obj, "last_page", &page, sizeof(page), false));
		ASSERT_NE(0, page);
		u = (volatile __u64 *)(uintptr_t)page;
		ASSERT_EQ(0x5a5a, u[0]);
		u[1] = 0x77;
		ASSERT_EQ(0, mincore((void *)(uintptr_t)page, 4096, &vec));
		ASSERT_EQ(1, vec & 1);	/* mapped: mincore sees the user PTE */
		run_n(_metadata, self->obj, "tc_free_realloc", 1);
		ASSERT_EQ(0, obj_global(self->obj, "realloc_page", &again, sizeof(again), false));
		if (!again) {
			/* Fixed only: the work item held the page at that moment. */
			EXPECT_TRUE(fixed);
			nulls++;
			continue;
		}
		/* Before any access: is the user PTE still there (not zapped)? */
		ASSERT_EQ(0, mincore((void *)(uintptr_t)page, 4096, &vec));
		v = (volatile __u64 *)(uintptr_t)again;
		EXPECT_EQ(0x6b6b, v[0]);
		EXPECT_EQ(0, v[1]);
		if (fixed)
			EXPECT_EQ(page, again);
		/*
		 * The same address with its user PTE kept: taken back.  (The work
		 * item zaps a page before its address is free again, so the same
		 * address by way of the work has no PTE until touched.)
		 */
		taken += again == page && (vec & 1);
		/* Free what the round holds; the next round allocates anew. */
		ASSERT_EQ(0, obj_global(self->obj, "last_page", &again, sizeof(again), true));
		run_n(_metadata, self->obj, "tc_free_last", 1);
	}
	ksft_print_msg("free then alloc%s: the page taken back in %u of %u rounds (%u NULL)\n",
		       fixed ? " at its address" : "", taken, rounds, nulls);
	return taken;
}

TEST_F(any, nosleep_free_then_alloc_gets_the_page_back_zeroed)
{
	const char *only[] = { "tc_round", "tc_free_realloc", "tc_free_last", NULL };
	unsigned int rounds = 50;
	struct any_stats st;

	NEED_ANY_CTX();
	load(_metadata, self, variant->build, only);
	/* The work item wins the race sometimes (a vCPU preempted between the calls). */
	EXPECT_LE(rounds / 5, free_then_alloc(_metadata, self, false, rounds));
	st = get_stats(_metadata, self->obj);
	EXPECT_EQ(0, st.fails);
	EXPECT_EQ(0, st.bad_data);
	/*
	 * At the freed address: taken back too (before, such an allocation
	 * failed until the work had run: the range was still in use).
	 */
	EXPECT_LE(rounds / 5, free_then_alloc(_metadata, self, true, rounds));
	EXPECT_EQ(0, get_stats(_metadata, self->obj).bad_data);
}

/* ---- the storm -------------------------------------------------------------- */

#define STORM_THREADS	2
#define STORM_RUNS	500
#define STORM_CALLS	8
#define STORM_ARENA_PAGES	(1U << 16)
#define STORM_SUSTAINED_ROUNDS	6

struct storm {
	int fd;
	bool pkt;
	unsigned int runs;
	int err;
};

static void *storm_thread(void *arg)
{
	struct storm *s = arg;
	static char pkt[64];
	unsigned int i;

	for (i = 0; i < s->runs && !s->err; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o);

		if (s->pkt) {
			o.data_in = pkt;
			o.data_size_in = sizeof(pkt);
		}
		if (bpf_prog_test_run_opts(s->fd, &o))
			s->err = errno;
	}
	return NULL;
}

/*
 * Runs of the program the stock trampoline skipped as recursion
 * (bpf_prog_info.recursion_misses): on PREEMPT_RT a thread inside the
 * program can be preempted by the other thread on the same CPU, whose
 * entry then finds the per-CPU active count taken (6.1's and upstream's
 * __bpf_prog_enter()); elsewhere 0 here.
 */
static __u64 prog_misses(struct __test_metadata *_metadata, int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	EXPECT_EQ(0, bpf_obj_get_info_by_fd(fd, &info, &len));
	return info.recursion_misses;
}

/*
 * STORM_THREADS threads test-run program name runs times each on the loaded
 * object; every run allocates STORM_CALLS single pages, writes and frees
 * each.  Prints the failure count of this round (label); returns the
 * round's stats (the difference to before).
 */
static struct any_stats storm_round(struct __test_metadata *_metadata, FIXTURE_DATA(any) *self,
				    int build, const char *name, unsigned int runs,
				    const char *label)
{
	struct storm s[STORM_THREADS];
	pthread_t t[STORM_THREADS];
	struct any_stats before, st;
	struct timespec a, b;
	__u64 misses;
	unsigned int i;
	double secs;

	before = get_stats(_metadata, self->obj);
	misses = prog_misses(_metadata, obj_prog_fd(self->obj, name));
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < STORM_THREADS; i++) {
		s[i].fd = obj_prog_fd(self->obj, name);
		s[i].pkt = strncmp(name, "tc", 2) == 0 || strncmp(name, "xdp", 3) == 0;
		s[i].runs = runs;
		s[i].err = 0;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, storm_thread, &s[i]));
	}
	for (i = 0; i < STORM_THREADS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, s[i].err) TH_LOG("test_run: %s", strerror(s[i].err));
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	st = get_stats(_metadata, self->obj);
	st.runs -= before.runs;
	st.allocs -= before.allocs;
	st.fails -= before.fails;
	st.bad_data -= before.bad_data;
	misses = prog_misses(_metadata, obj_prog_fd(self->obj, name)) - misses;
	if (misses)
		ksft_print_msg("storm %s: %llu runs skipped by the trampoline as recursion%s\n",
			       name, (unsigned long long)misses,
			       kernel_is_preempt_rt() ? " (PREEMPT_RT)" : "");
	/* Every run that entered the program made STORM_CALLS calls. */
	EXPECT_EQ((__u64)STORM_THREADS * runs * STORM_CALLS, st.runs + misses * STORM_CALLS);
	EXPECT_LT(0, st.runs);
	EXPECT_EQ(st.runs, st.allocs + st.fails);
	EXPECT_EQ(0, st.bad_data);
	ksft_print_msg("storm %s (%s)%s: %llu allocations, %llu failed (%.2f%%), %.0f allocs/s, pool %u pages (max %u)\n",
		       name, build ? "asm" : "v3", label, (unsigned long long)st.runs,
		       (unsigned long long)st.fails, 100.0 * (double)st.fails / (double)st.runs,
		       (double)st.runs / secs, kernel_has_native_arena() ? 0 : pool_pages(),
		       kernel_has_native_arena() ? 0 : pool_max());
	return st;
}

/* A fresh object and arena, then one storm round. */
static struct any_stats storm(struct __test_metadata *_metadata, FIXTURE_DATA(any) *self,
			      int build, const char *name, unsigned int runs)
{
	const char *only[] = { name, NULL };

	/* Room for the frees the worker has not processed yet: memory is what is measured. */
	load_sized(_metadata, self, build, only, STORM_ARENA_PAGES);
	ASSERT_EQ(0, obj_set_u32(self->obj, "armed_tgid", (__u32)getpid()))
		TH_LOG("set armed_tgid");
	ASSERT_EQ(0, obj_set_u32(self->obj, "calls_per_run", STORM_CALLS))
		TH_LOG("set calls_per_run");
	return storm_round(_metadata, self, build, name, runs, "");
}

/*
 * 6.12's only way (and ours for sleepable programs): never fails here.  Fewer
 * runs: every sleepable free flushes the TLB and zaps at once (slow on TCG).
 */
TEST_F_TIMEOUT(any, storm_sleepable, 600)
{
	EXPECT_EQ(0, storm(_metadata, self, variant->build, "syscall_sleepable_round",
			   STORM_RUNS / 5).fails);
}

/*
 * At most 1 in 1000 allocations of a storm may fail: the bounded trylock's
 * give-ups.  Never for want of pages while the storm frees what it takes.
 */
#define STORM_FAILS_MAX	((__u64)STORM_THREADS * STORM_RUNS * STORM_CALLS / 1000)

/*
 * Pool + GFP_NOWAIT: no failure for want of memory here; the bounded trylock
 * may give up under this two-CPU storm (seen: 0 to 1 in 8000 on TCG).
 */
TEST_F_TIMEOUT(any, storm_tc, 600)
{
	__u64 fails;

	NEED_ANY_CTX();
	fails = storm(_metadata, self, variant->build, "tc_round", STORM_RUNS).fails;
	EXPECT_GE(STORM_FAILS_MAX, fails);
}

/*
 * Pool only (tracing programs), each page freed right after its use: the
 * next allocation takes it back before the work item has unmapped it
 * (reclaim_freeing()), so the pool never runs dry.  Before that, 26-57 % of
 * these allocations failed while the work's TLB flushes lagged behind.
 */
TEST_F_TIMEOUT(any, storm_fentry, 600)
{
	NEED_ANY_CTX();
	EXPECT_GE(STORM_FAILS_MAX,
		  storm(_metadata, self, variant->build, "fentry_round", STORM_RUNS).fails);
}

/* The same with nosleep_pool_pages=1024 (the pool is sized when the program loads). */
TEST_F_TIMEOUT(any, storm_fentry_pool_1024, 600)
{
	unsigned int old;

	NEED_ANY_CTX();
	old = pool_pages();
	ASSERT_TRUE(write_num(POOL_PARAM, 1024));
	EXPECT_GE(STORM_FAILS_MAX,
		  storm(_metadata, self, variant->build, "fentry_round", STORM_RUNS).fails);
	EXPECT_TRUE(write_num(POOL_PARAM, old));
}

/*
 * Nothing freed (keep=1): take-back cannot help, the pool (64 pages) runs
 * dry at once.  fentry from test_run runs with interrupts enabled, so the
 * allocation falls back to the page allocator (nosleep_gfp()): a burst
 * fails no more than a storm does.  (Before that fallback, the first burst
 * on a fresh arena failed 3-75 %, until the work item had grown the pool.)
 */
TEST_F_TIMEOUT(any, storm_fentry_without_frees, 600)
{
	const char *only[] = { "fentry_round", NULL };
	struct any_stats first, second;

	NEED_ANY_CTX();
	load_sized(_metadata, self, variant->build, only, STORM_ARENA_PAGES);
	ASSERT_EQ(0, obj_set_u32(self->obj, "armed_tgid", (__u32)getpid()))
		TH_LOG("set armed_tgid");
	ASSERT_EQ(0, obj_set_u32(self->obj, "calls_per_run", STORM_CALLS))
		TH_LOG("set calls_per_run");
	ASSERT_EQ(0, obj_set_u32(self->obj, "keep", 1)) TH_LOG("set keep");
	first = storm_round(_metadata, self, variant->build, "fentry_round", STORM_RUNS / 10,
			    ", nothing freed, burst 1");
	second = storm_round(_metadata, self, variant->build, "fentry_round", STORM_RUNS / 10,
			     ", nothing freed, burst 2");
	if (kernel_is_preempt_rt()) {
		/* The accounting and data were checked by storm_round(). */
		ksft_print_msg("PREEMPT_RT: the failure bound is not checked: non-sleepable allocations never call the page allocator there (pool only), the fallback this test measures\n");
		return;
	}
	EXPECT_GE(1 + first.runs / 1000, first.fails);
	EXPECT_GE(1 + second.runs / 1000, second.fails);
}

/*
 * A sustained storm on one arena: the pool follows demand (nosleep_pool_max).
 * Each round's failures are printed (README "Arena kfuncs from any program"
 * quotes them); every round checks the accounting and the data, and its
 * failures are bounded as a single storm's.
 */
TEST_F_TIMEOUT(any, storm_fentry_sustained, 900)
{
	const char *only[] = { "fentry_round", NULL };
	char label[32];
	unsigned int r;

	NEED_ANY_CTX();
	load_sized(_metadata, self, variant->build, only, STORM_ARENA_PAGES);
	ASSERT_EQ(0, obj_set_u32(self->obj, "armed_tgid", (__u32)getpid()))
		TH_LOG("set armed_tgid");
	ASSERT_EQ(0, obj_set_u32(self->obj, "calls_per_run", STORM_CALLS))
		TH_LOG("set calls_per_run");
	for (r = 1; r <= STORM_SUSTAINED_ROUNDS; r++) {
		snprintf(label, sizeof(label), ", round %u", r);
		EXPECT_GE(STORM_FAILS_MAX, storm_round(_metadata, self, variant->build,
						       "fentry_round", STORM_RUNS, label).fails);
	}
}

/*
 * Module unload right after a non-sleepable program freed a whole arena and
 * the object was closed: the arena's destruction waits for its work item,
 * the unload waits for the arena (EAGAIN until then), nothing is left
 * behind.  Reloads the module for the tests that follow.
 */
TEST_F_TIMEOUT(any, unload_with_pending_deferred_work, 120)
{
	const char *only[] = { "tc_round", NULL };
	int err;

	NEED_ANY_CTX();
	if (!kmod_is_loaded())
		SKIP(return, "the module is not loaded");
	load(_metadata, self, variant->build, only);
	ASSERT_EQ(0, obj_set_u32(self->obj, "pages_per_call", ANY_PAGES))
		TH_LOG("set pages_per_call");
	run_n(_metadata, self->obj, "tc_round", 1);
	EXPECT_EQ(1, get_stats(_metadata, self->obj).allocs);
	bpf_arena_object_close(self->obj);
	self->obj = NULL;
	/* In use (EAGAIN with O_NONBLOCK, or EBUSY) until the arena is gone. */
	err = kmod_unload_when_idle(5000);
	EXPECT_EQ(0, err) TH_LOG("unload: %s", strerror(-err));
	EXPECT_FALSE(kmod_is_loaded());
	ASSERT_EQ(0, kmod_load());
}

TEST_HARNESS_MAIN

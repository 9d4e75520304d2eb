// SPDX-License-Identifier: GPL-2.0
/*
 * nosleep_gfp() (module/arena_nosleep.c): a tracing program's
 * bpf_arena_alloc_pages() falls back to the page allocator where interrupts
 * are enabled.  From attack review 5.
 *
 * storm_allocator_internals: fentry/fexit/tp_btf programs on page-allocator
 *   and memcg-charging internals (several with a per-CPU list lock held and
 *   interrupts enabled) allocate more pages than the pool holds while
 *   threads make allocation traffic in a memory cgroup; the guest must stay
 *   healthy (no BUG/WARNING/lockdep/stall in the log, every page zeroed).
 * pf_memalloc_respects_memcg_limit: a program that runs in a task with
 *   PF_MEMALLOC (memory.reclaim's try_to_free_mem_cgroup_pages()) must not
 *   get pages past its arena's memory.max (6.1's try_charge_memcg() forces
 *   the charge for PF_MEMALLOC, and the allocator grants it the reserves):
 *   such a context gets the pool only.  Before that rule it got 244 pages
 *   past the limit.  The control (bpf_fentry_test1, no PF_MEMALLOC) is
 *   refused by the limit.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "test_util.h"
#include "arena_kfunc_common.h"

EMBED(rv_v3, "arena_any_ctx_alloc.v3.bpf.o");

static const struct obj_img img = { "arena_any_ctx_alloc", rv_v3_start, rv_v3_end };

static const char *const storm_names[24] = {
	"storm_alloc_pages", "storm_alloc_pages_x", "storm_gpff", "storm_rmqueue_bulk",
	"storm_free_unref_page", "storm_fup_commit", "storm_free_pcppages_bulk", "storm_fup_list",
	"storm_memcg_charge", "storm_memcg_uncharge", "storm_try_charge", "storm_refill_stock",
	"storm_wakeup_kswapd", "storm_wmark", "storm_cpuset", "storm_mod_memcg_state",
	"storm_page_counter", "storm_post_alloc_hook", "storm_steal", "storm_free_one",
	"storm_tp_page_alloc", "storm_tp_free_batched", "storm_tp_page_free", "storm_fup_commit_x",
};

/*
 * Each storm program's attach target in vmlinux BTF (tp_btf: the tracepoint's
 * btf_trace_ typedef); a kernel without one (inlined in the debug kernel,
 * e.g. mod_memcg_state) leaves that program out instead of failing the load.
 */
static const char *const storm_targets[24] = {
	"__alloc_pages", "__alloc_pages", "get_page_from_freelist", "rmqueue_bulk",
	"free_unref_page", "free_unref_page_commit", "free_pcppages_bulk", "free_unref_page_list",
	"__memcg_kmem_charge_page", "__memcg_kmem_uncharge_page", "try_charge_memcg", "refill_stock",
	"wakeup_kswapd", "__zone_watermark_ok", "__cpuset_node_allowed", "mod_memcg_state",
	"page_counter_try_charge", "post_alloc_hook", "steal_suitable_fallback", "__free_one_page",
	"btf_trace_mm_page_alloc", "btf_trace_mm_page_free_batched", "btf_trace_mm_page_free",
	"free_unref_page_commit",
};

static bool in_vmlinux_btf(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, strncmp(name, "btf_trace_", 10) ?
				      BTF_KIND_FUNC : BTF_KIND_TYPEDEF) > 0;
}

#define POOL_PARAM "/sys/module/bpf_arena/parameters/nosleep_pool_pages"
#define CG_STORM CG_ROOT "/arena_anyctx_storm"
#define CG_LIM CG_ROOT "/arena_anyctx_lim"

static struct rv_stats get_stats(struct __test_metadata *_metadata, struct bpf_object *obj)
{
	struct rv_stats st;

	memset(&st, 0, sizeof(st));
	EXPECT_EQ(0, obj_global(obj, "stats", &st, sizeof(st), false));
	return st;
}

static const char *const bad_words[] = {
	"BUG:", "WARNING:", "inconsistent lock state", "possible recursive locking",
	"possible circular locking", "Invalid wait context", "soft lockup", "hard LOCKUP",
	"rcu_sched self-detected stall", "rcu: INFO", "blocked for more than", "general protection",
	"stack guard page", "Oops", NULL,
};

static void log_counts(int *c)
{
	int i;

	for (i = 0; bad_words[i]; i++)
		c[i] = kernel_log_count(bad_words[i]);
}

static volatile int traffic_stop;

/* Anonymous memory, pipes (accounted pages) and fork/exit, in a loop. */
static void *traffic(void *arg)
{
	int kind = (int)(long)arg;
	char buf[4096];
	int pfd[2];

	memset(buf, 0x33, sizeof(buf));
	if (kind == 1 && pipe(pfd))
		return NULL;
	while (!traffic_stop) {
		if (kind == 0) {
			size_t len = 4 << 20;
			char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m == MAP_FAILED)
				continue;
			memset(m, 1, len);
			munmap(m, len);
		} else if (kind == 1) {
			int i;

			for (i = 0; i < 16; i++)
				if (write(pfd[1], buf, sizeof(buf)) < 0)
					break;
			for (; i > 0; i--)
				if (read(pfd[0], buf, sizeof(buf)) < 0)
					break;
		} else {
			pid_t p = fork();

			if (p == 0)
				_exit(0);
			if (p > 0)
				waitpid(p, NULL, 0);
		}
	}
	if (kind == 1) {
		close(pfd[0]);
		close(pfd[1]);
	}
	return NULL;
}

/*
 * An 18 s storm plus loading and detaching 24 tracing programs (each detach
 * waits for a trampoline grace period) ran past the harness' default 30 s
 * on a loaded host (6.1.0-57-cloud-amd64 in check-kernels).
 */
FIXTURE(storm) {};
FIXTURE_SETUP(storm) {}
FIXTURE_TEARDOWN(storm) {}

TEST_F_TIMEOUT(storm, storm_allocator_internals, 300)
{
	int before[32], after[32], i, n, attached = 0, secs;
	struct btf *vmlinux;
	struct bpf_link *links[24] = { 0 };
	struct bpf_object *obj = NULL;
	pthread_t th[3];
	char oldpool[32];
	struct rv_stats st;
	const char *only[25];
	int err;

	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel");
	ASSERT_TRUE(read_line(POOL_PARAM, oldpool, sizeof(oldpool)));
	ASSERT_TRUE(write_str(POOL_PARAM, "2"));
	if (memcg_enable()) {
		mkdir(CG_STORM, 0755);
		EXPECT_TRUE(cg_move(CG_STORM, getpid()));
	} else {
		TH_LOG("no memory cgroup: memcg charging paths not exercised");
	}
	vmlinux = btf__load_vmlinux_btf();
	ASSERT_EQ(0, libbpf_get_error(vmlinux));
	for (i = 0, n = 0; i < 24; i++) {
		if (in_vmlinux_btf(vmlinux, storm_targets[i]))
			only[n++] = storm_names[i];
		else
			TH_LOG("%s: no %s in this kernel's BTF, left out", storm_names[i],
			       storm_targets[i]);
	}
	only[n] = NULL;
	btf__free(vmlinux);
	err = obj_open_load(&img, &obj, only, 0, NULL, NULL, NULL, 0);
	ASSERT_EQ(0, err) TH_LOG("load: %d", err);
	for (i = 0; i < 24; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, storm_names[i]);

		if (!bpf_program__autoload(p))
			continue;
		links[i] = bpf_program__attach(p);
		if (libbpf_get_error(links[i])) {
			TH_LOG("attach %s failed: %ld", storm_names[i], libbpf_get_error(links[i]));
			links[i] = NULL;
			continue;
		}
		attached++;
	}
	TH_LOG("%d of 24 programs attached", attached);
	log_counts(before);
	traffic_stop = 0;
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, traffic, (void *)(long)i));
	ASSERT_EQ(0, obj_set_u32(obj, "armed", 1)) TH_LOG("set armed");
	secs = 18;
	for (i = 0; i < secs; i++) {
		sleep(1);
		if (i % 10 == 9) {
			st = get_stats(_metadata, obj);
			TH_LOG("t=%ds runs %llu allocs %llu fails %llu kept %llu", i + 1,
			       st.runs, st.allocs, st.fails, st.kept_pages);
		}
	}
	ASSERT_EQ(0, obj_set_u32(obj, "armed", 0)) TH_LOG("set armed");
	traffic_stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	st = get_stats(_metadata, obj);
	TH_LOG("runs %llu allocs %llu fails %llu bad %llu kept %llu min stack left %llu",
	       st.runs, st.allocs, st.fails, st.bad_data, st.kept_pages, st.min_stack_left);
	for (i = 0; i < 24; i++)
		if (links[i])
			TH_LOG("  %-26s got pages %llu times", storm_names[i], st.hits[i]);
	for (i = 0; i < 24; i++)
		if (links[i])
			bpf_link__destroy(links[i]);
	bpf_arena_object_close(obj);
	sleep(1);
	log_counts(after);
	for (i = 0; bad_words[i]; i++)
		EXPECT_EQ(before[i], after[i]) TH_LOG("kernel log: new \"%s\"", bad_words[i]);
	EXPECT_EQ(0, st.bad_data);
	EXPECT_LT(0, st.allocs);
	write_str(POOL_PARAM, oldpool);
	cg_move(CG_ROOT, getpid());
	rmdir(CG_STORM);
}

TEST(pf_memalloc_respects_memcg_limit)
{
	const char *only[] = { "memalloc_round_reclaim", "memalloc_round_control", NULL };
	struct bpf_link *l1 = NULL, *l2 = NULL;
	unsigned long cur, max, c2;
	struct bpf_object *obj = NULL;
	struct rv_stats st;
	char oldpool[32], num[64];
	int err, i, fails = 0;
	__u32 ret;

	if (kernel_has_native_arena())
		SKIP(return, "native arena kernel");
	if (!memcg_enable())
		SKIP(return, "no cgroup v2 memory controller");
	ASSERT_TRUE(read_line(POOL_PARAM, oldpool, sizeof(oldpool)));
	ASSERT_TRUE(write_str(POOL_PARAM, "1"));
	mkdir(CG_LIM, 0755);
	ASSERT_TRUE(cg_move(CG_LIM, getpid()));
	err = obj_open_load(&img, &obj, only, 0, NULL, NULL, NULL, 0);
	/* The arena is charged to CG_LIM; this process leaves it. */
	ASSERT_TRUE(cg_move(CG_ROOT, getpid()));
	ASSERT_EQ(0, err) TH_LOG("load: %d", err);
	l1 = bpf_program__attach(bpf_object__find_program_by_name(obj, "memalloc_round_reclaim"));
	ASSERT_EQ(0, libbpf_get_error(l1));
	l2 = bpf_program__attach(bpf_object__find_program_by_name(obj, "memalloc_round_control"));
	ASSERT_EQ(0, libbpf_get_error(l2));
	sleep(1);	/* the pool's refill */
	cur = read_num(CG_LIM "/memory.current");
	snprintf(num, sizeof(num), "%lu", cur + 4096 * 8);
	ASSERT_TRUE(write_str(CG_LIM "/memory.max", num));
	max = read_num(CG_LIM "/memory.max");
	ASSERT_EQ(0, obj_set_u32(obj, "armed_tgid", (__u32)getpid())) TH_LOG("set armed_tgid");
	ASSERT_EQ(0, obj_set_u32(obj, "pages_per_call", 4)) TH_LOG("set pages_per_call");
	/* Control: no PF_MEMALLOC; goes on until the limit refuses 8 times in a row. */
	for (i = 0; i < 400 && fails < 8; i++) {
		__u64 before = get_stats(_metadata, obj).control_pages;

		ASSERT_EQ(0, obj_run(obj, "memalloc_round_control", &ret));
		fails = get_stats(_metadata, obj).control_pages == before ? fails + 1 : 0;
	}
	st = get_stats(_metadata, obj);
	c2 = read_num(CG_LIM "/memory.current");
	TH_LOG("control (no PF_MEMALLOC): %llu pages in %d calls; memory.current %lu max %lu",
	       st.control_pages, i, c2, max);
	EXPECT_EQ(8, fails) TH_LOG("the memcg limit never refused the control");
	/* Now from inside reclaim (PF_MEMALLOC). */
	for (i = 0; i < 4; i++)
		write_str(CG_LIM "/memory.reclaim", "1M");
	st = get_stats(_metadata, obj);
	c2 = read_num(CG_LIM "/memory.current");
	TH_LOG("PF_MEMALLOC: %llu calls got %llu pages; memory.current %lu (max %lu, %+ld pages)",
	       st.memalloc_runs, st.memalloc_pages, c2, max, ((long)c2 - (long)max) / 4096);
	EXPECT_LT(0, st.memalloc_runs) TH_LOG("the program never ran with PF_MEMALLOC");
	/* Pool pages (charged when the work item took them) are all it may get. */
	EXPECT_GE(max, c2) TH_LOG("a PF_MEMALLOC context got pages past the arena memcg's limit");
	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	bpf_arena_object_close(obj);
	write_str(POOL_PARAM, oldpool);
	sleep(1);
	rmdir(CG_LIM);
}

TEST_HARNESS_MAIN

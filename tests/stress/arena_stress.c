// SPDX-License-Identifier: GPL-2.0
/*
 * arena_stress SECONDS [SEED]: a bounded concurrent load on one device arena
 * (run in the guest by tests/stress/guest.sh; `make stress`).
 *
 * The arena (ARENA_PAGES pages, created through /dev/bpf_arena) is split so
 * that every page has exactly one writer, which keeps a model of it: free,
 * or allocated with the tag of its last write (tag 0: zero).  Every read of
 * a page is checked against the model, so a lost write, a page that is not
 * zero after a free or one freed behind the owner's back is a failure:
 *   pages [0, 8)     sentinels, written once, checked by everyone
 *   page 8           written by fork children (the fork thread's)
 *   pages [9, 16)    the program thread's: alloc/free by freshly loaded programs
 *   pages [16, 144)  OWNERS owners x OWN_PAGES: alloc/free/prefault through the
 *                    ioctls and through sleepable BPF programs (and every other
 *                    BPF allocation through a non-sleepable TC program), user
 *                    faults, writes, reads, madvise(DONTNEED)
 *   pages [144, 176) the any-context owner's: alloc and free through
 *                    non-sleepable TC programs (the module's any-context kfuncs,
 *                    whose frees are deferred to a work item and whose
 *                    allocations take such pages back), ioctl alloc/free, user
 *                    faults, writes, reads, madvise(DONTNEED)
 * Beside it, the shared thread drives bpf() arenas through device handles:
 * ATTACHed with O_RDWR map fds (alloc, fault, free through the handle), then
 * frozen, and read by read-only handles in fork children, where a read of
 * a missing page must get SIGSEGV and allocate nothing.
 * Around them: munmap/mremap/mprotect/madvise attempts on the mapping (all
 * must be refused or keep the data), fork with and without re-mapping,
 * close/re-open/attach of the device and short-lived second arenas, program
 * load/unload, and module unload attempts (must be refused).  At the end the
 * module's page count must equal the model's.
 *
 * With BPF_ARENA_STRESS_FAULTS=1 each thread turns its own
 * /proc/self/task/TID/make-it-fail on around its ioctl and bpf() calls (the
 * guest enables failslab/fail_page_alloc with task-filter=Y): then every call
 * may fail, but only with a clean errno (or NULL from the kfunc), and a failed
 * call must leave its pages exactly as they were.
 *
 * Prints "# stress: ..." counters and "# Totals: pass:N fail:N ..." (one test:
 * the whole run); exit 0 only with zero failures.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/bpf_arena.h>

#include "bpf_insn.h"
/* test_util.h's device helpers call this file's xioctl(), which injects faults. */
#define TEST_UTIL_XIOCTL
static long xioctl(int fd, unsigned long cmd, void *arg);
#include "test_util.h"

#define PG		4096UL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define WORDS		(PG / 8)
#define ARENA_PAGES	512
#define SENT_NR		8
#define FORK_PAGE	8
#define PROG_FIRST	9
#define PROG_NR		7
#define OWN_FIRST	16
#define OWNERS		4
#define OWN_PAGES	32
#define MAX_RUN		4	/* pages per multi-page call */
#define NS_FIRST	(OWN_FIRST + OWNERS * OWN_PAGES)
#define NS_PAGES	32
#define FORK_TAG0	0xf0000000u

static int dev_fd, map_fd, btf_fd = -1;
static uint32_t alloc_id, free_id;
static char *base;
static atomic_int stop;
static atomic_long failures;
static bool faults;
static bool nonsleepable;	/* the any-context kfuncs load (see try_nonsleepable) */
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

enum { C_ALLOC, C_ALLOC_FAIL, C_FREE, C_PREFAULT, C_BPF_ALLOC, C_BPF_FREE, C_WRITE,
	C_READ, C_MADV, C_FORK, C_REOPEN, C_CHURN, C_PROG, C_UNLOAD, C_CHAOS, C_INJECTED,
	C_NS_ALLOC, C_NS_FREE, C_NS_NULL, C_NS_PENDING, C_PROG_REFUSED, C_SHARED, C_NR };
static const char *const cname[C_NR] = {
	"ioctl_alloc", "alloc_refused", "ioctl_free", "prefault", "bpf_alloc", "bpf_free",
	"write", "read", "madvise", "fork", "reopen", "churn_arena", "prog_load",
	"unload_refused", "chaos", "injected_failures", "nosleep_alloc", "nosleep_free",
	"nosleep_alloc_null", "nosleep_alloc_pending_busy", "prog_load_refused",
	"shared_rounds",
};
static atomic_long count[C_NR];

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&failures, 1) >= 50)
		return;
	pthread_mutex_lock(&print_lock);
	printf("# FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

static char *page_at(unsigned int i)
{
	return base + (unsigned long)i * PG;
}

/* ---- content ------------------------------------------------------------ */

static void fill(char *p, uint32_t tag)
{
	uint64_t *w = (uint64_t *)p;
	unsigned int i;

	for (i = 0; i < WORDS; i++)
		w[i] = tag ? ((uint64_t)tag << 32) | i : 0;
}

/* -1 if the page holds what fill(tag) wrote, else the first bad word. */
static int check(const char *p, uint32_t tag)
{
	const volatile uint64_t *w = (const volatile uint64_t *)p;
	unsigned int i;

	for (i = 0; i < WORDS; i++)
		if (w[i] != (tag ? ((uint64_t)tag << 32) | i : 0))
			return (int)i;
	return -1;
}

static void expect_page(unsigned int pg, uint32_t tag, const char *what)
{
	int bad = check(page_at(pg), tag);

	if (bad >= 0)
		fail("page %u after %s: word %d is %#llx, expected tag %#x", pg, what, bad,
		     (unsigned long long)((volatile uint64_t *)page_at(pg))[bad], tag);
}

/* ---- fault injection around this thread's syscalls ---------------------- */

static __thread int mif_fd = -1;
static __thread bool fi_hold;	/* checking after a failure: no injection */

static void fi(bool on)
{
	char path[64];

	if (!faults || fi_hold)
		return;
	if (mif_fd < 0) {
		snprintf(path, sizeof(path), "/proc/self/task/%ld/make-it-fail", (long)syscall(SYS_gettid));
		mif_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (mif_fd < 0) {
			fail("open %s: %s", path, strerror(errno));
			return;
		}
	}
	if (pwrite(mif_fd, on ? "1" : "0", 1, 0) != 1)
		fail("make-it-fail: %s", strerror(errno));
}

/* ---- ioctls -------------------------------------------------------------- */

/* ioctl() with the thread's fault injection on; test_util.h's dev_*() call it. */
static long xioctl(int fd, unsigned long cmd, void *arg)
{
	long r;

	fi(true);
	r = ioctl(fd, cmd, arg);
	fi(false);
	return r < 0 ? -errno : r;
}

/* ---- BPF programs: sleepable syscall programs calling the kfuncs --------- */

/*
 * alloc: ctx = { u64 addr; u64 cnt }, returns 1 if the kfunc returned non-NULL.
 * free:  ctx = { u64 addr; u64 cnt }, returns 1.
 */
static int load_kfunc_prog(int mfd, bool alloc, bool sleepable, char *log, size_t log_sz)
{
	struct bpf_insn a[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, mfd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_LDX(BPF_DW, 3, 6, 8),
		I_MOV64_IMM(4, -1),
		I_MOV64_IMM(5, 0),
		I_CALL_KFUNC(alloc_id, 1),
		I_JMP_IMM(BPF_JEQ, 0, 0, 2),
		I_MOV64_IMM(0, 1),
		I_EXIT(),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	struct bpf_insn f[] = {
		I_MOV64_REG(6, 1),
		I_LD_MAP_FD(1, mfd),
		I_LDX(BPF_DW, 2, 6, 0),
		I_LDX(BPF_DW, 3, 6, 8),
		I_CALL_KFUNC(free_id, 1),
		I_MOV64_IMM(0, 1),
		I_EXIT(),
	};
	int fds[2] = { mfd, btf_fd };
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = sleepable ? BPF_F_SLEEPABLE : 0;
	attr.insns = ptr_u64(alloc ? a : f);
	attr.insn_cnt = alloc ? ARRAY_SIZE(a) : ARRAY_SIZE(f);
	attr.license = ptr_u64("GPL");
	attr.fd_array = ptr_u64(fds);
	if (log && log_sz) {
		log[0] = 0;
		attr.log_buf = ptr_u64(log);
		attr.log_size = log_sz;
		attr.log_level = 1;
	}
	fi(true);
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	fi(false);
	return fd < 0 ? -errno : (int)fd;
}

static long run_prog(int pfd, uint64_t addr, uint64_t cnt)
{
	uint64_t ctx[2] = { addr, cnt };
	long r;

	fi(true);
	r = run_syscall_prog(pfd, ctx, sizeof(ctx));
	fi(false);
	return r;
}

/*
 * The same through non-sleepable TC (SCHED_CLS) programs, which reach the
 * module's any-context kfuncs: addr in skb->cb[0..1], cnt in cb[2] (the
 * cb words are what test_run lets a caller set in the context).  6.1 lets
 * no non-sleepable SYSCALL program in ("Syscall programs can only be
 * sleepable"), so TC it is.
 */
static int load_tc_prog(int mfd, bool alloc, char *log, size_t log_sz)
{
	enum { CB = offsetof(struct __sk_buff, cb) };
	struct bpf_insn a[] = {
		I_MOV64_REG(6, 1),
		I_LDX(BPF_W, 2, 6, CB),
		I_LDX(BPF_W, 7, 6, CB + 4),
		I_ALU64_IMM(BPF_LSH, 7, 32),
		I_ALU64_REG(BPF_OR, 2, 7),
		I_LDX(BPF_W, 3, 6, CB + 8),
		I_LD_MAP_FD(1, mfd),
		I_MOV64_IMM(4, -1),
		I_MOV64_IMM(5, 0),
		I_CALL_KFUNC(alloc_id, 1),
		I_JMP_IMM(BPF_JEQ, 0, 0, 2),
		I_MOV64_IMM(0, 1),
		I_EXIT(),
		I_MOV64_IMM(0, 0),
		I_EXIT(),
	};
	struct bpf_insn f[] = {
		I_MOV64_REG(6, 1),
		I_LDX(BPF_W, 2, 6, CB),
		I_LDX(BPF_W, 7, 6, CB + 4),
		I_ALU64_IMM(BPF_LSH, 7, 32),
		I_ALU64_REG(BPF_OR, 2, 7),
		I_LDX(BPF_W, 3, 6, CB + 8),
		I_LD_MAP_FD(1, mfd),
		I_CALL_KFUNC(free_id, 1),
		I_MOV64_IMM(0, 1),
		I_EXIT(),
	};
	int fds[2] = { mfd, btf_fd };
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	attr.insns = ptr_u64(alloc ? a : f);
	attr.insn_cnt = alloc ? ARRAY_SIZE(a) : ARRAY_SIZE(f);
	attr.license = ptr_u64("GPL");
	attr.fd_array = ptr_u64(fds);
	if (log && log_sz) {
		log[0] = 0;
		attr.log_buf = ptr_u64(log);
		attr.log_size = log_sz;
		attr.log_level = 1;
	}
	fi(true);
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	fi(false);
	return fd < 0 ? -errno : (int)fd;
}

/* Test-runs a TC program of load_tc_prog(); its r0 or -errno. */
static long run_tc_prog(int pfd, uint64_t addr, uint64_t cnt)
{
	struct __sk_buff skb;
	char pkt[64];
	union bpf_attr attr;
	long r;

	memset(&skb, 0, sizeof(skb));
	memset(pkt, 0, sizeof(pkt));
	skb.cb[0] = (uint32_t)addr;
	skb.cb[1] = (uint32_t)(addr >> 32);
	skb.cb[2] = (uint32_t)cnt;
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = pfd;
	attr.test.data_in = ptr_u64(pkt);
	attr.test.data_size_in = sizeof(pkt);
	attr.test.ctx_in = ptr_u64(&skb);
	attr.test.ctx_size_in = sizeof(skb);
	fi(true);
	r = bpf_sys(BPF_PROG_TEST_RUN, &attr) ? -errno : (long)attr.test.retval;
	fi(false);
	return r;
}

/*
 * Whether the any-context kfuncs load here (not with kfuncs_sleepable_only=Y,
 * 6.12's rule): then the owners use them for every other BPF allocation and
 * the any-context owner runs.
 */
static int try_nonsleepable(void)
{
	static char log[8192];
	int fd;

	fi_hold = true;	/* the probe must not see an injected failure */
	fd = load_tc_prog(map_fd, true, log, sizeof(log));
	fi_hold = false;

	if (fd >= 0) {
		printf("# stress: non-sleepable (TC) bpf_arena_alloc_pages loads: owners and the any-context owner use it\n");
		nonsleepable = true;
		close(fd);
		return 0;
	}
	printf("# stress: non-sleepable (TC) bpf_arena_alloc_pages refused (%d): sleepable only; its log:\n%s\n",
	       fd, log);
	return 0;
}

/* ---- owners ------------------------------------------------------------- */

struct owner {
	pthread_t th;
	unsigned int id, first;
	unsigned int seed;
	bool alloc[OWN_PAGES];
	uint32_t tag[OWN_PAGES];
	uint32_t seq;
	int palloc, pfree, palloc_ns;	/* this thread's programs */
};

static struct owner owners[OWNERS];

static uint32_t next_tag(struct owner *o)
{
	o->seq = (o->seq + 1) & 0xffffff;
	if (!o->seq)
		o->seq = 1;
	return ((o->id + 1) << 24) | o->seq;
}

/* After a failed allocating call: no page of [i, i+n) may have changed. */
static void expect_untouched(struct owner *o, unsigned int i, unsigned int n, const char *what)
{
	unsigned int k;

	fi_hold = true;
	for (k = i; k < i + n; k++) {
		if (o->alloc[k]) {
			expect_page(o->first + k, o->tag[k], what);
			continue;
		}
		/* Still free: freeing it finds nothing. */
		long r = dev_range(dev_fd, BPF_ARENA_IOC_FREE_PAGES,
				   (uint64_t)(uintptr_t)page_at(o->first + k), 1);
		if (r != -ENOENT)
			fail("owner %u page %u: after a failed %s FREE says %ld (half-done?)",
			     o->id, k, what, r);
	}
	fi_hold = false;
}

static void owner_step(struct owner *o)
{
	unsigned int i = (unsigned int)rand_r(&o->seed) % OWN_PAGES, k;
	unsigned int n = 1 + (unsigned int)rand_r(&o->seed) % MAX_RUN, busy = 0;
	uint64_t addr = (uint64_t)(uintptr_t)page_at(o->first + i);
	__u64 got = 0;
	long r;

	if (i + n > OWN_PAGES)
		n = OWN_PAGES - i;
	for (k = i; k < i + n; k++)
		busy += o->alloc[k];

	switch (rand_r(&o->seed) % 9) {
	case 0:	/* ioctl alloc: all-or-nothing, EBUSY if any page is taken */
		r = dev_alloc(dev_fd, addr, n, &got);
		if (r == 0) {
			if (busy)
				fail("owner %u: ALLOC over %u allocated pages succeeded", o->id, busy);
			if (got != addr)
				fail("owner %u: ALLOC at %#llx gave %#llx", o->id,
				     (unsigned long long)addr, (unsigned long long)got);
			for (k = i; k < i + n; k++) {
				o->alloc[k] = true;
				o->tag[k] = 0;
				expect_page(o->first + k, 0, "ioctl alloc");
			}
			atomic_fetch_add(&count[C_ALLOC], 1);
		} else if (r == -EBUSY && busy) {
			atomic_fetch_add(&count[C_ALLOC_FAIL], 1);
			expect_untouched(o, i, n, "refused ALLOC");
		} else if (faults && r == -ENOMEM) {
			atomic_fetch_add(&count[C_INJECTED], 1);
			expect_untouched(o, i, n, "failed ALLOC");
		} else {
			fail("owner %u: ALLOC %u pages (%u busy): %ld", o->id, n, busy, r);
		}
		break;
	case 1:	/* ioctl free: the count of allocated pages, ENOENT for none */
		r = dev_range(dev_fd, BPF_ARENA_IOC_FREE_PAGES, addr, n);
		if (r == (busy ? (long)busy : -ENOENT)) {
			for (k = i; k < i + n; k++)
				o->alloc[k] = false;
			atomic_fetch_add(&count[C_FREE], 1);
		} else if (faults && r == -ENOMEM) {
			atomic_fetch_add(&count[C_INJECTED], 1);
			expect_untouched(o, i, n, "failed FREE");
		} else {
			fail("owner %u: FREE %u pages (%u allocated): %ld", o->id, n, busy, r);
		}
		break;
	case 2:	/* prefault: allocates the missing pages, keeps the others */
		r = dev_range(dev_fd, BPF_ARENA_IOC_PREFAULT, addr, n);
		if (r == (long)(n - busy)) {
			for (k = i; k < i + n; k++) {
				if (!o->alloc[k])
					o->tag[k] = 0;
				o->alloc[k] = true;
				expect_page(o->first + k, o->tag[k], "prefault");
			}
			atomic_fetch_add(&count[C_PREFAULT], 1);
		} else if (faults && r == -ENOMEM) {
			/* Prefault keeps what it allocated before failing (uapi). */
			atomic_fetch_add(&count[C_INJECTED], 1);
			fi_hold = true;
			for (k = i; k < i + n; k++) {
				if (o->alloc[k]) {
					expect_page(o->first + k, o->tag[k], "failed prefault");
				} else {
					r = dev_range(dev_fd, BPF_ARENA_IOC_FREE_PAGES,
						      (uint64_t)(uintptr_t)page_at(o->first + k), 1);
					if (r != 1 && r != -ENOENT)
						fail("owner %u: FREE after failed prefault: %ld", o->id, r);
				}
			}
			fi_hold = false;
		} else {
			fail("owner %u: PREFAULT %u pages (%u allocated): %ld", o->id, n, busy, r);
		}
		break;
	case 3: { /* BPF alloc of one page: non-NULL iff it was free */
		bool ns = nonsleepable && (o->seq & 1);

		r = ns ? run_tc_prog(o->palloc_ns, addr, 1) : run_prog(o->palloc, addr, 1);
		if (r == 1 && !o->alloc[i]) {
			o->alloc[i] = true;
			o->tag[i] = 0;
			expect_page(o->first + i, 0, "bpf alloc");
			atomic_fetch_add(&count[C_BPF_ALLOC], 1);
		} else if (r == 0 && o->alloc[i]) {
			atomic_fetch_add(&count[C_ALLOC_FAIL], 1);
			expect_untouched(o, i, 1, "refused bpf alloc");
		} else if (ns && r == 0) {
			/* The bounded trylock gave up (README): nothing may have changed. */
			atomic_fetch_add(&count[C_NS_NULL], 1);
			expect_untouched(o, i, 1, "NULL non-sleepable alloc");
		} else if (faults && r == 0) {
			atomic_fetch_add(&count[C_INJECTED], 1);
			expect_untouched(o, i, 1, "failed bpf alloc");
		} else if (faults && r < 0 && r != -EINVAL) {
			atomic_fetch_add(&count[C_INJECTED], 1);	/* test_run's own alloc */
			expect_untouched(o, i, 1, "failed test_run");
		} else {
			fail("owner %u: bpf alloc page %u (allocated %d): %ld", o->id, i, o->alloc[i], r);
		}
		break;
	}
	case 4:	/* BPF free of n pages */
		r = run_prog(o->pfree, addr, n);
		if (r == 1) {
			for (k = i; k < i + n; k++)
				o->alloc[k] = false;
			atomic_fetch_add(&count[C_BPF_FREE], 1);
		} else if (faults && r < 0 && r != -EINVAL) {
			atomic_fetch_add(&count[C_INJECTED], 1);
			expect_untouched(o, i, n, "failed bpf free test_run");
		} else {
			fail("owner %u: bpf free: %ld", o->id, r);
		}
		break;
	case 5:
	case 6:	/* write through the mapping (a user fault allocates a free page) */
		o->tag[i] = next_tag(o);
		fill(page_at(o->first + i), o->tag[i]);
		o->alloc[i] = true;
		atomic_fetch_add(&count[C_WRITE], 1);
		break;
	case 7:	/* read: the last write, or zero (a fault allocates a zero page) */
		if (!o->alloc[i])
			o->tag[i] = 0;
		expect_page(o->first + i, o->tag[i], o->alloc[i] ? "read" : "read after free");
		o->alloc[i] = true;
		atomic_fetch_add(&count[C_READ], 1);
		break;
	case 8:	/* DONTNEED zaps the PTEs; the pages stay the arena's */
		if (madvise(page_at(o->first + i), n * PG, MADV_DONTNEED))
			fail("owner %u: madvise(DONTNEED): %s", o->id, strerror(errno));
		for (k = i; k < i + n; k++)
			if (o->alloc[k])
				expect_page(o->first + k, o->tag[k], "madvise(DONTNEED)");
		atomic_fetch_add(&count[C_MADV], 1);
		break;
	}
}

static void *owner_main(void *arg)
{
	struct owner *o = arg;
	char *log = calloc(1, 65536);
	char name[16];
	unsigned int k;

	snprintf(name, sizeof(name), "owner%u", o->id);
	prctl(PR_SET_NAME, name);
	if (!log) {
		fail("owner %u: out of memory", o->id);
		return NULL;
	}
	o->palloc = load_kfunc_prog(map_fd, true, true, log, 65536);
	o->pfree = load_kfunc_prog(map_fd, false, true, NULL, 0);
	o->palloc_ns = nonsleepable ? load_tc_prog(map_fd, true, NULL, 0) : -1;
	while (o->palloc < 0 || o->pfree < 0 || (nonsleepable && o->palloc_ns < 0)) {
		/* Only injected faults may make a load fail: retry. */
		if (!faults) {
			fail("owner %u: program load: %d %d\n%s", o->id, o->palloc, o->pfree, log);
			free(log);
			return NULL;
		}
		if (o->palloc < 0)
			o->palloc = load_kfunc_prog(map_fd, true, true, NULL, 0);
		if (o->pfree < 0)
			o->pfree = load_kfunc_prog(map_fd, false, true, NULL, 0);
		if (nonsleepable && o->palloc_ns < 0)
			o->palloc_ns = load_tc_prog(map_fd, true, NULL, 0);
	}
	free(log);
	while (!atomic_load(&stop))
		owner_step(o);
	for (k = 0; k < OWN_PAGES; k++)
		if (o->alloc[k])
			expect_page(o->first + k, o->tag[k], "the end");
	close(o->palloc);
	close(o->pfree);
	if (o->palloc_ns >= 0)
		close(o->palloc_ns);
	return NULL;
}

/* ---- the any-context owner ---------------------------------------------- */

/*
 * Its pages are FREE, ALLOC (with the tag of the last write) or PENDING:
 * freed by a non-sleepable program, so the work item unmaps them later, and
 * until it has, the page may still be mapped and the range is not free
 * again; a non-sleepable allocation may take such a page back at once.  A
 * PENDING page is never read or written here (what user space sees there
 * depends on the work's timing); every other state is checked exactly.
 */
enum ns_state { NS_FREE, NS_ALLOC, NS_PENDING };

static struct {
	pthread_t th;
	unsigned int seed;
	enum ns_state st[NS_PAGES];
	uint32_t tag[NS_PAGES];
	uint32_t seq;
} nso;

static uint32_t ns_tag(void)
{
	nso.seq = (nso.seq + 1) & 0xffffff;
	if (!nso.seq)
		nso.seq = 1;
	return (0x7fu << 24) | nso.seq;
}

static void ns_step(int palloc, int pfree)
{
	unsigned int i = (unsigned int)rand_r(&nso.seed) % NS_PAGES, k, pg = NS_FIRST + i;
	unsigned int n = 1 + (unsigned int)rand_r(&nso.seed) % MAX_RUN;
	unsigned int nalloc = 0, npend = 0;
	uint64_t addr = (uint64_t)(uintptr_t)page_at(pg);
	__u64 got;
	long r;

	if (i + n > NS_PAGES)
		n = NS_PAGES - i;
	for (k = i; k < i + n; k++) {
		nalloc += nso.st[k] == NS_ALLOC;
		npend += nso.st[k] == NS_PENDING;
	}
	switch (rand_r(&nso.seed) % 10) {
	case 0:
	case 1:	/* non-sleepable alloc of page i at its address */
		r = run_tc_prog(palloc, addr, 1);
		if (r == 1 && nso.st[i] != NS_ALLOC) {
			/* Fresh, or a PENDING page taken back: zero either way. */
			nso.st[i] = NS_ALLOC;
			nso.tag[i] = 0;
			expect_page(pg, 0, "non-sleepable alloc");
			atomic_fetch_add(&count[C_NS_ALLOC], 1);
		} else if (r == 0 && nso.st[i] == NS_ALLOC) {
			expect_page(pg, nso.tag[i], "refused non-sleepable alloc");
			atomic_fetch_add(&count[C_ALLOC_FAIL], 1);
		} else if (r == 0 && nso.st[i] == NS_FREE) {
			/* The bounded trylock gave up, or memory ran short: still free. */
			fi_hold = true;
			r = dev_range(dev_fd, BPF_ARENA_IOC_FREE_PAGES, addr, 1);
			fi_hold = false;
			if (r != -ENOENT)
				fail("any-context page %u: free after a NULL alloc says %ld", i, r);
			atomic_fetch_add(&count[C_NS_NULL], 1);
		} else if (r == 0) {
			/* PENDING: the work item holds it right now; it stays PENDING. */
			atomic_fetch_add(&count[C_NS_PENDING], 1);
		} else if (faults && r < 0 && r != -EINVAL) {
			atomic_fetch_add(&count[C_INJECTED], 1);	/* test_run's own alloc */
		} else {
			fail("any-context page %u: non-sleepable alloc (state %d): %ld", i, nso.st[i], r);
		}
		break;
	case 2:	/* non-sleepable free: deferred */
		r = run_tc_prog(pfree, addr, n);
		if (r == 1) {
			for (k = i; k < i + n; k++)
				if (nso.st[k] == NS_ALLOC)
					nso.st[k] = NS_PENDING;
			atomic_fetch_add(&count[C_NS_FREE], 1);
		} else if (faults && r < 0 && r != -EINVAL) {
			atomic_fetch_add(&count[C_INJECTED], 1);
		} else {
			fail("any-context: non-sleepable free: %ld", r);
		}
		break;
	case 3:	/* ioctl free: synchronous, also of PENDING pages the work has not reached */
		r = dev_range(dev_fd, BPF_ARENA_IOC_FREE_PAGES, addr, n);
		if ((r == -ENOENT && !nalloc) || (r >= (long)nalloc && r <= (long)(nalloc + npend) && r > 0)) {
			for (k = i; k < i + n; k++)
				nso.st[k] = NS_FREE;
			atomic_fetch_add(&count[C_FREE], 1);
		} else if (faults && r == -ENOMEM) {
			atomic_fetch_add(&count[C_INJECTED], 1);
			fi_hold = true;
			for (k = i; k < i + n; k++)
				if (nso.st[k] == NS_ALLOC)
					expect_page(NS_FIRST + k, nso.tag[k], "failed FREE");
			fi_hold = false;
		} else {
			fail("any-context: FREE %u pages (%u allocated, %u pending): %ld", n, nalloc, npend, r);
		}
		break;
	case 4:	/* ioctl alloc: EBUSY over allocated pages, may be EBUSY over pending ones */
		r = dev_alloc(dev_fd, addr, n, &got);
		if (r == 0 && !nalloc && got == addr) {
			for (k = i; k < i + n; k++) {
				nso.st[k] = NS_ALLOC;
				nso.tag[k] = 0;
				expect_page(NS_FIRST + k, 0, "ioctl alloc");
			}
			atomic_fetch_add(&count[C_ALLOC], 1);
		} else if (r == -EBUSY && (nalloc || npend)) {
			atomic_fetch_add(&count[C_ALLOC_FAIL], 1);
			for (k = i; k < i + n; k++)
				if (nso.st[k] == NS_ALLOC)
					expect_page(NS_FIRST + k, nso.tag[k], "refused ALLOC");
		} else if (faults && r == -ENOMEM) {
			atomic_fetch_add(&count[C_INJECTED], 1);
		} else {
			fail("any-context: ALLOC %u pages (%u allocated, %u pending): %ld", n, nalloc, npend, r);
		}
		break;
	case 5:
	case 6:	/* write: an allocated page, or a free one (a user fault allocates it) */
		if (nso.st[i] == NS_PENDING)
			break;
		nso.tag[i] = ns_tag();
		fill(page_at(pg), nso.tag[i]);
		nso.st[i] = NS_ALLOC;
		atomic_fetch_add(&count[C_WRITE], 1);
		break;
	case 7:
	case 8:	/* read an allocated page */
		if (nso.st[i] != NS_ALLOC)
			break;
		expect_page(pg, nso.tag[i], "read");
		atomic_fetch_add(&count[C_READ], 1);
		break;
	case 9:	/* DONTNEED zaps the PTEs; allocated pages keep their data */
		if (madvise(page_at(pg), n * PG, MADV_DONTNEED))
			fail("any-context: madvise(DONTNEED): %s", strerror(errno));
		for (k = i; k < i + n; k++)
			if (nso.st[k] == NS_ALLOC)
				expect_page(NS_FIRST + k, nso.tag[k], "madvise(DONTNEED)");
		atomic_fetch_add(&count[C_MADV], 1);
		break;
	}
}

static void *ns_main(void *arg)
{
	int palloc = -1, pfree = -1;
	unsigned int k;

	(void)arg;
	prctl(PR_SET_NAME, "anyctx");
	while (palloc < 0 || pfree < 0) {
		if (palloc < 0)
			palloc = load_tc_prog(map_fd, true, NULL, 0);
		if (pfree < 0)
			pfree = load_tc_prog(map_fd, false, NULL, 0);
		/* Only injected faults may make a load fail: retry. */
		if ((palloc < 0 || pfree < 0) && !faults) {
			fail("any-context: program load: %d %d", palloc, pfree);
			return NULL;
		}
	}
	while (!atomic_load(&stop))
		ns_step(palloc, pfree);
	for (k = 0; k < NS_PAGES; k++)
		if (nso.st[k] == NS_ALLOC)
			expect_page(NS_FIRST + k, nso.tag[k], "the end");
	close(palloc);
	close(pfree);
	return NULL;
}

/* ---- the others --------------------------------------------------------- */

static uint32_t sentinel_tag(unsigned int i)
{
	return 0xa0000000u | i;
}

static void check_sentinels(const char *who)
{
	unsigned int i;

	for (i = 0; i < SENT_NR; i++)
		expect_page(i, sentinel_tag(i), who);
}

/* mapping changes that must be refused or keep every page */
static void *chaos_main(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	prctl(PR_SET_NAME, "chaos");
	size_t len = ARENA_PAGES * PG;

	while (!atomic_load(&stop)) {
		unsigned int pg = 1 + (unsigned int)rand_r(&seed) % (ARENA_PAGES - 2);
		void *r;

		switch (rand_r(&seed) % 8) {
		case 0:	/* a partial munmap would split the VMA */
			if (!munmap(page_at(pg), PG))
				fail("munmap of one arena page succeeded");
			break;
		case 1:	/* a partial mprotect too */
			if (!mprotect(page_at(pg), PG, PROT_READ))
				fail("mprotect of one arena page succeeded");
			break;
		case 2:	/* the whole mapping, same protection: allowed, no change */
			if (mprotect(base, len, PROT_READ | PROT_WRITE))
				fail("mprotect(RW) of the whole arena: %s", strerror(errno));
			break;
		case 3:	/* move and grow */
			/* (moving it: in fork children, where the target's unmap is harmless) */
			r = mremap(base, len, len + PG, MREMAP_MAYMOVE);
			if (r != MAP_FAILED)
				fail("mremap moved and grew the arena to %p", r);
			r = mremap(base, len, len + PG, 0);
			if (r != MAP_FAILED)
				fail("mremap grew the arena");
			r = mremap(base, len, len - PG, 0);
			if (r != MAP_FAILED)
				fail("mremap shrank the arena");
			break;
		case 4:	/* advice that must keep the data */
			madvise(base, len, MADV_DONTNEED);
			madvise(page_at(pg), PG, MADV_COLD);
			madvise(page_at(pg), PG, MADV_PAGEOUT);
			madvise(page_at(pg), PG, MADV_WILLNEED);
			madvise(base, len, MADV_HUGEPAGE);
			madvise(base, len, MADV_NOHUGEPAGE);
			break;
		case 5:	/* advice that must be refused on an arena */
			if (!madvise(page_at(pg), PG, MADV_REMOVE))
				fail("madvise(REMOVE) on an arena page succeeded");
			if (!madvise(page_at(pg), PG, MADV_FREE))
				fail("madvise(FREE) on an arena page succeeded");
			break;
		case 6:	/* VM_DONTCOPY toggled: fork then copies the mapping */
			madvise(base, len, (rand_r(&seed) & 1) ? MADV_DOFORK : MADV_DONTFORK);
			break;
		case 7:
			madvise(base, len, MADV_DONTNEED);
			break;
		}
		check_sentinels("a mapping change attempt");
		atomic_fetch_add(&count[C_CHAOS], 1);
		usleep(1000);
	}
	return NULL;
}

/*
 * Children see the arena only if they map it again (VM_DONTCOPY) or if the
 * chaos thread cleared VM_DONTCOPY (MADV_DOFORK): either way what they see
 * is the parent's data, and what they write the parent reads.
 */
static int fork_child(bool remap, uint32_t tag)
{
	size_t len = ARENA_PAGES * PG;
	unsigned int i;
	bool mapped = msync(base, PG, MS_ASYNC) == 0;

	if (!mapped && remap) {
		void *p = mmap(base, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE,
			       dev_fd, 0);
		if (p != base)
			return 10;
		mapped = true;
	}
	if (!mapped)
		return 0;
	for (i = 0; i < SENT_NR; i++)
		if (check(page_at(i), sentinel_tag(i)) >= 0)
			return 11;
	fill(page_at(FORK_PAGE), tag);
	/*
	 * Moving the mapping must be refused (vm_ops->mremap): here, in the
	 * child, MREMAP_FIXED unmapping whatever was at the target is harmless.
	 */
	if (mremap(base, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, base + (1UL << 32)) != MAP_FAILED)
		return 13;
	if (check(page_at(0), sentinel_tag(0)) >= 0)
		return 14;
	if (remap && munmap(base, len))
		return 12;
	return 0;
}

static void *fork_main(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	prctl(PR_SET_NAME, "fork");
	uint32_t tag = FORK_TAG0, last = FORK_TAG0;

	while (!atomic_load(&stop)) {
		bool remap = rand_r(&seed) & 1;
		int st;
		pid_t pid;

		tag++;
		pid = fork();
		if (pid == 0)
			_exit(fork_child(remap, tag));
		if (pid < 0) {
			if (!faults)
				fail("fork: %s", strerror(errno));
			continue;
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fail("fork child (remap %d): status %#x", remap, st);
			continue;
		}
		if (check(page_at(FORK_PAGE), tag) < 0) {
			last = tag;
		} else if (check(page_at(FORK_PAGE), last) >= 0) {
			fail("fork page holds neither the child's nor the last tag");
		}
		atomic_fetch_add(&count[C_FORK], 1);
	}
	return NULL;
}

/* A second handle on the same arena, and short-lived other arenas. */
static void *reopen_main(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	prctl(PR_SET_NAME, "reopen");

	while (!atomic_load(&stop)) {
		struct bpf_arena_attach at = { .size = sizeof(at), .map_fd = map_fd };
		struct bpf_arena_info info = { .size = sizeof(info) };
		struct bpf_arena_config c = { .size = sizeof(c), .map_flags = BPF_ARENA_F_MMAPABLE,
					      .max_entries = 16, .numa_node = -1 };
		__u64 got;
		long r;
		int fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		char *p;

		if (fd < 0) {
			fail("re-open: %s", strerror(errno));
			break;
		}
		r = xioctl(fd, BPF_ARENA_IOC_ATTACH, &at);
		if (r == 0) {
			if (ioctl(fd, BPF_ARENA_IOC_GET_INFO, &info) || !info.created ||
			    info.user_vm_start != (uint64_t)(uintptr_t)base)
				fail("attached handle: info %s", strerror(errno));
			atomic_fetch_add(&count[C_REOPEN], 1);
		} else if (!faults) {
			fail("ATTACH: %ld", r);
		}
		close(fd);

		/* another arena: created, used, destroyed (maybe with its fd closed first) */
		fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		r = xioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c);
		fi(true);
		p = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		fi(false);
		if (r || p == MAP_FAILED) {
			/* the security tests lower the global cap now and then */
			if (!faults && (r || (errno != ENFILE && errno != EMFILE)))
				fail("churn arena: configure %ld, mmap %s", r,
				     p == MAP_FAILED ? strerror(errno) : "ok");
			if (p != MAP_FAILED)
				munmap(p, 16 * PG);
			close(fd);
			continue;
		}
		if (rand_r(&seed) & 1) {
			close(fd);
			fd = -1;
		}
		fill(p, 0x5a5a);
		if (fd >= 0 && dev_alloc(fd, 0, 2, &got) == 0) {
			if (check((char *)(uintptr_t)got, 0) >= 0 ||
			    check((char *)(uintptr_t)got + PG, 0) >= 0)
				fail("churn arena: allocated pages not zero");
		}
		if (check(p, 0x5a5a) >= 0)
			fail("churn arena: lost its first page");
		munmap(p, 16 * PG);
		if (fd >= 0)
			close(fd);
		atomic_fetch_add(&count[C_CHURN], 1);
	}
	return NULL;
}

/* ---- the shared thread: ATTACHed, frozen and read-only ----------------- */

#define SHARED_PAGES	16
/* Far from the main arena and from anything else this process maps. */
#define SHARED_ADDR	(1ULL << 45)

static int shared_map_op(int cmd, int fd, uint32_t extra_flags)
{
	union bpf_attr a;
	long r;

	memset(&a, 0, sizeof(a));
	if (cmd == BPF_MAP_CREATE) {
		a.map_type = BPF_ARENA_MAP_TYPE;
		a.max_entries = SHARED_PAGES;
		a.map_flags = BPF_ARENA_F_MMAPABLE | extra_flags;
		a.map_extra = SHARED_ADDR;
	} else {
		a.map_fd = (uint32_t)fd;
	}
	r = bpf_sys(cmd, &a);
	return r < 0 ? -errno : (int)r;
}

/*
 * In a fork child (the main arena's mapping is not inherited, and a signal
 * here is expected): a read-only handle on the frozen arena maps it, reads
 * page 0 (tag) and gets SIGSEGV on every other page.  Exit 0 if so.
 */
static sigjmp_buf ro_jmp;

static void ro_on_segv(int sig)
{
	(void)sig;
	siglongjmp(ro_jmp, 1);
}

static int shared_reader_child(int mfd, uint32_t tag)
{
	struct bpf_arena_attach at = { .size = sizeof(at), .map_fd = mfd };
	volatile int i, segv = 0;
	int h = open(BPF_ARENA_DEV_PATH, O_RDONLY | O_CLOEXEC);
	char *p;

	if (h < 0 || ioctl(h, BPF_ARENA_IOC_ATTACH, &at))
		return 10;
	p = mmap((void *)(uintptr_t)SHARED_ADDR, SHARED_PAGES * PG, PROT_READ,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, h, 0);
	if (p == MAP_FAILED)
		return 11;
	if (check(p, tag) >= 0)
		return 12;
	signal(SIGSEGV, ro_on_segv);
	for (i = 1; i < SHARED_PAGES; i++) {
		if (!sigsetjmp(ro_jmp, 1))
			(void)*(volatile char *)(p + (unsigned long)i * PG);
		else
			segv++;
	}
	return segv == SHARED_PAGES - 1 ? 0 : 13;
}

static void *shared_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "shared");
	while (!atomic_load(&stop)) {
		struct bpf_arena_attach at = { .size = sizeof(at) };
		int mfd, h, st;
		__u64 got;
		pid_t pid;
		long r;

		fi(true);
		mfd = shared_map_op(BPF_MAP_CREATE, -1, 0);
		fi(false);
		if (mfd < 0) {
			if (!faults)
				fail("shared: create: %d", mfd);
			continue;
		}
		h = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		at.map_fd = mfd;
		if (h < 0 || xioctl(h, BPF_ARENA_IOC_ATTACH, &at)) {
			fail("shared: attach: %s", strerror(errno));
			goto next;
		}
		/* Page 0 through the handle; no mapping, so the arena may be frozen. */
		fi(true);
		r = dev_alloc(h, SHARED_ADDR, 1, &got);
		fi(false);
		if (r) {
			if (!faults)
				fail("shared: alloc: %ld", r);
			goto next;
		}
		r = shared_map_op(BPF_MAP_FREEZE, mfd, 0);
		if (r) {
			fail("shared: freeze: %ld", r);
			goto next;
		}
		if (dev_alloc(h, SHARED_ADDR + PG, 1, &got) != -EPERM ||
		    dev_range(h, BPF_ARENA_IOC_FREE_PAGES, SHARED_ADDR, 1) != -EPERM)
			fail("shared: a frozen arena accepted a page ioctl");
		pid = fork();
		if (pid == 0)
			_exit(shared_reader_child(mfd, 0));
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			fail("shared: read-only reader: status %#x", pid < 0 ? -1 : st);
		if (dev_pages_allocated(h) != 1)
			fail("shared: a read-only reader changed the page count to %ld",
			     dev_pages_allocated(h));
		atomic_fetch_add(&count[C_SHARED], 1);
next:
		if (h >= 0)
			close(h);
		close(mfd);
	}
	return NULL;
}

/*
 * What an injected allocation failure may make of a load: ENOMEM; 6.1's
 * ENOTSUPP (524) when the JIT's allocation failed (JIT always on, no
 * interpreter to fall back to); EFAULT when a page of the caller's buffers
 * (the license string in .rodata, which drop_caches evicts) had to be read
 * in again and that allocation failed - the stock copy_from_user() answer.
 * Never EINVAL: that was the module passing a load it failed to copy on to
 * the stock path, which then verified the arena program unlowered
 * (arena_fail_nth_test).
 */
static bool injected_load_errno(int r)
{
	return r >= 0 || r == -ENOMEM || r == -524 || r == -EFAULT;
}

/*
 * Program load/unload: each round loads fresh programs for pages [9, 16).
 * With faults on, a load makes hundreds of allocations and 10 % of them
 * fail, so nearly every injected load is refused: every other round loads
 * without injection (and must succeed), so that load, run and unload still
 * churn while the other threads' allocations fail; the runs are injected.
 */
static void *prog_main(void *arg)
{
	static char log_a[65536], log_f[65536];	/* one prog thread */
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	unsigned long round = 0;

	prctl(PR_SET_NAME, "progs");

	while (!atomic_load(&stop)) {
		unsigned int pg = PROG_FIRST + (unsigned int)rand_r(&seed) % PROG_NR;
		uint64_t addr = (uint64_t)(uintptr_t)page_at(pg);
		bool inject = faults && (round++ & 1);
		int pa, pf;
		long r;

		fi_hold = faults && !inject;
		pa = load_kfunc_prog(map_fd, true, true, log_a, sizeof(log_a));
		pf = load_kfunc_prog(map_fd, false, true, log_f, sizeof(log_f));
		fi_hold = false;
		if (pa < 0 || pf < 0) {
			/* The logs' last lines name the cause. */
			size_t la = strlen(log_a), lf = strlen(log_f);

			if (!inject || !injected_load_errno(pa) || !injected_load_errno(pf))
				fail("prog load%s: %d %d\nalloc log: %s\nfree log: %s",
				     inject ? " under injection" : "", pa, pf,
				     log_a + (la > 600 ? la - 600 : 0), log_f + (lf > 600 ? lf - 600 : 0));
			atomic_fetch_add(&count[C_PROG_REFUSED], 1);
			goto next;
		}
		r = run_prog(pa, addr, 1);
		if (r == 1) {
			expect_page(pg, 0, "bpf alloc (prog thread)");
			fill(page_at(pg), 0x77000000u | pg);
			expect_page(pg, 0x77000000u | pg, "write (prog thread)");
		} else if (!faults) {
			fail("prog thread: alloc of free page %u: %ld", pg, r);
		}
		/* free until it sticks (injected failures may refuse a run) */
		while (run_prog(pf, addr, 1) != 1)
			if (!faults) {
				fail("prog thread: free failed");
				break;
			}
		atomic_fetch_add(&count[C_PROG], 1);
next:
		if (pa >= 0)
			close(pa);
		if (pf >= 0)
			close(pf);
	}
	return NULL;
}

static void *unload_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int r = kmod_unload();

		if (r == 0) {
			fail("the module unloaded while an arena was mapped");
			kmod_load();
		} else if (r != -EAGAIN && r != -EBUSY && r != -EWOULDBLOCK) {
			fail("delete_module: %d", r);
		} else {
			atomic_fetch_add(&count[C_UNLOAD], 1);
		}
		usleep(200000);
	}
	return NULL;
}

/* ---- main --------------------------------------------------------------- */

/* A signal in the load is a finding: say where, in which thread. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	char buf[160], name[32] = "?";
	int len;

	(void)uc;
	prctl(PR_GET_NAME, name);
	len = snprintf(buf, sizeof(buf), "# FAIL: signal %d (code %d) at %p in thread %s; arena %p-%p\n",
		       sig, si->si_code, si->si_addr, name, (void *)base,
		       (void *)(base + ARENA_PAGES * PG));
	if (write(1, buf, (size_t)len) < 0)
		_exit(3);
	printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
	_exit(3);
}

static void stop_all(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

int main(int argc, char **argv)
{
	unsigned int seconds = argc > 1 ? (unsigned int)atoi(argv[1]) : 120;
	unsigned int seed = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : (unsigned int)time(NULL);
	const char *f = getenv("BPF_ARENA_STRESS_FAULTS");
	struct bpf_arena_map_fd mf = { .size = sizeof(mf) };
	pthread_t chaos, forker, reopen, progs, unload, shared;
	long model = 0, got;
	unsigned int i, k;
	int btf;

	setvbuf(stdout, NULL, _IOLBF, 0);
	faults = f && !strcmp(f, "1");
	printf("# stress: %u s, seed %u, fault injection %s\n", seconds, seed, faults ? "on" : "off");
	if (access(BPF_ARENA_DEV_PATH, F_OK)) {
		printf("# SKIP: no %s (module not loaded)\n", BPF_ARENA_DEV_PATH);
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return 4;
	}
	alloc_id = find_kernel_func("bpf_arena", "bpf_arena_alloc_pages", &btf_fd);
	free_id = find_kernel_func("bpf_arena", "bpf_arena_free_pages", &btf);
	if (btf >= 0)
		close(btf);
	if (!alloc_id || !free_id) {
		printf("# FAIL: no bpf_arena_alloc_pages/free_pages in the module's BTF\n");
		printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	dev_fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	base = dev_fd < 0 ? MAP_FAILED : mmap(NULL, ARENA_PAGES * PG, PROT_READ | PROT_WRITE,
					      MAP_SHARED, dev_fd, 0);
	if (base == MAP_FAILED || ioctl(dev_fd, BPF_ARENA_IOC_MAP_FD, &mf)) {
		printf("# FAIL: arena setup: %s\n", strerror(errno));
		printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	map_fd = mf.fd;
	for (i = 0; i < SENT_NR; i++)
		fill(page_at(i), sentinel_tag(i));
	fill(page_at(FORK_PAGE), FORK_TAG0);
	try_nonsleepable();
	{
		struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
	}
	signal(SIGINT, stop_all);
	signal(SIGTERM, stop_all);

	for (i = 0; i < OWNERS; i++) {
		owners[i].id = i;
		owners[i].first = OWN_FIRST + i * OWN_PAGES;
		owners[i].seed = seed * 31 + i;
		pthread_create(&owners[i].th, NULL, owner_main, &owners[i]);
	}
	if (nonsleepable) {
		nso.seed = seed * 31 + 97;
		pthread_create(&nso.th, NULL, ns_main, NULL);
	}
	pthread_create(&chaos, NULL, chaos_main, (void *)(uintptr_t)(seed + 101));
	pthread_create(&forker, NULL, fork_main, (void *)(uintptr_t)(seed + 102));
	pthread_create(&reopen, NULL, reopen_main, (void *)(uintptr_t)(seed + 103));
	pthread_create(&progs, NULL, prog_main, (void *)(uintptr_t)(seed + 104));
	pthread_create(&unload, NULL, unload_main, NULL);
	pthread_create(&shared, NULL, shared_main, NULL);

	for (i = 0; i < seconds && !atomic_load(&stop); i++)
		sleep(1);
	atomic_store(&stop, 1);
	for (i = 0; i < OWNERS; i++)
		pthread_join(owners[i].th, NULL);
	if (nonsleepable)
		pthread_join(nso.th, NULL);
	pthread_join(chaos, NULL);
	pthread_join(forker, NULL);
	pthread_join(reopen, NULL);
	pthread_join(progs, NULL);
	pthread_join(unload, NULL);
	pthread_join(shared, NULL);

	/* Nothing lost: the module counts exactly the model's pages. */
	check_sentinels("the end");
	model = SENT_NR + 1;	/* and the fork page */
	for (i = 0; i < OWNERS; i++)
		for (k = 0; k < OWN_PAGES; k++)
			model += owners[i].alloc[k];
	for (k = 0; k < NS_PAGES; k++)
		model += nso.st[k] == NS_ALLOC;
	/* PENDING pages count until the work item has unmapped them: wait up to 5 s. */
	for (i = 0; i < 500 && (got = dev_pages_allocated(dev_fd)) != model; i++)
		usleep(10000);
	if (got != model)
		fail("the arena has %ld pages, the model %ld", got, model);

	munmap(base, ARENA_PAGES * PG);
	close(map_fd);
	close(dev_fd);
	if (btf_fd >= 0)
		close(btf_fd);

	printf("# stress:");
	for (i = 0; i < C_NR; i++)
		printf(" %s=%ld", cname[i], atomic_load(&count[i]));
	printf("\n# stress: %ld failures, arena pages at the end %ld (model %ld)\n",
	       atomic_load(&failures), got, model);
	if (atomic_load(&failures)) {
		printf("not ok 1 arena_stress\n# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	printf("ok 1 arena_stress\n# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n");
	return 0;
}

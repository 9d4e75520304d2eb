// SPDX-License-Identifier: GPL-2.0
/*
 * arena_syscall_fuzz SECONDS SEED: a seeded, bounded, randomized sequence of
 * syscalls on the arena surfaces (`make fuzz-syscalls`, in the guest):
 * bpf() arena map creation with random attributes, mutated arena programs
 * (templates that allocate, free, load and store through arena pointers,
 * with random field mutations), /dev/bpf_arena ioctls with random arguments
 * (sizes, addresses, counts, bad pointers; ATTACH of bpf() arenas through
 * read-write, read-only and write-only map fds; frozen arenas), device opens
 * and mmaps with and without CAP_BPF/CAP_SYS_ADMIN (who pays), mmap/munmap/
 * mremap/mprotect/madvise/fork on arena mappings, touches of arena pages,
 * closes.
 *
 * The oracle is the kernel: tests/vm/run fails the run on any BUG, WARNING,
 * KASAN, lockdep or kmemleak report in the guest's log.  Here, a signal
 * outside a page touch, or a call that does not return within 20 s, is a
 * finding too.  The same SEED replays the same sequence (one process, no
 * threads; fork children only touch and exit), and the last ops are printed
 * on a finding.  Fuzzing runs in worker processes of EPOCH_OPS ops each so
 * every object is torn down (and leak-checked) often.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/bpf_arena.h>

#include "bpf_insn.h"
#include "test_util.h"

#define PG		4096UL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NOBJ		8
#define EPOCH_OPS	400
#define HIST		16

static uint64_t rng;
static uint64_t rnd(void)	/* xorshift64*: the same SEED, the same run */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
static bool chance(unsigned int pct) { return below(100) < pct; }

struct mapping {
	char *addr;
	size_t len;
};

static int devs[NOBJ], maps[NOBJ], progs[NOBJ];
static struct mapping mm_[NOBJ];
static uint32_t alloc_id, free_id;
static int btf_fd = -1;
static char hist[HIST][96];
static unsigned int nhist;
static char vlog[1 << 16];
static bool verbose;	/* BPF_ARENA_FUZZ_VERBOSE=1: fork children say what they do */

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(hist[nhist++ % HIST], sizeof(hist[0]), fmt, ap);
	va_end(ap);
}

static void dump_hist(void)
{
	unsigned int i = nhist > HIST ? nhist - HIST : 0;

	for (; i < nhist; i++)
		printf("#   op %u: %s\n", i, hist[i % HIST]);
}

/* ---- touching pages: faults are expected there ---------------------------- */

static sigjmp_buf touch_env;
static volatile sig_atomic_t touching;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (touching && (sig == SIGSEGV || sig == SIGBUS))
		siglongjmp(touch_env, 1);
	printf("# FINDING: signal %d (code %d, addr %p) outside a page touch\n", sig,
	       si->si_code, si->si_addr);
	dump_hist();
	fflush(stdout);
	_exit(2);
}

static void on_alarm(int sig)
{
	(void)sig;
	printf("# FINDING: a call did not return in 20 s\n");
	dump_hist();
	fflush(stdout);
	_exit(3);
}

static void touch(char *p, bool write)
{
	if (!sigsetjmp(touch_env, 1)) {
		touching = 1;
		if (write)
			*(volatile char *)p = 0x42;
		else
			(void)*(volatile char *)p;
	}
	touching = 0;
}

/* ---- random values that matter ------------------------------------------- */

static uint64_t rand_count(void)
{
	static const uint64_t v[] = { 0, 1, 2, 3, 16, 255, 256, 1024, 65535, 65536,
				      1 << 20, (1ULL << 20) + 1, 0x7fffffff, 0x80000000,
				      0xffffffff, 0x100000000ULL, ~0ULL };
	return chance(50) ? v[below(ARRAY_SIZE(v))] : below(64);
}

/* an address: inside a known mapping (often), near it, or anything */
static uint64_t rand_addr(void)
{
	struct mapping *m = &mm_[below(NOBJ)];

	if (m->addr && chance(70)) {
		uint64_t a = (uint64_t)(uintptr_t)m->addr + below(m->len / PG + 2) * PG;

		return chance(90) ? a : a + below(PG);
	}
	switch (below(5)) {
	case 0: return 0;
	case 1: return rnd();
	case 2: return rnd() & 0x7ffffffff000ULL;
	case 3: return (uint64_t)(uintptr_t)vlog;	/* user memory that is not an arena */
	default: return 0xffff800000000000ULL + below(1 << 20) * PG;
	}
}

static int *rand_slot(int *arr)
{
	return &arr[below(NOBJ)];
}

static int rand_fd(void)
{
	int *a = chance(50) ? devs : maps;
	int fd = a[below(NOBJ)];

	return fd > 0 ? fd : (chance(90) ? devs[0] : -1);
}

/* ---- ops ----------------------------------------------------------------- */

static void op_map_create(void)
{
	static const uint32_t flag_bits[] = { BPF_ARENA_F_MMAPABLE, BPF_ARENA_F_SEGV_ON_FAULT,
					      BPF_ARENA_F_NO_USER_CONV, BPF_F_RDONLY_PROG,
					      BPF_F_WRONLY_PROG, BPF_F_NUMA_NODE, BPF_F_RDONLY,
					      BPF_F_WRONLY, BPF_F_NO_PREALLOC, 1U << 30 };
	union bpf_attr a;
	int *slot = rand_slot(maps), fd;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.map_type = chance(95) ? BPF_ARENA_MAP_TYPE : (uint32_t)below(40);
	a.max_entries = chance(80) ? 1 + (uint32_t)below(2048) : (uint32_t)rand_count();
	a.map_flags = chance(80) ? BPF_ARENA_F_MMAPABLE : 0;
	for (i = 0; i < ARRAY_SIZE(flag_bits); i++)
		if (chance(10))
			a.map_flags |= flag_bits[i];
	if (chance(20))
		a.map_extra = chance(50) ? (rnd() & 0x7fff00000000ULL) : rnd();
	if (chance(10))
		a.key_size = (uint32_t)below(9);
	if (chance(10))
		a.value_size = (uint32_t)below(9);
	if (chance(10))
		a.numa_node = (uint32_t)below(4);
	if (chance(10))
		a.btf_fd = (uint32_t)below(16);
	fd = (int)bpf_sys(BPF_MAP_CREATE, &a);
	note("map_create flags %#x max %u extra %#llx -> %d/%d", a.map_flags, a.max_entries,
	     (unsigned long long)a.map_extra, fd, fd < 0 ? errno : 0);
	if (fd < 0)
		return;
	if (*slot > 0)
		close(*slot);
	*slot = fd;
}

/*
 * Opens and mmaps as often as not without CAP_BPF and CAP_SYS_ADMIN in the
 * effective set (kept permitted): the module then takes the caller for a
 * device-group user, whose handle or mapping pays RLIMIT_MEMLOCK for what it
 * causes; with them, the caller is exempt.
 */
static void unprivileged(bool on)
{
	struct { uint32_t version; int pid; } h = { 0x20080522, 0 };
	struct { uint32_t eff, perm, inh; } d[2];

	if (syscall(SYS_capget, &h, d))
		return;
	if (on) {
		d[0].eff &= ~(1U << 21);		/* CAP_SYS_ADMIN */
		d[1].eff &= ~(1U << (39 - 32));		/* CAP_BPF */
	} else {
		d[0].eff = d[0].perm;
		d[1].eff = d[1].perm;
	}
	syscall(SYS_capset, &h, d);
}

static void op_dev_open(void)
{
	static const int modes[] = { O_RDWR, O_RDONLY, O_WRONLY };
	int *slot = rand_slot(devs);
	bool unpriv = chance(50);
	int fd;

	unprivileged(unpriv);
	fd = open(BPF_ARENA_DEV_PATH, modes[below(3)] | O_CLOEXEC);
	unprivileged(false);
	note("open dev%s -> %d", unpriv ? " unprivileged" : "", fd);
	if (fd < 0)
		return;
	if (*slot > 0)
		close(*slot);
	*slot = fd;
}

static void op_ioctl(void)
{
	static const unsigned long cmds[] = {
		BPF_ARENA_IOC_CONFIGURE, BPF_ARENA_IOC_GET_INFO, BPF_ARENA_IOC_MAP_FD,
		BPF_ARENA_IOC_ATTACH, BPF_ARENA_IOC_ALLOC_PAGES, BPF_ARENA_IOC_FREE_PAGES,
		BPF_ARENA_IOC_PREFAULT, BPF_ARENA_IOC_INSPECT,
	};
	union {
		struct bpf_arena_config c;
		struct bpf_arena_info i;
		struct bpf_arena_map_fd m;
		struct bpf_arena_attach at;
		struct bpf_arena_alloc a;
		struct bpf_arena_range r;
		struct bpf_arena_inspect s;
		unsigned char raw[256];
	} u;
	int fd = devs[below(NOBJ)];
	unsigned long cmd = chance(95) ? cmds[below(ARRAY_SIZE(cmds))] :
			    _IOC(below(4), BPF_ARENA_IOC_MAGIC, below(12), below(300));
	void *arg = &u;
	long r;

	if (fd <= 0)
		return;
	memset(&u, 0, sizeof(u));
	if (chance(5))
		for (unsigned int k = 0; k < sizeof(u.raw); k++)
			u.raw[k] = (unsigned char)rnd();
	u.c.size = chance(85) ? (uint32_t)_IOC_SIZE(cmd) :
		   (uint32_t)(chance(50) ? below(300) : rand_count());
	switch (_IOC_NR(cmd)) {
	case 1:
		u.c.map_flags = chance(80) ? BPF_ARENA_F_MMAPABLE | (chance(20) ? BPF_ARENA_F_SEGV_ON_FAULT : 0)
					   : (uint32_t)rnd();
		u.c.max_entries = chance(80) ? (uint32_t)below(2048) : (uint32_t)rand_count();
		u.c.numa_node = chance(90) ? -1 : (int32_t)below(8);
		u.c.map_extra = chance(80) ? 0 : rand_addr() & ~(PG - 1);
		break;
	case 4:
		u.at.map_fd = chance(80) ? maps[below(NOBJ)] : (int32_t)below(64);
		break;
	case 5:
		u.a.page_cnt = (uint32_t)rand_count();
		u.a.addr = chance(30) ? 0 : rand_addr();
		u.a.node_id = chance(90) ? -1 : (int32_t)below(8);
		u.a.flags = chance(95) ? 0 : (uint32_t)rnd();
		break;
	case 6:
	case 7:
		u.r.page_cnt = (uint32_t)rand_count();
		u.r.addr = rand_addr();
		break;
	}
	if (chance(3))
		arg = chance(50) ? NULL : (void *)(uintptr_t)rand_addr();
	r = ioctl(fd, cmd, arg);
	note("ioctl %d nr %u size %u -> %ld/%d", fd, (unsigned int)_IOC_NR(cmd), u.c.size, r, r < 0 ? errno : 0);
	if (r == 0 && _IOC_NR(cmd) == 3 && arg == &u && u.m.fd > 0) {
		int *slot = rand_slot(maps);

		if (*slot > 0)
			close(*slot);
		*slot = u.m.fd;
	}
}

static void op_mmap(void)
{
	static const size_t lens[] = { PG, 2 * PG, 16 * PG, 256 * PG, 1UL << 20, 1UL << 32,
				       (1UL << 32) + PG, 3 * PG / 2 };
	struct mapping *m = &mm_[below(NOBJ)];
	int fd = rand_fd();
	size_t len = lens[below(ARRAY_SIZE(lens))];
	int prot = chance(70) ? PROT_READ | PROT_WRITE : (int)below(8);
	int flags = chance(85) ? MAP_SHARED : MAP_PRIVATE;
	off_t off = chance(95) ? 0 : (off_t)(below(4) * PG);
	void *hint = NULL, *p;

	if (chance(30) && m->addr) {
		hint = m->addr;
		len = m->len;
		flags |= chance(50) ? MAP_FIXED_NOREPLACE : 0;
	}
	unprivileged(chance(50));
	p = mmap(hint, len, prot, flags, fd, off);
	unprivileged(false);
	note("mmap fd %d len %#zx prot %d flags %#x -> %p/%d", fd, len, prot, flags, p,
	     p == MAP_FAILED ? errno : 0);
	if (p == MAP_FAILED)
		return;
	for (m = mm_; m < mm_ + NOBJ && m->addr; m++)
		;
	if (m == mm_ + NOBJ) {
		m = &mm_[below(NOBJ)];
		munmap(m->addr, m->len);
	}
	m->addr = p;
	m->len = len;
}

static void op_vm(void)
{
	struct mapping *m = &mm_[below(NOBJ)];
	size_t off, len;
	void *r;
	int adv[] = { MADV_DONTNEED, MADV_REMOVE, MADV_FREE, MADV_COLD, MADV_PAGEOUT,
		      MADV_WILLNEED, MADV_DOFORK, MADV_DONTFORK, MADV_WIPEONFORK,
		      MADV_HUGEPAGE, MADV_MERGEABLE, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
		      MADV_SEQUENTIAL, MADV_DONTDUMP };

	if (!m->addr)
		return;
	/* Never past the mapping: the neighbours are this process's own (libc...). */
	off = below(m->len / PG + 1) * PG;
	if (off > m->len)
		off = m->len;
	len = chance(50) ? m->len - off : below(8) * PG;
	if (len > m->len - off)
		len = m->len - off;
	switch (below(6)) {
	case 0: {
		int a = adv[below(ARRAY_SIZE(adv))];

		note("madvise %p+%#zx len %#zx %d -> %d", m->addr, off, len, a,
		     madvise(m->addr + off, len, a) ? errno : 0);
		break;
	}
	case 1: {
		int prot = (int)below(8);

		note("mprotect %p+%#zx len %#zx %d -> %d", m->addr, off, len, prot,
		     mprotect(m->addr + off, len, prot) ? errno : 0);
		break;
	}
	case 2:
		len = chance(50) ? m->len : m->len + PG * below(4);
		r = mremap(m->addr, m->len, len, chance(50) ? MREMAP_MAYMOVE : 0);
		note("mremap %p len %#zx -> %#zx %p", m->addr, m->len, len, r);
		if (r != MAP_FAILED) {	/* not an arena (those refuse) */
			m->addr = r;
			m->len = len;
		}
		break;
	case 3:
		if (!munmap(m->addr + off, len) && len) {
			/* not an arena: the slot no longer names one mapping */
			note("munmap part %p+%#zx len %#zx -> 0", m->addr, off, len);
			munmap(m->addr, m->len);
			m->addr = NULL;
			break;
		}
		note("munmap part %p+%#zx len %#zx -> %d", m->addr, off, len, errno);
		break;
	case 4:
		note("munmap %p len %#zx", m->addr, m->len);
		munmap(m->addr, m->len);
		m->addr = NULL;
		break;
	default:
		note("msync %p -> %d", m->addr, msync(m->addr, m->len, MS_SYNC) ? errno : 0);
		break;
	}
}

static void op_touch(void)
{
	struct mapping *m = &mm_[below(NOBJ)];
	unsigned int i, n = 1 + (unsigned int)below(16);

	if (!m->addr)
		return;
	note("touch %p x%u", m->addr, n);
	for (i = 0; i < n; i++)
		touch(m->addr + below(m->len / PG) * PG + below(PG), chance(60));
}

static void op_fork(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		unsigned int i;

		/* children: touch, re-map, unmap; no other state */
		for (i = 0; i < 8; i++) {
			struct mapping *m = &mm_[below(NOBJ)];

			if (!m->addr)
				continue;
			if (chance(30)) {
				void *p = mmap(m->addr, m->len, PROT_READ | PROT_WRITE,
					       MAP_SHARED | MAP_FIXED_NOREPLACE, devs[below(NOBJ)], 0);

				if (verbose)
					printf("#   child: mmap %p -> %p (%d)\n", m->addr, p, errno);
			}
			{
				char *a = m->addr + below(m->len / PG) * PG;
				bool w = chance(50);

				if (verbose)
					printf("#   child: touch %p w%d (mincore %d)\n", a, w,
					       mincore((void *)((uintptr_t)a & ~(PG - 1)), PG, (unsigned char[1]){0}));
				touch(a, w);
			}
			if (chance(20))
				munmap(m->addr, m->len);
		}
		_exit(0);
	}
	if (pid < 0)
		return;
	waitpid(pid, &st, 0);
	note("fork -> status %#x", st);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("# FINDING: fork child ended with status %#x\n", st);
		dump_hist();
		fflush(stdout);
		_exit(4);
	}
}

/* Arena program templates, then random mutations of their fields. */
static void op_prog(void)
{
	int mfd = maps[below(NOBJ)] > 0 ? maps[below(NOBJ)] : maps[0];
	uint64_t ctx[4] = { rand_addr(), rand_count(), rnd(), rnd() };
	struct bpf_insn t[5][16] = {
		{	/* alloc(map, ctx[0], ctx[1]) */
			I_MOV64_REG(6, 1), I_LD_MAP_FD(1, mfd), I_LDX(BPF_DW, 2, 6, 0),
			I_LDX(BPF_DW, 3, 6, 8), I_MOV64_IMM(4, -1), I_MOV64_IMM(5, 0),
			I_CALL_KFUNC(alloc_id, 1), I_MOV64_IMM(0, 0), I_EXIT(),
		},
		{	/* free(map, ctx[0], ctx[1]) */
			I_MOV64_REG(6, 1), I_LD_MAP_FD(1, mfd), I_LDX(BPF_DW, 2, 6, 0),
			I_LDX(BPF_DW, 3, 6, 8), I_CALL_KFUNC(free_id, 1), I_MOV64_IMM(0, 0),
			I_EXIT(),
		},
		{	/* store ctx[2] through cast_kern(ctx[0]) */
			I_MOV64_REG(6, 1), I_LD_MAP_FD(1, mfd), I_LDX(BPF_DW, 2, 6, 0),
			I_CAST_KERN(2, 2), I_LDX(BPF_DW, 3, 6, 16), I_STX(BPF_DW, 2, 3, 0),
			I_MOV64_IMM(0, 0), I_EXIT(),
		},
		{	/* load through cast_kern(ctx[0]), cast_user it back */
			I_MOV64_REG(6, 1), I_LD_MAP_FD(1, mfd), I_LDX(BPF_DW, 2, 6, 0),
			I_CAST_KERN(2, 2), I_LDX(BPF_DW, 3, 2, 8), I_CAST_USER(4, 2),
			I_STX(BPF_DW, 6, 4, 24), I_MOV64_REG(0, 3), I_EXIT(),
		},
		{	/* atomic add through the arena, then alloc at the result */
			I_MOV64_REG(6, 1), I_LD_MAP_FD(1, mfd), I_LDX(BPF_DW, 2, 6, 0),
			I_CAST_KERN(2, 2), I_MOV64_IMM(3, 1), I_ATOMIC(BPF_DW, BPF_ADD, 2, 3, 0),
			I_LD_MAP_FD(1, mfd), I_MOV64_REG(2, 3), I_MOV64_IMM(3, 1),
			I_MOV64_IMM(4, -1), I_MOV64_IMM(5, 0), I_CALL_KFUNC(alloc_id, 1),
			I_MOV64_IMM(0, 0), I_EXIT(),
		},
	};
	static const unsigned int lens[5] = { 10, 8, 9, 10, 16 };
	unsigned int which = (unsigned int)below(5), n = lens[which], i, k;
	struct bpf_insn *ins = t[which];
	int fds[2] = { mfd, btf_fd };
	union bpf_attr a;
	int fd, *slot;
	long r = 0;

	for (k = (unsigned int)below(4); k; k--) {
		i = (unsigned int)below(n);
		switch (below(6)) {
		case 0: ins[i].dst_reg = (uint8_t)below(11); break;
		case 1: ins[i].src_reg = (uint8_t)below(11); break;
		case 2: ins[i].off = (int16_t)(chance(50) ? below(64) - 32 : rnd()); break;
		case 3: ins[i].imm = (int32_t)(chance(50) ? below(64) - 32 : rnd()); break;
		case 4: ins[i].code = (uint8_t)rnd(); break;
		default: if (n < 16) n++; break;	/* a trailing insn (zero) */
		}
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = chance(90) ? BPF_PROG_TYPE_SYSCALL : (uint32_t)below(32);
	a.prog_flags = chance(90) ? BPF_F_SLEEPABLE : 0;
	a.insns = ptr_u64(ins);
	a.insn_cnt = n;
	a.license = ptr_u64("GPL");
	a.fd_array = ptr_u64(fds);
	a.log_buf = ptr_u64(vlog);
	a.log_size = chance(50) ? sizeof(vlog) : (uint32_t)below(256);
	a.log_level = chance(50);
	fd = (int)bpf_sys(BPF_PROG_LOAD, &a);
	if (fd >= 0)
		r = run_syscall_prog(fd, ctx, sizeof(ctx));
	note("prog t%u n%u map %d -> %d/%d run %ld", which, n, mfd, fd, fd < 0 ? errno : 0, r);
	if (fd < 0)
		return;
	slot = rand_slot(progs);
	if (*slot > 0)
		close(*slot);
	*slot = fd;
}

static void op_bpf_misc(void)
{
	union bpf_attr a;
	uint64_t key = 0, val[64];
	int fd = maps[below(NOBJ)];
	long r;

	if (fd <= 0)
		return;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = ptr_u64(&key);
	a.value = ptr_u64(val);
	switch (below(6)) {
	case 0: r = bpf_sys(BPF_MAP_FREEZE, &a); break;
	case 5: {
		/* Another fd of the map, read-only or write-only, for ATTACH and mmap. */
		struct bpf_map_info mi;
		int *slot = rand_slot(maps);

		memset(&mi, 0, sizeof(mi));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)fd;
		a.info.info_len = sizeof(mi);
		a.info.info = ptr_u64(&mi);
		r = bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &a);
		if (r)
			break;
		memset(&a, 0, sizeof(a));
		a.map_id = mi.id;
		a.open_flags = chance(70) ? BPF_F_RDONLY : BPF_F_WRONLY;
		r = bpf_sys(BPF_MAP_GET_FD_BY_ID, &a);
		if (r > 0) {
			if (*slot > 0)
				close(*slot);
			*slot = (int)r;
		}
		break;
	}
	case 1: r = bpf_sys(BPF_MAP_LOOKUP_ELEM, &a); break;
	case 2: r = bpf_sys(BPF_MAP_UPDATE_ELEM, &a); break;
	case 3: r = bpf_sys(BPF_MAP_GET_NEXT_KEY, &a); break;
	default: {
		struct bpf_map_info mi;

		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)fd;
		a.info.info_len = (uint32_t)(chance(80) ? sizeof(mi) : below(sizeof(mi) + 16));
		a.info.info = ptr_u64(&mi);
		r = bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &a);
	}
	}
	note("bpf misc map %d -> %ld/%d", fd, r, r < 0 ? errno : 0);
}

static void op_close(void)
{
	int *arr = chance(40) ? devs : chance(60) ? maps : progs;
	int *slot = rand_slot(arr);

	if (*slot > 0) {
		note("close %d", *slot);
		close(*slot);
		*slot = 0;
	}
}

/* ---- a memory cgroup for the workers --------------------------------- */

#define CG_FUZZ		CG_ROOT "/arena_fuzz"
#define FUZZ_MEM_MAX	"268435456"

static bool cg_setup(void)
{
	if (!memcg_enable())
		return false;
	mkdir(CG_FUZZ, 0755);
	write_str(CG_FUZZ "/memory.swap.max", "0");	/* absent without swap: fine */
	return write_str(CG_FUZZ "/memory.max", FUZZ_MEM_MAX);
}

static long cg_oom_kills(void)
{
	FILE *f = fopen(CG_FUZZ "/memory.events", "r");
	char line[64];
	long n = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "oom_kill %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static void epoch(void)
{
	unsigned int i;

	for (i = 0; i < EPOCH_OPS; i++) {
		alarm(20);
		switch (below(20)) {
		case 0: case 1: op_map_create(); break;
		case 2: op_dev_open(); break;
		case 3: case 4: case 5: case 6: op_ioctl(); break;
		case 7: case 8: op_mmap(); break;
		case 9: case 10: op_vm(); break;
		case 11: case 12: case 13: op_touch(); break;
		case 14: op_fork(); break;
		case 15: case 16: op_prog(); break;
		case 17: op_bpf_misc(); break;
		default: op_close(); break;
		}
	}
	alarm(0);
}

int main(int argc, char **argv)
{
	unsigned int seconds = argc > 1 ? (unsigned int)atoi(argv[1]) : 60;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : (uint64_t)time(NULL);
	time_t end = time(NULL) + seconds;
	unsigned long epochs = 0, findings = 0, ooms = 0;
	long oom0;
	bool have_cg;
	struct rlimit rl = { 64 << 20, 64 << 20 };
	int b;

	setvbuf(stdout, NULL, _IOLBF, 0);
	verbose = getenv("BPF_ARENA_FUZZ_VERBOSE") != NULL;
	printf("# fuzz-syscalls: %u s, seed %llu\n", seconds, (unsigned long long)seed);
	if (access(BPF_ARENA_DEV_PATH, F_OK)) {
		printf("# SKIP: no %s\n# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n",
		       BPF_ARENA_DEV_PATH);
		return 4;
	}
	alloc_id = find_kernel_func("bpf_arena", "bpf_arena_alloc_pages", &btf_fd);
	free_id = find_kernel_func("bpf_arena", "bpf_arena_free_pages", &b);
	if (b >= 0)
		close(b);
	/* bound what one epoch can pin: device arenas charge RLIMIT_MEMLOCK */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	/*
	 * bpf() arenas are root's and charge only the memory cgroup: workers run
	 * in one of FUZZ_MEM_MAX, so filling it kills a worker (memcg OOM, not a
	 * finding), never this process or the guest.
	 */
	have_cg = cg_setup();
	printf("# fuzz-syscalls: workers %s\n", have_cg ? "in a " FUZZ_MEM_MAX "-byte memory cgroup" :
	       "NOT memory-bounded (no cgroup2 memory controller): a global OOM kill ends the run");

	if (getenv("BPF_ARENA_FUZZ_EPOCH"))	/* replay one epoch of a finding */
		epochs = strtoul(getenv("BPF_ARENA_FUZZ_EPOCH"), NULL, 0);
	while (time(NULL) < end) {
		pid_t pid;
		int st;

		rng = seed * 0x9e3779b97f4a7c15ULL + epochs + 1;
		oom0 = cg_oom_kills();
		pid = fork();
		if (pid == 0) {
			struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_NODEFER };

			sigaction(SIGSEGV, &sa, NULL);
			sigaction(SIGBUS, &sa, NULL);
			signal(SIGALRM, on_alarm);
			if (have_cg)
				cg_move(CG_FUZZ, getpid());
			/* CAP_IPC_LOCK would lift the memlock bound */
			{
				struct { uint32_t version; int pid; } h = { 0x20080522, 0 };
				struct { uint32_t eff, perm, inh; } d[2];

				if (!syscall(SYS_capget, &h, d)) {
					d[0].eff &= ~(1U << 14);
					d[0].perm &= ~(1U << 14);
					syscall(SYS_capset, &h, d);
				}
			}
			epoch();
			_exit(0);
		}
		if (pid < 0) {
			printf("# fork: %s\n", strerror(errno));
			break;
		}
		waitpid(pid, &st, 0);
		if (have_cg && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && cg_oom_kills() > oom0) {
			ooms++;	/* the worker filled its memory cgroup: bounded, not a finding */
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			findings++;
			printf("# FINDING in epoch %lu (replay: SEED=%llu, epoch %lu): status %#x\n",
			       epochs, (unsigned long long)seed, epochs, st);
		}
		epochs++;
	}
	printf("# fuzz-syscalls: %lu epochs of %u ops, %lu findings, %lu workers ended by their memory cgroup's OOM\n",
	       epochs, EPOCH_OPS, findings, ooms);
	printf("%s 1 fuzz_syscalls\n# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       findings ? "not ok" : "ok", !findings, !!findings);
	return findings ? 1 : 0;
}

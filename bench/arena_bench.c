// SPDX-License-Identifier: GPL-2.0
/*
 * arena_bench: the guest side of `make bench` (bench/run boots 6.1 + module
 * and 6.12, each running this once per round).  Prints one line per result:
 *
 *	BENCH <tab> workload <tab> value <tab> unit
 *
 * value is the median of -r repetitions inside this boot; every unit is a
 * cost (lower is better), so 6.1/6.12 > 1 means 6.1 + module is slower.
 * With -o DIR it also writes the JITed images of the code-size programs
 * there (the host disassembles them).  -s SCALE multiplies iteration counts
 * (default 1; bench/run passes BENCH_SCALE).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_insn.h"
#include "test_util.h"
#include "bpf_arena_lib.h"
#include "bpf_arena_libbpf.h"
#include "arena_prog_common.h"
#include "bench_common.h"

#define PG 4096UL
#define MAX_REPS 64

EMBED(bench_obj, "bench_arena.v3.bpf.o");

static int reps = 5;
static double scale = 1;
static const char *outdir;
static bool native;

static void die(const char *what, long err)
{
	printf("BENCH-ERROR\t%s\t%ld\t%s\n", what, err, strerror(err < 0 ? -err : err));
	fflush(stdout);
	exit(1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void out(const char *w, double v, const char *unit)
{
	printf("BENCH\t%s\t%.4f\t%s\n", w, v, unit);
	fflush(stdout);
}

static void outm(const char *w, double *v, int n, const char *unit)
{
	out(w, median(v, n), unit);
}

static long iters(long base)
{
	long n = (long)(base * scale);

	return n < 1 ? 1 : n;
}

/* ---- raw arenas and programs -------------------------------------------- */

static int raw_arena(unsigned int pages, __u64 map_extra, char **base)
{
	int fd = arena_create(pages, 0, map_extra);
	void *p;

	if (fd < 0)
		die("arena create", fd);
	p = mmap(map_extra ? (void *)map_extra : NULL, (size_t)pages * PG, PROT_READ | PROT_WRITE,
		 MAP_SHARED | (map_extra ? MAP_FIXED : 0), fd, 0);
	if (p == MAP_FAILED)
		die("arena mmap", -errno);
	*base = p;
	return fd;
}

static char vlog[1 << 20];

static int load_raw(enum bpf_prog_type t, const struct bpf_insn *insns, unsigned int cnt,
		    unsigned int flags)
{
	int fd = load_prog_flags(t, insns, cnt, flags, NULL, 0);

	if (fd < 0) {
		load_prog_flags(t, insns, cnt, flags, vlog, sizeof(vlog));
		printf("# load failed: %s\n%s\n", strerror(-fd), vlog);
		die("raw prog load", fd);
	}
	return fd;
}

/*
 * Programs with a bpf_loop() callback need BTF func_info: one static FUNC
 * for the main program and one for the callback (insn LOOP_CB).
 */
#define LOOP_CB 11
static int loop_btf_fd = -1;

static int load_loop_prog(const struct bpf_insn *insns, unsigned int cnt)
{
	struct bpf_func_info fi[2];
	union bpf_attr attr;
	int fd;

	if (loop_btf_fd < 0) {
		struct btf *btf = btf__new_empty();
		int l, vp, pm, pc, err;

		l = btf__add_int(btf, "long", 8, BTF_INT_SIGNED);
		vp = btf__add_ptr(btf, 0);
		pm = btf__add_func_proto(btf, l);
		btf__add_func_param(btf, "ctx", vp);
		pc = btf__add_func_proto(btf, l);
		btf__add_func_param(btf, "i", l);
		btf__add_func_param(btf, "data", vp);
		btf__add_func(btf, "bench_main", BTF_FUNC_STATIC, pm);
		btf__add_func(btf, "bench_cb", BTF_FUNC_STATIC, pc);
		err = btf__load_into_kernel(btf);
		if (err)
			die("btf load", err);
		loop_btf_fd = btf__fd(btf);	/* kept: btf is never freed */
	}
	fi[0] = (struct bpf_func_info){ .insn_off = 0, .type_id = 5 };
	fi[1] = (struct bpf_func_info){ .insn_off = LOOP_CB, .type_id = 6 };
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = cnt;
	attr.license = ptr_u64("GPL");
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.prog_btf_fd = loop_btf_fd;
	attr.func_info_rec_size = sizeof(fi[0]);
	attr.func_info = ptr_u64(fi);
	attr.func_info_cnt = 2;
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		fd = -errno;
		attr.log_buf = ptr_u64(vlog);
		attr.log_size = sizeof(vlog);
		attr.log_level = 1;
		vlog[0] = 0;
		bpf_sys(BPF_PROG_LOAD, &attr);
		printf("# loop load failed: %s\n%s\n", strerror(-fd), vlog);
		die("loop prog load", fd);
	}
	return fd;
}

struct jinfo {
	__u32 jited_len, xlated_cnt, nfuncs;
	__u32 func_lens[8];
	unsigned char img[65536];
};

static void jit_info(int fd, struct jinfo *j)
{
	static struct bpf_insn xl[8192];
	struct bpf_prog_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	info.jited_prog_len = sizeof(j->img);
	info.jited_prog_insns = ptr_u64(j->img);
	info.xlated_prog_len = sizeof(xl);
	info.xlated_prog_insns = ptr_u64(xl);
	info.nr_jited_func_lens = 8;
	info.jited_func_lens = ptr_u64(j->func_lens);
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr))
		die("prog info", -errno);
	j->jited_len = info.jited_prog_len;
	j->xlated_cnt = info.xlated_prog_len / 8;
	j->nfuncs = info.nr_jited_func_lens;
}

static void dump_img(const char *name, const struct jinfo *j, __u32 off, __u32 len)
{
	char path[512];
	FILE *f;

	if (!outdir)
		return;
	snprintf(path, sizeof(path), "%s/%s.bin", outdir, name);
	f = fopen(path, "w");
	if (!f)
		die("open dump", -errno);
	fwrite(j->img + off, 1, len, f);
	fclose(f);
}

/*
 * The raw load/store loop: bpf_loop(cnt) of a callback that does 2 arena
 * loads and 2 arena stores (u64, at (i * 16) & 0xfff0 in a 16-page arena at
 * 1 << 44, prefaulted); with arena=false the same callback without the
 * cast and the memory accesses (the loop's own cost).
 */
static unsigned int loop_prog(struct bpf_insn *p, int afd, bool arena)
{
	unsigned int n = 0;

	p[n++] = I_MOV64_REG(6, 1);
	if (arena) {
		struct bpf_insn m[] = { I_LD_MAP_FD(1, afd) };

		p[n++] = m[0], p[n++] = m[1];
	} else {
		struct bpf_insn m[] = { I_LD_IMM64(1, 0) };

		p[n++] = m[0], p[n++] = m[1];
	}
	p[n++] = I_LDX(BPF_DW, 1, 6, 0);			/* 3: r1 = cnt */
	{
		struct bpf_insn f[] = { I_LD_IMM64(2, 0) };	/* 4: r2 = callback */

		f[0].src_reg = BPF_PSEUDO_FUNC;
		f[0].imm = LOOP_CB - 5;
		p[n++] = f[0], p[n++] = f[1];
	}
	p[n++] = I_MOV64_IMM(3, 0);
	p[n++] = I_MOV64_IMM(4, 0);
	p[n++] = I_CALL_HELPER(BPF_FUNC_loop);			/* 8 */
	p[n++] = I_MOV64_IMM(0, 0);
	p[n++] = I_EXIT();
	/* 11: callback(r1 = index, r2 = ctx) */
	p[n++] = I_MOV64_REG(3, 1);
	p[n++] = I_ALU64_IMM(BPF_LSH, 3, 4);
	p[n++] = I_ALU64_IMM(BPF_AND, 3, 0xfff0);
	if (arena) {
		p[n++] = I_CAST_KERN(3, 3);
		p[n++] = I_LDX(BPF_DW, 4, 3, 0);
		p[n++] = I_ALU64_IMM(BPF_ADD, 4, 1);
		p[n++] = I_STX(BPF_DW, 3, 4, 0);
		p[n++] = I_LDX(BPF_DW, 5, 3, 8);
		p[n++] = I_ALU64_REG(BPF_ADD, 5, 1);
		p[n++] = I_STX(BPF_DW, 3, 5, 8);
	} else {
		p[n++] = I_MOV64_REG(4, 3);
		p[n++] = I_ALU64_IMM(BPF_ADD, 4, 1);
		p[n++] = I_MOV64_REG(5, 3);
		p[n++] = I_ALU64_REG(BPF_ADD, 5, 1);
	}
	p[n++] = I_MOV64_IMM(0, 0);
	p[n++] = I_EXIT();
	return n;
}

/* Straight line: cast_kern, then n x (load [r2 + 16k]; store [r2 + 16k + 8]). */
static unsigned int code_prog(struct bpf_insn *p, int afd, int pairs)
{
	struct bpf_insn m[] = { I_LD_MAP_FD(1, afd) };
	unsigned int n = 0;
	int k;

	p[n++] = I_MOV64_REG(6, 1);
	p[n++] = m[0], p[n++] = m[1];
	p[n++] = I_LDX(BPF_DW, 2, 6, 0);
	p[n++] = I_CAST_KERN(2, 2);
	for (k = 0; k < pairs; k++) {
		p[n++] = I_LDX(BPF_DW, 3, 2, 16 * k);
		p[n++] = I_STX(BPF_DW, 2, 3, 16 * k + 8);
	}
	p[n++] = I_MOV64_IMM(0, 0);
	p[n++] = I_EXIT();
	return n;
}

static void bench_code(int afd)
{
	static struct bpf_insn p[512];
	static struct jinfo j0, j1, jl;
	const int pairs = 32;
	unsigned int n;
	int fd;

	n = code_prog(p, afd, 0);
	fd = load_raw(BPF_PROG_TYPE_SYSCALL, p, n, BPF_F_SLEEPABLE);
	jit_info(fd, &j0);
	close(fd);
	n = code_prog(p, afd, pairs);
	fd = load_raw(BPF_PROG_TYPE_SYSCALL, p, n, BPF_F_SLEEPABLE);
	jit_info(fd, &j1);
	close(fd);
	out("code_jit_bytes_per_access", (j1.jited_len - j0.jited_len) / (2.0 * pairs), "bytes");
	out("code_xlated_insns_per_access", (j1.xlated_cnt - j0.xlated_cnt) / (2.0 * pairs), "insns");
	out("code_jit_bytes_prog0", j0.jited_len, "bytes");
	dump_img("code0", &j0, 0, j0.jited_len);
	dump_img("code64", &j1, 0, j1.jited_len);
	/* the loop program's callback (second function) */
	n = loop_prog(p, afd, true);
	fd = load_loop_prog(p, n);
	jit_info(fd, &jl);
	close(fd);
	if (jl.nfuncs != 2)
		printf("# loop program: %u jited funcs\n", jl.nfuncs);
	if (jl.nfuncs == 2) {
		out("code_loop_cb_jit_bytes", jl.func_lens[1], "bytes");
		dump_img("loop_cb", &jl, jl.func_lens[0], jl.func_lens[1]);
	}
	n = loop_prog(p, -1, false);
	fd = load_loop_prog(p, n);
	jit_info(fd, &jl);
	close(fd);
	if (jl.nfuncs == 2)
		dump_img("loop_cb_empty", &jl, jl.func_lens[0], jl.func_lens[1]);
}

static void bench_loop(int afd)
{
	static struct bpf_insn p[64];
	double v[MAX_REPS], e[MAX_REPS], l[MAX_REPS];
	__u64 ctx[1] = { (__u64)iters(1 << 20) };
	unsigned int n;
	int fa, fe, r;

	for (r = 0; r < reps; r++) {
		double t = now_ns();

		n = loop_prog(p, afd, true);
		fa = load_loop_prog(p, n);
		l[r] = (now_ns() - t) / 1e3;
		close(fa);
	}
	outm("load_arena_raw_prog", l, reps, "us");
	n = loop_prog(p, afd, true);
	fa = load_loop_prog(p, n);
	n = loop_prog(p, -1, false);
	fe = load_loop_prog(p, n);
	for (r = 0; r < reps; r++) {
		double t = now_ns();

		if (run_syscall_prog(fa, ctx, sizeof(ctx)))
			die("loop run", -1);
		v[r] = (now_ns() - t) / ctx[0];
		t = now_ns();
		if (run_syscall_prog(fe, ctx, sizeof(ctx)))
			die("loop run", -1);
		e[r] = (now_ns() - t) / ctx[0];
	}
	{
		double d[MAX_REPS];

		for (r = 0; r < reps; r++)
			d[r] = v[r] - e[r];
		outm("bpf_ldst_loop_4acc", v, reps, "ns/iter");
		outm("bpf_empty_loop", e, reps, "ns/iter");
		outm("bpf_ldst_minus_empty_4acc", d, reps, "ns/iter");
	}
	close(fa);
	close(fe);
}

/* ---- non-arena load path ------------------------------------------------ */

static unsigned int nonarena_set(struct bpf_insn *p, int which)
{
	unsigned int n = 0;
	int k;

	switch (which) {
	case 0:	/* socket filter: 400 ALU insns */
		p[n++] = I_MOV64_IMM(0, 1);
		for (k = 0; k < 400; k++)
			p[n++] = I_ALU64_IMM(k & 1 ? BPF_ADD : BPF_XOR, 0, k);
		p[n++] = I_EXIT();
		break;
	case 1:	/* syscall: a bounded loop over the stack and a subprogram */
		p[n++] = I_ST(BPF_DW, 10, -8, 0);
		p[n++] = I_MOV64_IMM(2, 0);
		p[n++] = I_LDX(BPF_DW, 3, 10, -8);			/* 2 */
		p[n++] = I_ALU64_REG(BPF_ADD, 3, 2);
		p[n++] = I_STX(BPF_DW, 10, 3, -8);
		p[n++] = I_ALU64_IMM(BPF_ADD, 2, 1);
		p[n++] = I_JMP_IMM(BPF_JLT, 2, 32, -5);
		p[n++] = I_CALL_REL(2);
		p[n++] = I_MOV64_IMM(0, 0);
		p[n++] = I_EXIT();
		p[n++] = I_MOV64_IMM(0, 3);				/* subprog */
		p[n++] = I_EXIT();
		break;
	default: /* XDP: bounds-checked packet read */
		p[n++] = I_LDX(BPF_W, 2, 1, 0);		/* data */
		p[n++] = I_LDX(BPF_W, 3, 1, 4);		/* data_end */
		p[n++] = I_MOV64_REG(4, 2);
		p[n++] = I_ALU64_IMM(BPF_ADD, 4, 14);
		p[n++] = ((struct bpf_insn){ .code = BPF_JMP | BPF_JGT | BPF_X, .dst_reg = 4,
					     .src_reg = 3, .off = 3 });
		p[n++] = I_LDX(BPF_H, 5, 2, 12);
		p[n++] = I_MOV64_IMM(0, 2);
		p[n++] = I_EXIT();
		p[n++] = I_MOV64_IMM(0, 1);
		p[n++] = I_EXIT();
		break;
	}
	return n;
}

static double load_nonarena_once(int loops)
{
	static const enum bpf_prog_type types[3] = { BPF_PROG_TYPE_SOCKET_FILTER,
						     BPF_PROG_TYPE_SYSCALL, BPF_PROG_TYPE_XDP };
	static struct bpf_insn p[3][512];
	static unsigned int cnt[3];
	double t;
	int i, w;

	for (w = 0; w < 3; w++)
		cnt[w] = nonarena_set(p[w], w);
	t = now_ns();
	for (i = 0; i < loops; i++)
		for (w = 0; w < 3; w++)
			close(load_raw(types[w], p[w], cnt[w],
				       types[w] == BPF_PROG_TYPE_SYSCALL ? BPF_F_SLEEPABLE : 0));
	return (now_ns() - t) / loops / 1e3;
}

/* Before any arena exists: alternate module loaded / unloaded on 6.1. */
static void bench_nonarena_load(void)
{
	double with[MAX_REPS], without[MAX_REPS], ovh[MAX_REPS];
	int loops = (int)iters(40), r;

	load_nonarena_once(4);	/* warm up */
	for (r = 0; r < reps; r++) {
		if (native) {
			without[r] = load_nonarena_once(loops);
			continue;
		}
		if (!kmod_is_loaded() && kmod_load())
			die("insmod", -errno);
		with[r] = load_nonarena_once(loops);
		if (kmod_unload())
			die("rmmod", -errno);
		without[r] = load_nonarena_once(loops);
		if (kmod_load())
			die("insmod", -errno);
		ovh[r] = (with[r] / without[r] - 1) * 100;
	}
	outm("load_nonarena_3progs", without, reps, "us");
	if (!native) {
		outm("load_nonarena_3progs_with_module", with, reps, "us");
		outm("load_nonarena_module_overhead", ovh, reps, "%");
	}
}

/* ---- libbpf object: list, htab, alloc/free ------------------------------ */

static struct bpf_object *open_obj(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "bench_arena");
	struct bpf_object *obj;
	int err;

	obj = bpf_object__open_mem(bench_obj_start, (size_t)(bench_obj_end - bench_obj_start), &oo);
	err = libbpf_get_error(obj);
	if (err)
		die("bpf_object open", err);
	err = bpf_arena_object_prepare(obj);
	if (err)
		die("bpf_arena_object_prepare", err);
	err = bpf_object__load(obj);
	if (err)
		die("bpf_object load", err);
	return obj;
}

static double run_obj(struct bpf_object *obj, const char *name, struct bench_args *a)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = a, .ctx_size_in = sizeof(*a));
	double t;
	int err;

	if (!p)
		die(name, -ENOENT);
	t = now_ns();
	err = bpf_prog_test_run_opts(bpf_program__fd(p), &o);
	t = now_ns() - t;
	if (err)
		die(name, err);
	if (strcmp(name, "list_del_all"))
		a->n = o.retval;
	if (a->err) {
		printf("# %s: err %llu\n", name, (unsigned long long)a->err);
		die(name, -EIO);
	}
	return t;
}

static void bench_obj(void)
{
	double v[MAX_REPS], w[MAX_REPS];
	struct bpf_object *obj;
	struct bench_args a;
	int r, k;

	for (r = 0; r < reps; r++) {
		double t = now_ns();

		obj = open_obj();
		v[r] = (now_ns() - t) / 1e6;
		bpf_arena_object_close(obj);
	}
	outm("load_arena_obj_libbpf", v, reps, "ms");

	obj = open_obj();
	memset(&a, 0, sizeof(a));
	a.cnt = 1000;				/* warm-up: head, first pages */
	run_obj(obj, "list_add", &a);
	memset(&a, 0, sizeof(a));
	run_obj(obj, "list_del_all", &a);
	{
		static const long sizes[2] = { 1000, 100000 };
		static const char *names[2] = { "bpf_list_add_del_1000", "bpf_list_add_del_100k" };

		for (k = 0; k < 2; k++) {
			long n = k ? iters(sizes[k]) : sizes[k];

			for (r = 0; r < reps; r++) {
				memset(&a, 0, sizeof(a));
				a.cnt = n;
				v[r] = run_obj(obj, "list_add", &a);
				memset(&a, 0, sizeof(a));
				v[r] += run_obj(obj, "list_del_all", &a);
				if (a.n != (__u64)n)
					die("list count", -EIO);
				v[r] /= 1e3;
			}
			outm(names[k], v, reps, "us");
		}
	}
	memset(&a, 0, sizeof(a));
	a.cnt = BENCH_HTAB_KEYS;
	run_obj(obj, "htab_upd_lookup", &a);	/* builds the table */
	for (r = 0; r < reps; r++) {
		memset(&a, 0, sizeof(a));
		a.cnt = iters(10000);
		v[r] = run_obj(obj, "htab_upd_lookup", &a) / 1e3;
		if (a.n != a.cnt)
			die("htab lookups", -EIO);
	}
	outm("bpf_htab_10k_upd_10k_lookup", v, reps, "us");
	for (r = 0; r < reps; r++) {
		memset(&a, 0, sizeof(a));
		a.cnt = iters(2000);
		a.pages = 1;
		v[r] = run_obj(obj, "alloc_free", &a) / a.cnt;
		memset(&a, 0, sizeof(a));
		a.cnt = iters(20);
		a.pages = 512;
		w[r] = run_obj(obj, "alloc_free", &a) / a.cnt / 1e3;
	}
	outm("bpf_alloc_free_1page", v, reps, "ns/op");
	outm("bpf_alloc_free_512pages", w, reps, "us/op");
	bpf_arena_object_close(obj);
}

/* ---- user space: fault-in, libbpfarena page ops ------------------------- */

struct fault_arg {
	char *base;
	long first, n;
	pthread_barrier_t *bar;
};

static void *fault_thread(void *p)
{
	struct fault_arg *f = p;
	long i;

	pthread_barrier_wait(f->bar);
	for (i = 0; i < f->n; i++)
		f->base[(f->first + i) * PG] = 1;
	return NULL;
}

static double fault_in(long pages, int nthr)
{
	pthread_t th[8];
	struct fault_arg fa[8];
	pthread_barrier_t bar;
	char *base;
	double t;
	int fd, i;

	fd = raw_arena((unsigned int)pages, 0, &base);
	pthread_barrier_init(&bar, NULL, nthr + 1);
	for (i = 0; i < nthr; i++) {
		fa[i] = (struct fault_arg){ base, pages / nthr * i, pages / nthr, &bar };
		pthread_create(&th[i], NULL, fault_thread, &fa[i]);
	}
	t = now_ns();
	pthread_barrier_wait(&bar);
	for (i = 0; i < nthr; i++)
		pthread_join(th[i], NULL);
	t = now_ns() - t;
	pthread_barrier_destroy(&bar);
	munmap(base, pages * PG);
	close(fd);
	return t / pages;
}

static void bench_user(void)
{
	double v[MAX_REPS], w[MAX_REPS];
	long pages = iters(16384);
	struct bpf_arena *ar;
	void *pg;
	int r, i, err, n1 = (int)iters(2000), n512 = (int)iters(20);

	for (r = 0; r < reps; r++) {
		v[r] = fault_in(pages, 1);
		w[r] = fault_in(pages, 4);
	}
	outm("user_fault_in_1thr", v, reps, "ns/page");
	outm("user_fault_in_4thr", w, reps, "ns/page");
	if (native)
		return;	/* user-side page ops: module only */
	err = bpf_arena_create(1024, NULL, &ar);
	if (err)
		die("bpf_arena_create", err);
	for (r = 0; r < reps; r++) {
		double t = now_ns();

		for (i = 0; i < n1; i++) {
			err = bpf_arena_user_alloc_pages(ar, NULL, 1, -1, &pg);
			err = err ?: bpf_arena_user_free_pages(ar, pg, 1) == 1 ? 0 : -EIO;
			if (err)
				die("lib alloc/free 1", err);
		}
		v[r] = (now_ns() - t) / n1;
		t = now_ns();
		for (i = 0; i < n512; i++) {
			err = bpf_arena_user_alloc_pages(ar, NULL, 512, -1, &pg);
			err = err ?: bpf_arena_user_free_pages(ar, pg, 512) == 512 ? 0 : -EIO;
			if (err)
				die("lib alloc/free 512", err);
		}
		w[r] = (now_ns() - t) / n512 / 1e3;
	}
	outm("lib_alloc_free_1page", v, reps, "ns/op");
	outm("lib_alloc_free_512pages", w, reps, "us/op");
	bpf_arena_destroy(ar);
}

/* ---- memory -------------------------------------------------------------- */

static long memfree_kb(void)
{
	long v = meminfo_kib("MemFree");

	if (v < 0)
		die("meminfo", -ENOENT);
	return v;
}

/* Waits until MemFree stops moving (RCU, deferred and per-CPU frees). */
static void settle(void)
{
	long prev = memfree_kb(), cur;
	int i;

	for (i = 0; i < 30; i++) {
		usleep(100000);
		cur = memfree_kb();
		if (labs(cur - prev) < 128)
			break;
		prev = cur;
	}
}

/* MiB used (MemFree delta) by a 4 GiB arena with every (100/pct)th page touched. */
static double arena_mem(int pct)
{
	const unsigned int pages = 1U << 20;	/* 4 GiB */
	long before, after, i, step = 100 / pct;
	char *base;
	int fd;

	settle();
	before = memfree_kb();
	fd = raw_arena(pages, 0, &base);
	for (i = 0; i < pages; i += step)
		base[i * PG] = 1;
	settle();
	after = memfree_kb();
	munmap(base, (size_t)pages * PG);
	close(fd);
	return (before - after) / 1024.0;
}

/* MiB used by a BPF_F_MMAPABLE array of mib MiB (4 KiB values), 1% touched. */
static double array_mem(long mib)
{
	size_t sz = (size_t)mib << 20;
	long before, after, i;
	union bpf_attr a;
	char *base;
	int fd;

	settle();
	before = memfree_kb();
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = PG;
	a.max_entries = sz / PG;
	a.map_flags = BPF_F_MMAPABLE;
	fd = bpf_sys(BPF_MAP_CREATE, &a);
	if (fd < 0)
		die("array create", -errno);
	base = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		die("array mmap", -errno);
	for (i = 0; i < (long)(sz / PG); i += 100)
		base[i * PG] = 1;
	settle();
	after = memfree_kb();
	munmap(base, sz);
	close(fd);
	return (before - after) / 1024.0;
}

static void bench_mem(void)
{
	double a1[MAX_REPS], a10[MAX_REPS], arr[MAX_REPS];
	int r, mr = reps < 3 ? reps : 3;
	const long arr_mib = 512;	/* a 4 GiB array does not fit the guest: scaled x8 */

	for (r = 0; r < mr; r++) {
		a1[r] = arena_mem(1);
		a10[r] = arena_mem(10);
		arr[r] = array_mem(arr_mib) * (4096.0 / arr_mib);
	}
	outm("mem_arena_4g_1pct", a1, mr, "MiB");
	outm("mem_arena_4g_10pct", a10, mr, "MiB");
	outm("mem_array_4g_extrapolated", arr, mr, "MiB");
	out("mem_array_over_arena_1pct", median(arr, mr) / median(a1, mr), "x");
}

/* ---- exact guest instruction counts (-c; bench/plugin/insn_count.c) ----- */

/*
 * The markers: `nopl 0x5ea10000(%rax)` starts, `nopl 0x5ea20000(%rax)` stops a
 * measurement.  No-ops on any x86-64; under bench/run's counting QEMU the
 * plugin writes the instructions executed between them on this vCPU, and
 * each stop is paired (in order) with the `COUNT name iters` line printed
 * right after it.  iters > 0: the report takes per-iteration figures from
 * two sizes ((min at 2N - min at N) / N, which cancels the fixed syscall and
 * setup cost); iters 0: the whole count (load paths).  Every measurement is
 * repeated `reps` times; the report uses the minimum (an interrupt that still
 * reaches the isolated CPU only adds).
 */
#define MARK_START() __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x00, 0x00, 0xa1, 0x5e" ::: "memory")
#define MARK_STOP() __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x00, 0x00, 0xa2, 0x5e" ::: "memory")

static void counted(const char *name, long n)
{
	printf("COUNT\t%s\t%ld\n", name, n);
}

/* bpf_loop(cnt) of a callback doing nacc u64 loads (or stores) through one base. */
static unsigned int acc_prog(struct bpf_insn *p, int afd, int nacc, bool store)
{
	unsigned int n = loop_prog(p, afd, true);
	int k;

	n = LOOP_CB;
	p[n++] = I_MOV64_REG(3, 1);
	p[n++] = I_ALU64_IMM(BPF_LSH, 3, 7);
	p[n++] = I_ALU64_IMM(BPF_AND, 3, 0xff80);
	p[n++] = I_CAST_KERN(3, 3);
	for (k = 0; k < nacc; k++)
		p[n++] = store ? I_STX(BPF_DW, 3, 1, 8 * k) : I_LDX(BPF_DW, 4, 3, 8 * k);
	p[n++] = I_MOV64_IMM(0, 0);
	p[n++] = I_EXIT();
	return n;
}

static void count_prog_run(const char *name, int fd, long n)
{
	__u64 ctx[1] = { (__u64)n };
	long err;

	MARK_START();
	err = run_syscall_prog(fd, ctx, sizeof(ctx));
	MARK_STOP();
	if (err)
		die(name, err);
	counted(name, n);
}

static void count_obj_run(struct bpf_object *obj, const char *prog, const char *name, long n,
			  long pages)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog);
	struct bench_args a = { .cnt = (__u64)n, .pages = (__u64)pages };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &a, .ctx_size_in = sizeof(a));
	int err;

	if (!p)
		die(prog, -ENOENT);
	MARK_START();
	err = bpf_prog_test_run_opts(bpf_program__fd(p), &o);
	MARK_STOP();
	if (err || a.err)
		die(prog, err ?: -EIO);
	counted(name, n);
}

static void count_list_add_del(struct bpf_object *obj, long n)
{
	struct bpf_program *pa = bpf_object__find_program_by_name(obj, "list_add");
	struct bpf_program *pd = bpf_object__find_program_by_name(obj, "list_del_all");
	struct bench_args a = { .cnt = (__u64)n }, d = {};
	LIBBPF_OPTS(bpf_test_run_opts, oa, .ctx_in = &a, .ctx_size_in = sizeof(a));
	LIBBPF_OPTS(bpf_test_run_opts, od, .ctx_in = &d, .ctx_size_in = sizeof(d));
	int err;

	if (!pa || !pd)
		die("list progs", -ENOENT);
	MARK_START();
	err = bpf_prog_test_run_opts(bpf_program__fd(pa), &oa);
	err = err ?: bpf_prog_test_run_opts(bpf_program__fd(pd), &od);
	MARK_STOP();
	if (err || a.err || d.err || d.n != (__u64)n)
		die("list add/del", err ?: -EIO);
	counted("list_add_del_per_elem", n);
}

static void count_fault_in(long pages)
{
	char *base;
	long i;
	int fd = raw_arena((unsigned int)pages, 0, &base);

	MARK_START();
	for (i = 0; i < pages; i++)
		base[i * PG] = 1;
	MARK_STOP();
	counted("user_fault_in_per_page", pages);
	munmap(base, pages * PG);
	close(fd);
}

static void count_loads(int afd)
{
	static struct bpf_insn p[512];
	unsigned int n;
	int r, fd;

	for (r = 0; r < reps; r++) {
		/* the 128-access straight-line program: one BPF_PROG_LOAD */
		n = code_prog(p, afd, 64);
		MARK_START();
		fd = load_prog_flags(BPF_PROG_TYPE_SYSCALL, p, n, BPF_F_SLEEPABLE, NULL, 0);
		MARK_STOP();
		if (fd < 0)
			die("load 128", fd);
		close(fd);
		counted("load_arena_prog_128acc", 0);
		n = loop_prog(p, afd, true);
		MARK_START();
		fd = load_loop_prog(p, n);
		MARK_STOP();
		close(fd);
		counted("load_arena_raw_loop_prog", 0);
	}
}

static void count_nonarena_load(const char *name)
{
	static const enum bpf_prog_type types[3] = { BPF_PROG_TYPE_SOCKET_FILTER,
						     BPF_PROG_TYPE_SYSCALL, BPF_PROG_TYPE_XDP };
	static struct bpf_insn p[3][512];
	unsigned int cnt[3];
	int r, w, fd[3];

	for (w = 0; w < 3; w++)
		cnt[w] = nonarena_set(p[w], w);
	for (r = 0; r < reps; r++) {
		MARK_START();
		for (w = 0; w < 3; w++)
			fd[w] = load_prog_flags(types[w], p[w], cnt[w],
						types[w] == BPF_PROG_TYPE_SYSCALL ? BPF_F_SLEEPABLE : 0,
						NULL, 0);
		MARK_STOP();
		for (w = 0; w < 3; w++) {
			if (fd[w] < 0)
				die(name, fd[w]);
			close(fd[w]);
		}
		counted(name, 0);
	}
}

/*
 * The workloads that allocate arena pages (and the list walk, which walks
 * what list_add built): the kernel's TLB-flush IPIs wait for the other vCPU
 * there, whose progress depends on the host, so bench/run also counts these
 * on a one-vCPU boot (-w allocating), where the counts repeat.
 */
static void count_allocating(long base_n)
{
	struct bpf_object *obj;
	int r, sz;

	obj = open_obj();
	count_list_add_del(obj, 1000);	/* warm-up: head, first pages */
	for (sz = 1; sz <= 2; sz++)
		for (r = 0; r < reps; r++)
			count_list_add_del(obj, base_n * sz);
	{	/* a 64-element list stays for the walks */
		struct bench_args a = { .cnt = 64 };
		LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &a, .ctx_size_in = sizeof(a));

		if (bpf_prog_test_run_opts(bpf_program__fd(bpf_object__find_program_by_name(obj, "list_add")), &o))
			die("list_add 64", -EIO);
	}
	for (sz = 1; sz <= 2; sz++)
		for (r = 0; r < reps; r++)
			count_obj_run(obj, "list_walk16", "list_walk_16hops_per_iter", base_n * sz, 0);
	count_obj_run(obj, "htab_upd_lookup", "warmup", BENCH_HTAB_KEYS, 0);
	for (sz = 1; sz <= 2; sz++)
		for (r = 0; r < reps; r++)
			count_obj_run(obj, "htab_upd_lookup", "htab_upd_lookup_per_op", base_n * sz, 0);
	count_obj_run(obj, "alloc_free", "warmup", 16, 1);
	for (sz = 1; sz <= 2; sz++)
		for (r = 0; r < reps; r++)
			count_obj_run(obj, "alloc_free", "alloc_free_1page_per_op", base_n / 4 * sz, 1);
	bpf_arena_object_close(obj);
	for (sz = 1; sz <= 2; sz++)
		for (r = 0; r < reps; r++)
			count_fault_in(base_n / 4 * sz);
}

/*
 * Counting mode: the workloads of the table, each at two sizes, on
 * CPU 1 (bench/run boots with nohz_full=1 isolcpus=1 irqaffinity=0).
 */
static void count_all(const char *only)
{
	static struct bpf_insn p[128];
	static const int nacc[2] = { 8, 16 };
	cpu_set_t cs;
	char *base, name[64];
	long base_n = iters(1000);
	int afd, fd, r, k, st, sz;

	if (only && strstr(only, "allocating")) {	/* the one-vCPU boot: nothing to pin */
		count_allocating(base_n);
		return;
	}
	CPU_ZERO(&cs);
	CPU_SET(1, &cs);
	if (sched_setaffinity(0, sizeof(cs), &cs))
		printf("# count: cannot pin to CPU 1: %s\n", strerror(errno));
	/* load paths first, before any arena exists (non-arena load) */
	if (native) {
		count_nonarena_load("load_nonarena_3progs");
	} else {
		if (!kmod_is_loaded() && kmod_load())
			die("insmod", -errno);
		count_nonarena_load("load_nonarena_3progs_with_module");
		if (kmod_unload())
			die("rmmod", -errno);
		count_nonarena_load("load_nonarena_3progs");
		if (kmod_load())
			die("insmod", -errno);
	}
	afd = raw_arena(16, 1ULL << 44, &base);
	memset(base, 0, 16 * PG);
	count_loads(afd);
	if (only && strstr(only, "load")) {	/* -w load: the load paths alone (profiling) */
		munmap(base, 16 * PG);
		close(afd);
		return;
	}
	for (st = 0; st < 2; st++) {
		for (k = 0; k < 2; k++) {
			unsigned int n = acc_prog(p, afd, nacc[k], st);

			fd = load_loop_prog(p, n);
			snprintf(name, sizeof(name), "bpf_%d_%s_per_iter", nacc[k], st ? "stores" : "loads");
			for (sz = 1; sz <= 2; sz++)
				for (r = 0; r < reps; r++)
					count_prog_run(name, fd, base_n * sz);
			close(fd);
		}
	}
	{
		unsigned int n = loop_prog(p, afd, true);

		fd = load_loop_prog(p, n);
		for (sz = 1; sz <= 2; sz++)
			for (r = 0; r < reps; r++)
				count_prog_run("bpf_ldst_loop_4acc_per_iter", fd, base_n * sz);
		close(fd);
	}
	munmap(base, 16 * PG);
	close(afd);

	count_allocating(base_n);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	bool count = false;
	char *base;
	int c, afd;

	while ((c = getopt(argc, argv, "r:s:o:w:c")) != -1) {
		switch (c) {
		case 'r': reps = atoi(optarg); break;
		case 's': scale = atof(optarg); break;
		case 'o': outdir = optarg; break;
		case 'w': only = optarg; break;
		case 'c': count = true; break;
		default:
			fprintf(stderr, "usage: %s [-r REPS] [-s SCALE] [-o DUMPDIR] [-w SECTION|allocating] [-c]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS)
		reps = 5;
	setvbuf(stdout, NULL, _IOLBF, 0);
	native = kernel_has_native_arena();
	printf("BENCH-META\tkernel\t%s\n", native ? "native" : "module");
	if (count) {
		count_all(only);
		printf("BENCH-DONE\n");
		return 0;
	}
#define SECTION(s) (!only || strstr(only, s))
	if (SECTION("load"))
		bench_nonarena_load();
	if (SECTION("mem"))
		bench_mem();
	afd = raw_arena(16, 1ULL << 44, &base);
	memset(base, 0, 16 * PG);
	if (SECTION("code"))
		bench_code(afd);
	if (SECTION("loop"))
		bench_loop(afd);
	munmap(base, 16 * PG);
	close(afd);
	if (SECTION("obj"))
		bench_obj();
	if (SECTION("user"))
		bench_user();
	printf("BENCH-DONE\n");
	return 0;
}

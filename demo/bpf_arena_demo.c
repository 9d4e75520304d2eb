// SPDX-License-Identifier: GPL-2.0
/*
 * The project demo: a BPF program builds a hash table in a BPF arena, user
 * space walks it with plain pointers and prints it.
 *
 * It says whether the kernel has a native arena (6.9+) or uses bpf_arena.ko,
 * opens the BPF object embedded in this binary (demo/htab.bpf.c) with the
 * stock libbpf, lets bpf_arena_object_prepare() create and map its arena
 * (libbpf 1.1 does not know BPF_MAP_TYPE_ARENA), loads it, runs the program
 * once, and walks the table the program built: the arena is mapped at the
 * same address in user space, so the program's pointers work here as they
 * are.  Then a child process maps the same arena and walks it again.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_arena_lib.h"
#include "bpf_arena_libbpf.h"
#include "demo_htab.h"

/* The BPF object (build/demo/htab.bpf.o), embedded at build time. */
extern const char demo_bpf_start[], demo_bpf_end[];
__asm__(".pushsection .rodata\n.balign 8\n.global demo_bpf_start\n"
	"demo_bpf_start:\n.incbin \"" DEMO_BPF_OBJ "\"\n"
	".global demo_bpf_end\ndemo_bpf_end:\n.popsection\n");

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* First line of path into buf; 0, or -1 if it cannot be read. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Prints which arena this kernel uses; 0 if there is one. */
static int show_kernel(void)
{
	char ver[64], state[64];
	struct utsname u;

	uname(&u);
	printf("bpf-arena demo %s on Linux %s\n", BPF_ARENA_VERSION, u.release);
	if (bpf_arena_kernel_has_native()) {
		printf("arena    native (in-tree BPF_MAP_TYPE_ARENA), bpf_arena.ko not needed\n");
		return 0;
	}
	if (read_line("/sys/module/bpf_arena/version", ver, sizeof(ver)) ||
	    read_line("/sys/module/bpf_arena/initstate", state, sizeof(state))) {
		printf("arena    none: this kernel has no native arena and bpf_arena.ko is not loaded\n");
		return -1;
	}
	printf("arena    bpf_arena.ko %s (%s)\n", ver, state);
	return 0;
}

/*
 * Walks the table with plain pointers and prints each bucket's chain.
 * Returns the number of elements seen (-1 if the table looks broken).
 */
static int walk(const struct demo_htab *h, const char *who, int verbose)
{
	unsigned int b;
	__u64 sum = 0;
	int n = 0;

	for (b = 0; b < h->n_buckets; b++) {
		const struct demo_elem *e;
		int len = 0;

		if (verbose)
			printf("  bucket %u:", b);
		/* h->buckets[b] and e->next were written by the BPF program */
		for (e = h->buckets[b]; e; e = e->next, len++) {
			if (len > DEMO_KEYS || e->bucket != b || e->value != (__u64)e->key * e->key)
				return -1;
			if (verbose)
				printf("%s%2u=%-*llu", len ? " -> " : " ", e->key,
				       e->next ? 4 : 0, (unsigned long long)e->value);
			sum += e->value;
		}
		if (verbose)
			printf("%s\n", len ? "" : " (empty)");
		n += len;
	}
	printf("%-8s walked %d elements in %u buckets, sum of values %llu\n", who, n,
	       h->n_buckets, (unsigned long long)sum);
	return sum == h->sum ? n : -1;
}

/* A child maps the arena again (fork does not copy it) and re-walks the table. */
static int child_walk(struct bpf_arena *arena, const struct demo_htab *h, int expect)
{
	void *base = bpf_arena_base(arena);
	size_t size = bpf_arena_size(arena);
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		void *p = mmap(base, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			       bpf_arena_map_fd(arena), 0);

		if (p != base) {
			printf("child    mmap of the arena at %p: %s\n", base, strerror(errno));
			_exit(1);
		}
		printf("child    pid %d mapped the arena at %p and walks the same pointers\n",
		       (int)getpid(), p);
		_exit(walk(h, "child", 0) == expect ? 0 : 2);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return 0;
}

int main(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "demo_htab");
	struct demo_args args = { .keys = DEMO_KEYS };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &args, .ctx_size_in = sizeof(args));
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_arena *arena;
	struct demo_htab *h;
	struct bpf_map *map;
	int err, n, ret = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(libbpf_print);
	if (show_kernel())
		return 1;

	obj = bpf_object__open_mem(demo_bpf_start, (size_t)(demo_bpf_end - demo_bpf_start), &oo);
	err = libbpf_get_error(obj);
	if (err) {
		printf("open of the BPF object failed: %s\n", strerror(-err));
		return 1;
	}
	err = bpf_arena_object_prepare(obj);
	if (err) {
		printf("bpf_arena_object_prepare: %s\n", strerror(-err));
		goto out;
	}
	err = bpf_object__load(obj);
	if (err) {
		printf("load of the BPF program failed: %s\n", strerror(-err));
		goto out;
	}
	map = bpf_object__find_map_by_name(obj, "arena");
	prog = bpf_object__find_program_by_name(obj, "build_htab");
	arena = map ? bpf_arena_object_arena(map) : NULL;
	if (!arena || !prog) {
		printf("the object has no arena map or no build_htab program\n");
		goto out;
	}
	printf("arena    map fd %d, %zu pages at %p\n", bpf_map__fd(map),
	       bpf_arena_size(arena) / 4096, bpf_arena_base(arena));

	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &run);
	if (err || run.retval || args.err) {
		printf("running build_htab failed: %s, retval %u, err %llu\n",
		       err ? strerror(errno) : "ok", run.retval, (unsigned long long)args.err);
		goto out;
	}
	h = (struct demo_htab *)(uintptr_t)args.htab;
	printf("bpf      build_htab inserted %u keys (key=value: n=n*n) into %u buckets, "
	       "table at %p\n", h->count, h->n_buckets, (void *)h);
	printf("parent   walks the table with plain pointers:\n");
	n = walk(h, "parent", 1);
	if (n != (int)args.keys) {
		printf("the table is not what the program built\n");
		goto out;
	}
	if (child_walk(arena, h, n)) {
		printf("the child could not walk the table\n");
		goto out;
	}
	printf("ok: a BPF program built a hash table in the arena, user space walked it\n");
	ret = 0;
out:
	bpf_arena_object_close(obj);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * BPF programs using the arena, loaded with the stock libbpf (1.1 on Debian
 * 12) and bpf_arena_object_prepare(): ports of upstream's arena_list,
 * arena_htab, verifier_arena basic_alloc1/2 and verifier_arena_large
 * big_alloc1, fault semantics of program loads and stores, cast_user(NULL),
 * and misuses the verifier must reject.  Every test runs for both builds of
 * the programs (tests/progs/progs.mk): "v3" (clang-19, native casts) and "asm"
 * (clang-14, inline-asm casts).  The objects are embedded in this binary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "bpf_arena_lib.h"
#include "bpf_arena_libbpf.h"
#include "test_util.h"
#include "arena_prog_common.h"

#define PG 4096UL

/* ---- the embedded objects ------------------------------------------------ */

EMBED(list_v3, "arena_prog_list.v3.bpf.o");
EMBED(list_asm, "arena_prog_list.asm.bpf.o");
EMBED(htab_v3, "arena_prog_htab.v3.bpf.o");
EMBED(htab_asm, "arena_prog_htab.asm.bpf.o");
EMBED(ver_v3, "arena_prog_verifier_arena.v3.bpf.o");
EMBED(ver_asm, "arena_prog_verifier_arena.asm.bpf.o");
EMBED(large_v3, "arena_prog_verifier_arena_large.v3.bpf.o");
EMBED(large_asm, "arena_prog_verifier_arena_large.asm.bpf.o");
EMBED(fault_v3, "arena_prog_fault.v3.bpf.o");
EMBED(fault_asm, "arena_prog_fault.asm.bpf.o");
EMBED(reject_v3, "arena_prog_reject.v3.bpf.o");
EMBED(reject_asm, "arena_prog_reject.asm.bpf.o");

enum obj_id { O_LIST, O_HTAB, O_VERIFIER, O_LARGE, O_FAULT, O_REJECT, O_NR };

static const struct obj_img imgs[2][O_NR] = {
	{ IMG("arena_list", list_v3), IMG("arena_htab", htab_v3), IMG("verifier_arena", ver_v3),
	  IMG("verifier_arena_large", large_v3), IMG("arena_fault", fault_v3),
	  IMG("arena_reject", reject_v3) },
	{ IMG("arena_list", list_asm), IMG("arena_htab", htab_asm), IMG("verifier_arena", ver_asm),
	  IMG("verifier_arena_large", large_asm), IMG("arena_fault", fault_asm),
	  IMG("arena_reject", reject_asm) },
};

/* map_extra the loader sets (libbpf 1.1 reads only 32 bits from the object) */
#define LIST_MAP_EXTRA	(1ULL << 44)
#define VER_MAP_EXTRA	((1ULL << 44) | (0xffffffffULL - 2 * PG + 1))
#define FAULT_MAP_EXTRA	(1ULL << 44)

/* ---- fixture ------------------------------------------------------------- */

FIXTURE(prog) {
	struct bpf_object *obj;
	char log[65536];
};

FIXTURE_VARIANT(prog) {
	int build;		/* index into imgs */
	bool native_casts;
};

FIXTURE_VARIANT_ADD(prog, v3) { .build = 0, .native_casts = true };
FIXTURE_VARIANT_ADD(prog, asm) { .build = 1, .native_casts = false };

FIXTURE_SETUP(prog)
{
	self->obj = NULL;
}

FIXTURE_TEARDOWN(prog)
{
	bpf_arena_object_close(self->obj);
}

/*
 * Opens object id of the variant's build, keeps only program `only`
 * autoloaded (NULL: all), sets map_extra of map "arena" (0: as in the
 * object), prepares the arenas and loads.  Returns bpf_object__load()'s
 * result; the object is in self->obj either way.
 */
static int open_load(struct __test_metadata *_metadata, struct bpf_object **objp,
		     int build, enum obj_id id, const char *only, __u64 map_extra,
		     char *log, size_t log_sz)
{
	const struct obj_img *img = &imgs[build][id];
	static char load_log[1 << 20];
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = img->name,
		    .kernel_log_buf = log ? NULL : load_log, .kernel_log_size = log ? 0 : sizeof(load_log));
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *map;
	int err;

	obj = bpf_object__open_mem(img->start, (size_t)(img->end - img->start), &oo);
	ASSERT_EQ(0, libbpf_get_error(obj)) TH_LOG("open %s: %ld", img->name, libbpf_get_error(obj));
	*objp = obj;
	if (only) {
		bool found = false;

		bpf_object__for_each_program(prog, obj) {
			bool me = !strcmp(bpf_program__name(prog), only);

			bpf_program__set_autoload(prog, me);
			if (me && log) {
				log[0] = 0;
				bpf_program__set_log_buf(prog, log, log_sz);
				bpf_program__set_log_level(prog, 1);
			}
			found |= me;
		}
		ASSERT_TRUE(found) TH_LOG("no program %s in %s", only, img->name);
	}
	if (map_extra) {
		map = bpf_object__find_map_by_name(obj, "arena");
		ASSERT_NE(NULL, map);
		ASSERT_EQ(0, bpf_map__set_map_extra(map, map_extra));
	}
	ASSERT_EQ(0, bpf_arena_object_prepare(obj));
	err = bpf_object__load(obj);
	if (err && !log)
		TH_LOG("load of %s failed: %d; verifier log tail:\n%s", img->name, err,
		       strlen(load_log) > 3000 ? load_log + strlen(load_log) - 3000 : load_log);
	return err;
}

#define LOAD(id, only, extra)							\
	ASSERT_EQ(0, open_load(_metadata, &self->obj, variant->build, id, only, extra, NULL, 0))

/*
 * Global variable var of .bss or .data (read from the map itself: libbpf 1.1
 * re-maps internal maps over their initial values only for skeletons, so
 * bpf_map__initial_value() would show the stale copy here).
 */
#define GLOBAL(type, var) ({							\
	type __v;								\
	ASSERT_EQ(0, obj_global(self->obj, var, &__v, sizeof(__v), false))	\
		TH_LOG("no global %s", var);					\
	__v;									\
})

static struct bpf_arena *arena_of(struct __test_metadata *_metadata, struct bpf_object *obj)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "arena");
	struct bpf_arena *a;

	ASSERT_NE(NULL, map);
	a = bpf_arena_object_arena(map);
	ASSERT_NE(NULL, a);
	ASSERT_EQ(bpf_map__fd(map) >= 0, true);
	return a;
}

static bool in_arena(const struct bpf_arena *a, __u64 p, size_t len)
{
	__u64 b = (__u64)(uintptr_t)bpf_arena_base(a);

	return p >= b && p + len <= b + bpf_arena_size(a);
}

/* ---- the prepare call ---------------------------------------------------- */

TEST_F(prog, prepare_creates_maps_and_hands_them_to_libbpf)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	struct bpf_arena *a;
	struct bpf_map *map;

	LOAD(O_LIST, NULL, LIST_MAP_EXTRA);
	map = bpf_object__find_map_by_name(self->obj, "arena");
	ASSERT_NE(NULL, map);
	a = arena_of(_metadata, self->obj);
	EXPECT_EQ((void *)(uintptr_t)LIST_MAP_EXTRA, bpf_arena_base(a));
	EXPECT_EQ(bpf_arena_base(a), bpf_arena_object_base(map));
	EXPECT_EQ(100 * PG, bpf_arena_size(a));
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, bpf_obj_get_info_by_fd(bpf_map__fd(map), &info, &len));
	EXPECT_EQ(BPF_ARENA_MAP_TYPE, info.type);
	EXPECT_EQ(100, info.max_entries);
	EXPECT_EQ(LIST_MAP_EXTRA, info.map_extra);
	EXPECT_STREQ("arena", info.name);
	/* again: nothing changes */
	EXPECT_EQ(0, bpf_arena_object_prepare(self->obj));
	EXPECT_EQ(a, bpf_arena_object_arena(map));
	/* a map of another object: not ours */
	EXPECT_EQ(NULL, bpf_arena_object_base(bpf_object__find_map_by_name(self->obj, "arena_li.bss")));
}

#define UNRELEASED_TEXT "its object was closed (or failed to load) but the arena was not " \
	"released, so it stays mapped until the process exits: close objects with " \
	"bpf_arena_object_close(obj)"

/*
 * An object closed with bpf_object__close() alone leaves its arena mapped:
 * the next bpf_arena_object_prepare() says so, naming the map and the fix.
 */
TEST_F(prog, unreleased_arena_is_reported_at_the_next_prepare)
{
	LOAD(O_LIST, NULL, LIST_MAP_EXTRA);
	bpf_object__close(self->obj);		/* the arena is not released */
	self->obj = NULL;
	lib_capture();
	LOAD(O_HTAB, NULL, 0);
	bpf_arena_set_print(NULL);
	EXPECT_NE(NULL, strstr(lib_msgs, "arena map 'arena' (100 pages at 0x100000000000): "
			       UNRELEASED_TEXT)) TH_LOG("%s", lib_msgs);
	/* Once only. */
	lib_capture();
	EXPECT_EQ(0, bpf_arena_object_prepare(self->obj));
	bpf_arena_set_print(NULL);
	EXPECT_EQ(NULL, strstr(lib_msgs, UNRELEASED_TEXT)) TH_LOG("%s", lib_msgs);
}

/* ... and a program that exits like that hears it at exit; one that closes properly does not. */
TEST_F(prog, unreleased_arena_is_reported_at_exit)
{
	int release;

	for (release = 0; release < 2; release++) {
		char out[4096] = "";
		int pipefd[2], status;
		ssize_t n;
		pid_t pid;

		ASSERT_EQ(0, pipe(pipefd));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			dup2(pipefd[1], 2);
			close(pipefd[0]);
			if (open_load(_metadata, &self->obj, variant->build, O_LIST, NULL,
				      LIST_MAP_EXTRA, NULL, 0))
				_exit(2);
			if (release)
				bpf_arena_object_close(self->obj);
			else
				bpf_object__close(self->obj);
			exit(0);		/* runs the library's destructor */
		}
		close(pipefd[1]);
		n = read(pipefd[0], out, sizeof(out) - 1);
		close(pipefd[0]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("status %#x", status);
		out[n > 0 ? n : 0] = 0;
		if (release) {
			EXPECT_EQ(NULL, strstr(out, UNRELEASED_TEXT)) TH_LOG("%s", out);
		} else {
			EXPECT_NE(NULL, strstr(out, "libbpfarena: arena map 'arena' (100 pages at "
					       "0x100000000000): " UNRELEASED_TEXT)) TH_LOG("%s", out);
		}
	}
}

/* ---- arena_list ---------------------------------------------------------- */

static void list_test(struct __test_metadata *_metadata, FIXTURE_DATA(prog) *self,
		      const FIXTURE_VARIANT(prog) *variant, __u64 cnt)
{
	struct arena_list_head *head;
	struct arena_list_node *n, **pprev;
	struct list_args args = { .cnt = cnt };
	struct bpf_arena *a;
	__s64 sum = 0;
	__u64 i = 0;

	LOAD(O_LIST, NULL, LIST_MAP_EXTRA);
	a = arena_of(_metadata, self->obj);

	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "arena_list_add", &args, sizeof(args)));
	ASSERT_EQ(0, args.err);
	ASSERT_TRUE(in_arena(a, args.head, sizeof(*head))) TH_LOG("head 0x%llx", (unsigned long long)args.head);
	EXPECT_EQ(args.head, (__u64)(uintptr_t)GLOBAL(void *, "list_head"));
	EXPECT_EQ((long)(cnt * (cnt - 1) / 2), GLOBAL(long, "arena_sum"));
	EXPECT_EQ((int)cnt + 1, GLOBAL(int, "test_val"));

	/* user space walks what the program built: newest first, links consistent */
	head = (struct arena_list_head *)(uintptr_t)args.head;
	pprev = &head->first;
	for (n = head->first; n && i <= cnt; n = n->next, i++) {
		struct list_elem *e = (struct list_elem *)n;

		ASSERT_TRUE(in_arena(a, (uintptr_t)n, sizeof(*e)));
		EXPECT_EQ(cnt - 1 - i, e->value);
		EXPECT_EQ(pprev, n->pprev);
		pprev = &n->next;
		sum += (__s64)e->value;
	}
	EXPECT_EQ(cnt, i);
	EXPECT_EQ((__s64)(cnt * (cnt - 1) / 2), sum);

	/* the program deletes everything */
	memset(&args, 0, sizeof(args));
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "arena_list_del", &args, sizeof(args)));
	EXPECT_EQ(0, args.err);
	EXPECT_EQ(cnt, args.n);
	EXPECT_EQ((__s64)(cnt * (cnt - 1) / 2), args.sum);
	EXPECT_EQ((long)(cnt * (cnt - 1) / 2), GLOBAL(long, "arena_sum"));
	EXPECT_EQ(NULL, head->first);
}

TEST_F(prog, list_add_1)
{
	list_test(_metadata, self, variant, 1);
}

TEST_F(prog, list_add_1000)
{
	list_test(_metadata, self, variant, 1000);
}

TEST_F(prog, list_built_by_user_space_summed_by_the_program)
{
	const __u64 cnt = 1000;
	struct arena_list_head *head;
	struct list_args args;
	struct list_elem *e;
	struct bpf_arena *a;
	char *base;
	__u64 i;

	LOAD(O_LIST, NULL, LIST_MAP_EXTRA);
	a = arena_of(_metadata, self->obj);
	base = bpf_arena_base(a);

	/* pages 60.. (touching them allocates them), list in insertion order */
	head = (struct arena_list_head *)(base + 60 * PG);
	head->first = NULL;
	e = (struct list_elem *)(base + 61 * PG);
	for (i = 0; i < cnt; i++, e++) {
		e->value = i + 1;
		e->node.next = head->first;
		if (head->first)
			head->first->pprev = &e->node.next;
		e->node.pprev = &head->first;
		head->first = &e->node;
	}
	memset(&args, 0, sizeof(args));
	args.head = (__u64)(uintptr_t)head;
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "arena_list_sum", &args, sizeof(args)));
	EXPECT_EQ(0, args.err);
	EXPECT_EQ(cnt, args.n);
	EXPECT_EQ((__s64)(cnt * (cnt + 1) / 2), args.sum);
	/* the bounded list_for_each_entry() stops at BPF_ARENA_LIST_WALK_MAX */
	memset(&args, 0, sizeof(args));
	args.head = (__u64)(uintptr_t)head;
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "arena_list_count", &args, sizeof(args)));
	EXPECT_EQ(0, args.err);
	EXPECT_EQ(BPF_ARENA_LIST_WALK_MAX, args.n);
	/* and the program's stores are visible here: every value doubled */
	e = (struct list_elem *)(base + 61 * PG);
	for (i = 0; i < cnt; i++)
		ASSERT_EQ(2 * (i + 1), e[i].value) TH_LOG("element %llu", (unsigned long long)i);
}

/* ---- arena_htab ---------------------------------------------------------- */

TEST_F(prog, htab_built_by_the_program_walked_by_user_space)
{
	struct htab_args args = { 0 };
	struct bpf_arena *a;
	struct htab *htab;
	int k, b, total = 0;

	LOAD(O_HTAB, NULL, 0);
	a = arena_of(_metadata, self->obj);
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "arena_htab", &args, sizeof(args)));
	ASSERT_EQ(0, args.err);
	ASSERT_TRUE(in_arena(a, args.htab, sizeof(*htab)));
	EXPECT_EQ(args.htab, (__u64)(uintptr_t)GLOBAL(void *, "htab_for_user"));
	htab = (struct htab *)(uintptr_t)args.htab;
	ASSERT_TRUE(in_arena(a, (uintptr_t)htab->buckets, 2 * PG));
	ASSERT_EQ((int)(2 * PG / sizeof(struct htab_bucket)), htab->n_buckets);

	/* lookups, as upstream's htab_lookup_elem() run in user space */
	for (k = 0; k < HTAB_KEYS; k++) {
		struct arena_list_head *h = &htab->buckets[k & (htab->n_buckets - 1)].head;
		struct hashtab_elem *l, *found = NULL;

		list_for_each_entry(l, h, hash_node)
			if (l->hash == k && l->key == k)
				found = l;
		ASSERT_NE(NULL, found) TH_LOG("key %d", k);
		EXPECT_EQ(HTAB_KEYS * HTAB_ROUNDS + k, found->value);
	}
	/* every old element was deleted: exactly one per key */
	for (b = 0; b < htab->n_buckets; b++) {
		struct hashtab_elem *l;

		list_for_each_entry(l, &htab->buckets[b].head, hash_node) {
			EXPECT_EQ(b, l->key & (htab->n_buckets - 1));
			EXPECT_TRUE(in_arena(a, (uintptr_t)l, sizeof(*l)));
			total++;
		}
	}
	EXPECT_EQ(HTAB_KEYS, total);
}

/* ---- verifier_arena / verifier_arena_large -------------------------------- */

TEST_F(prog, basic_alloc1)
{
	char *base;

	LOAD(O_VERIFIER, "basic_alloc1", VER_MAP_EXTRA);
	base = bpf_arena_base(arena_of(_metadata, self->obj));
	ASSERT_EQ((void *)(uintptr_t)VER_MAP_EXTRA, (void *)base);
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "basic_alloc1", NULL, 0));
	/* page1 = first page (1), page3 reused the second (3) */
	EXPECT_EQ(1, *(volatile int *)base);
	EXPECT_EQ(3, *(volatile int *)(base + PG));
}

TEST_F(prog, basic_alloc2)
{
	LOAD(O_VERIFIER, "basic_alloc2", VER_MAP_EXTRA);
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "basic_alloc2", NULL, 0));
}

TEST_F(prog, big_alloc1)
{
	struct fault_args args = { 0 };
	struct bpf_arena *a;
	char *base;

	LOAD(O_LARGE, NULL, 0);
	a = arena_of(_metadata, self->obj);
	base = bpf_arena_base(a);
	ASSERT_EQ(1ULL << 32, bpf_arena_size(a));
	ASSERT_EQ(0, (uintptr_t)base & 0xffffffffULL);	/* 4 GiB aligned */
	args.addr = (__u64)(uintptr_t)base;
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "big_alloc1", &args, sizeof(args)));
	EXPECT_EQ((__u64)(uintptr_t)base + PG, args.val);
	EXPECT_EQ((__u64)(uintptr_t)base + (1ULL << 32) - PG, args.val2);
	EXPECT_EQ(3, *(volatile char *)(uintptr_t)args.val);
	EXPECT_EQ(2, *(volatile char *)(uintptr_t)args.val2);
}

/* ---- fault semantics ------------------------------------------------------ */

/* 1 if the page at addr is populated, 0 if not (SEGV_ON_FAULT arena). */
static int populated(struct bpf_arena *a, char *addr)
{
	char c;
	int err = bpf_arena_read(a, &c, addr, 1);

	return err == 0 ? 1 : err == -EFAULT ? 0 : err;
}

TEST_F(prog, load_from_unpopulated_page_reads_zero)
{
	struct fault_args args;
	struct bpf_arena *a;
	char *base;

	LOAD(O_FAULT, NULL, FAULT_MAP_EXTRA);
	a = arena_of(_metadata, self->obj);
	base = bpf_arena_base(a);
	ASSERT_EQ(0, populated(a, base + 5 * PG));

	memset(&args, 0xa5, sizeof(args));
	args.addr = (__u64)(uintptr_t)(base + 5 * PG + 16);
	args.addr2 = (__u64)(uintptr_t)(base + 6 * PG + PG - 4);	/* last u32 of a page */
	args.addr3 = (__u64)(uintptr_t)(base + 15 * PG + PG - 1);	/* last byte of the arena */
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "fault_load", &args, sizeof(args)));
	EXPECT_EQ(0, args.val);
	EXPECT_EQ(0, args.val2);
	EXPECT_EQ(0, args.val3);
	/* the loads populated nothing */
	EXPECT_EQ(0, populated(a, base + 5 * PG));
	EXPECT_EQ(0, populated(a, base + 6 * PG));
	EXPECT_EQ(0, populated(a, base + 15 * PG));

	/* a page the program allocated reads as written, here and there */
	memset(&args, 0, sizeof(args));
	args.addr = (__u64)(uintptr_t)(base + 2 * PG);
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "populate_store", &args, sizeof(args)));
	EXPECT_EQ(0x1234, args.val);
	EXPECT_EQ((__u64)(uintptr_t)(base + 2 * PG), args.val2);
	ASSERT_EQ(1, populated(a, base + 2 * PG));
	EXPECT_EQ(0x1234, *(volatile __u64 *)(base + 2 * PG + 8));
	memset(&args, 0xa5, sizeof(args));
	args.addr = args.addr2 = args.addr3 = (__u64)(uintptr_t)(base + 2 * PG + 8);
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "fault_load", &args, sizeof(args)));
	EXPECT_EQ(0x1234, args.val);
	EXPECT_EQ(0x1234, args.val2);
	EXPECT_EQ(0x34, args.val3);
}

TEST_F(prog, store_to_unpopulated_page_is_dropped)
{
	struct fault_args args;
	struct bpf_arena *a;
	char *base;

	LOAD(O_FAULT, NULL, FAULT_MAP_EXTRA);
	a = arena_of(_metadata, self->obj);
	base = bpf_arena_base(a);

	memset(&args, 0xa5, sizeof(args));
	args.addr = (__u64)(uintptr_t)(base + 7 * PG + 8);
	args.addr2 = (__u64)(uintptr_t)(base + 8 * PG);
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "fault_store", &args, sizeof(args)));
	EXPECT_EQ(0, args.val);		/* the read-back after the store */
	/* the pages stay unpopulated */
	EXPECT_EQ(0, populated(a, base + 7 * PG));
	EXPECT_EQ(0, populated(a, base + 8 * PG));
	/* and read 0 from a program */
	memset(&args, 0xa5, sizeof(args));
	args.addr = (__u64)(uintptr_t)(base + 7 * PG + 8);
	args.addr2 = args.addr3 = (__u64)(uintptr_t)(base + 8 * PG);
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "fault_load", &args, sizeof(args)));
	EXPECT_EQ(0, args.val);
	EXPECT_EQ(0, args.val2);
	EXPECT_EQ(0, args.val3);
}

/*
 * A free of a range that starts at, and has, pages never allocated unmaps
 * every allocated page of it from the kernel window too: a program reads 0
 * from each afterwards, never the old data.
 */
TEST_F(prog, free_of_a_range_with_holes_unmaps_every_page)
{
	static const int used[] = { 1, 3, 4, 9 };	/* of pages 0..9 */
	struct fault_args args;
	struct bpf_arena *a;
	__u64 magic;
	char *base;
	size_t i;

	LOAD(O_FAULT, NULL, FAULT_MAP_EXTRA);
	a = arena_of(_metadata, self->obj);
	if (bpf_arena_kernel_has_native() == 1)
		SKIP(return, "native arena: user space frees no pages (no /dev/bpf_arena)");
	base = bpf_arena_base(a);
	for (i = 0; i < ARRAY_SIZE(used); i++) {
		ASSERT_EQ(0, bpf_arena_user_alloc_pages(a, base + used[i] * PG, 1, -1, NULL));
		magic = 0x5a5a000000000000ULL | used[i];
		memcpy(base + used[i] * PG + 8, &magic, sizeof(magic));
	}
	ASSERT_EQ((int)ARRAY_SIZE(used), bpf_arena_user_free_pages(a, base, 10));
	for (i = 0; i < ARRAY_SIZE(used); i++) {
		memset(&args, 0xa5, sizeof(args));
		args.addr = args.addr2 = args.addr3 = (__u64)(uintptr_t)(base + used[i] * PG + 8);
		ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "fault_load", &args, sizeof(args)));
		EXPECT_EQ(0, args.val) TH_LOG("page %d still mapped after the free", used[i]);
		EXPECT_EQ(0, args.val2);
		EXPECT_EQ(0, args.val3);
		EXPECT_EQ(0, populated(a, base + used[i] * PG));
	}
}

TEST_F(prog, cast_user_of_null_stays_null)
{
	struct fault_args args;
	char *base;

	LOAD(O_FAULT, NULL, FAULT_MAP_EXTRA);
	base = bpf_arena_base(arena_of(_metadata, self->obj));
	ASSERT_EQ(0, (uintptr_t)base & 0xffffffffULL);

	memset(&args, 0xa5, sizeof(args));
	args.addr = 0;
	args.addr2 = (__u64)(uintptr_t)(base + 3 * PG + 8);
	args.addr3 = (__u64)(uintptr_t)base;
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "cast_null", &args, sizeof(args)));
	EXPECT_EQ(0, args.val);				/* NULL stays NULL */
	EXPECT_EQ(args.addr2, args.val2);		/* kern -> user round trip */
	/* upstream (x86 JIT): low 32 bits 0 -> NULL, i.e. the first byte of an
	 * arena at a 4 GiB boundary cannot be told from NULL after cast_user */
	EXPECT_EQ(0, args.val3);
}

/* ---- programs the verifier must reject ------------------------------------ */

struct reject_case {
	const char *prog;
	bool asm_only;		/* clang >= 19 cannot produce the misuse */
	/* upstream's verifier message (6.12); the module gives the same one on 6.1 */
	const char *msg;
};

static const struct reject_case reject_cases[] = {
	{ "two_arenas", false, "Only one arena per program" },
	{ "cast_without_arena", false,
	  "addr_space_cast insn can only be used in a program that has an associated arena" },
	{ "bad_cast", false, "addr_space_cast insn can only convert between address space 1 and 0" },
	{ "not_sleepable", false,
	  "program must be sleepable to call sleepable kfunc bpf_arena_alloc_pages" },
	{ "deref_without_cast", true, "invalid mem access 'scalar'" },
	{ "deref_loaded_pointer", true, "invalid mem access 'scalar'" },
};

static void reject_test(struct __test_metadata *_metadata, FIXTURE_DATA(prog) *self,
			const FIXTURE_VARIANT(prog) *variant, const char *name)
{
	const struct reject_case *c = NULL;
	const char *want;
	unsigned int i;
	int err;

	for (i = 0; i < sizeof(reject_cases) / sizeof(reject_cases[0]); i++)
		if (!strcmp(reject_cases[i].prog, name))
			c = &reject_cases[i];
	ASSERT_NE(NULL, c);
	if (c->asm_only && variant->native_casts)
		SKIP(return, "clang >= 19 always emits the cast: only the asm build has %s", name);
	/* The module lets any program call the kfuncs unless told to act as 6.12. */
	if (!strcmp(name, "not_sleepable"))
		kmod_sleepable_only(true);
	err = open_load(_metadata, &self->obj, variant->build, O_REJECT, name, 0,
			self->log, sizeof(self->log));
	if (!strcmp(name, "not_sleepable"))
		kmod_sleepable_only(false);
	ASSERT_NE(0, err) TH_LOG("%s loaded", name);
	want = c->msg;
	EXPECT_NE(NULL, strstr(self->log, want))
		TH_LOG("%s: verifier log lacks \"%s\":\n%s", name, want, self->log);
}

TEST_F(prog, reject_two_arenas) { reject_test(_metadata, self, variant, "two_arenas"); }
TEST_F(prog, reject_cast_without_arena) { reject_test(_metadata, self, variant, "cast_without_arena"); }
TEST_F(prog, reject_bad_cast) { reject_test(_metadata, self, variant, "bad_cast"); }
TEST_F(prog, reject_not_sleepable) { reject_test(_metadata, self, variant, "not_sleepable"); }
TEST_F(prog, reject_deref_without_cast) { reject_test(_metadata, self, variant, "deref_without_cast"); }
TEST_F(prog, reject_deref_loaded_pointer) { reject_test(_metadata, self, variant, "deref_loaded_pointer"); }

TEST_HARNESS_MAIN

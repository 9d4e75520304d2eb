// SPDX-License-Identifier: GPL-2.0
/*
 * Arena globals (".addr_space.1") with a libbpf >= 1.4 alone: no
 * bpf_arena_object_prepare(), no skeleton.  libbpf creates the arena (with
 * the object's 64-bit map_extra), mmaps it, copies the initial values of the
 * arena globals to its start and resolves every reference to them; the
 * programs tests/progs/arena_globals*.bpf.c read and write the globals, build a list
 * headed by an arena global, allocate with the page-frag allocator whose
 * per-CPU state is in arena globals (upstream style) and fill the
 * `char __arena arr1[100000]` of upstream's arena_htab.  Same assertions on
 * 6.12 (native arena) and on 6.1 with the bpf_arena module, for the clang-19
 * (native casts) and clang-14 (asm casts) builds.
 *
 * Linked statically against bookworm-backports' libbpf 1.4 (cache/backports,
 * scripts/setup-backports.sh), never against
 * the system's libbpf 1.1.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>

#include "kselftest_harness.h"
#include "test_util.h"
#include "bpf_arena.h"
#include "arena_prog_common.h"
#include "arena_globals_common.h"

#if LIBBPF_MAJOR_VERSION < 1 || (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION < 4)
#error "arena_globals_test needs the headers of libbpf >= 1.4 (cache/backports, scripts/setup-backports.sh)"
#endif

#define PG 4096UL

/* ---- the embedded objects ------------------------------------------------ */

EMBED(glob_v3, "arena_globals.v3.bpf.o");
EMBED(glob_asm, "arena_globals.asm.bpf.o");
EMBED(htab_v3, "arena_globals_htab.v3.bpf.o");
EMBED(htab_asm, "arena_globals_htab.asm.bpf.o");

enum obj_id { O_GLOBALS, O_HTAB, O_NR };

static const struct obj_img imgs[2][O_NR] = {
	{ IMG("arena_globals", glob_v3), IMG("arena_globals_htab", htab_v3) },
	{ IMG("arena_globals", glob_asm), IMG("arena_globals_htab", htab_asm) },
};

/* ---- helpers ------------------------------------------------------------- */

FIXTURE(ag) {
	struct bpf_object *obj;
	struct bpf_map *arena;
	char *base;		/* the arena's user mapping (after load) */
	size_t data_sz;		/* bytes of arena globals */
};

/*
 * clang-14 has no BTF_KIND_ENUM64: the object's __ulong(map_extra, 1 << 44)
 * becomes an 8-byte ENUM with value 0, so for the asm build the loader sets
 * map_extra (as tests/arena_prog_test does for libbpf 1.1).
 */
FIXTURE_VARIANT(ag) {
	int build;		/* index into imgs */
	__u64 obj_map_extra;	/* map_extra libbpf reads from the object */
};

FIXTURE_VARIANT_ADD(ag, v3) { .build = 0, .obj_map_extra = AG_MAP_EXTRA };
FIXTURE_VARIANT_ADD(ag, asm) { .build = 1, .obj_map_extra = 0 };

TEST(versions)
{
	struct utsname u;

	ASSERT_EQ(0, uname(&u));
	TH_LOG("kernel %s, libbpf %s (static, bookworm-backports)", u.release,
	       libbpf_version_string());
	ASSERT_EQ(1, libbpf_major_version());
	ASSERT_LE(4, libbpf_minor_version());
}

FIXTURE_SETUP(ag)
{
	self->obj = NULL;
	self->arena = NULL;
	self->base = NULL;
	self->data_sz = 0;
}

FIXTURE_TEARDOWN(ag)
{
	bpf_object__close(self->obj);
}

/* Opens object id of the variant's build; map_extra of the globals object as
 * its source says (1 << 44), whatever the compiler put into BTF. */
static void open_obj(struct __test_metadata *_metadata, FIXTURE_DATA(ag) *self,
		     const FIXTURE_VARIANT(ag) *variant, enum obj_id id)
{
	const struct obj_img *img = &imgs[variant->build][id];
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = img->name);

	self->obj = bpf_object__open_mem(img->start, (size_t)(img->end - img->start), &oo);
	ASSERT_EQ(0, libbpf_get_error(self->obj))
		TH_LOG("open %s: %ld", img->name, libbpf_get_error(self->obj));
	self->arena = bpf_object__find_map_by_name(self->obj, "arena");
	ASSERT_NE(NULL, self->arena);
	if (id == O_GLOBALS) {
		EXPECT_EQ(variant->obj_map_extra, bpf_map__map_extra(self->arena));
		ASSERT_EQ(0, bpf_map__set_map_extra(self->arena, AG_MAP_EXTRA));
	}
}

/* Whether name is one of the space-separated words of list. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

/* Loads the object with only the programs in `only` (space-separated)
 * autoloaded; NULL: all. */
static void load_obj(struct __test_metadata *_metadata, FIXTURE_DATA(ag) *self, const char *only)
{
	struct bpf_program *prog;
	bool found = false;
	size_t sz = 0;
	int err;

	bpf_object__for_each_program(prog, self->obj) {
		bool me = !only || in_list(only, bpf_program__name(prog));

		bpf_program__set_autoload(prog, me);
		found |= me;
	}
	ASSERT_TRUE(found) TH_LOG("no program %s", only);

	/* libbpf's warnings on stderr at once; all it says, debug included, kept */
	libbpf_capture(true);
	err = bpf_object__load(self->obj);
	ASSERT_EQ(0, err) TH_LOG("load of %s failed: %d; libbpf log tail:\n%s",
				 bpf_object__name(self->obj), err, str_tail(libbpf_msgs, 6000));
	/* libbpf >= 1.4: the user mapping of the arena, globals at its start */
	self->base = bpf_map__initial_value(self->arena, &sz);
	ASSERT_NE(NULL, self->base);
	self->data_sz = sz;
}

#define OPEN_LOAD(id, only)							\
	do {									\
		open_obj(_metadata, self, variant, id);			\
		load_obj(_metadata, self, only);				\
	} while (0)

/* Offset and size of variable var in BTF data section sec. */
static size_t var_off(struct __test_metadata *_metadata, struct bpf_object *obj,
		      const char *sec, const char *var, size_t size)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *t;
	int id, i;

	ASSERT_NE(NULL, btf);
	id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);
	ASSERT_LT(0, id) TH_LOG("no DATASEC %s", sec);
	t = btf__type_by_id(btf, (__u32)id);
	vs = btf_var_secinfos(t);
	for (i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);

		if (!strcmp(btf__name_by_offset(btf, v->name_off), var)) {
			ASSERT_EQ(size, vs->size) TH_LOG("%s: size %u", var, vs->size);
			return vs->offset;
		}
	}
	ASSERT_TRUE(false) TH_LOG("no variable %s in %s", var, sec);
	return 0;
}

/* Size of BTF data section sec. */
static size_t sec_size(struct __test_metadata *_metadata, struct bpf_object *obj, const char *sec)
{
	struct btf *btf = bpf_object__btf(obj);
	int id;

	ASSERT_NE(NULL, btf);
	id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);
	ASSERT_LT(0, id) TH_LOG("no DATASEC %s", sec);
	return btf__type_by_id(btf, (__u32)id)->size;
}

/* Arena global var in the arena (after load) or in the initial image (before). */
#define AGV(type, var)								\
	(*(volatile type *)(self->base + var_off(_metadata, self->obj, ".addr_space.1", #var, \
						 sizeof(type))))
#define AGA(type, var, n)							\
	((volatile type *)(self->base + var_off(_metadata, self->obj, ".addr_space.1", #var, \
						sizeof(type) * (n))))

static bool in_arena(FIXTURE_DATA(ag) *self, __u64 p, size_t len)
{
	__u64 b = (__u64)(uintptr_t)self->base;

	return p >= b && p + len <= b + bpf_map__max_entries(self->arena) * PG;
}

/* Past the pages that hold the globals (libbpf faulted them in). */
static bool past_globals(FIXTURE_DATA(ag) *self, __u64 p)
{
	return p >= (__u64)(uintptr_t)self->base + ((self->data_sz + PG - 1) & ~(PG - 1));
}

/* ---- the object before load: libbpf's image of the globals --------------- */

TEST_F(ag, initial_image_before_load)
{
	size_t sz = 0;

	open_obj(_metadata, self, variant, O_GLOBALS);
	EXPECT_EQ(BPF_MAP_TYPE_ARENA, bpf_map__type(self->arena));
	EXPECT_EQ(AG_PAGES, bpf_map__max_entries(self->arena));
	EXPECT_EQ(AG_MAP_EXTRA, bpf_map__map_extra(self->arena));
	self->base = bpf_map__initial_value(self->arena, &sz);
	ASSERT_NE(NULL, self->base);
	EXPECT_EQ(sec_size(_metadata, self->obj, ".addr_space.1"), sz);
	EXPECT_LT(AG_ZERO_N * 8, sz);
	EXPECT_EQ(AG_INIT_VAL, AGV(int, init_val));
	EXPECT_EQ(1, AGA(__u64, init_arr, 4)[0]);
	EXPECT_EQ(4, AGA(__u64, init_arr, 4)[3]);
	EXPECT_EQ(1, AGV(int, test_val));
	EXPECT_EQ(0, AGA(__u64, zero_arr, AG_ZERO_N)[AG_ZERO_N - 1]);
	EXPECT_EQ(0, AGV(__u64, head_ptr));
}

/* ---- load: libbpf creates and maps the arena, copies the globals ---------- */

TEST_F(ag, libbpf_creates_maps_and_fills_the_arena)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	size_t i;

	OPEN_LOAD(O_GLOBALS, "read_globals");
	EXPECT_EQ((void *)(uintptr_t)AG_MAP_EXTRA, (void *)self->base);
	EXPECT_EQ(sec_size(_metadata, self->obj, ".addr_space.1"), self->data_sz);
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, bpf_obj_get_info_by_fd(bpf_map__fd(self->arena), &info, &len));
	EXPECT_EQ(BPF_MAP_TYPE_ARENA, info.type);
	EXPECT_EQ(AG_PAGES, info.max_entries);
	EXPECT_EQ(AG_MAP_EXTRA, info.map_extra);
	EXPECT_EQ(BPF_F_MMAPABLE, info.map_flags);
	EXPECT_EQ(0, info.key_size);
	EXPECT_EQ(0, info.value_size);
	EXPECT_STREQ("arena", info.name);
	/* the values libbpf copied, read through the arena mapping */
	EXPECT_EQ(AG_INIT_VAL, AGV(int, init_val));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(i + 1, AGA(__u64, init_arr, 4)[i]);
	EXPECT_EQ(1, AGV(int, test_val));
	for (i = 0; i < AG_ZERO_N; i++)
		ASSERT_EQ(0, AGA(__u64, zero_arr, AG_ZERO_N)[i]);
}

TEST_F(ag, program_reads_initialised_and_zeroed_globals)
{
	struct ag_args a = { 0 };

	OPEN_LOAD(O_GLOBALS, "read_globals");
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "read_globals", &a, sizeof(a)));
	EXPECT_EQ(0, a.err);
	EXPECT_EQ(AG_INIT_VAL, a.val);
	EXPECT_EQ(1 + 2 + 3 + 4, a.sum);
	EXPECT_EQ(0, a.n);
	/* the program's &init_val is the user address */
	EXPECT_EQ((__u64)(uintptr_t)&AGV(int, init_val), a.addr);
}

TEST_F(ag, program_writes_user_space_reads)
{
	struct ag_args a = { .in = 77, .idx = 513 };

	OPEN_LOAD(O_GLOBALS, "write_globals");
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "write_globals", &a, sizeof(a)));
	EXPECT_EQ(0, a.err);
	EXPECT_EQ(0, a.val);
	EXPECT_EQ(77, AGV(int, init_val));
	EXPECT_EQ(78, AGA(__u64, zero_arr, AG_ZERO_N)[513]);
	EXPECT_EQ(0, AGA(__u64, zero_arr, AG_ZERO_N)[512]);
	EXPECT_EQ(4 + 77, AGA(__u64, init_arr, 4)[3]);
	EXPECT_EQ(1, AGV(__u64, counter));
	a.in = 3;
	a.idx = AG_ZERO_N - 1;		/* the last word of the second page */
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "write_globals", &a, sizeof(a)));
	EXPECT_EQ(1, a.val);
	EXPECT_EQ(2, AGV(__u64, counter));
	EXPECT_EQ(3, AGV(int, init_val));
	EXPECT_EQ(4, AGA(__u64, zero_arr, AG_ZERO_N)[AG_ZERO_N - 1]);
	EXPECT_EQ(4 + 77 + 3, AGA(__u64, init_arr, 4)[3]);
}

TEST_F(ag, user_space_writes_program_reads)
{
	struct ag_args a = { 0 };

	OPEN_LOAD(O_GLOBALS, "read_globals");
	AGV(int, init_val) = 1234;
	AGA(__u64, init_arr, 4)[0] = 100;
	AGA(__u64, zero_arr, AG_ZERO_N)[1000] = 9;
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "read_globals", &a, sizeof(a)));
	EXPECT_EQ(1234, a.val);
	EXPECT_EQ(100 + 2 + 3 + 4, a.sum);
	EXPECT_EQ(1, a.n);
	EXPECT_EQ(1000, a.idx);
}

TEST_F(ag, initial_value_set_before_load)
{
	struct ag_args a = { 0 };
	size_t sz = 0;
	char *img, *copy;

	open_obj(_metadata, self, variant, O_GLOBALS);
	img = bpf_map__initial_value(self->arena, &sz);
	ASSERT_NE(NULL, img);
	copy = malloc(sz);
	ASSERT_NE(NULL, copy);
	memcpy(copy, img, sz);
	self->base = copy;
	AGV(int, init_val) = 42;
	AGA(__u64, zero_arr, AG_ZERO_N)[7] = 1;
	self->base = NULL;
	EXPECT_EQ(-EINVAL, bpf_map__set_initial_value(self->arena, copy, sz - 1));
	EXPECT_EQ(0, bpf_map__set_initial_value(self->arena, copy, sz));
	free(copy);
	load_obj(_metadata, self, "read_globals");
	EXPECT_EQ(-EBUSY, bpf_map__set_initial_value(self->arena, self->base, self->data_sz));
	EXPECT_EQ(42, AGV(int, init_val));
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "read_globals", &a, sizeof(a)));
	EXPECT_EQ(42, a.val);
	EXPECT_EQ(1, a.n);
	EXPECT_EQ(7, a.idx);
}

TEST_F(ag, kernel_chosen_address)
{
	struct ag_args a = { .in = 11, .idx = 0 };
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	open_obj(_metadata, self, variant, O_GLOBALS);
	ASSERT_EQ(0, bpf_map__set_map_extra(self->arena, 0));
	load_obj(_metadata, self, "read_globals write_globals");
	EXPECT_NE((void *)(uintptr_t)AG_MAP_EXTRA, (void *)self->base);
	EXPECT_EQ(0, (uintptr_t)self->base & (PG - 1));
	/* never crossing a 4 GiB boundary */
	EXPECT_EQ((uintptr_t)self->base >> 32, ((uintptr_t)self->base + AG_PAGES * PG - 1) >> 32);
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, bpf_obj_get_info_by_fd(bpf_map__fd(self->arena), &info, &len));
	EXPECT_EQ(0, info.map_extra);
	EXPECT_EQ(AG_INIT_VAL, AGV(int, init_val));
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "read_globals", &a, sizeof(a)));
	EXPECT_EQ(AG_INIT_VAL, a.val);
	EXPECT_EQ((__u64)(uintptr_t)&AGV(int, init_val), a.addr);
	a.in = 11;
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "write_globals", &a, sizeof(a)));
	EXPECT_EQ(11, AGV(int, init_val));
	EXPECT_EQ(12, AGA(__u64, zero_arr, AG_ZERO_N)[0]);
}

/* ---- a list headed by an arena global, allocator state in arena globals --- */

TEST_F(ag, list_headed_by_arena_globals)
{
	const __u64 cnt = 1000;
	struct ag_args a = { .in = cnt };
	volatile struct arena_list_head *head;
	struct arena_list_node *n, **pprev;
	volatile __u64 *cur_page;
	__u64 i = 0, slots = 0;
	__s64 sum = 0;

	OPEN_LOAD(O_GLOBALS, "list_add list_del_all");
	head = &AGV(struct arena_list_head, global_head);
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "list_add", &a, sizeof(a)));
	ASSERT_EQ(0, a.err);
	/* the pointer global holds the user address of the head global */
	EXPECT_EQ((__u64)(uintptr_t)head, a.addr);
	EXPECT_EQ((__u64)(uintptr_t)head, AGV(__u64, head_ptr));
	EXPECT_EQ((long)(cnt * (cnt - 1) / 2), AGV(long, arena_sum));
	EXPECT_EQ((int)cnt + 1, AGV(int, test_val));

	/* user space walks what the program built: newest first */
	pprev = (struct arena_list_node **)&head->first;
	for (n = head->first; n && i <= cnt; n = n->next, i++) {
		struct ag_elem *e = (struct ag_elem *)n;

		ASSERT_TRUE(in_arena(self, (uintptr_t)n, sizeof(*e)));
		ASSERT_TRUE(past_globals(self, (uintptr_t)n))
			TH_LOG("element %p inside the globals (%zu bytes at %p)", (void *)n,
			       self->data_sz, self->base);
		EXPECT_EQ(cnt - 1 - i, e->value);
		EXPECT_EQ(pprev, n->pprev);
		pprev = &n->next;
		sum += (__s64)e->value;
	}
	EXPECT_EQ(cnt, i);
	EXPECT_EQ((__s64)(cnt * (cnt - 1) / 2), sum);

	/* the allocator's per-CPU state: user-form page pointers in the arena */
	cur_page = AGA(__u64, ag_cur_page, 128);
	for (i = 0; i < 128; i++) {
		if (!cur_page[i])
			continue;
		slots++;
		EXPECT_TRUE(in_arena(self, cur_page[i], PG));
		EXPECT_TRUE(past_globals(self, cur_page[i]));
		EXPECT_EQ(0, cur_page[i] & (PG - 1));
		EXPECT_LT(8, AGA(int, ag_cur_offset, 128)[i]);
	}
	EXPECT_LE(1, slots);

	/* the program deletes everything, starting from the pointer global */
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "list_del_all", &a, sizeof(a)));
	EXPECT_EQ(0, a.err);
	EXPECT_EQ(cnt, a.n);
	EXPECT_EQ((__s64)(cnt * (cnt - 1) / 2), (__s64)a.sum);
	EXPECT_EQ(NULL, head->first);
}

/* ---- upstream's arena_htab with arena globals ----------------------------- */

TEST_F(ag, htab_upstream_style)
{
	struct ag_args a = { 0 };
	struct bpf_map *bss = NULL, *m;
	volatile char *arr;
	struct htab *htab;
	size_t sz = 0, i;
	char *bss_mem;
	int k, b, total = 0;

	OPEN_LOAD(O_HTAB, NULL);
	arr = AGA(char, arr1, AGH_ARR_SZ);
	/* as upstream: "fault-in a page with pgoff == 0 as sanity check" */
	*(volatile int *)arr = 0x55aa;
	ASSERT_EQ(0, obj_run_ctx(_metadata, self->obj, "arena_htab_llvm", &a, sizeof(a)));
	ASSERT_EQ(0, a.err);
	bpf_object__for_each_map(m, self->obj)
		if (bpf_map__is_internal(m) && strstr(bpf_map__name(m), ".bss"))
			bss = m;
	ASSERT_NE(NULL, bss);
	/*
	 * The live .bss through the map (libbpf 1.5 also maps .bss over its
	 * map, so bpf_map__initial_value() would show it; 1.4 does not).
	 */
	sz = bpf_map__value_size(bss);
	bss_mem = calloc(1, sz);
	ASSERT_NE(NULL, bss_mem);
	k = 0;
	ASSERT_EQ(0, bpf_map__lookup_elem(bss, &k, sizeof(k), bss_mem, sz, 0));
	EXPECT_EQ(a.addr, *(__u64 *)(bss_mem + var_off(_metadata, self->obj, ".bss",
						       "htab_for_user", 8)));
	free(bss_mem);
	for (i = 0; i < AGH_ARR_SZ; i++)
		ASSERT_EQ((char)i, arr[i]) TH_LOG("arr1[%zu]", i);

	htab = (struct htab *)(uintptr_t)a.addr;
	ASSERT_TRUE(in_arena(self, a.addr, sizeof(*htab)));
	ASSERT_TRUE(past_globals(self, a.addr));
	ASSERT_TRUE(in_arena(self, (uintptr_t)htab->buckets, 2 * PG));
	ASSERT_TRUE(past_globals(self, (uintptr_t)htab->buckets));
	ASSERT_EQ((int)(2 * PG / sizeof(struct htab_bucket)), htab->n_buckets);
	for (k = 0; k < AGH_KEYS; k++) {
		struct arena_list_head *h = &htab->buckets[k & (htab->n_buckets - 1)].head;
		struct hashtab_elem *l, *found = NULL;

		list_for_each_entry(l, h, hash_node)
			if (l->hash == k && l->key == k)
				found = l;
		ASSERT_NE(NULL, found) TH_LOG("key %d", k);
		EXPECT_EQ(AGH_KEYS * AGH_ROUNDS + k, found->value);
	}
	for (b = 0; b < htab->n_buckets; b++) {
		struct hashtab_elem *l;

		list_for_each_entry(l, &htab->buckets[b].head, hash_node) {
			EXPECT_EQ(b, l->key & (htab->n_buckets - 1));
			EXPECT_TRUE(in_arena(self, (uintptr_t)l, sizeof(*l)));
			EXPECT_TRUE(past_globals(self, (uintptr_t)l));
			total++;
		}
	}
	EXPECT_EQ(AGH_KEYS, total);
}

TEST_HARNESS_MAIN

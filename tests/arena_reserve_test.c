// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_arena_reserve_pages() (upstream 6.17), on 6.1 + bpf_arena.ko: upstream's
 * verifier_arena.c reserve tests (basic_reserve1/2, reserve_twice,
 * reserve_invalid_region) from a sleepable syscall program and, as
 * upstream's *_nosleep copies, from a non-sleepable TC program; what a
 * reserved page is to programs (reads 0, stores dropped), to alloc (never
 * handed out), to free (released) and to user space (upstream: a fault on a
 * reserved page populates it, unless BPF_F_SEGV_ON_FAULT: SIGSEGV).  6.12 has
 * no such kfunc: the tests skip there, saying so.
 */
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "arena_kfunc_common.h"
#include "test_util.h"

EMBED(resv_v3, "arena_reserve.v3.bpf.o");
EMBED(resv_asm, "arena_reserve.asm.bpf.o");

static const struct obj_img imgs[2] = {
	{ "arena_reserve", resv_v3_start, resv_v3_end },
	{ "arena_reserve", resv_asm_start, resv_asm_end },
};

FIXTURE(resv) {
	struct bpf_object *obj;
	char log[1 << 16];
};

FIXTURE_VARIANT(resv) {
	int build;
};

FIXTURE_VARIANT_ADD(resv, v3) { .build = 0 };
FIXTURE_VARIANT_ADD(resv, asm) { .build = 1 };

FIXTURE_SETUP(resv)
{
	self->obj = NULL;
}

/* In the test body: a SKIP in the fixture setup does not stop the body on 6.1's harness. */
#define NEED_RESERVE()								\
	do {									\
		if (kernel_has_native_arena())					\
			SKIP(return, "bpf_arena_reserve_pages() is upstream 6.17; this kernel's arena has none"); \
	} while (0)

FIXTURE_TEARDOWN(resv)
{
	bpf_arena_object_close(self->obj);
}

static void set_segv(struct bpf_object *obj, void *arg)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "arena");

	(void)arg;
	bpf_map__set_map_flags(map, BPF_F_MMAPABLE | BPF_ARENA_F_SEGV_ON_FAULT);
}

/* Loads program name alone (flags: SEGV_ON_FAULT arena) and runs it: its return value. */
static __u32 load_run(struct __test_metadata *_metadata, FIXTURE_DATA(resv) *self,
		      int build, const char *name, bool segv)
{
	const char *only[] = { name, NULL };
	__u32 ret = ~0U;
	int err;

	err = obj_open_load(&imgs[build], &self->obj, only, RESV_MAP_EXTRA,
			   segv ? set_segv : NULL, NULL, self->log, sizeof(self->log));
	ASSERT_EQ(0, err) TH_LOG("load %s: %d\n%s", name, err, self->log);
	ASSERT_EQ(0, obj_run(self->obj, name, &ret)) TH_LOG("run %s: %s", name, strerror(errno));
	return ret;
}

#define BOTH_TESTS(name)							\
	TEST_F(resv, name##_sleepable)						\
	{									\
		NEED_RESERVE();							\
		EXPECT_EQ(0, load_run(_metadata, self, variant->build, #name "_s", false)); \
	}									\
	TEST_F(resv, name##_nosleep)						\
	{									\
		NEED_RESERVE();							\
		EXPECT_EQ(0, load_run(_metadata, self, variant->build, #name "_nosleep", false)); \
	}

BOTH_TESTS(basic_reserve1)
BOTH_TESTS(basic_reserve2)
BOTH_TESTS(reserve_twice)
BOTH_TESTS(reserve_invalid_region)
BOTH_TESTS(reserve_semantics)

/* 1 if the page at addr can be read, 0 if reading it faults. */
static int readable(struct bpf_arena *a, const char *addr, char *c)
{
	int err = bpf_arena_read(a, c, addr, 1);

	return err == 0 ? 1 : err == -EFAULT ? 0 : err;
}

/*
 * reserve_semantics leaves page 1 reserved and page 0 allocated (7 at 0).
 * User space: as upstream, a fault on the reserved page populates it (a
 * zeroed page); from then on it is an ordinary allocated page.
 */
TEST_F(resv, user_fault_populates_reserved_page)
{
	struct bpf_map *map;
	struct bpf_arena *a;
	char *base, c = 1;

	NEED_RESERVE();
	ASSERT_EQ(0, load_run(_metadata, self, variant->build, "reserve_semantics_s", false));
	map = bpf_object__find_map_by_name(self->obj, "arena");
	a = bpf_arena_object_arena(map);
	ASSERT_NE(NULL, a);
	base = bpf_arena_base(a);
	ASSERT_EQ((char *)(uintptr_t)RESV_BASE, base);
	EXPECT_EQ(7, *(volatile char *)base);
	ASSERT_EQ(1, readable(a, base + KF_PG, &c));
	EXPECT_EQ(0, c);
	base[KF_PG] = 42;
	EXPECT_EQ(42, *(volatile char *)(base + KF_PG));
}

/* With BPF_F_SEGV_ON_FAULT a reserved page faults for user space. */
TEST_F(resv, user_fault_on_reserved_page_segv_on_fault)
{
	struct bpf_arena *a;
	char *base, c;

	NEED_RESERVE();
	ASSERT_EQ(0, load_run(_metadata, self, variant->build, "reserve_semantics_s", true));
	a = bpf_arena_object_arena(bpf_object__find_map_by_name(self->obj, "arena"));
	ASSERT_NE(NULL, a);
	base = bpf_arena_base(a);
	ASSERT_EQ(1, readable(a, base, &c));
	EXPECT_EQ(7, c);
	EXPECT_EQ(0, readable(a, base + KF_PG, &c));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * The upstream way, with the packages of Debian bookworm-backports: a
 * skeleton that bpftool 7.5 generated (`bpftool gen skeleton`) from an
 * object with __arena globals, __ulong(map_extra, 1 << 44), a page_frag
 * allocator whose state is in arena globals and a list headed by an arena
 * global (tests/progs/arena_globals.bpf.c), loaded by libbpf 1.4 (the
 * static libbpf.a of libbpf-dev from bookworm-backports).  The loader uses
 * the skeleton's skel->arena->VAR access to the globals, as upstream's
 * prog_tests/arena_list.c does; no libbpfarena call is needed.  Same
 * assertions on 6.12 (native arena) and on 6.1 with the bpf_arena module,
 * for the clang-19 (native casts) and clang-14 (asm casts) builds.
 *
 * The skeleton headers are generated at build time into
 * build/tests/progs/arena_globals.{v3,asm}.skel.h
 * (tests/progs/progs.mk).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>

#include "kselftest_harness.h"
#include "test_util.h"
#include "bpf_arena.h"
#include "bpf_arena_libbpf.h"
#include "arena_globals_common.h"

#if LIBBPF_MAJOR_VERSION < 1 || (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION < 4)
#error "arena_skel_test needs the headers of libbpf >= 1.4 (cache/backports, scripts/setup-backports.sh)"
#endif

/*
 * The skeleton's struct for the arena globals names the BPF side's types;
 * user space declares them as upstream's prog_tests do (bpf_arena.h gives
 * struct arena_list_head, with __arena empty in user space).
 */
typedef struct arena_list_head *ag_head_ptr_t;
typedef void *ag_page_t;

#include "arena_globals.v3.skel.h"
#include "arena_globals.asm.skel.h"

#define PG 4096UL
#define NR_SLOTS 128	/* AG_NR_CPUS of arena_globals_alloc.h */

TEST(versions)
{
	struct utsname u;

	ASSERT_EQ(0, uname(&u));
	TH_LOG("kernel %s, libbpf %s (bookworm-backports, static), skeletons by %s",
	       u.release, libbpf_version_string(), BPFTOOL_VERSION);
	ASSERT_EQ(1, libbpf_major_version());
	ASSERT_LE(4, libbpf_minor_version());
}

/*
 * One set of tests per skeleton: SKEL is the skeleton's name (struct SKEL,
 * SKEL__open() ...), OBJ_MAP_EXTRA the map_extra libbpf reads from the
 * object (clang-14 has no BTF_KIND_ENUM64: its __ulong(map_extra, 1 << 44)
 * is an 8-byte enum of value 0, so the loader sets it before load).
 */
#define SKEL_TESTS(SKEL, OBJ_MAP_EXTRA)						\
										\
static struct SKEL *SKEL##_up(struct __test_metadata *_metadata)		\
{										\
	struct SKEL *skel = SKEL##__open();					\
										\
	ASSERT_NE(NULL, skel) TH_LOG(#SKEL "__open: %s", strerror(errno));	\
	EXPECT_EQ((__u64)(OBJ_MAP_EXTRA), bpf_map__map_extra(skel->maps.arena)); \
	ASSERT_EQ(0, bpf_map__set_map_extra(skel->maps.arena, AG_MAP_EXTRA));	\
	ASSERT_EQ(0, SKEL##__load(skel)) TH_LOG(#SKEL "__load: %s", strerror(errno)); \
	/* libbpf mapped the arena at map_extra; skel->arena is its start */	\
	ASSERT_NE(NULL, skel->arena);						\
	EXPECT_EQ(AG_MAP_EXTRA, (__u64)(uintptr_t)skel->arena);			\
	return skel;								\
}										\
										\
TEST(SKEL##_globals_initialised_through_skel_arena)				\
{										\
	struct SKEL *skel = SKEL##_up(_metadata);				\
	size_t sz = 0;								\
	int i, nz = 0;								\
										\
	EXPECT_EQ((void *)skel->arena, bpf_map__initial_value(skel->maps.arena, &sz)); \
	EXPECT_LE(sizeof(*skel->arena), sz);					\
	EXPECT_EQ(AG_INIT_VAL, skel->arena->init_val);				\
	for (i = 0; i < 4; i++)							\
		EXPECT_EQ((__u64)i + 1, skel->arena->init_arr[i]);		\
	for (i = 0; i < AG_ZERO_N; i++)						\
		nz += skel->arena->zero_arr[i] != 0;				\
	EXPECT_EQ(0, nz);							\
	EXPECT_EQ(1, skel->arena->test_val);					\
	EXPECT_EQ(NULL, skel->arena->global_head.first);			\
	SKEL##__destroy(skel);							\
}										\
										\
TEST(SKEL##_user_writes_program_reads)						\
{										\
	struct SKEL *skel = SKEL##_up(_metadata);				\
	struct ag_args a = {};							\
										\
	skel->arena->init_val = 42;						\
	skel->arena->init_arr[0] = 100;						\
	skel->arena->zero_arr[777] = 9;						\
	ASSERT_EQ(0, prog_run_ctx(_metadata, skel->progs.read_globals, &a, sizeof(a)));	\
	EXPECT_EQ(42, a.val);							\
	EXPECT_EQ(100 + 2 + 3 + 4, a.sum);					\
	EXPECT_EQ(1, a.n);							\
	EXPECT_EQ(777, a.idx);							\
	/* the program sees the global at the address user space does */	\
	EXPECT_EQ((__u64)(uintptr_t)&skel->arena->init_val, a.addr);		\
	SKEL##__destroy(skel);							\
}										\
										\
TEST(SKEL##_program_writes_user_reads)						\
{										\
	struct SKEL *skel = SKEL##_up(_metadata);				\
	struct ag_args a = { .in = 11, .idx = 3 };				\
										\
	ASSERT_EQ(0, prog_run_ctx(_metadata, skel->progs.write_globals, &a, sizeof(a)));	\
	EXPECT_EQ(0, a.val);	/* the old counter */				\
	EXPECT_EQ(11, skel->arena->init_val);					\
	EXPECT_EQ(12, skel->arena->zero_arr[3]);				\
	EXPECT_EQ(4 + 11, skel->arena->init_arr[3]);				\
	EXPECT_EQ(1, skel->arena->counter);					\
	SKEL##__destroy(skel);							\
}										\
										\
TEST(SKEL##_list_and_page_frag_allocator)					\
{										\
	struct SKEL *skel = SKEL##_up(_metadata);				\
	const __u64 cnt = 500;							\
	struct ag_args a = { .in = cnt };					\
	char *lo = (char *)skel->arena, *hi = lo + AG_PAGES * PG;		\
	char *globals_end = lo + ((sizeof(*skel->arena) + PG - 1) & ~(PG - 1));	\
	struct arena_list_node *n, **pprev;					\
	__u64 i = 0;								\
	__s64 sum = 0;								\
	int slots = 0;								\
										\
	ASSERT_EQ(0, prog_run_ctx(_metadata, skel->progs.list_add, &a, sizeof(a)));	\
	ASSERT_EQ(0, a.err);							\
	/* the pointer global holds the user address of the head global */	\
	EXPECT_EQ(&skel->arena->global_head, skel->arena->head_ptr);		\
	EXPECT_EQ((long)(cnt * (cnt - 1) / 2), skel->arena->arena_sum);		\
	EXPECT_EQ((int)cnt + 1, skel->arena->test_val);				\
	/* user space walks what the program built, newest first */		\
	pprev = &skel->arena->global_head.first;				\
	for (n = skel->arena->global_head.first; n && i <= cnt; n = n->next, i++) { \
		struct ag_elem *e = (struct ag_elem *)n;			\
										\
		ASSERT_TRUE((char *)e >= globals_end && (char *)(e + 1) <= hi)	\
			TH_LOG("element %p outside [%p, %p)", (void *)e,	\
			       (void *)globals_end, (void *)hi);		\
		EXPECT_EQ(cnt - 1 - i, e->value);				\
		EXPECT_EQ(pprev, n->pprev);					\
		pprev = &n->next;						\
		sum += (__s64)e->value;						\
	}									\
	EXPECT_EQ(cnt, i);							\
	EXPECT_EQ((__s64)(cnt * (cnt - 1) / 2), sum);				\
	/* the allocator's per-CPU state, read through skel->arena */		\
	for (i = 0; i < NR_SLOTS; i++) {					\
		char *pg = skel->arena->ag_cur_page[i];				\
										\
		if (!pg)							\
			continue;						\
		slots++;							\
		EXPECT_TRUE(pg >= globals_end && pg + PG <= hi);		\
		EXPECT_EQ(0, (uintptr_t)pg & (PG - 1));				\
		EXPECT_LT(8, skel->arena->ag_cur_offset[i]);			\
	}									\
	EXPECT_LE(1, slots);							\
	memset(&a, 0, sizeof(a));						\
	ASSERT_EQ(0, prog_run_ctx(_metadata, skel->progs.list_del_all, &a, sizeof(a)));	\
	EXPECT_EQ(0, a.err);							\
	EXPECT_EQ(cnt, a.n);							\
	EXPECT_EQ((__s64)(cnt * (cnt - 1) / 2), (__s64)a.sum);			\
	EXPECT_EQ(NULL, skel->arena->global_head.first);			\
	SKEL##__destroy(skel);							\
}										\
										\
/* A loader written for libbpf 1.1 (bpf_arena_object_prepare()) running	\
 * with libbpf 1.4: the call steps aside and the getters use libbpf's mapping. */ \
TEST(SKEL##_libbpf11_style_prepare_steps_aside)				\
{										\
	struct SKEL *skel = SKEL##__open();					\
	struct bpf_arena *a;							\
										\
	ASSERT_NE(NULL, skel);							\
	ASSERT_EQ(0, bpf_map__set_map_extra(skel->maps.arena, AG_MAP_EXTRA));	\
	ASSERT_EQ(0, bpf_arena_object_prepare(skel->obj));			\
	ASSERT_EQ(0, bpf_arena_object_prepare(skel->obj));	/* idempotent */ \
	ASSERT_EQ(0, SKEL##__load(skel));					\
	ASSERT_EQ(AG_MAP_EXTRA, (__u64)(uintptr_t)skel->arena);			\
	EXPECT_EQ(AG_INIT_VAL, skel->arena->init_val);				\
	a = bpf_arena_object_arena(skel->maps.arena);				\
	ASSERT_NE(NULL, a);							\
	EXPECT_EQ((void *)skel->arena, bpf_arena_base(a));			\
	EXPECT_EQ((size_t)AG_PAGES * PG, bpf_arena_size(a));			\
	EXPECT_EQ((void *)skel->arena, bpf_arena_object_base(skel->maps.arena)); \
	/* release borrows nothing away: libbpf's mapping stays */		\
	bpf_arena_object_release(skel->obj);					\
	EXPECT_EQ(AG_INIT_VAL, skel->arena->init_val);				\
	SKEL##__destroy(skel);							\
}

SKEL_TESTS(arena_globals_v3, AG_MAP_EXTRA)
SKEL_TESTS(arena_globals_asm, 0)

TEST_HARNESS_MAIN

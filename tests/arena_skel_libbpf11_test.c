// SPDX-License-Identifier: GPL-2.0
/*
 * The Debian 12 stock toolchain: a skeleton that bookworm's bpftool 7.1
 * generated from an arena object without arena globals (tests/progs/
 * arena_prog_list.bpf.c: state in .bss/.data), loaded by bookworm's libbpf 1.1
 * (the system's, /usr/lib) with libbpfarena creating and mapping the arena:
 *
 *	skel = NAME__open();
 *	bpf_map__set_map_extra(skel->maps.arena, 1ULL << 44);	// 64-bit address
 *	bpf_arena_object_prepare(skel->obj);			// before load
 *	NAME__load(skel);
 *	base = bpf_arena_object_base(skel->maps.arena);
 *	...
 *	bpf_arena_object_release(skel->obj);			// before destroy
 *	NAME__destroy(skel);
 *
 * As README "Skeletons with libbpf 1.1" shows.  Same assertions on 6.12
 * (native arena) and on 6.1 with the bpf_arena module, for the clang-19
 * (native casts) and clang-14 (asm casts) builds.  The skeleton headers are
 * generated at build time into build/tests/progs/arena_prog_list.{v3,asm}.skel.h
 * (tests/progs/progs.mk).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "test_util.h"
#include "bpf_arena.h"
#include "bpf_arena_libbpf.h"
#include "arena_prog_common.h"

#include "arena_prog_list.v3.skel.h"
#include "arena_prog_list.asm.skel.h"

/* libbpfarena's messages, kept for the tests that check a warning. */
static char msgs[8192];

static int keep_msgs(enum bpf_arena_print_level level, const char *fmt, va_list args)
{
	size_t len = strlen(msgs);

	if (level == BPF_ARENA_DEBUG || len >= sizeof(msgs) - 1)
		return 0;
	vsnprintf(msgs + len, sizeof(msgs) - len, fmt, args);
	fprintf(stderr, "# (captured) %s", msgs + len);
	return 0;
}

#define PG 4096UL
#define MAP_EXTRA (1ULL << 44)
#define ARENA_PAGES 100	/* max_entries of arena_prog_list.bpf.c */

TEST(versions)
{
	struct utsname u;

	ASSERT_EQ(0, uname(&u));
	TH_LOG("kernel %s, libbpf %s (system), skeletons by %s", u.release,
	       libbpf_version_string(), BPFTOOL_VERSION);
	ASSERT_EQ(1, libbpf_major_version());
}

/* SKEL: the skeleton's name (struct SKEL, SKEL__open() ...). */
#define SKEL_TESTS(SKEL)							\
										\
static struct SKEL *SKEL##_up(struct __test_metadata *_metadata, char **base)	\
{										\
	struct SKEL *skel = SKEL##__open();					\
										\
	ASSERT_NE(NULL, skel) TH_LOG(#SKEL "__open: %s", strerror(errno));	\
	ASSERT_EQ(0, bpf_map__set_map_extra(skel->maps.arena, MAP_EXTRA));	\
	ASSERT_EQ(0, bpf_arena_object_prepare(skel->obj));			\
	ASSERT_EQ(0, SKEL##__load(skel)) TH_LOG(#SKEL "__load: %s", strerror(errno)); \
	*base = bpf_arena_object_base(skel->maps.arena);			\
	ASSERT_EQ(MAP_EXTRA, (__u64)(uintptr_t)*base);				\
	return skel;								\
}										\
										\
TEST(SKEL##_program_builds_list_user_walks_it)					\
{										\
	char *base = NULL;							\
	struct SKEL *skel = SKEL##_up(_metadata, &base);			\
	const __u64 cnt = 300;							\
	struct list_args a = { .cnt = cnt };					\
	struct arena_list_head *head;						\
	struct arena_list_node *n, **pprev;					\
	__u64 i = 0;								\
	__s64 sum = 0;								\
										\
	EXPECT_EQ(1, skel->data->test_val);					\
	ASSERT_EQ(0, prog_run_ctx(_metadata, skel->progs.arena_list_add, &a, sizeof(a)));	\
	ASSERT_EQ(0, a.err);							\
	/* .bss and .data through the skeleton (libbpf 1.1 maps them) */	\
	head = skel->bss->list_head;						\
	EXPECT_EQ(a.head, (__u64)(uintptr_t)head);				\
	ASSERT_TRUE((char *)head >= base && (char *)(head + 1) <= base + ARENA_PAGES * PG); \
	EXPECT_EQ((long)(cnt * (cnt - 1) / 2), skel->bss->arena_sum);		\
	EXPECT_EQ((int)cnt + 1, skel->data->test_val);				\
	pprev = &head->first;							\
	for (n = head->first; n && i <= cnt; n = n->next, i++) {		\
		struct list_elem *e = (struct list_elem *)n;			\
										\
		ASSERT_TRUE((char *)e >= base && (char *)(e + 1) <= base + ARENA_PAGES * PG); \
		EXPECT_EQ(cnt - 1 - i, e->value);				\
		EXPECT_EQ(pprev, n->pprev);					\
		pprev = &n->next;						\
		sum += (__s64)e->value;						\
	}									\
	EXPECT_EQ(cnt, i);							\
	EXPECT_EQ((__s64)(cnt * (cnt - 1) / 2), sum);				\
	memset(&a, 0, sizeof(a));						\
	ASSERT_EQ(0, prog_run_ctx(_metadata, skel->progs.arena_list_del, &a, sizeof(a)));	\
	EXPECT_EQ(0, a.err);							\
	EXPECT_EQ(cnt, a.n);							\
	EXPECT_EQ(NULL, head->first);						\
	/* release before destroy: the libbpfarena arena, then libbpf's object */ \
	bpf_arena_object_release(skel->obj);					\
	EXPECT_EQ(NULL, bpf_arena_object_base(skel->maps.arena));		\
	SKEL##__destroy(skel);							\
}										\
										\
TEST(SKEL##_user_builds_list_program_sums_it)					\
{										\
	char *base = NULL;							\
	struct SKEL *skel = SKEL##_up(_metadata, &base);			\
	struct arena_list_head *head = (struct arena_list_head *)(base + 50 * PG); \
	struct list_elem *e = (struct list_elem *)(base + 51 * PG);		\
	struct list_args a = { .head = (__u64)(uintptr_t)head };		\
	int i;									\
										\
	/* plain user-space pointers: the arena is mapped at map_extra */	\
	head->first = NULL;							\
	for (i = 0; i < 10; i++) {						\
		e[i].value = (__u64)i + 1;					\
		e[i].node.next = head->first;					\
		if (head->first)						\
			head->first->pprev = &e[i].node.next;			\
		e[i].node.pprev = &head->first;					\
		head->first = &e[i].node;					\
	}									\
	ASSERT_EQ(0, prog_run_ctx(_metadata, skel->progs.arena_list_sum, &a, sizeof(a)));	\
	EXPECT_EQ(0, a.err);							\
	EXPECT_EQ(10, a.n);							\
	EXPECT_EQ(55, a.sum);							\
	for (i = 0; i < 10; i++)						\
		EXPECT_EQ(2 * ((__u64)i + 1), e[i].value);			\
	bpf_arena_object_release(skel->obj);					\
	SKEL##__destroy(skel);							\
}										\
										\
/* Forgetting the prepare call: a warning naming it, and a late call maps. */	\
TEST(SKEL##_unprepared_load_warns_and_late_prepare_maps)			\
{										\
	struct SKEL *skel = SKEL##__open();					\
	struct list_args a = { .cnt = 3 };					\
	bpf_arena_print_fn_t old;						\
	char *base;								\
										\
	ASSERT_NE(NULL, skel);							\
	ASSERT_EQ(0, bpf_map__set_map_extra(skel->maps.arena, MAP_EXTRA));	\
	/* libbpf 1.1 creates the arena itself (the module or the kernel	\
	 * accepts map_extra) but does not map it */				\
	ASSERT_EQ(0, SKEL##__load(skel));					\
	ASSERT_EQ(0, prog_run_ctx(_metadata, skel->progs.arena_list_add, &a, sizeof(a)));	\
	ASSERT_EQ(0, a.err);							\
	msgs[0] = 0;								\
	old = bpf_arena_set_print(keep_msgs);					\
	base = bpf_arena_object_base(skel->maps.arena);				\
	EXPECT_EQ(NULL, base);							\
	EXPECT_NE(NULL, strstr(msgs, "reached bpf_object__load() unprepared"))	\
		TH_LOG("messages: %s", msgs);					\
	EXPECT_NE(NULL, strstr(msgs, "bpf_arena_object_prepare(obj)"));	\
	msgs[0] = 0;								\
	EXPECT_EQ(0, bpf_arena_object_prepare(skel->obj));			\
	EXPECT_NE(NULL, strstr(msgs, "called after bpf_object__load()"))	\
		TH_LOG("messages: %s", msgs);					\
	bpf_arena_set_print(old);						\
	/* now mapped at map_extra: what the program built is reachable */	\
	base = bpf_arena_object_base(skel->maps.arena);				\
	ASSERT_EQ(MAP_EXTRA, (__u64)(uintptr_t)base);				\
	ASSERT_NE(NULL, skel->bss->list_head);					\
	EXPECT_NE(NULL, skel->bss->list_head->first);				\
	EXPECT_EQ(2, ((struct list_elem *)skel->bss->list_head->first)->value);	\
	bpf_arena_object_release(skel->obj);					\
	SKEL##__destroy(skel);							\
}

SKEL_TESTS(arena_list_v3)
SKEL_TESTS(arena_list_asm)

TEST_HARNESS_MAIN

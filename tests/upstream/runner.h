/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runner of upstream's arena selftests (tests/upstream/runner.c): KTAP
 * output, per-subtest assertions, and the embedded BPF objects.
 */
#ifndef UP_RUNNER_H
#define UP_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <bpf/libbpf.h>

struct up_obj {
	const char *name;
	const unsigned char *data;
	size_t size;
};

/* The embedded object NAME.bpf.o (runner.c), or exits. */
const struct up_obj *up_obj(const char *name);

/*
 * Subtests, as test_progs' test__start_subtest()/test__end_subtest():
 * each prints one KTAP line; an assertion that fails marks the current one.
 */
void up_start(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void up_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void up_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void up_end(void);
bool up_failed(void);

/* test_progs.h's ASSERT_* with the same meaning (true when it held). */
static inline bool up_assert_ok(long long v, const char *what)
{
	if (v)
		up_fail("%s: unexpected error %lld (errno %d)", what, v, errno);
	return !v;
}

static inline bool up_assert_eq(long long a, long long b, const char *what)
{
	if (a != b)
		up_fail("%s: %lld != %lld (expected)", what, a, b);
	return a == b;
}

static inline bool up_assert_ok_ptr(const void *p, const char *what)
{
	bool ok = p && !libbpf_get_error(p);

	if (!ok)
		up_fail("%s: NULL or error pointer (errno %d)", what, errno);
	return ok;
}

#define UP_ASSERT_OK(v, what) up_assert_ok((long long)(v), what)
#define UP_ASSERT_EQ(a, b, what) up_assert_eq((long long)(a), (long long)(b), what)
#define UP_ASSERT_OK_PTR(p, what) up_assert_ok_ptr(p, what)

/* On 6.1 the module provides arena; on 6.12 the kernel does. */
bool up_on_module(void);
/* The last lines of a verifier log, as TAP comments. */
void up_emit_log(const char *log);

/* A variable of an object's ".addr_space.1" section in the mapped arena. */
void *up_arena_var(struct bpf_object *obj, const char *name);
/* A variable of a global data section (".bss", ".data") of a loaded object. */
void *up_global_var(struct bpf_object *obj, const char *sec, const char *name);

/* Ports of prog_tests/ drivers (runner_atomics.c, runner_loops.c). */
void up_test_arena_atomics(void);
void up_test_arena_list(void);
void up_test_arena_htab(void);

#endif /* UP_RUNNER_H */

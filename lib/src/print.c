// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Messages: the settable print callback (libbpf's model). */
#include <stdio.h>

#include "internal.h"

static int default_print(enum bpf_arena_print_level level, const char *fmt, va_list args)
{
	if (level == BPF_ARENA_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static bpf_arena_print_fn_t print_fn = default_print;

BA_API bpf_arena_print_fn_t bpf_arena_set_print(bpf_arena_print_fn_t fn)
{
	return __atomic_exchange_n(&print_fn, fn, __ATOMIC_ACQ_REL);
}

void lbpfa_print(enum bpf_arena_print_level level, const char *fmt, ...)
{
	bpf_arena_print_fn_t fn = __atomic_load_n(&print_fn, __ATOMIC_ACQUIRE);
	int saved_errno = errno;
	va_list args;

	if (!fn)
		return;
	va_start(args, fmt);
	fn(level, fmt, args);
	va_end(args);
	errno = saved_errno;
}

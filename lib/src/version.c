// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Placeholder translation unit so the library builds before the API lands. */
#include "bpf_arena_lib.h"

__attribute__((visibility("default"))) const char *bpf_arena_lib_version(void)
{
	return BPF_ARENA_LIB_VERSION_STRING;
}

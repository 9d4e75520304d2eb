// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The library's version. */
#include "internal.h"

BA_API const char *bpf_arena_lib_version(void)
{
	return BPF_ARENA_LIB_VERSION_STRING;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* libbpfarena: the user-space API.  See README.md, "Library". */
#ifndef BPF_ARENA_LIB_H
#define BPF_ARENA_LIB_H

#define BPF_ARENA_LIB_VERSION_STRING "0.1.0"

const char *bpf_arena_lib_version(void);

#endif

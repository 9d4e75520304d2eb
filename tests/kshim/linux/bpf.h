/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in (tests/kshim/README): the uapi header, and the kernel's fixed-size types. */
#ifndef KSHIM_LINUX_BPF_H
#define KSHIM_LINUX_BPF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include_next <linux/bpf.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#endif

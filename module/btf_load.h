/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_BTF_LOAD_H
#define BPF_ARENA_BTF_LOAD_H

#include <linux/ptrace.h>
#include <linux/types.h>

/* BPF_BTF_LOAD through the bpf() hook; orig is the kernel's bpf(). */
long arena_btf_load(const struct pt_regs *regs, long (*orig)(const struct pt_regs *regs));

/* Loads a BTF blob the module generated (kernel memory); an fd or -errno. */
int arena_btf_load_generated(void *blob, u32 size);

#endif /* BPF_ARENA_BTF_LOAD_H */

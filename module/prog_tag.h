/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_PROG_TAG_H
#define BPF_ARENA_PROG_TAG_H

#include <linux/filter.h>

/* bpf_prog_calc_tag()'s tag of insns (the user's program); 0 or -ENOMEM. */
int arena_prog_tag(const struct bpf_insn *insns, u32 len, u8 tag[BPF_TAG_SIZE]);

#endif /* BPF_ARENA_PROG_TAG_H */

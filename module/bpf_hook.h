/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_BPF_HOOK_H
#define BPF_ARENA_BPF_HOOK_H

/* Installs the bpf() and get_unmapped_area() hooks (all or none). */
int arena_bpf_hook_init(void);
void arena_bpf_hook_exit(void);

#endif /* BPF_ARENA_BPF_HOOK_H */

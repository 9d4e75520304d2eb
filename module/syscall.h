/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_SYSCALL_H
#define BPF_ARENA_SYSCALL_H

/* Installs the bpf() and get_unmapped_area() hooks (all or none). */
int arena_syscall_init(void);
void arena_syscall_exit(void);

#endif /* BPF_ARENA_SYSCALL_H */

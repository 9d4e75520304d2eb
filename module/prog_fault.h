/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_PROG_FAULT_H
#define BPF_ARENA_PROG_FAULT_H

#include <linux/extable.h>

void arena_fault_init(void);
/* The fixup of a faulting raised arena access at ip, or NULL. */
const struct exception_table_entry *arena_fault_fixup(unsigned long ip);

#endif /* BPF_ARENA_PROG_FAULT_H */

/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPF_ARENA_CHARDEV_H
#define BPF_ARENA_CHARDEV_H

int arena_chardev_init(void);
void arena_chardev_exit(void);

#endif /* BPF_ARENA_CHARDEV_H */

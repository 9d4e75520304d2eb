/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A private copy of the calling task's fd table for the length of one
 * BPF_PROG_LOAD of an arena program (fd_snapshot.c).
 */
#ifndef BPF_ARENA_FD_SNAPSHOT_H
#define BPF_ARENA_FD_SNAPSHOT_H

struct file;
struct files_struct;

struct fd_snapshot {
	struct files_struct *real;	/* the task's own table, given back at leave */
	struct files_struct *copy;	/* current->files between enter and leave */
};

/* Switches current to a private copy of its fd table; 0 or -errno. */
int fd_snapshot_enter(struct fd_snapshot *s);
/* Gives current its own table back and closes every fd of the copy. */
void fd_snapshot_leave(struct fd_snapshot *s);
/*
 * Installs file (whose reference the caller gives away) in the task's own
 * table, after fd_snapshot_leave(); returns the new fd or -errno (the
 * reference is dropped then).
 */
int fd_snapshot_publish(struct file *file, unsigned int flags);

#endif /* BPF_ARENA_FD_SNAPSHOT_H */

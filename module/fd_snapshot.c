// SPDX-License-Identifier: GPL-2.0
/*
 * Why a private fd table: the stock verifier resolves every fd a program
 * names (ld_imm64 maps, fd_array, BTF, attach targets) through the loading
 * task's fd table, and so does the module before it: while lowering, and
 * for the companion map it creates.  Any thread sharing that table can
 * close or dup2() over any fd number at any instant, so two lookups of one
 * number may give two objects.  An arena program is therefore loaded with
 * the task switched to a private copy of its table (the way unshare_files()
 * gives exec a private one): every lookup, the module's and the kernel's,
 * sees one frozen set of objects; the companion and the new program exist
 * only there, and nobody can close, replace or add an fd in the copy.  The
 * copy is frozen, not hidden: pidfd_getfd() (allowed within a thread group)
 * and /proc read task->files and may copy an fd OUT of it, which is why the
 * companion's fds are read-only (prog_companion.c).  The new program's file is
 * installed in the task's own table only after every check passed.
 *
 * Closing the copy closes its duplicated files, exactly as a forked child
 * that exits does (->flush runs; POSIX locks and dnotify are owned by the
 * copy, which holds none).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/sched.h>
#include <linux/sched/task.h>

#include "fd_snapshot.h"
#include "kernel_compat.h"
#include "ksyms.h"

int fd_snapshot_enter(struct fd_snapshot *s)
{
	struct files_struct *copy;

	copy = arena_dup_fd(ksyms.dup_fd, current->files);
	if (IS_ERR(copy))
		return PTR_ERR(copy);
	task_lock(current);
	s->real = current->files;
	current->files = copy;
	task_unlock(current);
	s->copy = copy;
	return 0;
}

void fd_snapshot_leave(struct fd_snapshot *s)
{
	task_lock(current);
	current->files = s->real;
	task_unlock(current);
	ksyms.put_files_struct(s->copy);
	s->copy = NULL;
}

int fd_snapshot_publish(struct file *file, unsigned int flags)
{
	int fd = get_unused_fd_flags(flags);

	if (fd < 0) {
		fput(file);
		return fd;
	}
	fd_install(fd, file);
	return fd;
}

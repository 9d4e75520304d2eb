// SPDX-License-Identifier: GPL-2.0
/*
 * A user fault on a hardware-poisoned arena page that another VMA still maps
 * (module only; needs CAP_SYS_ADMIN for MADV_HWPOISON and CONFIG_MEMORY_FAILURE,
 * both true for root in the test VM on Debian's 6.1).
 *
 * The fault handler must never hand such a page back locked
 * (VM_FAULT_LOCKED): on 6.1, __do_fault() (mm/memory.c:4284-4298) then
 * unmaps it through page_mapping(page), NULL for an arena page, a NULL
 * dereference in the faulting task.  An attempt to close a fault/free race
 * that way (44ecc05, reverted) did exactly that; this test, from the review
 * that found it, keeps it from coming back.  Unlocked, the core answers
 * VM_FAULT_HWPOISON (SIGBUS).
 *
 * A real uncorrectable memory error on an arena page (memory_failure() sets
 * PG_hwpoison and leaves a non-LRU page mapped) reaches the same path with
 * no privilege at all; MADV_HWPOISON only stands in for the hardware.
 *
 * The parent faults page 0 in (its PTE keeps the page mapped), lets the
 * mapping be inherited (MADV_DOFORK), poisons the page and forks.  The child
 * drops the PTE fork copied (the fault handler inserts pages itself, so the
 * mapping is VM_MIXEDMAP, whose PTEs fork copies) and reads: the fault must
 * end in SIGBUS, not in a kernel oops.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/bpf_arena.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "test_util.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON	100
#endif

#define PG	4096UL
#define PAGES	4

TEST(fault_on_poisoned_page_is_sigbus_not_oops)
{
	struct bpf_arena_config c = { .size = sizeof(c), .map_flags = BPF_ARENA_F_MMAPABLE,
				      .max_entries = PAGES, .numa_node = -1 };
	volatile uint64_t *p;
	int fd, status, i;
	void *base;
	pid_t pid;

	if (access(BPF_ARENA_DEV_PATH, F_OK))
		SKIP(return, "no " BPF_ARENA_DEV_PATH ": the bpf_arena module is not loaded (native arena kernel)");
	if (geteuid())
		SKIP(return, "MADV_HWPOISON needs CAP_SYS_ADMIN");
	fd = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, BPF_ARENA_IOC_CONFIGURE, &c));
	base = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, base);
	p = base;
	*p = 42;			/* the fault allocates page 0; our PTE keeps it mapped */
	ASSERT_EQ(0, madvise(base, PAGES * PG, MADV_DOFORK));

	/* memory_failure() on a non-LRU page: PG_hwpoison set, "unknown page", EBUSY. */
	if (madvise(base, PG, MADV_HWPOISON) && errno != EBUSY) {
		if (errno == EINVAL || errno == EPERM)
			SKIP(return, "MADV_HWPOISON unavailable (%s)", strerror(errno));
		ASSERT_EQ(0, errno);
	}

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		alarm(20);
		if (madvise(base, PG, MADV_DONTNEED))
			_exit(3);
		(void)*p;		/* no PTE in the child: arena_vm_fault() */
		_exit(0);
	}
	for (i = 0; i < 600; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(50000);
	}
	if (i == 600) {
		kill(pid, SIGKILL);
		ASSERT_TRUE(0) TH_LOG("the child hung in its fault (oops with mmap_lock held?)");
	}
	TH_LOG("child: %s %d", WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGBUS, WTERMSIG(status));
	munmap(base, PAGES * PG);
	close(fd);
}

TEST_HARNESS_MAIN

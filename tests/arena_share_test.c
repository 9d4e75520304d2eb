// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing an arena between two unrelated processes with bpf_arena_from_fd():
 * the test (the sender) creates an arena, writes a string and a small linked
 * structure (absolute pointers) into it, and passes the arena's fd over a
 * Unix socket (SCM_RIGHTS) to a receiver that is a fresh exec() of this
 * binary: it inherits no mapping and no arena fd, only the socket.  The
 * receiver wraps the fd, must find the arena at the sender's address,
 * follows the sender's pointers, and writes a reply the sender then reads.
 * As README "Sharing an arena with another process" describes.
 *
 * Kinds of fd: a bpf() map fd with map_extra, one without (the module
 * reports the address; a native kernel does not, so the receiver gets
 * -EBUSY and then uses the address the sender sent), and a /dev/bpf_arena
 * fd (module only).  Same assertions on 6.1 + module and on 6.12.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "bpf_arena_lib.h"
#include "test_util.h"

#define PAGE 4096UL
#define ENV_SOCK "ARENA_SHARE_RECEIVER_SOCK"
#define HELLO "hello from the sender"
#define REPLY "reply from the receiver"
#define MAGIC 0x5ca1ab1eULL

/* What the sender sends with the fd. */
struct share_msg {
	__u64 base;		/* the sender's address of the arena */
	__u32 use_addr;		/* receiver: on -EBUSY, retry at base */
	__u32 pad;
};

/* The layout both sides use: node at base + 64 points into page 1. */
struct node {
	struct node *next;
	__u64 magic;
};

/* Receiver results (its exit status; 0: all fine). */
enum { RCV_OK, RCV_RECV, RCV_WRAP, RCV_BASE, RCV_HELLO, RCV_PTR, RCV_EBUSY_EXPECTED, RCV_AT };

/* ---- the receiver (a fresh exec of this binary) ------------------------- */

static int recv_fd(int sock, struct share_msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != sizeof(*m))
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

static int receiver(int sock)
{
	struct bpf_arena *a = NULL;
	struct share_msg m;
	struct node *n;
	char *base;
	int fd, err;

	fd = recv_fd(sock, &m);
	if (fd < 0)
		return RCV_RECV;
	err = bpf_arena_from_fd(fd, &a);
	if (err == -EBUSY && m.use_addr) {
		/* native kernel, no map_extra: the address came with the fd */
		err = bpf_arena_from_map_fd_at(fd, (void *)(uintptr_t)m.base, &a);
		if (err)
			return RCV_AT;
	} else if (m.use_addr) {
		return RCV_EBUSY_EXPECTED;
	} else if (err) {
		return RCV_WRAP;
	}
	close(fd);	/* the arena keeps its own duplicate */
	base = bpf_arena_base(a);
	if ((__u64)(uintptr_t)base != m.base)
		return RCV_BASE;
	if (strcmp(base, HELLO))
		return RCV_HELLO;
	/* the sender's absolute pointers are valid here */
	n = *(struct node **)(base + 64);
	if ((char *)n != base + PAGE + 8 || n->magic != MAGIC || n->next != n)
		return RCV_PTR;
	strcpy(base + 128, REPLY);
	bpf_arena_destroy(a);
	return RCV_OK;
}

/* Runs before the harness's main() when this binary is the receiver. */
static void __attribute__((constructor)) maybe_receiver(void)
{
	const char *s = getenv(ENV_SOCK);

	if (s) {
		bpf_arena_set_print(NULL);
		_exit(receiver(atoi(s)));
	}
}

/* ---- the sender (the test) ---------------------------------------------- */

static int send_fd(int sock, int fd, const struct share_msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	return sendmsg(sock, &mh, 0) == sizeof(*m) ? 0 : -errno;
}

/* Starts the receiver: a fresh exec of this binary holding only sock[1]. */
static pid_t spawn_receiver(int sock[2])
{
	pid_t pid = fork();

	if (pid == 0) {
		char num[16];

		close(sock[0]);
		snprintf(num, sizeof(num), "%d", sock[1]);
		setenv(ENV_SOCK, num, 1);
		execl("/proc/self/exe", "arena_share_test-receiver", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Fills the arena, passes fd to a receiver, checks its verdict and reply. */
static void share(struct __test_metadata *_metadata, struct bpf_arena *a, int fd,
		  bool use_addr)
{
	struct share_msg m = { .base = (uintptr_t)bpf_arena_base(a), .use_addr = use_addr };
	char *base = bpf_arena_base(a);
	struct node *n = (struct node *)(base + PAGE + 8);
	int sock[2], status = -1;
	pid_t pid;

	strcpy(base, HELLO);
	n->next = n;
	n->magic = MAGIC;
	*(struct node **)(base + 64) = n;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sock));
	ASSERT_EQ(0, fcntl(sock[0], F_SETFD, FD_CLOEXEC));
	pid = spawn_receiver(sock);
	ASSERT_LT(0, pid);
	close(sock[1]);
	ASSERT_EQ(0, send_fd(sock[0], fd, &m));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(sock[0]);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("receiver status 0x%x", status);
	ASSERT_EQ(RCV_OK, WEXITSTATUS(status))
		TH_LOG("receiver failed at step %d (see enum in the source)", WEXITSTATUS(status));
	EXPECT_STREQ(REPLY, base + 128);
}

TEST(map_fd_with_map_extra)
{
	BPF_ARENA_OPTS(o, .map_extra = 1ULL << 42);
	struct bpf_arena *a = NULL;

	ASSERT_EQ(0, bpf_arena_create(8, &o, &a));
	share(_metadata, a, bpf_arena_map_fd(a), false);
	bpf_arena_destroy(a);
}

/* No map_extra: the module reports where the first mapping put the arena;
 * a native kernel does not, so the receiver needs the address. */
TEST(map_fd_without_map_extra)
{
	struct bpf_arena *a = NULL;
	bool native = bpf_arena_kernel_has_native();

	ASSERT_EQ(0, bpf_arena_create(8, NULL, &a));
	TH_LOG("%s: %s", native ? "native arena" : "bpf_arena module",
	       native ? "expect -EBUSY, then bpf_arena_from_map_fd_at()" :
			"bpf_arena_from_fd() finds the address");
	share(_metadata, a, bpf_arena_map_fd(a), native);
	bpf_arena_destroy(a);
}

/* An arena made through the device, passed as its BPF map fd. */
TEST(device_arena_as_map_fd)
{
	struct bpf_arena *a = NULL;
	int fd;

	if (!have_dev())
		SKIP(return, "no " BPF_ARENA_DEV_PATH " (a kernel with native arena): "
		     "device fds exist only with the bpf_arena module");
	ASSERT_EQ(0, bpf_arena_create_dev(8, NULL, &a));
	fd = bpf_arena_map_fd(a);
	ASSERT_LE(0, fd);
	share(_metadata, a, fd, false);
	bpf_arena_destroy(a);
}

/* A device fd proper: created by mmap of /dev/bpf_arena, sent as is. */
TEST(raw_device_fd)
{
	struct bpf_arena *b = NULL;
	struct bpf_arena_config cfg = {
		.size = sizeof(cfg), .map_flags = BPF_ARENA_F_MMAPABLE, .max_entries = 4, .numa_node = -1,
	};
	char *p;
	int dev;

	if (!have_dev())
		SKIP(return, "no " BPF_ARENA_DEV_PATH " (a kernel with native arena): "
		     "device fds exist only with the bpf_arena module");
	dev = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, ioctl(dev, BPF_ARENA_IOC_CONFIGURE, &cfg)) TH_LOG("%s", strerror(errno));
	/* not created yet: nothing to map */
	EXPECT_EQ(-EINVAL, bpf_arena_from_fd(dev, &b));
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, dev, 0);
	ASSERT_NE(MAP_FAILED, p);
	/* mapped here already (by the caller): that mapping is borrowed */
	ASSERT_EQ(0, bpf_arena_from_fd(dev, &b));
	EXPECT_EQ(p, bpf_arena_base(b));
	bpf_arena_destroy(b);
	p[0] = 1;	/* still mapped: destroy left the borrowed mapping alone */
	munmap(p, 4 * PAGE);
	/* now the receiver's path: not mapped here, the fd is wrapped */
	ASSERT_EQ(0, bpf_arena_from_fd(dev, &b));
	EXPECT_EQ(p, bpf_arena_base(b));
	share(_metadata, b, dev, false);
	bpf_arena_destroy(b);
	close(dev);
}

TEST(not_an_arena_fd)
{
	struct bpf_arena *a = (void *)1;
	int pfd[2];

	ASSERT_EQ(0, pipe(pfd));
	EXPECT_GT(0, bpf_arena_from_fd(pfd[0], &a));
	EXPECT_EQ(NULL, a);
	EXPECT_EQ(-EBADF, bpf_arena_from_fd(-1, &a));
	EXPECT_EQ(-EINVAL, bpf_arena_from_fd(pfd[0], NULL));
	close(pfd[0]);
	close(pfd[1]);
}

TEST_HARNESS_MAIN

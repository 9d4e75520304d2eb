// SPDX-License-Identifier: GPL-2.0
/*
 * The library's words for the mistakes a new user makes first, each naming
 * the fix: a kernel without arena and the module not loaded
 * (bpf_arena_kernel_ready(), the device calls), and /dev/bpf_arena opened
 * by a user it does not admit (its mode, group, and the udev rule).  The
 * creation errors in the caller's numbers are in lib_test.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf_arena_lib.h>

#include "kselftest_harness.h"
#include "test_util.h"

TEST(kernel_ready_when_the_kernel_can_create_arenas)
{
	lib_capture();
	if (!kernel_has_native_arena() && !kmod_is_loaded())
		ASSERT_EQ(0, kmod_load());
	EXPECT_EQ(0, bpf_arena_kernel_ready());
	EXPECT_STREQ("", lib_msgs);
}

/* Without the module, on 6.1: what to run, for this kernel. */
TEST(kernel_ready_names_the_module_when_it_is_not_loaded)
{
	struct utsname u;
	char want[512];
	struct bpf_arena *a = NULL;

	if (kernel_has_native_arena())
		SKIP(return, "kernel has native BPF arena: it is always ready");
	ASSERT_EQ(0, uname(&u));
	if (kmod_is_loaded())
		ASSERT_EQ(0, kmod_unload_when_idle(5000));
	lib_capture();
	EXPECT_EQ(-EOPNOTSUPP, bpf_arena_kernel_ready());
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* The guest's module is not under /lib/modules: "not installed". */
	snprintf(want, sizeof(want), "libbpfarena: this kernel (%s) has no BPF arena of its own "
		 "and the bpf_arena module is not installed for it: install the bpf-arena-dkms "
		 "package (or `dkms install bpf-arena/", u.release);
	EXPECT_NE(NULL, strstr(lib_msgs, want)) TH_LOG("want \"%s\" in \"%s\"", want, lib_msgs);
	EXPECT_NE(NULL, strstr(lib_msgs, "then `modprobe bpf_arena`")) TH_LOG("%s", lib_msgs);

	/* The device path and a bpf() creation say the same. */
	lib_msgs[0] = 0;
	EXPECT_EQ(-EOPNOTSUPP, bpf_arena_create_dev(4, NULL, &a));
	EXPECT_NE(NULL, strstr(lib_msgs, "bpf_arena_create_dev: needs the bpf_arena module's "
			       "/dev/bpf_arena")) TH_LOG("%s", lib_msgs);
	EXPECT_NE(NULL, strstr(lib_msgs, "has no BPF arena of its own")) TH_LOG("%s", lib_msgs);
	lib_msgs[0] = 0;
	EXPECT_EQ(-EINVAL, bpf_arena_create(4, NULL, &a));
	EXPECT_NE(NULL, strstr(lib_msgs, "has no BPF arena of its own")) TH_LOG("%s", lib_msgs);
	bpf_arena_set_print(NULL);
	EXPECT_EQ(0, kmod_load());
}

/* What an unprivileged user hears from bpf_arena_create_dev() (child, uid 65534). */
static void open_as_nobody(struct __test_metadata *_metadata, char *out, size_t len)
{
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct bpf_arena *a = NULL;
		int err;

		dup2(pipefd[1], 2);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(3);
		err = bpf_arena_create_dev(4, NULL, &a);
		_exit(err == -EACCES ? 0 : 4);
	}
	close(pipefd[1]);
	n = read(pipefd[0], out, len - 1);
	close(pipefd[0]);
	out[n > 0 ? n : 0] = 0;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("status %#x, stderr: %s", status, out);
}

/*
 * A root-only device names the udev rule; a group device names the group
 * and how to join it.  The guest has no /etc/group: one is written for the
 * test (and removed) when missing.
 */
TEST(device_permission_names_the_group_and_the_udev_rule)
{
	static const char group_file[] = "/etc/group";
	bool made_group_file = false;
	struct stat st;
	char out[4096];
	gid_t gid = 4242;
	struct group *gr;

	NEED_DEV();
	ASSERT_EQ(0, stat(BPF_ARENA_DEV_PATH, &st));

	ASSERT_EQ(0, chown(BPF_ARENA_DEV_PATH, 0, 0));
	ASSERT_EQ(0, chmod(BPF_ARENA_DEV_PATH, 0600));
	open_as_nobody(_metadata, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "libbpfarena: bpf_arena_create_dev: cannot open "
			       "/dev/bpf_arena: Permission denied: it is mode 0600, owner root"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "an administrator lets a group use it with a udev rule, "
			       "/etc/udev/rules.d/60-bpf-arena.rules")) TH_LOG("%s", out);

	if (access(group_file, F_OK)) {
		FILE *f = fopen(group_file, "w");

		ASSERT_NE(NULL, f);
		fprintf(f, "root:x:0:\narena-users:x:%u:\n", (unsigned int)gid);
		fclose(f);
		made_group_file = true;
	}
	gr = getgrgid(gid);
	if (!gr) {
		gr = getgrnam("nogroup");
		gid = gr ? gr->gr_gid : 0;
	}
	if (gr && gid != 65534) {
		char want[256];

		snprintf(want, sizeof(want), "Permission denied: it is mode 0660, group '%s': add "
			 "the user to that group (`adduser USER %s`, then log in again)",
			 gr->gr_name, gr->gr_name);
		ASSERT_EQ(0, chown(BPF_ARENA_DEV_PATH, 0, gid));
		ASSERT_EQ(0, chmod(BPF_ARENA_DEV_PATH, 0660));
		open_as_nobody(_metadata, out, sizeof(out));
		EXPECT_NE(NULL, strstr(out, want)) TH_LOG("want \"%s\" in \"%s\"", want, out);
	} else {
		TH_LOG("no named group other than nobody's: the group case is not checked");
	}
	if (made_group_file)
		unlink(group_file);
	EXPECT_EQ(0, chown(BPF_ARENA_DEV_PATH, st.st_uid, st.st_gid));
	EXPECT_EQ(0, chmod(BPF_ARENA_DEV_PATH, st.st_mode & 07777));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_arena.ko loads, unloads and reloads cleanly on a kernel without native
 * arena, carries its metadata, and where arena is in-tree loads as an
 * inactive stub that leaves the kernel's own arena alone.
 */
#include <sys/mman.h>

#include <bpf_arena_lib.h>

#include "kselftest_harness.h"
#include "test_util.h"

#define SKIP_IF_NATIVE()                                                    \
	do {                                                                \
		if (kernel_has_native_arena())                              \
			SKIP(return, "kernel has native BPF arena: the module is the inactive stub there (stub_on_native_arena_kernel)"); \
	} while (0)

TEST(modinfo_has_version_license_description)
{
	char buf[256];

	ASSERT_TRUE(modinfo_field("version", buf, sizeof(buf)));
	EXPECT_STREQ(BPF_ARENA_VERSION, buf);
	ASSERT_TRUE(modinfo_field("license", buf, sizeof(buf)));
	EXPECT_STREQ("GPL", buf);
	ASSERT_TRUE(modinfo_field("description", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "BPF arena"));
}

TEST(unload_and_reload)
{
	char buf[64];
	int loaded_msgs;

	SKIP_IF_NATIVE();
	/* The VM runner loads the module before the tests start. */
	if (!kmod_is_loaded())
		ASSERT_EQ(0, kmod_load());
	ASSERT_EQ(0, kmod_unload());
	EXPECT_FALSE(kmod_is_loaded());

	loaded_msgs = kernel_log_count("bpf_arena: version " BPF_ARENA_VERSION " loaded");
	ASSERT_GE(loaded_msgs, 0);
	ASSERT_EQ(0, kmod_load());
	ASSERT_TRUE(kmod_is_loaded());
	EXPECT_EQ(loaded_msgs + 1,
		  kernel_log_count("bpf_arena: version " BPF_ARENA_VERSION " loaded"));
	ASSERT_TRUE(read_line("/sys/module/bpf_arena/version", buf, sizeof(buf)));
	EXPECT_STREQ(BPF_ARENA_VERSION, buf);
	ASSERT_TRUE(read_line("/sys/module/bpf_arena/initstate", buf, sizeof(buf)));
	EXPECT_STREQ("live", buf);
	ASSERT_TRUE(read_line("/sys/module/bpf_arena/refcnt", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
}

TEST(double_load_is_eexist)
{
	SKIP_IF_NATIVE();
	if (!kmod_is_loaded())
		ASSERT_EQ(0, kmod_load());
	EXPECT_EQ(-EEXIST, kmod_load());
	EXPECT_TRUE(kmod_is_loaded());
}

/*
 * DKMS builds the module for every installed kernel and modules-load.d loads
 * it at boot, so on 6.9+ it must load (a refusal fails the kernel package's
 * DKMS hook and systemd-modules-load), say what it is, create nothing, and
 * leave BPF_MAP_TYPE_ARENA to the kernel.
 */
TEST(stub_on_native_arena_kernel)
{
	const char *msg = "bpf_arena: version " BPF_ARENA_VERSION
			  ": this kernel has native BPF arena";
	struct bpf_arena *arena = NULL;
	int before, fd;
	void *p;

	if (!kernel_has_native_arena())
		SKIP(return, "kernel has no native BPF arena: the full module loads here");
	if (kmod_is_loaded())
		ASSERT_EQ(0, kmod_unload());
	before = kernel_log_count(msg);
	ASSERT_GE(before, 0);
	ASSERT_EQ(0, kmod_load());
	EXPECT_TRUE(kmod_is_loaded());
	EXPECT_EQ(before + 1, kernel_log_count(msg));
	/* The stub creates nothing: no device, no hooks. */
	EXPECT_NE(0, access("/dev/bpf_arena", F_OK));
	EXPECT_NE(0, access("/sys/class/misc/bpf_arena", F_OK));
	/* libbpfarena's first probe, with the stub loaded, still says native. */
	EXPECT_EQ(1, bpf_arena_kernel_has_native());
	/* And an arena the library creates is the kernel's, not the module's. */
	ASSERT_EQ(0, bpf_arena_create(4, NULL, &arena));
	EXPECT_EQ(BPF_ARENA_BACKEND_KERNEL, bpf_arena_backend(arena));
	bpf_arena_destroy(arena);

	/* The kernel's own arena works with the stub loaded. */
	fd = arena_create(4, 0, 0);
	ASSERT_LE(0, fd) TH_LOG("native arena map create: %s", strerror(-fd));
	p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	*(volatile int *)p = 42;
	EXPECT_EQ(42, *(volatile int *)p);
	munmap(p, 4 * 4096);
	close(fd);

	EXPECT_EQ(0, kmod_unload());
	EXPECT_FALSE(kmod_is_loaded());
}

TEST_HARNESS_MAIN

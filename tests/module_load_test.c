// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_arena.ko loads, unloads and reloads cleanly on a kernel without native
 * arena, carries its metadata, and refuses to load where arena is in-tree.
 */
#include "kselftest_harness.h"
#include "kmod_util.h"

#define SKIP_IF_NATIVE()                                                    \
	do {                                                                \
		if (kernel_has_native_arena())                              \
			SKIP(return, "kernel has native BPF arena: the module refuses to load there"); \
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

TEST(refused_on_native_arena_kernel)
{
	if (!kernel_has_native_arena())
		SKIP(return, "kernel has no native BPF arena: the module loads here");
	EXPECT_EQ(-EOPNOTSUPP, kmod_load());
	EXPECT_FALSE(kmod_is_loaded());
	EXPECT_GE(kernel_log_count("bpf_arena: this kernel has native BPF arena"), 1);
}

TEST_HARNESS_MAIN

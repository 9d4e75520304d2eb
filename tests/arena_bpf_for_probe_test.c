// SPDX-License-Identifier: GPL-2.0
/*
 * Installing bpf_arena.ko must not break BPF programs that use no arena
 * (attack review 3).  tests/progs/arena_bpf_for_probe.bpf.c feature-probes
 * bpf_iter_num_new with bpf_ksym_exists() and falls back to a plain loop: on
 * stock 6.1 (`tests/vm/run --kernel 6.1 --no-module`) the fallback runs, on
 * 6.12 the kernel's iterators.  With the module on 6.1 libbpf resolves the
 * __weak __ksym to the module's bpf_iter_num_new (module/kfunc.c) and the
 * probe says "present": the module then translates the iterators, as it
 * does in arena programs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "kselftest_harness.h"
#include "test_util.h"
#include "bpf_insn.h"

EMBED(probe_obj, "arena_bpf_for_probe.bpf.o");

TEST(non_arena_program_probing_iterators_still_loads)
{
	struct bpf_object *obj;
	__u64 ctx[2] = { 0, 0 };
	int err, fd;

	libbpf_capture(false);
	obj = bpf_object__open_mem(probe_obj_start, probe_obj_end - probe_obj_start, NULL);
	ASSERT_EQ(0, libbpf_get_error(obj));
	err = bpf_object__load(obj);
	ASSERT_EQ(0, err) TH_LOG("load: %d\n%s", err, str_tail(libbpf_msgs, 4000));
	fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "probe_sum"));
	ASSERT_LE(0, fd);
	{
		/* SYSCALL programs write ctx back to ctx_in. */
		LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = ctx, .ctx_size_in = sizeof(ctx));

		ASSERT_EQ(0, bpf_prog_test_run_opts(fd, &o)) TH_LOG("%s", strerror(errno));
	}
	EXPECT_EQ(4950, ctx[0]);
	/* The iterators where the kernel or the module has them, else the fallback. */
	EXPECT_EQ(kernel_has_native_arena() || kmod_is_loaded() ? 1 : 2, ctx[1]);
	TH_LOG("ran the %s", ctx[1] == 1 ? "iterators" : "fallback loop");
	bpf_object__close(obj);
}

/*
 * A typed ksym of vmlinux (ld_imm64 BPF_PSEUDO_BTF_ID, BTF fd 0): never one
 * of the module's iterator functions, so the module's fast path hands the
 * program to the stock path unread beyond that (module/prog_scan.c,
 * may_use_arena()); it loads and runs as without the module.
 */
TEST(vmlinux_typed_ksym_program_loads_as_without_the_module)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_insn insns[] = {
		I_MOV64_IMM(0, 7),
		I_LD_PSEUDO(1, BPF_PSEUDO_BTF_ID, 0),	/* the id below; BTF fd 0: vmlinux */
		I_EXIT(),
	};
	char log[4096];
	__u64 ctx[2] = { 0, 0 };
	int id, fd;

	ASSERT_EQ(0, libbpf_get_error(vmlinux));
	id = btf__find_by_name_kind(vmlinux, "bpf_prog_active", BTF_KIND_VAR);
	btf__free(vmlinux);
	ASSERT_LT(0, id);
	insns[1].imm = id;
	fd = load_syscall_prog(insns, sizeof(insns) / sizeof(insns[0]), log, sizeof(log));
	ASSERT_LE(0, fd) TH_LOG("load: %s\n%s", strerror(-fd), log);
	EXPECT_EQ(7, run_syscall_prog(fd, ctx, sizeof(ctx)));
	close(fd);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * What users see must be 6.12's (issue 14, items 1-3), checked the same way
 * on 6.1 + module and on 6.12:
 *  - &arena is a real map pointer: struct bpf_map fields read through it
 *    return the arena's own values (map_type 33, max_entries, map_flags,
 *    map_extra), not those of anything the module substituted;
 *  - the program tag is the stock tag of the user's instructions: stable
 *    across arena addresses, equal to the tag of the same bytes naming an
 *    ARRAY (the kernel zeroes map ld_imm64 imms before hashing);
 *  - /proc/PID/maps names an arena mapping "anon_inode:bpf-map";
 *  - every refusal the module issues in place of the verifier, with 6.12's
 *    errno and text: the table refusals[] below.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"

#define PG 4096
#define ARENA_TYPE 33
#define MAP_EXTRA_A (1ull << 32)
#define MAP_EXTRA_B (3ull << 32)

/* ---- BTF: a member's offset in the running kernel ---- */

/* Byte offset of struct bpf_map's member in the running kernel. */
static int bpf_map_member_off(const char *member)
{
	const struct btf_type *t;
	const struct btf_member *m;
	int ret = -ENOENT;
	__u32 size, i;
	void *b = btf_sysfs("vmlinux", &size);

	if (!b || !btf_find(b, size, 0, BTF_KIND_STRUCT, "bpf_map", &t, NULL))
		goto out;
	m = (const void *)(t + 1);
	for (i = 0; i < BTF_INFO_VLEN(t->info); i++, m++)
		if (!strcmp(btf_str(b, 0, m->name_off), member))
			ret = (int)(BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset)
							     : m->offset) / 8;
out:
	free(b);
	return ret;
}

/* ---- loading ---- */

static char log_buf[1 << 16];

struct load {
	__u32 type;
	__u32 flags;
	const int *fd_array;
};

/* fd of the loaded program or -errno; log_buf has the verifier's log. */
static int load(const struct bpf_insn *insns, __u32 cnt, const struct load *l)
{
	return prog_load(l->type ?: BPF_PROG_TYPE_SYSCALL,
			 l->type ? l->flags : (l->flags | BPF_F_SLEEPABLE), insns, cnt, l->fd_array,
			 log_buf, sizeof(log_buf));
}

static int run(int prog_fd, __u32 *retval)
{
	long r = run_syscall_prog(prog_fd, NULL, 0);

	if (r < 0)
		return (int)r;
	*retval = (__u32)r;
	return 0;
}

static int prog_tag(int prog_fd, __u8 tag[BPF_TAG_SIZE])
{
	struct bpf_prog_info info;
	int err = prog_info(prog_fd, &info);

	if (err)
		return err;
	memcpy(tag, info.tag, BPF_TAG_SIZE);
	return 0;
}

/* ---- item 1: &arena is the arena ---- */

/* Reads a 4-byte (or, high != 0, the high half of an 8-byte) field via &arena. */
static int read_field(int arena_fd, int off, bool high, __u32 *val)
{
	struct bpf_insn insns[] = {
		I_LD_MAP_FD(BPF_REG_1, arena_fd),
		I_LDX(high ? BPF_DW : BPF_W, BPF_REG_0, BPF_REG_1, (__s16)off),
		high ? I_ALU64_IMM(BPF_RSH, BPF_REG_0, 32) : I_MOV64_IMM(BPF_REG_2, 0),
		I_EXIT(),
	};
	struct load l = { 0 };
	int fd = load(insns, ARRAY_SIZE(insns), &l), err;

	if (fd < 0)
		return fd;
	err = run(fd, val);
	close(fd);
	return err;
}

TEST(map_fields_read_through_arena_pointer)
{
	int type = bpf_map_member_off("map_type"), max = bpf_map_member_off("max_entries");
	int flags = bpf_map_member_off("map_flags"), extra = bpf_map_member_off("map_extra");
	int fd = arena_create(16, 0, MAP_EXTRA_A);
	__u32 v;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, type);
	ASSERT_LE(0, extra);
	ASSERT_EQ(0, read_field(fd, type, false, &v)) TH_LOG("log: %s", log_buf);
	EXPECT_EQ(ARENA_TYPE, v);
	ASSERT_EQ(0, read_field(fd, max, false, &v));
	EXPECT_EQ(16, v);
	ASSERT_EQ(0, read_field(fd, flags, false, &v));
	EXPECT_EQ(BPF_F_MMAPABLE, v);
	ASSERT_EQ(0, read_field(fd, extra, false, &v));
	EXPECT_EQ((__u32)MAP_EXTRA_A, v);
	ASSERT_EQ(0, read_field(fd, extra, true, &v));
	EXPECT_EQ(MAP_EXTRA_A >> 32, v);
	/* Writes through a map pointer stay refused, as on 6.12. */
	{
		struct bpf_insn w[] = {
			I_LD_MAP_FD(BPF_REG_1, fd),
			I_ST(BPF_W, BPF_REG_1, (__s16)max, 1),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		struct load l = { 0 };

		EXPECT_EQ(-EACCES, load(w, ARRAY_SIZE(w), &l)) TH_LOG("log: %s", log_buf);
		EXPECT_NE(NULL, strstr(log_buf, "only read from bpf_"));
	}
	close(fd);
}

/*
 * The same with &arena in a subprogram and in the main program: 6.1 JITs a
 * subprogram as its own func[i] copy, whose view loads the module's JIT
 * hook rewrites; the main program's are rewritten by its select_runtime
 * hook, and the JIT hook then skips that program (module/prog_hooks.c).  A
 * view left in an image would read the view's flags (0), or freed memory:
 * the view is dropped once the program is loaded.
 */
TEST(map_fields_read_through_arena_pointer_in_a_subprogram)
{
	int max = bpf_map_member_off("max_entries"), flags = bpf_map_member_off("map_flags");
	int fd = arena_create(16, 0, MAP_EXTRA_A), prog, r;
	__u32 v;

	/* The view copies max_entries, not map_flags: only the flags tell them apart. */
	ASSERT_LE(0, fd);
	ASSERT_LE(0, max);
	ASSERT_LE(0, flags);
	{
		struct bpf_insn insns[] = {
			I_CALL_REL(7),	/* to 8 */
			I_MOV64_REG(BPF_REG_6, BPF_REG_0),
			I_LD_MAP_FD(BPF_REG_1, fd),
			I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, (__s16)flags),
			I_ALU64_IMM(BPF_LSH, BPF_REG_0, 16),
			I_ALU64_REG(BPF_OR, BPF_REG_0, BPF_REG_6),
			I_EXIT(),
			I_LD_MAP_FD(BPF_REG_1, fd),		/* 8 */
			I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, (__s16)flags),
			I_EXIT(),
		};
		struct load l = { 0 };

		prog = load(insns, ARRAY_SIZE(insns), &l);
		ASSERT_LE(0, prog) TH_LOG("log: %s", log_buf);
	}
	/* Twice, and after other loads: a freed view would be reused by now. */
	for (r = 0; r < 2; r++) {
		ASSERT_EQ(0, read_field(fd, max, false, &v));
		ASSERT_EQ(0, run(prog, &v));
		EXPECT_EQ((__u32)BPF_F_MMAPABLE << 16 | BPF_F_MMAPABLE, v);
	}
	close(prog);
	close(fd);
}

/* ---- the view's address as a program constant ---- */

/* A queue of the struct bpf_map pointers arena_view_create() returns. */
struct view_probe {
	int queue, prog, link;
};

static int view_probe_open(struct view_probe *vp)
{
	int btf_fd, id = kfunc_btf_id("arena_view_create", &btf_fd);
	union bpf_attr attr;

	vp->queue = vp->prog = vp->link = -1;
	if (id <= 0 || btf_fd <= 0)
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_QUEUE;
	attr.value_size = 8;
	attr.max_entries = 256;
	vp->queue = bpf_sys(BPF_MAP_CREATE, &attr);
	if (vp->queue < 0)
		return -errno;
	{
		struct bpf_insn insns[] = {
			I_LDX(BPF_DW, BPF_REG_6, BPF_REG_1, 8),	/* fexit: the return value */
			I_STX(BPF_DW, BPF_REG_10, BPF_REG_6, -8),
			I_LD_MAP_FD(BPF_REG_1, vp->queue),
			I_MOV64_REG(BPF_REG_2, BPF_REG_10),
			I_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
			I_MOV64_IMM(BPF_REG_3, 0),
			I_CALL_HELPER(BPF_FUNC_map_push_elem),
			I_MOV64_IMM(BPF_REG_0, 0),
			I_EXIT(),
		};

		memset(&attr, 0, sizeof(attr));
		attr.prog_type = BPF_PROG_TYPE_TRACING;
		attr.expected_attach_type = BPF_TRACE_FEXIT;
		attr.attach_btf_id = (__u32)id;
		attr.attach_btf_obj_fd = (__u32)btf_fd;
		attr.insns = (__u64)(uintptr_t)insns;
		attr.insn_cnt = ARRAY_SIZE(insns);
		attr.license = (__u64)(uintptr_t)"GPL";
		attr.log_buf = (__u64)(uintptr_t)log_buf;
		attr.log_size = sizeof(log_buf);
		attr.log_level = 1;
		vp->prog = bpf_sys(BPF_PROG_LOAD, &attr);
		close(btf_fd);
		if (vp->prog < 0)
			return -errno;
	}
	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.prog_fd = (__u32)vp->prog;
	vp->link = bpf_sys(BPF_RAW_TRACEPOINT_OPEN, &attr);
	return vp->link < 0 ? -errno : 0;
}

/* The views created since the last call, oldest first; their number. */
static int view_probe_take(struct view_probe *vp, __u64 *v, int max)
{
	union bpf_attr attr;
	int n = 0;
	__u64 x;

	for (;;) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (__u32)vp->queue;
		attr.value = (__u64)(uintptr_t)&x;
		if (bpf_sys(BPF_MAP_LOOKUP_AND_DELETE_ELEM, &attr))
			return n;
		if (n < max)
			v[n++] = x;
	}
}

static void view_probe_close(struct view_probe *vp)
{
	if (vp->link >= 0)
		close(vp->link);
	if (vp->prog >= 0)
		close(vp->prog);
	if (vp->queue >= 0)
		close(vp->queue);
}

/*
 * The view's address as a constant of the program (attack review of
 * d8f6911): the JIT-time rewrite finds the view's loads by address
 * (prog_hooks.c), so an ld_imm64 of that same value would become &arena
 * after the verifier proved it a known constant - a value the verifier does
 * not know, i.e. arithmetic it never checked.  The module gives such a load
 * another view.  The test learns view addresses from an fexit program on
 * arena_view_create() and makes the last freed one a constant of the next
 * load, on one CPU, where the slab allocator usually hands it out again.
 */
TEST(view_address_as_a_constant_stays_that_constant)
{
	int flags = bpf_map_member_off("map_flags"), fd, prog, i, n, armed = 0;
	struct view_probe vp;
	__u64 views[16], a = 0;
	cpu_set_t cpu;
	__u32 v;

	if (!kmod_is_loaded())
		SKIP(return, "in-tree arena: no map view");
	CPU_ZERO(&cpu);
	CPU_SET(0, &cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu), &cpu));
	ASSERT_LE(0, flags);
	ASSERT_EQ(0, view_probe_open(&vp)) TH_LOG("fexit on arena_view_create: %s", log_buf);
	fd = arena_create(4, 0, MAP_EXTRA_A);
	ASSERT_LE(0, fd);
	for (i = 0; i < 40; i++) {
		struct bpf_insn insns[] = {
			I_LD_IMM64(BPF_REG_6, a),
			I_LD_MAP_FD(BPF_REG_1, fd),
			I_LDX(BPF_W, BPF_REG_8, BPF_REG_1, (__s16)flags),	/* the arena's, not a view's */
			I_ALU32_IMM(BPF_XOR, BPF_REG_8, BPF_F_MMAPABLE),
			I_MOV64_REG(BPF_REG_0, BPF_REG_6),
			I_ALU64_IMM(BPF_RSH, BPF_REG_0, 32),
			I_ALU32_IMM(BPF_XOR, BPF_REG_0, (__s32)(a >> 32)),
			I_MOV64_REG(BPF_REG_7, BPF_REG_6),
			I_ALU32_IMM(BPF_XOR, BPF_REG_7, (__s32)a),
			I_ALU32_REG(BPF_OR, BPF_REG_0, BPF_REG_7),
			I_ALU32_REG(BPF_OR, BPF_REG_0, BPF_REG_8),
			I_EXIT(),
		};
		struct load l = { 0 };

		usleep(20000);	/* the last view is freed by a work item */
		prog = load(insns, ARRAY_SIZE(insns), &l);
		ASSERT_LE(0, prog) TH_LOG("log: %s", log_buf);
		n = view_probe_take(&vp, views, 16);
		ASSERT_LE(1, n);
		if (views[0] == a) {
			armed++;
			/* ... so the load was given another one */
			EXPECT_LE(2, n);
			EXPECT_NE(a, views[n - 1]);
		}
		ASSERT_EQ(0, run(prog, &v));
		EXPECT_EQ(0, v) TH_LOG("constant 0x%llx came back changed (first view 0x%llx)",
				       (unsigned long long)a, (unsigned long long)views[0]);
		close(prog);
		a = views[n - 1];
	}
	view_probe_close(&vp);
	close(fd);
	TH_LOG("%d of 40 loads got the constant's address as their first view", armed);
	if (!armed)
		SKIP(return, "the slab allocator never handed a freed view back");
}

/*
 * Only the lowering names the load's map view: a program that names its fd
 * (a guessed number: the snapshot gives the companion and then the view the
 * lowest free fds) is refused, directly or through fd_array, in a
 * subprogram too (attack review of 2079f98: an unlowered MAP_IDX of the
 * view stayed the view in a subprogram's image, and the view is freed after
 * the load).
 */
TEST(program_naming_the_view_fd_is_refused)
{
	int flags = bpf_map_member_off("map_flags");
	int fd = arena_create(4, 0, MAP_EXTRA_A), lo[2], k, prog;

	if (!kmod_is_loaded())
		SKIP(return, "in-tree arena: no map view");
	ASSERT_LE(0, fd);
	ASSERT_LE(0, flags);
	/* The two lowest free fds now: the load's companion and view. */
	lo[0] = dup(0);
	lo[1] = dup(0);
	ASSERT_LE(0, lo[0]);
	ASSERT_LE(0, lo[1]);
	close(lo[0]);
	close(lo[1]);
	for (k = 0; k < 2; k++) {
		int fds[1] = { lo[1] };
		struct bpf_insn insns[] = {
			I_CALL_REL(4),	/* to 5 */
			I_LD_MAP_FD(BPF_REG_1, fd),
			I_LDX(BPF_W, BPF_REG_1, BPF_REG_1, (__s16)flags),
			I_EXIT(),
			I_MOV64_IMM(BPF_REG_0, 0),
			I_LD_MAP_FD(BPF_REG_1, lo[1]),	/* 6 */
			I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, (__s16)flags),
			I_EXIT(),
		};
		struct load l = { .fd_array = k ? fds : NULL };

		if (k) {	/* fd_array[0] instead */
			insns[6].src_reg = BPF_PSEUDO_MAP_IDX;
			insns[6].imm = 0;
		}

		prog = load(insns, ARRAY_SIZE(insns), &l);
		/* EBADF: in the caller's own table the fd is free, as the stock answer */
		EXPECT_EQ(-EBADF, prog) TH_LOG("%s: log: %s", k ? "MAP_IDX" : "MAP_FD", log_buf);
		EXPECT_NE(NULL, strstr(log_buf, "names the fd of the load's own map view"))
			TH_LOG("%s: log: %s", k ? "MAP_IDX" : "MAP_FD", log_buf);
		if (prog >= 0)
			close(prog);
	}
	close(fd);
}

/*
 * The load's companion map takes the lowest free fd of the load's private fd
 * table, a number the user can predict; a program naming it must get what a
 * free fd gets (EBADF, as on the native kernel), not a plain writable ARRAY.
 */
TEST(program_naming_the_companion_fd_is_refused)
{
	int fd = arena_create(4, 0, MAP_EXTRA_A), lo, k, prog;

	ASSERT_LE(0, fd);
	lo = dup(0);	/* the lowest free fd now */
	ASSERT_LE(0, lo);
	close(lo);
	for (k = 0; k < 2; k++) {
		int fds[1] = { lo };
		struct bpf_insn insns[] = {
			I_LD_MAP_FD(BPF_REG_1, fd),
			I_LD_MAP_FD(BPF_REG_2, lo),
			I_MOV64_IMM(BPF_REG_0, 0),
			I_EXIT(),
		};
		struct load l = { .fd_array = k ? fds : NULL };

		if (k) {	/* fd_array[0] instead */
			insns[2].src_reg = BPF_PSEUDO_MAP_IDX;
			insns[2].imm = 0;
		}
		prog = load(insns, ARRAY_SIZE(insns), &l);
		EXPECT_EQ(-EBADF, prog) TH_LOG("%s: log: %s", k ? "MAP_IDX" : "MAP_FD", log_buf);
		if (kmod_is_loaded())
			EXPECT_NE(NULL, strstr(log_buf, "companion map takes it"))
				TH_LOG("%s: log: %s", k ? "MAP_IDX" : "MAP_FD", log_buf);
		if (prog >= 0)
			close(prog);
	}
	close(fd);
}

static void view_renewals(const char *n)
{
	FILE *f = fopen("/sys/module/bpf_arena/parameters/test_view_renewals", "w");

	if (f) {
		fputs(n, f);
		fclose(f);
	}
}

/*
 * A load whose map view a program constant names gets a new view, up to 16
 * times; if the 16th renewal's view is named too, EBUSY with a message (the
 * module's test hook makes the first N views count as named, as no test can
 * guess a heap address).  After 3 renewals, and after 16, the program still
 * reads the arena's own fields.
 */
TEST(map_view_renewal_and_its_limit)
{
	int flags = bpf_map_member_off("map_flags");
	int fd = arena_create(4, 0, MAP_EXTRA_A), prog, k;
	__u32 want = BPF_F_MMAPABLE;

	if (!kmod_is_loaded())
		SKIP(return, "in-tree arena: no map view");
	ASSERT_LE(0, fd);
	ASSERT_LE(0, flags);
	for (k = 0; k < 3; k++) {
		static const char *const renewals[] = { "3", "16", "17" };
		struct bpf_insn insns[] = {
			I_LD_MAP_FD(BPF_REG_1, fd),
			I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, (__s16)flags),
			I_EXIT(),
		};
		struct load l = { 0 };

		view_renewals(renewals[k]);
		prog = load(insns, ARRAY_SIZE(insns), &l);
		view_renewals("0");
		if (k < 2) {
			__u32 got = 0;

			ASSERT_LE(0, prog) TH_LOG("log: %s", log_buf);
			EXPECT_EQ(0, run(prog, &got));
			EXPECT_EQ(want, got & want);
			close(prog);
		} else {
			EXPECT_EQ(-EBUSY, prog) TH_LOG("log: %s", log_buf);
			EXPECT_NE(NULL, strstr(log_buf, "name every map view")) TH_LOG("log: %s", log_buf);
			if (prog >= 0)
				close(prog);
		}
	}
	close(fd);
}

/* The arena kfunc on the &arena pointer, read max_entries, as basic_alloc3. */
TEST(alloc_max_entries_through_arena_pointer)
{
	int max = bpf_map_member_off("max_entries"), btf_fd, id;
	int fd = arena_create(2, 0, MAP_EXTRA_A), prog;
	int fds[2];
	__u32 v;

	ASSERT_LE(0, fd);
	id = kfunc_btf_id("bpf_arena_alloc_pages", &btf_fd);
	ASSERT_LT(0, id);
	fds[0] = -1;
	fds[1] = btf_fd;
	{
		struct bpf_insn insns[] = {
			I_LD_MAP_FD(BPF_REG_1, fd),
			I_LDX(BPF_W, BPF_REG_3, BPF_REG_1, (__s16)max),
			I_MOV64_IMM(BPF_REG_2, 0),
			I_MOV64_IMM(BPF_REG_4, -1),
			I_MOV64_IMM(BPF_REG_5, 0),
			I_CALL_KFUNC(id, btf_fd ? 1 : 0),
			I_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
			I_MOV64_IMM(BPF_REG_0, 1),
			I_EXIT(),
			I_MOV64_IMM(BPF_REG_0, 0),
			I_EXIT(),
		};
		struct load l = { .fd_array = btf_fd ? fds : NULL };

		prog = load(insns, ARRAY_SIZE(insns), &l);
		ASSERT_LE(0, prog) TH_LOG("log: %s", log_buf);
	}
	ASSERT_EQ(0, run(prog, &v));
	EXPECT_EQ(1, v);	/* both pages: max_entries read 2 */
	ASSERT_EQ(0, run(prog, &v));
	EXPECT_EQ(0, v);	/* full */
	close(prog);
	if (btf_fd)
		close(btf_fd);
	close(fd);
}

/*
 * verifier_arena.c's iter_maps1, run.  Sleepable bpf_map iterators load but
 * cannot be attached on either kernel (bpf_map is not a resched-able
 * iterator target), so the same program shape runs as a sleepable BPF LSM
 * program on the bpf_map hook (both kernels build BPF LSM in and enable it
 * by default): it passes its argument, a map known only at run time, to
 * bpf_arena_alloc_pages(map, NULL, map->max_entries, ...).  The kfunc must
 * fill an arena and ignore every other map (identity by ops, at run time).
 */
TEST(runtime_map_argument_allocates_only_in_arenas)
{
	int max = bpf_map_member_off("max_entries"), btf_fd, id, target;
	int a = arena_create(2, 0, MAP_EXTRA_A), arr = array_create(8, 0);
	int fds[2], prog, link, fd;
	struct bpf_map_info info;
	union bpf_attr attr;

	ASSERT_LE(0, a);
	ASSERT_LE(0, arr);
	id = kfunc_btf_id("bpf_arena_alloc_pages", &btf_fd);
	ASSERT_LT(0, id);
	target = vmlinux_func_id("bpf_lsm_bpf_map");
	ASSERT_LT(0, target);
	fds[0] = -1;
	fds[1] = btf_fd;
	{
		struct bpf_insn p[] = {
			I_LDX(BPF_DW, BPF_REG_1, BPF_REG_1, 0),		/* the map */
			I_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 6),
			I_LDX(BPF_W, BPF_REG_3, BPF_REG_1, (__s16)max),
			I_MOV64_IMM(BPF_REG_2, 0),
			I_MOV64_IMM(BPF_REG_4, -1),
			I_MOV64_IMM(BPF_REG_5, 0),
			I_CALL_KFUNC(id, btf_fd ? 1 : 0),
			I_MOV64_IMM(BPF_REG_0, 0),
			I_MOV64_IMM(BPF_REG_0, 0),
			I_EXIT(),
		};
		memset(&attr, 0, sizeof(attr));
		attr.prog_type = BPF_PROG_TYPE_LSM;
		attr.expected_attach_type = BPF_LSM_MAC;
		attr.attach_btf_id = (__u32)target;
		attr.prog_flags = BPF_F_SLEEPABLE;
		attr.insns = (__u64)(uintptr_t)p;
		attr.insn_cnt = ARRAY_SIZE(p);
		attr.license = (__u64)(uintptr_t)"GPL";
		attr.fd_array = btf_fd ? (__u64)(uintptr_t)fds : 0;
		attr.log_buf = (__u64)(uintptr_t)log_buf;
		attr.log_size = sizeof(log_buf);
		attr.log_level = 1;
		prog = bpf_sys(BPF_PROG_LOAD, &attr);
		ASSERT_LE(0, prog) TH_LOG("errno %d, log: %s", errno, log_buf);
	}
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (__u32)prog;
	attr.link_create.attach_type = BPF_LSM_MAC;
	link = bpf_sys(BPF_LINK_CREATE, &attr);
	ASSERT_LE(0, link) TH_LOG("link: errno %d", errno);
	/* New fds of the arena and of an ARRAY: the hook runs for each map. */
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, map_info(arr, &info));
	memset(&attr, 0, sizeof(attr));
	attr.map_id = info.id;
	fd = bpf_sys(BPF_MAP_GET_FD_BY_ID, &attr);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, map_info(a, &info));
	memset(&attr, 0, sizeof(attr));
	attr.map_id = info.id;
	fd = bpf_sys(BPF_MAP_GET_FD_BY_ID, &attr);
	ASSERT_LE(0, fd);
	close(fd);
	close(link);
	/* Both pages went to the program: free one, get exactly one back. */
	EXPECT_EQ(1, arena_kfunc_run(a, false, MAP_EXTRA_A, 1, log_buf, sizeof(log_buf)))
		TH_LOG("log: %s", log_buf);
	EXPECT_EQ(1, arena_kfunc_run(a, true, 0, 1, log_buf, sizeof(log_buf)))
		TH_LOG("log: %s", log_buf);
	EXPECT_EQ(0, arena_kfunc_run(a, true, 0, 1, log_buf, sizeof(log_buf)));
	close(prog);
	if (btf_fd)
		close(btf_fd);
	close(arr);
	close(a);
}

/* ---- item 3: tag ---- */

TEST(tag_is_the_stock_tag_of_the_users_program)
{
	int a = arena_create(4, 0, MAP_EXTRA_A), b = arena_create(4, 0, MAP_EXTRA_B);
	int arr = array_create(8, 0), fa, fb, fx;
	__u8 ta[BPF_TAG_SIZE], tb[BPF_TAG_SIZE], tx[BPF_TAG_SIZE];
	struct load l = { 0 };

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_LE(0, arr);
	{
		/* r1 = &global (offset 0); *(u32 *)r1 unused; return 0 */
		struct bpf_insn pa[] = {
			I_LD_MAP_VALUE(BPF_REG_1, a, 0),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		struct bpf_insn pb[] = {
			I_LD_MAP_VALUE(BPF_REG_1, b, 0),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		struct bpf_insn px[] = {
			I_LD_MAP_VALUE(BPF_REG_1, arr, 0),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};

		fa = load(pa, ARRAY_SIZE(pa), &l);
		ASSERT_LE(0, fa) TH_LOG("log: %s", log_buf);
		fb = load(pb, ARRAY_SIZE(pb), &l);
		ASSERT_LE(0, fb) TH_LOG("log: %s", log_buf);
		fx = load(px, ARRAY_SIZE(px), &l);
		ASSERT_LE(0, fx) TH_LOG("log: %s", log_buf);
	}
	ASSERT_EQ(0, prog_tag(fa, ta));
	ASSERT_EQ(0, prog_tag(fb, tb));
	ASSERT_EQ(0, prog_tag(fx, tx));
	EXPECT_EQ(0, memcmp(ta, tb, BPF_TAG_SIZE));	/* whatever the arena's address */
	EXPECT_EQ(0, memcmp(ta, tx, BPF_TAG_SIZE));	/* the stock hash of these bytes */
	close(fa);
	close(fb);
	close(fx);
	close(arr);
	close(b);
	close(a);
}

/* ---- item 3: /proc/PID/maps ---- */

TEST(proc_maps_names_the_mapping_like_6_12)
{
	int fd = arena_create(4, 0, 0);
	char line[512], want[64];
	bool found = false;
	void *p;
	FILE *f;

	ASSERT_LE(0, fd);
	p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	f = fopen("/proc/self/maps", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)))
			continue;
		found = true;
		EXPECT_NE(NULL, strstr(line, " anon_inode:bpf-map\n")) TH_LOG("%s", line);
	}
	fclose(f);
	EXPECT_TRUE(found);
	munmap(p, 4 * PG);
	close(fd);
}

/* ---- item 3: the refusals ---- */

/*
 * Every refusal the module issues in place of 6.12's verifier, with 6.12's
 * errno and text; run on both kernels, so the 6.12 column is measured, not
 * copied.  Refusals of the module's own (no 6.12 counterpart) have
 * errno612 = 0: 6.12 loads the program.  Refusals tested elsewhere:
 * "CAP_BPF and CAP_PERFMON are required to use arena" (EPERM) and "JIT is
 * required to use arena" (EOPNOTSUPP) in arena_load_security_test;
 * "bpf_arena: insn N: fd_array index I out of range" (EINVAL, module only)
 * there too; the raise's refusals (a jump into a lowered access,
 * constant blinding of an ST immediate: EINVAL, module only) in
 * arena_adversarial_test and arena_load_security_test; iter_maps2/iter_maps3
 * (EINVAL: "expected pointer to STRUCT bpf_map", "untrusted_ptr_bpf_map")
 * in upstream_arena_test; CO-RE relocations on arena accesses (EINVAL,
 * module only) in arena_prog_test.
 */
struct refusal {
	const char *name;
	int errno612;		/* 0: 6.12 accepts the program */
	const char *text;	/* 6.12's text (or the module's, module-only rows) */
	int errno61;		/* 6.1 + module */
};

enum { R_ATOMIC, R_OFF, R_CAST, R_TWO, R_NOADDR, R_SLEEP, R_HI32, R_GOTO, R_NR };

static const struct refusal refusals[R_NR] = {
	[R_ATOMIC] = { "atomic_fetch_and_on_arena", EACCES,
		       "BPF_ATOMIC stores into R1 arena is not allowed", EACCES },
	[R_OFF] = { "map_value_offset_past_arena", ERANGE,
		    "invalid access to map value pointer, value_size=0 off=16385", ERANGE },
	[R_CAST] = { "cast_without_arena", EINVAL,
		     "addr_space_cast insn can only be used in a program that has an associated arena",
		     EINVAL },
	[R_TWO] = { "two_arenas", EBUSY, "Only one arena per program", EBUSY },
	[R_NOADDR] = { "arena_without_user_address", EINVAL,
		       "arena's user address must be set via map_extra or mmap()", EINVAL },
	[R_SLEEP] = { "alloc_from_non_sleepable", EACCES,
		      "program must be sleepable to call sleepable kfunc bpf_arena_alloc_pages",
		      EACCES },
	[R_HI32] = { "test_rnd_hi32", 0,
		     "BPF_F_TEST_RND_HI32 is not supported for arena programs on this kernel",
		     EINVAL },
	/* 6.1 alone: "unknown opcode e5"; the module translates it (docs/LOOPS.md). */
	[R_GOTO] = { "may_goto_without_arena", 0, "loads: translated on 6.1", 0 },
};

static int try_refusal(int which, int a, int b, int noaddr)
{
	const struct refusal *r = &refusals[which];
	struct load l = { 0 };
	int fds[2] = { -1, 0 }, btf_fd = 0, id, fd = -EINVAL;

	switch (which) {
	case R_ATOMIC: {
		struct bpf_insn p[] = {
			I_LD_MAP_VALUE(BPF_REG_1, a, 0),
			I_CAST_KERN(BPF_REG_1, BPF_REG_1),
			I_MOV64_IMM(BPF_REG_2, 1),
			I_ATOMIC(BPF_DW, BPF_AND | BPF_FETCH, BPF_REG_1, BPF_REG_2, 0),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		fd = load(p, ARRAY_SIZE(p), &l);
		break;
	}
	case R_OFF: {
		struct bpf_insn p[] = {
			I_LD_MAP_VALUE(BPF_REG_1, a, 4 * PG + 1),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		fd = load(p, ARRAY_SIZE(p), &l);
		break;
	}
	case R_CAST: {
		struct bpf_insn p[] = {
			I_MOV64_IMM(BPF_REG_1, 0), I_CAST_KERN(BPF_REG_1, BPF_REG_1),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		fd = load(p, ARRAY_SIZE(p), &l);
		break;
	}
	case R_TWO: {
		struct bpf_insn p[] = {
			I_LD_MAP_FD(BPF_REG_1, a),
			I_LD_MAP_FD(BPF_REG_2, b),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		fd = load(p, ARRAY_SIZE(p), &l);
		break;
	}
	case R_NOADDR: {
		struct bpf_insn p[] = {
			I_LD_MAP_FD(BPF_REG_1, noaddr),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		fd = load(p, ARRAY_SIZE(p), &l);
		break;
	}
	case R_SLEEP:
		id = kfunc_btf_id("bpf_arena_alloc_pages", &btf_fd);
		if (id <= 0)
			return id;
		fds[1] = btf_fd;
		{
			struct bpf_insn p[] = {
				I_LD_MAP_FD(BPF_REG_1, a),
				I_MOV64_IMM(BPF_REG_2, 0), I_MOV64_IMM(BPF_REG_3, 1),
				I_MOV64_IMM(BPF_REG_4, -1), I_MOV64_IMM(BPF_REG_5, 0),
				I_CALL_KFUNC(id, btf_fd ? 1 : 0),
				I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
			};
			/* XDP: kfuncs allowed, not sleepable */
			l.type = BPF_PROG_TYPE_XDP;
			l.fd_array = btf_fd ? fds : NULL;
			/*
			 * 6.12's rule.  The module follows newest upstream by
			 * default (any program may allocate) and applies 6.12's
			 * only with kfuncs_sleepable_only=Y.
			 */
			kmod_sleepable_only(true);
			fd = load(p, ARRAY_SIZE(p), &l);
			kmod_sleepable_only(false);
		}
		if (btf_fd)
			close(btf_fd);
		break;
	case R_HI32: {
		struct bpf_insn p[] = {
			I_LD_MAP_FD(BPF_REG_1, a),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		l.flags = BPF_F_TEST_RND_HI32;
		fd = load(p, ARRAY_SIZE(p), &l);
		break;
	}
	case R_GOTO: {
		struct bpf_insn p[] = {
			I_MAY_GOTO(1),	/* may_goto +1 */
			I_MOV64_IMM(BPF_REG_0, 0),
			I_MOV64_IMM(BPF_REG_0, 0), I_EXIT(),
		};
		fd = load(p, ARRAY_SIZE(p), &l);
		break;
	}
	}
	(void)r;
	return fd;
}

TEST(refusals_have_6_12_errno_and_text)
{
	int a = arena_create(4, 0, MAP_EXTRA_A), b = arena_create(4, 0, MAP_EXTRA_B);
	int noaddr = arena_create(4, 0, 0);
	bool mod = kmod_is_loaded();
	int i;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_LE(0, noaddr);
	for (i = 0; i < R_NR; i++) {
		const struct refusal *r = &refusals[i];
		int want = mod ? r->errno61 : r->errno612;
		int fd = try_refusal(i, a, b, noaddr);

		TH_LOG("%-28s 6.12: %-7s 6.1+module: %-7s \"%s\"", r->name,
		       r->errno612 ? strerror(r->errno612) : "loads", strerror(r->errno61), r->text);
		if (!want) {
			EXPECT_LE(0, fd) TH_LOG("%s: %d, log: %s", r->name, fd, log_buf);
			if (fd >= 0)
				close(fd);
			continue;
		}
		EXPECT_EQ(-want, fd) TH_LOG("%s: log: %s", r->name, log_buf);
		if (fd >= 0)
			close(fd);
		EXPECT_NE(NULL, strstr(log_buf, r->text)) TH_LOG("%s: log: %s", r->name, log_buf);
	}
	close(noaddr);
	close(b);
	close(a);
}

TEST_HARNESS_MAIN

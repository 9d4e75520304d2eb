// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions before work: the bpf() hook must not copy, allocate or parse
 * anything large for a caller the stock kernel would turn away.  These are
 * the checks of 6.1's __sys_bpf() and bpf_prog_load()/bpf_btf_load()
 * (kernel/bpf/syscall.c) that come before the copy, in their order; a
 * version-specific fact list, kept in one place.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/capability.h>
#include <linux/filter.h>

#include "ksyms.h"
#include "stock_checks.h"

/* 6.1 is_net_admin_prog_type() */
static bool is_net_admin_prog_type(enum bpf_prog_type type)
{
	switch (type) {
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_XDP:
	case BPF_PROG_TYPE_LWT_IN:
	case BPF_PROG_TYPE_LWT_OUT:
	case BPF_PROG_TYPE_LWT_XMIT:
	case BPF_PROG_TYPE_LWT_SEG6LOCAL:
	case BPF_PROG_TYPE_SK_SKB:
	case BPF_PROG_TYPE_SK_MSG:
	case BPF_PROG_TYPE_LIRC_MODE2:
	case BPF_PROG_TYPE_FLOW_DISSECTOR:
	case BPF_PROG_TYPE_CGROUP_DEVICE:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
	case BPF_PROG_TYPE_SOCK_OPS:
	case BPF_PROG_TYPE_EXT:
		return true;
	default:
		return false;
	}
}

/* 6.1 is_perfmon_prog_type() */
static bool is_perfmon_prog_type(enum bpf_prog_type type)
{
	switch (type) {
	case BPF_PROG_TYPE_KPROBE:
	case BPF_PROG_TYPE_TRACEPOINT:
	case BPF_PROG_TYPE_PERF_EVENT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE:
	case BPF_PROG_TYPE_TRACING:
	case BPF_PROG_TYPE_LSM:
	case BPF_PROG_TYPE_STRUCT_OPS:
	case BPF_PROG_TYPE_EXT:
		return true;
	default:
		return false;
	}
}

/*
 * Capability tests without an audit record: the stock path that answers
 * after us makes the audited ones, so a denial is logged once.
 */
static bool cap(int cap)
{
	return ns_capable_noaudit(&init_user_ns, cap);
}

static bool bpf_cap(void)
{
	return cap(CAP_BPF) || cap(CAP_SYS_ADMIN);
}

static bool perfmon_cap(void)
{
	return cap(CAP_PERFMON) || cap(CAP_SYS_ADMIN);
}

/*
 * Asked once per bpf() call and handed to the checks below (each
 * question is an LSM round trip, and 6.1 asks it up to three times before
 * the copy).  The answer cannot change during the call: a task's
 * credentials change only through its own commit_creds(), which nothing on
 * this path calls.
 */
bool stock_bpf_capable(void)
{
	return bpf_cap();
}

/* __sys_bpf(): unprivileged_bpf_disabled, then the LSM. */
static int stock_sys_bpf_check(int cmd, union bpf_attr *attr, unsigned int size, bool bpf)
{
	if (!bpf && READ_ONCE(*ksyms.sysctl_unprivileged_bpf_disabled) &&
	    (cmd == BPF_MAP_CREATE || cmd == BPF_PROG_LOAD))
		return -EPERM;
	return ksyms.security_bpf(cmd, attr, size);
}

/* __sys_bpf(): what it refuses before it reads the attr. */
bool stock_sys_bpf_refuses_unread(int cmd, bool bpf)
{
	return (cmd == BPF_MAP_CREATE || cmd == BPF_PROG_LOAD) && !bpf &&
	       READ_ONCE(*ksyms.sysctl_unprivileged_bpf_disabled);
}

/* 6.1 CHECK_ATTR(): the bytes after the command's last field are zero. */
static bool attr_tail_zero(const union bpf_attr *attr, size_t end)
{
	return !memchr_inv((const void *)attr + end, 0, sizeof(*attr) - end);
}

/* 6.1 bpf_verifier_log_attr_valid() (kernel/bpf/log.c), for the attrs that name a log. */
bool stock_log_attr_ok(u32 level, u64 buf, u32 size)
{
	if (!level && !buf && !size)
		return true;
	return size >= 128 && size <= UINT_MAX >> 2 && level && buf &&
	       !(level & ~(BPF_LOG_LEVEL | BPF_LOG_STATS));
}

int stock_prog_load_check(union bpf_attr *attr, unsigned int size, bool bpf)
{
	enum bpf_prog_type type = attr->prog_type;
	int err = stock_sys_bpf_check(BPF_PROG_LOAD, attr, size, bpf);

	if (err)
		return err;
	/* bpf_prog_load(): CHECK_ATTR, prog_flags, before anything is read. */
	if (!attr_tail_zero(attr, offsetofend(union bpf_attr, core_relo_rec_size)))
		return -EINVAL;
	if (attr->prog_flags & ~(BPF_F_STRICT_ALIGNMENT | BPF_F_ANY_ALIGNMENT |
				 BPF_F_TEST_STATE_FREQ | BPF_F_SLEEPABLE |
				 BPF_F_TEST_RND_HI32 | BPF_F_XDP_HAS_FRAGS))
		return -EINVAL;
	if (attr->insn_cnt == 0 ||
	    attr->insn_cnt > (bpf ? BPF_COMPLEXITY_LIMIT_INSNS : BPF_MAXINSNS))
		return -E2BIG;
	if (type != BPF_PROG_TYPE_SOCKET_FILTER && type != BPF_PROG_TYPE_CGROUP_SKB && !bpf)
		return -EPERM;
	if (is_net_admin_prog_type(type) && !cap(CAP_NET_ADMIN) && !cap(CAP_SYS_ADMIN))
		return -EPERM;
	if (is_perfmon_prog_type(type) && !perfmon_cap())
		return -EPERM;
	return 0;
}

int stock_btf_load_check(union bpf_attr *attr, unsigned int size)
{
	bool bpf = bpf_cap();
	int err = stock_sys_bpf_check(BPF_BTF_LOAD, attr, size, bpf);

	if (err)
		return err;
	if (!attr_tail_zero(attr, offsetofend(union bpf_attr, btf_log_level)))
		return -EINVAL;
	if (!bpf)
		return -EPERM;
	/* btf_parse(): the log attrs before the blob is copied. */
	if (!stock_log_attr_ok(attr->btf_log_level, attr->btf_log_buf, attr->btf_log_size))
		return -EINVAL;
	return 0;
}

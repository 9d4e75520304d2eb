// SPDX-License-Identifier: GPL-2.0
/*
 * The program path's kernel copies of what the user passes with
 * BPF_PROG_LOAD besides the instructions: fd_array (only the entries the
 * program names, as 6.1 reads them), the func_info, line_info and
 * core_relo records (moved to the lowered program), and the verifier log,
 * where the module's own refusals are written as the verifier writes its.
 *
 * Who reaches this: any caller of bpf(BPF_PROG_LOAD) whose program may be
 * ours (prog_scan.c); they control every buffer and may change it while
 * the load runs.  Each is read once; kern_sys_bpf() then gets only kernel
 * pointers (a user value must never pass through: it takes every pointer
 * in attr as a kernel pointer).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "prog_ctx.h"

/* The verifier's limit on func_info, line_info and core_relo record sizes. */
#define REC_SIZE_MAX		252

/* Writes msg at the start of the user's verifier log, as the verifier would. */
void prog_log(const union bpf_attr *attr, const char *msg)
{
	char __user *buf = u64_to_user_ptr(attr->log_buf);
	size_t n = strlen(msg);

	if (!attr->log_level || !buf || attr->log_size < 2)
		return;
	n = min_t(size_t, n, attr->log_size - 1);
	if (!copy_to_user(buf, msg, n))
		put_user('\0', buf + n);
}

/*
 * A kernel copy of cnt user records of rec_size bytes whose first u32 is an
 * instruction offset (in units of unit bytes), moved to the lowered program.
 * one_to_one: each record must name an instruction the lowering kept as one
 * instruction (-EOPNOTSUPP otherwise), checked on the copy itself.
 */
static int remap_records(u64 *uptr, u32 cnt, u32 rec_size, u32 unit, bool one_to_one,
			 const struct bpfa_lower_result *res, u32 old_len, void **kbuf)
{
	u32 i, off;
	u8 *buf;

	*kbuf = NULL;
	/*
	 * kern_sys_bpf() takes every pointer in attr as a kernel pointer: a
	 * user value must never pass through.  No records: no pointer.
	 * Records at NULL: the stock answer for a user NULL.
	 */
	if (!cnt) {
		*uptr = 0;
		return 0;
	}
	if (!*uptr)
		return -EFAULT;
	if (rec_size < sizeof(u32) || rec_size > REC_SIZE_MAX || cnt > BPF_COMPLEXITY_LIMIT_INSNS)
		return -EINVAL;
	buf = kvmalloc_array(cnt, rec_size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, u64_to_user_ptr(*uptr), (size_t)cnt * rec_size)) {
		kvfree(buf);
		return -EFAULT;
	}
	for (i = 0; i < cnt; i++) {
		u32 *insn_off = (u32 *)(buf + (size_t)i * rec_size);

		off = *insn_off / unit;
		if (*insn_off % unit)
			continue;	/* the verifier rejects it */
		if (off < old_len && one_to_one &&
		    res->new_idx[off + 1] - res->new_idx[off] != 1) {
			kvfree(buf);
			return -EOPNOTSUPP;
		}
		/* Past the end stays past the end: the verifier refuses it. */
		*insn_off = (off < old_len ? res->new_idx[off] : res->len) * unit;
	}
	*uptr = (u64)(unsigned long)buf;
	*kbuf = buf;
	return 0;
}

/* The fd_array index insn names (an entry 6.1 reads), or -1. */
static s64 named_fd_index(const struct bpf_insn *insn)
{
	if (bpfa_is_idx_ldimm64(insn) && insn->imm >= 0 && insn->imm < FD_ARRAY_MAX)
		return insn->imm;
	if (insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_KFUNC_CALL &&
	    insn->off > 0)
		return insn->off;
	return -1;
}

/*
 * The kernel copy of fd_array, read once before anything looks at it: it
 * covers the entries the program can name (ld_imm64 MAP_IDX indexes and
 * kfunc BTF slots), which is what 6.1 will read from it.  Indexes that
 * cannot be covered (negative, or FD_ARRAY_MAX and above) are left out here
 * and refused for arena programs (check_fd_indexes()); 6.1 would read them
 * out of the copy's bounds.  Like 6.1, only named entries are read: none
 * named, nothing is read; an unreadable entry between two named ones is no
 * fault (it is -1 in the copy, and nothing reads it).
 */
int copy_fd_array(struct prog_load *pl)
{
	const u32 __user *ufds = u64_to_user_ptr(pl->attr.fd_array);
	u32 i, n = 0;
	s64 idx;

	if (!ufds)
		return 0;
	for (i = 0; i < pl->len; i++) {
		idx = named_fd_index(&pl->insns[i]);
		if (idx >= 0)
			n = max_t(u32, n, idx + 1);
	}
	if (!n)
		return 0;
	pl->fds = kvmalloc_array(n, sizeof(u32), GFP_KERNEL | __GFP_NOWARN);
	if (!pl->fds)
		return -ENOMEM;
	if (copy_from_user(pl->fds, ufds, n * sizeof(u32))) {
		memset(pl->fds, 0xff, n * sizeof(u32));
		for (i = 0; i < pl->len; i++) {
			idx = named_fd_index(&pl->insns[i]);
			/* A named entry 6.1 could not read either: its EFAULT. */
			if (idx >= 0 && get_user(pl->fds[idx], ufds + idx)) {
				kvfree(pl->fds);
				pl->fds = NULL;
				return -EFAULT;
			}
		}
	}
	pl->fd_cnt = n;
	return 0;
}

/* The verifier reports a too-new record size through uattr: pass it on. */
void copy_rec_sizes_back(union bpf_attr __user *uattr, const union bpf_attr *kattr)
{
	put_user(kattr->func_info_rec_size, &uattr->func_info_rec_size);
	put_user(kattr->line_info_rec_size, &uattr->line_info_rec_size);
	put_user(kattr->core_relo_rec_size, &uattr->core_relo_rec_size);
}

/*
 * kattr's func_info, line_info and core_relos, moved to the lowered program
 * res in kernel copies (rec; prog_attr_records_free() frees them, also after
 * an error).  0 or -errno; CO-RE relocations on an instruction the lowering
 * did not keep as one are refused with a message.
 */
int prog_attr_records(struct prog_load *pl, const struct bpfa_lower_result *res,
		      union bpf_attr *kattr, struct prog_records *rec)
{
	int ret;

	ret = remap_records(&kattr->func_info, kattr->func_info_cnt, kattr->func_info_rec_size, 1,
			    false, res, pl->len, &rec->func_info);
	if (!ret)
		ret = remap_records(&kattr->line_info, kattr->line_info_cnt,
				    kattr->line_info_rec_size, 1, false, res, pl->len,
				    &rec->line_info);
	if (!ret && kattr->core_relo_cnt) {
		ret = remap_records(&kattr->core_relos, kattr->core_relo_cnt,
				    kattr->core_relo_rec_size, sizeof(struct bpf_insn), true,
				    res, pl->len, &rec->core_relos);
		if (ret == -EOPNOTSUPP) {
			prog_log(&pl->attr,
				 "bpf_arena: kernel CO-RE relocations on arena accesses are not supported\n");
			ret = -EINVAL;
		}
	}
	return ret;
}

void prog_attr_records_free(struct prog_records *rec)
{
	kvfree(rec->core_relos);
	kvfree(rec->line_info);
	kvfree(rec->func_info);
}

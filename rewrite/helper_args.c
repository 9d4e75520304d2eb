// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the helper argument table (helper_args.h).  A helper
 * missing here is treated as reading five registers and accessing memory
 * upward from each pointer: never less than it does.
 */
#include "helper_args.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/*
 * Per argument register: S not dereferenced, M memory of the size in the
 * next register, L a long (8 bytes), K the key and V a value of the map
 * in R1, C a callback context (any of the caller's frame); lower case: the
 * helper writes it (m, l, v).
 */
struct helper_row {
	__s32 id;
	__u8 nargs, checked;
	const char *kinds;
};

static const struct helper_row rows[] = {
	{ BPF_FUNC_map_lookup_elem, 2, 2, "SK" },
	{ BPF_FUNC_map_update_elem, 4, 4, "SKVS" },
	{ BPF_FUNC_map_delete_elem, 2, 2, "SK" },
	{ BPF_FUNC_map_push_elem, 3, 3, "SVS" },
	{ BPF_FUNC_map_pop_elem, 2, 2, "Sv" },
	{ BPF_FUNC_map_peek_elem, 2, 2, "Sv" },
	{ BPF_FUNC_probe_read, 3, 3, "mSS" },
	{ BPF_FUNC_probe_read_str, 3, 3, "mSS" },
	{ BPF_FUNC_probe_read_kernel, 3, 3, "mSS" },
	{ BPF_FUNC_probe_read_user, 3, 3, "mSS" },
	{ BPF_FUNC_probe_read_kernel_str, 3, 3, "mSS" },
	{ BPF_FUNC_probe_read_user_str, 3, 3, "mSS" },
	{ BPF_FUNC_copy_from_user, 3, 3, "mSS" },
	{ BPF_FUNC_get_current_comm, 2, 2, "mS" },
	/* The format's values are passed unchecked (ARG_DONTCARE). */
	{ BPF_FUNC_trace_printk, 5, 2, "MSSSS" },
	/* The format is a constant string: never the stack. */
	{ BPF_FUNC_snprintf, 5, 5, "mSSMS" },
	{ BPF_FUNC_ringbuf_output, 4, 4, "SMSS" },
	{ BPF_FUNC_perf_event_output, 5, 5, "SSSMS" },
	{ BPF_FUNC_get_stack, 4, 4, "SmSS" },
	{ BPF_FUNC_strtol, 4, 4, "MSSl" },
	{ BPF_FUNC_strtoul, 4, 4, "MSSl" },
	{ BPF_FUNC_tail_call, 3, 3, "SSS" },
	{ BPF_FUNC_loop, 4, 4, "SSCS" },
	{ BPF_FUNC_for_each_map_elem, 4, 4, "SSCS" },
	{ BPF_FUNC_find_vma, 5, 5, "SSSCS" },
	{ BPF_FUNC_user_ringbuf_drain, 4, 4, "SSCS" },
	{ BPF_FUNC_ktime_get_ns, 0, 0, "" },
	{ BPF_FUNC_ktime_get_boot_ns, 0, 0, "" },
	{ BPF_FUNC_ktime_get_coarse_ns, 0, 0, "" },
	{ BPF_FUNC_jiffies64, 0, 0, "" },
	{ BPF_FUNC_get_prandom_u32, 0, 0, "" },
	{ BPF_FUNC_get_smp_processor_id, 0, 0, "" },
	{ BPF_FUNC_get_numa_node_id, 0, 0, "" },
	{ BPF_FUNC_get_current_pid_tgid, 0, 0, "" },
	{ BPF_FUNC_get_current_uid_gid, 0, 0, "" },
	{ BPF_FUNC_get_current_task, 0, 0, "" },
	{ BPF_FUNC_get_current_task_btf, 0, 0, "" },
};

static __u8 kind_of(char c, __u8 *fixed)
{
	switch (c) {
	case 'M':
	case 'm':
		return BPFA_HARG_MEM;
	case 'L':
	case 'l':
		*fixed = 8;
		return BPFA_HARG_FIXED;
	case 'K':
		return BPFA_HARG_MAP_KEY;
	case 'V':
	case 'v':
		return BPFA_HARG_MAP_VALUE;
	case 'C':
		return BPFA_HARG_FRAME;
	}
	return BPFA_HARG_SCALAR;
}

void bpfa_helper_args(const struct bpf_insn *insn, struct bpfa_helper_args *out)
{
	size_t i, k;

	memset(out, 0, sizeof(*out));
	if (insn->src_reg == 0) {
		for (i = 0; i < ARRAY_SIZE(rows); i++) {
			if (rows[i].id != insn->imm)
				continue;
			out->known = true;
			out->nargs = rows[i].nargs;
			out->checked = rows[i].checked;
			for (k = 0; rows[i].kinds[k]; k++) {
				out->kind[k] = kind_of(rows[i].kinds[k], &out->fixed[k]);
				if (rows[i].kinds[k] >= 'a' && rows[i].kinds[k] <= 'z')
					out->writes |= 1u << k;
			}
			return;
		}
	}
	/* A subprogram, a kfunc or a helper not listed. */
	out->nargs = 5;
	out->checked = 5;
	out->writes = 0x1f;
	for (k = 0; k < 5; k++)
		out->kind[k] = insn->src_reg ? BPFA_HARG_FRAME : BPFA_HARG_UPWARD;
}

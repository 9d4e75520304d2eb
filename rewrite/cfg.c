// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: program structure shared by the lowering and the loop
 * pass (see cfg.h).
 */
#include "cfg.h"

#ifndef __KERNEL__
#include <stdio.h>
#endif

__s64 bpfa_mark_ldimm64(const struct bpf_insn *in, __u32 len, __u8 *flags, __u8 bit,
			bool strict)
{
	__u32 i;

	for (i = 0; i < len; i++) {
		if (!bpfa_is_ldimm64(&in[i]))
			continue;
		if (i + 1 >= len || (strict && (in[i + 1].code || in[i + 1].dst_reg ||
						in[i + 1].src_reg || in[i + 1].off)))
			return i;
		flags[++i] |= bit;
	}
	return -1;
}

void bpfa_vmsg(char *msg, size_t size, __u32 idx, const char *fmt, va_list ap)
{
	size_t n;

	snprintf(msg, size, "bpf_arena: insn %u: ", idx);
	n = strlen(msg);
	vsnprintf(msg + n, size - n, fmt, ap);
	n = strlen(msg);
	if (n + 1 < size) {
		msg[n] = '\n';
		msg[n + 1] = '\0';
	} else {
		msg[size - 2] = '\n';
	}
}

// SPDX-License-Identifier: GPL-2.0
/* bpf-arena-dkms: the source line of a user's instruction (src_line.h). */
#include "src_line.h"

#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/string.h>
#else
#include <stdio.h>
#include <string.h>
#endif

/* A longer file name has no "file:line": its end is not looked for. */
#define SRC_FILE_SCAN	256
#define SRC_FILE_SHOW	48

static __u32 insn_off(const void *linfo, __u32 i, __u32 rec_size)
{
	struct bpf_line_info li;

	memcpy(&li, (const __u8 *)linfo + (size_t)i * rec_size, sizeof(li));
	return li.insn_off;
}

bool bpfa_src_lines_sorted(const void *linfo, __u32 cnt, __u32 rec_size)
{
	__u32 i;

	for (i = 1; i < cnt; i++)
		if (insn_off(linfo, i, rec_size) < insn_off(linfo, i - 1, rec_size))
			return false;
	return true;
}

bool bpfa_src_where(const struct bpfa_src_lines *s, __u32 u, char *buf, __u32 size)
{
	__u32 l = u, lo = 0, hi, off, n, cut;
	struct bpf_line_info li;
	const char *file;

	if (!s->cnt || !s->strs)
		return false;
	if (s->new_idx) {
		if (u >= s->old_len)
			return false;
		l = s->new_idx[u];
	}
	if (insn_off(s->linfo, 0, s->rec_size) > l)
		return false;
	hi = s->cnt - 1;
	while (lo < hi) {
		__u32 mid = lo + (hi - lo + 1) / 2;

		if (insn_off(s->linfo, mid, s->rec_size) <= l)
			lo = mid;
		else
			hi = mid - 1;
	}
	memcpy(&li, (const __u8 *)s->linfo + (size_t)lo * s->rec_size, sizeof(li));
	off = li.file_name_off;
	if (!off || off >= s->str_len)
		return false;
	file = s->strs + off;
	for (n = 0; n < SRC_FILE_SCAN && off + n < s->str_len && file[n]; n++)
		;
	if (n == SRC_FILE_SCAN || off + n == s->str_len)
		return false;
	for (cut = n; cut && file[cut - 1] != '/'; cut--)
		;
	snprintf(buf, size, "%.*s:%u", (int)(n - cut < SRC_FILE_SHOW ? n - cut : SRC_FILE_SHOW),
		 file + cut, BPF_LINE_INFO_LINE_NUM(li.line_col));
	return true;
}

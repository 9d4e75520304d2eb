/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: the source line of a user's instruction, from the
 * program's line_info and its BTF strings: what the log translation and the
 * loop pass's refusals print after an insn number.  Bounded work on any
 * input: a file name is looked at for SRC_FILE_SCAN bytes at most.
 */
#ifndef BPFA_SRC_LINE_H
#define BPFA_SRC_LINE_H

#include "insn.h"

/* "file:line": 48 bytes of name, ':', 10 digits, NUL. */
#define BPFA_SRC_WHERE_LEN	60

struct bpfa_src_lines {
	const void *linfo;	/* struct bpf_line_info records, sorted by insn_off */
	__u32 cnt, rec_size;	/* rec_size >= sizeof(struct bpf_line_info) */
	const __u32 *new_idx;	/* user insn -> the records' numbering; NULL: the same */
	__u32 old_len;		/* the user's insns (new_idx's domain) */
	const char *strs;	/* the BTF's string section */
	__u32 str_len;
};

/* Whether cnt records of rec_size bytes are sorted by insn_off. */
bool bpfa_src_lines_sorted(const void *linfo, __u32 cnt, __u32 rec_size);

/*
 * "file:line" of user insn u (the file's base name, at most 48 bytes of it)
 * into buf: the last record at or before it.  false, buf untouched, when
 * there is none or its file name does not end within SRC_FILE_SCAN bytes.
 */
bool bpfa_src_where(const struct bpfa_src_lines *s, __u32 u, char *buf, __u32 size);

#endif /* BPFA_SRC_LINE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: the verifier log in the user's numbers.
 *
 * The stock 6.1 verifier checks the program the lowering and the loop pass
 * made (rewrite/lower.c, rewrite/loops.c), so its log numbers that
 * program's instructions and names the functions the loop pass generated.
 * bpfa_xlate_log() rewrites such a log, line by line, into the numbering
 * of the program the user loaded (docs/DESIGN.md "The verifier log").  Its
 * input is untrusted text (any bytes, any length): it is only scanned,
 * every number it parses is bounded, and the output is bounded by the
 * caller's size.  Plain C: no libc beyond memcpy/memset/snprintf/strlen,
 * no allocation, O(1) stack.
 */
#ifndef BPFA_LOG_XLATE_H
#define BPFA_LOG_XLATE_H

#include "insn.h"

#define BPFA_XLATE_NAME_LEN	32
#define BPFA_XLATE_WHERE_LEN	96

/* A function the loop pass generated, in the final program. */
struct bpfa_xlate_fn {
	__u32 func;			/* its func# in the final program */
	__u32 start;			/* its first insn in the final program */
	__u32 head;			/* the loop's head, the user's insn index */
	bool body;			/* the body (else the bpf_loop callback) */
	bool iter;			/* a bpf_for/bpf_repeat loop (else may_goto) */
	char name[BPFA_XLATE_NAME_LEN];	/* its BTF name, or "" */
};

struct bpfa_xlate {
	/* final insn -> lowered insn | BPFA_SRC_* (loops.h), len entries; NULL: identity */
	const __u32 *src;
	__u32 len;			/* the final program's length */
	/* user insn -> where its lowered sequence starts, old_len + 1 entries; NULL: identity */
	const __u32 *new_idx;
	__u32 old_len;
	const struct bpfa_xlate_fn *fns;
	__u32 nfns;
	/*
	 * "file:line" of the user's insn u into buf (size bytes,
	 * NUL-terminated); false if unknown.  May be NULL.
	 */
	bool (*where)(void *ctx, __u32 u, char *buf, __u32 size);
	void *ctx;
	/*
	 * Asked every BPFA_XLATE_STEPS steps of the scan (a line or a token):
	 * true stops the translation (BPFA_XLATE_STOPPED).  The kernel
	 * reschedules here and stops for a fatal signal: a log of crafted
	 * text is up to 16 MiB.  May be NULL.
	 */
	bool (*stop)(void *ctx);
};

#define BPFA_XLATE_STEPS	1024
#define BPFA_XLATE_STOPPED	(~0ull)

/*
 * The translation of the log text in[0, in_len) (NUL bytes end it) into
 * out[0, out_size): at most out_size - 1 bytes and a NUL.  Returns the
 * length the whole translation needs, without the NUL: more than
 * out_size - 1 means out holds only its beginning; BPFA_XLATE_STOPPED if
 * x->stop stopped it (out then holds no translation to use).  Without out
 * (out_size 0) the text is scanned once, else twice.
 */
__u64 bpfa_xlate_log(const struct bpfa_xlate *x, const char *in, __u64 in_len,
		     char *out, __u64 out_size);

struct bpfa_loops_result;

/*
 * The functions the loop pass generated in res (its func_info and source
 * map), described with x's numbering into fns (up to cap); their number.
 */
__u32 bpfa_xlate_loop_fns(const struct bpfa_loops_result *res, const struct bpfa_xlate *x,
			  struct bpfa_xlate_fn *fns, __u32 cap);

#endif /* BPFA_LOG_XLATE_H */

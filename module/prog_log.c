// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier log of an arena or loop program in the user's numbers
 * (docs/DESIGN.md "The verifier log"; the translation: rewrite/log_xlate.c).
 *
 * The stock verifier checks the lowered program and writes its log straight
 * into the user's buffer, numbered as that program.  After the stock load
 * returns, the log is read back ONCE, translated in kernel memory and
 * written back, when:
 *   - log_level is not 0 and there is a buffer;
 *   - the text read (up to its NUL) is at most XLATE_MAX bytes;
 *   - the translation fits in log_size, or the verifier's log was already
 *     full (its load answered ENOSPC): then it is cut at log_size - 1, as
 *     the verifier cuts its own.
 * Otherwise, or on any failure (a fault, no memory), the log stays as the
 * verifier wrote it.  The load's answer (fd or errno) is decided before and
 * never changes here.
 *
 * Who reaches this: any caller whose program the module lowered or whose
 * loops it translated (CAP_BPF and CAP_PERFMON).  They control the buffer
 * and its size, and sibling threads may change or unmap it at any time:
 * its bytes are untrusted text, read with copy_from_user() into a copy
 * that only that copy is used from; a fault leaves the log alone.  The
 * program's BTF (line_info file names) is the one the snapshot's fd names,
 * validated by btf_parse(); every string offset is checked against it.
 * Allocations are charged to the caller's memory cgroup.
 *
 * The caller also chooses the cost: every line of the log may name a source
 * line and a generated function.  Each such name costs a bounded number of
 * steps (the file name is looked at for FILE_SCAN_MAX bytes, not for its
 * length, up to the BTF's 16 MiB), the translation is never longer than
 * XLATE_MAX either (a token of 7 bytes can become a sentence of 150), and
 * the scan reschedules and stops for a fatal signal.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kernel_compat.h"
#include "ksyms.h"
#include "log_xlate.h"
#include "loops.h"
#include "prog_ctx.h"
#include "src_line.h"

/* Logs longer than this stay as the verifier wrote them (bounded work). */
#define XLATE_MAX		(16u << 20)
#define XLATE_CHUNK		(64u << 10)
#define XLATE_FNS_MAX		(2 * 16 * BPFA_LOOPS_MAX_DEPTH)

/* bpfa_xlate's where(): the source line of a user's insn. */
static bool where(void *ctx, u32 u, char *buf, u32 size)
{
	return bpfa_src_where(ctx, u, buf, size);
}

/*
 * The line_info lookup of where(), if the load came with line_info whose
 * offsets are sorted (the verifier refuses the load otherwise, but it may
 * not have got that far) and a BTF; *btf holds the reference.
 */
static void where_init(const struct prog_load *pl, const struct bpfa_lower_result *res,
		       const struct prog_records *rec, struct bpfa_src_lines *w,
		       struct btf **btf)
{
	const struct btf_header *h;
	u32 rec_size = pl->attr.line_info_rec_size;

	*btf = NULL;
	if (!rec->line_info || !pl->attr.line_info_cnt ||
	    rec_size < sizeof(struct bpf_line_info) ||
	    !bpfa_src_lines_sorted(rec->line_info, pl->attr.line_info_cnt, rec_size))
		return;
	*btf = ksyms.btf_get_by_fd(pl->attr.prog_btf_fd);
	if (IS_ERR(*btf)) {
		*btf = NULL;
		return;
	}
	if (ksyms.btf_is_kernel(*btf)) {
		ksyms.btf_put(*btf);
		*btf = NULL;
		return;
	}
	h = arena_btf_data(*btf);
	w->strs = (const char *)h + h->hdr_len + h->str_off;
	w->str_len = h->str_len;
	w->linfo = rec->line_info;
	w->cnt = pl->attr.line_info_cnt;
	w->rec_size = rec_size;
	w->new_idx = res->new_idx;
	w->old_len = pl->len;
}

/* Between steps of the translation: other tasks run, a killed caller stops. */
static bool xlate_stop(void *ctx)
{
	cond_resched();
	return fatal_signal_pending(current);
}

/*
 * The user's log text, read once, up to its NUL (at most XLATE_MAX bytes
 * and log_size); NULL if it cannot be read or is too long.
 */
static char *read_log(char __user *ubuf, u32 size, u32 *len)
{
	u32 cap = 0, n = 0, chunk;
	char *buf = NULL, *nb, *nul;

	while (n < size) {
		chunk = min_t(u32, XLATE_CHUNK, size - n);
		if (n + chunk > XLATE_MAX)
			goto fail;
		if (n + chunk + 1 > cap) {
			cap = min_t(u32, max_t(u32, 2 * cap, n + chunk + 1), size + 1);
			nb = kvmalloc(cap, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
			if (!nb)
				goto fail;
			if (buf)
				memcpy(nb, buf, n);
			kvfree(buf);
			buf = nb;
		}
		if (copy_from_user(buf + n, ubuf + n, chunk))
			goto fail;
		nul = memchr(buf + n, '\0', chunk);
		if (nul) {
			n = nul - buf;
			break;
		}
		n += chunk;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	kvfree(buf);
	return NULL;
}

void prog_log_translate(const struct prog_load *pl, const struct bpfa_lower_result *res,
			const struct prog_records *rec, const struct bpfa_loops_result *lres,
			u32 final_len)
{
	char __user *ubuf = u64_to_user_ptr(pl->attr.log_buf);
	u32 size = pl->attr.log_size, len, out_size;
	struct bpfa_xlate_fn *fns = NULL;
	struct bpfa_src_lines wc = { };
	struct bpfa_xlate x = { };
	struct btf *btf = NULL;
	char *in, *out = NULL;
	bool full;
	u64 need;

	if (!pl->attr.log_level || !ubuf || size < 2)
		return;
	in = read_log(ubuf, size, &len);
	if (!in)
		return;
	/* The verifier fills a log to log_size - 1 and answers ENOSPC. */
	full = len >= size - 1;
	x.src = lres ? lres->src : NULL;
	x.len = final_len;
	x.new_idx = res->new_idx;
	x.old_len = pl->len;
	if (lres && lres->src) {
		fns = kcalloc(XLATE_FNS_MAX, sizeof(*fns), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!fns)
			goto out;
		x.fns = fns;
		x.nfns = bpfa_xlate_loop_fns(lres, &x, fns, XLATE_FNS_MAX);
	}
	where_init(pl, res, rec, &wc, &btf);
	if (btf) {
		x.where = where;
		x.ctx = &wc;
	}
	x.stop = xlate_stop;
	need = bpfa_xlate_log(&x, in, len, NULL, 0);
	if (need == BPFA_XLATE_STOPPED)
		goto out;
	/*
	 * A log that fit stays one that fits: else the verifier's own.  A full
	 * log is at most XLATE_MAX + 1 bytes (read_log()), and so is any copy.
	 */
	if (!full && (need > size - 1 || need > XLATE_MAX))
		goto out;
	out_size = min_t(u64, need, size - 1) + 1;
	out = kvmalloc(out_size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!out)
		goto out;
	if (bpfa_xlate_log(&x, in, len, out, out_size) == BPFA_XLATE_STOPPED)
		goto out;
	if (strcmp(in, out) && !copy_to_user(ubuf, out, strlen(out)))
		put_user('\0', ubuf + strlen(out));
out:
	if (btf)
		ksyms.btf_put(btf);
	kvfree(out);
	kfree(fns);
	kvfree(in);
}

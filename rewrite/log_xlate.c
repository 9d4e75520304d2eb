// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the verifier log in the user's numbers (log_xlate.h;
 * docs/DESIGN.md "The verifier log").
 *
 * What is translated, in each line of 6.1's log (kernel/bpf/verifier.c):
 *
 *   "N: ..."            an insn or state line, N at the start of the line
 *   "from N to M"       the path lines of log level 2
 *   "insn N [to M]"     error messages ("back-edge from insn N to M", ...)
 *   "caller at N"       log level 2's return from a call
 *   "func#K [@N]"       "Func#K" too: a generated function becomes words
 *   "pc+D", "pc-D"      a jump or call of an insn line: the user's distance,
 *                       or words for a call of a generated function
 *   "bpfa_loop_..."     a generated function's name: words
 *
 * An insn of the final program is the user's insn U ("U") when it copies
 * U or belongs to the sequence the lowering made of U; code the loop pass
 * added for U (drivers, copies in and out, budgets) is "U+" at the start
 * of a line and "code bpf_arena added for insn U" in a message.  Anything
 * that does not parse as one of the forms above is copied as it is.
 */
#include "log_xlate.h"
#include "loops.h"

#ifdef __KERNEL__
#include <linux/kernel.h>
#else
#include <stdio.h>
#endif

#define NUM_DIGITS_MAX	10	/* insn indexes are below 2^32 */

struct wr {
	char *out;
	__u64 size, n;
	bool added_seen;
	bool stopped;
	__u32 steps;
};

/* One step of the scan; false once x->stop said to stop. */
static bool step(struct wr *w, const struct bpfa_xlate *x)
{
	if (++w->steps % BPFA_XLATE_STEPS == 0 && x->stop && !w->stopped)
		w->stopped = x->stop(x->ctx);
	return !w->stopped;
}

static void put_mem(struct wr *w, const char *s, __u64 len)
{
	__u64 room = w->size && w->n < w->size - 1 ? w->size - 1 - w->n : 0;

	if (room)
		memcpy(w->out + w->n, s, len < room ? len : room);
	w->n += len;
}

static void put_str(struct wr *w, const char *s)
{
	put_mem(w, s, strlen(s));
}

static void put_u32(struct wr *w, __u32 v)
{
	char b[16];

	snprintf(b, sizeof(b), "%u", v);
	put_str(w, b);
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_word(char ch)
{
	return is_digit(ch) || ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* Digits at s[0, end): their value (below 2^32) and count, or 0 digits. */
static __u32 get_num(const char *s, const char *end, __u32 *v)
{
	__u64 val = 0;
	__u32 n = 0;

	while (s + n < end && is_digit(s[n])) {
		if (++n > NUM_DIGITS_MAX)
			return 0;
		val = val * 10 + (__u64)(s[n - 1] - '0');
	}
	if (!n || val > 0xffffffffull)
		return 0;
	*v = (__u32)val;
	return n;
}

static bool starts(const char *s, const char *end, const char *lit)
{
	__u64 n = strlen(lit);

	return (__u64)(end - s) >= n && !memcmp(s, lit, n);
}

/* The user's insn of the final program's insn f; false if f is none. */
static bool user_of(const struct bpfa_xlate *x, __u32 f, __u32 *u, bool *added)
{
	__u32 l = f, lo = 0, hi;

	if (f >= x->len)
		return false;
	*added = false;
	if (x->src) {
		l = x->src[f] & BPFA_SRC_IDX_MASK;
		*added = x->src[f] & BPFA_SRC_ADDED;
	}
	if (!x->new_idx) {
		*u = l;
		return true;
	}
	/* The largest user insn whose lowered sequence starts at or before l. */
	hi = x->old_len;
	while (lo < hi) {
		__u32 mid = lo + (hi - lo + 1) / 2;

		if (x->new_idx[mid] <= l)
			lo = mid;
		else
			hi = mid - 1;
	}
	*u = lo;
	return true;
}

static const struct bpfa_xlate_fn *fn_by_func(const struct bpfa_xlate *x, __u32 func)
{
	__u32 i;

	for (i = 0; i < x->nfns; i++)
		if (x->fns[i].func == func)
			return &x->fns[i];
	return NULL;
}

static const struct bpfa_xlate_fn *fn_by_start(const struct bpfa_xlate *x, __u32 start)
{
	__u32 i;

	for (i = 0; i < x->nfns; i++)
		if (x->fns[i].start == start)
			return &x->fns[i];
	return NULL;
}

static void put_where(struct wr *w, const struct bpfa_xlate *x, __u32 u)
{
	char b[BPFA_XLATE_WHERE_LEN];

	if (!x->where || !x->where(x->ctx, u, b, sizeof(b)))
		return;
	b[sizeof(b) - 1] = '\0';
	put_str(w, " (");
	put_str(w, b);
	put_str(w, ")");
}

/* "the body of the bpf_for loop at insn U (file:line)" */
static void put_fn(struct wr *w, const struct bpfa_xlate *x, const struct bpfa_xlate_fn *fn,
		   bool capital)
{
	put_str(w, capital ? "The " : "the ");
	put_str(w, fn->body ? "body of the " : "bpf_loop callback bpf_arena made for the ");
	put_str(w, fn->iter ? "bpf_for/bpf_repeat loop at insn " :
		    "may_goto (can_loop/cond_break) loop at insn ");
	put_u32(w, fn->head);
	put_where(w, x, fn->head);
}

/* Final insn f as a line's number: "U" or "U+"; the digits as they were if f is none. */
static void put_line_num(struct wr *w, const struct bpfa_xlate *x, __u32 f, const char *s,
			 __u32 nd)
{
	bool added;
	__u32 u;

	if (!user_of(x, f, &u, &added)) {
		put_mem(w, s, nd);
		return;
	}
	put_u32(w, u);
	if (added) {
		put_str(w, "+");
		w->added_seen = true;
	}
}

/*
 * Final insn f in a message, after prefix: "U (file:line)", or "code
 * bpf_arena added for insn U (file:line)" without the prefix.
 */
static void put_msg_num(struct wr *w, const struct bpfa_xlate *x, __u32 f, const char *s,
			__u32 nd, const char *prefix)
{
	bool added;
	__u32 u;

	if (!user_of(x, f, &u, &added)) {
		put_str(w, prefix);
		put_mem(w, s, nd);
		return;
	}
	put_str(w, added ? "code bpf_arena added for insn " : prefix);
	put_u32(w, u);
	put_where(w, x, u);
}

/* "pc+D" at p in the line of final insn f (has_f): the user's distance, or words. */
static __u32 put_pc(struct wr *w, const struct bpfa_xlate *x, const char *p, const char *end,
		    bool has_f, __u32 f)
{
	const struct bpfa_xlate_fn *fn;
	__u32 d, nd, uf, ut, n;
	bool added, added_f;
	__s64 t;

	if (!has_f || (__u64)(end - p) < 4 || (p[2] != '+' && p[2] != '-'))
		return 0;
	nd = get_num(p + 3, end, &d);
	if (!nd)
		return 0;
	t = (__s64)f + 1 + (p[2] == '+' ? (__s64)d : -(__s64)d);
	if (t < 0 || t >= x->len)
		return 0;
	fn = fn_by_start(x, (__u32)t);
	if (fn) {
		put_fn(w, x, fn, false);
		return 3 + nd;
	}
	if (!user_of(x, f, &uf, &added_f) || !user_of(x, (__u32)t, &ut, &added))
		return 0;
	if (added_f || added || ut == uf) {
		/* No distance in the user's program: say where it goes. */
		put_msg_num(w, x, (__u32)t, p, 0, "insn ");
	} else {
		t = (__s64)ut - uf - 1;
		put_str(w, t < 0 ? "pc-" : "pc+");
		put_u32(w, (__u32)(t < 0 ? -t : t));
	}
	n = 3 + nd;
	/* 6.1 may print the next state on the jump's line: " N: R..." */
	if (starts(p + n, end, " ")) {
		nd = get_num(p + n + 1, end, &d);
		if (nd && starts(p + n + 1 + nd, end, ":")) {
			put_str(w, " ");
			put_line_num(w, x, d, p + n + 1, nd);
			n += 1 + nd;
		}
	}
	return n;
}

/* "func#K" / "Func#K" [" @N"] at p; the bytes consumed, 0 if not that. */
static __u32 put_func(struct wr *w, const struct bpfa_xlate *x, const char *p, const char *end)
{
	const struct bpfa_xlate_fn *fn;
	__u32 k, nd, n, at;

	nd = get_num(p + 5, end, &k);
	if (!nd)
		return 0;
	n = 5 + nd;
	fn = fn_by_func(x, k);
	if (fn)
		put_fn(w, x, fn, p[0] == 'F');
	else
		put_mem(w, p, n);
	if (starts(p + n, end, " @")) {
		nd = get_num(p + n + 2, end, &at);
		if (nd) {
			put_str(w, " @");
			put_line_num(w, x, at, p + n + 2, nd);
			n += 2 + nd;
		}
	}
	return n;
}

/* A generated function's name at p. */
static __u32 put_name(struct wr *w, const struct bpfa_xlate *x, const char *p, const char *end)
{
	__u32 i, n = 0;

	while (p + n < end && is_word(p[n]))
		n++;
	/* The name's length first: no scan of every name for every word. */
	for (i = 0; i < x->nfns; i++)
		if (n < BPFA_XLATE_NAME_LEN && !x->fns[i].name[n] && !memcmp(x->fns[i].name, p, n))
			break;
	if (i < x->nfns)
		put_fn(w, x, &x->fns[i], false);
	else
		put_str(w, "a function bpf_arena made for a loop");
	/* "Validating NAME() func#K...": said once */
	if (starts(p + n, end, "()"))
		n += 2;
	if (i < x->nfns && starts(p + n, end, " func#")) {
		__u32 k, nd = get_num(p + n + 6, end, &k);

		if (nd && k == x->fns[i].func)
			n += 6 + nd;
	}
	return n;
}

static void xlate_line(struct wr *w, const struct bpfa_xlate *x, const char *s, const char *end)
{
	const char *p = s;
	bool has_f = false;
	__u32 f = 0, v, nd, n;

	/* "N:" at the start: an insn or state line of final insn N. */
	nd = get_num(p, end, &f);
	if (nd && p + nd < end && p[nd] == ':') {
		has_f = true;
		put_line_num(w, x, f, p, nd);
		p += nd;
	}
	while (p < end && step(w, x)) {
		bool boundary = p == s || !is_word(p[-1]);

		n = 0;
		if (boundary && starts(p, end, "from ")) {
			nd = get_num(p + 5, end, &v);
			if (nd && starts(p + 5 + nd, end, " to ")) {
				__u32 nd2 = get_num(p + 9 + nd, end, &f);

				if (nd2) {
					put_str(w, "from ");
					put_line_num(w, x, v, p + 5, nd);
					put_str(w, " to ");
					put_line_num(w, x, f, p + 9 + nd, nd2);
					n = 9 + nd + nd2;
				}
			}
		} else if (boundary && starts(p, end, "insn ")) {
			nd = get_num(p + 5, end, &v);
			if (nd) {
				put_msg_num(w, x, v, p + 5, nd, "insn ");
				n = 5 + nd;
				if (starts(p + n, end, " to ")) {
					__u32 nd2 = get_num(p + n + 4, end, &v);

					if (nd2) {
						put_str(w, " to ");
						put_msg_num(w, x, v, p + n + 4, nd2, "");
						n += 4 + nd2;
					}
				}
			}
		} else if (boundary && starts(p, end, "caller at ")) {
			nd = get_num(p + 10, end, &v);
			if (nd) {
				put_str(w, "caller at ");
				put_line_num(w, x, v, p + 10, nd);
				n = 10 + nd;
			}
		} else if (boundary && (starts(p, end, "func#") || starts(p, end, "Func#"))) {
			n = put_func(w, x, p, end);
		} else if (boundary && starts(p, end, "pc")) {
			n = put_pc(w, x, p, end, has_f, f);
		} else if (boundary && starts(p, end, "bpfa_loop_")) {
			n = put_name(w, x, p, end);
		}
		if (!n) {
			put_mem(w, p, 1);
			n = 1;
		}
		p += n;
	}
}

/*
 * A "; <source>" line of 6.1's log (no "@ file:line" yet, as 6.12 has),
 * followed by the insn line "N:" it describes: where N is in the user's file.
 */
static void put_source_where(struct wr *w, const struct bpfa_xlate *x, const char *s,
			     const char *end, const char *next, const char *in_end)
{
	char b[BPFA_XLATE_WHERE_LEN];
	__u32 f, nd, u;
	bool added;

	if (!x->where || !starts(s, end, "; ") || !next || next >= in_end)
		return;
	nd = get_num(next, in_end, &f);
	if (!nd || !starts(next + nd, in_end, ":") || !user_of(x, f, &u, &added))
		return;
	if (!x->where(x->ctx, u, b, sizeof(b)))
		return;
	b[sizeof(b) - 1] = '\0';
	put_str(w, " @ ");
	put_str(w, b);
}

static void xlate_all(struct wr *w, const struct bpfa_xlate *x, const char *in, __u64 in_len)
{
	const char *p = in, *end = in + in_len, *nl;

	while (p < end && step(w, x)) {
		nl = memchr(p, '\n', (size_t)(end - p));
		xlate_line(w, x, p, nl ? nl : end);
		if (!nl)
			break;
		put_source_where(w, x, p, nl, nl + 1, end);
		put_mem(w, "\n", 1);
		p = nl + 1;
	}
}

/* Not "bpf_arena: ...": that prefix says the module refused the program. */
#define LEGEND "insn numbers are your program's; N+ is code bpf_arena added for insn N\n"

__u64 bpfa_xlate_log(const struct bpfa_xlate *x, const char *in, __u64 in_len,
		     char *out, __u64 out_size)
{
	struct wr probe = { NULL, 0, 0, false, false, 0 };
	struct wr w = { out, out_size, 0, false, false, 0 };
	const char *nul = memchr(in, '\0', (size_t)in_len);

	if (nul)
		in_len = (__u64)(nul - in);
	/* The legend first, when a line says "N+": one pass to know. */
	xlate_all(&probe, x, in, in_len);
	if (probe.stopped)
		return BPFA_XLATE_STOPPED;
	if (probe.added_seen)
		put_str(&w, LEGEND);
	if (!out_size)
		return w.n + probe.n;
	xlate_all(&w, x, in, in_len);
	out[w.n < out_size - 1 ? w.n : out_size - 1] = '\0';
	return w.stopped ? BPFA_XLATE_STOPPED : w.n;
}

__u32 bpfa_xlate_loop_fns(const struct bpfa_loops_result *res, const struct bpfa_xlate *x,
			  struct bpfa_xlate_fn *fns, __u32 cap)
{
	struct bpfa_btf_cursor cur = { 0 };
	__u32 k, n = 0, start, flags;
	struct bpfa_xlate_fn *fn;
	bool added;

	for (k = 0; k < res->func_info_cnt && n < cap; k++) {
		start = res->func_info[k].insn_off;
		if (!res->src || start >= res->len)
			continue;
		flags = res->src[start];
		if (!(flags & (BPFA_SRC_BODY | BPFA_SRC_CB)))
			continue;
		fn = &fns[n];
		memset(fn, 0, sizeof(*fn));
		if (!user_of(x, start, &fn->head, &added))
			continue;
		fn->func = k;
		fn->start = start;
		fn->body = flags & BPFA_SRC_BODY;
		fn->iter = flags & BPFA_SRC_ITER;
		bpfa_loops_func_name_at(res, &cur, res->func_info[k].type_id, fn->name,
					sizeof(fn->name));
		n++;
	}
	return n;
}

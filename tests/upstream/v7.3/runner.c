// SPDX-License-Identifier: GPL-2.0
/*
 * upstream_loops: Linux 7.3.4's loop selftests (tests/upstream/v7.3,
 * unmodified) run the way 7.3's test_loader.c runs them, on 6.1 + module,
 * 6.12 and 7.3.
 *
 * 7.3's bpf_misc.h writes each annotation as a BTF decl tag
 * "comment:<__COUNTER__>:<tag>"; they are collected per program and sorted
 * with strverscmp (source order), as collect_decl_tags().  Applied as
 * run_subtest() applies them: one subtest per program, loaded alone (plus
 * __auxiliary ones) from a fresh open of the object, with the test flags
 * the kernel accepts (testing_prog_flags()) and __flag/__log_level; load
 * success or failure as annotated (no annotation: success); __msg and
 * __not_msg against the verifier log (positive patterns in order, negative
 * ones within the span between their neighbours); with __retval, a
 * BPF_PROG_TEST_RUN (SYSCALL programs with empty options) whose return value
 * must match.
 *
 * Not implemented, reported as a skip that names them (after the load has
 * been checked: a wrong load result is a failure all the same): __xlated,
 * __jited (x86_64 only; other arches' are ignored as upstream does), the
 * BPF streams (__stderr, __stdout), __linear_size, __btf_path and
 * __btf_func_path; the unprivileged mode (__*_unpriv, __caps_unpriv) is a
 * separate "@unpriv" subtest, skipped.  __arch_* without x86_64 and a
 * load_mode the JIT state does not match skip as upstream.  A program whose
 * type the kernel does not have (libbpf_probe_bpf_prog_type()) or whose
 * section libbpf 1.4 does not know is skipped, named; so is an object
 * libbpf 1.4 cannot open (subtest "<object>/open").
 *
 * Output: KTAP with a "# Totals:" line, and per subtest one line
 *   # RESULT <object>/<program> <expected> <PASS|FAIL|SKIP> <first reason line>
 * that tests/upstream/v7.3/results.sh tabulates.
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

struct up_obj {
	const char *name;
	const unsigned char *data, *end;
};

/* The objects, embedded: the runner needs no file at run time. */
#define UP73_EMBED(name)								\
	extern const unsigned char up_##name[], up_##name##_end[];			\
	__asm__(".pushsection .rodata\n.balign 8\n"					\
		".global up_" #name "\nup_" #name ":\n"					\
		".incbin \"" UP73_OBJ_DIR "/" #name ".bpf.o\"\n"			\
		".global up_" #name "_end\nup_" #name "_end:\n.popsection\n");
#include "objs.h"
#undef UP73_EMBED
#define UP73_EMBED(name) { #name, up_##name, up_##name##_end },
static const struct up_obj objs[] = {
#include "objs.h"
};

/* ---- KTAP ---- */

static int n_tests, n_pass, n_fail, n_skip;
static char cur_name[300], cur_expected[64], cur_reason[512];
static bool cur_failed, cur_skipped;

static void start(const char *obj, const char *prog, const char *suffix)
{
	snprintf(cur_name, sizeof(cur_name), "%s/%s%s", obj, prog, suffix);
	cur_failed = cur_skipped = false;
	cur_reason[0] = '\0';
	snprintf(cur_expected, sizeof(cur_expected), "success");
	printf("# RUN %s\n", cur_name);
}

/* The first line of a reason, for the RESULT line. */
static void set_reason(const char *s)
{
	size_t n = strcspn(s, "\n");

	if (cur_reason[0])
		return;
	if (n >= sizeof(cur_reason))
		n = sizeof(cur_reason) - 1;
	memcpy(cur_reason, s, n);
	cur_reason[n] = '\0';
}

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("# %s: FAIL: %s\n", cur_name, buf);
	set_reason(buf);
	cur_failed = true;
}

static void __attribute__((format(printf, 1, 2))) skip(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!cur_failed)
		set_reason(buf);
	cur_skipped = true;
}

static void end(void)
{
	const char *res;

	n_tests++;
	if (cur_failed) {
		n_fail++;
		res = "FAIL";
		printf("not ok %d %s\n", n_tests, cur_name);
	} else if (cur_skipped) {
		n_skip++;
		res = "SKIP";
		printf("ok %d %s # SKIP %s\n", n_tests, cur_name, cur_reason);
	} else {
		n_pass++;
		res = "PASS";
		printf("ok %d %s\n", n_tests, cur_name);
	}
	printf("# RESULT %s %s %s %s\n", cur_name, cur_expected, res, cur_reason);
	fflush(stdout);
}

/* ---- libbpf's messages: printed, and the first warning kept as a reason ---- */

static char libbpf_first[512];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	/* The verifier log is printed by this runner, not through libbpf. */
	if (strstr(line, "-- BEGIN PROG LOAD LOG --") || strstr(line, "-- END PROG LOAD LOG --"))
		return 0;
	printf("# %s", line);
	if (!libbpf_first[0])
		snprintf(libbpf_first, sizeof(libbpf_first), "%.*s", (int)strcspn(line, "\n"), line);
	return 0;
}

/* ---- test_loader ---- */

#define LOG_BUF_SZ (16 * 1024 * 1024)
#define POINTER_VALUE 0xbadcafe
#define TEST_DATA_LEN 64
#ifndef BPF_F_TEST_REG_INVARIANTS
#define BPF_F_TEST_REG_INVARIANTS (1U << 7)
#endif

enum { PRIV = 1, UNPRIV = 2 };
enum { JITED = 1, NO_JITED = 2 };

struct expect_msg {
	const char *substr;
	bool is_regex, negative;
	regex_t regex;
};

#define MAX_MSGS 128
struct spec {
	const char *prog_name;
	bool valid, expect_failure, execute, auxiliary, arch_ok;
	int mode_mask, load_mask;
	int retval;
	int log_level, prog_flags;
	int n_msgs;
	struct expect_msg msgs[MAX_MSGS];
	const char *unsupported;	/* a priv-mode annotation this runner does not check */
};

static char *log_buf;

static const char *str_has_pfx(const char *s, const char *pfx)
{
	size_t n = strlen(pfx);

	return strncmp(s, pfx, n) ? NULL : s + n;
}

/* test_loader.c's compile_regex(): "{{...}}" parts are regexes, the rest literal. */
static int push_msg(struct spec *spec, const char *pattern, bool negative)
{
	struct expect_msg *m;
	char buf[256] = {}, *p = buf, *bend = buf + sizeof(buf);
	const char *s = pattern;
	bool in_regex = false;

	if (spec->n_msgs == MAX_MSGS)
		return -E2BIG;
	m = &spec->msgs[spec->n_msgs];
	m->substr = pattern;
	m->negative = negative;
	m->is_regex = strstr(pattern, "{{") != NULL;
	if (m->is_regex) {
		while (*s && p < bend - 2) {
			if (!in_regex && str_has_pfx(s, "{{")) {
				in_regex = true;
				s += 2;
				continue;
			}
			if (in_regex && str_has_pfx(s, "}}")) {
				in_regex = false;
				s += 2;
				continue;
			}
			if (!in_regex && strchr(".[]\\()*+?{}|^$", *s))
				*p++ = '\\';
			*p++ = *s++;
		}
		if (*s || in_regex || regcomp(&m->regex, buf, REG_EXTENDED | REG_NEWLINE))
			return -EINVAL;
	}
	spec->n_msgs++;
	return 0;
}

static int parse_int(const char *s, int *v)
{
	char *e;
	long t;

	errno = 0;
	if (str_has_pfx(s, "0x"))
		t = strtol(s + 2, &e, 16);
	else
		t = strtol(s, &e, 10);
	if (errno || *e)
		return -EINVAL;
	*v = (int)t;
	return 0;
}

static const char *skip_decl_tag_pfx(const char *s)
{
	int n = 0;

	if (sscanf(s, "comment:%*d:%n", &n) < 0 || !n)
		return NULL;
	return s + n;
}

static int cmp_tags(const void *a, const void *b)
{
	return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

/* testing_helpers.c's testing_prog_flags(): the test flags the kernel accepts. */
static int testing_prog_flags(void)
{
	static const int cand[] = { BPF_F_TEST_RND_HI32, BPF_F_TEST_REG_INVARIANTS };
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int flags = 0;
	size_t i;

	for (i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = cand[i]);
		int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "flag-test", "GPL", insns, 2, &opts);

		if (fd < 0)
			continue;
		flags |= cand[i];
		close(fd);
	}
	return flags;
}

static int flag_value(const char *v, int *out)
{
	static const struct { const char *n; int v; } flags[] = {
		{ "BPF_F_STRICT_ALIGNMENT", BPF_F_STRICT_ALIGNMENT },
		{ "BPF_F_ANY_ALIGNMENT", BPF_F_ANY_ALIGNMENT },
		{ "BPF_F_TEST_RND_HI32", BPF_F_TEST_RND_HI32 },
		{ "BPF_F_TEST_STATE_FREQ", BPF_F_TEST_STATE_FREQ },
		{ "BPF_F_SLEEPABLE", BPF_F_SLEEPABLE },
		{ "BPF_F_XDP_HAS_FRAGS", BPF_F_XDP_HAS_FRAGS },
		{ "BPF_F_TEST_REG_INVARIANTS", BPF_F_TEST_REG_INVARIANTS },
	};
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(v, flags[i].n))
			return *out = flags[i].v, 0;
	return parse_int(v, out);
}

static int parse_spec(struct bpf_object *obj, struct bpf_program *prog, struct spec *spec,
		      int base_flags)
{
	struct btf *btf = bpf_object__btf(obj);
	const char **tags = NULL, *s, *v;
	int func_id, i, n = 0, arch_mask = 0, flag, err = 0;
	bool collect_jit = false;

	memset(spec, 0, sizeof(*spec));
	spec->prog_name = bpf_program__name(prog);
	spec->prog_flags = base_flags;
	if (!btf)
		return -EINVAL;
	func_id = btf__find_by_name_kind(btf, spec->prog_name, BTF_KIND_FUNC);
	if (func_id < 0)
		return -EINVAL;
	for (i = 1; i < (int)btf__type_cnt(btf); i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);

		if (!btf_is_decl_tag(t) || (int)t->type != func_id ||
		    btf_decl_tag(t)->component_idx != -1)
			continue;
		tags = realloc(tags, (n + 1) * sizeof(*tags));
		if (!tags)
			return -ENOMEM;
		tags[n++] = btf__name_by_offset(btf, t->name_off);
	}
	if (n)
		qsort(tags, n, sizeof(*tags), cmp_tags);

	for (i = 0; i < n && !err; i++) {
		s = skip_decl_tag_pfx(tags[i]);
		if (!s)
			continue;
		if (str_has_pfx(s, "test_description=")) {
			/* an alias for filtering; the program name names the subtest */
		} else if (!strcmp(s, "test_expect_failure")) {
			spec->expect_failure = true;
			spec->mode_mask |= PRIV;
		} else if (!strcmp(s, "test_expect_success")) {
			spec->expect_failure = false;
			spec->mode_mask |= PRIV;
		} else if (!strcmp(s, "test_auxiliary")) {
			spec->auxiliary = true;
			spec->mode_mask |= PRIV;
		} else if (!strcmp(s, "test_auxiliary_unpriv")) {
			spec->auxiliary = true;
			spec->mode_mask |= UNPRIV;
		} else if ((v = str_has_pfx(s, "test_expect_msg="))) {
			err = push_msg(spec, v, false);
			spec->mode_mask |= PRIV;
		} else if ((v = str_has_pfx(s, "test_expect_not_msg="))) {
			err = push_msg(spec, v, true);
			spec->mode_mask |= PRIV;
		} else if ((v = str_has_pfx(s, "test_jited="))) {
			if (collect_jit) {
				spec->unsupported = "__jited";
				spec->mode_mask |= PRIV;
			}
		} else if ((v = str_has_pfx(s, "test_expect_xlated="))) {
			spec->unsupported = "__xlated";
			spec->mode_mask |= PRIV;
		} else if ((v = str_has_pfx(s, "test_retval="))) {
			if (!strcmp(v, "_INT_MIN"))
				spec->retval = -2147483647 - 1;
			else
				err = parse_int(v, &spec->retval);
			spec->execute = true;
			spec->mode_mask |= PRIV;
		} else if ((v = str_has_pfx(s, "test_log_level="))) {
			err = parse_int(v, &spec->log_level);
		} else if ((v = str_has_pfx(s, "test_prog_flags="))) {
			bool clear = *v == '!';

			err = flag_value(v + clear, &flag);
			if (clear)
				spec->prog_flags &= ~flag;
			else
				spec->prog_flags |= flag;
		} else if ((v = str_has_pfx(s, "test_arch="))) {
			bool x86 = !strcmp(v, "X86_64");

			arch_mask |= x86;
			collect_jit = x86;
			if (!x86)
				arch_mask |= 2;
		} else if (str_has_pfx(s, "test_btf_path=")) {
			spec->unsupported = "__btf_path";
		} else if (str_has_pfx(s, "test_btf_func_path=")) {
			spec->unsupported = "__btf_func_path";
		} else if ((v = str_has_pfx(s, "load_mode="))) {
			spec->load_mask = !strcmp(v, "jited") ? JITED : NO_JITED;
		} else if (str_has_pfx(s, "test_expect_stderr=")) {
			spec->unsupported = "__stderr (BPF streams)";
		} else if (str_has_pfx(s, "test_expect_stdout=")) {
			spec->unsupported = "__stdout (BPF streams)";
		} else if (str_has_pfx(s, "test_linear_size=")) {
			spec->unsupported = "__linear_size";
		} else if (strstr(s, "_unpriv")) {
			/* __*_unpriv and __caps_unpriv: the @unpriv subtest, skipped */
			spec->mode_mask |= UNPRIV;
		}
	}
	free(tags);
	if (err)
		return err;
	spec->arch_ok = !arch_mask || (arch_mask & 1);
	if (!spec->load_mask)
		spec->load_mask = JITED | NO_JITED;
	if (!spec->mode_mask)
		spec->mode_mask = PRIV;
	spec->valid = true;
	return 0;
}

static const char *match_msg(const struct expect_msg *m, const char **log)
{
	regmatch_t rm[1];
	const char *match;

	if (!m->is_regex) {
		match = strstr(*log, m->substr);
		if (match)
			*log = match + strlen(m->substr);
		return match;
	}
	if (regexec(&m->regex, *log, 1, rm, 0))
		return NULL;
	match = *log + rm[0].rm_so;
	*log += rm[0].rm_eo;
	return match;
}

/*
 * test_loader.c's validate_msgs(): positive patterns in order, each after
 * the previous match; a negative pattern must not occur between the end of
 * the positive match before it and the start of the positive match after it.
 */
static void validate_msgs(const char *log, const struct spec *spec, const char *refused)
{
	const char *starts[MAX_MSGS] = {}, *ends[MAX_MSGS] = {}, *p = log, *span, *stop, *next, *m;
	int i, j;

	for (i = 0; i < spec->n_msgs; i++) {
		if (spec->msgs[i].negative)
			continue;
		m = match_msg(&spec->msgs[i], &p);
		if (!m) {
			fail("expect_msg: '%s' not found in the verifier log (after %d matched)%s%s",
			     spec->msgs[i].substr, i, refused ? "; refused with: " : "",
			     refused ?: "");
			return;
		}
		starts[i] = m;
		ends[i] = p;
	}
	span = log;
	for (i = 0; i < spec->n_msgs; i++) {
		if (!spec->msgs[i].negative) {
			span = ends[i];
			continue;
		}
		stop = log + strlen(log);
		for (j = i + 1; j < spec->n_msgs; j++)
			if (!spec->msgs[j].negative) {
				stop = starts[j];
				break;
			}
		next = span;
		m = match_msg(&spec->msgs[i], &next);
		if (m && next <= stop) {
			fail("expect_msg: '%s' is in the verifier log (__not_msg)%s%s",
			     spec->msgs[i].substr, refused ? "; refused with: " : "", refused ?: "");
			return;
		}
	}
}

/* The line of a verifier log that says why: the last one before the statistics. */
static void log_reason(const char *log, char *out, size_t sz)
{
	const char *p = log, *nl, *best = NULL;
	size_t best_len = 0;

	while (*p) {
		nl = strchrnul(p, '\n');
		if (nl > p && !str_has_pfx(p, "processed ") && !str_has_pfx(p, "verification time") &&
		    !str_has_pfx(p, "stack depth") && !str_has_pfx(p, "max_states_per_insn")) {
			best = p;
			best_len = nl - p;
		}
		p = *nl ? nl + 1 : nl;
	}
	if (best)
		snprintf(out, sz, "%.*s", (int)best_len, best);
	else
		snprintf(out, sz, "%s", libbpf_first[0] ? libbpf_first : "(no verifier log)");
}

static void emit_log(const char *log)
{
	const char *p = log, *nl;
	int lines = 0;

	for (nl = log; (nl = strchr(nl, '\n')); nl++)
		lines++;
	for (; lines > 40 && (nl = strchr(p, '\n')); lines--)
		p = nl + 1;
	while (*p) {
		nl = strchrnul(p, '\n');
		printf("#   log: %.*s\n", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

static bool jit_enabled(void)
{
	FILE *f = fopen("/proc/sys/net/core/bpf_jit_enable", "r");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v != 0;
}

static void run_subtest(const struct up_obj *o, struct spec *specs, int n, struct spec *spec)
{
	struct bpf_program *tprog = NULL, *p;
	struct bpf_object *obj;
	enum bpf_prog_type type;
	char reason[512];
	int err, i = 0;

	start(o->name, spec->prog_name, "");
	snprintf(cur_expected, sizeof(cur_expected), "%s", spec->expect_failure ? "failure" :
		 spec->execute ? "success,retval" : "success");
	if (!spec->arch_ok) {
		skip("not for x86_64 (__arch_*)");
		goto end;
	}
	if (!(spec->load_mask & (jit_enabled() ? JITED : NO_JITED))) {
		skip("load_mode: only %s", spec->load_mask == JITED ? "with the JIT" : "without the JIT");
		goto end;
	}
	obj = bpf_object__open_mem(o->data, o->end - o->data, NULL);
	if (!obj) {
		fail("bpf_object__open_mem: %d", -errno);
		goto end;
	}
	bpf_object__for_each_program(p, obj) {
		struct spec *si = &specs[i++];
		bool load = false;

		if (si->valid && !strcmp(bpf_program__name(p), spec->prog_name)) {
			tprog = p;
			load = true;
		}
		if (si->valid && si->auxiliary && (si->mode_mask & PRIV))
			load = true;
		bpf_program__set_autoload(p, load);
	}
	if (i != n || !tprog) {
		fail("program %s not found", spec->prog_name);
		goto close;
	}
	type = bpf_program__type(tprog);
	if (type == BPF_PROG_TYPE_UNSPEC) {
		skip("section \"%s\" is unknown to libbpf %s", bpf_program__section_name(tprog),
		     libbpf_version_string());
		goto close;
	}
	if (libbpf_probe_bpf_prog_type(type, NULL) != 1) {
		skip("the kernel has no program type %s (section \"%s\")",
		     libbpf_bpf_prog_type_str(type) ?: "?", bpf_program__section_name(tprog));
		goto close;
	}
	/* prepare_case() */
	bpf_program__set_log_buf(tprog, log_buf, LOG_BUF_SZ);
	bpf_program__set_log_level(tprog, spec->log_level);
	bpf_program__set_flags(tprog, bpf_program__flags(tprog) | spec->prog_flags);
	log_buf[0] = '\0';
	libbpf_first[0] = '\0';

	err = bpf_object__load(obj);
	if (spec->expect_failure && !err) {
		fail("unexpected_load_success (a __failure program loaded)");
		goto close;
	}
	if (!spec->expect_failure && err) {
		log_reason(log_buf, reason, sizeof(reason));
		fail("unexpected_load_failure: %d: %s", err, reason);
		emit_log(log_buf);
		goto close;
	}
	/* A refused program's own reason goes with a message mismatch. */
	if (spec->expect_failure)
		log_reason(log_buf, reason, sizeof(reason));
	validate_msgs(log_buf, spec, spec->expect_failure ? reason : NULL);
	if (cur_failed) {
		emit_log(log_buf);
		goto close;
	}
	if (spec->execute && !spec->expect_failure) {
		unsigned char in[TEST_DATA_LEN] = {}, out[TEST_DATA_LEN << 2] = {};
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = in, .data_size_in = sizeof(in),
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		if (type == BPF_PROG_TYPE_SYSCALL) {
			memset(&topts, 0, sizeof(topts));
			topts.sz = sizeof(topts);
		}
		err = bpf_prog_test_run_opts(bpf_program__fd(tprog), &topts);
		if (err)
			fail("bpf_prog_test_run: errno %d (%s)", errno, strerror(errno));
		else if ((int)topts.retval != spec->retval && spec->retval != POINTER_VALUE)
			fail("Unexpected retval: %d != %d", (int)topts.retval, spec->retval);
	}
	if (!cur_failed && spec->unsupported)
		skip("%s is not implemented by this runner (the load result was as expected)",
		     spec->unsupported);
close:
	bpf_object__close(obj);
end:
	end();
}

static void run_object(const struct up_obj *o, int base_flags)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	struct spec *specs;
	int n = 0, i = 0, j;

	/*
	 * An object libbpf 1.4 cannot open (a newer ELF feature) says nothing
	 * about the kernel: a skip, named.
	 */
	libbpf_first[0] = '\0';
	obj = bpf_object__open_mem(o->data, o->end - o->data, NULL);
	if (!obj) {
		int err = -errno;

		start(o->name, "open", "");
		skip("libbpf %s cannot open this object: %d (%s)", libbpf_version_string(), err,
		     libbpf_first);
		end();
		return;
	}
	bpf_object__for_each_program(p, obj)
		n++;
	specs = calloc(n, sizeof(*specs));
	if (!specs)
		exit(1);
	bpf_object__for_each_program(p, obj) {
		if (parse_spec(obj, p, &specs[i], base_flags)) {
			start(o->name, bpf_program__name(p), "");
			fail("cannot parse the test annotations");
			end();
		}
		i++;
	}
	for (i = 0; i < n; i++) {
		if (!specs[i].valid || specs[i].auxiliary)
			continue;
		if (specs[i].mode_mask & PRIV)
			run_subtest(o, specs, n, &specs[i]);
		if (specs[i].mode_mask & UNPRIV) {
			start(o->name, specs[i].prog_name, " @unpriv");
			snprintf(cur_expected, sizeof(cur_expected), "unpriv");
			skip("the unprivileged mode (__*_unpriv) is not implemented by this runner");
			end();
		}
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < specs[i].n_msgs; j++)
			if (specs[i].msgs[j].is_regex)
				regfree(&specs[i].msgs[j].regex);
	free(specs);
	bpf_object__close(obj);
}

int main(int argc, char **argv)
{
	int flags;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	printf("# Linux 7.3.4 loop selftests (tests/upstream/v7.3/ORIGIN.md), libbpf %s, %s\n",
	       libbpf_version_string(),
	       access("/sys/module/bpf_arena", F_OK) == 0 ? "6.1 + bpf_arena module" : "native");
	libbpf_set_print(libbpf_print);
	log_buf = malloc(LOG_BUF_SZ);
	if (!log_buf)
		return 1;
	flags = testing_prog_flags();
	printf("# test flags the kernel accepts: %#x\n", flags);
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		int a;

		/* upstream_loops [OBJECT...]: only those */
		for (a = 1; a < argc && strcmp(argv[a], objs[i].name); a++)
			;
		if (argc > 1 && a == argc)
			continue;
		run_object(&objs[i], flags);
	}
	printf("1..%d\n", n_tests);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", n_pass, n_fail, n_skip);
	return n_fail ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * upstream_arena_test: upstream v6.12's arena selftests (tests/upstream/,
 * unmodified) run the way upstream runs them.
 *
 * progs/verifier_arena*.c are test_loader programs: their annotations
 * (bpf_misc.h's __success, __failure, __msg, __retval, __log_level, __flag,
 * __description, __auxiliary, __arch_*) are BTF decl tags that this file
 * reads and applies as upstream's test_loader.c (6.12) does: one subtest per
 * program, the program loaded alone (plus __auxiliary ones) from a fresh
 * open of the object, load success or failure as annotated, every __msg
 * found in the verifier log in order (substring, or "{{regex}}" parts), and
 * with __retval a BPF_PROG_TEST_RUN whose return value must match.
 * The programs of prog_tests/ (arena_atomics, arena_list, arena_htab) have
 * C drivers upstream; runner_atomics.c and runner_loops.c repeat their
 * assertions.  Output is KTAP with a "# Totals:" line, as the VM suite
 * expects.
 *
 * Not implemented (no vendored test uses them; a program that does is
 * reported as a skip naming the annotation): __xlated, __jited, and the
 * unprivileged mode (__*_unpriv).
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "runner.h"

/* The objects, embedded: the runner needs no file at run time. */
#define UP_EMBED(name)									\
	extern const unsigned char up_##name[], up_##name##_end[];			\
	__asm__(".pushsection .rodata\n.balign 8\n"					\
		".global up_" #name "\nup_" #name ":\n"					\
		".incbin \"" UP_OBJ_DIR "/" #name ".bpf.o\"\n"				\
		".global up_" #name "_end\nup_" #name "_end:\n.popsection\n")
UP_EMBED(verifier_arena);
UP_EMBED(verifier_arena_large);
UP_EMBED(arena_atomics);
UP_EMBED(arena_list);
UP_EMBED(arena_htab);
UP_EMBED(arena_htab_asm);

#define UP_OBJ(n) { #n, up_##n, 0 }
static struct up_obj objs[] = {
	UP_OBJ(verifier_arena), UP_OBJ(verifier_arena_large), UP_OBJ(arena_atomics),
	UP_OBJ(arena_list), UP_OBJ(arena_htab), UP_OBJ(arena_htab_asm),
};

const struct up_obj *up_obj(const char *name)
{
	static const unsigned char *ends[] = {
		up_verifier_arena_end, up_verifier_arena_large_end, up_arena_atomics_end,
		up_arena_list_end, up_arena_htab_end, up_arena_htab_asm_end,
	};
	size_t i;

	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		if (strcmp(objs[i].name, name))
			continue;
		objs[i].size = ends[i] - objs[i].data;
		return &objs[i];
	}
	fprintf(stderr, "no embedded object %s\n", name);
	exit(1);
}

/* ---- KTAP ---- */

static int n_tests, n_pass, n_fail, n_skip;
static char cur_name[256];
static bool cur_failed, cur_skipped, in_subtest;
static char skip_reason[256];

void up_start(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cur_name, sizeof(cur_name), fmt, ap);
	va_end(ap);
	cur_failed = cur_skipped = false;
	in_subtest = true;
	printf("# RUN %s\n", cur_name);
	fflush(stdout);
}

void up_fail(const char *fmt, ...)
{
	va_list ap;

	printf("# %s: FAIL: ", cur_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	cur_failed = true;
}

void up_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
	cur_skipped = true;
}

bool up_failed(void)
{
	return cur_failed;
}

void up_end(void)
{
	if (!in_subtest)
		return;
	in_subtest = false;
	n_tests++;
	if (cur_failed) {
		n_fail++;
		printf("not ok %d %s\n", n_tests, cur_name);
	} else if (cur_skipped) {
		n_skip++;
		printf("ok %d %s # SKIP %s\n", n_tests, cur_name, skip_reason);
	} else {
		n_pass++;
		printf("ok %d %s\n", n_tests, cur_name);
	}
	fflush(stdout);
}

/* ---- environment ---- */

bool up_on_module(void)
{
	return access("/sys/module/bpf_arena", F_OK) == 0;
}

static const struct btf_var_secinfo *find_var(const struct btf *btf, const char *sec,
					      const char *name)
{
	const struct btf_var_secinfo *vi;
	const struct btf_type *t;
	int id, i;

	id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);
	if (id < 0)
		return NULL;
	t = btf__type_by_id(btf, id);
	vi = btf_var_secinfos(t);
	for (i = 0; i < btf_vlen(t); i++, vi++) {
		const struct btf_type *v = btf__type_by_id(btf, vi->type);

		if (!strcmp(btf__name_by_offset(btf, v->name_off), name))
			return vi;
	}
	return NULL;
}

/* As a skeleton's obj->arena: libbpf >= 1.4 puts the section at the arena's start. */
void *up_arena_var(struct bpf_object *obj, const char *name)
{
	const struct btf_var_secinfo *vi = find_var(bpf_object__btf(obj), ".addr_space.1", name);
	struct bpf_map *map;
	size_t sz;
	char *base = NULL;

	bpf_object__for_each_map(map, obj)
		if (bpf_map__type(map) == BPF_MAP_TYPE_ARENA)
			base = bpf_map__initial_value(map, &sz);
	if (!vi || !base) {
		fprintf(stderr, "# no arena variable %s\n", name);
		exit(1);
	}
	return base + vi->offset;
}

/*
 * The kernel map's own memory once the object is loaded.  libbpf >= 1.5 maps
 * the internal maps over their initial-value buffer at load; 1.4 (bookworm-
 * backports) does that only in bpf_object__load_skeleton(), which upstream's
 * prog_tests use and this runner does not: map it here (BPF_F_MMAPABLE, as
 * libbpf creates .bss/.data)).
 */
static char *loaded_map_mem(const struct bpf_map *map)
{
	size_t len, pg = (size_t)sysconf(_SC_PAGESIZE);
	void *mem;

	/*
	 * A fresh mapping each time (a few per test, left to process exit): a
	 * cache keyed by the map pointer handed a later object's .bss the
	 * mapping of an earlier, closed object that malloc had placed there.
	 */
	if (bpf_map__fd(map) < 0 || !(bpf_map__map_flags(map) & BPF_F_MMAPABLE))
		return NULL;
	len = ((size_t)bpf_map__value_size(map) + pg - 1) / pg * pg;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	if (mem == MAP_FAILED)
		mem = mmap(NULL, len, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	return mem == MAP_FAILED ? NULL : mem;
}

void *up_global_var(struct bpf_object *obj, const char *sec, const char *name)
{
	const struct btf_var_secinfo *vi = find_var(bpf_object__btf(obj), sec, name);
	struct bpf_map *map;
	size_t sz;
	char *base = NULL;

	bpf_object__for_each_map(map, obj) {
		const char *n = bpf_map__name(map);

		/* Internal maps are "<obj prefix>.bss" etc. */
		if (strlen(n) >= strlen(sec) && !strcmp(n + strlen(n) - strlen(sec), sec)) {
			base = loaded_map_mem(map);
			if (!base)
				base = bpf_map__initial_value(map, &sz);
		}
	}
	if (!vi || !base) {
		fprintf(stderr, "# no global %s in %s\n", name, sec);
		exit(1);
	}
	return base + vi->offset;
}

/* ---- test_loader ---- */

#define TEST_TAG_EXPECT_FAILURE "comment:test_expect_failure"
#define TEST_TAG_EXPECT_SUCCESS "comment:test_expect_success"
#define TEST_TAG_EXPECT_MSG_PFX "comment:test_expect_msg="
#define TEST_TAG_EXPECT_XLATED_PFX "comment:test_expect_xlated="
#define TEST_TAG_JITED_PFX "comment:test_jited="
#define TEST_TAG_DESCRIPTION_PFX "comment:test_description="
#define TEST_TAG_RETVAL_PFX "comment:test_retval="
#define TEST_TAG_LOG_LEVEL_PFX "comment:test_log_level="
#define TEST_TAG_PROG_FLAGS_PFX "comment:test_prog_flags="
#define TEST_TAG_AUXILIARY "comment:test_auxiliary"
#define TEST_TAG_ARCH "comment:test_arch="
#define TEST_TAG_BTF_PATH "comment:test_btf_path="
#define TEST_TAG_UNPRIV_PFX "comment:test_expect_msg_unpriv="

#define LOG_BUF_SZ 2097152	/* TEST_LOADER_LOG_BUF_SZ */
#define MAX_MSGS 64
#define POINTER_VALUE 0xcafe4all
#define TEST_DATA_LEN 64
#ifndef BPF_F_TEST_REG_INVARIANTS
#define BPF_F_TEST_REG_INVARIANTS (1U << 7)
#endif

struct expect_msg {
	const char *substr;	/* the annotation, for reports */
	bool is_regex;
	regex_t regex;
};

struct spec {
	const char *prog_name;
	char name[256];
	bool valid, expect_failure, execute, auxiliary;
	long long retval;
	int log_level;
	int prog_flags;
	int n_msgs;
	struct expect_msg msgs[MAX_MSGS];
	const char *unsupported;	/* an annotation this runner does not implement */
	bool other_arch;
};

static char *log_buf;

static bool has_pfx(const char *s, const char *pfx)
{
	return !strncmp(s, pfx, strlen(pfx));
}

/* "=<counter>=msg": the __COUNTER__ part is skipped, as skip_dynamic_pfx(). */
static const char *skip_dynamic_pfx(const char *s, const char *pfx)
{
	if (!has_pfx(s, pfx))
		return NULL;
	s += strlen(pfx);
	while (isdigit((unsigned char)*s))
		s++;
	return *s == '=' ? s + 1 : NULL;
}

/* test_loader.c's compile_regex(): "{{...}}" parts are regexes, the rest literal. */
static int compile_msg(const char *pattern, struct expect_msg *m)
{
	char buf[256] = {}, *p = buf, *end = buf + sizeof(buf);
	const char *s = pattern;
	bool in_regex = false;

	m->substr = pattern;
	m->is_regex = strstr(pattern, "{{") != NULL;
	if (!m->is_regex)
		return 0;
	while (*s && p < end - 2) {
		if (!in_regex && has_pfx(s, "{{")) {
			in_regex = true;
			s += 2;
			continue;
		}
		if (in_regex && has_pfx(s, "}}")) {
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
	return 0;
}

static int parse_retval(const char *v, long long *out)
{
	if (!strcmp(v, "INT_MIN"))
		*out = -2147483648LL;
	else if (!strcmp(v, "POINTER_VALUE"))
		*out = POINTER_VALUE;
	else if (!strcmp(v, "TEST_DATA_LEN"))
		*out = TEST_DATA_LEN;
	else
		*out = strtoll(v, NULL, 0);
	return 0;
}

static int flag_value(const char *v)
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
			return flags[i].v;
	return (int)strtol(v, NULL, 0);
}

/*
 * test_loader.c's testing_prog_flags(): every test flag the kernel accepts
 * on a trivial program.  One difference on 6.1 + module: the module refuses
 * BPF_F_TEST_RND_HI32 for arena programs (DESIGN.md, the raise relies on
 * the verifier's zero-extension), so it is left out there, and said so.
 */
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
		int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns, 2, &opts);

		if (fd < 0)
			continue;
		flags |= cand[i];
		close(fd);
	}
	if (up_on_module() && (flags & BPF_F_TEST_RND_HI32)) {
		printf("# 6.1 + module: BPF_F_TEST_RND_HI32 is not added (the module refuses it for arena programs)\n");
		flags &= ~BPF_F_TEST_RND_HI32;
	}
	return flags;
}

static int parse_spec(struct bpf_object *obj, struct bpf_program *prog, struct spec *spec,
		      int base_flags)
{
	const char *description = NULL, *s, *v;
	struct btf *btf = bpf_object__btf(obj);
	int func_id, i, arch_mask = 0;

	memset(spec, 0, sizeof(*spec));
	spec->prog_name = bpf_program__name(prog);
	spec->prog_flags = base_flags;
	func_id = btf__find_by_name_kind(btf, spec->prog_name, BTF_KIND_FUNC);
	if (func_id < 0)
		return -EINVAL;
	for (i = 1; i < (int)btf__type_cnt(btf); i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);

		if (!btf_is_decl_tag(t) || (int)t->type != func_id ||
		    btf_decl_tag(t)->component_idx != -1)
			continue;
		s = btf__name_by_offset(btf, t->name_off);
		if (has_pfx(s, TEST_TAG_DESCRIPTION_PFX)) {
			description = s + strlen(TEST_TAG_DESCRIPTION_PFX);
		} else if (!strcmp(s, TEST_TAG_EXPECT_FAILURE)) {
			spec->expect_failure = true;
		} else if (!strcmp(s, TEST_TAG_EXPECT_SUCCESS)) {
			spec->expect_failure = false;
		} else if (!strcmp(s, TEST_TAG_AUXILIARY)) {
			spec->auxiliary = true;
		} else if ((v = skip_dynamic_pfx(s, TEST_TAG_EXPECT_MSG_PFX))) {
			if (spec->n_msgs == MAX_MSGS ||
			    compile_msg(v, &spec->msgs[spec->n_msgs]))
				return -EINVAL;
			spec->n_msgs++;
		} else if (has_pfx(s, TEST_TAG_EXPECT_XLATED_PFX)) {
			spec->unsupported = "__xlated";
		} else if (has_pfx(s, TEST_TAG_JITED_PFX)) {
			spec->unsupported = "__jited";
		} else if (strstr(s, "_unpriv")) {
			spec->unsupported = "unprivileged mode (__*_unpriv)";
		} else if (has_pfx(s, TEST_TAG_RETVAL_PFX)) {
			parse_retval(s + strlen(TEST_TAG_RETVAL_PFX), &spec->retval);
			spec->execute = true;
		} else if (has_pfx(s, TEST_TAG_LOG_LEVEL_PFX)) {
			spec->log_level = strtol(s + strlen(TEST_TAG_LOG_LEVEL_PFX), NULL, 0);
		} else if (has_pfx(s, TEST_TAG_PROG_FLAGS_PFX)) {
			v = s + strlen(TEST_TAG_PROG_FLAGS_PFX);
			if (*v == '!')
				spec->prog_flags &= ~flag_value(v + 1);
			else
				spec->prog_flags |= flag_value(v);
		} else if (has_pfx(s, TEST_TAG_ARCH)) {
			arch_mask |= !strcmp(s + strlen(TEST_TAG_ARCH), "X86_64");
			spec->other_arch = !arch_mask;
		} else if (has_pfx(s, TEST_TAG_BTF_PATH)) {
			spec->unsupported = "__btf_path";
		}
	}
	snprintf(spec->name, sizeof(spec->name), "%s", description ?: spec->prog_name);
	spec->valid = true;
	return 0;
}

/* test_loader.c's validate_msgs(): each pattern after the previous match. */
static void validate_msgs(const char *log, const struct spec *spec)
{
	regmatch_t rm[1];
	int i;

	for (i = 0; i < spec->n_msgs; i++) {
		const struct expect_msg *m = &spec->msgs[i];
		const char *match = NULL;

		if (!m->is_regex) {
			match = strstr(log, m->substr);
			if (match)
				log = match + strlen(m->substr);
		} else if (!regexec(&m->regex, log, 1, rm, 0)) {
			match = log + rm[0].rm_so;
			log += rm[0].rm_eo;
		}
		if (!match) {
			up_fail("expect_msg: '%s' not found in the verifier log (after %d matched)",
				m->substr, i);
			return;
		}
	}
}

void up_emit_log(const char *log)
{
	const char *p = log, *nl;
	int lines = 0;

	/* The last lines say why; keep the TAP output readable. */
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

static void run_subtest(const struct up_obj *o, struct spec *specs, int n, struct spec *spec)
{
	struct bpf_program *tprog = NULL, *p;
	struct bpf_object *obj;
	int err, i = 0;

	up_start("%s/%s", o->name, spec->name);
	if (spec->other_arch) {
		up_skip("not for x86_64 (__arch_*)");
		goto end;
	}
	if (spec->unsupported) {
		up_skip("%s is not implemented by this runner", spec->unsupported);
		goto end;
	}
	obj = bpf_object__open_mem(o->data, o->size, NULL);
	if (!UP_ASSERT_OK_PTR(obj, "obj_open_mem"))
		goto end;
	bpf_object__for_each_program(p, obj) {
		struct spec *si = &specs[i++];
		bool load = false;

		if (si->valid && !strcmp(bpf_program__name(p), spec->prog_name)) {
			tprog = p;
			load = true;
		}
		if (si->valid && si->auxiliary)
			load = true;
		bpf_program__set_autoload(p, load);
	}
	if (i != n || !tprog) {
		up_fail("program %s not found", spec->prog_name);
		goto close;
	}
	/* prepare_case() */
	bpf_program__set_log_buf(tprog, log_buf, LOG_BUF_SZ);
	bpf_program__set_log_level(tprog, spec->log_level ?: 0);
	bpf_program__set_flags(tprog, bpf_program__flags(tprog) | spec->prog_flags);
	log_buf[0] = '\0';

	err = bpf_object__load(obj);
	if (spec->expect_failure && !err) {
		up_fail("unexpected_load_success");
		goto close;
	}
	if (!spec->expect_failure && err) {
		up_fail("unexpected_load_failure: %d", err);
		up_emit_log(log_buf);
		goto close;
	}
	validate_msgs(log_buf, spec);
	if (up_failed())
		up_emit_log(log_buf);
	if (spec->execute && !spec->expect_failure) {
		unsigned char in[TEST_DATA_LEN] = {}, out[TEST_DATA_LEN << 2];
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = in, .data_size_in = sizeof(in),
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		/* SYSCALL programs run with empty opts, as do_prog_test_run(). */
		if (bpf_program__type(tprog) == BPF_PROG_TYPE_SYSCALL) {
			memset(&topts, 0, sizeof(topts));
			topts.sz = sizeof(topts);
		}
		err = bpf_prog_test_run_opts(bpf_program__fd(tprog), &topts);
		if (err)
			up_fail("bpf_prog_test_run: errno %d (%s)", errno, strerror(errno));
		else if ((int)topts.retval != (int)spec->retval && spec->retval != POINTER_VALUE)
			up_fail("Unexpected retval: %d != %d", (int)topts.retval, (int)spec->retval);
	}
close:
	bpf_object__close(obj);
end:
	up_end();
}

/* test_loader__run_subtests() for one object. */
static void run_test_loader(const char *name, int base_flags)
{
	const struct up_obj *o = up_obj(name);
	struct bpf_object *obj;
	struct bpf_program *p;
	struct spec *specs;
	int n = 0, i = 0;

	obj = bpf_object__open_mem(o->data, o->size, NULL);
	if (libbpf_get_error(obj)) {
		up_start("%s/open", name);
		up_fail("bpf_object__open_mem: %ld", libbpf_get_error(obj));
		up_end();
		return;
	}
	bpf_object__for_each_program(p, obj)
		n++;
	specs = calloc(n, sizeof(*specs));
	bpf_object__for_each_program(p, obj) {
		if (parse_spec(obj, p, &specs[i], base_flags)) {
			up_start("%s/%s", name, bpf_program__name(p));
			up_fail("cannot parse the test annotations");
			up_end();
		}
		i++;
	}
	for (i = 0; i < n; i++)
		if (specs[i].valid && !specs[i].auxiliary)
			run_subtest(o, specs, n, &specs[i]);
	for (i = 0; i < n; i++) {
		int j;

		for (j = 0; j < specs[i].n_msgs; j++)
			if (specs[i].msgs[j].is_regex)
				regfree(&specs[i].msgs[j].regex);
	}
	free(specs);
	bpf_object__close(obj);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	printf("# %s", line);
	return 0;
}

int main(void)
{
	int flags;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	printf("# upstream v6.12 arena selftests (tests/upstream/ORIGIN.md), libbpf %s, %s\n",
	       libbpf_version_string(), up_on_module() ? "6.1 + bpf_arena module" : "native arena");
	libbpf_set_print(libbpf_print);
	log_buf = malloc(LOG_BUF_SZ);
	if (!log_buf)
		return 1;
	flags = testing_prog_flags();
	run_test_loader("verifier_arena", flags);
	run_test_loader("verifier_arena_large", flags);
	up_test_arena_atomics();
	up_test_arena_list();
	up_test_arena_htab();
	printf("1..%d\n", n_tests);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", n_pass, n_fail, n_skip);
	return n_fail ? 1 : 0;
}

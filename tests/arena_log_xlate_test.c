// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier's log in the user's numbers (docs/DESIGN.md "The verifier
 * log").  On 6.1 the module's lowered program is what the stock verifier
 * checks; the module rewrites its log into the numbers of the program the
 * user loaded.  On 6.12 the log is natively so: the same assertions hold.
 *
 *  - a clang program refused inside a bpf_for body (arena_log_xlate.bpf.c):
 *    the refused insn's number is the object's own (its opcode there), its
 *    source line is the line_info's, no generated function is named;
 *  - a hand-written may_goto loop refused in its body: exact numbers;
 *  - log_level 0: nothing written; a 128-byte log: ENOSPC, cut, still
 *    NUL-terminated; a log buffer a sibling thread scribbles on: the same
 *    answer every time (the VM runner fails on any WARN or oops);
 *  - the translation's cost: a megabyte-long file name in the BTF costs no
 *    more per "insn N" than a short one; a log whose translation would be
 *    longer than 16 MiB stays as it is (the kernel copy is bounded).
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <sys/mman.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"
#include "arena_log_xlate.h"

EMBED(xlate_obj, "arena_log_xlate.bpf.o");

#define LOG_SIZE	(1 << 20)
static char vlog[LOG_SIZE];

/*
 * The last insn line ("N: (op) ...", or "N+: ..." for code the module
 * added) before the first line holding err; its N and op; -1 if none.
 */
static long last_insn_before(const char *log, const char *err, unsigned int *op, bool *plus)
{
	const char *stop = strstr(log, err), *p = log;
	long n = -1;

	while (p && *p && (!stop || p < stop)) {
		unsigned int o;
		long v;
		char c;

		if (sscanf(p, "%ld%c", &v, &c) == 2 && (c == ':' || c == '+')) {
			const char *q = strchr(p, ':');

			if (q && sscanf(q, ": (%x)", &o) == 1) {
				n = v;
				*op = o;
				*plus = c == '+';
			}
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

/* The largest N of the log's "N:" lines. */
static long max_line_number(const char *log)
{
	const char *p = log;
	long n = -1, v;
	char c;

	while (p && *p) {
		if (sscanf(p, "%ld%c", &v, &c) == 2 && (c == ':' || c == '+') && v > n)
			n = v;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

TEST(clang_program_refused_in_a_bpf_for_body)
{
	char line[64];
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_insn *insns;
	size_t cnt;
	unsigned int op = 0;
	bool plus = false;
	long n;
	int err;

	libbpf_capture(false);
	obj = bpf_object__open_mem(xlate_obj_start, xlate_obj_end - xlate_obj_start, NULL);
	ASSERT_EQ(0, libbpf_get_error(obj));
	prog = bpf_object__find_program_by_name(obj, "in_loop");
	ASSERT_NE(NULL, prog);
	cnt = bpf_program__insn_cnt(prog);
	insns = malloc(cnt * sizeof(*insns));
	ASSERT_NE(NULL, insns);
	memcpy(insns, bpf_program__insns(prog), cnt * sizeof(*insns));
	bpf_program__set_log_buf(prog, vlog, LOG_SIZE);
	bpf_program__set_log_level(prog, 1);
	err = bpf_object__load(obj);
	ASSERT_NE(0, err);
	printf("# load: %d; log tail:\n%s\n", err, str_tail(vlog, 1500));
	EXPECT_EQ(NULL, strstr(vlog, "bpfa_loop")) TH_LOG("%s", vlog);
	/* Every line number is one of the object's insns. */
	EXPECT_GT((long)cnt, max_line_number(vlog)) TH_LOG("%zu insns:\n%s", cnt, vlog);
	/* The refused load from v[i]: an LDX of the object, at the number the log says. */
	n = last_insn_before(vlog, "processed ", &op, &plus);
	ASSERT_LE(0, n) TH_LOG("%s", vlog);
	ASSERT_GT((long)cnt, n);
	EXPECT_FALSE(plus);
	EXPECT_EQ(BPF_LDX, BPF_CLASS(op)) TH_LOG("insn %ld: op %#x", n, op);
	EXPECT_EQ(op, insns[n].code) TH_LOG("insn %ld: log says %#x, the object has %#x",
					   n, op, insns[n].code);
	snprintf(line, sizeof(line), "arena_log_xlate.bpf.c:%d", LOG_XLATE_FAIL_LINE);
	EXPECT_NE(NULL, strstr(vlog, line)) TH_LOG("%s", vlog);
	free(insns);
	bpf_object__close(obj);
}

/* A may_goto loop whose body reads through a scalar at insn 3. */
static const struct bpf_insn may_goto_prog[] = {
	I_MOV64_IMM(6, 0),		/* 0 */
	I_MOV64_IMM(7, 0),		/* 1 */
	I_MAY_GOTO(3),			/* 2: -> 6 */
	I_LDX(BPF_DW, 0, 6, 0),		/* 3: R6 invalid mem access 'scalar' */
	I_ALU64_IMM(BPF_ADD, 7, 1),	/* 4 */
	I_JA(-4),			/* 5: -> 2 */
	I_MOV64_IMM(0, 0),		/* 6 */
	I_EXIT(),			/* 7 */
};

static int load_level(char *log, unsigned int size, unsigned int level)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.insns = ptr_u64(may_goto_prog);
	attr.insn_cnt = ARRAY_SIZE(may_goto_prog);
	attr.license = ptr_u64("GPL");
	attr.log_buf = ptr_u64(log);
	attr.log_size = size;
	attr.log_level = level;
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	if (fd >= 0)
		close((int)fd);
	return fd < 0 ? -errno : (int)fd;
}

TEST(may_goto_body_in_user_numbers)
{
	unsigned int op = 0;
	bool plus = false;
	long n;

	vlog[0] = '\0';
	ASSERT_EQ(-EACCES, load_level(vlog, LOG_SIZE, 1)) TH_LOG("%s", vlog);
	printf("# %s\n", str_tail(vlog, 1200));
	EXPECT_NE(NULL, strstr(vlog, "R6 invalid mem access 'scalar'"));
	n = last_insn_before(vlog, "R6 invalid mem access", &op, &plus);
	EXPECT_EQ(3, n) TH_LOG("%s", vlog);
	EXPECT_FALSE(plus);
	EXPECT_EQ(BPF_LDX | BPF_MEM | BPF_DW, op);
	EXPECT_GE(7, max_line_number(vlog)) TH_LOG("%s", vlog);
	EXPECT_EQ(NULL, strstr(vlog, "bpfa_loop")) TH_LOG("%s", vlog);
	/* Level 2: the "from N to M" lines too. */
	vlog[0] = '\0';
	ASSERT_EQ(-EACCES, load_level(vlog, LOG_SIZE, 2)) TH_LOG("%s", vlog);
	EXPECT_GE(7, max_line_number(vlog)) TH_LOG("%s", vlog);
	EXPECT_EQ(NULL, strstr(vlog, "bpfa_loop")) TH_LOG("%s", vlog);
}

TEST(log_level_0_writes_nothing)
{
	int r;

	EXPECT_EQ(-EACCES, load_level(NULL, 0, 0));
	/* 6.1 refuses a buffer with level 0 (EINVAL); either way it stays untouched. */
	memset(vlog, 'x', 4096);
	vlog[4095] = '\0';
	r = load_level(vlog, 4096, 0);
	EXPECT_TRUE(r == -EACCES || r == -EINVAL) TH_LOG("%d", r);
	EXPECT_EQ(4095, strlen(vlog));
	EXPECT_EQ('x', vlog[0]);
}

TEST(tiny_log_is_cut_and_enospc)
{
	char small[128];

	memset(small, 'x', sizeof(small));
	EXPECT_EQ(-ENOSPC, load_level(small, sizeof(small), 1));
	EXPECT_EQ(sizeof(small) - 1, strnlen(small, sizeof(small)));
	printf("# %s\n", small);
	EXPECT_EQ(NULL, strstr(small, "bpfa_loop"));
}

struct scribble {
	volatile bool stop;
	char *buf;
	unsigned int size;
};

static void *scribbler(void *arg)
{
	struct scribble *s = arg;
	unsigned int seed = 1, i = 0;

	while (!s->stop) {
		unsigned int at = rand_r(&seed) % s->size;

		switch (i++ % 4) {
		case 0:
			memset(s->buf + at, '9', s->size - at);	/* no NUL, digits */
			break;
		case 1:
			s->buf[at] = '\0';
			break;
		case 2:
			memcpy(s->buf, "4294967295: (79) insn 99999 func#3 pc+7\n", 41);
			break;
		default:
			s->buf[at] = (char)rand_r(&seed);
		}
	}
	return NULL;
}

TEST(log_changed_by_a_sibling_thread)
{
	static char buf[8192];
	struct scribble s = { .buf = buf, .size = sizeof(buf) };
	pthread_t t;
	int i, r;

	ASSERT_EQ(0, pthread_create(&t, NULL, scribbler, &s));
	for (i = 0; i < 300; i++) {
		r = load_level(buf, sizeof(buf), (i & 1) + 1);
		/* The verifier's answer, whatever the log holds. */
		if (r != -EACCES && r != -ENOSPC)
			break;
	}
	s.stop = true;
	pthread_join(t, NULL);
	EXPECT_EQ(300, i) TH_LOG("load %d: %d", i, r);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * BTF [1] int, [2] int (void), [3] FUNC main, whose string section ends with
 * "/aaa...a" (name_len a's), the file name of the line_info below.
 */
#define NAME_OFF	10	/* "\0int\0main\0" */
static int btf_long_file_name(size_t name_len)
{
	static const __u32 t[] = {
		1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,	/* [1] int */
		0, BTF_KIND_FUNC_PROTO << 24, 1,			/* [2] */
		5, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 2,		/* [3] main */
	};
	size_t str_len = NAME_OFF + 1 + name_len + 1;
	size_t size = sizeof(struct btf_header) + sizeof(t) + str_len;
	struct btf_header *h = calloc(1, size);
	char *s = (char *)(h + 1) + sizeof(t);
	union bpf_attr attr;
	long fd;

	if (!h)
		return -ENOMEM;
	h->magic = BTF_MAGIC;
	h->version = BTF_VERSION;
	h->hdr_len = sizeof(*h);
	h->type_len = sizeof(t);
	h->str_off = sizeof(t);
	h->str_len = str_len;
	memcpy(h + 1, t, sizeof(t));
	memcpy(s, "\0int\0main\0/", NAME_OFF + 1);
	memset(s + NAME_OFF + 1, 'a', name_len);
	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(h);
	attr.btf_size = size;
	fd = bpf_sys(BPF_BTF_LOAD, &attr);
	free(h);
	return fd < 0 ? -errno : (int)fd;
}

/* may_goto_prog with func_info and a line_info naming the BTF's file; its seconds. */
static double load_timed(int btf_fd, char *log, unsigned int size)
{
	struct bpf_func_info fi = { 0, 3 };
	struct bpf_line_info li = { 0, NAME_OFF, 5, 7 << 10 };
	union bpf_attr attr;
	double t0;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.insns = ptr_u64(may_goto_prog);
	attr.insn_cnt = ARRAY_SIZE(may_goto_prog);
	attr.license = ptr_u64("GPL");
	attr.log_buf = ptr_u64(log);
	attr.log_size = size;
	attr.log_level = 1;
	attr.prog_btf_fd = btf_fd;
	attr.func_info = ptr_u64(&fi);
	attr.func_info_rec_size = sizeof(fi);
	attr.func_info_cnt = 1;
	attr.line_info = ptr_u64(&li);
	attr.line_info_rec_size = sizeof(li);
	attr.line_info_cnt = 1;
	t0 = now_s();
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	if (fd >= 0)
		close((int)fd);
	return now_s() - t0;
}

/*
 * A log buffer the verifier cannot write (read-only) but the translation
 * reads: text of the caller's choosing, each "insn 0" naming the source
 * line of insn 0, whose file name is 1 MiB long.  The name's length must
 * not multiply the cost of each line (16 MiB of such lines would hold the
 * CPU for hours otherwise).
 */
TEST(long_file_name_costs_no_more)
{
	const unsigned int lines = 64, size = 1 << 16;
	int short_fd, long_fd, i;
	double t_short, t_long;
	char *log;

	log = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, log);
	for (i = 0; i < (int)lines; i++)
		memcpy(log + i * 7, "insn 0\n", 7);
	log[lines * 7] = '\0';
	ASSERT_EQ(0, mprotect(log, size, PROT_READ));
	short_fd = btf_long_file_name(16);
	ASSERT_LE(0, short_fd) TH_LOG("BTF: %d", short_fd);
	long_fd = btf_long_file_name(1 << 20);
	ASSERT_LE(0, long_fd) TH_LOG("BTF: %d", long_fd);
	load_timed(short_fd, log, size);		/* warm */
	t_short = load_timed(short_fd, log, size);
	t_long = load_timed(long_fd, log, size);
	printf("# %u lines: %.3f s with a 16-byte file name, %.3f s with 1 MiB\n",
	       lines, t_short, t_long);
	EXPECT_GT(3 * t_short + 0.5, t_long);
	close(short_fd);
	close(long_fd);
	munmap(log, size);
}

struct restore {
	volatile bool stop;
	char *buf;
	const char *text;
};

/* Puts the log's first bytes back after the verifier wrote its log there. */
static void *restorer(void *arg)
{
	struct restore *r = arg;

	while (!r->stop)
		memcpy(r->buf, r->text, 1 << 16);
	return NULL;
}

/*
 * 2 MiB of "func#1,func#2," (the loop's generated functions) in a log of
 * 64 MiB: each token becomes a sentence, the translation more than ten
 * times the text.  Logs over 16 MiB stay as they are, so must a
 * translation over 16 MiB: the kernel copy is never more than that.
 */
TEST(translation_longer_than_16_mib_is_not_made)
{
	const size_t text = 2 << 20, size = 64 << 20;
	static char pattern[1 << 16];
	struct restore r = { };
	size_t i, longest = 0;
	pthread_t t;
	char *log;

	log = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		   MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, log);
	for (i = 0; i + 14 <= text; i += 14)
		memcpy(log + i, "func#1,func#2,", 14);
	log[i] = '\0';
	r.buf = log;
	r.text = pattern;
	memcpy(pattern, log, sizeof(pattern));
	ASSERT_EQ(0, pthread_create(&t, NULL, restorer, &r));
	for (i = 0; i < 20; i++) {
		load_level(log, size, 1);
		if (strnlen(log, size) > longest)
			longest = strnlen(log, size);
		memcpy(log, pattern, sizeof(pattern));
	}
	r.stop = true;
	pthread_join(t, NULL);
	printf("# longest log after a load: %zu bytes\n", longest);
	EXPECT_GE((size_t)16 << 20, longest);
	munmap(log, size);
}

TEST_HARNESS_MAIN

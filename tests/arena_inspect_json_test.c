// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena's --json says what its text form says, in the shape
 * docs/INSPECT-JSON.md documents, on both kernels:
 *  - every field printed is documented with its type, every documented field
 *    is printed (the schema tables are read from the document itself,
 *    embedded at build time);
 *  - list: the same arenas in the same order as the table's rows, and each
 *    cell equal to the value of its field; each cell within its column
 *    (the table is read by the header's column offsets);
 *  - show, pages, dump: the text form rebuilt from the JSON equals the text
 *    form printed (pages and dump: module only).
 * The arenas carry values at the edges of what the kernel allows: 4 GiB,
 * every flag, a 15-character name, a range fixed by map_extra, an unmapped
 * arena, 40 programs, a creator whose command name is not plain ASCII.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <linux/bpf_arena.h>

#include "kselftest_harness.h"
#include "bpf_insn.h"
#include "test_util.h"
#include "mini_json.h"
#include "inspect_json_doc.h"	/* docs/INSPECT-JSON.md as inspect_json_doc[] */

#define PG		4096
#define NPROGS		40
#define FIXED_ADDR	0x7e0000000000ULL

static char text[1 << 20], json[1 << 20], vlog[1 << 16];

/* Runs a command; its stdout in buf; its exit status. */
static int run(char *buf, size_t len, const char *fmt, ...)
{
	char cmd[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>/dev/null", sizeof(cmd) - strlen(cmd) - 1);
	return run_cmd(cmd, buf, len);
}

/* ---- the documented schema ---------------------------------------------- */

struct field {
	char schema[16], path[64], type[16], in[32];
	bool nullable;
};

static struct field fields[128];
static int nfields;

/* Copies table cell s..e without backticks and surrounding blanks. */
static void cell(char *dst, size_t len, const char *s, const char *e)
{
	size_t n = 0;

	for (; s < e && n + 1 < len; s++)
		if (*s != '`' && !(n == 0 && *s == ' '))
			dst[n++] = *s;
	while (n && dst[n - 1] == ' ')
		n--;
	dst[n] = 0;
}

/* The rows of every "<!-- schema: NAME -->" table of the document. */
static int load_schema(void)
{
	const char *p = inspect_json_doc;
	char schema[16] = "";

	nfields = 0;
	while (*p) {
		const char *eol = strchr(p, '\n');

		if (!eol)
			eol = p + strlen(p);
		if (!strncmp(p, "<!-- schema: ", 13)) {
			cell(schema, sizeof(schema), p + 13, strstr(p, " -->"));
		} else if (p[0] != '|') {
			if (p == eol)
				schema[0] = 0;	/* a table ends at a blank line */
		} else if (schema[0] && !strncmp(p, "| `", 3) && nfields < 128) {
			struct field *f = &fields[nfields++];
			const char *c[5] = { p };

			for (int i = 1; i < 5; i++)
				c[i] = c[i - 1] ? memchr(c[i - 1] + 1, '|', (size_t)(eol - c[i - 1] - 1)) :
					NULL;
			if (!c[4])
				return -1;
			snprintf(f->schema, sizeof(f->schema), "%s", schema);
			cell(f->path, sizeof(f->path), c[0] + 1, c[1]);
			cell(f->type, sizeof(f->type), c[1] + 1, c[2]);
			cell(f->in, sizeof(f->in), c[2] + 1, c[3]);
			f->nullable = strstr(f->type, " or null") != NULL;
			if (f->nullable)
				*strstr(f->type, " or null") = 0;
		}
		p = *eol ? eol + 1 : eol;
	}
	return nfields;
}

static bool in_cmd(const struct field *f, const char *cmd)
{
	size_t n = strlen(cmd);

	for (const char *p = f->in; (p = strstr(p, cmd)); p += n)
		if ((p == f->in || p[-1] == ' ' || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

static const struct field *field(const char *schema, const char *cmd, const char *path)
{
	for (int i = 0; i < nfields; i++)
		if (!strcmp(fields[i].schema, schema) && !strcmp(fields[i].path, path) &&
		    in_cmd(&fields[i], cmd))
			return &fields[i];
	return NULL;
}

static bool is_hex(const char *s)
{
	if (strncmp(s, "0x", 2) || !s[2])
		return false;
	for (s += 2; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static bool type_ok(const struct field *f, const struct mj *v)
{
	if (v->t == MJ_NULL)
		return f->nullable;
	if (!strcmp(f->type, "number"))
		return v->t == MJ_NUM && v->u64_ok;
	if (!strcmp(f->type, "hex"))
		return v->t == MJ_STR && is_hex(v->str);
	if (!strcmp(f->type, "string"))
		return v->t == MJ_STR;
	if (!strcmp(f->type, "bool"))
		return v->t == MJ_BOOL;
	if (!strcmp(f->type, "object"))
		return v->t == MJ_OBJ;
	if (!strcmp(f->type, "array"))
		return v->t == MJ_ARR;
	return false;
}

/*
 * Problems of object o (at path prefix) against the schema: undocumented or
 * mistyped fields, documented ones missing; reported as "# ..." lines.
 */
static int check_object(const char *schema, const char *cmd, const char *prefix,
			const struct mj *o)
{
	char path[96];
	int bad = 0;

	if (o->t != MJ_OBJ) {
		fprintf(stderr, "# %s %s: '%s' is not an object\n", schema, cmd, prefix);
		return 1;
	}
	for (size_t i = 0; i < o->n; i++) {
		const struct mj *v = o->items[i];
		const struct field *f;

		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", o->keys[i]);
		f = field(schema, cmd, path);
		if (!f) {
			fprintf(stderr, "# %s %s: field '%s' is not documented\n", schema, cmd, path);
			bad++;
			continue;
		}
		if (!type_ok(f, v)) {
			fprintf(stderr, "# %s %s: field '%s' is not of type %s%s\n", schema, cmd,
				path, f->type, f->nullable ? " or null" : "");
			bad++;
			continue;
		}
		if (v->t == MJ_OBJ) {
			bad += check_object(schema, cmd, path, v);
		} else if (v->t == MJ_ARR) {
			strncat(path, "[]", sizeof(path) - strlen(path) - 1);
			for (size_t k = 0; k < v->n; k++)
				bad += check_object(schema, cmd, path, v->items[k]);
		}
	}
	/* Every documented field directly under prefix is there. */
	for (int i = 0; i < nfields; i++) {
		const struct field *f = &fields[i];
		size_t n = strlen(prefix);
		const char *key = f->path + n + (n ? 1 : 0);

		if (strcmp(f->schema, schema) || !in_cmd(f, cmd) ||
		    (n && (strncmp(f->path, prefix, n) || f->path[n] != '.')) ||
		    strchr(key, '.') || strstr(key, "[]"))
			continue;
		if (!mj_get(o, key)) {
			fprintf(stderr, "# %s %s: documented field '%s' missing\n", schema, cmd,
				f->path);
			bad++;
		}
	}
	return bad;
}

/* ---- values as the text form prints them ------------------------------- */

static const char *s_of(const struct mj *o, const char *key)
{
	const struct mj *v = mj_get(o, key);

	return v && v->t == MJ_STR ? v->str : "?";
}

static uint64_t u_of(const struct mj *o, const char *key)
{
	const struct mj *v = mj_get(o, key);

	return v && v->t == MJ_NUM ? v->u64 : ~0ULL;
}

static bool is_null(const struct mj *o, const char *key)
{
	const struct mj *v = mj_get(o, key);

	return !v || v->t == MJ_NULL;
}

static void size_text(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ULL << 30) && !(b % (1ULL << 30)))
		snprintf(buf, len, "%" PRIu64 "GiB", b >> 30);
	else if (b >= (1ULL << 20) && !(b % (1ULL << 20)))
		snprintf(buf, len, "%" PRIu64 "MiB", b >> 20);
	else
		snprintf(buf, len, "%" PRIu64 "KiB", b >> 10);
}

static void progs_text(const struct mj *a, char *buf, size_t len)
{
	const struct mj *p = mj_get(a, "programs");
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; p && i < p->n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRIu64, i ? "," : "",
				      u_of(p->items[i], "id"));
	if (!n)
		snprintf(buf, len, "-");
}

#define L_COLS 10
static const char *const list_header[L_COLS] = {
	"ID", "NAME", "PAGES", "SIZE", "FLAGS", "VIA", "CREATOR PID/UID (COMM)",
	"USER ADDRESS", "MAPS", "PROGS",
};

/* The list table's cells of arena a, as documented in the schema's last column. */
static void list_cells(const struct mj *a, char cells[L_COLS][1024])
{
	const struct mj *c = mj_get(a, "creator");

	snprintf(cells[0], 1024, "%" PRIu64, u_of(a, "id"));
	snprintf(cells[1], 1024, "%s", *s_of(a, "name") ? s_of(a, "name") : "-");
	if (is_null(a, "pages"))
		snprintf(cells[2], 1024, "-/%" PRIu64, u_of(a, "max_entries"));
	else
		snprintf(cells[2], 1024, "%" PRIu64 "/%" PRIu64, u_of(a, "pages"),
			 u_of(a, "max_entries"));
	size_text(u_of(a, "size"), cells[3], 1024);
	snprintf(cells[4], 1024, "%s", s_of(a, "flags"));
	snprintf(cells[5], 1024, "%s", is_null(a, "created_by") ? "-" : s_of(a, "created_by"));
	if (!c || c->t == MJ_NULL)
		snprintf(cells[6], 1024, "-");
	else
		snprintf(cells[6], 1024, "%" PRIu64 "/%" PRIu64 " (%s)", u_of(c, "pid"),
			 u_of(c, "uid"), s_of(c, "comm"));
	if (is_null(a, "user_vm_start"))
		snprintf(cells[7], 1024, "-");
	else if (!strcmp(s_of(a, "user_vm_start"), "0x0"))
		snprintf(cells[7], 1024, "(not mapped yet)");
	else
		snprintf(cells[7], 1024, "%s-%s", s_of(a, "user_vm_start"), s_of(a, "user_vm_end"));
	if (is_null(a, "mapped_vmas"))
		snprintf(cells[8], 1024, "-");
	else
		snprintf(cells[8], 1024, "%" PRIu64, u_of(a, "mapped_vmas"));
	progs_text(a, cells[9], 1024);
}

/* Byte offset of code point col in line (UTF-8), or of its end. */
static size_t at_col(const char *line, size_t col)
{
	size_t i = 0;

	for (; line[i] && col; col--)
		for (i++; ((unsigned char)line[i] & 0xc0) == 0x80; i++)
			;
	return i;
}

static size_t cols_of(const char *s, size_t bytes)
{
	size_t w = 0;

	for (size_t i = 0; i < bytes && s[i]; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/*
 * Compares the list table with the JSON list; 0 if they agree, else the
 * number of problems ("# ..." lines).  *ids_differ: the sets of arenas
 * differ (another test's arena freed between the two runs: worth a retry).
 */
static int compare_list(const char *tbl, const struct mj *arr, bool *ids_differ)
{
	size_t start[L_COLS], row = 0;
	const char *line = tbl, *eol = strchr(tbl, '\n');
	int bad = 0;

	*ids_differ = false;
	if (!eol || arr->t != MJ_ARR) {
		fprintf(stderr, "# list: no table or no JSON array\n");
		return 1;
	}
	/* Column starts, in code points, from the header; each header left-aligned. */
	for (int c = 0; c < L_COLS; c++) {
		const char *h = strstr(c ? line + at_col(line, start[c - 1]) + 1 : line,
				       list_header[c]);

		if (!h || h > eol) {
			fprintf(stderr, "# list: no header '%s'\n", list_header[c]);
			return 1;
		}
		start[c] = cols_of(line, (size_t)(h - line));
	}
	for (line = eol + 1; *line && *line != '#'; line = eol + 1, row++) {
		char cells[L_COLS][1024], got[1024];
		const struct mj *a;

		eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		if (row >= arr->n) {
			*ids_differ = true;
			fprintf(stderr, "# list: table row %zu has no JSON arena\n", row);
			return bad + 1;
		}
		a = arr->items[row];
		list_cells(a, cells);
		if (strncmp(line, cells[0], strlen(cells[0])) || line[strlen(cells[0])] != ' ') {
			*ids_differ = true;
			fprintf(stderr, "# list: row %zu is not arena %s\n", row, cells[0]);
			return bad + 1;
		}
		for (int c = 0; c < L_COLS; c++) {
			size_t b = at_col(line, start[c]);
			size_t e = c + 1 < L_COLS ? at_col(line, start[c + 1]) : (size_t)(eol - line);
			size_t n;

			if (line + e > eol)
				e = (size_t)(eol - line);
			if (line + b > eol)
				b = e;
			n = e - b < sizeof(got) - 1 ? e - b : sizeof(got) - 1;
			memcpy(got, line + b, n);
			got[n] = 0;
			while (n && got[n - 1] == ' ')
				got[--n] = 0;
			/* A cell that overflows its column shows here as a mismatch. */
			if (strcmp(got, cells[c]) || (b && line[b - 1] != ' ')) {
				fprintf(stderr, "# list: arena %s column %s: table '%s', JSON '%s'\n",
					cells[0], list_header[c], got, cells[c]);
				bad++;
			}
		}
	}
	if (row != arr->n) {
		*ids_differ = true;
		fprintf(stderr, "# list: %zu table rows, %zu JSON arenas\n", row, arr->n);
		bad++;
	}
	return bad;
}

#define ADD(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))

/* show's text as the JSON says it must read (the module-less reason excluded). */
static void show_text(const struct mj *a, char *buf, size_t len)
{
	const struct mj *progs = mj_get(a, "programs"), *st = mj_get(a, "stats");
	const struct mj *c = mj_get(a, "creator"), *maps = mj_get(a, "mappings");
	char sz[32], pl[4096];
	size_t n = 0;

	size_text(u_of(a, "size"), sz, sizeof(sz));
	progs_text(a, pl, sizeof(pl));
	ADD("arena %" PRIu64 "  name %s\n", u_of(a, "id"),
	    *s_of(a, "name") ? s_of(a, "name") : "-");
	ADD("  size          %" PRIu64 " pages (%s), flags %s (%s), map_extra %s\n",
	    u_of(a, "max_entries"), sz, s_of(a, "map_flags"), s_of(a, "flags"),
	    s_of(a, "map_extra"));
	ADD("  programs      %s\n", pl);
	for (size_t i = 0; progs && i < progs->n; i++)
		ADD("                %" PRIu64 " %s (%s)\n", u_of(progs->items[i], "id"),
		    *s_of(progs->items[i], "name") ? s_of(progs->items[i], "name") : "-",
		    s_of(progs->items[i], "type"));
	if (!is_null(a, "user_vm_start") && strcmp(s_of(a, "user_vm_start"), "0x0"))
		ADD("  user range    %s-%s\n", s_of(a, "user_vm_start"), s_of(a, "user_vm_end"));
	else if (!is_null(a, "user_vm_start"))
		ADD("  user range    not fixed yet (no mmap, no map_extra)\n");
	if (!st || st->t == MJ_NULL) {
		ADD("  (module-only information unavailable: ");
		return;
	}
	ADD("  created by    %s, pid %" PRIu64 " uid %" PRIu64 " (%s)%s\n",
	    !strcmp(s_of(a, "created_by"), "device") ? "/dev/bpf_arena" : "bpf(BPF_MAP_CREATE)",
	    u_of(c, "pid"), u_of(c, "uid"), s_of(c, "comm"),
	    u_of(c, "pid") ? "" : " (process gone or in another pid namespace)");
	ADD("  frozen        %s\n", mj_get(a, "frozen")->b ? "yes" : "no");
	ADD("  pages now     %" PRIu64 " allocated, %" PRIu64 " reserved\n", u_of(a, "pages"),
	    u_of(a, "pages_reserved"));
	ADD("  allocated     bpf %" PRIu64 ", user fault %" PRIu64 ", ioctl %" PRIu64
	    ", prefault %" PRIu64 " (pages, since creation)\n",
	    u_of(mj_get(st, "allocated"), "bpf"), u_of(mj_get(st, "allocated"), "user_fault"),
	    u_of(mj_get(st, "allocated"), "ioctl"), u_of(mj_get(st, "allocated"), "prefault"));
	ADD("  freed         %" PRIu64 " (bpf %" PRIu64 ", ioctl %" PRIu64 ")\n",
	    u_of(mj_get(st, "freed"), "total"), u_of(mj_get(st, "freed"), "bpf"),
	    u_of(mj_get(st, "freed"), "ioctl"));
	ADD("  user faults   %" PRIu64 " (%" PRIu64 " answered SIGSEGV)\n",
	    u_of(st, "user_faults"), u_of(st, "user_faults_segv"));
	ADD("  BPF fixups    %" PRIu64 " (faulting arena accesses: load 0, store skipped)\n",
	    u_of(st, "fixups"));
	if (!u_of(st, "memcg_id"))
		ADD("  memcg         none\n");
	else
		ADD("  memcg         %s (cgroup id %" PRIu64 ")\n",
		    is_null(st, "memcg") ? "(no such directory under /sys/fs/cgroup)" :
		    s_of(st, "memcg"), u_of(st, "memcg_id"));
	ADD("  mappings      %" PRIu64 "\n", u_of(a, "mapped_vmas"));
	for (size_t i = 0; maps && i < maps->n; i++)
		ADD("                pid %" PRIu64 " (%s) %s %s-%s\n", u_of(maps->items[i], "pid"),
		    s_of(maps->items[i], "comm"), s_of(maps->items[i], "perms"),
		    s_of(maps->items[i], "start"), s_of(maps->items[i], "end"));
}

/* pages' text up to its grid, as the JSON says it must read. */
static void pages_text(const struct mj *p, char *buf, size_t len)
{
	const struct mj *r = mj_get(p, "ranges");
	size_t n = 0;

	ADD("arena %" PRIu64 ": %" PRIu64 " pages from %s: %" PRIu64 " allocated, %" PRIu64
	    " reserved, %" PRIu64 " free\n", u_of(p, "id"), u_of(p, "total"),
	    s_of(p, "user_vm_start"), u_of(p, "allocated"), u_of(p, "reserved"), u_of(p, "free"));
	for (size_t i = 0; r && i < r->n; i++)
		ADD("  %s-%s  pages %" PRIu64 "-%" PRIu64 "  %" PRIu64 " %s\n",
		    s_of(r->items[i], "start"), s_of(r->items[i], "end"),
		    u_of(r->items[i], "first_page"), u_of(r->items[i], "last_page"),
		    u_of(r->items[i], "pages"), s_of(r->items[i], "state"));
}

/* dump's text, as the JSON says it must read. */
static void dump_text(const struct mj *d, char *buf, size_t len)
{
	const struct mj *pages = mj_get(d, "pages");
	bool gap = false;
	size_t n = 0;

	for (size_t i = 0; pages && i < pages->n; i++) {
		const struct mj *pg = pages->items[i];
		uint64_t addr = (uint64_t)strtoull(s_of(pg, "addr"), NULL, 16), plen = u_of(pg, "len");
		const char *hex = is_null(pg, "hex") ? NULL : s_of(pg, "hex");

		if (!mj_get(pg, "allocated")->b || !hex) {
			if (!gap)
				ADD("%016" PRIx64 "  -- unallocated page(s) from here: read as zero, nothing allocated --\n",
				    addr);
			gap = true;
			continue;
		}
		gap = false;
		for (uint64_t q = 0; q < plen; q += 16) {
			uint64_t k, m = plen - q < 16 ? plen - q : 16;

			ADD("%016" PRIx64 "  ", addr + q);
			for (k = 0; k < 16; k++) {
				if (k < m)
					ADD("%.2s ", hex + 2 * (q + k));
				else
					ADD("   ");
				if (k == 7)
					ADD(" ");
			}
			ADD(" |");
			for (k = 0; k < m; k++) {
				unsigned int b;

				sscanf(hex + 2 * (q + k), "%2x", &b);
				ADD("%c", b >= 0x20 && b < 0x7f ? (char)b : '.');
			}
			ADD("|\n");
		}
	}
	ADD("%016" PRIx64 "\n", (uint64_t)strtoull(s_of(d, "addr"), NULL, 16) + u_of(d, "len"));
}

/* ---- the arenas --------------------------------------------------------- */

/* arena_create_named() for names of the full 15 characters, which its strncpy() warns of. */
static int arena_named(const char *name, __u32 pages, __u32 flags, __u64 map_extra)
{
	union bpf_attr a;

	arena_attr(&a, pages, flags, map_extra);
	memcpy(a.map_name, name, strnlen(name, sizeof(a.map_name) - 1));
	return (int)bpf_sys_err(BPF_MAP_CREATE, &a);
}

FIXTURE(arenas) {
	int wide, fixed, used, named, dev;
	int progs[NPROGS];
	char *base, *dbase;
	uint32_t used_id, dev_id;
};

FIXTURE_SETUP(arenas)
{
	char comm[16] = "";

	memset(self->progs, -1, sizeof(self->progs));
	self->dev = -1;
	ASSERT_LT(0, load_schema()) TH_LOG("no schema table in docs/INSPECT-JSON.md");
	/* 4 GiB, every flag, a 15-character name, never mapped. */
	self->wide = arena_named("insp_json_wide1", 1u << 20,
					BPF_ARENA_F_SEGV_ON_FAULT | BPF_ARENA_F_NO_USER_CONV, 0);
	ASSERT_LE(0, self->wide) TH_LOG("4 GiB arena: %s", strerror(-self->wide));
	/* A range fixed by map_extra: known without the module too. */
	self->fixed = arena_named("insp_json_fixed", 16, 0, FIXED_ADDR);
	ASSERT_LE(0, self->fixed) TH_LOG("map_extra arena: %s", strerror(-self->fixed));
	/* Mapped, three pages touched, and more programs than a short list holds. */
	self->used = arena_named("insp_json_used", 64, 0, 0);
	ASSERT_LE(0, self->used);
	self->used_id = map_id(self->used);
	self->base = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->used, 0);
	ASSERT_NE(MAP_FAILED, self->base);
	strcpy(self->base + 16, "json and table");
	self->base[PG] = self->base[5 * PG] = 1;
	for (int i = 0; i < NPROGS; i++) {
		struct bpf_insn insns[] = { I_LD_MAP_FD(1, self->used), I_MOV64_IMM(0, 0), I_EXIT() };

		self->progs[i] = load_syscall_prog(insns, ARRAY_SIZE(insns), vlog, sizeof(vlog));
		ASSERT_LE(0, self->progs[i]) TH_LOG("program %d: %s\n%s", i,
						    strerror(-self->progs[i]), vlog);
	}
	/* Created under a command name that is neither ASCII nor free of controls. */
	ASSERT_EQ(0, prctl(PR_GET_NAME, comm));
	ASSERT_EQ(0, prctl(PR_SET_NAME, "j\xc3\xb6n\tname x"));
	self->named = arena_named("insp_json_comm", 8, 0, 0);
	ASSERT_EQ(0, prctl(PR_SET_NAME, comm));
	ASSERT_LE(0, self->named);
	/* A device arena with a few pages, for pages and dump (module only). */
	if (have_dev()) {
		struct bpf_arena_info info = { .size = sizeof(info) };

		self->dev = open(BPF_ARENA_DEV_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->dev);
		self->dbase = mmap(NULL, 128 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->dev, 0);
		ASSERT_NE(MAP_FAILED, self->dbase);
		ASSERT_EQ(0, ioctl(self->dev, BPF_ARENA_IOC_GET_INFO, &info));
		self->dev_id = info.map_id;
		ASSERT_EQ(0, dev_alloc(self->dev, ptr_u64(self->dbase), 2, NULL));
		ASSERT_EQ(0, dev_alloc(self->dev, ptr_u64(self->dbase + 70 * PG), 3, NULL));
		strcpy(self->dbase + PG - 8, "across a page boundary");
	}
}

FIXTURE_TEARDOWN(arenas)
{
	for (int i = 0; i < NPROGS; i++)
		if (self->progs[i] >= 0)
			close(self->progs[i]);
	if (self->dev >= 0) {
		munmap(self->dbase, 128 * PG);
		close(self->dev);
	}
	if (self->base && self->base != MAP_FAILED)
		munmap(self->base, 64 * PG);
	close(self->named);
	close(self->used);
	close(self->fixed);
	close(self->wide);
}

TEST_F(arenas, list_table_and_json_agree_and_match_the_schema)
{
	const char *err;
	struct mj *arr = NULL;
	bool ids_differ = true;
	int bad = 0;

	/* Another test's arena may be freed between the two runs: retry that only. */
	for (int attempt = 0; attempt < 5 && ids_differ; attempt++) {
		mj_free(arr);
		ASSERT_EQ(0, run(text, sizeof(text), "bpf-arena list"));
		ASSERT_EQ(0, run(json, sizeof(json), "bpf-arena --json list"));
		arr = mj_parse(json, &err);
		ASSERT_NE(NULL, arr) TH_LOG("not JSON (%s): %s", err, json);
		bad = compare_list(text, arr, &ids_differ);
		if (ids_differ)
			usleep(200 * 1000);
	}
	TH_LOG("bpf-arena list\n%s", text);
	EXPECT_EQ(0, bad) TH_LOG("table and JSON disagree (lines above)");
	EXPECT_FALSE(ids_differ);
	ASSERT_EQ(MJ_ARR, arr->t);
	for (size_t i = 0; i < arr->n; i++) {
		EXPECT_EQ(0, check_object("arena", "list", "", arr->items[i]))
			TH_LOG("arena %zu of %s", i, json);
	}
	/* The arenas made here are there, with their edge values. */
	EXPECT_NE(NULL, strstr(json, "\"name\":\"insp_json_wide1\",\"max_entries\":1048576,\"size\":4294967296"));
	EXPECT_NE(NULL, strstr(json, "\"flags\":\"mmapable,segv_on_fault,no_user_conv\""));
	EXPECT_NE(NULL, strstr(json, "\"map_extra\":\"0x7e0000000000\"")) TH_LOG("%s", json);
	EXPECT_NE(NULL, strstr(json, "\"user_vm_start\":\"0x7e0000000000\",\"user_vm_end\":\"0x7e0000010000\""))
		TH_LOG("a range fixed by map_extra is known on every kernel: %s", json);
	if (have_dev())
		EXPECT_NE(NULL, strstr(json, "\"comm\":\"j\xc3\xb6n?name x\"")) TH_LOG("%s", json);
	mj_free(arr);
}

TEST_F(arenas, show_text_and_json_agree_and_match_the_schema)
{
	char want[1 << 14];
	uint32_t ids[4];
	const char *err;

	ids[0] = map_id(self->wide);
	ids[1] = map_id(self->fixed);
	ids[2] = self->used_id;
	ids[3] = map_id(self->named);
	for (int i = 0; i < 4; i++) {
		struct mj *a;

		ASSERT_EQ(0, run(text, sizeof(text), "bpf-arena show %u", ids[i]));
		ASSERT_EQ(0, run(json, sizeof(json), "bpf-arena --json show %u", ids[i]));
		a = mj_parse(json, &err);
		ASSERT_NE(NULL, a) TH_LOG("not JSON (%s): %s", err, json);
		EXPECT_EQ(0, check_object("arena", "show", "", a)) TH_LOG("%s", json);
		show_text(a, want, sizeof(want));
		/* Without the module the text ends with the reason: compare up to it. */
		if (is_null(a, "stats")) {
			EXPECT_EQ(0, strncmp(text, want, strlen(want)))
				TH_LOG("show %u:\n%s\nrebuilt from JSON:\n%s", ids[i], text, want);
		} else {
			EXPECT_STREQ(want, text) TH_LOG("show %u, JSON %s", ids[i], json);
		}
		mj_free(a);
	}
	TH_LOG("bpf-arena show %u\n%s", ids[3], text);
}

TEST_F(arenas, pages_text_and_json_agree_and_match_the_schema)
{
	uint64_t grid[2] = { 0 };
	char want[1 << 14];
	const char *err, *g;
	struct mj *p;

	if (!have_dev())
		SKIP(return, "module-only: pages needs " BPF_ARENA_DEV_PATH);
	ASSERT_EQ(0, run(text, sizeof(text), "bpf-arena pages %u", self->dev_id));
	ASSERT_EQ(0, run(json, sizeof(json), "bpf-arena --json pages %u", self->dev_id));
	p = mj_parse(json, &err);
	ASSERT_NE(NULL, p) TH_LOG("not JSON (%s): %s", err, json);
	EXPECT_EQ(0, check_object("pages", "pages", "", p)) TH_LOG("%s", json);
	pages_text(p, want, sizeof(want));
	EXPECT_EQ(0, strncmp(text, want, strlen(want))) TH_LOG("%s\nrebuilt from JSON:\n%s", text, want);
	EXPECT_EQ(5, u_of(p, "allocated"));
	EXPECT_EQ(u_of(p, "total"), u_of(p, "allocated") + u_of(p, "reserved") + u_of(p, "free"));
	/* The grid draws the same pages. */
	g = strstr(text, "64 pages a line):\n");
	ASSERT_NE(NULL, g);
	for (g = strchr(g, '\n'); *g; g++)
		if (*g == ' ')
			for (g++; *g && *g != '\n'; g++)
				grid[0] += *g == '#', grid[1] += *g == 'r';
	EXPECT_EQ(u_of(p, "allocated"), grid[0]);
	EXPECT_EQ(u_of(p, "reserved"), grid[1]);
	mj_free(p);
}

TEST_F(arenas, dump_text_and_json_agree_and_match_the_schema)
{
	static char want[1 << 18];
	static const char *const ranges[] = { "+4000 200", "+0 12288", "+%u 16" };
	const char *err;

	if (!have_dev())
		SKIP(return, "module-only: dump needs " BPF_ARENA_DEV_PATH);
	for (int i = 0; i < 3; i++) {
		char arg[32];
		struct mj *d;

		snprintf(arg, sizeof(arg), ranges[i], 71 * PG + 8);
		ASSERT_EQ(0, run(text, sizeof(text), "bpf-arena dump %u %s", self->dev_id, arg));
		ASSERT_EQ(0, run(json, sizeof(json), "bpf-arena --json dump %u %s", self->dev_id, arg));
		d = mj_parse(json, &err);
		ASSERT_NE(NULL, d) TH_LOG("not JSON (%s): %s", err, json);
		EXPECT_EQ(0, check_object("dump", "dump", "", d)) TH_LOG("%s", json);
		dump_text(d, want, sizeof(want));
		EXPECT_STREQ(want, text) TH_LOG("dump %s", arg);
		mj_free(d);
	}
}

/* The schema itself: every table read, every type one the test knows. */
TEST(schema_document_is_complete)
{
	static const char *const types[] = { "number", "hex", "string", "bool", "object", "array" };
	static const char *const schemas[] = { "arena", "pages", "dump" };

	ASSERT_LT(0, load_schema());
	for (int i = 0; i < nfields; i++) {
		bool known = false;

		for (size_t k = 0; k < ARRAY_SIZE(types); k++)
			known |= !strcmp(fields[i].type, types[k]);
		EXPECT_TRUE(known) TH_LOG("%s: unknown type '%s'", fields[i].path, fields[i].type);
		EXPECT_NE(0, fields[i].in[0]) TH_LOG("%s: no command", fields[i].path);
	}
	for (size_t s = 0; s < ARRAY_SIZE(schemas); s++) {
		int n = 0;

		for (int i = 0; i < nfields; i++)
			n += !strcmp(fields[i].schema, schemas[s]);
		EXPECT_LT(0, n) TH_LOG("no '%s' table", schemas[s]);
	}
}

TEST_HARNESS_MAIN

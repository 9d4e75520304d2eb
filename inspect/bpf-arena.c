// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena: inspect the BPF arenas of the system.
 *
 *   bpf-arena [-j|--json] [-p|--pretty] list
 *   bpf-arena [-j] show ID
 *   bpf-arena [-j] pages ID
 *   bpf-arena [-j] dump ID ADDR LEN     (ADDR: a user address, or +OFFSET)
 *
 * Reads only: nothing here allocates an arena page or changes a counter
 * (a dump of an unallocated page reads zeroes in the kernel, it does not
 * fault the page in).  Where the information comes from, and what needs the
 * module, is in query.h; docs/USAGE.md "Inspecting arenas" has examples, and
 * docs/INSPECT-JSON.md is the schema of --json.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "json.h"
#include "query.h"

#ifndef BPF_ARENA_VERSION
#define BPF_ARENA_VERSION "unknown"
#endif
#define PG ((uint64_t)4096)
#define DUMP_CHUNK_PAGES 32

static bool opt_json;

static int fail(int err, const char *what)
{
	fprintf(stderr, "bpf-arena: %s: %s", what, strerror(-err));
	if (err == -EPERM)
		fprintf(stderr, " (needs CAP_SYS_ADMIN, as bpftool map list: the stock BPF_MAP_GET_NEXT_ID/GET_FD_BY_ID rule)");
	fputc('\n', stderr);
	return 1;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

static int parse_id(const char *s, uint32_t *id)
{
	uint64_t v;

	if (parse_u64(s, &v) || !v || v > UINT32_MAX) {
		fprintf(stderr, "bpf-arena: bad map id '%s'\n", s);
		return -EINVAL;
	}
	*id = (uint32_t)v;
	return 0;
}

/* The flags by name, comma-separated, unknown bits as one hex number; "-" for none. */
static const char *flags_str(uint32_t f, char *buf, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ BPF_ARENA_F_MMAPABLE, "mmapable" },
		{ BPF_ARENA_F_SEGV_ON_FAULT, "segv_on_fault" },
		{ BPF_ARENA_F_NO_USER_CONV, "no_user_conv" },
	};
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(f & names[i].bit))
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
				      names[i].name);
		f &= ~names[i].bit;
	}
	if (f)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s0x%x", n ? "," : "", f);
	if (!n)
		snprintf(buf, len, "-");
	return buf;
}

/* Program type names, as bpftool prints them. */
static const char *prog_type_str(uint32_t t)
{
	static const char *const names[] = {
		[BPF_PROG_TYPE_SOCKET_FILTER] = "socket_filter",
		[BPF_PROG_TYPE_KPROBE] = "kprobe",
		[BPF_PROG_TYPE_SCHED_CLS] = "sched_cls",
		[BPF_PROG_TYPE_SCHED_ACT] = "sched_act",
		[BPF_PROG_TYPE_TRACEPOINT] = "tracepoint",
		[BPF_PROG_TYPE_XDP] = "xdp",
		[BPF_PROG_TYPE_PERF_EVENT] = "perf_event",
		[BPF_PROG_TYPE_CGROUP_SKB] = "cgroup_skb",
		[BPF_PROG_TYPE_RAW_TRACEPOINT] = "raw_tracepoint",
		[BPF_PROG_TYPE_TRACING] = "tracing",
		[BPF_PROG_TYPE_STRUCT_OPS] = "struct_ops",
		[BPF_PROG_TYPE_EXT] = "ext",
		[BPF_PROG_TYPE_LSM] = "lsm",
		[BPF_PROG_TYPE_SK_LOOKUP] = "sk_lookup",
		[BPF_PROG_TYPE_SYSCALL] = "syscall",
	};

	return t < sizeof(names) / sizeof(names[0]) && names[t] ? names[t] : "other";
}

/* The list's VIA column and the JSON's created_by: one spelling for both. */
static const char *origin_str(const struct q_arena *a)
{
	return a->mod.origin == BPF_ARENA_INSPECT_ORIGIN_DEV ? "device" : "bpf";
}

static void size_str(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ULL << 30) && !(bytes % (1ULL << 30)))
		snprintf(buf, len, "%" PRIu64 "GiB", bytes >> 30);
	else if (bytes >= (1ULL << 20) && !(bytes % (1ULL << 20)))
		snprintf(buf, len, "%" PRIu64 "MiB", bytes >> 20);
	else
		snprintf(buf, len, "%" PRIu64 "KiB", bytes >> 10);
}

/*
 * The JSON fields of an arena; module-only ones are null without the module.
 * docs/INSPECT-JSON.md is their schema: a field added here goes there too.
 */
static void json_arena(const struct q_arena *a, bool stats)
{
	const struct bpf_arena_inspect *m = &a->mod;
	char buf[64];

	json_u64("id", a->id);
	json_str("name", a->name);
	json_u64("max_entries", a->max_entries);
	json_u64("size", (uint64_t)a->max_entries * PG);
	json_hex("map_flags", a->map_flags);
	json_str("flags", flags_str(a->map_flags, buf, sizeof(buf)));
	json_hex("map_extra", a->map_extra);
	json_bool("module_info", a->have_mod);
	if (a->have_mod) {
		json_str("created_by", origin_str(a));
		json_obj_open("creator");
		json_u64("pid", m->creator_pid);
		json_u64("uid", m->creator_uid);
		json_str("comm", a->creator_comm);
		json_obj_close();
		json_bool("frozen", m->frozen);
	} else {
		json_null("created_by");
		json_null("creator");
		json_null("frozen");
	}
	/* Known without the module too when map_extra fixed it. */
	if (a->have_range) {
		json_hex("user_vm_start", a->range_start);
		json_hex("user_vm_end", a->range_end);
	} else {
		json_null("user_vm_start");
		json_null("user_vm_end");
	}
	if (a->have_mod) {
		json_u64("pages", m->pages);
		json_u64("pages_reserved", m->pages_reserved);
		json_u64("mapped_vmas", m->mapped_vmas);
		json_arr_open("mappings");
		for (uint32_t i = 0; i < a->nmappings; i++) {
			json_obj_open(NULL);
			json_u64("pid", (uint64_t)a->mappings[i].pid);
			json_str("comm", a->mappings[i].comm);
			json_hex("start", a->mappings[i].start);
			json_hex("end", a->mappings[i].end);
			json_str("perms", a->mappings[i].perms);
			json_obj_close();
		}
		json_arr_close();
	} else {
		json_null("pages");
		json_null("pages_reserved");
		json_null("mapped_vmas");
		json_null("mappings");
	}
	json_arr_open("programs");
	for (uint32_t i = 0; i < a->nprogs; i++) {
		json_obj_open(NULL);
		json_u64("id", a->progs[i].id);
		json_str("name", a->progs[i].name);
		json_str("type", prog_type_str(a->progs[i].type));
		json_obj_close();
	}
	json_arr_close();
	if (!stats)
		return;
	if (!a->have_mod) {
		json_null("stats");
		return;
	}
	json_obj_open("stats");
	json_obj_open("allocated");
	json_u64("bpf", m->alloc_bpf);
	json_u64("user_fault", m->alloc_fault);
	json_u64("ioctl", m->alloc_ioctl);
	json_u64("prefault", m->alloc_prefault);
	json_obj_close();
	json_obj_open("freed");
	json_u64("bpf", m->free_bpf);
	json_u64("ioctl", m->free_ioctl);
	json_u64("total", m->freed);
	json_obj_close();
	json_u64("user_faults", m->user_faults);
	json_u64("user_faults_segv", m->user_faults_segv);
	json_u64("fixups", m->fixups);
	json_u64("memcg_id", m->memcg_id);
	if (q_cgroup_path(m->memcg_id))
		json_str("memcg", q_cgroup_path(m->memcg_id));
	else
		json_null("memcg");
	json_obj_close();
}

/* The ids of every program using the arena, comma-separated, "-" for none; malloc'd. */
static char *progs_str(const struct q_arena *a)
{
	size_t len = (size_t)a->nprogs * 11 + 2, n = 0;
	char *buf = malloc(len);

	if (!buf)
		return NULL;
	for (uint32_t i = 0; i < a->nprogs; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%u", i ? "," : "", a->progs[i].id);
	if (!a->nprogs)
		snprintf(buf, len, "-");
	return buf;
}

/* The user range as the list shows it; "-" when unknown, as in JSON (null). */
static void range_str(const struct q_arena *a, char *buf, size_t len)
{
	if (!a->have_range)
		snprintf(buf, len, "-");
	else if (!a->range_start)
		snprintf(buf, len, "(not mapped yet)");
	else
		snprintf(buf, len, "0x%" PRIx64 "-0x%" PRIx64, a->range_start, a->range_end);
}

/* Terminal columns of s: its UTF-8 code points (q_printable() made it valid). */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

enum { L_ID, L_NAME, L_PAGES, L_SIZE, L_FLAGS, L_VIA, L_CREATOR, L_ADDR, L_MAPS, L_PROGS, L_COLS };

static const char *const list_header[L_COLS] = {
	"ID", "NAME", "PAGES", "SIZE", "FLAGS", "VIA", "CREATOR PID/UID (COMM)",
	"USER ADDRESS", "MAPS", "PROGS",
};

/* A formatted, malloc'd string; NULL on failure. */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, f);
	n = vasprintf(&s, f, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

/* One list row; NULL on allocation failure.  Cells may be as wide as the kernel allows. */
static char **list_row(const struct q_arena *a)
{
	char **c = calloc(L_COLS, sizeof(*c)), fl[64], sz[32], addr[64];
	const struct bpf_arena_inspect *m = &a->mod;
	bool mod = a->have_mod;

	if (!c)
		return NULL;
	size_str((uint64_t)a->max_entries * PG, sz, sizeof(sz));
	range_str(a, addr, sizeof(addr));
	c[L_ID] = fmt("%u", a->id);
	c[L_NAME] = fmt("%s", a->name[0] ? a->name : "-");
	c[L_PAGES] = mod ? fmt("%" PRIu64 "/%u", (uint64_t)m->pages, a->max_entries) :
			   fmt("-/%u", a->max_entries);
	c[L_SIZE] = fmt("%s", sz);
	c[L_FLAGS] = fmt("%s", flags_str(a->map_flags, fl, sizeof(fl)));
	c[L_VIA] = fmt("%s", mod ? origin_str(a) : "-");
	c[L_CREATOR] = mod ? fmt("%u/%u (%s)", m->creator_pid, m->creator_uid, a->creator_comm) :
			     fmt("-");
	c[L_ADDR] = fmt("%s", addr);
	c[L_MAPS] = mod ? fmt("%" PRIu64, (uint64_t)m->mapped_vmas) : fmt("-");
	c[L_PROGS] = progs_str(a);
	for (int i = 0; i < L_COLS; i++) {
		if (c[i])
			continue;
		for (int k = 0; k < L_COLS; k++)
			free(c[k]);
		free(c);
		return NULL;
	}
	return c;
}

/*
 * Each column as wide as its widest cell (or header), one space between
 * columns, the last one unpadded: no value the kernel can give (20-digit
 * counters, 4 GiB arenas, 57-bit addresses, any number of programs) pushes
 * the next column out of line.
 */
static void print_table(char ***rows, size_t n)
{
	size_t w[L_COLS];

	for (int c = 0; c < L_COLS; c++) {
		w[c] = text_width(list_header[c]);
		for (size_t r = 0; r < n; r++)
			if (text_width(rows[r][c]) > w[c])
				w[c] = text_width(rows[r][c]);
	}
	for (size_t r = 0; r <= n; r++) {
		for (int c = 0; c < L_COLS; c++) {
			const char *cell = r ? rows[r - 1][c] : list_header[c];

			if (c == L_COLS - 1)
				printf("%s\n", cell);
			else
				printf("%s%*s", cell, (int)(w[c] - text_width(cell) + 1), "");
		}
	}
}

static int cmd_list(void)
{
	uint32_t *ids;
	size_t n, nrows = 0;
	int err = q_arena_ids(&ids, &n), mod_err = 0, ret = 0;
	struct q_arena *a;
	char ***rows;

	if (err)
		return fail(err, "listing maps (BPF_MAP_GET_NEXT_ID)");
	a = calloc(1, sizeof(*a));
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!a || !rows) {
		free(a);
		free(rows);
		free(ids);
		return fail(-ENOMEM, "list");
	}
	q_dev();
	if (opt_json)
		json_arr_open(NULL);
	/* One pass for both forms: the JSON lists exactly the arenas the table would. */
	for (size_t i = 0; i < n; i++) {
		err = q_arena(ids[i], a, true);
		if (err == -ENOENT || err == -EINVAL)
			continue;	/* freed meanwhile (and the id maybe reused) */
		if (err) {
			ret = fail(err, "reading an arena (BPF_OBJ_GET_INFO_BY_FD)");
			break;
		}
		if (!a->have_mod && !mod_err)
			mod_err = a->mod_err;
		if (opt_json) {
			json_obj_open(NULL);
			json_arena(a, false);
			json_obj_close();
		} else if (!(rows[nrows++] = list_row(a))) {
			nrows--;
			ret = fail(-ENOMEM, "list");
			q_arena_release(a);
			break;
		}
		q_arena_release(a);
	}
	if (opt_json) {
		json_arr_close();
		json_end();
	} else {
		print_table(rows, nrows);
		if (mod_err)
			printf("# '-': module-only column (%s)\n",
			       q_dev() < 0 ? q_dev_reason() : strerror(-mod_err));
	}
	for (size_t r = 0; r < nrows; r++) {
		for (int c = 0; c < L_COLS; c++)
			free(rows[r][c]);
		free(rows[r]);
	}
	free(rows);
	free(a);
	free(ids);
	return ret;
}

static void put_arena(struct q_arena *a)
{
	q_arena_release(a);
	free(a);
}

static int get_arena(const char *arg, struct q_arena **out, bool need_mod)
{
	struct q_arena *a;
	uint32_t id;
	int err;

	if (parse_id(arg, &id))
		return 2;
	a = malloc(sizeof(*a));
	if (!a)
		return fail(-ENOMEM, "show");
	err = q_arena(id, a, true);
	if (err == -EINVAL) {
		fprintf(stderr, "bpf-arena: map %u is not an arena\n", id);
		put_arena(a);
		return 1;
	}
	if (err) {
		char what[48];

		snprintf(what, sizeof(what), "map %u (BPF_MAP_GET_FD_BY_ID)", id);
		put_arena(a);
		return fail(err, what);
	}
	if (need_mod && !a->have_mod) {
		int dev = q_dev();

		if (dev < 0)
			fprintf(stderr, "bpf-arena: this needs the module: %s\n", q_dev_reason());
		else
			fail(a->mod_err, "BPF_ARENA_IOC_INSPECT");
		put_arena(a);
		return 1;
	}
	*out = a;
	return 0;
}

static int cmd_show(const char *arg)
{
	struct q_arena *a;
	const struct bpf_arena_inspect *m;
	char fl[64], sz[32], *progs;
	int ret = get_arena(arg, &a, false);

	if (ret)
		return ret;
	m = &a->mod;
	if (opt_json) {
		json_obj_open(NULL);
		json_arena(a, true);
		json_obj_close();
		json_end();
		put_arena(a);
		return 0;
	}
	progs = progs_str(a);
	if (!progs) {
		put_arena(a);
		return fail(-ENOMEM, "show");
	}
	size_str((uint64_t)a->max_entries * PG, sz, sizeof(sz));
	printf("arena %u  name %s\n", a->id, a->name[0] ? a->name : "-");
	printf("  size          %u pages (%s), flags 0x%x (%s), map_extra 0x%" PRIx64 "\n",
	       a->max_entries, sz, a->map_flags, flags_str(a->map_flags, fl, sizeof(fl)),
	       (uint64_t)a->map_extra);
	printf("  programs      %s\n", progs);
	free(progs);
	for (uint32_t i = 0; i < a->nprogs; i++)
		printf("                %u %s (%s)\n", a->progs[i].id,
		       a->progs[i].name[0] ? a->progs[i].name : "-",
		       prog_type_str(a->progs[i].type));
	/* What JSON's user_vm_start/user_vm_end say, module or not. */
	if (a->have_range && a->range_start)
		printf("  user range    0x%" PRIx64 "-0x%" PRIx64 "\n", a->range_start, a->range_end);
	else if (a->have_range)
		printf("  user range    not fixed yet (no mmap, no map_extra)\n");
	if (!a->have_mod) {
		printf("  (module-only information unavailable: %s)\n",
		       q_dev() < 0 ? q_dev_reason() : strerror(-a->mod_err));
		put_arena(a);
		return 0;
	}
	printf("  created by    %s, pid %u uid %u (%s)%s\n",
	       m->origin == BPF_ARENA_INSPECT_ORIGIN_DEV ? "/dev/bpf_arena" : "bpf(BPF_MAP_CREATE)",
	       m->creator_pid, m->creator_uid, a->creator_comm,
	       m->creator_pid ? "" : " (process gone or in another pid namespace)");
	printf("  frozen        %s\n", m->frozen ? "yes" : "no");
	printf("  pages now     %" PRIu64 " allocated, %" PRIu64 " reserved\n",
	       (uint64_t)m->pages, (uint64_t)m->pages_reserved);
	printf("  allocated     bpf %" PRIu64 ", user fault %" PRIu64 ", ioctl %" PRIu64
	       ", prefault %" PRIu64 " (pages, since creation)\n",
	       (uint64_t)m->alloc_bpf, (uint64_t)m->alloc_fault, (uint64_t)m->alloc_ioctl,
	       (uint64_t)m->alloc_prefault);
	printf("  freed         %" PRIu64 " (bpf %" PRIu64 ", ioctl %" PRIu64 ")\n",
	       (uint64_t)m->freed, (uint64_t)m->free_bpf, (uint64_t)m->free_ioctl);
	printf("  user faults   %" PRIu64 " (%" PRIu64 " answered SIGSEGV)\n",
	       (uint64_t)m->user_faults, (uint64_t)m->user_faults_segv);
	printf("  BPF fixups    %" PRIu64 " (faulting arena accesses: load 0, store skipped)\n",
	       (uint64_t)m->fixups);
	if (m->memcg_id)
		printf("  memcg         %s (cgroup id %" PRIu64 ")\n",
		       q_cgroup_path(m->memcg_id) ? q_cgroup_path(m->memcg_id) :
		       "(no such directory under /sys/fs/cgroup)",
		       (uint64_t)m->memcg_id);
	else
		printf("  memcg         none\n");
	printf("  mappings      %" PRIu64 "\n", (uint64_t)m->mapped_vmas);
	for (uint32_t i = 0; i < a->nmappings; i++)
		printf("                pid %d (%s) %s 0x%" PRIx64 "-0x%" PRIx64 "\n",
		       a->mappings[i].pid, a->mappings[i].comm, a->mappings[i].perms,
		       a->mappings[i].start, a->mappings[i].end);
	put_arena(a);
	return 0;
}

static const char *state_name(uint8_t s)
{
	return s == BPF_ARENA_PAGE_ALLOCATED ? "allocated" :
	       s == BPF_ARENA_PAGE_RESERVED ? "reserved" : "free";
}

static int cmd_pages(const char *arg)
{
	static const char sym[] = { '.', '#', 'r' };
	uint64_t total = 0, counts[3] = { 0 }, start;
	struct q_arena *a;
	uint8_t *st;
	int ret = get_arena(arg, &a, true);

	if (ret)
		return ret;
	start = a->mod.user_vm_start;
	{
		uint32_t cnt = 0;	/* the size first: the range may differ from max_entries */
		int err = q_pages(a->id, 0, NULL, &cnt, &total);

		if (err) {
			put_arena(a);
			return fail(err, "BPF_ARENA_IOC_INSPECT_PAGES");
		}
	}
	st = calloc(total ? total : 1, 1);
	if (!st) {
		put_arena(a);
		return fail(-ENOMEM, "pages");
	}
	for (uint64_t done = 0; done < total;) {
		uint32_t cnt = total - done > UINT32_MAX ? UINT32_MAX : (uint32_t)(total - done);
		uint64_t t;
		int err = q_pages(a->id, done, st + done, &cnt, &t);

		if (err) {
			free(st);
			put_arena(a);
			return fail(err, "BPF_ARENA_IOC_INSPECT_PAGES");
		}
		done += cnt;
		if (!cnt)
			break;
	}
	for (uint64_t i = 0; i < total; i++)
		counts[st[i] < 3 ? st[i] : 0]++;
	if (opt_json) {
		json_obj_open(NULL);
		json_u64("id", a->id);
		json_hex("user_vm_start", start);
		json_u64("total", total);
		json_u64("allocated", counts[1]);
		json_u64("reserved", counts[2]);
		json_u64("free", counts[0]);
		json_arr_open("ranges");
	} else {
		printf("arena %u: %" PRIu64 " pages from 0x%" PRIx64 ": %" PRIu64 " allocated, %"
		       PRIu64 " reserved, %" PRIu64 " free\n", a->id, total, start, counts[1],
		       counts[2], counts[0]);
		if (!total)
			printf("  (user range not fixed yet: no page can be allocated)\n");
	}
	/* Runs of non-free pages. */
	for (uint64_t i = 0; i < total;) {
		uint64_t j = i;

		while (j < total && st[j] == st[i])
			j++;
		if (st[i] != BPF_ARENA_PAGE_FREE) {
			if (opt_json) {
				json_obj_open(NULL);
				json_hex("start", start + i * PG);
				json_u64("first_page", i);
				json_u64("pages", j - i);
				json_str("state", state_name(st[i]));
				json_hex("end", start + j * PG);
				json_u64("last_page", j - 1);
				json_obj_close();
			} else {
				printf("  0x%" PRIx64 "-0x%" PRIx64 "  pages %" PRIu64 "-%" PRIu64
				       "  %" PRIu64 " %s\n", start + i * PG, start + j * PG, i, j - 1,
				       j - i, state_name(st[i]));
			}
		}
		i = j;
	}
	if (opt_json) {
		json_arr_close();
		json_obj_close();
		json_end();
	} else if (total) {
		/* The map: 64 pages a line; '*' stands for repeated all-free lines. */
		bool starred = false;

		printf("map ('#' allocated, 'r' reserved, '.' free; 64 pages a line):\n");
		for (uint64_t i = 0; i < total; i += 64) {
			uint64_t end = i + 64 < total ? i + 64 : total;
			bool empty = true;

			for (uint64_t k = i; k < end; k++)
				empty &= st[k] == BPF_ARENA_PAGE_FREE;
			if (empty && i && i + 64 < total) {
				if (!starred)
					printf("*\n");
				starred = true;
				continue;
			}
			starred = false;
			printf("0x%" PRIx64 " ", start + i * PG);
			for (uint64_t k = i; k < end; k++)
				putchar(sym[st[k] < 3 ? st[k] : 0]);
			putchar('\n');
		}
	}
	free(st);
	put_arena(a);
	return 0;
}

static void hexdump_line(uint64_t addr, const uint8_t *p, size_t n)
{
	printf("%016" PRIx64 "  ", addr);
	for (size_t i = 0; i < 16; i++) {
		if (i < n)
			printf("%02x ", p[i]);
		else
			printf("   ");
		if (i == 7)
			putchar(' ');
	}
	printf(" |");
	for (size_t i = 0; i < n; i++)
		putchar(p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '.');
	printf("|\n");
}

static int cmd_dump(const char *id_arg, const char *addr_arg, const char *len_arg)
{
	uint64_t addr, len, end, start, rend;
	struct q_arena *a;
	uint8_t *buf;
	int ret;

	if (parse_u64(addr_arg + (addr_arg[0] == '+'), &addr) || parse_u64(len_arg, &len) ||
	    !len) {
		fprintf(stderr, "bpf-arena: dump ID ADDR LEN: bad ADDR or LEN\n");
		return 2;
	}
	ret = get_arena(id_arg, &a, true);
	if (ret)
		return ret;
	start = a->mod.user_vm_start;
	rend = a->mod.user_vm_end;
	if (!start) {
		fprintf(stderr, "bpf-arena: arena %u has no user range yet (never mapped): nothing to dump\n",
			a->id);
		put_arena(a);
		return 1;
	}
	if (addr_arg[0] == '+')
		addr += start;
	if (addr < start || addr >= rend || len > rend - addr) {
		fprintf(stderr, "bpf-arena: 0x%" PRIx64 "+%" PRIu64
			" is outside arena %u's range 0x%" PRIx64 "-0x%" PRIx64 "\n",
			addr, len, a->id, start, rend);
		put_arena(a);
		return 1;
	}
	buf = malloc(DUMP_CHUNK_PAGES * PG);
	if (!buf) {
		put_arena(a);
		return fail(-ENOMEM, "dump");
	}
	if (opt_json) {
		json_obj_open(NULL);
		json_u64("id", a->id);
		json_hex("addr", addr);
		json_u64("len", len);
		json_arr_open("pages");
	}
	end = addr + len;
	bool gap = false;

	for (uint64_t cur = addr; cur < end;) {
		/* Page-aligned chunks of at most DUMP_CHUNK_PAGES pages. */
		uint64_t cend = (cur & ~(PG - 1)) + DUMP_CHUNK_PAGES * PG;
		uint64_t present;
		int err;

		if (cend > end)
			cend = end;
		err = q_dump(a->id, cur, buf, (uint32_t)(cend - cur), &present);
		if (err) {
			free(buf);
			put_arena(a);
			return fail(err, "BPF_ARENA_IOC_INSPECT_DUMP");
		}
		for (uint64_t p = cur, i = 0; p < cend; i++) {
			uint64_t pend = (p & ~(PG - 1)) + PG;
			const uint8_t *d = buf + (p - cur);
			bool here = present >> i & 1;

			if (pend > cend)
				pend = cend;
			if (opt_json) {
				json_obj_open(NULL);
				json_hex("addr", p);
				json_u64("len", pend - p);
				json_bool("allocated", here);
				if (here) {
					char *hex = malloc((pend - p) * 2 + 1);

					if (!hex) {
						free(buf);
						put_arena(a);
						return fail(-ENOMEM, "dump");
					}
					for (uint64_t k = 0; k < pend - p; k++)
						sprintf(hex + 2 * k, "%02x", d[k]);
					json_str("hex", hex);
					free(hex);
				} else {
					json_null("hex");	/* every element has the same keys */
				}
				json_obj_close();
			} else if (!here) {
				if (!gap)
					printf("%016" PRIx64 "  -- unallocated page(s) from here: read as zero, nothing allocated --\n",
					       p);
				gap = true;
			} else {
				gap = false;
				for (uint64_t q = p; q < pend; q += 16)
					hexdump_line(q, d + (q - p), pend - q < 16 ? pend - q : 16);
			}
			p = pend;
		}
		cur = cend;
	}
	if (opt_json) {
		json_arr_close();
		json_obj_close();
		json_end();
	} else {
		printf("%016" PRIx64 "\n", end);
	}
	free(buf);
	put_arena(a);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bpf-arena [OPTIONS] list\n"
		"       bpf-arena [OPTIONS] show ID\n"
		"       bpf-arena [OPTIONS] pages ID\n"
		"       bpf-arena [OPTIONS] dump ID ADDR LEN   (ADDR: user address, or +OFFSET)\n"
		"Options: -j|--json  -p|--pretty (JSON, indented)  -h|--help  -V|--version\n"
		"Needs CAP_SYS_ADMIN (as bpftool map list). Columns shown as '-' (null in JSON)\n"
		"need the bpf_arena module's /dev/bpf_arena: creator, origin, pages, user\n"
		"mappings, counters; pages and dump need it too.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	bool pretty = false;
	const char *cmd;
	int c;

	while ((c = getopt_long(argc, argv, "jphV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pretty = true;
			/* fall through */
		case 'j':
			opt_json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("bpf-arena %s\n", BPF_ARENA_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	json_init(stdout, pretty);
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return 2;
	}
	cmd = argv[0];
	if (!strcmp(cmd, "list") && argc == 1)
		return cmd_list();
	if (!strcmp(cmd, "show") && argc == 2)
		return cmd_show(argv[1]);
	if (!strcmp(cmd, "pages") && argc == 2)
		return cmd_pages(argv[1]);
	if (!strcmp(cmd, "dump") && argc == 4)
		return cmd_dump(argv[1], argv[2], argv[3]);
	usage(stderr);
	return 2;
}

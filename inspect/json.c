// SPDX-License-Identifier: GPL-2.0
#include "json.h"

#include <inttypes.h>

#define MAX_DEPTH 16

static FILE *json_out;
static bool json_pretty;
static int depth;
static bool need_comma[MAX_DEPTH];

void json_init(FILE *out, bool pretty)
{
	json_out = out;
	json_pretty = pretty;
	depth = 0;
	need_comma[0] = false;
}

static void put_escaped(const char *s)
{
	fputc('"', json_out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		/*
		 * Bytes >= 0x80 pass through: strings are UTF-8 (query.c makes
		 * them so), and \\u00XX per byte would name other characters.
		 */
		if (c == '"' || c == '\\')
			fprintf(json_out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(json_out, "\\u%04x", c);
		else
			fputc(c, json_out);
	}
	fputc('"', json_out);
}

/* Separator, indentation and key of the next value. */
static void next(const char *key)
{
	if (need_comma[depth])
		fputc(',', json_out);
	need_comma[depth] = true;
	if (json_pretty && depth) {
		fputc('\n', json_out);
		for (int i = 0; i < depth; i++)
			fputs("    ", json_out);
	}
	if (key) {
		put_escaped(key);
		fputs(json_pretty ? ": " : ":", json_out);
	}
}

static void open_(const char *key, char c)
{
	next(key);
	fputc(c, json_out);
	if (depth + 1 < MAX_DEPTH)
		depth++;
	need_comma[depth] = false;
}

static void close_(char c)
{
	bool had = need_comma[depth];

	if (depth)
		depth--;
	if (json_pretty && had) {
		fputc('\n', json_out);
		for (int i = 0; i < depth; i++)
			fputs("    ", json_out);
	}
	fputc(c, json_out);
}

void json_obj_open(const char *key) { open_(key, '{'); }
void json_obj_close(void) { close_('}'); }
void json_arr_open(const char *key) { open_(key, '['); }
void json_arr_close(void) { close_(']'); }

void json_str(const char *key, const char *val)
{
	next(key);
	put_escaped(val);
}

void json_u64(const char *key, uint64_t val)
{
	next(key);
	fprintf(json_out, "%" PRIu64, val);
}

void json_hex(const char *key, uint64_t val)
{
	next(key);
	fprintf(json_out, "\"0x%" PRIx64 "\"", val);
}

void json_bool(const char *key, bool val)
{
	next(key);
	fputs(val ? "true" : "false", json_out);
}

void json_null(const char *key)
{
	next(key);
	fputs("null", json_out);
}

void json_end(void)
{
	fputc('\n', json_out);
}

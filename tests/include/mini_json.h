/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON reader for tests that check a tool's --json output: parses a
 * whole document into a tree (strict RFC 8259 syntax; numbers kept as
 * unsigned 64-bit integers when they are such, which is what the tools
 * print).  Header-only, static functions: include it in one test.
 */
#ifndef MINI_JSON_H
#define MINI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum mj_type { MJ_NULL, MJ_BOOL, MJ_NUM, MJ_STR, MJ_ARR, MJ_OBJ };

struct mj {
	enum mj_type t;
	bool b;
	bool u64_ok;		/* MJ_NUM: a non-negative integer that fits u64 */
	uint64_t u64;
	char *str;		/* MJ_STR, UTF-8 */
	size_t n;		/* MJ_ARR/MJ_OBJ: items (and keys) */
	char **keys;
	struct mj **items;
};

struct mj_parser {
	const char *p;
	const char *err;	/* first error */
	int depth;
};

static void mj_free(struct mj *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		if (v->keys)
			free(v->keys[i]);
		mj_free(v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->str);
	free(v);
}

static void mj_ws(struct mj_parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static struct mj *mj_fail(struct mj_parser *ps, const char *why, struct mj *v)
{
	if (!ps->err)
		ps->err = why;
	mj_free(v);
	return NULL;
}

static int mj_hex4(const char *s)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t mj_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at ps->p (on its opening quote); malloc'd, NULL on error. */
static char *mj_string(struct mj_parser *ps)
{
	const char *s = ps->p + 1;
	char *out = malloc(strlen(s) + 1), *o = out;	/* escapes only shrink */

	if (!out)
		return NULL;
	for (;;) {
		unsigned char c = (unsigned char)*s++;

		if (c == '"')
			break;
		if (!c || c < 0x20) {
			ps->err = ps->err ? ps->err : "unterminated string or raw control character";
			free(out);
			return NULL;
		}
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		c = (unsigned char)*s++;
		switch (c) {
		case '"': case '\\': case '/': *o++ = (char)c; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			int hi = mj_hex4(s), lo;
			uint32_t cp;

			if (hi < 0)
				goto bad;
			s += 4;
			cp = (uint32_t)hi;
			if (hi >= 0xd800 && hi <= 0xdbff) {
				if (s[0] != '\\' || s[1] != 'u' || (lo = mj_hex4(s + 2)) < 0xdc00 ||
				    lo > 0xdfff)
					goto bad;
				s += 6;
				cp = 0x10000 + (((uint32_t)hi - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
			} else if (hi >= 0xdc00 && hi <= 0xdfff) {
				goto bad;
			}
			o += mj_utf8(o, cp);
			break;
		}
		default:
			goto bad;
		}
	}
	*o = 0;
	ps->p = s;
	return out;
bad:
	ps->err = ps->err ? ps->err : "bad escape in string";
	free(out);
	return NULL;
}

static bool mj_push(struct mj *v, char *key, struct mj *item)
{
	struct mj **items = realloc(v->items, (v->n + 1) * sizeof(*items));
	char **keys;

	if (!items)
		return false;
	v->items = items;
	if (v->t == MJ_OBJ) {
		keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));
		if (!keys)
			return false;
		v->keys = keys;
		v->keys[v->n] = key;
	}
	v->items[v->n++] = item;
	return true;
}

static struct mj *mj_value(struct mj_parser *ps)
{
	struct mj *v = calloc(1, sizeof(*v));

	if (!v)
		return mj_fail(ps, "out of memory", NULL);
	mj_ws(ps);
	if (++ps->depth > 64)
		return mj_fail(ps, "nested too deep", v);
	if (*ps->p == '{' || *ps->p == '[') {
		bool obj = *ps->p == '{';
		char close = obj ? '}' : ']';

		v->t = obj ? MJ_OBJ : MJ_ARR;
		ps->p++;
		mj_ws(ps);
		if (*ps->p == close) {
			ps->p++;
		} else {
			for (;;) {
				char *key = NULL;
				struct mj *item;

				mj_ws(ps);
				if (obj) {
					if (*ps->p != '"')
						return mj_fail(ps, "object key expected", v);
					key = mj_string(ps);
					if (!key)
						return mj_fail(ps, "bad key", v);
					for (size_t i = 0; i < v->n; i++)
						if (!strcmp(v->keys[i], key)) {
							free(key);
							return mj_fail(ps, "duplicate key", v);
						}
					mj_ws(ps);
					if (*ps->p != ':') {
						free(key);
						return mj_fail(ps, "':' expected", v);
					}
					ps->p++;
				}
				item = mj_value(ps);
				if (!item || !mj_push(v, key, item)) {
					free(key);
					mj_free(item);
					return mj_fail(ps, "bad value", v);
				}
				mj_ws(ps);
				if (*ps->p == ',') {
					ps->p++;
					continue;
				}
				if (*ps->p != close)
					return mj_fail(ps, "',' or closing bracket expected", v);
				ps->p++;
				break;
			}
		}
	} else if (*ps->p == '"') {
		v->t = MJ_STR;
		v->str = mj_string(ps);
		if (!v->str)
			return mj_fail(ps, "bad string", v);
	} else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
		v->t = MJ_BOOL;
		v->b = *ps->p == 't';
		ps->p += v->b ? 4 : 5;
	} else if (!strncmp(ps->p, "null", 4)) {
		v->t = MJ_NULL;
		ps->p += 4;
	} else if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
		const char *s = ps->p;
		bool neg = *s == '-', frac = false, over = false;
		uint64_t n = 0;

		v->t = MJ_NUM;
		s += neg;
		if (*s < '0' || *s > '9' || (*s == '0' && s[1] >= '0' && s[1] <= '9'))
			return mj_fail(ps, "bad number", v);
		for (; *s >= '0' && *s <= '9'; s++) {
			over |= n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10;
			n = n * 10 + (uint64_t)(*s - '0');
		}
		if (*s == '.' || *s == 'e' || *s == 'E') {
			frac = true;
			s += *s == '.';
			while ((*s >= '0' && *s <= '9') || *s == 'e' || *s == 'E' || *s == '+' ||
			       *s == '-')
				s++;
		}
		v->u64 = n;
		v->u64_ok = !neg && !frac && !over;
		ps->p = s;
	} else {
		return mj_fail(ps, "value expected", v);
	}
	ps->depth--;
	return v;
}

/* The document in s (nothing but white space may follow); NULL and *err on error. */
static struct mj *mj_parse(const char *s, const char **err)
{
	struct mj_parser ps = { .p = s };
	struct mj *v = mj_value(&ps);

	if (v) {
		mj_ws(&ps);
		if (*ps.p)
			v = mj_fail(&ps, "text after the document", v);
	}
	if (err)
		*err = ps.err;
	return v;
}

/* The member key of object o, NULL if o is not an object or has none. */
static const struct mj *mj_get(const struct mj *o, const char *key)
{
	if (!o || o->t != MJ_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

#endif

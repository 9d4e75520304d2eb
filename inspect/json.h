/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small streaming JSON writer (bpftool's --json shape: one document on
 * stdout; --pretty indents it).  Commas and nesting are tracked here so
 * callers only say what comes next.
 */
#ifndef BPF_ARENA_INSPECT_JSON_H
#define BPF_ARENA_INSPECT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

void json_init(FILE *out, bool pretty);
void json_obj_open(const char *key);	/* key NULL: inside an array / top level */
void json_obj_close(void);
void json_arr_open(const char *key);
void json_arr_close(void);
void json_str(const char *key, const char *val);	/* val: UTF-8 */
void json_u64(const char *key, uint64_t val);
void json_hex(const char *key, uint64_t val);	/* a string "0x..." (addresses) */
void json_bool(const char *key, bool val);
void json_null(const char *key);
void json_end(void);	/* final newline */

#endif

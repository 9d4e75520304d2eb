/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of arena_reserve_test.c and arena_kfunc_any_ctx_test.c: embedded
 * BPF objects (tests/progs/progs.mk builds each twice: v3 native casts, asm
 * casts), loading some of their programs with libbpf and
 * bpf_arena_object_prepare(), test runs, and globals.
 */
#ifndef ARENA_KFUNC_UTIL_H
#define ARENA_KFUNC_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_arena_lib.h"
#include "bpf_arena_libbpf.h"

#define EMBED(sym, file)							\
	extern const char sym##_start[], sym##_end[];				\
	__asm__(".pushsection .rodata\n.balign 8\n.global " #sym "_start\n"	\
		#sym "_start:\n.incbin \"" BPF_OBJ_DIR "/" file "\"\n"		\
		".global " #sym "_end\n" #sym "_end:\n.popsection\n")

struct kf_img {
	const char *name;
	const char *start, *end;
};

static int kf_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	fprintf(stderr, "# ");
	return vfprintf(stderr, fmt, args);
}

static void __attribute__((constructor)) kf_init_print(void)
{
	libbpf_set_print(kf_libbpf_print);
}

/* Tunes a loaded object before bpf_object__load(). */
typedef void (*kf_tune_fn)(struct bpf_object *obj, void *arg);

/*
 * Opens img, autoloads only the programs named in the NULL-terminated list
 * (NULL list: all), sets map "arena"'s map_extra, lets tune adjust, prepares
 * the arenas and loads.  *objp is set either way; returns the load's result,
 * with the verifier log in log (if given).
 */
static inline int kf_open_load(const struct kf_img *img, struct bpf_object **objp,
			       const char *const *only, __u64 map_extra, kf_tune_fn tune,
			       void *arg, char *log, size_t log_sz)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = img->name,
		    .kernel_log_buf = log, .kernel_log_size = log ? log_sz : 0,
		    .kernel_log_level = log ? 1 : 0);
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *map;
	int err;

	*objp = NULL;
	obj = bpf_object__open_mem(img->start, (size_t)(img->end - img->start), &oo);
	if (libbpf_get_error(obj))
		return (int)libbpf_get_error(obj);
	*objp = obj;
	if (only) {
		bpf_object__for_each_program(prog, obj) {
			bool me = false;
			unsigned int i;

			for (i = 0; only[i]; i++)
				me |= !strcmp(bpf_program__name(prog), only[i]);
			bpf_program__set_autoload(prog, me);
		}
	}
	map = bpf_object__find_map_by_name(obj, "arena");
	if (!map)
		return -ENOENT;
	if (map_extra && bpf_map__set_map_extra(map, map_extra))
		return -EINVAL;
	if (tune)
		tune(obj, arg);
	err = bpf_arena_object_prepare(obj);
	if (err)
		return err;
	return bpf_object__load(obj);
}

static inline int kf_prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	return p ? bpf_program__fd(p) : -ENOENT;
}

/*
 * Test-runs program name once: SEC("syscall") with no context, SEC("tc")
 * and SEC("xdp") with a 64-byte packet, fentry with none.  The program's
 * return value in *retval; 0 or -errno.
 */
static inline int kf_run(struct bpf_object *obj, const char *name, __u32 *retval)
{
	static char pkt[64];
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);
	LIBBPF_OPTS(bpf_test_run_opts, o);
	enum bpf_prog_type t;

	if (!p)
		return -ENOENT;
	t = bpf_program__type(p);
	if (t == BPF_PROG_TYPE_SCHED_CLS || t == BPF_PROG_TYPE_XDP) {
		o.data_in = pkt;
		o.data_size_in = sizeof(pkt);
	}
	if (bpf_prog_test_run_opts(bpf_program__fd(p), &o))
		return -errno;
	*retval = o.retval;
	return 0;
}

/* Reads (write false) or writes global var of .bss/.data; 0 or -errno. */
static inline int kf_global(struct bpf_object *obj, const char *var, void *val, size_t size,
			    bool write)
{
	static const char *const secs[] = { ".bss", ".data" };
	struct btf *btf = bpf_object__btf(obj);
	static char buf[65536];
	unsigned int s;

	if (!btf)
		return -ENOENT;
	for (s = 0; s < 2; s++) {
		int id = btf__find_by_name_kind(btf, secs[s], BTF_KIND_DATASEC);
		struct bpf_map *map, *found = NULL;
		const struct btf_var_secinfo *vs;
		const struct btf_type *t;
		__u32 key = 0;
		int i;

		if (id < 0)
			continue;
		t = btf__type_by_id(btf, (__u32)id);
		bpf_object__for_each_map(map, obj) {
			const char *mn = bpf_map__name(map);
			size_t n = strlen(mn);

			if (bpf_map__is_internal(map) && n >= strlen(secs[s]) &&
			    !strcmp(mn + n - strlen(secs[s]), secs[s]))
				found = map;
		}
		if (!found || bpf_map__value_size(found) > sizeof(buf))
			return -ENOENT;
		vs = btf_var_secinfos(t);
		for (i = 0; i < btf_vlen(t); i++, vs++) {
			const struct btf_type *v = btf__type_by_id(btf, vs->type);

			if (strcmp(btf__name_by_offset(btf, v->name_off), var))
				continue;
			if (vs->size != size)
				return -EINVAL;
			if (bpf_map_lookup_elem(bpf_map__fd(found), &key, buf))
				return -errno;
			if (!write) {
				memcpy(val, buf + vs->offset, size);
				return 0;
			}
			memcpy(buf + vs->offset, val, size);
			return bpf_map_update_elem(bpf_map__fd(found), &key, buf, 0) ? -errno : 0;
		}
	}
	return -ENOENT;
}

#endif /* ARENA_KFUNC_UTIL_H */

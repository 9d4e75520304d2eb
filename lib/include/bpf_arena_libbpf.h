/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libbpfarena with libbpf: load BPF objects that use an arena with a libbpf
 * that does not know BPF_MAP_TYPE_ARENA (Debian 12's libbpf 1.1; arena
 * support came with libbpf 1.4), on kernels with native arena and on 6.1
 * with the bpf_arena module.  Needs linking with -lbpf as well.
 *
 *	struct bpf_object *obj = bpf_object__open_file("prog.bpf.o", NULL);
 *	err = bpf_arena_object_prepare(obj);	// creates and maps the arenas
 *	err = err ?: bpf_object__load(obj);
 *	char *base = bpf_arena_object_base(bpf_object__find_map_by_name(obj, "arena"));
 *	...
 *	bpf_arena_object_close(obj);		// bpf_object__close() + unmapping
 *
 * Same conventions as bpf_arena_lib.h (negative errno, errno set, one
 * "libbpfarena: " message per failure).  The functions are thread-safe.
 */
#ifndef BPF_ARENA_LIBBPF_H
#define BPF_ARENA_LIBBPF_H

#include "bpf_arena_lib.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpf_object;	/* libbpf's, <bpf/libbpf.h> */
struct bpf_map;

/*
 * Call between bpf_object__open*() and bpf_object__load().  For every map of
 * obj of type BPF_MAP_TYPE_ARENA (33) that libbpf will create (autocreate
 * set, no fd yet): creates the arena with bpf_arena_create() from the map's
 * definition (max_entries pages, map_flags, map_extra, name), i.e. through
 * the module on 6.1 and natively on 6.9+; maps it at map_extra if set, else
 * where the kernel chooses; and hands the map fd to libbpf with
 * bpf_map__reuse_fd(), so bpf_object__load() uses it and loads programs
 * against it.  An arena map that already has an fd (the caller reused one)
 * is wrapped with bpf_arena_from_map_fd() so the getters work for it too.
 * Calling it again is harmless.  Returns 0 or a negative errno (then no arena
 * of obj is left registered; maps already given an fd keep it until the
 * object is closed).
 *
 * Notes:
 * - libbpf renames a reused map to the kernel's name of it, at most 15
 *   characters: give arena maps names of at most 15 characters, or
 *   bpf_object__find_map_by_name() no longer finds them by the long name.
 * - libbpf 1.1 reads map_extra from a map definition as 32 bits
 *   (__uint(map_extra, ...)); upstream's __ulong(map_extra, 1ull << 44)
 *   needs libbpf >= 1.4 and makes libbpf 1.1 fail at open.  Set a 64-bit
 *   address with bpf_map__set_map_extra() before this call instead.
 * - Arena globals (__arena_global, section ".addr_space.1") need libbpf >=
 *   1.4: libbpf 1.1 fails at open ("bad map relo against 'VAR' in section
 *   '.addr_space.1'", -LIBBPF_ERRNO__RELOC) before this call could help.
 */
int bpf_arena_object_prepare(struct bpf_object *obj);

/*
 * The arena this library created (or wrapped) for map, or NULL (errno
 * ENOENT) if bpf_arena_object_prepare() did not handle map.  Owned by the
 * library until bpf_arena_object_release().
 */
struct bpf_arena *bpf_arena_object_arena(const struct bpf_map *map);

/* bpf_arena_base() of that arena, or NULL (errno ENOENT). */
void *bpf_arena_object_base(const struct bpf_map *map);

/*
 * Destroys (unmaps) the arenas prepared for obj.  Call it before or after
 * bpf_object__close(obj); pointers into the arenas are invalid afterwards.
 * The arena memory itself lives on while any other fd, mapping or loaded
 * program holds it.  Unknown or NULL obj: nothing happens.  errno is
 * preserved.
 */
void bpf_arena_object_release(struct bpf_object *obj);

/* bpf_arena_object_release(obj), then bpf_object__close(obj).  NULL is ignored. */
void bpf_arena_object_close(struct bpf_object *obj);

#ifdef __cplusplus
}
#endif

#endif /* BPF_ARENA_LIBBPF_H */

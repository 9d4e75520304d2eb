// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bpf_arena_object_*(): arenas for libbpf objects, for a libbpf (1.1) that
 * cannot create BPF_MAP_TYPE_ARENA maps itself.  Only libbpf's public API is
 * used: the arena is created and mapped here and given to libbpf with
 * bpf_map__reuse_fd(), as a pinned or shared map would be.  libbpf 1.1 has
 * no per-object user data or close hook, so the arenas are kept in a small
 * registry keyed by the bpf_map pointer.
 */
#include <stdlib.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "bpf_arena_libbpf.h"

struct obj_arena {
	struct obj_arena *next;
	const struct bpf_object *obj;
	const struct bpf_map *map;
	struct bpf_arena *arena;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj_arena *reg_head;

/* Under reg_lock. */
static struct obj_arena *reg_find(const struct bpf_map *map)
{
	struct obj_arena *e;

	for (e = reg_head; e; e = e->next)
		if (e->map == map)
			return e;
	return NULL;
}

/* Under reg_lock: unlinks and destroys every entry of obj (all if stale_map
 * is NULL) or just the entry of stale_map. */
static void reg_drop(const struct bpf_object *obj, const struct bpf_map *stale_map)
{
	struct obj_arena **pp = &reg_head, *e;

	while ((e = *pp)) {
		if ((stale_map && e->map == stale_map) || (!stale_map && e->obj == obj)) {
			*pp = e->next;
			bpf_arena_destroy(e->arena);
			free(e);
		} else {
			pp = &e->next;
		}
	}
}

/* Under reg_lock: registers an arena for map; 0 or -ENOMEM. */
static int reg_add(const struct bpf_object *obj, const struct bpf_map *map,
		   struct bpf_arena *a)
{
	struct obj_arena *e = calloc(1, sizeof(*e));

	if (!e) {
		pr_warn("bpf_arena_object_prepare: out of memory\n");
		return -ENOMEM;
	}
	e->obj = obj;
	e->map = map;
	e->arena = a;
	e->next = reg_head;
	reg_head = e;
	return 0;
}

/* Under reg_lock: creates (or wraps) and registers the arena of one map. */
static int prepare_map(struct bpf_object *obj, struct bpf_map *map)
{
	const char *name = bpf_map__name(map);
	char buf[BA_ERRSTR_LEN];
	struct obj_arena *e;
	struct bpf_arena *a;
	int fd, err;

	e = reg_find(map);
	if (e) {
		if (bpf_map__fd(map) >= 0)
			return 0;	/* prepared before */
		/* A closed object's entry whose bpf_map address was reused. */
		pr_debug("bpf_arena_object_prepare: map '%s': dropping a stale arena\n", name);
		reg_drop(NULL, map);
	}

	fd = bpf_map__fd(map);
	if (fd >= 0) {
		/* The caller reused an fd: wrap it so the getters work. */
		err = bpf_arena_from_map_fd(fd, &a);
		if (err) {
			pr_warn("bpf_arena_object_prepare: map '%s': cannot wrap its fd %d: %s\n",
				name, fd, lbpfa_strerror(err, buf, sizeof(buf)));
			return err;
		}
		err = reg_add(obj, map, a);
		if (err)
			bpf_arena_destroy(a);
		return err;
	}

	if (bpf_map__key_size(map) || bpf_map__value_size(map)) {
		pr_warn("bpf_arena_object_prepare: map '%s': an arena has no key or value "
			"(key size %u, value size %u)\n", name, bpf_map__key_size(map),
			bpf_map__value_size(map));
		return -EINVAL;
	}
	if (name && strlen(name) >= BPF_OBJ_NAME_LEN)
		pr_info("bpf_arena_object_prepare: map '%s': libbpf renames a reused map to "
			"the kernel's name, its first %d characters\n", name, BPF_OBJ_NAME_LEN - 1);

	BPF_ARENA_OPTS(opts,
		.map_flags = bpf_map__map_flags(map),
		.map_extra = bpf_map__map_extra(map),
		.name = name,
	);
	err = bpf_arena_create(bpf_map__max_entries(map), &opts, &a);
	if (err) {
		pr_warn("bpf_arena_object_prepare: map '%s': cannot create the arena: %s\n",
			name, lbpfa_strerror(err, buf, sizeof(buf)));
		return err;
	}
	fd = bpf_arena_map_fd(a);
	err = fd < 0 ? fd : bpf_map__reuse_fd(map, fd);
	if (err) {
		err = err < 0 ? err : -EINVAL;
		pr_warn("bpf_arena_object_prepare: map '%s': bpf_map__reuse_fd(): %s\n",
			name, lbpfa_strerror(err, buf, sizeof(buf)));
		bpf_arena_destroy(a);
		return err;
	}
	err = reg_add(obj, map, a);
	if (err)
		bpf_arena_destroy(a);
	else
		pr_debug("bpf_arena_object_prepare: map '%s': arena of %u pages at %p, fd %d\n",
			 name, bpf_arena_page_cnt(a), bpf_arena_base(a), bpf_map__fd(map));
	return err;
}

BA_API int bpf_arena_object_prepare(struct bpf_object *obj)
{
	struct bpf_map *map;
	int err = 0;

	if (!obj) {
		pr_warn("bpf_arena_object_prepare: obj is NULL\n");
		return lbpfa_err(-EINVAL);
	}
	pthread_mutex_lock(&reg_lock);
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) != (enum bpf_map_type)BPF_ARENA_MAP_TYPE ||
		    !bpf_map__autocreate(map))
			continue;
		err = prepare_map(obj, map);
		if (err)
			break;
	}
	if (err)
		reg_drop(obj, NULL);
	pthread_mutex_unlock(&reg_lock);
	return lbpfa_err(err);
}

BA_API struct bpf_arena *bpf_arena_object_arena(const struct bpf_map *map)
{
	struct bpf_arena *a = NULL;
	struct obj_arena *e;

	pthread_mutex_lock(&reg_lock);
	e = map ? reg_find(map) : NULL;
	if (e)
		a = e->arena;
	pthread_mutex_unlock(&reg_lock);
	if (!a)
		errno = ENOENT;
	return a;
}

BA_API void *bpf_arena_object_base(const struct bpf_map *map)
{
	struct bpf_arena *a = bpf_arena_object_arena(map);

	return a ? bpf_arena_base(a) : NULL;
}

BA_API void bpf_arena_object_release(struct bpf_object *obj)
{
	int saved_errno = errno;

	if (obj) {
		pthread_mutex_lock(&reg_lock);
		reg_drop(obj, NULL);
		pthread_mutex_unlock(&reg_lock);
	}
	errno = saved_errno;
}

BA_API void bpf_arena_object_close(struct bpf_object *obj)
{
	int saved_errno = errno;

	if (!obj)
		return;
	bpf_object__close(obj);
	bpf_arena_object_release(obj);	/* only compares the pointer */
	errno = saved_errno;
}

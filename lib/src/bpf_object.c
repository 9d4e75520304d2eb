// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bpf_arena_object_*(): arenas for libbpf objects, for a libbpf (1.1) that
 * cannot create BPF_MAP_TYPE_ARENA maps itself.  Only libbpf's public API is
 * used: the arena is created and mapped here and given to libbpf with
 * bpf_map__reuse_fd(), as a pinned or shared map would be.  libbpf 1.1 has
 * no per-object user data or close hook, so the arenas are kept in a small
 * registry keyed by the bpf_map pointer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "bpf_arena_libbpf.h"

struct obj_arena {
	struct obj_arena *next;
	const struct bpf_object *obj;
	const struct bpf_map *map;
	struct bpf_arena *arena;	/* NULL: libbpf >= 1.4 maps it; wrapped on first use */
	/*
	 * libbpf's own fd of an arena created here, and the map's id: once
	 * that fd no longer holds this map, the object was closed without
	 * bpf_arena_object_release() (a diagnostic only: the entry is never
	 * found or freed through it).
	 */
	int libbpf_fd;
	__u32 map_id;
	bool warned;
	char name[BPF_OBJ_NAME_LEN];
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
		   struct bpf_arena *a, int libbpf_fd)
{
	struct obj_arena *e = calloc(1, sizeof(*e));
	struct bpf_map_info info;
	const char *name = bpf_map__name(map);

	if (!e) {
		pr_warn("bpf_arena_object_prepare: out of memory\n");
		return -ENOMEM;
	}
	e->obj = obj;
	e->map = map;
	e->arena = a;
	e->libbpf_fd = -1;
	if (libbpf_fd >= 0 && !lbpfa_map_info(libbpf_fd, &info)) {
		e->libbpf_fd = libbpf_fd;
		e->map_id = info.id;
	}
	snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
	e->next = reg_head;
	reg_head = e;
	return 0;
}

/*
 * Under reg_lock: warns once about each arena whose object libbpf has
 * closed or unloaded (its fd is gone or holds another map) without
 * bpf_arena_object_release(): the arena stays mapped until the process
 * exits or the object's pointer is reused.
 */
static void warn_unreleased(void)
{
	struct bpf_map_info info;
	struct obj_arena *e;

	for (e = reg_head; e; e = e->next) {
		if (e->warned || !e->arena || e->libbpf_fd < 0)
			continue;
		if (!lbpfa_map_info(e->libbpf_fd, &info) && info.id == e->map_id)
			continue;
		e->warned = true;
		pr_warn("arena map '%s' (%u pages at %p): its object was closed (or failed "
			"to load) but the arena was not released, so it stays mapped until the "
			"process exits: close objects with bpf_arena_object_close(obj), or call "
			"bpf_arena_object_release(obj) after bpf_object__close(obj)\n", e->name, bpf_arena_page_cnt(e->arena),
			bpf_arena_base(e->arena));
	}
}

/* The same check when the program exits (or unloads the library). */
__attribute__((destructor)) static void warn_unreleased_at_exit(void)
{
	pthread_mutex_lock(&reg_lock);
	warn_unreleased();
	pthread_mutex_unlock(&reg_lock);
}

/*
 * libbpf >= 1.4 creates and mmaps arena maps itself (and copies the arena
 * globals into its mapping).  An arena created here and handed over with
 * bpf_map__reuse_fd() would then be mapped twice, or over.  libbpf 1.1 has
 * libbpf_major_version()/libbpf_minor_version(); a binary built against 1.1
 * may run with 1.4 (same soname, libbpf1 from bookworm-backports).
 */
static bool libbpf_maps_arenas(void)
{
	return libbpf_major_version() > 1 ||
	       (libbpf_major_version() == 1 && libbpf_minor_version() >= 4);
}

/* Whether obj was loaded: libbpf gives loaded programs an fd. */
static bool obj_loaded(const struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		if (bpf_program__fd(prog) >= 0)
			return true;
	return false;
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
	if (e && e->obj == obj && libbpf_maps_arenas())
		return 0;	/* prepared before */
	if (e) {
		if (e->obj == obj && bpf_map__fd(map) >= 0)
			return 0;	/* prepared before */
		/* A closed object's entry whose bpf_map address was reused. */
		warn_unreleased();
		pr_debug("bpf_arena_object_prepare: map '%s': dropping a stale arena\n", name);
		reg_drop(NULL, map);
	}

	fd = bpf_map__fd(map);
	if (libbpf_maps_arenas()) {
		/* libbpf maps it at load; the getters wrap that mapping later. */
		pr_debug("bpf_arena_object_prepare: map '%s': libbpf %s creates and maps "
			 "arenas itself: nothing to prepare\n", name, libbpf_version_string());
		return reg_add(obj, map, NULL, -1);
	}
	if (fd >= 0) {
		/*
		 * The caller reused an fd, or bpf_object__load() ran first and
		 * libbpf 1.1 created the arena without mapping it: wrap it (that
		 * maps it) so the getters work.
		 */
		if (obj_loaded(obj))
			pr_warn("bpf_arena_object_prepare: map '%s': called after "
				"bpf_object__load(): libbpf %s created the arena and did not "
				"map it; mapping it now. Call it between open and load.\n",
				name, libbpf_version_string());
		err = bpf_arena_from_map_fd(fd, &a);
		if (err) {
			pr_warn("bpf_arena_object_prepare: map '%s': cannot wrap its fd %d: %s\n",
				name, fd, lbpfa_strerror(err, buf, sizeof(buf)));
			return err;
		}
		err = reg_add(obj, map, a, -1);
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
	err = reg_add(obj, map, a, bpf_map__fd(map));
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
	warn_unreleased();
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

/*
 * Under reg_lock: explains why map has no arena here.  A loaded arena map
 * that bpf_arena_object_prepare() never saw was created by libbpf: libbpf
 * 1.1 does not map it, so every pointer into it faults in user space.
 */
static void warn_unprepared(const struct bpf_map *map, const char *func)
{
	const char *name = bpf_map__name(map);

	if (bpf_map__type(map) != (enum bpf_map_type)BPF_ARENA_MAP_TYPE) {
		pr_warn("%s: map '%s' is not an arena (type %d)\n", func, name, bpf_map__type(map));
	} else if (bpf_map__fd(map) < 0) {
		pr_warn("%s: arena map '%s' is not prepared and not loaded: call "
			"bpf_arena_object_prepare(obj) between open and load\n", func, name);
	} else if (!libbpf_maps_arenas()) {
		pr_warn("%s: arena map '%s' reached bpf_object__load() unprepared (or was "
			"released): libbpf %s created the arena (fd %d) but cannot map it, so "
			"user space cannot "
			"reach it (pointers into it fault). Call bpf_arena_object_prepare(obj) "
			"between open and load, or wrap the fd with bpf_arena_from_map_fd()\n",
			func, name, libbpf_version_string(), bpf_map__fd(map));
	} else {
		pr_warn("%s: arena map '%s' was not given to bpf_arena_object_prepare() "
			"before load (or was released); libbpf %s mapped it: use "
			"bpf_map__initial_value(), or wrap its fd with bpf_arena_from_map_fd()\n",
			func, name, libbpf_version_string());
	}
}

static struct bpf_arena *object_arena(const struct bpf_map *map, const char *func)
{
	char buf[BA_ERRSTR_LEN];
	struct bpf_arena *a = NULL;
	struct obj_arena *e;
	int err = ENOENT;

	if (!map) {
		pr_warn("%s: map is NULL\n", func);
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&reg_lock);
	e = reg_find(map);
	if (e && !e->arena && bpf_map__fd(map) >= 0) {
		/* libbpf >= 1.4 created and mapped it: borrow that mapping. */
		err = -bpf_arena_from_map_fd(bpf_map__fd(map), &e->arena);
		if (err)
			pr_warn("%s: map '%s': cannot wrap libbpf's arena: %s\n", func,
				bpf_map__name(map), lbpfa_strerror(-err, buf, sizeof(buf)));
	} else if (e && !e->arena) {
		pr_warn("%s: map '%s': not loaded yet (libbpf %s maps the arena at load)\n",
			func, bpf_map__name(map), libbpf_version_string());
	} else if (!e) {
		warn_unprepared(map, func);
	}
	if (e)
		a = e->arena;
	pthread_mutex_unlock(&reg_lock);
	if (!a)
		errno = err;
	return a;
}

BA_API struct bpf_arena *bpf_arena_object_arena(const struct bpf_map *map)
{
	return object_arena(map, "bpf_arena_object_arena");
}

BA_API void *bpf_arena_object_base(const struct bpf_map *map)
{
	struct bpf_arena *a = object_arena(map, "bpf_arena_object_base");

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

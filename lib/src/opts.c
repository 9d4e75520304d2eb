// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Validation of struct bpf_arena_create_opts (libbpf's OPTS rules). */
#include "internal.h"

#define OPTS_HAS(opts, field) \
	((opts)->sz >= offsetof(struct bpf_arena_create_opts, field) + \
		       sizeof((opts)->field))
#define OPTS_GET(opts, field, fallback) \
	((opts) && OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/*
 * opts->sz must cover sz itself; a larger struct (a caller built against a
 * newer header) is accepted only if the fields this library does not know
 * are zero, so that nothing the caller asked for is silently ignored.
 */
static int check_opts(const char *func, const struct bpf_arena_create_opts *opts)
{
	const unsigned char *bytes = (const unsigned char *)opts;
	size_t i;

	if (opts->sz < sizeof(opts->sz)) {
		pr_warn("%s: opts->sz is %zu, smaller than the sz field: "
			"declare the opts with BPF_ARENA_OPTS()\n", func, opts->sz);
		return -EINVAL;
	}
	for (i = sizeof(*opts); i < opts->sz; i++) {
		if (bytes[i]) {
			pr_warn("%s: opts (sz %zu) set fields unknown to this library "
				"(struct of %zu bytes): built against a newer libbpfarena?\n",
				func, opts->sz, sizeof(*opts));
			return -EINVAL;
		}
	}
	return 0;
}

int lbpfa_parse_opts(const char *func, __u32 page_cnt,
		  const struct bpf_arena_create_opts *opts, struct lbpfa_params *p)
{
	const char *name;
	int err;

	memset(p, 0, sizeof(*p));
	if (opts) {
		err = check_opts(func, opts);
		if (err)
			return err;
	}
	p->page_cnt = page_cnt;
	p->map_flags = OPTS_GET(opts, map_flags, 0) | BPF_ARENA_F_MMAPABLE;
	p->map_extra = OPTS_GET(opts, map_extra, 0);
	p->numa_node = -1;
	if (p->map_flags & BPF_F_NUMA_NODE_FLAG)
		p->numa_node = OPTS_GET(opts, numa_node, 0);
	name = OPTS_GET(opts, name, NULL);
	if (name) {
		if (strlen(name) >= sizeof(p->name))
			pr_debug("%s: map name '%s' truncated to %zu characters\n",
				 func, name, sizeof(p->name) - 1);
		strncpy(p->name, name, sizeof(p->name) - 1);
	}
	return 0;
}

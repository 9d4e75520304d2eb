#include <stdio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_arena_libbpf.h"

struct args { __u64 list; };

int main(void)
{
	struct bpf_object *obj = bpf_object__open_file("first.bpf.o", NULL);
	struct args args = {};
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &args, .ctx_size_in = sizeof(args));
	int err = libbpf_get_error(obj);

	err = err ?: bpf_arena_kernel_ready();		/* else says what to install or load */
	err = err ?: bpf_arena_object_prepare(obj);	/* creates and maps the arena */
	err = err ?: bpf_object__load(obj);
	err = err ?: bpf_prog_test_run_opts(bpf_program__fd(
			bpf_object__find_program_by_name(obj, "build")), &run);
	if (err || run.retval)
		return fprintf(stderr, "failed: %d/%u\n", err, run.retval), 1;
	__u64 *p = (__u64 *)args.list;			/* the program's pointer */
	int ok = p[0] == 42 && p[1] == (__u64)p;	/* the value, a pointer to itself */
	printf("%llu %d\n", (unsigned long long)p[0], ok);
	bpf_arena_object_close(obj);
	return !ok;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * prog_sizes OBJ...: loads every program of each BPF object (libbpf, with
 * bpf_arena_object_prepare() for its arenas) and prints one line per
 * program: the object, the program, its instructions in the object, and
 * what the kernel reports of the loaded program: xlated instructions (what
 * `bpftool prog dump xlated` shows), JITed bytes, and the instructions the
 * verifier processed.  Programs that fail to load print "-" for the kernel's
 * numbers.  bench/sizes/run compares the lines of two kernels.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_arena_libbpf.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	(void)fmt;
	(void)args;
	return 0;
}

static void one_object(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct bpf_program *prog;
	struct bpf_object *obj;

	obj = bpf_object__open_file(path, NULL);
	if (libbpf_get_error(obj)) {
		printf("%s - open-failed\n", base);
		return;
	}
	/* Each program alone: one refused program does not hide the others. */
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		struct bpf_program *p;
		struct bpf_object *o;
		int fd;

		o = bpf_object__open_file(path, NULL);
		if (libbpf_get_error(o))
			continue;
		bpf_object__for_each_program(p, o)
			bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
		p = bpf_object__find_program_by_name(o, name);
		if (bpf_arena_object_prepare(o) || bpf_object__load(o) || !p) {
			printf("%s %s %zu - - -\n", base, name, bpf_program__insn_cnt(prog));
			bpf_arena_object_close(o);
			continue;
		}
		fd = bpf_program__fd(p);
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			printf("%s %s %zu - - -\n", base, name, bpf_program__insn_cnt(prog));
		else
			printf("%s %s %zu %u %u %u\n", base, name, bpf_program__insn_cnt(prog),
			       info.xlated_prog_len / 8, info.jited_prog_len, info.verified_insns);
		bpf_arena_object_close(o);
	}
	bpf_object__close(obj);
}

int main(int argc, char **argv)
{
	int i;

	libbpf_set_print(quiet);
	printf("# object program insns xlated_insns jited_bytes verified_insns\n");
	for (i = 1; i < argc; i++)
		one_object(argv[i]);
	return 0;
}

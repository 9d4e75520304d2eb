// SPDX-License-Identifier: GPL-2.0
/*
 * The project demo.  For now: show that bpf_arena.ko is loaded and registered.
 * It grows into "a BPF program builds a hash table in the arena, user space
 * walks it with plain pointers".
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

static int show_file(const char *label, const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("%-12s (missing: %s)\n", label, path);
		return -1;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	printf("%-12s %s\n", label, buf);
	return 0;
}

int main(void)
{
	struct utsname u;
	int err = 0;

	uname(&u);
	printf("bpf-arena demo %s on Linux %s\n", BPF_ARENA_VERSION, u.release);
	err |= show_file("module", "/sys/module/bpf_arena/version");
	err |= show_file("state", "/sys/module/bpf_arena/initstate");
	show_file("taint", "/sys/module/bpf_arena/taint");
	if (err) {
		printf("bpf_arena.ko is not loaded\n");
		return 1;
	}
	printf("bpf_arena.ko is loaded and registered\n");
	return 0;
}

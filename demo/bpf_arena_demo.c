// SPDX-License-Identifier: GPL-2.0
/*
 * The project demo: a BPF arena on a kernel without native arena.
 *
 * It shows that bpf_arena.ko is loaded, creates a BPF_MAP_TYPE_ARENA map with
 * the plain bpf() syscall, builds a linked list in it, and lets a second
 * process map the same arena at the same address and walk the list with plain
 * pointers.  (It grows into "a BPF program builds a hash table in the arena,
 * user space walks it" once BPF programs can use arenas.)
 */
#include <linux/bpf.h>
#include <linux/bpf_arena.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARENA_PAGES 16

struct node {
	struct node *next;
	int value;
};

static int show_file(const char *label, const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("%-8s (missing: %s)\n", label, path);
		return -1;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	printf("%-8s %s\n", label, buf);
	return 0;
}

static int walk(const struct node *head)
{
	int n = 0;

	for (const struct node *p = head; p; p = p->next, n++)
		printf("%s%d", n ? " -> " : "  ", p->value);
	printf("\n");
	return n;
}

int main(void)
{
	size_t len = ARENA_PAGES * 4096;
	union bpf_attr attr;
	struct node *nodes;
	struct utsname u;
	pid_t pid;
	int fd, status, i;

	uname(&u);
	printf("bpf-arena demo %s on Linux %s\n", BPF_ARENA_VERSION, u.release);
	if (show_file("module", "/sys/module/bpf_arena/version") ||
	    show_file("state", "/sys/module/bpf_arena/initstate")) {
		printf("bpf_arena.ko is not loaded\n");
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_ARENA_MAP_TYPE;
	attr.max_entries = ARENA_PAGES;
	attr.map_flags = BPF_ARENA_F_MMAPABLE;
	strcpy(attr.map_name, "demo_arena");
	fd = syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd < 0) {
		perror("BPF_MAP_CREATE(BPF_MAP_TYPE_ARENA)");
		return 1;
	}
	nodes = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (nodes == MAP_FAILED) {
		perror("mmap of the arena");
		return 1;
	}
	printf("arena    map fd %d, %d pages at %p\n", fd, ARENA_PAGES, (void *)nodes);

	/* A list spread over several pages: each one appears on first touch. */
	for (i = 0; i < 5; i++) {
		struct node *n = (struct node *)((char *)nodes + i * 3 * 4096);

		n->value = (i + 1) * 10;
		n->next = i < 4 ? (struct node *)((char *)nodes + (i + 1) * 3 * 4096) : NULL;
	}
	printf("parent   built the list:\n");
	walk(nodes);

	pid = fork();
	if (pid == 0) {
		/* fork does not copy arena mappings: map it again, same address. */
		struct node *mine = mmap(nodes, len, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_FIXED, fd, 0);

		if (mine != nodes)
			_exit(1);
		printf("child    mapped the arena at %p and walks the same pointers:\n",
		       (void *)mine);
		_exit(walk(mine) == 5 ? 0 : 2);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("the child could not walk the list\n");
		return 1;
	}
	printf("ok: bpf_arena.ko is loaded and BPF_MAP_TYPE_ARENA works on this kernel\n");
	munmap(nodes, len);
	close(fd);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Smoke test of an installed bpf-arena (make check-dkms): built in the guest
 * against the INSTALLED libbpfarena with
 *   cc smoke.c $(pkg-config --cflags --libs libbpfarena)
 * Creates an arena through /dev/bpf_arena (works for any user the udev rule
 * lets open the device), faults a page in from user space, allocates one with
 * the ALLOC_PAGES ioctl and checks the counters; as root it also creates an
 * arena with the bpf() syscall (the path BPF programs use).
 * Prints "smoke: PASS" and exits 0, or "smoke: FAIL ..." and exits 1.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf_arena_lib.h>

#define PAGE 4096

static int fails;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("smoke: ok   " __VA_ARGS__); printf("\n");	\
	} else {							\
		printf("smoke: FAIL " __VA_ARGS__); printf("\n");	\
		fails++;						\
	}								\
} while (0)

static void dev_arena(void)
{
	struct bpf_arena_inspect st = { 0 };
	struct bpf_arena *a = NULL;
	void *page = NULL;
	char *base;
	int err;

	err = bpf_arena_create_dev(16, NULL, &a);
	CHECK(!err, "bpf_arena_create_dev(16 pages) = %d", err);
	if (err)
		return;
	CHECK(bpf_arena_backend(a) == BPF_ARENA_BACKEND_MODULE, "backend is the module");
	base = bpf_arena_base(a);
	CHECK(bpf_arena_size(a) == 16 * PAGE, "size %zu", bpf_arena_size(a));
	base[0] = 42;				/* user fault allocates page 0 */
	CHECK(base[0] == 42, "page 0 faulted in and holds what was written");
	err = bpf_arena_user_alloc_pages(a, base + 4 * PAGE, 1, -1, &page);
	CHECK(!err && page == base + 4 * PAGE, "ALLOC_PAGES at page 4 = %d (%p)", err, page);
	if (!err)
		CHECK(((char *)page)[100] == 0, "allocated page is zeroed");
	err = bpf_arena_user_alloc_pages(a, base + 4 * PAGE, 1, -1, NULL);
	CHECK(err == -16, "ALLOC_PAGES of a taken page = %d (-EBUSY)", err);
	err = bpf_arena_inspect(a, &st, sizeof(st));
	CHECK(!err, "INSPECT = %d", err);
	CHECK(st.pages == 2 && st.alloc_fault == 1 && st.alloc_ioctl == 1,
	      "counters: allocated %llu, by faults %llu, by ALLOC_PAGES %llu",
	      (unsigned long long)st.pages, (unsigned long long)st.alloc_fault,
	      (unsigned long long)st.alloc_ioctl);
	err = bpf_arena_user_free_pages(a, base, 1);
	CHECK(err == 1, "FREE_PAGES of page 0 = %d", err);
	bpf_arena_destroy(a);
}

static void bpf_syscall_arena(void)
{
	struct bpf_arena *a = NULL;
	char *base;
	int err;

	err = bpf_arena_create(8, NULL, &a);
	CHECK(!err, "bpf_arena_create(8 pages) through bpf() = %d", err);
	if (err)
		return;
	base = bpf_arena_base(a);
	base[PAGE + 1] = 7;
	CHECK(base[PAGE + 1] == 7, "bpf() arena page faulted in");
	CHECK(bpf_arena_map_fd(a) >= 0, "arena has a BPF map fd");
	bpf_arena_destroy(a);
}

int main(void)
{
	printf("smoke: libbpfarena %s, uid %d\n", bpf_arena_lib_version(), (int)getuid());
	CHECK(bpf_arena_kernel_has_native() == 0, "kernel has no native arena (the module provides it)");
	dev_arena();
	if (geteuid() == 0)
		bpf_syscall_arena();
	printf("smoke: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}

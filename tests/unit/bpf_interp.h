/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small BPF interpreter for the loop pass's host tests: runs a program
 * before the pass (may_goto with upstream's per-frame budget) and after it
 * (bpf_loop, bpf-to-bpf calls), so the tests compare what both compute.
 * Memory accesses go to host addresses: only for the tests' own programs.
 * Supported: ALU/ALU64, LDX/STX/ST (MEM), JMP/JMP32, ld_imm64 (imm,
 * PSEUDO_FUNC, PSEUDO_MAP_VALUE into bi_map_values[]), calls to subprograms,
 * to bpf_loop and to kfuncs (through bi.kfunc), may_goto, the lowering's
 * iterator mark (nothing), exit.
 */
#ifndef BPF_INTERP_H
#define BPF_INTERP_H

#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <linux/bpf.h>

#define BI_FUNC_TAG	0xf00d000000000000ull
#define BI_MAX_LOOPS	(1u << 23)

struct bi {
	const struct bpf_insn *p;
	uint32_t len;
	uint64_t steps, max_steps;
	int depth;
	bool fault;		/* unsupported insn, bad jump, step limit, depth */
	const char *why;
	uint64_t *map_values[4];	/* PSEUDO_MAP_VALUE fd (imm) 0..3 */
	/* A kfunc call (imm): its r0; *ok = false if unknown. */
	uint64_t (*kfunc)(int32_t imm, const uint64_t args[5], bool *ok);
};

static uint64_t bi_run(struct bi *vm, uint32_t pc, const uint64_t args[5]);

static void bi_fault(struct bi *vm, const char *why)
{
	if (!vm->fault)
		vm->why = why;
	vm->fault = true;
}

static bool bi_cond(uint8_t op, uint64_t a, uint64_t b, bool is32)
{
	int64_t sa = (int64_t)a, sb = (int64_t)b;

	if (is32) {
		a = (uint32_t)a;
		b = (uint32_t)b;
		sa = (int32_t)a;
		sb = (int32_t)b;
	}
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSGT: return sa > sb;
	case BPF_JSGE: return sa >= sb;
	case BPF_JSLT: return sa < sb;
	case BPF_JSLE: return sa <= sb;
	case BPF_JSET: return a & b;
	}
	return false;
}

static uint64_t bi_alu(struct bi *vm, uint8_t op, uint64_t a, uint64_t b, bool is32)
{
	if (is32) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	switch (op) {
	case BPF_ADD: a += b; break;
	case BPF_SUB: a -= b; break;
	case BPF_MUL: a *= b; break;
	case BPF_DIV: a = b ? a / b : 0; break;
	case BPF_MOD: a = b ? a % b : a; break;
	case BPF_OR: a |= b; break;
	case BPF_AND: a &= b; break;
	case BPF_XOR: a ^= b; break;
	case BPF_LSH: a <<= (b & (is32 ? 31 : 63)); break;
	case BPF_RSH: a >>= (b & (is32 ? 31 : 63)); break;
	case BPF_ARSH:
		a = is32 ? (uint32_t)((int32_t)a >> (b & 31)) : (uint64_t)((int64_t)a >> (b & 63));
		break;
	case BPF_NEG: a = -a; break;
	case BPF_MOV: a = b; break;
	default: bi_fault(vm, "alu op");
	}
	return is32 ? (uint32_t)a : a;
}

static uint64_t bi_load(uint64_t addr, uint8_t size)
{
	switch (size) {
	case BPF_B: return *(uint8_t *)(uintptr_t)addr;
	case BPF_H: return *(uint16_t *)(uintptr_t)addr;
	case BPF_W: return *(uint32_t *)(uintptr_t)addr;
	default: return *(uint64_t *)(uintptr_t)addr;
	}
}

static void bi_store(uint64_t addr, uint8_t size, uint64_t v)
{
	switch (size) {
	case BPF_B: *(uint8_t *)(uintptr_t)addr = (uint8_t)v; break;
	case BPF_H: *(uint16_t *)(uintptr_t)addr = (uint16_t)v; break;
	case BPF_W: *(uint32_t *)(uintptr_t)addr = (uint32_t)v; break;
	default: *(uint64_t *)(uintptr_t)addr = v; break;
	}
}

static uint64_t bi_run(struct bi *vm, uint32_t pc, const uint64_t args[5])
{
	uint64_t r[11] = { 0 }, budget = BI_MAX_LOOPS;
	uint64_t stack[64];
	int i;

	memset(stack, 0, sizeof(stack));
	if (++vm->depth > 16) {
		bi_fault(vm, "call depth");
		vm->depth--;
		return 0;
	}
	for (i = 0; i < 5; i++)
		r[i + 1] = args[i];
	r[10] = (uint64_t)(uintptr_t)(stack + 64);
	while (!vm->fault) {
		const struct bpf_insn *in;
		uint8_t cls, op;
		uint64_t src;

		if (pc >= vm->len || ++vm->steps > vm->max_steps) {
			bi_fault(vm, pc >= vm->len ? "pc out of range" : "step limit");
			break;
		}
		in = &vm->p[pc];
		cls = BPF_CLASS(in->code);
		op = BPF_OP(in->code);
		if (in->dst_reg > 10 || in->src_reg > 10) {
			bi_fault(vm, "register");
			break;
		}
		src = BPF_SRC(in->code) == BPF_X ? r[in->src_reg] : (uint64_t)(int64_t)in->imm;
		switch (cls) {
		case BPF_ALU:
		case BPF_ALU64:
			if (op == BPF_NEG)
				src = 0;
			r[in->dst_reg] = bi_alu(vm, op, r[in->dst_reg], src, cls == BPF_ALU);
			pc++;
			continue;
		case BPF_LDX:
			r[in->dst_reg] = bi_load(r[in->src_reg] + in->off, BPF_SIZE(in->code));
			pc++;
			continue;
		case BPF_STX:
			bi_store(r[in->dst_reg] + in->off, BPF_SIZE(in->code), r[in->src_reg]);
			pc++;
			continue;
		case BPF_ST:
			bi_store(r[in->dst_reg] + in->off, BPF_SIZE(in->code), (uint64_t)(int64_t)in->imm);
			pc++;
			continue;
		case BPF_LD:
			if (in->code != (BPF_LD | BPF_IMM | BPF_DW) || pc + 1 >= vm->len) {
				bi_fault(vm, "ld");
				break;
			}
			if (in->src_reg == 0)
				r[in->dst_reg] = (uint32_t)in->imm | (uint64_t)(uint32_t)in[1].imm << 32;
			else if (in->src_reg == BPF_PSEUDO_FUNC)
				r[in->dst_reg] = BI_FUNC_TAG | (pc + 1 + in->imm);
			else if (in->src_reg == BPF_PSEUDO_MAP_VALUE && in->imm >= 0 && in->imm < 4 &&
				 vm->map_values[in->imm])
				r[in->dst_reg] = (uint64_t)(uintptr_t)vm->map_values[in->imm] +
						 (uint32_t)in[1].imm;
			else
				bi_fault(vm, "ld_imm64 kind");
			pc += 2;
			continue;
		case BPF_JMP:
		case BPF_JMP32:
			if (op == BPF_EXIT) {
				vm->depth--;
				return r[0];
			}
			if (op == BPF_CALL) {
				uint64_t a[5] = { r[1], r[2], r[3], r[4], r[5] };

				if (in->src_reg == BPF_PSEUDO_CALL) {
					r[0] = bi_run(vm, pc + 1 + in->imm, a);
				} else if (in->src_reg == 0 && in->imm == BPF_FUNC_loop) {
					uint64_t n = r[1], k;

					if ((r[2] & ~0xffffffffull) != BI_FUNC_TAG || r[4] || n > BI_MAX_LOOPS) {
						bi_fault(vm, "bpf_loop args");
						break;
					}
					for (k = 0; k < n && !vm->fault; k++) {
						uint64_t cb[5] = { k, r[3], 0, 0, 0 };

						if (bi_run(vm, (uint32_t)r[2], cb))
							break;
					}
					r[0] = k < n ? k + 1 : n;
				} else if (in->src_reg == BPF_PSEUDO_KFUNC_CALL && vm->kfunc) {
					bool ok = true;

					r[0] = vm->kfunc(in->imm, a, &ok);
					if (!ok) {
						bi_fault(vm, "kfunc");
						break;
					}
				} else {
					bi_fault(vm, "call");
					break;
				}
				for (i = 1; i <= 5; i++)
					r[i] = 0xdeadbeefdeadbeefull;	/* clobbered */
				pc++;
				continue;
			}
			if (in->code == (BPF_JMP | 0xe0 | BPF_K) && in->src_reg == 1) {
				pc++;	/* the iterator mark: no effect of its own */
				continue;
			}
			if (in->code == (BPF_JMP | 0xe0 | BPF_K)) {	/* may_goto */
				if (!budget)
					pc += 1 + in->off;
				else {
					budget--;
					pc++;
				}
				continue;
			}
			if (op == BPF_JA) {
				pc += 1 + (cls == BPF_JMP32 ? in->imm : in->off);
				continue;
			}
			pc += bi_cond(op, r[in->dst_reg], src, cls == BPF_JMP32) ? 1 + in->off : 1;
			continue;
		default:
			bi_fault(vm, "class");
		}
	}
	vm->depth--;
	return 0;
}

/* Runs from insn 0 with r1 = ctx. */
static inline uint64_t bi_exec(struct bi *vm, const struct bpf_insn *p, uint32_t len, void *ctx)
{
	uint64_t a[5] = { (uint64_t)(uintptr_t)ctx };

	vm->p = p;
	vm->len = len;
	vm->steps = 0;
	vm->depth = 0;
	vm->fault = false;
	vm->why = NULL;
	if (!vm->max_steps)
		vm->max_steps = 2000000000ull;
	return bi_run(vm, 0, a);
}

#endif /* BPF_INTERP_H */

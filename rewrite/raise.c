// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-arena-dkms: the raise (see raise.h and PLACEHOLDERS.md).
 *
 * A form is matched only when every field of every slot is exactly what the
 * lowering emits; the companion ld_imm64 must name env->companion_value.  The
 * raised code names AX in its first rewritten slot, which no form allows, so a
 * second raise finds nothing.
 *
 * WHY THE RAISE IS SAFE FOR ANY VERIFIED PROGRAM (docs/DESIGN.md).  The raise is a
 * local rewrite; its safety rests only on what the stock verifier proved about
 * the form and on the arena's address layout, never on who wrote the form:
 *  1. The address register S went through the form's first instruction,
 *     `wS = wS`, which is kept and executed, and nothing after it in the form
 *     writes S before the raised `AX += rS`.  So rS <= U32_MAX there and
 *     AX + off lies in [kern_vm_start - 32 KiB, kern_vm_start + 4 GiB + 32 KiB),
 *     the arena's reserved window (module/arena.h: 4 GiB + 64 KiB guard).
 *     (match_form() checks the first instruction exactly; tests break it.)
 *  2. Nothing is ever mapped in that window but the arena's pages; any other
 *     access faults and is fixed up (fault_decode.c, module/prog_fault.c):
 *     loads give 0, stores and atomics are skipped.  The window lives as long as the arena, and the
 *     program holds the arena (used_maps, module/prog_hooks.c).
 *  3. The raised code writes only AX (the JIT's scratch r10, never live across
 *     BPF instructions on x86-64; constant blinding skips instructions naming
 *     it) and the registers the form's verified model already declares
 *     clobbered with an unknown scalar of the right width: D (loads), V
 *     (fetching atomics: modelled as a 64-bit unknown, which also covers a
 *     faulting fetch that leaves V unchanged), r0 (cmpxchg; the raise zero-
 *     extends it for W first).  Every other register and every stack slot is
 *     left as the verifier modelled it: the xor carriers compose to the
 *     identity, `rV = rV` only reads.  So the verifier's model of the whole
 *     state stays true after the raise, whatever state preceded the form.
 *  4. No jump may land inside a form after its first instruction, or the
 *     model of the instructions after the landing point would not hold for
 *     the raised code: pass 1 refuses the whole program then (the JIT fails
 *     and the load with it).  Calls cannot land inside: the x86 JIT gets one
 *     function at a time, and bpf-to-bpf calls target function starts.
 *  5. Nothing half-matching is rewritten: it runs as the verified code it is.
 *     A raised form contains no call (AX is caller-saved) and no fetch-and/
 *     or/xor atomic (the JIT's cmpxchg loop uses AX itself).
 */
#include "raise.h"

#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/errno.h>
#else
#include <stdio.h>
#include <errno.h>
#endif

#define R_MAX 9	/* highest register a form may name */

struct form {
	__u32 len;		/* slots, the kept first one included */
	__u32 kind;
	__u8 size;		/* BPF_SIZE() bits */
	__u8 s, d, v;		/* base (kept wS = wS), load destination, value */
	__s16 off;
	__s32 imm;		/* ST: the immediate; atomics: the BPF_ATOMIC op */
};

static bool is_insn(const struct bpf_insn *p, __u8 code, __u8 dst, __u8 src, __s16 off, __s32 imm)
{
	return p->code == code && p->dst_reg == dst && p->src_reg == src && p->off == off &&
	       p->imm == imm;
}

/* `ld_imm64 reg, companion` in p[0..1] (src_reg 0, or MAP_VALUE before conversion). */
static bool is_companion(const struct bpfa_raise_env *env, const struct bpf_insn *p, __u8 reg)
{
	__u64 v = (__u64)(__u32)p[1].imm << 32 | (__u32)p[0].imm;

	return bpfa_is_ldimm64(&p[0]) && p[0].dst_reg == reg &&
	       (p[0].src_reg == 0 || p[0].src_reg == BPF_PSEUDO_MAP_VALUE) && p[0].off == 0 &&
	       p[1].code == 0 && p[1].dst_reg == 0 && p[1].src_reg == 0 && p[1].off == 0 &&
	       v == env->companion_value;
}

static bool is_alu_k(const struct bpf_insn *p, __u8 code, __u8 dst, __u32 imm)
{
	return is_insn(p, code, dst, 0, 0, (__s32)imm);
}

static bool is_mov_self64(const struct bpf_insn *p, __u8 reg)
{
	return reg <= R_MAX && is_insn(p, BPF_ALU64 | BPF_MOV | BPF_X, reg, reg, 0, 0);
}

static bool is_ldx_self(const struct bpf_insn *p, __u8 size, __u8 reg)
{
	return is_insn(p, BPF_LDX | BPF_MEM | size, reg, reg, 0, 0);
}

static bool is_atomic_size(__u8 size)
{
	return size == BPF_W || size == BPF_DW;
}

static bool is_atomic_nofetch_op(__s32 op)
{
	return op == BPF_ADD || op == BPF_OR || op == BPF_AND || op == BPF_XOR;
}

/* The three xor carriers of STX/ST/ATOMIC on wS: K1, K2, K1 ^ K2. */
static bool match_xor3(const struct bpf_insn *p, __u8 s, __u32 *k1, __u32 *k2)
{
	const __u8 x32 = BPF_ALU | BPF_XOR | BPF_K;

	if (p[1].code != x32 || p[1].dst_reg != s || p[1].src_reg || p[1].off)
		return false;
	if (p[2].code != x32 || p[2].dst_reg != s || p[2].src_reg || p[2].off)
		return false;
	*k1 = (__u32)p[1].imm;
	*k2 = (__u32)p[2].imm;
	return (*k1 & BPFA_MAGIC_MASK) == BPFA_K1_MAGIC && is_alu_k(&p[3], x32, s, *k1 ^ *k2);
}

/*
 * Does a complete form start at insns[i]?  Fills *f.  Reads only insns[i..i+len).
 */
static bool match_form(const struct bpfa_raise_env *env, const struct bpf_insn *insns, __u32 len,
		       __u32 i, struct form *f)
{
	const struct bpf_insn *p = &insns[i];
	__u32 avail = len - i, k1, k2, kind;
	__u8 s, x, size;

	if (p->code != (BPF_ALU | BPF_MOV | BPF_X) || p->off || p->imm ||
	    p->dst_reg > R_MAX || p->src_reg > R_MAX || avail < 5)
		return false;
	memset(f, 0, sizeof(*f));
	s = p->src_reg;
	x = p->dst_reg;
	f->s = s;

	switch (p[1].code) {
	case BPF_ALU64 | BPF_MOV | BPF_K:	/* LOAD or CAST_USER */
		k1 = (__u32)p[1].imm;
		if (p[1].src_reg || p[1].off || (k1 & BPFA_MAGIC_MASK) != BPFA_K1_MAGIC ||
		    p[1].dst_reg > R_MAX)
			return false;
		kind = bpfa_k1_kind(k1);
		f->d = p[1].dst_reg;
		if (kind == BPFA_PH_LOAD) {
			size = bpfa_k1_size(k1);
			if (x != s || bpfa_k1_extra(k1) || !is_companion(env, &p[2], f->d) ||
			    !is_ldx_self(&p[4], size, f->d))
				return false;
			f->len = BPFA_PH_LEN_LOAD;
			f->size = size;
			f->off = bpfa_k1_off(k1);
			break;
		}
		if (kind != BPFA_PH_CAST_USER || avail < BPFA_PH_LEN_CAST_USER || f->d != x ||
		    k1 != bpfa_k1(BPFA_PH_CAST_USER, BPF_DW, 0, 0) ||
		    !is_alu_k(&p[2], BPF_ALU64 | BPF_MOV | BPF_K, x, BPFA_K2_MAGIC) ||
		    !is_companion(env, &p[3], x) || !is_ldx_self(&p[5], BPF_DW, x))
			return false;
		f->len = BPFA_PH_LEN_CAST_USER;
		break;
	case BPF_ALU | BPF_XOR | BPF_K:		/* STX, ST, ATOMIC */
		if (x != s || !match_xor3(p, s, &k1, &k2) || bpfa_k1_extra(k1))
			return false;
		kind = bpfa_k1_kind(k1);
		size = bpfa_k1_size(k1);
		f->kind = kind;
		f->off = bpfa_k1_off(k1);
		f->size = size;
		f->len = 5;
		f->v = p[4].dst_reg;
		if (kind == BPFA_PH_STX)
			return k2 == BPFA_K2_MAGIC && is_mov_self64(&p[4], f->v);
		if (kind == BPFA_PH_ST) {
			f->imm = (__s32)k2;
			return is_mov_self64(&p[4], s);
		}
		if (kind != BPFA_PH_ATOMIC || !is_atomic_size(size) ||
		    (k2 & ~0xffu) != BPFA_K2_MAGIC || !is_atomic_nofetch_op(k2 & 0xff))
			return false;
		f->imm = k2 & 0xff;
		return is_mov_self64(&p[4], f->v);
	case BPF_ALU64 | BPF_XOR | BPF_K:	/* ATOMIC_FETCH, CMPXCHG */
		k1 = (__u32)p[1].imm;
		f->v = p[1].dst_reg;
		if (x != s || p[1].src_reg || p[1].off || (k1 & BPFA_MAGIC_MASK) != BPFA_K1_MAGIC ||
		    f->v > R_MAX)
			return false;
		kind = bpfa_k1_kind(k1);
		size = bpfa_k1_size(k1);
		if (!is_atomic_size(size))
			return false;
		f->size = size;
		f->off = bpfa_k1_off(k1);
		if (kind == BPFA_PH_ATOMIC_FETCH) {
			if (bpfa_k1_extra(k1) > 1 || !is_companion(env, &p[2], f->v) ||
			    !is_ldx_self(&p[4], BPF_DW, f->v))
				return false;
			f->imm = bpfa_k1_extra(k1) ? BPF_XCHG : (BPF_ADD | BPF_FETCH);
			f->len = BPFA_PH_LEN_ATOMIC_FETCH;
			break;
		}
		if (kind != BPFA_PH_CMPXCHG || avail < BPFA_PH_LEN_CMPXCHG || bpfa_k1_extra(k1) ||
		    !is_alu_k(&p[2], BPF_ALU64 | BPF_XOR | BPF_K, f->v, k1) ||
		    !is_alu_k(&p[3], BPF_ALU64 | BPF_XOR | BPF_K, BPF_REG_0, BPFA_K2_MAGIC) ||
		    !is_companion(env, &p[4], BPF_REG_0) || !is_ldx_self(&p[6], size, BPF_REG_0))
			return false;
		f->imm = BPF_CMPXCHG;
		f->len = BPFA_PH_LEN_CMPXCHG;
		break;
	default:
		return false;
	}
	f->kind = kind;
	return true;
}

/* What the optimiser (see OPTIMISATIONS below) lets rewrite() leave out. */
struct opts {
	bool drop_zext;	/* rS is known zero-extended: the kept `wS = wS` becomes `ja +0` */
	bool reuse_ax;	/* AX == kern_vm_start + rS already: only the access is emitted */
};

static const struct bpf_insn ja0 = { .code = BPF_JMP | BPF_JA };

static void rewrite(const struct bpfa_raise_env *env, struct bpf_insn *p, const struct form *f,
		    const struct opts *o)
{
	const __u8 ax = BPFA_REG_AX;
	struct bpf_insn *q = &p[1];

	if (f->kind == BPFA_PH_CAST_USER) {
		__u8 x = p[0].dst_reg;

		/* AX = 0; if rX == AX goto +3; AX = user_vm_start & ~0xffffffff; rX |= AX */
		p[1] = bpfa_insn(BPF_ALU64 | BPF_MOV | BPF_K, ax, 0, 0, 0);
		p[2] = bpfa_insn(BPF_JMP | BPF_JEQ | BPF_X, x, ax, 3, 0);
		bpfa_ldimm64(&p[3], ax, 0, env->user_vm_start & ~0xffffffffull, ax);
		p[5] = bpfa_insn(BPF_ALU64 | BPF_OR | BPF_X, x, ax, 0, 0);
		return;
	}
	if (o->drop_zext || o->reuse_ax)
		p[0] = ja0;
	if (f->kind == BPFA_PH_CMPXCHG) {
		if (f->size == BPF_W)
			*q++ = bpfa_insn(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_0, 0, 0);
		else
			*q++ = bpfa_insn(BPF_ALU64 | BPF_MOV | BPF_X, ax, ax, 0, 0);
	}
	if (o->reuse_ax) {
		/* 6.1's x86 JIT emits nothing for `ja +0` (do_jit(): nop jumps optimised out) */
		q[0] = ja0;
		q[1] = ja0;
		q[2] = ja0;
	} else {
		/* AX = kern_vm_start; AX += rS */
		bpfa_ldimm64(q, ax, 0, env->kern_vm_start, ax);
		q[2] = bpfa_insn(BPF_ALU64 | BPF_ADD | BPF_X, ax, f->s, 0, 0);
	}
	q += 3;
	switch (f->kind) {
	case BPFA_PH_LOAD:
		*q = bpfa_insn(BPF_LDX | BPF_MEM | f->size, f->d, ax, f->off, 0);
		break;
	case BPFA_PH_STX:
		*q = bpfa_insn(BPF_STX | BPF_MEM | f->size, ax, f->v, f->off, 0);
		break;
	case BPFA_PH_ST:
		*q = bpfa_insn(BPF_ST | BPF_MEM | f->size, ax, 0, f->off, f->imm);
		break;
	default:	/* ATOMIC, ATOMIC_FETCH, CMPXCHG */
		*q = bpfa_insn(BPF_STX | BPF_ATOMIC | f->size, ax, f->v, f->off, f->imm);
		if (f->kind == BPFA_PH_CMPXCHG)
			q[1] = bpfa_insn(BPF_ALU64 | BPF_MOV | BPF_X, ax, ax, 0, 0);
		break;
	}
}

/* Is t strictly inside a form (after its first slot)?  Sets *start. */
static bool inside_form(const struct bpfa_raise_env *env, const struct bpf_insn *insns, __u32 len,
			__u32 t, __u32 *start)
{
	struct form f;
	__u32 back;

	for (back = 1; back < BPFA_PH_LEN_MAX && back <= t; back++) {
		if (match_form(env, insns, len, t - back, &f) && back < f.len) {
			*start = t - back;
			return true;
		}
	}
	return false;
}

/*
 * OPTIMISATIONS.  Only with env->targets (a bitmap the caller
 * provides, filled here): without it every form is raised in full.  The
 * walk below keeps, inside one basic block, two facts about the program as
 * it will run after the raise:
 *
 *  zext: registers whose upper 32 bits are known zero in the machine
 *    register (what the raised code reads, not only the verifier's model).
 *    Set by
 *    - any executed 32-bit ALU instruction (BPF_ALU, off 0, BPF_ADD ..
 *      BPF_ARSH: every defined op but BPF_END, whose `le64`/`be64` are
 *      64-bit in class ALU).  The BPF ISA zero-extends every 32-bit ALU
 *      result, 6.1's x86 JIT does not ask the verifier for explicit zext
 *      (bpf_jit_needs_zext() is false), and the verifier's own range
 *      tracking already relies on it (zext_32_to_64() after every ALU32
 *      op).  In do_jit() each such op ends in a 32-bit x86 op on the
 *      destination (mov/add/sub/and/or/xor/neg/imul/shl/shr/sar, a 32-bit
 *      div into eax/edx, then `mov e_dst, eax|edx`) or, for a shift whose
 *      destination is rcx, in `mov rcx, r11` after a 32-bit shift of r11;
 *      `mov eX, eX` is emitted also for X == X (emit_mov_reg());
 *    - a plain LDX of size B/H/W (BPF_MEM: movzx or a 32-bit mov; not the
 *      PROBE modes) and a LOAD form of size B/H/W (the same, or 0 from the
 *      fault fixup);
 *    - a 64-bit copy `rX = rY` (off 0, imm 0) of a register in zext: the
 *      same bits;
 *    - a form's kept `wS = wS`.
 *    Cleared by any other write to the register.  (The one verifier patch
 *    that writes the upper half after a 32-bit def, BPF_F_TEST_RND_HI32's
 *    poisoning, goes through AX, which ends a block; and the module refuses
 *    that flag for arena programs, module/prog_scan.c find_arena().)
 *  ax: AX == kern_vm_start + rS for base S, computed by the last raised
 *    LOAD/STX/ST form, with rS not written since.
 *
 * WHAT THE WALK SEES.  The raise runs at bpf_int_jit_compile() entry
 * (module/prog_hooks.c) on prog->insnsi, the very array it rewrites: the
 * verified program after every verifier patch (dead code removed or turned
 * into `ja -1`, ctx/misc fixups, bpf_loop inlining, nops removed), one
 * function at a time when the program has subprograms (jit_subprogs()
 * copies each function into its own prog).  Blocks are computed on that
 * array, not on what the verifier walked.  Constant blinding runs after the
 * raise, inside the JIT: it skips every instruction naming AX and every JA,
 * and a patched instruction's jumps land on the start of its replacement,
 * so it adds no entry point between two instructions of a block and writes
 * only AX and the blinded instruction's own destination.
 *
 * ENTRY POINTS (mark_targets(); each one ends a block, both facts are
 * forgotten there):
 *  - index 0: the function's entry, and where a tail call enters;
 *  - the target of every jump: BPF_JMP and BPF_JMP32 conditional jumps
 *    (off), `ja` (BPF_JMP | BPF_JA, off) and `gotol` (BPF_JMP32 | BPF_JA,
 *    imm; Debian's 6.1 has it: check_subprogs(), do_jit()).  These are all
 *    of check_cfg()'s intra-function edges (visit_insn());
 *  - bpf-to-bpf calls (BPF_JMP | BPF_CALL, src BPF_PSEUDO_CALL) and callback
 *    references (ld_imm64 src BPF_PSEUDO_FUNC, e.g. bpf_loop's callback)
 *    enter another function at its index 0: at JIT time their imm is no
 *    longer a displacement (jit_subprogs() sets it to 1, then to the
 *    callee's address), and a program with either has subprograms, so the
 *    raise never sees a whole program with one.  Their `i + 1 + imm` is
 *    still marked when in range: a superset of the entry points is always
 *    safe, and it keeps the walk right were it ever given a whole program.
 *    (BPF_JMP32 | BPF_CALL is no call: 6.1's bpf_pseudo_call() wants
 *    BPF_JMP, do_check() refuses it as "BPF_CALL uses reserved fields", and
 *    dead code is removed or trapped before the JIT; it never reaches here.)
 *  - a return from any call lands on the instruction after the call, and
 *    a call already ends the block;
 *  - exception tables (BPF_PROBE_MEM and the arena's fault fixup,
 *    module/prog_fault.c) resume at the instruction after the faulting one,
 *    in order, with the destination of a load zeroed: not a new entry, and
 *    the walk's facts hold for the zeroed value (a zero is zero-extended;
 *    AX is never a load destination).
 * A target can also lie where the walk does not stop: inside a form (after
 * its first slot) or on the second half of an ld_imm64.  The verifier
 * refuses a jump into an ld_imm64 (check_cfg(): "jump into the middle of
 * ldimm64"), pass 1 refuses a jump into a form, and call/callback "targets"
 * are not entries at JIT time (above); still, the walk treats any such mark
 * as a block boundary right after that ld_imm64 or form, and a form with a
 * mark inside gets no optimisation.  So whatever the marks, no fact is
 * carried across one.
 *
 * A basic block also ends at every unconditional jump, call or exit, at
 * every LD other than ld_imm64, every atomic outside a form and every
 * instruction naming AX (a verifier patch; the raise's own AX uses are in
 * forms).  A conditional jump does not end it: the instruction after it is
 * reached only by falling through (a jump to it marks it as an entry point),
 * and a jump writes no register.  So an instruction in the block runs only
 * after every earlier one in it, in order.
 *
 *  1. drop_zext: a form's kept `wS = wS` is replaced by `ja +0` when S is in
 *     zext.  Its only effect, clearing rS's upper half, is already true on
 *     every path reaching it, so it is a no-op on the real value and the
 *     verifier's model after it still holds; safety point 1 (rS <= U32_MAX
 *     at `AX += rS`) holds through the earlier zero-extension instead.  A
 *     hostile program controls which instructions precede the form but not
 *     the walk: any write to rS that is not one of the zero-extending ones
 *     above, any entry point and any AX use in between forgets the fact.
 *  2. reuse_ax: a LOAD, STX or ST form through the same S as the previous
 *     raised LOAD/STX/ST form (not written by that form: a LOAD into S
 *     forgets ax), with nothing between them but instructions of
 *     keeps_ax() (3. below), at most BPFA_AX_BETWEEN_MAX of them per chain,
 *     none of which writes S, emits only its access; its other slots become
 *     `ja +0`, which 6.1's x86 JIT emits as nothing.  AX is then exactly
 *     what a full raise would compute (same kern_vm_start, same rS), so
 *     point 1 holds unchanged, provided nothing writes AX in between: the
 *     forms' `ja +0` and AX-based accesses are never constant-blinded
 *     (blinding runs after the raise, inside bpf_int_jit_compile(), and
 *     skips JA and every instruction naming AX), the verifier's patches are
 *     already in the program the raise sees (anything naming AX ends the
 *     block), and what 6.1's JIT emits for the instructions of 3. writes no
 *     r10.  The fault fixup (fault_decode.c) recognises a faulting access of
 *     a chain by decoding forward from its `movabs r10, kern_vm_start;
 *     add r10, reg` over exactly those x86 forms.
 *  3. keeps_ax(): what a chain may run through.  In 6.1's do_jit()
 *     (arch/x86/net/bpf_jit_comp.c) each is one x86 instruction on BPF
 *     registers only (never r10, BPF_REG_AX, or r11, AUX_REG), or for a
 *     jump a cmp/test, at most a 4-byte nop of jump padding and a jcc:
 *     - ALU/ALU64 ADD, SUB, AND, OR, XOR, MOV, off 0, register or (without
 *       blinding) immediate source: `op r/m, reg`, `op r/m, imm8/32`, the
 *       rax short forms, `mov r, imm32`, `xor r, r` (emit_mov_imm32());
 *     - conditional jumps, JMP and JMP32, but not JA, CALL, EXIT: `cmp`/`test`
 *       then `jcc rel8/rel32`; with an immediate only without blinding.
 *       The fall-through is the only way to the next instruction that is
 *       not a jump target, and every target ends the block;
 *     - plain LDX and STX (BPF_MEM; not the PROBE modes, which add code and
 *       an exception table entry): `mov`/`movzx` with a BPF register base
 *       and a disp8/disp32, never r10.
 *     A register write among them updates zext as in any block, and a write
 *     to S ends the chain.  Calls (which clobber r10), atomics, ld_imm64,
 *     ST and everything else still end it.
 *
 * A program with a jump into a form is refused before any of this (pass 1).
 * tests/fuzz/lower_fuzz.c checks both optimisations against the plain raise
 * with its own block analysis; tests/unit/raise_unit_test.c has one case per
 * entry-point kind.
 */
struct opt_state {
	__u32 zext;		/* bit r: rr zero-extended */
	int ax_base;		/* -1, or S with AX == kern_vm_start + rS */
	__u32 ax_end;		/* index just after the form or keeps_ax() run since AX */
	__u32 chain;		/* accesses through this AX so far */
	__u32 between;		/* keeps_ax() instructions in this chain so far */
};

static void opt_reset(struct opt_state *st)
{
	st->zext = 0;
	st->ax_base = -1;
	st->ax_end = 0;
	st->chain = 0;
	st->between = 0;
}

/* BPF_JMP / BPF_JMP32 with a condition: cmp or test, then jcc, in 6.1's JIT. */
static bool is_cond_jump(const struct bpf_insn *p)
{
	__u8 cls = BPF_CLASS(p->code);

	if (cls != BPF_JMP && cls != BPF_JMP32)
		return false;
	switch (BPF_OP(p->code)) {
	case BPF_JEQ: case BPF_JGT: case BPF_JGE: case BPF_JSET: case BPF_JNE:
	case BPF_JSGT: case BPF_JSGE: case BPF_JLT: case BPF_JLE: case BPF_JSLT:
	case BPF_JSLE:
		return true;
	default:	/* JA, CALL, EXIT, and anything 6.1 does not define */
		return false;
	}
}

/*
 * May a chain run through p (OPTIMISATIONS 3)?  Only the x86 forms
 * fault_decode.c decodes (decode_between()) come from these.
 */
static bool keeps_ax(const struct bpfa_raise_env *env, const struct bpf_insn *p)
{
	bool imm = BPF_SRC(p->code) == BPF_K;

	switch (BPF_CLASS(p->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		if (p->off || (imm && env->blinding))
			return false;
		switch (BPF_OP(p->code)) {
		case BPF_ADD: case BPF_SUB: case BPF_AND: case BPF_OR: case BPF_XOR:
		case BPF_MOV:
			return true;
		default:
			return false;
		}
	case BPF_JMP:
	case BPF_JMP32:
		return is_cond_jump(p) && !(imm && env->blinding);
	case BPF_LDX:
	case BPF_STX:
		return BPF_MODE(p->code) == BPF_MEM;
	default:
		return false;
	}
}

/* A register write outside a form: forgets what it invalidates. */
static void opt_write(struct opt_state *st, __u8 reg, bool zext)
{
	if (reg > R_MAX) {
		opt_reset(st);
		return;
	}
	if (zext)
		st->zext |= 1u << reg;
	else
		st->zext &= ~(1u << reg);
	if (st->ax_base == reg)
		st->ax_base = -1;
}

/* Effect of a non-form instruction p = insns[i] (the first of an ld_imm64) on st. */
static void opt_step(const struct bpfa_raise_env *env, struct opt_state *st,
		     const struct bpf_insn *p, __u32 i)
{
	__u8 cls = BPF_CLASS(p->code);

	if (p->dst_reg == BPFA_REG_AX || p->src_reg == BPFA_REG_AX) {
		opt_reset(st);
		return;
	}
	switch (cls) {
	case BPF_ALU:
		/* BPF_ADD .. BPF_ARSH: the defined ops but BPF_END (0xe0, 0xf0: none) */
		opt_write(st, p->dst_reg, BPF_OP(p->code) <= BPF_ARSH && p->off == 0);
		break;
	case BPF_ALU64:
		opt_write(st, p->dst_reg,
			  p->code == (BPF_ALU64 | BPF_MOV | BPF_X) && !p->off && !p->imm &&
			  p->src_reg <= R_MAX && (st->zext & (1u << p->src_reg)));
		break;
	case BPF_LDX:
		opt_write(st, p->dst_reg, p->code == (BPF_LDX | BPF_MEM | BPF_W) ||
			  p->code == (BPF_LDX | BPF_MEM | BPF_H) ||
			  p->code == (BPF_LDX | BPF_MEM | BPF_B));
		break;
	case BPF_LD:
		if (bpfa_is_ldimm64(p))
			opt_write(st, p->dst_reg, false);
		else
			opt_reset(st);
		break;
	case BPF_ST:
		break;
	case BPF_STX:
		if (BPF_MODE(p->code) != BPF_MEM)
			opt_reset(st);
		break;
	default:	/* JMP, JMP32: a conditional jump writes nothing */
		if (!is_cond_jump(p))
			opt_reset(st);
		break;
	}
	/* AX, still kern_vm_start + rS, runs through to the next instruction. */
	if (st->ax_base >= 0 && st->ax_end == i && st->between < BPFA_AX_BETWEEN_MAX &&
	    keeps_ax(env, p)) {
		st->ax_end = i + 1;
		st->between++;
	}
}

static void set_target(unsigned long *t, __u32 len, __s64 i)
{
	const unsigned int bits = 8 * sizeof(unsigned long);

	if (i >= 0 && i < len)
		t[i / bits] |= 1ul << (i % bits);
}

static bool is_target(const unsigned long *t, __u32 i)
{
	const unsigned int bits = 8 * sizeof(unsigned long);

	return t[i / bits] & (1ul << (i % bits));
}

/* Every index a jump, call or callback reference may reach, and 0. */
static void mark_targets(unsigned long *t, const struct bpf_insn *insns, __u32 len)
{
	const unsigned int bits = 8 * sizeof(unsigned long);
	__u32 i;

	memset(t, 0, (len + bits - 1) / bits * sizeof(*t));
	set_target(t, len, 0);
	for (i = 0; i < len; i++) {
		const struct bpf_insn *p = &insns[i];

		if (bpfa_is_jump(p))
			set_target(t, len, (__s64)i + 1 + bpfa_jump_disp(p));
		else if (bpfa_is_pcall(p))
			set_target(t, len, (__s64)i + 1 + p->imm);
		else if (bpfa_is_pfunc(p))
			set_target(t, len, (__s64)i + 1 + p->imm);
	}
}

/* Is any index in [from, to) marked?  (Marks past len are never set.) */
static bool any_target(const unsigned long *t, __u32 from, __u32 to)
{
	for (; from < to; from++)
		if (is_target(t, from))
			return true;
	return false;
}

/* Decides the options of form f at index i, then records its effect on st. */
static void opt_form(struct opt_state *st, const struct form *f, __u32 i, struct opts *o)
{
	bool plain = f->kind == BPFA_PH_LOAD || f->kind == BPFA_PH_STX || f->kind == BPFA_PH_ST;

	o->drop_zext = false;
	o->reuse_ax = false;
	if (f->kind == BPFA_PH_CAST_USER) {	/* kept `wX = wY`, then AX and rX written */
		opt_write(st, f->d, false);
		st->ax_base = -1;
		return;
	}
	o->reuse_ax = plain && st->ax_base == f->s && st->ax_end == i &&
		      st->chain < BPFA_AX_CHAIN_MAX;
	/*
	 * A `BPF_JMP32 | BPF_CALL` with src BPF_PSEUDO_CALL is no call on 6.1
	 * (bpf_pseudo_call() wants BPF_JMP; do_check() refuses the instruction,
	 * dead-code removal drops it), so this walk rightly takes no target
	 * from it (tests/fuzz/findings/raise-drop-zext-across-target.bin holds
	 * one aimed into a form).  Marks inside forms and ld_imm64 end a block
	 * (see ENTRY POINTS).
	 */
	o->drop_zext = !o->reuse_ax && (st->zext & (1u << f->s));
	st->zext |= 1u << f->s;		/* the kept `wS = wS`, or known already */
	st->chain = o->reuse_ax ? st->chain + 1 : 1;
	if (!o->reuse_ax)
		st->between = 0;
	st->ax_base = plain ? f->s : -1;
	st->ax_end = i + f->len;
	switch (f->kind) {
	case BPFA_PH_LOAD:
		opt_write(st, f->d, f->size != BPF_DW);	/* LDX B/H/W zero-extend */
		break;
	case BPFA_PH_ATOMIC_FETCH:
		opt_write(st, f->v, false);
		break;
	case BPFA_PH_CMPXCHG:
		opt_write(st, BPF_REG_0, false);
		break;
	default:
		break;
	}
}

int bpfa_raise(const struct bpfa_raise_env *env, struct bpf_insn *insns, __u32 len,
	       struct bpfa_raise_result *res)
{
	struct opt_state st;
	struct opts o = { false, false };
	struct form f;
	__u32 i, start;
	__s64 t;

	res->raised = 0;
	res->dropped_zext = 0;
	res->reused_ax = 0;
	res->err_insn = 0;
	res->msg[0] = '\0';
	/* Pass 1: no jump may land inside a form. */
	for (i = 0; i < len; i++) {
		if (!bpfa_is_jump(&insns[i]))
			continue;
		t = (__s64)i + 1 + bpfa_jump_disp(&insns[i]);
		if (t < 0 || t >= len || !inside_form(env, insns, len, (__u32)t, &start))
			continue;
		res->err_insn = i;
		snprintf(res->msg, sizeof(res->msg),
			 "bpf_arena: insn %u: jump into the arena placeholder at insn %u (to insn %u)\n",
			 i, start, (__u32)t);
		return -EINVAL;
	}
	/* With blinding requested, no immediate may reach the image unblinded. */
	for (i = 0; env->refuse_st_imm && i < len; i++) {
		if (!match_form(env, insns, len, i, &f))
			continue;
		if (f.kind == BPFA_PH_ST) {
			res->err_insn = i;
			snprintf(res->msg, sizeof(res->msg),
				 "bpf_arena: insn %u: a store of an immediate into the arena cannot be constant-blinded here (bpf_jit_harden); store a register instead\n",
				 i);
			return -EOPNOTSUPP;
		}
		i += f.len - 1;
	}
	if (env->targets)
		mark_targets(env->targets, insns, len);
	opt_reset(&st);
	/* Pass 2: rewrite, in program order (the walk sees each form before its raise). */
	for (i = 0; i < len; i++) {
		if (env->targets && is_target(env->targets, i))
			opt_reset(&st);
		if (!match_form(env, insns, len, i, &f)) {
			opt_step(env, &st, &insns[i], i);
			if (!bpfa_is_ldimm64(&insns[i]))
				continue;
			/* a mark on the second half: a boundary after the pair */
			if (++i < len && env->targets && is_target(env->targets, i))
				opt_reset(&st);
			continue;
		}
		if (env->targets) {
			opt_form(&st, &f, i, &o);
			/* A mark inside the form: no optimisation, a boundary after it. */
			if (any_target(env->targets, i + 1, i + f.len)) {
				o.drop_zext = false;
				o.reuse_ax = false;
				opt_reset(&st);
			}
		}
		rewrite(env, &insns[i], &f, &o);
		res->raised++;
		res->dropped_zext += o.drop_zext;
		res->reused_ax += o.reuse_ax;
		i += f.len - 1;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The decoder of raised arena accesses in x86-64 JIT images (6.1's JIT).
 *
 * A raised access is JITed as
 *	movabs r10, kern_vm_start	49 ba imm64
 *	add r10, rS			49|4d 01 (11 sss 010)
 *	<access with base r10>		[66] [f0] rex op modrm(rm=010) disp [imm]
 * (AX is r10; see docs/PLACEHOLDERS.md).  An access to an unpopulated page
 * of the window faults, and the module's fault fixup (module/prog_fault.c)
 * asks bpfa_fault_decode().  The answer is decided from the faulting
 * instruction itself, so no per-site table has to follow JIT images around:
 *  - the ip is BPF text, the 13 bytes before it are exactly the two
 *    instructions above, and imm64 is the window of a live arena; nothing
 *    else emits "movabs r10, imm64; add r10, reg" (the verifier rejects
 *    programs naming AX; blinding moves random constants into r10 and then
 *    xors, never adds);
 *  - the access is decoded to its length and, for loads, its destination.
 * Upstream's semantics: a load gives 0, a store or atomic is skipped.
 *
 * The raise may let up to BPFA_AX_CHAIN_MAX accesses through the same base
 * follow one prefix (raise.c, OPTIMISATIONS 2 and 3), with up to
 * BPFA_AX_BETWEEN_MAX instructions of a few kinds between them: the faulting
 * access is then recognised by decoding forward from a prefix before it,
 * instruction by instruction, to exactly ip; every instruction between
 * leaves r10 as the prefix set it (an access or other instruction that
 * writes r10 ends a chain).
 *
 * A wrong answer is costly either way: accepting a fault that is not a
 * raised access lets the fixup skip a kernel access or zero a register the
 * program still trusts; refusing a real one turns an arena fault into an
 * oops.  tests/unit/fault_decode_unit_test.c holds it to each rule.
 */
#include "fault_decode.h"
#include "raise.h"

#define PRE_LEN		13	/* movabs r10, imm64 (10) + add r10, reg (3) */
#define X86_RSP		4	/* never a BPF register (reg2hex[]) */

/*
 * A store's or an atomic's fixup clears no register: the module's exception
 * entry names orig_ax for them (ex_handler_bpf() of 6.1 always zeroes one
 * pt_regs slot, and orig_ax of a kernel-mode #PF frame is read by nothing
 * after the fixup).  Clearing AX (r10) instead would break a chain of
 * accesses through r10 (raise.c, OPTIMISATIONS 2): the next access would
 * go through 0.
 */
#define NO_CLEAR	BPFA_X86_NO_CLEAR

/*
 * The bytes of "movabs r10, imm64; add r10, reg" at p.  Whether imm64 is a
 * live arena's window is asked last (bpfa_fault_decode()): that walks every
 * arena, and a program can plant these bytes in its immediates, so only a
 * candidate whose whole chain decodes pays for it.
 */
static bool is_raise_prefix(const __u8 *p)
{
	if (p[0] != 0x49 || p[1] != 0xba)
		return false;
	/* add r10, reg: REX.W + REX.B (+ REX.R for r8-r15), 01, mod=11 rm=010 */
	return (p[10] == 0x49 || p[10] == 0x4d) && p[11] == 0x01 && (p[12] & 0xc7) == 0xc2;
}

/*
 * Length and cleared register of the r10-based access at p, or false; an
 * atomic (lock prefix: 6.1's emit_atomic() always emits one) says so.
 */
static bool decode_access(const __u8 *p, unsigned int *len, unsigned int *clear, bool *is_load,
			  bool *is_atomic)
{
	bool opsize = false, lock = false, load = false;
	unsigned int i = 0, imm = 0, disp, rex, op, modrm;

	if (p[i] == 0x66) {
		opsize = true;
		i++;
	}
	if (p[i] == 0xf0) {
		lock = true;
		i++;
	}
	rex = p[i++];
	if ((rex & 0xf0) != 0x40 || !(rex & 1))
		return false;
	op = p[i++];
	if (op == 0x0f) {
		op = 0x0f00 | p[i++];
		switch (op) {
		case 0x0fb6: case 0x0fb7:	/* movzx: LDX B/H */
			load = !lock && !opsize;
			if (!load)
				return false;
			break;
		case 0x0fc1: case 0x0fb1:	/* xadd, cmpxchg */
			if (!lock)
				return false;
			break;
		default:
			return false;
		}
	} else {
		switch (op) {
		case 0x8b:			/* mov load: LDX W/DW */
			load = !lock && !opsize;
			if (!load)
				return false;
			break;
		case 0x88: case 0x89:		/* STX */
		case 0xc6: case 0xc7:		/* ST */
			if (lock)
				return false;
			if (op == 0xc6)
				imm = 1;
			else if (op == 0xc7)
				imm = opsize ? 2 : 4;
			break;
		case 0x01: case 0x09: case 0x21: case 0x31: case 0x87:
			if (!lock)			/* lock add/or/and/xor, xchg */
				return false;
			break;
		default:
			return false;
		}
	}
	modrm = p[i++];
	if ((modrm & 7) != 2)
		return false;
	switch (modrm >> 6) {
	case 1:
		disp = 1;
		break;
	case 2:
		disp = 4;
		break;
	default:
		return false;
	}
	*len = i + disp + imm;
	/* Loads clear their destination; anything else clears nothing. */
	*clear = load ? ((modrm >> 3) & 7) | ((rex & 4) << 1) : NO_CLEAR;
	*is_load = load;
	*is_atomic = lock;
	return true;
}

/* The 4-byte nop 6.1's JIT pads a shrunk jcc with (x86_nops[4], x86-64). */
static const __u8 jit_nop4[4] = { 0x0f, 0x1f, 0x40, 0x00 };

/*
 * Length of the x86 instruction at p if it is one that 6.1's do_jit() emits
 * for an instruction a chain may run through (raise.c, keeps_ax(): ALU
 * ADD/SUB/AND/OR/XOR/MOV, conditional jumps, plain LDX/STX) and it writes no
 * r10; else 0.  The JIT's encodings for those and nothing that writes r10
 * or addresses through it: an instruction it would not emit there (a SIB
 * byte, a 64-bit immediate, rip-relative or r10-based memory) is refused,
 * and a refusal only ends the chain, so the fixup says "not ours" and the
 * fault is the kernel's to report.  What is accepted is a little wider than
 * what a chain holds (`mov r32, imm32` is also a uimm32 ld_imm64, which ends
 * a chain in the raise): the fixup needs r10 to hold the prefix's value at
 * ip, and every accepted encoding leaves r10 alone.  Why r10 is never
 * written or a base here: no BPF register maps to it (reg2hex[]), and the
 * raise ends a chain at every instruction naming AX.
 */
static unsigned int decode_between(const __u8 *p)
{
	unsigned int i = 0, rex = 0, op, modrm, mod, reg, rm, imm = 0, len;
	bool opsize = false, writes_rm = false, writes_reg = false;

	if (!memcmp(p, jit_nop4, sizeof(jit_nop4)))
		return sizeof(jit_nop4);
	if (p[0] >= 0x70 && p[0] <= 0x7f)
		return 2;				/* jcc rel8 */
	if (p[0] == 0x0f && p[1] >= 0x80 && p[1] <= 0x8f)
		return 6;				/* jcc rel32 */
	if (p[i] == 0x66) {				/* STX H only */
		opsize = true;
		i++;
	}
	if ((p[i] & 0xf0) == 0x40)
		rex = p[i++];
	op = p[i++];
	if (op >= 0xb8 && op <= 0xbf) {			/* mov r32, imm32 */
		if (opsize || (rex & 8) || ((op & 7) | (rex & 1) << 3) == 10)
			return 0;
		return i + 4;
	}
	switch (op) {
	case 0x05: case 0x2d: case 0x25: case 0x0d: case 0x35:	/* op eax/rax, imm32 */
		return opsize || (rex & 7) ? 0 : i + 4;
	case 0x0f:					/* LDX B/H: REX.W movzx */
		op = 0x0f00 | p[i++];
		if (op != 0x0fb6 && op != 0x0fb7)
			return 0;
		break;
	default:
		break;
	}
	if (opsize && op != 0x89)
		return 0;
	modrm = p[i++];
	mod = modrm >> 6;
	reg = ((modrm >> 3) & 7) | (rex & 4) << 1;
	rm = (modrm & 7) | (rex & 1) << 3;
	switch (op) {
	case 0x01: case 0x29: case 0x21: case 0x09: case 0x31:	/* ALU r/m, reg */
	case 0x39: case 0x85:				/* cmp, test */
		if (mod != 3)
			return 0;
		writes_rm = op != 0x39 && op != 0x85;
		break;
	case 0x89:				/* mov r/m, reg: ALU MOV, or STX */
		writes_rm = mod == 3;
		if (opsize && mod == 3)
			return 0;
		break;
	case 0x88:					/* STX B */
		if (mod == 3)
			return 0;
		break;
	case 0x8b: case 0x0fb6: case 0x0fb7:		/* LDX */
		if (mod == 3 || (op != 0x8b && !(rex & 8)))
			return 0;
		writes_reg = true;
		break;
	case 0x83: case 0x81:				/* ALU/cmp r/m, imm8/32 */
		/* add 0, or 1, and 4, sub 5, xor 6, cmp 7 */
		if (mod != 3 || reg == 2 || reg == 3 || (rex & 4))
			return 0;
		writes_rm = (reg & 7) != 7;
		imm = op == 0x83 ? 1 : 4;
		break;
	case 0xc7: case 0xf7:				/* mov r64, simm32; test r/m, imm32 */
		if (mod != 3 || (rex & 4) || (modrm & 0x38))
			return 0;
		writes_rm = op == 0xc7;
		imm = 4;
		break;
	default:
		return 0;
	}
	if (mod == 3) {
		len = i + imm;
	} else {
		/* [base + disp8/32]: no SIB, never r10 */
		if ((mod != 1 && mod != 2) || (modrm & 7) == 4 || rm == 10)
			return 0;
		len = i + (mod == 1 ? 1 : 4);
	}
	if ((writes_rm && rm == 10) || (writes_reg && reg == 10))
		return 0;
	return len;
}

/*
 * A chain (raise.c, OPTIMISATIONS 2, 3): up to BPFA_AX_CHAIN_MAX
 * accesses through r10 after one prefix, with up to BPFA_AX_BETWEEN_MAX BPF
 * instructions of decode_between()'s kinds among them (at most three x86
 * instructions each: cmp, padding, jcc).  Is the access at buf[end] the last
 * of a chain whose prefix starts at buf[pre]?  Decodes forward from the
 * prefix, so every byte between is accounted for by decoded instructions.
 * Only plain loads and stores reuse AX (opt_form(): an atomic always has its
 * own prefix), so an earlier access of the chain must be one: that also
 * keeps out every access that could write r10 (a load into it, xadd, xchg or
 * cmpxchg naming it), none of which the JIT emits but which this must not
 * take on trust.  The prefix's base is checked by the caller.
 */
static bool chain_reaches(const __u8 *buf, unsigned int pre, unsigned int end, bool end_atomic)
{
	unsigned int at = pre + PRE_LEN, n = 0, between = 0, len, reg;
	bool load, atomic;

	if (!is_raise_prefix(buf + pre))
		return false;
	if (end_atomic)
		return at == end;
	while (at < end) {
		if (decode_access(buf + at, &len, &reg, &load, &atomic)) {
			if (atomic || (load && reg == 10) || ++n >= BPFA_AX_CHAIN_MAX)
				return false;
		} else {
			len = decode_between(buf + at);
			if (!len || ++between > 3 * BPFA_AX_BETWEEN_MAX)
				return false;
		}
		at += len;
	}
	return at == end;
}

/*
 * Enough bytes before ip for a full chain: its prefix, all but its last
 * access, and the instructions between (BETWEEN_LEN bytes at most for one
 * BPF instruction: `cmp r64, imm32` 7, padding 4, jcc rel8 2; or 7 + jcc
 * rel32 6; an LDX/STX with disp32 is 8, an ALU with imm32 7).
 */
#define BETWEEN_LEN	13
#define CHAIN_BACK	(PRE_LEN + (BPFA_AX_CHAIN_MAX - 1) * BPFA_X86_MAX_INSN + \
			 BPFA_AX_BETWEEN_MAX * BETWEEN_LEN)

/*
 * Copies up to n bytes ending (back) or starting (!back) at addr into dst
 * (ending at dst + n, or starting at dst), as many as are readable: one copy
 * where all are, else byte by byte up to the first unreadable one, since a
 * JIT image may start or end next to an unmapped page.  Returns the count.
 */
static unsigned int copy_readable(const struct bpfa_fault_env *env, __u8 *dst, unsigned long addr,
				  unsigned int n, bool back)
{
	unsigned int got;

	if (!env->read(env->ctx, dst, back ? addr - n : addr, n))
		return n;
	for (got = 0; got < n; got++) {
		if (back ? env->read(env->ctx, dst + n - got - 1, addr - got - 1, 1) :
			   env->read(env->ctx, dst + got, addr + got, 1))
			break;
	}
	return got;
}

bool bpfa_fault_decode(const struct bpfa_fault_env *env, unsigned long ip,
		       struct bpfa_fault_fix *fix)
{
	__u8 buf[CHAIN_BACK + BPFA_X86_MAX_INSN] = { 0 };
	unsigned int len, reg, back, avail, fwd, end = CHAIN_BACK;
	bool load, atomic;
	__u64 base;

	if (!env->is_text(env->ctx, ip))
		return false;
	/*
	 * The access itself (the image may end within 15 bytes of it: only
	 * what is readable counts, the rest of buf stays 0 and no access's
	 * length may reach into it), then as much before it as is readable.
	 */
	fwd = copy_readable(env, buf + end, ip, BPFA_X86_MAX_INSN, false);
	if (!decode_access(buf + end, &len, &reg, &load, &atomic) || len > fwd || reg == X86_RSP)
		return false;
	avail = copy_readable(env, buf, ip, CHAIN_BACK, true);
	for (back = PRE_LEN; back <= avail; back++) {
		if (!chain_reaches(buf, end - back, end, atomic))
			continue;
		/* the chain's movabs imm64: a live arena's kernel base */
		memcpy(&base, buf + end - back + 2, sizeof(base));
		if (!env->is_live(env->ctx, base))
			continue;
		fix->len = len;
		fix->clear = reg;
		fix->kern_vm_start = base;
		return true;
	}
	return false;
}

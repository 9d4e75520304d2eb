// SPDX-License-Identifier: GPL-2.0
/*
 * Fault fixups for raised arena accesses (x86-64 JIT of Linux 6.1).
 *
 * A raised access is JITed as
 *	movabs r10, kern_vm_start	49 ba imm64
 *	add r10, rS			49|4d 01 (11 sss 010)
 *	<access with base r10>		[66] [f0] rex op modrm(rm=010) disp [imm]
 * (AX is r10; see jit/PLACEHOLDERS.md).  An access to an unpopulated page
 * of the window faults; search_bpf_extables() (hooked) then asks us.  The
 * answer is decided from the faulting instruction itself, so no per-site
 * table has to follow JIT images around:
 *  - the ip is BPF text, the 13 bytes before it are exactly the two
 *    instructions above, and imm64 is the window of a live arena; nothing
 *    else emits "movabs r10, imm64; add r10, reg" (the verifier rejects
 *    programs naming AX; blinding moves random constants into r10 and then
 *    xors, never adds);
 *  - the access is decoded to its length and, for loads, its destination.
 * Upstream's semantics: a load gives 0, a store or atomic is skipped
 * (EX_TYPE_BPF with the destination register to clear, or orig_ax).
 *
 * Since issue 15 the raise may let up to BPFA_AX_CHAIN_MAX accesses through
 * the same base follow one prefix (jit/raise.c, OPTIMISATIONS 2 and 3), with
 * up to BPFA_AX_BETWEEN_MAX instructions of a few kinds between them: the
 * faulting access is then recognised by decoding forward from a prefix
 * before it, instruction by instruction, to exactly ip; every instruction
 * between leaves r10 as the prefix set it (an access or other instruction
 * that writes r10 ends a chain).
 */
#include <linux/bpf.h>
#include <linux/uaccess.h>
#include <linux/stddef.h>
#include <asm/extable.h>
#include <asm/extable_fixup_types.h>
#include <asm/ptrace.h>
#include <asm/unaligned.h>

#include "arena.h"
#include "fault.h"
#include "ksyms.h"
#include "raise.h"

#define X86_MAX_INSN	15
#define PRE_LEN		13	/* movabs r10, imm64 (10) + add r10, reg (3) */

/*
 * pt_regs offset of each x86 register, by its 4-bit encoding; entry
 * NO_CLEAR is orig_ax, what a store's or atomic's fixup "clears": the
 * handler (ex_handler_bpf() of 6.1) always zeroes one pt_regs slot, and
 * orig_ax of a kernel-mode #PF frame is read by nothing after the fixup (the
 * exit path skips it).  Clearing AX (r10) instead, as before issue 15, would
 * break a chain of accesses through r10 (jit/raise.c, OPTIMISATIONS 2): the
 * next access would go through 0.
 */
#define NO_CLEAR	16
static const u8 x86_reg_ptregs[NO_CLEAR + 1] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, cx),
	offsetof(struct pt_regs, dx), offsetof(struct pt_regs, bx),
	0xff /* rsp: never a BPF register */, offsetof(struct pt_regs, bp),
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
	offsetof(struct pt_regs, orig_ax),
};

/*
 * ex_handler_bpf() reads only ->fixup (length | pt_regs offset << 8), so
 * entries can live anywhere: one per (length, register) pair, built once.
 */
static struct exception_table_entry fixups[X86_MAX_INSN + 1][NO_CLEAR + 1];

void arena_fault_init(void)
{
	unsigned int len, reg;

	for (len = 0; len <= X86_MAX_INSN; len++) {
		for (reg = 0; reg <= NO_CLEAR; reg++) {
			fixups[len][reg].data = EX_TYPE_BPF;
			fixups[len][reg].fixup = len | (x86_reg_ptregs[reg] << 8);
		}
	}
}

static bool is_raise_prefix(const u8 *p)
{
	u64 base;

	if (p[0] != 0x49 || p[1] != 0xba)
		return false;
	/* add r10, reg: REX.W + REX.B (+ REX.R for r8-r15), 01, mod=11 rm=010 */
	if ((p[10] != 0x49 && p[10] != 0x4d) || p[11] != 0x01 || (p[12] & 0xc7) != 0xc2)
		return false;
	memcpy(&base, p + 2, sizeof(base));
	return arena_kern_vm_start_is_live(base);
}

/* Length and cleared register of the r10-based access at p, or false. */
static bool decode_access(const u8 *p, unsigned int *len, unsigned int *clear, bool *is_load)
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
	return true;
}

/* The 4-byte nop 6.1's JIT pads a shrunk jcc with (x86_nops[4], x86-64). */
static const u8 jit_nop4[4] = { 0x0f, 0x1f, 0x40, 0x00 };

/*
 * Length of the x86 instruction at p if it is one that 6.1's do_jit() emits
 * for an instruction a chain may run through (jit/raise.c, keeps_ax(): ALU
 * ADD/SUB/AND/OR/XOR/MOV, conditional jumps, plain LDX/STX) and it writes no
 * r10; else 0.  Exactly the JIT's encodings: an instruction it would not emit
 * there (a SIB byte, a 64-bit immediate, rip-relative or r10-based memory)
 * is refused, and a refusal only ends the chain, so the fixup says "not
 * ours" and the fault is the kernel's to report.  Why r10 is never written
 * or a base here: no BPF register maps to it (reg2hex[]), and the raise ends
 * a chain at every instruction naming AX.
 */
static unsigned int decode_between(const u8 *p)
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
 * A chain (jit/raise.c, OPTIMISATIONS 2, 3): up to BPFA_AX_CHAIN_MAX
 * accesses through r10 after one prefix, each an access that does not write
 * r10, with up to BPFA_AX_BETWEEN_MAX BPF instructions of decode_between()'s
 * kinds among them (at most three x86 instructions each: cmp, padding, jcc).
 * Is the instruction at buf[end] the last of a chain whose prefix starts at
 * buf[pre]?  Decodes forward from the prefix, so every byte between is
 * accounted for by decoded instructions; loads into r10 end it.
 */
static bool chain_reaches(const u8 *buf, unsigned int pre, unsigned int end)
{
	unsigned int at = pre + PRE_LEN, n = 0, between = 0, len, reg;
	bool load;

	if (!is_raise_prefix(buf + pre))
		return false;
	while (at < end) {
		if (decode_access(buf + at, &len, &reg, &load)) {
			if ((load && reg == 10) || ++n > BPFA_AX_CHAIN_MAX)
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
#define CHAIN_BACK	(PRE_LEN + (BPFA_AX_CHAIN_MAX - 1) * X86_MAX_INSN + \
			 BPFA_AX_BETWEEN_MAX * BETWEEN_LEN)

const struct exception_table_entry *arena_fault_fixup(unsigned long ip)
{
	u8 buf[CHAIN_BACK + X86_MAX_INSN] = { 0 };
	unsigned int len, reg, back, avail, end = CHAIN_BACK;
	bool load;

	if (!ksyms.is_bpf_text_address(ip))
		return NULL;
	/*
	 * The access itself (the image may end within 15 bytes of it), then as
	 * much before it as is readable: JIT images start on a page boundary
	 * or later, so the bytes before the first one may be unmapped.  One
	 * copy where all of it is readable, else byte by byte back to the gap.
	 */
	if (copy_from_kernel_nofault(buf + end, (void *)ip, X86_MAX_INSN) &&
	    copy_from_kernel_nofault(buf + end, (void *)ip, 8))
		return NULL;
	if (!decode_access(buf + end, &len, &reg, &load) || len > X86_MAX_INSN ||
	    x86_reg_ptregs[reg] == 0xff)
		return NULL;
	avail = CHAIN_BACK;
	if (copy_from_kernel_nofault(buf, (void *)(ip - CHAIN_BACK), CHAIN_BACK)) {
		for (avail = 0; avail < CHAIN_BACK; avail++)
			if (copy_from_kernel_nofault(buf + end - avail - 1,
						     (void *)(ip - avail - 1), 1))
				break;
	}
	for (back = PRE_LEN; back <= avail; back++) {
		if (chain_reaches(buf, end - back, end)) {
			/* the chain's movabs imm64: the arena's kernel base */
			arena_stat_fixup(get_unaligned((u64 *)(buf + end - back + 2)));
			return &fixups[len][reg];
		}
	}
	return NULL;
}

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
 * (EX_TYPE_BPF with the destination register, or the dead AX, to clear).
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

#define X86_MAX_INSN	15
#define PRE_LEN		13	/* movabs r10, imm64 (10) + add r10, reg (3) */

/* pt_regs offset of each x86 register, by its 4-bit encoding. */
static const u8 x86_reg_ptregs[16] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, cx),
	offsetof(struct pt_regs, dx), offsetof(struct pt_regs, bx),
	0xff /* rsp: never a BPF register */, offsetof(struct pt_regs, bp),
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
};

/*
 * ex_handler_bpf() reads only ->fixup (length | pt_regs offset << 8), so
 * entries can live anywhere: one per (length, register) pair, built once.
 */
static struct exception_table_entry fixups[X86_MAX_INSN + 1][16];

void arena_fault_init(void)
{
	unsigned int len, reg;

	for (len = 0; len <= X86_MAX_INSN; len++) {
		for (reg = 0; reg < 16; reg++) {
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
static bool decode_access(const u8 *p, unsigned int *len, unsigned int *clear)
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
	/* Loads clear their destination; anything else clears the dead AX. */
	*clear = load ? ((modrm >> 3) & 7) | ((rex & 4) << 1) : 10;
	return true;
}

const struct exception_table_entry *arena_fault_fixup(unsigned long ip)
{
	u8 buf[PRE_LEN + X86_MAX_INSN] = { 0 };
	unsigned int len, reg;

	if (!ksyms.is_bpf_text_address(ip))
		return NULL;
	if (copy_from_kernel_nofault(buf, (void *)(ip - PRE_LEN), sizeof(buf)) &&
	    copy_from_kernel_nofault(buf, (void *)(ip - PRE_LEN), PRE_LEN + 8))
		return NULL;
	if (!is_raise_prefix(buf) || !decode_access(buf + PRE_LEN, &len, &reg))
		return NULL;
	if (len > X86_MAX_INSN || x86_reg_ptregs[reg] == 0xff)
		return NULL;
	arena_stat_fixup(get_unaligned((u64 *)(buf + 2)));	/* the movabs imm64 */
	return &fixups[len][reg];
}

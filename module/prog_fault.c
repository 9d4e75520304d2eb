// SPDX-License-Identifier: GPL-2.0
/*
 * Fault fixups of raised arena accesses: the kernel side of
 * rewrite/fault_decode.c.
 *
 * Who reaches this: the search_bpf_extables() hook (prog_hooks.c), for a
 * kernel-mode fault that no stock exception table entry claims.  The
 * decoder says whether the faulting instruction is a raised access of a
 * live arena and which register its fixup clears; here it is given the
 * kernel's answers (BPF text, a fault-free read of the image, the live
 * arenas) and its verdict becomes an exception table entry of 6.1's
 * EX_TYPE_BPF: ex_handler_bpf() zeroes the pt_regs slot the entry names and
 * resumes after the access (upstream's semantics: a load gives 0, a store
 * or atomic is skipped).
 */
#include <linux/bpf.h>
#include <linux/uaccess.h>
#include <linux/stddef.h>
#include <asm/extable.h>
#include <asm/extable_fixup_types.h>
#include <asm/ptrace.h>

#include "arena.h"
#include "fault_decode.h"
#include "ksyms.h"
#include "prog_fault.h"

/*
 * pt_regs offset of each x86 register, by its 4-bit encoding; entry
 * BPFA_X86_NO_CLEAR (a store or an atomic) is orig_ax, which the fixup
 * "clears" instead of a register: ex_handler_bpf() always zeroes one slot,
 * and orig_ax of a kernel-mode #PF frame is read by nothing after the fixup
 * (the exit path skips it).  rsp is never a BPF register, and the decoder
 * never names it.
 */
static const u8 x86_reg_ptregs[BPFA_X86_NO_CLEAR + 1] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, cx),
	offsetof(struct pt_regs, dx), offsetof(struct pt_regs, bx),
	0xff /* rsp */, offsetof(struct pt_regs, bp),
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
static struct exception_table_entry fixups[BPFA_X86_MAX_INSN + 1][BPFA_X86_NO_CLEAR + 1];

void arena_fault_init(void)
{
	unsigned int len, reg;

	for (len = 0; len <= BPFA_X86_MAX_INSN; len++) {
		for (reg = 0; reg <= BPFA_X86_NO_CLEAR; reg++) {
			fixups[len][reg].data = EX_TYPE_BPF;
			fixups[len][reg].fixup = len | (x86_reg_ptregs[reg] << 8);
		}
	}
}

static bool fault_is_text(void *ctx, unsigned long addr)
{
	return ksyms.is_bpf_text_address(addr);
}

static int fault_read(void *ctx, void *dst, unsigned long addr, unsigned int n)
{
	return copy_from_kernel_nofault(dst, (void *)addr, n) ? -EFAULT : 0;
}

static bool fault_is_live(void *ctx, u64 kern_vm_start)
{
	return arena_kern_vm_start_is_live(kern_vm_start);
}

static const struct bpfa_fault_env fault_env = {
	.is_text = fault_is_text,
	.read = fault_read,
	.is_live = fault_is_live,
};

const struct exception_table_entry *arena_fault_fixup(unsigned long ip)
{
	struct bpfa_fault_fix fix;

	if (!bpfa_fault_decode(&fault_env, ip, &fix) || x86_reg_ptregs[fix.clear] == 0xff)
		return NULL;
	arena_stat_fixup(fix.kern_vm_start);
	return &fixups[fix.len][fix.clear];
}

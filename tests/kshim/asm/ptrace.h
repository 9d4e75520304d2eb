/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in (tests/kshim/README): 6.1's x86-64 layout, in order. */
#ifndef KSHIM_ASM_PTRACE_H
#define KSHIM_ASM_PTRACE_H
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
#endif

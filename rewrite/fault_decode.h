/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-arena-dkms: the decoder of raised arena accesses in x86-64 JIT images
 * (6.1's JIT), the other half of the raise (raise.c): given the ip of a
 * faulting instruction, is it a raised access, how long is it, and which
 * register does its fixup clear?  Plain C: compiles in the kernel and in
 * user space; what it needs of the kernel (BPF text, reading the image, the
 * live arenas) it asks through struct bpfa_fault_env.  The kernel glue
 * (exception table entries, counters) is module/prog_fault.c.
 */
#ifndef BPFA_FAULT_DECODE_H
#define BPFA_FAULT_DECODE_H

#include "insn.h"

/* Longest x86 instruction. */
#define BPFA_X86_MAX_INSN	15
/* What a store's or an atomic's fixup clears: no register (see fault_decode.c). */
#define BPFA_X86_NO_CLEAR	16

struct bpfa_fault_env {
	void *ctx;
	/* Is addr in a BPF program's JIT image? */
	bool (*is_text)(void *ctx, unsigned long addr);
	/* Copies n bytes at addr into dst: 0, or non-zero if any is unreadable. */
	int (*read)(void *ctx, void *dst, unsigned long addr, unsigned int n);
	/* Is kern_vm_start the kernel window of a live arena? */
	bool (*is_live)(void *ctx, __u64 kern_vm_start);
};

struct bpfa_fault_fix {
	unsigned int len;	/* of the faulting access: resume after it */
	/*
	 * x86 register (its 4-bit encoding) a load's fixup zeroes, or
	 * BPFA_X86_NO_CLEAR; never rsp (4).
	 */
	unsigned int clear;
	__u64 kern_vm_start;	/* of the arena the access goes to */
};

/*
 * Is the faulting instruction at ip a raised arena access (alone after its
 * prefix, or the last so far of a chain through one AX)?  true and *fix, or
 * false: not ours.
 */
bool bpfa_fault_decode(const struct bpfa_fault_env *env, unsigned long ip,
		       struct bpfa_fault_fix *fix);

#endif /* BPFA_FAULT_DECODE_H */

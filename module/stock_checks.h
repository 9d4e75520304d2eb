/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The permission checks the stock 6.1 bpf() path makes before it copies a
 * program or a BTF blob from user memory (stock_checks.c).
 */
#ifndef BPF_ARENA_STOCK_CHECKS_H
#define BPF_ARENA_STOCK_CHECKS_H

#include <linux/bpf.h>

/*
 * The caller's CAP_BPF or CAP_SYS_ADMIN, asked once per bpf() call (no audit
 * record: the stock path asks again and audits); the bpf argument below.
 */
bool stock_bpf_capable(void);
/*
 * 0 if the stock BPF_PROG_LOAD would go on to copy the instructions of attr
 * (size bytes of it valid), else the errno it returns first.  The caller then
 * lets the stock path answer, so the errno and any audit record stay the
 * kernel's own.
 */
int stock_prog_load_check(union bpf_attr *attr, unsigned int size, bool bpf);
/* Likewise for BPF_BTF_LOAD and its BTF blob. */
int stock_btf_load_check(union bpf_attr *attr, unsigned int size);
/* True if __sys_bpf() refuses cmd (EPERM) before it reads the attr. */
bool stock_sys_bpf_refuses_unread(int cmd, bool bpf);
/* bpf_verifier_log_attr_valid() of 6.1 on a command's log attrs. */
bool stock_log_attr_ok(u32 level, u64 buf, u32 size);

#endif /* BPF_ARENA_STOCK_CHECKS_H */

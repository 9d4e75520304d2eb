/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version-specific fact the module relies on lives here (and in
 * the feature probes of Kbuild that feed it), so a new kernel series is one
 * place to review.
 */
#ifndef BPF_ARENA_KERNEL_COMPAT_H
#define BPF_ARENA_KERNEL_COMPAT_H

/*
 * BPF_MAP_TYPE_ARENA, its kfuncs and the addr_space_cast instruction are
 * in-tree since 6.9 (and in distribution kernels that backported them).
 * Kbuild probes the kernel's uapi for the map type rather than comparing
 * version numbers, so backports are recognised too.  Where arena is native
 * the module builds as an inactive stub (module/main.c) that installs
 * nothing: the in-tree implementation is the authority and user space uses
 * it directly.
 */
#ifndef BPF_ARENA_KERNEL_HAS_NATIVE_ARENA
#define BPF_ARENA_KERNEL_HAS_NATIVE_ARENA 0
#endif

/*
 * The open-coded number iterators (bpf_iter_num_new/next/destroy, struct
 * bpf_iter_num in uapi bpf.h) are in-tree since 6.4.  Kbuild probes the
 * uapi for the struct; where they are native the module leaves bpf_for and
 * bpf_repeat to the kernel and provides no iterator of its own (kfunc.c).
 */
#ifndef BPF_ARENA_KERNEL_HAS_ITER_NUM
#define BPF_ARENA_KERNEL_HAS_ITER_NUM 0
#endif

#include <linux/bpf.h>
#include <linux/fdtable.h>

/*
 * 6.1 exports kern_sys_bpf() (kernel/bpf/syscall.c) for light skeletons but
 * declares it in no header: bpf() with every pointer in attr a kernel
 * pointer except log_buf, for the allowlisted commands (BPF_MAP_CREATE,
 * BPF_PROG_LOAD among them), checked against the current task.
 */
int kern_sys_bpf(int cmd, union bpf_attr *attr, unsigned int size);

/*
 * Facts of 6.1's x86-64 JIT the program side relies on (research notes
 * v61-verifier.md §4-5; rewrite/fault_decode.c decodes its output):
 *  - BPF_REG_AX is r10 and is never live across BPF instructions;
 *  - bpf_int_jit_compile() blinds constants itself, after our hook, and
 *    skips instructions naming AX;
 *  - ex_handler_bpf() reads only ->fixup: length | pt_regs offset << 8;
 *  - search_bpf_extables() is consulted for faults in BPF text only after
 *    the kernel's and modules' tables;
 *  - with subprograms, func[i] copies are JITed twice inside bpf_check(),
 *    before used_maps is set; bpf_prog_select_runtime() runs after
 *    bpf_check() and before the program gets an id or fd.
 */

/*
 * dup_fd() (fs/file.c, not exported; declared in linux/fdtable.h): Debian's
 * 6.1.0-5x kernels carry the 6.11 form dup_fd(oldf, punch_hole), NULL for a
 * whole copy, returning ERR_PTR.  Older 6.1 stables had
 * dup_fd(oldf, max_fds, &err); a build against one fails here, on purpose.
 */
static inline struct files_struct *arena_dup_fd(typeof(&dup_fd) fn, struct files_struct *oldf)
{
	return fn(oldf, NULL);
}

/*
 * struct btf (kernel/bpf/btf.c:224, private to btf.c) starts with `void
 * *data`: btf_parse()'s copy of the blob user space loaded, never changed
 * while a reference is held, whose own header gives its size (btf_check_
 * sec_info() makes the sections fill it exactly).  The loop pass extends a
 * program's BTF from it (rewrite/loops.c, prog_load.c).
 */
static inline const void *arena_btf_data(const struct btf *btf)
{
	return *(void * const *)btf;
}

#endif /* BPF_ARENA_KERNEL_COMPAT_H */

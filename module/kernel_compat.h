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
 * the module must not install itself: the in-tree implementation is the
 * authority and user space uses it directly.
 */
#ifndef BPF_ARENA_KERNEL_HAS_NATIVE_ARENA
#define BPF_ARENA_KERNEL_HAS_NATIVE_ARENA 0
#endif

#endif /* BPF_ARENA_KERNEL_COMPAT_H */

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * bpf_arena_loops.h: upstream's loop macros for BPF programs whose headers
 * predate them, included by bpf_arena.h.  Debian 12's libbpf 1.1 has no
 * bpf_for/bpf_repeat (libbpf >= 1.2's bpf_helpers.h), can_loop/cond_break
 * live only in upstream's selftests (bpf_experimental.h), and uapi bpf.h
 * and vmlinux.h have struct bpf_iter_num only since 6.4.  Each macro is
 * defined only where the headers already included lack it, with upstream's
 * definition, so a program written for upstream builds unchanged with
 * either toolchain; on 6.1 the bpf_arena module runs the loops (docs/LOOPS.md).
 * The parts that follow upstream: Copyright (c) 2023-2024 Meta Platforms,
 * Inc. and affiliates.
 */
#ifndef BPF_ARENA_LOOPS_H
#define BPF_ARENA_LOOPS_H

#ifdef __BPF__

/*
 * The number iterator's state.  Defined when asked (BPF_ARENA_ITER_NUM) or
 * when the uapi bpf.h included is older than 6.3 (no BPF_F_XDP_DEV_BOUND_ONLY:
 * struct bpf_iter_num came in 6.4, so 6.3's headers get neither, never a
 * redefinition).  vmlinux.h carries no version: with one dumped from a
 * kernel before 6.4 (Debian 12's), define BPF_ARENA_ITER_NUM to declare a
 * struct bpf_iter_num yourself; bpf_for() and bpf_repeat() below do not
 * need it.
 */
#if defined(BPF_ARENA_ITER_NUM) ||					\
	(defined(__LINUX_BPF_H__) && !defined(BPF_F_XDP_DEV_BOUND_ONLY) &&	\
	 !defined(__VMLINUX_H__))
struct bpf_iter_num {
	__u64 __opaque[1];
} __attribute__((aligned(8)));
#endif

/*
 * can_loop is true while the program's loop budget lasts (may_goto, 6.9+;
 * on 6.1 the module gives it the same budget); cond_break leaves the loop
 * it is in once the budget is spent.  As bpf_experimental.h: clang >= 19
 * knows the may_goto mnemonic, older clang gets its bytes (0xe5, the jump
 * offset in instructions).
 */
#ifndef can_loop
#ifdef __BPF_FEATURE_MAY_GOTO
#define can_loop					\
	({ __label__ l_break, l_continue;		\
	_Bool ret = 1;					\
	asm volatile goto("may_goto %l[l_break]"	\
		      :::: l_break);			\
	goto l_continue;				\
	l_break: ret = 0;				\
	l_continue:;					\
	ret;						\
	})
#else
#define can_loop					\
	({ __label__ l_break, l_continue;		\
	_Bool ret = 1;					\
	asm volatile goto("1:.byte 0xe5;		\
		      .byte 0;				\
		      .long ((%l[l_break] - 1b - 8) / 8) & 0xffff;	\
		      .short 0"				\
		      :::: l_break);			\
	goto l_continue;				\
	l_break: ret = 0;				\
	l_continue:;					\
	ret;						\
	})
#endif
#endif /* can_loop */

#ifndef cond_break
#ifdef __BPF_FEATURE_MAY_GOTO
#define cond_break					\
	({ __label__ l_break, l_continue;		\
	asm volatile goto("may_goto %l[l_break]"	\
		      :::: l_break);			\
	goto l_continue;				\
	l_break: break;					\
	l_continue:;					\
	})
#else
#define cond_break					\
	({ __label__ l_break, l_continue;		\
	asm volatile goto("1:.byte 0xe5;		\
		      .byte 0;				\
		      .long ((%l[l_break] - 1b - 8) / 8) & 0xffff;	\
		      .short 0"				\
		      :::: l_break);			\
	goto l_continue;				\
	l_break: break;					\
	l_continue:;					\
	})
#endif
#endif /* cond_break */

/*
 * bpf_for(i, start, end) and bpf_repeat(n), as libbpf >= 1.2's
 * bpf_helpers.h: where that header is not the one included (it defines
 * bpf_for and declares the kfuncs), the kfuncs are declared here as it
 * declares them, and the macros keep the iterator in a private struct of
 * the same size and alignment, so that they need no struct bpf_iter_num.
 */
#ifndef bpf_for
struct bpf_iter_num;

extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __weak __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __weak __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __weak __ksym;

struct bpf_arena_iter_num {
	__u64 __opaque[1];
} __attribute__((aligned(8)));

static __always_inline void bpf_arena_iter_num_destroy(struct bpf_arena_iter_num *it)
{
	bpf_iter_num_destroy((struct bpf_iter_num *)it);
}

#define bpf_for(i, start, end) for (						\
	struct bpf_arena_iter_num ___it __attribute__((aligned(8),		\
					cleanup(bpf_arena_iter_num_destroy))),	\
			    *___p __attribute__((unused)) = (			\
				bpf_iter_num_new((struct bpf_iter_num *)&___it,	\
						 (start), (end)),		\
				(void *)0);					\
	({									\
		int *___t = bpf_iter_num_next((struct bpf_iter_num *)&___it);	\
		(___t && ((i) = *___t, (i) >= (start) && (i) < (end)));		\
	});									\
)

#ifndef bpf_repeat
#define bpf_repeat(N) for (							\
	struct bpf_arena_iter_num ___it __attribute__((aligned(8),		\
					cleanup(bpf_arena_iter_num_destroy))),	\
			    *___p __attribute__((unused)) = (			\
				bpf_iter_num_new((struct bpf_iter_num *)&___it,	\
						 0, (N)),			\
				(void *)0);					\
	bpf_iter_num_next((struct bpf_iter_num *)&___it);			\
)
#endif /* bpf_repeat */
#endif /* bpf_for */

#endif /* __BPF__ */
#endif /* BPF_ARENA_LOOPS_H */

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Guarded copies: bpf_arena_read()/bpf_arena_write() return -EFAULT instead
 * of crashing when they hit an unallocated page of a BPF_F_SEGV_ON_FAULT
 * arena.
 *
 * Each copy puts a guard (jump buffer + the arena-side address window) on its
 * own stack and publishes it through a thread-local pointer; the SIGSEGV
 * handler, installed once per process, jumps back to the guard only for a
 * kernel-raised fault (si_code > 0) whose si_addr lies in that window of the
 * same thread.  Everything else goes to the handler that was installed
 * before ours, or to the default action.  Guards nest (a signal handler may
 * do its own guarded copy): each copy restores the guard it found.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <ucontext.h>

#include "internal.h"

struct guard {
	sigjmp_buf jb;
	uintptr_t lo;			/* the copy's arena-side window */
	size_t len;
	void *volatile fault_addr;	/* written by the handler */
};

/* initial-exec: a plain %fs-relative access, safe in a signal handler. */
static _Thread_local struct guard *volatile cur_guard
	__attribute__((tls_model("initial-exec")));

static struct sigaction old_act;	/* the handler before ours */
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_err;

static void call_with_mask(void (*fn)(int, siginfo_t *, void *), void (*plain)(int),
			   int sig, siginfo_t *si, void *uc)
{
	sigset_t mask = old_act.sa_mask, saved;

	if (!(old_act.sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	pthread_sigmask(SIG_BLOCK, &mask, &saved);
	if (fn)
		fn(sig, si, uc);
	else
		plain(sig);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/* What would have happened without us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	void (*plain)(int) = old_act.sa_handler;
	struct sigaction dfl;

	if ((old_act.sa_flags & SA_SIGINFO) && old_act.sa_sigaction) {
		call_with_mask(old_act.sa_sigaction, NULL, sig, si, uc);
		return;
	}
	if (plain != SIG_DFL && plain != SIG_IGN) {
		call_with_mask(NULL, plain, sig, si, uc);
		return;
	}
	/* A sent SIGSEGV that was ignored stays ignored. */
	if (plain == SIG_IGN && si->si_code <= 0)
		return;
	/*
	 * Default action: restore it; a fault re-executes the instruction and
	 * the kernel kills the process as usual (a fault cannot be ignored).
	 */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0)
		raise(sig);
}

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = cur_guard;
	int saved_errno = errno;

	if (g && si->si_code > 0 && (uintptr_t)si->si_addr - g->lo < g->len) {
		g->fault_addr = si->si_addr;
		/* Back to the signal mask of the faulting copy (sigsetjmp saved none). */
		pthread_sigmask(SIG_SETMASK, &((ucontext_t *)uc)->uc_sigmask, NULL);
		siglongjmp(g->jb, 1);
	}
	chain(sig, si, uc);
	errno = saved_errno;
}

static void install(void)
{
	struct sigaction sa, prev;

	/* Read the old action first so the handler never sees it half-written. */
	if (sigaction(SIGSEGV, NULL, &old_act)) {
		install_err = -errno;
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &prev)) {
		install_err = -errno;
		return;
	}
	/* Changed in between by another thread: chain to what we replaced. */
	if (memcmp(&prev, &old_act, sizeof(prev)))
		old_act = prev;
}

/* Returns 0, or -EFAULT with *fault_addr set. */
static int guarded_copy(void *dst, const void *src, size_t len, uintptr_t lo, void **fault_addr)
{
	struct guard g;
	struct guard *prev = cur_guard;

	g.lo = lo;
	g.len = len;
	g.fault_addr = NULL;
	if (sigsetjmp(g.jb, 0)) {
		cur_guard = prev;
		atomic_signal_fence(memory_order_seq_cst);
		*fault_addr = g.fault_addr;
		return -EFAULT;
	}
	cur_guard = &g;
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(dst, src, len);
	atomic_signal_fence(memory_order_seq_cst);
	cur_guard = prev;
	return 0;
}

static int copy(const struct bpf_arena *a, const char *func, void *dst, const void *src,
		size_t len, const void *in_arena)
{
	uintptr_t lo = (uintptr_t)in_arena, base;
	char buf[BA_ERRSTR_LEN];
	void *fault_addr;
	int err;

	if (!a || (!dst && len) || (!src && len)) {
		pr_warn("%s: arena, dst and src must not be NULL\n", func);
		return lbpfa_err(-EINVAL);
	}
	base = (uintptr_t)a->base;
	if (lo < base || lo - base > a->size || len > a->size - (lo - base)) {
		pr_warn("%s: [%p, +%zu) is not inside the arena [%p, +%zu)\n", func, in_arena,
			len, a->base, a->size);
		return lbpfa_err(-ERANGE);
	}
	if (!len)
		return 0;
	pthread_once(&install_once, install);
	if (install_err) {
		pr_warn("%s: cannot install the SIGSEGV handler: %s\n", func,
			lbpfa_strerror(install_err, buf, sizeof(buf)));
		return lbpfa_err(install_err);
	}
	err = guarded_copy(dst, src, len, lo, &fault_addr);
	if (err) {
		pr_debug("%s: %zu bytes at %p: page %p is not allocated%s\n", func, len, in_arena,
			 (void *)((uintptr_t)fault_addr & ~(uintptr_t)(lbpfa_page_size() - 1)),
			 a->map_flags & BPF_ARENA_F_SEGV_ON_FAULT ? " (BPF_F_SEGV_ON_FAULT arena)"
								  : " or not mapped");
		return lbpfa_err(err);
	}
	return 0;
}

BA_API int bpf_arena_read(const struct bpf_arena *arena, void *dst, const void *src, size_t len)
{
	return copy(arena, "bpf_arena_read", dst, src, len, src);
}

BA_API int bpf_arena_write(const struct bpf_arena *arena, void *dst, const void *src, size_t len)
{
	return copy(arena, "bpf_arena_write", dst, src, len, dst);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* fault_guard.c: catching a synchronous fault in called code. See fault_guard.h.
 *
 * A guarded call runs with guard_jmp pointing at a sigsetjmp buffer on the calling thread;
 * the handler jumps back there for a fault on that thread, and passes every other signal
 * to the handler that was installed before ours. Faults are synchronous, so the jump
 * lands on the thread that faulted. A per-thread alternate stack lets a stack overflow in
 * the called code be caught too. */
#include "engine/plugins/fault_guard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const int guarded_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define N_GUARDED (sizeof guarded_signals / sizeof guarded_signals[0])
static struct sigaction previous[N_GUARDED];
static _Thread_local sigjmp_buf *guard_jmp;
static _Thread_local volatile sig_atomic_t guard_sig;

static void on_fault(int sig, siginfo_t *si, void *uc) {
    sigjmp_buf *jb = guard_jmp;
    if (jb) {
        guard_jmp = NULL;
        guard_sig = sig;
        siglongjmp(*jb, 1);
    }
    for (size_t i = 0; i < N_GUARDED; i++) {
        if (guarded_signals[i] != sig) continue;
        const struct sigaction *p = &previous[i];
        if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
            p->sa_sigaction(sig, si, uc);
            return;
        }
        if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
            p->sa_handler(sig);
            return;
        }
    }
    /* Nobody else wants it: die of it, as without a handler. */
    signal(sig, SIG_DFL);
    raise(sig);
}

void eng_fault_guard_install(void (*report)(int sig, int err)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_GUARDED; i++)
        if (sigaction(guarded_signals[i], &sa, &previous[i]) < 0 && report)
            report(guarded_signals[i], errno);
}

#define ALT_STACK_BYTES (64 * 1024)
static pthread_key_t alt_key;
static pthread_once_t alt_once = PTHREAD_ONCE_INIT;
static _Thread_local bool alt_checked;

static void alt_free(void *p) {
    stack_t cur, off = {.ss_flags = SS_DISABLE};
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == p) sigaltstack(&off, NULL);
    free(p);
}

static void alt_key_make(void) {
    pthread_key_create(&alt_key, alt_free);
}

/* Gives the calling thread an alternate signal stack unless it has one (ASan makes its
 * own; replacing it would make ASan unmap ours at thread exit). */
static void alt_stack_ensure(void) {
    if (alt_checked) return;
    alt_checked = true;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)) return;
    void *p = malloc(ALT_STACK_BYTES);
    if (!p) return;
    stack_t ss = {.ss_sp = p, .ss_size = ALT_STACK_BYTES, .ss_flags = 0};
    pthread_once(&alt_once, alt_key_make);
    if (sigaltstack(&ss, NULL) < 0 || pthread_setspecific(alt_key, p) != 0) {
        stack_t off = {.ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
        free(p);
    }
}

int eng_fault_guarded(int (*fn)(void *), void *arg, int *sig) {
    alt_stack_ensure();
    sigjmp_buf jb;
    sigjmp_buf *volatile outer = guard_jmp; /* not expected, but keep a caller's guard */
    /* The signal mask is not saved: that is a system call on every guarded call (every
     * driver step of every execution). A fault leaves only its own signal blocked (the
     * handler's sa_mask is empty, and a fault with it blocked would have killed us), so
     * unblocking that one restores the mask. */
    if (sigsetjmp(jb, 0) != 0) {
        guard_jmp = outer;
        *sig = guard_sig;
        sigset_t faulted;
        sigemptyset(&faulted);
        sigaddset(&faulted, guard_sig);
        pthread_sigmask(SIG_UNBLOCK, &faulted, NULL);
        return -1;
    }
    guard_jmp = &jb;
    int rc = fn(arg);
    guard_jmp = outer;
    *sig = 0;
    return rc;
}

const char *eng_fault_signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "a signal";
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/* fault_guard: runs a call into untrusted code (a vendor plugin) so that a synchronous
 * fault inside it fails the call instead of killing the process.
 *
 * Contract:
 * - eng_fault_guard_install() installs handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL,
 *   keeping the handlers they replace; call it once per process (pthread_once) before the
 *   first guarded call. report(sig, errno), when given, hears of each signal it could not
 *   take.
 * - eng_fault_guarded() runs fn(arg) and returns its result with *sig = 0, or returns -1
 *   with *sig set to the signal when fn faulted on this thread. The call is abandoned by
 *   siglongjmp: whatever fn held (locks, memory) stays as it was, so the caller must stop
 *   trusting what fn touched. The calling thread gets an alternate signal stack, so a
 *   stack overflow is caught too.
 * - A guarded signal outside a guarded call, or on another thread, goes to the handler
 *   installed before ours, or kills the process as it would have without us.
 */
#ifndef ENG_PLUGINS_FAULT_GUARD_H
#define ENG_PLUGINS_FAULT_GUARD_H

void eng_fault_guard_install(void (*report)(int sig, int err));
int eng_fault_guarded(int (*fn)(void *), void *arg, int *sig);
/* "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", else "a signal". */
const char *eng_fault_signal_name(int sig);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* quiet: whether the machine was left to a timing test, measured rather than guessed from the
 * load average (which the test's own threads raise).
 *
 * Contract: tst_quiet_start() notes the CPU time the whole machine has spent working
 * (/proc/stat: every state but idle and iowait, steal included: a hypervisor's other guests
 * take CPUs too) and what this process and the process `other` (a daemon under test; 0 for
 * none) have used; tst_quiet_others() gives the CPUs everything else kept busy since, on
 * average (0.5: half of one CPU's time). Ticks are 10 ms: over a window of seconds the
 * figure is good to a few hundredths. */
#ifndef TST_SUPPORT_QUIET_H
#define TST_SUPPORT_QUIET_H

#include <stdint.h>
#include <sys/types.h>

/* Whether a timing bound means anything in this build: not under AddressSanitizer or
 * ThreadSanitizer, which make the code (the daemon is built as the tests are) several times
 * slower. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TST_TIMING_MEANINGFUL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TST_TIMING_MEANINGFUL 0
#endif
#endif
#ifndef TST_TIMING_MEANINGFUL
#define TST_TIMING_MEANINGFUL 1
#endif

typedef struct tst_quiet {
    pid_t other;
    uint64_t busy_ticks, own_ticks, t_ns;
} tst_quiet;

void tst_quiet_start(tst_quiet *q, pid_t other);
double tst_quiet_others(const tst_quiet *q);

#endif

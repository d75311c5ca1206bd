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

typedef struct tst_quiet {
    pid_t other;
    uint64_t busy_ticks, own_ticks, t_ns;
} tst_quiet;

void tst_quiet_start(tst_quiet *q, pid_t other);
double tst_quiet_others(const tst_quiet *q);

#endif

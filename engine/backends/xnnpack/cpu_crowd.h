/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_crowd: whether other threads of the machine already fill its CPUs, for the XNNPACK
 * backend's choice between running an operator on its thread pool or on the calling
 * thread alone (xnn.c).
 *
 * Why: XNNPACK's pool threads wait for each other by spinning, at the end of every
 * operator and between operators. When every CPU already has another runnable thread, a
 * pool thread the kernel has set aside holds up the rest, which spin through their own
 * time slices waiting for it: measured with four busy processes on two CPUs, the pool spent
 * three to five times as long spinning as computing, and one MobileNet took 4 to 30 times
 * its quiet time, varying from run to run. One thread computing alone gets its fair share
 * and wastes none of it.
 *
 * Contract:
 * - eng_cpus_crowded(pool_threads) is true when the machine's runnable threads, less the
 *   caller and the pool's other pool_threads - 1 threads (they may be spinning), are at
 *   least as many as its online CPUs. The count is the kernel's (the fourth field of
 *   /proc/loadavg), read at most once per ENG_CROWD_PERIOD_NS by any thread of the
 *   process; between reads every caller gets the last answer.
 * - Thread-safe and cheap: one clock read per call, one pread per period.
 * - NND_ENGINE_CROWD=0 in the environment (read once) turns it off: always false. Where
 *   /proc/loadavg cannot be read it is always false. */
#ifndef ENG_BACKENDS_XNNPACK_CPU_CROWD_H
#define ENG_BACKENDS_XNNPACK_CPU_CROWD_H

#include <stdbool.h>
#include <stddef.h>

#define ENG_CROWD_PERIOD_NS 2000000ull

enum { ENG_CPU_CROWD_AUTO = -1, ENG_CPU_CROWD_NEVER = 0, ENG_CPU_CROWD_ALWAYS = 1 };

bool eng_cpus_crowded(size_t pool_threads);
void eng_cpus_crowd_mode(int mode);

#endif

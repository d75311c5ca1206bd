/* SPDX-License-Identifier: Apache-2.0 */
/* clock: CLOCK_MONOTONIC in nanoseconds (through the vDSO: no system call). Every duration
 * the engine measures or bounds (control-flow timeouts, a driver partition's time, the pool's
 * roll call) reads it, and so do the scheduler (sched/, above the engine) and the bench's
 * and tests' timing (tests/support/timing.h). */
#ifndef ENG_BASE_CLOCK_H
#define ENG_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t eng_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* threads: the rows of `make bench` for the threads of one process sharing its one
 * connection, through the NNAPI layer as an application uses it (tests/ndk/ndk_load.h), on a
 * daemon of their own (default settings):
 *   high_p90_thread   p90 latency of HIGH executions of a 12-layer FULLY_CONNECTED chain
 *                     ([32, 1024] floats) from one thread while another thread of the same
 *                     process floods LOW executions of the same model, over its p90 with
 *                     the daemon idle (target <= 1.5);
 *   threads_vs_procs  executions per second of a small model (ADD of two [16] floats)
 *                     computed back to back by 8 threads of one process, over 8 processes
 *                     doing the same; both sides pinned to the same CPU (target >= 0.9).
 * Each row is the median of BENCH_THREADS_REPEATS measurements, alternating the sides.
 * Returns 0 and fills *out; -1 on failure (message on stderr). */
#ifndef BENCH_THREADS_H
#define BENCH_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#define BENCH_THREADS_REPEATS 3

typedef struct bench_threads {
    double high_ratio;                /* the median run's flood p90 / idle p90 */
    double idle_p90_ns, flood_p90_ns; /* of that run */
    double idle_median_ns, flood_median_ns;
    uint64_t low_done;
    double rate_ratio;               /* the median run's threads / processes */
    double rate_threads, rate_procs; /* executions per second, that run */
    int cpu;                         /* where the rate workers ran */
    double high_runs[BENCH_THREADS_REPEATS], rate_runs[BENCH_THREADS_REPEATS];
} bench_threads;

int bench_threads_rows(bench_threads *out, bool priority, bool rates);

#endif

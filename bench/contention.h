/* SPDX-License-Identifier: Apache-2.0 */
/* contention: the row of `make bench` that shows what sharing one service buys over each
 * process running its own kernels:
 *   contention_high_p99  four processes run the FLOAT32 MobileNet (mobilenet.h) in a loop
 *        through a daemon of their own (default settings) with the NNAPI names, one
 *        compiled at HIGH priority and three at LOW (one app: the same user), and the p99
 *        latency of the HIGH one's executions; over the p99 of one of four processes each
 *        running the same MobileNet on XNNPACK's runtime in process (mobilenet_xnn.h,
 *        a thread pool as wide as the CPUs) at default priority (target <= 0.5).
 * Both sides fork their four processes from the bench, which is pinned (bench.c): every
 * process, its threads and the daemon share the same CPUs. Each process builds and warms
 * up its model, then all start together; the measured one runs for
 * BENCH_CONTENTION_SECONDS, the three others until it is done and a little after, so that
 * every measured execution had them competing. The sides alternate, the in-process one
 * first. Returns 0 and fills *out; -1 on failure (message on stderr). */
#ifndef BENCH_CONTENTION_H
#define BENCH_CONTENTION_H

#include <stdint.h>

#define BENCH_CONTENTION_SECONDS 12.0
#define BENCH_CONTENTION_PROCS   4

typedef struct bench_contention_side {
    double p99_ns, median_ns; /* of the measured process's executions */
    uint64_t samples;         /* its executions in the window */
    uint64_t others_done;     /* what the three others completed meanwhile */
} bench_contention_side;

typedef struct bench_contention {
    bench_contention_side nnd, inproc;
} bench_contention;

int bench_contention_rows(bench_contention *out);

#endif

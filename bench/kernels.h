/* SPDX-License-Identifier: Apache-2.0 */
/* kernels: the compute rows of `make bench`, each two timings taken in one run, as
 * medians over trials that alternate between the two sides in rounds.
 *   inproc           a MobileNet-like FLOAT32 model (built here) executed through the
 *                    daemon, and the same model prepared and run in this process by the
 *                    engine library;
 *   inproc_loaded    inproc again while 2 busy processes per CPU (nice 0, on the same
 *                    CPUs) load the machine: the daemon's threads must keep the share of
 *                    the CPU that the application's own threads get (docs/threads.md);
 *   conv_vs_xnnpack  one CONV_2D through the daemon, and XNNPACK's operator on the same
 *                    shapes and a pthreadpool of as many threads, called directly;
 *   fc_vs_xnnpack    the same for FULLY_CONNECTED.
 * Each returns 0 and fills *a (daemon) and *b (the other side) in nanoseconds, and
 * *flops with the work of one execution (0 for inproc); -1 on failure (message on
 * stderr). */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

#include "tests/support/harness.h"

typedef struct bench_pair {
    double a_ns, b_ns, flops;
    const char *shape; /* what was measured, for the notes under the table */
} bench_pair;

/* Alternates rounds of per_round runs of side a then of side b (b_rest, if any, after
 * each round of b), after three warm-up runs of each; medians into out->a_ns and
 * out->b_ns. -1 when a run fails. */
typedef double (*bench_run_fn)(void *ctx);
int bench_alternate(bench_run_fn a, void *actx, bench_run_fn b, void *bctx, void (*b_rest)(void *),
                    int rounds, int per_round, bench_pair *out);

int bench_inproc(const tst_daemon *d, bench_pair *out);
/* *hogs: how many busy processes ran. */
int bench_inproc_loaded(const tst_daemon *d, bench_pair *out, int *hogs);
int bench_conv_vs_xnnpack(const tst_daemon *d, bench_pair *out);
int bench_fc_vs_xnnpack(const tst_daemon *d, bench_pair *out);

#endif

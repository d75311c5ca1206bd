/* SPDX-License-Identifier: Apache-2.0 */
/* transformer: the transformer row of `make bench` (group transformer), two timings of one
 * feed-forward block taken in one run, as medians over alternating rounds
 * (bench_alternate):
 *   transformer_xnn  x [1, 128, 512] by a constant [1, 512, 2048] (BATCH_MATMUL), TANH, by
 *                    a constant [1, 2048, 512] (BATCH_MATMUL), FLOAT32, built through
 *                    libnnd's NNAPI names and executed through the daemon / the same block
 *                    on XNNPACK's operators called in process: two fully connected
 *                    operators with the weights packed once, and TANH as XNNPACK computes
 *                    it in this version (no FLOAT32 tanh operator: 2 sigmoid(2x) - 1 around
 *                    its sigmoid operator), on a pthreadpool of as many threads as this
 *                    process may use CPUs (target <= 1.2).
 * Both sides run on the CPUs the bench pinned itself (and so the daemon) to.
 * Returns 0, or -1 with a message on stderr. */
#ifndef BENCH_TRANSFORMER_H
#define BENCH_TRANSFORMER_H

#include "bench/kernels.h"

typedef struct bench_transformer {
    bench_pair xnn;
    double diff; /* the largest difference of an output element between the two sides */
} bench_transformer;

int bench_transformer_rows(const tst_daemon *d, bench_transformer *out);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* mobilenet_rows: the MobileNet rows of `make bench` (group mobilenet), each two timings
 * of the one MobileNet v1 (mobilenet.h) taken in one run, as medians over alternating
 * rounds (bench_alternate):
 *   mnet_f32_xnn  FLOAT32 through the daemon (NNAPI names) / the same net on XNNPACK's
 *                 subgraph runtime in process (target <= 1.1)
 *   mnet_q8_xnn   the same in QUANT8 (target <= 1.1)
 *   mnet_f16_f32  FLOAT16 through the daemon / FLOAT32 through the daemon (<= 1.15)
 *   mnet_s8_q8    INT8 (signed activations, per-channel convolution weights) through the
 *                 daemon / QUANT8 through the daemon (<= 1.0: signed is the fast path)
 *   mnet_s8_xnn   XNNPACK's qs8/qc8 operators on the same INT8 net (its subgraph runtime,
 *                 up to the logits) / the daemon's INT8 execution (>= 0.9)
 * Returns 0, or -1 with a message on stderr. */
#ifndef BENCH_MOBILENET_ROWS_H
#define BENCH_MOBILENET_ROWS_H

#include "tests/support/harness.h"
#include "bench/kernels.h"

typedef struct bench_mobilenet {
    bench_pair f32_xnn, q8_xnn, f16_f32, s8_q8, s8_xnn;
    /* Largest difference of an output probability between the two sides (INT8 against
     * XNNPACK: of a logit). */
    double f32_diff, q8_diff, f16_diff, s8_diff;
} bench_mobilenet;

int bench_mobilenet_rows(const tst_daemon *d, bench_mobilenet *out);

#endif

/* mobilenet_rows: the MobileNet rows of `make bench` (group mobilenet), each two timings
 * of the one MobileNet v1 (mobilenet.h) taken in one run, as medians over alternating
 * rounds (bench_alternate):
 *   mnet_f32_xnn  FLOAT32 through the daemon (NNAPI names) / the same net on XNNPACK's
 *                 subgraph runtime in process (target <= 1.1)
 *   mnet_q8_xnn   the same in QUANT8 (target <= 1.1)
 *   mnet_f16_f32  FLOAT16 through the daemon / FLOAT32 through the daemon (<= 1.15)
 * Returns 0, or -1 with a message on stderr. */
#ifndef NND_BENCH_MOBILENET_ROWS_H
#define NND_BENCH_MOBILENET_ROWS_H

#include "harness.h"
#include "kernels.h"

typedef struct bench_mobilenet {
    bench_pair f32_xnn, q8_xnn, f16_f32;
    /* Largest difference of an output probability between the two sides. */
    double f32_diff, q8_diff, f16_diff;
} bench_mobilenet;

int bench_mobilenet_rows(const nnd_test_daemon *d, bench_mobilenet *out);

#endif

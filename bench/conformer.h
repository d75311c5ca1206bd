/* SPDX-License-Identifier: Apache-2.0 */
/* conformer: the rows `conformer_like` and `attention_fc` of `make bench` (group
 * transformer). Each times one FLOAT32 block built through libnnd's NNAPI names and executed
 * through the daemon (input and output in one shared memfd) against the same block on
 * XNNPACK's operators called in process (weights packed once, every operator set up once,
 * a pthreadpool of as many threads as the process may use CPUs), medians over alternating
 * rounds (bench_alternate), both sides on the CPUs the bench pinned itself (and so the
 * daemon) to. The daemon's side is compiled for nnd-cpu by name and measures its timing.
 *   conformer_like  a conformer-style block on x [T 64, D 144], FF 576, kernel 31: a
 *                   feed-forward half (layer norm, FULLY_CONNECTED to FF, swish as
 *                   LOGISTIC and MUL, FULLY_CONNECTED back, ADD), single-head attention
 *                   (layer norm, three FULLY_CONNECTED, BATCH_MATMUL q k^T, SOFTMAX,
 *                   BATCH_MATMUL by v, FULLY_CONNECTED, ADD), a convolution module (layer
 *                   norm, a GLU as two FULLY_CONNECTED, LOGISTIC and MUL, RESHAPE to
 *                   [1, 1, T, D], DEPTHWISE_CONV_2D 1 x 31 along the sequence, RESHAPE
 *                   back, swish, FULLY_CONNECTED, ADD); each layer norm is MEAN over the
 *                   last axis, SUB, MUL, MEAN, ADD of epsilon, RSQRT, MUL (gain and bias
 *                   folded into the next FULLY_CONNECTED). XNNPACK's side has no mean or
 *                   rsqrt operator of that shape: global average pooling over the row and
 *                   square root then divide. Target <= 1.2.
 *   attention_fc    x [64, 256] through two FULLY_CONNECTED 256 -> 256 with bias (an
 *                   attention block's projection pair). Target <= 1.5.
 * Returns 0, or -1 with a message on stderr. */
#ifndef BENCH_CONFORMER_H
#define BENCH_CONFORMER_H

#include "bench/kernels.h"

/* One row: the pair (a: through the daemon, b: in process) and, of the daemon's side, the
 * medians of its own timing (ANeuralNetworksExecution_getDuration): the time in the engine
 * (ON_HARDWARE) and in the daemon from the request to the reply (IN_DRIVER); the rest of
 * a_ns is libnnd, the socket and the wake-ups on both sides. */
typedef struct bench_conformer_row {
    bench_pair pair;
    double in_engine_ns, in_daemon_ns;
} bench_conformer_row;

typedef struct bench_conformer {
    bench_conformer_row block, attention;
    double block_diff, attention_diff; /* largest output difference between the sides */
} bench_conformer;

int bench_conformer_rows(const tst_daemon *d, bool block, bool attention, bench_conformer *out);
/* Prints the row's note line (what was measured, the times, the daemon's own timing). */
void bench_conformer_note(const char *name, const bench_conformer_row *r, double diff);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* mobilenet_xnn: a bench_net (mobilenet.h) on XNNPACK's own subgraph runtime in this
 * process (xnn_define_* and xnn_create_runtime_v2: what TFLite's XNNPACK delegate runs),
 * with a pthreadpool of as many threads as this process may use CPUs. FLOAT32, QUANT8
 * (quint8 values) and INT8 (qint8 values, qcint8 per-channel convolution weights). The
 * subgraph has no quantized SOFTMAX in this version: QUANT8 runs XNNPACK's softmax_nc_qu8
 * operator after the runtime; INT8 has no such operator, so its XNNPACK side stops at
 * the logits (the daemon's side also computes the 1000-element SOFTMAX).
 *
 * Contract: bench_xnn_open() returns 0 with the runtime set up on the given input, or -1
 * with a message on stderr. bench_xnn_run() is one invocation and returns its duration
 * in nanoseconds, or -1; bench_xnn_rest() puts the pool's spinning workers to sleep.
 * bench_xnn_create_ns(net) defines the net on a fresh subgraph and creates its runtime
 * (XNNPACK's operators, weights packed), timed, then deletes both: returns the time in
 * nanoseconds, or -1 with a message on stderr. */
#ifndef BENCH_MOBILENET_XNN_H
#define BENCH_MOBILENET_XNN_H

#include "tests/support/mobilenet.h"

typedef struct bench_xnn bench_xnn;

bench_xnn *bench_xnn_open(const bench_net *net, const void *input);
double bench_xnn_run(void *x);
double bench_xnn_create_ns(void *net);
void bench_xnn_rest(void *x);
/* The last invocation's output (INT8: the logits). */
const void *bench_xnn_output(const bench_xnn *x);
void bench_xnn_close(bench_xnn *x);

#endif

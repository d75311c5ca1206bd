/* SPDX-License-Identifier: Apache-2.0 */
/* partition: the row of `make bench` for a model partitioned across devices (group
 * partition). A chain of 64 steps over [65536] floats, 32 ADD (which the example driver
 * nnd-example takes, as one partition) then 32 SUB (which stay on nnd-cpu), on a daemon that
 * loads this build's drivers, compiled for every device and for nnd-cpu alone.
 * Medians over alternating rounds of executions.
 *   partition_cpu  partitioned execution / the same model on nnd-cpu alone (reported: it
 *                  measures the example's plain C kernels against XNNPACK as much as the
 *                  hand-over between devices, which costs nothing but a step boundary).
 * Returns 0 and fills *out (a: partitioned, b: nnd-cpu), or -1 with a message on stderr. */
#ifndef BENCH_PARTITION_H
#define BENCH_PARTITION_H

#include "bench/kernels.h"

int bench_partition_rows(bench_pair *out);

#endif

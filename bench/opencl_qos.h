/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_qos: the priority row of the opencl group.
 *   opencl_high_p99  four client processes on one daemon (opencl_rows.h), each with its own
 *        compilation for nnd-opencl of the same small convolution stack: one at HIGH
 *        priority, three at LOW. The HIGH one runs BENCH_OCL_QOS_SAMPLES executions with a
 *        short pause between them alone, and as many while the three LOW ones run back to
 *        back, in alternating windows (6 of each) so that noise from elsewhere on the machine
 *        falls on both; the row is its p99 under the flood over its p99 alone (target
 *        <= 1.5), the median of BENCH_OCL_QOS_REPEATS such runs (each with fresh processes).
 * bench_opencl_qos() returns 0 and fills *out, or -1 with a message on stderr. The caller
 * has set NND_SOCKET to the daemon and made the rest of the environment (NND_OPENCL_*). */
#ifndef BENCH_OPENCL_QOS_H
#define BENCH_OPENCL_QOS_H

#include <stdint.h>

#define BENCH_OCL_QOS_SAMPLES 300
#define BENCH_OCL_QOS_REPEATS 3

typedef struct bench_ocl_qos {
    double ratio; /* the median run's flood p99 / alone p99 */
    double alone_p99_ns, flood_p99_ns, alone_median_ns, flood_median_ns; /* that run's */
    double alone_p90_ns, flood_p90_ns;                                   /* that run's */
    uint64_t low_done;                                                   /* that run's */
    double ratio_runs[BENCH_OCL_QOS_REPEATS];
} bench_ocl_qos;

int bench_opencl_qos(bench_ocl_qos *out);

#endif

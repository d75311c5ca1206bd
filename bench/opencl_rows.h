/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_rows: the rows of `make bench` for the OpenCL driver (group opencl), each two
 * timings taken in one run. The daemon side is a daemon of the bench's own that loads
 * nnd-opencl (build/drivers-opencl, through its driver host, NND_OPENCL_CPU=1 so that a
 * CPU device such as PoCL's counts), reached through the NNAPI names with the compilation
 * made for that one device (opencl_nnapi.h).
 *   mnet_f32_opencl  MobileNet v1 FLOAT32 (mobilenet.h) through the daemon on nnd-opencl /
 *                    the bench's plain OpenCL program (opencl_plain.h) running the same
 *                    kernels on the same device, measured both ways where the device has
 *                    command buffers (recorded once, or each launch enqueued): against
 *                    the faster (target <= 1.1)
 *   mnet_opencl_cpu  the same MobileNet through the daemon, on nnd-opencl / on nnd-cpu
 *                    (noted: on PoCL that compares two CPU code paths)
 *   fc_opencl        FULLY_CONNECTED [128, 2048] x [2048, 2048] (zero bias) GFLOP/s through
 *                    the daemon on nnd-opencl / CLBlast's SGEMM on the same device, its input
 *                    written and its output read as the driver does (target >= 0.9; n/a
 *                    when the bench was built without CLBlast)
 *   opencl_cache     MobileNet compiled with a cache directory and run once, on a fresh
 *                    daemon whose nnd-opencl program cache and whose PoCL kernel cache
 *                    (POCL_CACHE_DIR) are empty: cold; then on fresh daemons with that nnd
 *                    cache and those files (PoCL's cache empty again): from the cache, the
 *                    median of 3 (target <= 0.2)
 *   opencl_high_p99  see opencl_qos.h (target <= 1.5)
 * Medians over alternating rounds (bench_alternate). With no OpenCL platform or device,
 * or no nnd-opencl built, the rows are not measured and `skip` says why (the caller
 * prints them as n/a). Returns 0, or -1 on a failure (message on stderr). */
#ifndef BENCH_OPENCL_ROWS_H
#define BENCH_OPENCL_ROWS_H

#include <stdbool.h>

#include "bench/kernels.h"
#include "bench/opencl_qos.h"

typedef struct bench_opencl {
    char skip[200];        /* non-empty: nothing was measured, and why */
    char device[320];      /* the OpenCL device measured */
    bool cmdbuf;           /* the driver (and so the plain program) records command buffers */
    bench_pair mnet;       /* a: daemon on nnd-opencl, b: plain program, the faster way */
    bench_pair mnet_same;  /* against the plain program the driver's way (cmdbuf or not) */
    bench_pair mnet_other; /* against it the other way; 0 where the device has one way */
    double mnet_diff;      /* largest difference of an output, daemon against plain */
    bench_pair mnet_cpu;   /* a: nnd-opencl, b: nnd-cpu, both through the daemon */
    bench_pair fc;         /* a: daemon, b: CLBlast; flops set */
    char fc_skip[120];     /* non-empty: fc not measured, and why */
    double fc_diff;
    double cache_cold_ns, cache_hit_ns, cache_hit_runs[3];
    bench_ocl_qos qos;
} bench_opencl;

/* The daemon for the opencl rows: the nnd-opencl drivers directory, NND_OPENCL_CPU=1.
 * Shared with opencl_qos.c. */
struct tst_daemon;
int bench_opencl_daemon(struct tst_daemon *d);

int bench_opencl_rows(bench_opencl *out, bool mnet, bool fc, bool cache, bool qos);

#endif

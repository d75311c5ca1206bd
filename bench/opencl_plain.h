/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_plain: the bench's plain OpenCL program, the baseline of mnet_f32_opencl. It runs a
 * model (a tests/drivers om_model) on the device nnd-opencl would call `nnd-opencl` (the
 * first that the driver's own ocl_devices_open() reports), with the driver's own program
 * (ocl_device_program(): same source, options and disk cache) and the driver's own lowering
 * (ocl_plan, ocl_lower), so it enqueues the very kernels, arguments and work sizes the
 * driver does; the rest is plain OpenCL written here: one buffer per plan buffer, the
 * constants uploaded once, the kernels made and their arguments set once, and per run an
 * input write, the launches (each its own clEnqueueNDRangeKernel, or one recorded
 * cl_khr_command_buffer) and a blocking output read. No scheduler, no process boundary.
 *
 * Contract:
 * - bench_ocl_device_open() sets NND_OPENCL_CPU=1 (CPU devices count here, as in the tests)
 *   and returns the first device, or NULL with why (no platform, no device) in why.
 * - bench_ocl_plain_open() prepares m (one input, one output) on d; NULL with a message on
 *   stderr, also when m has an operation the driver would decline. cmdbuf: record the
 *   launches into a command buffer (NULL when the device has none: see has_cmdbuf).
 * - bench_ocl_plain_run() is one run of the input given at open into the output given at
 *   open, and returns its duration in nanoseconds, or -1. */
#ifndef BENCH_OPENCL_PLAIN_H
#define BENCH_OPENCL_PLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "drivers/opencl/ocl_device.h"
#include "tests/drivers/opencl_models.h"

typedef struct bench_ocl_plain bench_ocl_plain;

ocl_device *bench_ocl_device_open(char *why, size_t len);
void bench_ocl_device_close(ocl_device *d);
bool bench_ocl_has_cmdbuf(const ocl_device *d);
bench_ocl_plain *bench_ocl_plain_open(ocl_device *d, om_model *m, float *output, bool cmdbuf);
double bench_ocl_plain_run(void *plain);
void bench_ocl_plain_close(bench_ocl_plain *p);

#endif

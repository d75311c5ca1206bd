/* SPDX-License-Identifier: Apache-2.0 */
/* drv_relu: what the test drivers (drv_*_driver.c) share: RELU on TENSOR_FLOAT32 and
 * TENSOR_FLOAT16 as a driver of ABI 2 runs it, a whole partition of them at once with the
 * temporaries its own, and a call log. Not a template: drivers/example is.
 * - drv_relu_supported(): operation i of m is such a RELU; drv_relu_supported_operations()
 *   is the ABI's supported_operations() of a driver that runs only those.
 * - drv_relu_prepare(): a partition of them (each operation's operands as the model says);
 *   drv_relu_run() computes its outputs from its inputs (mem_at finds bytes by handle for a
 *   driver with device memory; NULL otherwise).
 * - drv_note() appends one line to the file NND_TEST_DRV_LOG names (nothing without). */
#ifndef TST_DAEMON_DRV_RELU_H
#define TST_DAEMON_DRV_RELU_H

#include "nnd/driver.h"

#define DRV_OP_RELU 19

typedef struct drv_relu drv_relu;

bool drv_relu_supported(const nnd_driver_model *m, uint32_t i);
int drv_relu_supported_operations(void *device, const nnd_driver_model *m, bool *supported,
                                  char *err, size_t errlen);
int drv_relu_prepare(const nnd_driver_model *m, drv_relu **out, char *err, size_t errlen);
int drv_relu_run(const drv_relu *p, nnd_driver_execution *x,
                 void *(*mem_at)(uint64_t handle, size_t bytes));
void drv_relu_free(drv_relu *p);
uint32_t drv_relu_ops(const drv_relu *p);
/* The first element of the partition's first input as a float (FLOAT16 read as such). */
float drv_relu_first(const drv_relu *p, const nnd_driver_execution *x,
                     void *(*mem_at)(uint64_t handle, size_t bytes));
void drv_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_memory: the driver's device memory (the ABI's allocate, memory_free, memory_read,
 * memory_write): client buffers made from a descriptor live in cl_mem buffers of the
 * device, and executions copy between them and a partition's buffers on the device, so a
 * model chained on its own outputs never copies them through the host.
 *
 * Contract: handles are per device, never 0, never reused while the device is open.
 * ocl_memory_get() returns the buffer and its size for a handle (NULL: no such handle);
 * the daemon frees a buffer only when no execution uses it, so the buffer stays valid for
 * the execution that looked it up. ocl_memory_close() frees what is left. */
#ifndef OCL_MEMORY_H
#define OCL_MEMORY_H

#include "nnd/driver.h"
#include "ocl_device.h"

int ocl_memory_allocate(void *device, const nnd_driver_buffer_desc *desc, uint64_t *handle,
                        char *err, size_t errlen);
void ocl_memory_free(void *device, uint64_t handle);
int ocl_memory_read(void *device, uint64_t handle, uint64_t offset, void *dst, size_t bytes);
int ocl_memory_write(void *device, uint64_t handle, uint64_t offset, const void *src, size_t bytes);
cl_mem ocl_memory_get(ocl_device *d, uint64_t handle, size_t *bytes);
void ocl_memory_close(ocl_device *d);

#endif

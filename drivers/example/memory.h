/* SPDX-License-Identifier: Apache-2.0 */
/* memory: the example driver's "device memory" (nnd/driver.h, device memory): blocks of
 * its own, malloc'd, named by handles 1..EX_MAX_BLOCKS that are indexes, not addresses,
 * as a real device's memory would be. A real driver would allocate on its device here,
 * and copy over its bus in read and write. Safe from any thread. */
#ifndef EXAMPLE_MEMORY_H
#define EXAMPLE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "nnd/driver.h"

#define EX_MAX_BLOCKS 1024

int ex_memory_allocate(void *device, const nnd_driver_buffer_desc *desc, uint64_t *handle,
                       char *err, size_t errlen);
void ex_memory_free(void *device, uint64_t handle);
int ex_memory_read(void *device, uint64_t handle, uint64_t offset, void *dst, size_t bytes);
int ex_memory_write(void *device, uint64_t handle, uint64_t offset, const void *src, size_t bytes);
/* Where execute() finds the bytes of a handle (this "device" is the host), or NULL when
 * the handle holds fewer than `bytes`. */
void *ex_memory_at(uint64_t handle, size_t bytes);

#endif

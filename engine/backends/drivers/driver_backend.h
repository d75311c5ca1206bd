/* SPDX-License-Identifier: Apache-2.0 */
/* driver_backend: a driver's device as an engine backend (backend.h; its partitions are the
 * core's, engine/core/partition.h), with device memory through allocate(), memory_read(),
 * memory_write() and memory_free() when the driver has them (a disabled driver allocates nothing
 * and its copies fail). */
#ifndef ENG_BACKENDS_DRIVERS_DRIVER_BACKEND_H
#define ENG_BACKENDS_DRIVERS_DRIVER_BACKEND_H

#include "engine/backends/drivers/driver_call.h"

void eng_driver_backend_init(eng_driver_dev *v);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_blob: a prepared partition's cache blob (the driver ABI's cache_save/cache_load):
 * the device's program binary, named by the platform, device and driver version it was
 * built for and the program cache's key (kernel source, build options, platform, device,
 * driver version; ocl_cache.h), so a compilation loaded from the daemon's cache skips the
 * program build.
 *
 * Contract:
 * - Layout: "NNDOCLB1", the key (64 hex digits and a NUL), the platform, device and driver
 *   version names (NUL-padded, 96, 96 and 64 bytes), the binary's length (u64, little
 *   endian), the binary.
 * - ocl_blob_save() writes the blob of device d into buf when it fits in cap and returns
 *   its size in any case (0: no program to save).
 * - ocl_blob_adopt() checks a blob against device d (its format and key: one made for
 *   another platform, device, driver version, kernel source or build options is refused
 *   with a message naming what it was made for) and makes its binary d's program when d
 *   has none built yet; 0, or -1 with a message (the daemon then prepares afresh). */
#ifndef OCL_BLOB_H
#define OCL_BLOB_H

#include <stddef.h>

#include "ocl_device.h"

size_t ocl_blob_save(ocl_device *d, void *buf, size_t cap);
int ocl_blob_adopt(ocl_device *d, const void *blob, size_t len, char *err, size_t errlen);

#endif

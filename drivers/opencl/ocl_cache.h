/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_cache: the on-disk program cache. A built program's binary is stored under a key
 * that hashes (BLAKE2b) the kernel source, the build options and the platform, device and
 * driver version, so a binary is only ever loaded by the device and driver that made it.
 *
 * Contract:
 * - The directory: NND_OPENCL_CACHE_DIR, else NND_STATE_DIR/opencl, else
 *   $XDG_CACHE_HOME/nnd/opencl, else $HOME/.cache/nnd/opencl, else /var/cache/nnd/opencl.
 *   It is made 0700 when missing; one that is writable by others, or not the caller's
 *   own, is not used (a binary from it could run as the driver). NND_OPENCL_CACHE_DIR=off
 *   turns the cache off.
 * - ocl_cache_load() returns a malloc'd binary (the caller frees it) or NULL;
 *   ocl_cache_store() writes one atomically (a temporary file renamed), 0600. Failures
 *   only cost a rebuild. */
#ifndef OCL_CACHE_H
#define OCL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define OCL_CACHE_KEY_HEX 65 /* 32 bytes in hex, and the NUL */

void ocl_cache_key(const char *const *parts, size_t n_parts, char key[OCL_CACHE_KEY_HEX]);
void *ocl_cache_load(const char *key, size_t *size);
void ocl_cache_store(const char *key, const void *data, size_t size);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* driver_call: the records of loaded drivers and their devices, and every call into a
 * driver (include/nnd/driver.h) made under the fault guard.
 *
 * Contract:
 * - eng_driver_lib is one driver table (a plugin's nnd_driver_info, or a table some other
 *   party presents: a driver host's proxy); eng_driver_dev is one device it opened, which
 *   is one engine backend (backend.driver points back at it).
 * - Each eng_drv_*() call runs the driver's callback under the fault guard: a fault fails
 *   the call (-1, logged with the driver's name and path) and disables the driver (every
 *   later call fails at once, release() and memory_free() are skipped). Statuses are the
 *   driver's (NND_DRIVER_*); eng_drv_status() maps one to the engine's.
 * - Calls may come from any thread, concurrently.
 */
#ifndef ENG_BACKENDS_DRIVERS_DRIVER_CALL_H
#define ENG_BACKENDS_DRIVERS_DRIVER_CALL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/backend.h"
#include "nnd/driver.h"

typedef struct eng_driver_lib {
    const nnd_driver *d;
    char *path;                /* for messages: the plugin's file, or what the proxy names */
    void *dl;                  /* dlopen handle; NULL for a table from elsewhere */
    void (*unload)(void *ctx); /* after close(), for a table from elsewhere; may be NULL */
    void *unload_ctx;
    atomic_bool faulted;
    bool has_memory, has_cache;
    uint32_t n_devices;
} eng_driver_lib;

typedef struct eng_driver_dev {
    eng_driver_lib *lib;
    nnd_driver_device_info info; /* name, version, type, capabilities, the driver's device */
    eng_backend backend;         /* backend.driver == this record */
} eng_driver_dev;

/* A line to the extensions' log sink (eng_ext_set_log()). */
void eng_driver_logf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

bool eng_drv_disabled(const eng_driver_dev *v);
int eng_drv_supported(eng_driver_dev *v, const nnd_driver_model *m, bool *supported, char *err,
                      size_t errlen);
int eng_drv_prepare(eng_driver_dev *v, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                    nnd_driver_prepared_info *out, char *err, size_t errlen);
int eng_drv_cache_load(eng_driver_dev *v, const nnd_driver_model *m,
                       const nnd_driver_prepare_args *a, const nnd_driver_blob *blobs,
                       uint32_t n_blobs, nnd_driver_prepared_info *out, char *err, size_t errlen);
/* cache_save(); returns the blob's size, 0 when it cannot (or faulted). */
size_t eng_drv_cache_save(eng_driver_dev *v, void *prepared, uint32_t blob, void *buf, size_t cap);
void eng_drv_release(eng_driver_dev *v, void *prepared);
int eng_drv_execute(eng_driver_dev *v, nnd_driver_execution *x);
int eng_drv_start(eng_driver_dev *v, nnd_driver_execution *x);
void eng_drv_cancel(eng_driver_dev *v, nnd_driver_execution *x);
int eng_drv_allocate(eng_driver_dev *v, const nnd_driver_buffer_desc *desc, uint64_t *handle,
                     char *err, size_t errlen);
void eng_drv_memory_free(eng_driver_dev *v, uint64_t handle);
int eng_drv_memory_copy(eng_driver_dev *v, bool write, uint64_t handle, uint64_t offset, void *buf,
                        size_t bytes);

/* The engine's status for a driver's (-1: a fault). */
schema_status eng_drv_status(int driver_status);
/* A driver's figure for operations whose first input is of this type (relaxed: the model
 * computes FLOAT32 as FLOAT16), the execution time or, with low_power, the power usage;
 * +infinity when not stated. */
float eng_drv_figure(const nnd_driver_capabilities *caps, int32_t type, bool relaxed,
                     bool low_power);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* driver: device driver plugins (ABI: include/nnd/driver.h) as engine backends.
 * Loading and the registry are driver.c; a driver's steps run through driver_step.c.
 *
 * Contract:
 * - eng_drivers_load_dir() loads every *.so of a directory, in name order, once (at daemon
 *   start; drivers are not reloaded). A driver is refused, with a reason
 *   (eng_drivers_refused()) and a log line naming its file, when the file check refuses it
 *   (the daemon's trust rule: owner, mode, directory), when loading it crashes (its
 *   constructors run first in a child process, so a fault there costs the child only), when
 *   it lacks NND_DRIVER_SYMBOL, has another ABI version or struct size, describes itself
 *   badly (name, type, exec_time, callbacks), or takes a name already taken (reserved
 *   names: the built-in devices). The descriptor is read under the fault guard.
 * - Each loaded driver is an eng_backend (backend.h) whose `impl` is the driver record:
 *   claim() offers the step to supports() then prepare(); run() calls execute() with the
 *   step's tensors; release() calls release(). Every call into the driver runs under the
 *   fault guard: a fault fails the call, logs, and disables the driver (its later claims
 *   decline, its runs fail) until the daemon restarts.
 * - backend.supports() asks supports() alone, for GetSupportedOperations.
 * - Optional callbacks (nnd/driver.h): a driver with device memory gets the backend's
 *   mem_* (allocate, free, read, write; a disabled driver allocates nothing and its reads
 *   and writes fail); one with cache blobs gets serialize (a blob over NND_DRIVER_BLOB_MAX
 *   or of size 0 is UNSUPPORTED: not cached) and claim_blob (deserialize()).
 * - Execute: an operand in this driver's memory reaches execute() as its handle
 *   (input_memory, output_memory) with data NULL, when execute.c holds that copy fresh.
 * - Drivers stay loaded until eng_drivers_unload_all(), after every prepared model is gone.
 * - Loading and unloading from one thread; the rest from any.
 */
#ifndef NND_DRIVER_H
#define NND_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/backend.h"
#include "engine/plugins/extension.h"
#include "engine/backends/drivers/driver_abi1.h"

#define NND_DRIVERS_MAX 8
/* The largest cache blob a driver may make of one step's state. */
#define NND_DRIVER_BLOB_MAX (1u << 30)

typedef struct eng_driver_info_view {
    const char *name;
    const char *version; /* "" when the driver gives none */
    const char *path;
    int32_t type;
    float exec_time;
    const eng_backend *backend;
    bool faulted;
} eng_driver_info_view;

/* Loads dir (refusing names in reserved[0..n_reserved)). Returns the number loaded, or -1
 * when dir cannot be read (err says why). check judges each file as eng_ext_set_file_check()
 * does; NULL: refuse only files writable by everyone. */
int eng_drivers_load_dir(const char *dir, eng_ext_file_check_fn check, const char *const *reserved,
                         size_t n_reserved, char *err, size_t errlen);
void eng_drivers_unload_all(void);
uint32_t eng_drivers_count(void);
bool eng_drivers_get(uint32_t i, eng_driver_info_view *out);
uint32_t eng_drivers_refused_count(void);
bool eng_drivers_refused(uint32_t i, const char **path, const char **reason);

/* ---- between driver.c and driver_step.c ---------------------------------------------------- */

typedef struct eng_driver_rec {
    const nnd_driver *d;
    void *dl;
    char *path;
    char name[NND_DRIVER_MAX_NAME + 1];
    char version[64];
    eng_backend backend; /* backend.impl == this record */
    _Atomic bool faulted;
    bool has_memory, has_blobs; /* the optional callbacks (read only from a full descriptor) */
} eng_driver_rec;

void eng_driver_backend_init(eng_driver_rec *r);
/* A line to the extensions' log sink (eng_ext_set_log()). */
void eng_driver_logf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

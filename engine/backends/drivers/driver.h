/* SPDX-License-Identifier: Apache-2.0 */
/* driver: device driver tables (ABI: include/nnd/driver.h, version 2) as engine devices.
 * Loading plugins and the registry are driver.c; a device as an engine backend is
 * driver_backend.c; calls into a driver driver_call.c; partitions partition*.c.
 *
 * Contract:
 * - eng_drivers_add_table() takes one driver table from anywhere: a plugin this module
 *   loaded (eng_drivers_load_dir()), or one another part of the daemon presents (a driver
 *   host's proxy, whose start() and cancel() are asynchronous by nature). It checks the
 *   table (ABI version and struct size, callbacks as the header's groups want them; a
 *   version 1 table is refused with a line saying to rebuild against ABI 2), calls open()
 *   under the fault guard, and makes each device it reports one engine device (a
 *   backend), refusing a device whose name is malformed or taken (the reserved names, the
 *   built-in devices, included). A refusal is logged and listed with its reason
 *   (eng_drivers_refused()). Returns how many devices it added, or -1 when refused. The
 *   table must stay valid until eng_drivers_unload_all(), which calls close() and then
 *   unload(unload_ctx) when given.
 * - eng_drivers_load_dir() loads every *.so of a directory, in name order, once (at daemon
 *   start). A plugin is refused when the file check refuses it (the daemon's trust rule:
 *   owner, mode, directory), when loading it crashes (its constructors run first in a
 *   child process), when it lacks NND_DRIVER_SYMBOL or add_table refuses its table.
 * - Every call into a driver runs under the fault guard (driver_call.h): a fault disables
 *   the driver until the daemon restarts; eng_drivers_get() says so (faulted).
 * - Loading and unloading from one thread; the rest from any.
 */
#ifndef ENG_BACKENDS_DRIVERS_DRIVER_H
#define ENG_BACKENDS_DRIVERS_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/backend.h"
#include "engine/plugins/extension.h"
#include "nnd/driver.h"

#define ENG_DRIVERS_MAX        8 /* driver tables; each may open up to NND_DRIVER_MAX_DEVICES */
#define ENG_DRIVER_DEVICES_MAX 16

typedef struct eng_driver_info_view {
    const char *name;
    const char *version; /* "" when the driver gives none */
    const char *path;
    int32_t type;
    const nnd_driver_capabilities *caps;
    const eng_backend *backend;
    const void *device; /* the record's own pointer from the table's open() */
    bool faulted;
} eng_driver_info_view;

int eng_drivers_add_table(const nnd_driver *table, const char *path, void (*unload)(void *ctx),
                          void *unload_ctx, const char *const *reserved, size_t n_reserved,
                          char *why, size_t whylen);
/* Loads dir (refusing device names in reserved[0..n_reserved)). Returns the number of
 * devices added, or -1 when dir cannot be read (err says why). check judges each file as
 * eng_ext_set_file_check() does; NULL: refuse only files writable by everyone. */
int eng_drivers_load_dir(const char *dir, eng_ext_file_check_fn check, const char *const *reserved,
                         size_t n_reserved, char *err, size_t errlen);
void eng_drivers_unload_all(void);
/* The devices, in the order they were added. */
uint32_t eng_drivers_count(void);
bool eng_drivers_get(uint32_t i, eng_driver_info_view *out);
bool eng_drivers_refused(uint32_t i, const char **path, const char **reason);

#endif

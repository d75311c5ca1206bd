/* SPDX-License-Identifier: Apache-2.0 */
/* drvhost: device drivers in processes of their own. The daemon starts one driver host
 * (nnd-driver-host) per plugin and talks to it through a proxy: an nnd_driver table that
 * behaves as the plugin's own would in process, so the code that uses drivers cannot tell
 * the two apart (docs/driver-host.md).
 *
 * Contract:
 * - drvhost_start() spawns the host for plugin_path (it loads the plugin, checks ABI 2 and
 *   struct_size, calls open()) and waits for its devices, at most the open bound. It
 *   returns the proxy table, or NULL with err saying why (the plugin's own message when it
 *   refused). The table's open() gives the host's device records (the `device` pointers
 *   are the proxy's); its close() ends the host. A table lives until drvhost_stop().
 * - Every call of the table returns within its bound plus a few milliseconds, whatever the
 *   driver does: execute()/start() within the execution's deadline (plus deadline_grace_ms)
 *   or call_timeout_ms; prepare()/cache_load() within the compilation's deadline or
 *   prepare_timeout_ms; the others within call_timeout_ms. A call past its bound kills the
 *   host and ends with MISSED_DEADLINE_TRANSIENT (a deadline) or GENERAL_FAILURE ("driver
 *   did not answer within N ms").
 * - Faults cost a restart, never the daemon: when the host dies (a crash, a kill, memory
 *   past memory_limit_bytes, which the proxy checks from /proc after calls, and
 *   RLIMIT_DATA at twice that), the calls it held end with DEVICE_UNAVAILABLE and a
 *   message, the host is started again, and each prepared partition is prepared again
 *   (from what the proxy kept of it: the partition as sent, or the cache blobs) at its next
 *   use. Device memory does not survive a restart: a handle of an earlier host fails
 *   with DEVICE_UNAVAILABLE. More than max_restarts restarts within restart_window_ms
 *   disable the driver: every call then fails with DEVICE_UNAVAILABLE, and
 *   drvhost_disabled() / drvhost_device_disabled() say so, for the daemon to take its
 *   devices out of every device set.
 * - A pool the client shrank while the host read it is the client's error: that call
 *   ends with INVALID_ARGUMENT ("memory pool shrank ..."); no restart, nothing counted
 *   against the driver.
 * - Tensors cross in shared memory: an input or output (or a constant, or a copy's buffer)
 *   that lies inside a region registered with drvhost_register_region() goes as (region,
 *   offset), its fd passed to each host once; anything else is copied through a staging
 *   memfd for that call (drvhost_stats counts those calls and bytes).
 * - Thread-safe: any thread may call the table. A supervisor thread per host reads the
 *   host's replies, completes started executions (x->complete) and restarts the host.
 * - drvhost_stop() ends the host (close() in the driver, SIGKILL after a second), reaps
 *   it and frees everything; drvhost_stop_all() does it for every host (daemon exit).
 */
#ifndef DRVHOST_H
#define DRVHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nnd/driver.h"

typedef struct drvhost_limits {
    const char *host_path; /* NULL: nnd-driver-host beside this program, else installed */
    /* > 0: the plugin as an open file the caller checked (ownership, mode): the host loads
     * this very file, not whatever plugin_path names by then, at start and at every
     * restart. The proxy keeps a duplicate: the caller may close its own once
     * drvhost_start() returns. */
    int plugin_fd;
    uint32_t call_timeout_ms;    /* 0: DRVHOST_CALL_TIMEOUT_MS */
    uint32_t prepare_timeout_ms; /* 0: DRVHOST_PREPARE_TIMEOUT_MS */
    uint32_t deadline_grace_ms;  /* 0: DRVHOST_DEADLINE_GRACE_MS */
    uint64_t memory_limit_bytes; /* 0: DRVHOST_MEMORY_LIMIT */
    uint32_t max_restarts;       /* 0: DRVHOST_MAX_RESTARTS */
    uint32_t restart_window_ms;  /* 0: DRVHOST_RESTART_WINDOW_MS */
    /* Where the proxy says what happened to a host (restarts, kills, disabling); NULL: stderr. */
    void (*log)(void *ctx, const char *msg);
    void *log_ctx;
} drvhost_limits;

#define DRVHOST_CALL_TIMEOUT_MS    5000u
#define DRVHOST_PREPARE_TIMEOUT_MS 60000u
#define DRVHOST_OPEN_TIMEOUT_MS    10000u
#define DRVHOST_DEADLINE_GRACE_MS  100u
#define DRVHOST_MEMORY_LIMIT       (1024ull << 20)
#define DRVHOST_MAX_RESTARTS       5u
#define DRVHOST_RESTART_WINDOW_MS  60000u
#define DRVHOST_MAX_HOSTS          16u

typedef struct drvhost drvhost;

/* limits may be NULL (all defaults). *out gets the host for the functions below. */
const nnd_driver *drvhost_start(const char *plugin_path, const drvhost_limits *limits,
                                drvhost **out, char *err, size_t errlen);
void drvhost_stop(drvhost *h);
void drvhost_stop_all(void);

bool drvhost_disabled(const drvhost *h);
/* For a device pointer of a proxy table's open(): whether its driver is disabled; false
 * for any other pointer (an in-process driver's). */
bool drvhost_device_disabled(const void *device);

typedef struct drvhost_stats {
    pid_t pid;         /* the host now, 0 when none runs */
    uint32_t restarts; /* since start */
    bool disabled;
    uint64_t calls;        /* calls sent to a host */
    uint64_t staged_calls; /* calls with a tensor copied through staging */
    uint64_t staged_bytes;
    uint64_t pool_shrinks; /* calls failed as the client's pool shrinking */
    char last_fault[160];  /* why the host last restarted; "" when never */
} drvhost_stats;
void drvhost_get_stats(drvhost *h, drvhost_stats *out);
/* The stats of the host serving a device pointer of a proxy table's open(); false for any
 * other pointer. */
bool drvhost_device_stats(const void *device, drvhost_stats *out);

/* ---- shared regions ---- */
/* fd (dup'd: the caller keeps its own) mapped at base for length bytes from file_offset;
 * hosts map it writable only when writable and the fd allows. Returns the region id (> 0)
 * or -errno. */
int drvhost_register_region(int fd, uint64_t file_offset, const void *base, size_t length,
                            bool writable);
void drvhost_unregister_region(int id);
/* Whether a host was ever started: the daemon registers its pools' mappings only then. */
bool drvhost_active(void);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* host: the driver host's parts (nnd-driver-host, one process per driver plugin; see
 * drvhost.h for what the daemon sees and docs/driver-host.md for the process model).
 *
 * Contract:
 * - host_main.c loads the plugin, answers DH_MSG_HELLO with open()'s devices and serves
 *   one message at a time on the control socket; synchronous execute() runs on that
 *   thread, start() work completes from the driver's threads (dhh_reply is thread-safe).
 * - host_region.c maps the shared regions the proxy introduces (MAP_SHARED, read-write
 *   when the fd allows), resolves (region, offset, length) to addresses, and guards them:
 *   a SIGBUS on a region whose file no longer covers the page (its client shrank it) swaps
 *   the whole mapping for zero pages and counts a fault on the region, so the call ends as
 *   the client's error ("memory pool shrank"), never as the driver's. Any other SIGBUS or
 *   SIGSEGV kills the host, which the proxy restarts.
 * - host_exec.c: executions (execute() or start()/cancel()) and the device-memory copies;
 *   host_reply.c: the replies (dhh_reply), for both.
 */
#ifndef DHH_HOST_H
#define DHH_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "driverhost/wire.h"
#include "driverhost/wire_reply.h"
#include "driverhost/wire_request.h"
#include "nnd/driver.h"

typedef struct dhh_host {
    const nnd_driver *drv;
    int sock;
    uint32_t n_devices;
    nnd_driver_device_info devices[NND_DRIVER_MAX_DEVICES];
} dhh_host;

/* A partition the driver prepared: the body its constants may point into stays here. */
typedef struct dhh_prepared {
    void *prepared; /* the driver's */
    void *model_block;
    uint8_t *body;
} dhh_prepared;

/* Sends the reply to call: status, err (may be NULL), then extra's bytes (may be NULL). */
void dhh_reply(dhh_host *h, uint32_t call, int status, const char *err, const dh_wbuf *extra);

/* ---- regions ---- */
int dhh_guard_install(void);
/* Maps a region from fd (taken: closed on failure or when forgotten). */
int dhh_region_add(const dh_region_intro *in, int fd);
void dhh_region_forget(uint32_t id);
/* The address of [offset, offset + length) of region id, or NULL. ctx: a dhh_staging or NULL. */
void *dhh_region_resolve(void *ctx, uint32_t region, uint64_t offset, uint64_t length);
/* Whether region id's file still covers [offset, offset + length); *size gets its size. */
bool dhh_region_covers(uint32_t region, uint64_t offset, uint64_t length, uint64_t *size);
/* Faults absorbed on region id so far (0 for an unknown one), and in all regions. */
uint32_t dhh_region_faults(uint32_t region);
uint64_t dhh_faults_total(void);

/* A call's staging memfd, mapped. */
typedef struct dhh_staging {
    uint8_t *base;
    uint64_t length;
} dhh_staging;
int dhh_staging_map(int fd, dhh_staging *s);
void dhh_staging_unmap(dhh_staging *s);

/* ---- calls ---- */
void dhh_execute(dhh_host *h, dh_msg *m);
void dhh_cancel(dhh_host *h, uint32_t call);
void dhh_memory_copy(dhh_host *h, dh_msg *m);
void dhh_cache_save(dhh_host *h, dh_msg *m);

#endif

/* admin: answers nndctl's JSON commands arriving on the bus's REP socket.
 * Commands: {"cmd":"status"} (daemon counters and the clients array) and
 * {"cmd":"clients"}. Every reply has "ok"; failures carry "error". */
#ifndef NND_ADMIN_H
#define NND_ADMIN_H

#include <cjson/cJSON.h>

#include "daemon.h"

/* An nnd_admin_fn for nnd_bus_open(); ctx is the nnd_daemon. */
cJSON *nnd_admin_handle(void *ctx, const cJSON *req);

#endif

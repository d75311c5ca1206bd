/* SPDX-License-Identifier: Apache-2.0 */
/* admin: answers nndctl's JSON commands arriving on the bus's REP socket.
 * Commands: {"cmd":"status"} (daemon counters, among them "buffers" and "buffer_bytes" for
 * the live driver buffers, the cache's counters under "cache", the clients array, each
 * with its "buffers", "buffer_bytes" and "queued_executions", the devices, each with the
 * driver partitions it holds now ("held_partitions", partitions.h), and "quotas": the limits,
 * each app's usage and refusals, and totals, see quota.h), {"cmd":"clients"},
 * {"cmd":"cache list"} (the content cache's entries) and {"cmd":"cache purge"} (empties
 * the content cache and the token index), and {"cmd":"reload"} (loads the extension
 * plugins and the allowlist afresh; "extensions" lists what loaded and what was refused,
 * as status does). Every reply has "ok"; failures carry "error". */
#ifndef SRV_ADMIN_ADMIN_H
#define SRV_ADMIN_ADMIN_H

#include <cjson/cJSON.h>

#include "daemon/base/daemon.h"

/* An srv_admin_fn for srv_bus_open(); ctx is the srv_daemon. */
cJSON *srv_admin_handle(void *ctx, const cJSON *req);

#endif

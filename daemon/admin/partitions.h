/* SPDX-License-Identifier: Apache-2.0 */
/* partitions: the driver partitions each device holds now, for status (admin.h).
 * srv_admin_partitions() gives every entry of devices (srv_devices_json()) a
 * "held_partitions" array (empty for a device that holds none): one object per partition of
 * each prepared model a client holds, with the client ("client", "pid", "uid", "app": the
 * name from its Hello), the compilation ("compilation": the prepared model's handle, as the
 * prepared event names it), "first_operation" (its first operation's index in the client's
 * model), "operations" and "held_bytes" (what the driver said it holds for it). A
 * compilation shared through the content cache is listed under each client that holds it.
 * Loop thread only. */
#ifndef SRV_ADMIN_PARTITIONS_H
#define SRV_ADMIN_PARTITIONS_H

#include <cjson/cJSON.h>

#include "daemon/base/daemon.h"

void srv_admin_partitions(srv_daemon *d, cJSON *devices);

#endif

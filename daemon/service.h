/* SPDX-License-Identifier: Apache-2.0 */
/* service: what the daemon tells systemd (sd_notify(3)), when systemd started it with a
 * notification socket (Type=notify); without NOTIFY_SOCKET every call does nothing.
 *
 * Contract:
 * - srv_service_start(), once the client socket serves: READY=1 and a STATUS= line
 *   ("serving N clients, M prepared models, E executions run"), kept current every
 *   SRV_SERVICE_STATUS_MS while it changes; and when systemd asks for a watchdog
 *   (WatchdogSec=, sd_watchdog_enabled(3)), WATCHDOG=1 from a timer of the event loop
 *   every half of that interval, so that a loop that no longer turns (hung, stopped)
 *   misses its pings and systemd restarts the daemon.
 * - srv_service_reloading() and srv_service_ready(): RELOADING=1 before a reload and
 *   READY=1 with the status after it (reload.h).
 * - srv_service_stop(), as shutdown begins: STOPPING=1; the timers are closed.
 * Loop thread only.
 */
#ifndef SRV_SERVICE_H
#define SRV_SERVICE_H

#include "daemon/base/daemon.h"

#define SRV_SERVICE_STATUS_MS 2000

void srv_service_start(srv_daemon *d);
void srv_service_reloading(srv_daemon *d);
void srv_service_ready(srv_daemon *d);
void srv_service_stop(srv_daemon *d);

#endif

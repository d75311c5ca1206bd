/* SPDX-License-Identifier: Apache-2.0 */
/* reload: the configuration read afresh into the running daemon, on SIGHUP or
 * `nndctl reload` (systemd's ExecReload=).
 *
 * Contract:
 * - srv_reload_init() keeps the settings in force at start (boot, which it then owns and
 *   frees at srv_reload_free()) and where they came from (src: the config file's path and
 *   the command line's settings, which must outlive the daemon's run).
 * - srv_reload() reads every source again in the same order (config.h). A file that does
 *   not read (a bad value, an unknown key, a file that went missing or is no longer
 *   trusted) changes nothing: the error is logged, returned in err, and -1 returned.
 * - Otherwise what may change while clients stay connected is applied: log_level, the
 *   quotas (each connected app and connection is held to the new limits from its next
 *   request on; what it already holds stays), and extensions_allowlist (the allowlist
 *   and the extension plugins are loaded afresh, as before). Each change is logged as
 *   "reload: KEY: OLD -> NEW". A changed key that needs a restart (the socket, the state
 *   directory, the cache's sizes, the plugin directories, the scheduler's threads and
 *   queues) is logged as a warning naming it, and keeps its running value.
 * - systemd is told RELOADING=1 before and READY=1 after (service.h). Loop thread only.
 */
#ifndef SRV_RELOAD_H
#define SRV_RELOAD_H

#include <stddef.h>

#include "daemon/base/daemon.h"
#include "daemon/config.h"

void srv_reload_init(srv_config *boot, const srv_config_source *src);
int srv_reload(srv_daemon *d, char *err, size_t errlen);
void srv_reload_free(void);

#endif

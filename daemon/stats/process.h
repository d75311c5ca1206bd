/* SPDX-License-Identifier: Apache-2.0 */
/* process: the daemon's own process figures, from /proc/self, for the standard process_*
 * metrics (Prometheus' client libraries export the same set).
 *
 * Contract:
 * - srv_process_json() adds "process": {cpu_seconds (user + system), resident_bytes,
 *   virtual_bytes, open_fds, max_fds (RLIMIT_NOFILE's soft limit), start_time_seconds
 *   (since the epoch)} to the status object. A figure /proc does not give is left out.
 */
#ifndef SRV_STATS_PROCESS_H
#define SRV_STATS_PROCESS_H

#include <cjson/cJSON.h>

void srv_process_json(cJSON *status);

#endif

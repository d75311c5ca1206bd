/* SPDX-License-Identifier: Apache-2.0 */
/* tally: counts the daemon keeps for its whole life, for status and metrics: execution
 * latency per device, compile time of prepared models, and executions and failures per app
 * (uid) that stay after the app disconnects.
 *
 * Contract:
 * - srv_tally_execution() counts one finished execution (refused ones too: st is not
 *   SCHEMA_OK) of uid on the named device, latency_ns from its arrival to its end;
 *   srv_tally_prepare() one model prepared, compile_ns its preparation. Thread-safe.
 * - Bounded: SRV_TALLY_DEVICES device names and SRV_TALLY_UIDS uids are kept; the
 *   executions of further uids add up in one "untracked" pair of counters, those of
 *   further device names are counted per uid but have no latency histogram.
 * - srv_tally_devices_json() adds "latency_us" ({count, sum_us, below: {bound_us: n}},
 *   the bounds of the scheduler's exported histogram, QOS_LATENCY_BOUND_NS) to each element
 *   of the status's "devices" array by its "name"; srv_tally_json() adds
 *   "prepare_time_us" (the same form), "app_totals" ([{uid, executions, failed}], by uid)
 *   and "app_totals_untracked" ({executions, failed}) to the status object.
 */
#ifndef SRV_STATS_TALLY_H
#define SRV_STATS_TALLY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#define SRV_TALLY_DEVICES 16
#define SRV_TALLY_UIDS    1024

void srv_tally_execution(uint32_t uid, const char *device, uint64_t latency_ns, bool failed);
void srv_tally_prepare(uint64_t compile_ns);
void srv_tally_devices_json(cJSON *devices);
void srv_tally_json(cJSON *status);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* prom: the daemon's status as Prometheus text exposition (format 0.0.4), for
 * `nndctl metrics` and nnd-exporter.
 *
 * Contract:
 * - met_prom_render() takes the admin "status" reply (the JSON object `nndctl status`
 *   shows) and returns the text, malloc'd: per metric one "# HELP" and one "# TYPE" line,
 *   then its samples. Names start with nnd_, but for the standard process_* set (from
 *   status's "process"); counters end in _total; bytes are bytes and times are seconds.
 *   Metrics with no sample (no client connected, say) are left out.
 * - Every number and boolean of status is exported, through one table of metrics keyed by
 *   the field's path. A field that the table does not know is never dropped silently: its
 *   path goes into *unmapped (comma-separated, malloc'd; NULL when there is none), and the
 *   tests require that to stay empty against a real daemon's status.
 * - Labels: uid for what each app holds (quota usage, refusals, connections, bursts of its
 *   clients, summed per uid), priority for the scheduler's queues and latencies, reason,
 *   quota, scope and outcome where status keys a counter by them, operation for the
 *   operations GetSupportedOperations refused. version, driver build
 *   and preemption mode are labels of nnd_info, whose value is 1.
 * - Histograms (buckets from 25 us doubling to 13.1 s, exact: they are edges of the
 *   daemon's own histograms): the scheduler's latency per priority,
 *   nnd_execution_latency_seconds (its p50, p90 and p99 also as the gauge
 *   nnd_execution_latency_percentile_seconds); the latency per device,
 *   nnd_device_execution_latency_seconds; the compile time of prepared models,
 *   nnd_prepare_duration_seconds.
 * - Executions and failures per uid since the daemon started (status's app_totals, kept
 *   after the app disconnects): nnd_app_executions_total, nnd_app_executions_failed_total.
 * - NULL when status is not an object or memory runs out.
 */
#ifndef MET_PROM_H
#define MET_PROM_H

#include <cjson/cJSON.h>

char *met_prom_render(const cJSON *status, char **unmapped);

#endif

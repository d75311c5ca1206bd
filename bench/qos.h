/* SPDX-License-Identifier: Apache-2.0 */
/* qos: the scheduler's rows of `make bench`, on a daemon of its own (default settings).
 *   deadline_met  offered load of twice the capacity, each execution with a deadline ten
 *                 service times after it is sent (open loop: a sender thread paces the
 *                 requests, the main thread takes the replies): share of the executions
 *                 the daemon admitted whose successful reply arrived by the deadline
 *                 (target >= 0.999);
 *   goodput       those executions per second over the capacity (target >= 0.90);
 *   high_p99      p99 latency of a HIGH execution of an app while the same app floods
 *                 LOW executions (four in flight), over its p99 on an idle daemon
 *                 (target <= 1.5).
 * Capacity is the completion rate of the same model back to back (four in flight, no
 * deadlines). Models are chains of ADDs (tests/support/qos_models.h). The whole measurement runs
 * BENCH_QOS_REPEATS times, each on a fresh daemon; each row is the median run's (its
 * details come from that run). Returns 0 and fills *out; -1 on failure (message on
 * stderr). */
#ifndef BENCH_QOS_H
#define BENCH_QOS_H

#include <stdint.h>

#define BENCH_QOS_REPEATS 3

typedef struct bench_qos {
    double capacity;                  /* executions per second, back to back */
    double service_ns;                /* 1 / capacity */
    double offered;                   /* executions per second sent */
    uint64_t sent, admitted, refused; /* refused at admission: sent - admitted */
    uint64_t met, late, failed;       /* replies: in time, late, not NONE */
    double met_share;                 /* met / admitted */
    double goodput;                   /* met per second of sending / capacity */
    uint64_t daemon_met, daemon_aborted, daemon_refused_late; /* the daemon's own count */
    double high_idle_p99, high_flood_p99;                     /* ns, as the client sees them */
    double high_idle_driver_p99, high_flood_driver_p99;       /* ns, time_in_driver */
    double high_service_ns, low_service_ns;
    uint64_t preempted;
    /* Every run's figures; the fields above are the median run's. */
    double met_share_runs[BENCH_QOS_REPEATS], goodput_runs[BENCH_QOS_REPEATS];
    double high_ratio_runs[BENCH_QOS_REPEATS];
} bench_qos;

int bench_qos_rows(bench_qos *out);

#endif

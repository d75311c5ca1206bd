/* SPDX-License-Identifier: Apache-2.0 */
/* sched_config: the scheduler's vocabulary and settings, apart from its state so that its
 * files share them without a circle: priorities, the reasons admission refuses, the lanes
 * (a queue and workers per device) and the settings. The contract is scheduler.h's. */
#ifndef QOS_SCHED_CONFIG_H
#define QOS_SCHED_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum qos_prio { QOS_PRIO_LOW = 0, QOS_PRIO_MEDIUM = 1, QOS_PRIO_HIGH = 2 } qos_prio;
#define QOS_PRIOS 3

const char *qos_prio_name(qos_prio p); /* "low", "medium", "high" */

typedef enum qos_refusal {
    QOS_REFUSE_NONE = 0,
    QOS_REFUSE_INVALID,         /* INVALID_ARGUMENT: a priority or preference out of range */
    QOS_REFUSE_DEADLINE_PASSED, /* MISSED_DEADLINE_PERSISTENT */
    QOS_REFUSE_TOO_SLOW,        /* MISSED_DEADLINE_PERSISTENT: cannot fit even when idle */
    QOS_REFUSE_BUSY,            /* MISSED_DEADLINE_TRANSIENT: work ahead */
    QOS_REFUSE_QUEUE_FULL,      /* RESOURCE_EXHAUSTED_TRANSIENT */
    QOS_REFUSE_MEMORY,          /* RESOURCE_EXHAUSTED_TRANSIENT */
    QOS_REFUSE_DEVICE_LIMIT,    /* RESOURCE_EXHAUSTED_PERSISTENT */
    QOS_REFUSALS
} qos_refusal;
const char *qos_refusal_name(qos_refusal r); /* "deadline_passed", ... */

#define QOS_SCHED_LANES 16

typedef struct qos_sched_config {
    unsigned workers;        /* lane 0's threads running executions (default 1: one execution
                                at a time, for predictable latency; kernels may use every core) */
    unsigned lanes;          /* lanes, 1..QOS_SCHED_LANES (default 1) */
    unsigned lane_workers;   /* threads of every lane but 0 (default 1) */
    unsigned app_queue;      /* queued executions per app (default 64) */
    uint64_t app_memory;     /* execution memory per app, queued and running (1 GiB) */
    uint64_t device_memory;  /* most memory one execution may need (4 GiB) */
    bool restart;            /* preempted work starts over instead of resuming */
    uint64_t inline_ns;      /* see "Short work" (default 100 us; 0 turns it off) */
    int worker_nice;         /* workers' nice value, relative to the owner's (default 0) */
    uint32_t owner_slice_us; /* the owner thread's slice (default 100 us; 0 leaves it) */
    /* A per-thread count of memory faults absorbed (the daemon's SIGBUS guard), sampled
     * around each run: a change fails the job. NULL: none. */
    uint64_t (*fault_count)(void);
} qos_sched_config;
void qos_sched_config_default(qos_sched_config *c);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* sched_internal: the scheduler's state, shared by its files (scheduler.c: admission,
 * lanes and workers; sched_model.c: models, names and figures; app_memory.c: execution
 * memory per app). Not for other modules. */
#ifndef QOS_SCHED_INTERNAL_H
#define QOS_SCHED_INTERNAL_H

#include <pthread.h>
#include <time.h>

#include "engine/base/clock.h"
#include "sched/estimate.h"
#include "sched/queue.h"
#include "sched/sched_config.h"

typedef struct qos_job qos_job;

typedef struct app_mem {
    uint32_t app;
    uint64_t bytes;
} app_mem;

/* One device's waiting room, and how many of the workers may run its jobs at once. */
typedef struct sched_lane {
    qos_queue *q;
    unsigned workers; /* its share of the threads */
    unsigned busy;    /* jobs running on it, on workers or inline */
    qos_job *running; /* list */
    uint64_t segments, arrived;
} sched_lane;

struct qos_sched {
    qos_sched_config cfg;
    qos_throughput tp;
    void (*wake)(void *ctx);
    void *wake_ctx;
    pthread_mutex_t lock;
    pthread_cond_t work;          /* idle workers wait here for a lane with work */
    pthread_cond_t measured_cond; /* qos_sched_new() waits here for the throughput */
    pthread_t *threads;
    unsigned n_threads;
    unsigned next_lane; /* where workers start looking: lanes take turns */
    bool measured;      /* the throughput is known (measured by the first worker) */
    bool measuring;     /* a worker is measuring it */
    bool owner_slice;   /* the kernel took cfg.owner_slice_us for the owner's thread */
    bool stopping;
    unsigned work_due; /* signals of `work` and a wake() of the owner, sent by sched_unlock() */
    bool owner_due;
    pthread_cond_t device_cond; /* qos_sched_free() waits here for work on devices */
    qos_job *on_device;         /* jobs whose partition a device works on: no worker */
    sched_lane lanes[QOS_SCHED_LANES];
    qos_job *fin_head, *fin_tail; /* finished, not yet drained */
    app_mem *mem;                 /* execution memory held per app */
    size_t n_mem, cap_mem;
    /* figures */
    /* Feedback on the predictions, from what happened: how much longer than predicted
     * queued jobs waited (x1000), and how long finished jobs waited for the owner's
     * drain (the reply's way out). Admission uses both windows' tails. */
    qos_estimator inflation, lag;
    uint64_t submitted, completed, failed, cancelled, preempted, aborted;
    uint64_t met, missed, refused[QOS_REFUSALS], refused_at_dispatch;
    qos_hist latency[QOS_PRIOS];
};

/* Execution memory held per app (lock held; app_memory.c): what app holds now; adds bytes
 * (-1 when out of memory); takes bytes off (an app at 0 is forgotten). */
uint64_t qos_sched_mem_of(struct qos_sched *s, uint32_t app);
int qos_sched_mem_add(struct qos_sched *s, uint32_t app, uint64_t bytes);
void qos_sched_mem_sub(struct qos_sched *s, uint32_t app, uint64_t bytes);

#endif

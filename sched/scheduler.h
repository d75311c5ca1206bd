/* SPDX-License-Identifier: Apache-2.0 */
/* scheduler: quality of service for executions. Admission, the queues (queue.h), pools of
 * worker threads that run the engine, checkpoints between operations for deadlines,
 * cancellation and preemption, per-model execution-time estimates (estimate.h),
 * and the figures an operator watches.
 *
 * Contract:
 * - Lanes: cfg.lanes devices (small integers; what a lane stands for is the owner's
 *   business), each with its own queue and its own share of the workers: lane 0 runs up to
 *   cfg.workers jobs at once, every other lane up to cfg.lane_workers. There are as many
 *   worker threads as the shares add up to, and an idle one serves any lane that has queued
 *   work and room (lanes take turns), so a lane with room always finds a thread: a job
 *   that occupies one lane never holds up another. A model says which lane runs each of
 *   its operations (qos_sched_model_set_lanes; by default all run on lane 0). A job queues
 *   on the lane of its first operation; at the checkpoint before an operation of another
 *   lane it moves there, keeping its eng_exec (so its temporaries), its priority, deadline
 *   and place in arrival order: on the same thread when that lane has room and nothing
 *   queued (no hand-off; the lane it leaves has room again), else into that lane's queue,
 *   its worker taking other work (a job run inline always goes through the queue). What
 *   follows holds per lane: priorities, preemption, "no worker idle", "work ahead"; while
 *   the deadline checks, the timing (start, end, run_ns over every segment on every lane)
 *   and cancellation are the whole job's.
 * - Threads: qos_sched_new() starts the workers, at the process's nice value plus
 *   cfg.worker_nice (default 0: computation keeps its share of the CPUs against other
 *   programs, as an in-process library would), and asks the kernel to schedule the
 *   calling thread, the owner's, in slices of cfg.owner_slice_us (thread_sched.h): the
 *   owner then preempts a worker when it wakes. Every other call is made from
 *   one thread, the owner's (the daemon's event loop). Finished jobs are handed back to
 *   the owner: a worker calls wake() (from its own thread, once it has let go of the
 *   scheduler's lock, so that the owner it wakes does not wait on it; a device's
 *   completion, from a driver's thread, calls it holding the lock), and the owner then
 *   calls qos_sched_drain(), which calls each finished job's done() on the owner's thread.
 * - Admission (qos_sched_submit, on submit, and again when a worker takes the job):
 *     deadline already past, or the typical run longer than the time left even on an
 *       idle device                                 -> MISSED_DEADLINE_PERSISTENT
 *     would miss only because of work ahead of it   -> MISSED_DEADLINE_TRANSIENT
 *       (never with nothing ahead)
 *     the app's queue full, or its memory quota (execution temporaries of its queued
 *       and running work) exhausted                 -> RESOURCE_EXHAUSTED_TRANSIENT
 *     one execution needs more memory than the device allows
 *                                                   -> RESOURCE_EXHAUSTED_PERSISTENT
 *   Work ahead is the queue's estimate (queue.h) of the lane of the job's first operation
 *   plus what the jobs running there have left, over that lane's workers, stretched by how much
 * longer than predicted recent jobs actually waited (the 95th percentile of the last 32 waits'
 * ratio to their prediction: a busy machine runs slower than its estimates), and doubled for stalls
 * no history predicts; the job itself counts with the slowest of its model's last 32 runs; then the
 * largest of the last 32 delays between a job's end and its drain (the reply's way out), and a
 * margin. Admission thus errs toward refusing: under overload a refusal costs little (the queue
 * stays full), a miss costs a deadline. A job that is refused at submit is not queued and gets no
 * done(); one refused when a worker takes it finishes with the status, `refused` saying why
 * (PERSISTENT codes for a fresh job, MISSED_DEADLINE_TRANSIENT for a preempted one: it had been
 * admitted and run).
 * - Checkpoints, between operations of a running job:
 *     stopped (qos_sched_cancel, or qos_sched_free)  -> finishes with `cancelled` set
 *     now + typical estimate of what is left > deadline
 *                                                    -> MISSED_DEADLINE_TRANSIENT
 *     the next operation is on another lane          -> queued there (see Lanes)
 *     a job of the same app and higher priority was queued on this lane (submitted, or
 *       arriving from another lane) while none of its workers was idle
 *                                                    -> suspended and requeued ahead
 *       of its priority; the worker serves that app next. It resumes from the operation
 *       it stopped at with its temporaries (eng_exec_resume), or, with cfg.restart,
 *       starts over (on the lane of its first operation).
 * - Devices working asynchronously (a driver partition started, engine.h ENG_ON_DEVICE):
 *   the job leaves its worker and its lane (the worker takes other work); when the
 *   device completes (the engine's notify, from any thread) it is queued again on the
 *   lane of the operation it stopped at, keeping its place in arrival order, and goes on
 *   from there. qos_sched_cancel() of such a job asks the device to stop (the engine's
 *   eng_exec_cancel_device()); it finishes cancelled once the device has completed.
 *   qos_sched_free() waits for every device to complete. Each run passes the job's
 *   priority, deadline and `measure` to the drivers (eng_checkpoint), and their measured
 *   times come back in device_ns and driver_ns.
 * - A job holds a reference on its model and the memory its inputs and outputs point
 *   to must stay mapped until done(). Each running or suspended job owns an eng_exec
 *   from its model's spares (made when none is spare).
 * - Short work: a job whose typical run is under cfg.inline_ns (and whose model runs no
 *   WHILE loop: its time is its data's) runs inside
 *   qos_sched_submit() when a worker of its lane is idle and nothing waits there (until
 *   it moves to another lane, if it does), sparing two thread
 *   hand-offs; it still counts as the worker it borrows. done() comes with the next drain,
 *   which the owner calls itself: no wake() for it (a wake would cost the owner a loop turn
 *   and two syscalls for nothing).
 * - Stats are cumulative since qos_sched_new(), except the queue depths and running counts.
 */
#ifndef QOS_SCHEDULER_H
#define QOS_SCHEDULER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "sched/estimate.h"
#include "sched/queue.h"

#include "sched/sched_config.h"

typedef struct qos_sched qos_sched;

/* A prepared model as the scheduler sees it. Made and released on the owner's thread. */
typedef struct qos_sched_model {
    const eng_prepared *prepared;
    qos_prio priority; /* the compilation's */
    size_t exec_bytes; /* temporaries of one execution */
    uint64_t seed_ns;  /* the cost model's estimate */
    bool loops;        /* it may run WHILE loops: never short work, whatever its estimate */
    /* scheduler-private */
    qos_sched *s;
    float *done_frac; /* n_ops + 1 entries: share of the estimate done before operation k */
    uint32_t n_ops;
    uint8_t *lane;      /* lane of each operation; NULL: all on lane 0 */
    uint8_t first_lane; /* where a run starts */
    qos_estimator est;  /* under the scheduler's lock */
    eng_exec *spare[2]; /* idle executions, under the lock */
    unsigned n_spare;
    unsigned refs; /* owner's thread only */
    void (*release)(void *ctx);
    void *release_ctx;
} qos_sched_model;

/* Wraps p. RESOURCE_EXHAUSTED_PERSISTENT (err says why) when one execution would need
 * more than cfg.device_memory; GENERAL_FAILURE when out of memory. On success the model
 * holds one reference, and release(release_ctx) is called when the last one goes (it
 * frees what keeps p alive); on failure release is never called. */
schema_status qos_sched_model_new(qos_sched *s, const eng_prepared *p, qos_prio priority,
                                  void (*release)(void *), void *release_ctx, qos_sched_model **out,
                                  char *err, size_t errlen);
void qos_sched_model_ref(qos_sched_model *m);
void qos_sched_model_unref(qos_sched_model *m);
/* lanes[k]: the lane that runs operation k (n_ops entries; a lane past cfg.lanes counts as
 * 0). Called before m's first job. SCHEMA_GENERAL_FAILURE when out of memory. */
schema_status qos_sched_model_set_lanes(qos_sched_model *m, const uint8_t *lanes);
/* The current typical and tail estimates, ns. */
void qos_sched_model_estimate(qos_sched_model *m, uint64_t *typical, uint64_t *tail);

typedef struct qos_job qos_job;

struct qos_job {
    /* Set by the submitter. */
    qos_sched_model *model;
    uint32_t app; /* a uid */
    qos_prio prio;
    uint64_t deadline_ns; /* absolute CLOCK_MONOTONIC, 0 = none */
    /* How long one WHILE loop may run (eng_checkpoint.loop_timeout_ns): 0 = the default. */
    uint64_t loop_timeout_ns;
    const eng_io *inputs, *outputs;
    eng_output_shape *shapes; /* one per output, or NULL */
    bool measure;             /* drivers measure their times (device_ns, driver_ns) */
    void (*done)(qos_job *j);
    void *ctx;
    /* Results, valid in done(). */
    schema_status status;
    qos_refusal refused; /* refused when a worker took it */
    bool cancelled;      /* stopped by qos_sched_cancel() or qos_sched_free() */
    bool deadline_met;   /* with a deadline: finished SCHEMA_OK in time */
    uint32_t preemptions;
    uint64_t submit_ns, start_ns, end_ns; /* start: first time a worker took it */
    uint64_t run_ns;                      /* time on device over every run segment */
    uint64_t device_ns, driver_ns;        /* drivers' measured times; UINT64_MAX: none */
    char err[SCHEMA_ERR_LEN];
    /* Scheduler-private. */
    qos_qentry q;
    int state;
    atomic_bool stop;      /* checkpoint: cancelled */
    atomic_bool yield;     /* checkpoint: higher-priority work of this app waits */
    uint32_t next_op;      /* where a suspended run continues */
    uint8_t lane;          /* the lane it is queued or running on */
    uint64_t est_ns;       /* typical estimate of the whole run, taken at dispatch */
    uint64_t seg_ns;       /* start of the current run segment */
    uint64_t pred_wait_ns; /* admission's prediction of the queueing delay */
    bool ran_inline;       /* run by qos_sched_submit(): the owner drains, no wake() */
    eng_exec *exec;
    bool device_done;     /* the device completed before the worker let the job go */
    qos_job *prev, *next; /* running list, on-device list or finished list */
};

/* tp NULL: the first worker measures it (qos_throughput_measure) before this returns. */
qos_sched *qos_sched_new(const qos_sched_config *cfg, const qos_throughput *tp,
                         void (*wake)(void *ctx), void *wake_ctx);
/* The throughput the cost model uses. */
void qos_sched_throughput(qos_sched *s, qos_throughput *out);
/* Cancels what is queued, stops what runs at its next checkpoint, joins the workers,
 * then calls done() for every job not yet drained. Models outlive it only if referenced. */
void qos_sched_free(qos_sched *s);

/* Admits and queues j (or runs it, see "Short work"). SCHEMA_OK: done() follows. Otherwise
 * the refusal's status, with j->refused and j->err set; j is untouched by the scheduler
 * from then on. */
schema_status qos_sched_submit(qos_sched *s, qos_job *j);
/* Queued: finishes it cancelled at the next drain. Running: stops it at its next
 * checkpoint. Finished: nothing. */
void qos_sched_cancel(qos_sched *s, qos_job *j);
/* Calls done() of every finished job. */
void qos_sched_drain(qos_sched *s);
/* Counts a refusal decided outside the scheduler (an invalid priority, a model refused
 * at prepare), so that status shows every refusal. */
void qos_sched_note_refusal(qos_sched *s, qos_refusal why);

/* The exported latency histogram's bounds: 25 us doubling up to 13.1 s, each an exact
 * bucket edge of the latency histogram (estimate.h). */
#define QOS_LATENCY_BOUNDS      20
#define QOS_LATENCY_BOUND_NS(i) (25000ull << (i))

typedef struct qos_sched_stats {
    qos_sched_config cfg;
    qos_throughput throughput;
    bool owner_slice; /* the kernel took cfg.owner_slice_us for the owner's thread */
    unsigned running;
    size_t queued[QOS_PRIOS];
    uint64_t submitted, completed, failed, cancelled;
    uint64_t preempted;        /* suspensions at a checkpoint */
    uint64_t aborted_deadline; /* stopped at a checkpoint: would have missed */
    uint64_t deadline_met, deadline_missed;
    uint64_t refused[QOS_REFUSALS];
    uint64_t refused_at_dispatch;
    uint64_t latency_ns[QOS_PRIOS][3]; /* p50, p90, p99 of submit to finish, finished jobs */
    uint64_t latency_count[QOS_PRIOS];
    uint64_t latency_sum_ns[QOS_PRIOS];
    /* How many took less than QOS_LATENCY_BOUND_NS(i): a histogram for export. */
    uint64_t latency_below[QOS_PRIOS][QOS_LATENCY_BOUNDS];
    /* Per lane (cfg.lanes of them): its workers, jobs running and queued there now, run
     * segments it started, and jobs that came to its queue from another lane mid-run. */
    struct {
        unsigned workers, running;
        size_t queued;
        uint64_t segments, arrived;
    } lane[QOS_SCHED_LANES];
} qos_sched_stats;
void qos_sched_stats_get(qos_sched *s, qos_sched_stats *out);

#endif

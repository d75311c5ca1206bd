/* SPDX-License-Identifier: Apache-2.0 */
/* scheduler.c: admission, lanes, workers and checkpoints. See scheduler.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/sched_internal.h"
#include "sched/scheduler.h"
#include "sched/thread_sched.h"
#include "nnd/driver.h"

enum { J_NEW, J_QUEUED, J_RUNNING, J_ON_DEVICE, J_FINISHED, J_DRAINED };

/* Checkpoint answers that never leave the scheduler. */
#define ST_STOPPED ((schema_status)210)
#define ST_YIELD   ((schema_status)211)
#define ST_MOVE    ((schema_status)212) /* the next operation is another lane's */

#define MIN_WAIT_NS 1000000 /* waits shorter than this say little about the queue's pace */
#define MARGIN_NS   300000  /* the reply's way to the client, and timer noise */

static qos_job *job_of(qos_qentry *e) {
    return e ? (qos_job *)((char *)e - offsetof(qos_job, q)) : NULL;
}

/* ---- job bookkeeping (lock held) ------------------------------------------------------ */

static void list_add(qos_job **head, qos_job *j) {
    j->prev = NULL;
    j->next = *head;
    if (*head) (*head)->prev = j;
    *head = j;
}

static void list_del(qos_job **head, qos_job *j) {
    if (j->prev)
        j->prev->next = j->next;
    else
        *head = j->next;
    if (j->next) j->next->prev = j->prev;
    j->prev = j->next = NULL;
}

/* Wake-ups decided under the lock go out once it is released (sched_unlock): a thread
 * woken while its waker still holds the lock would only block on it. On one CPU that is
 * two more context switches per hand-off, since the owner's short slice lets it preempt
 * the worker that wakes it (thread_sched.h). */
static void send_due(qos_sched *s, unsigned work, bool owner) {
    if (work > 1)
        pthread_cond_broadcast(&s->work);
    else if (work)
        pthread_cond_signal(&s->work);
    if (owner && s->wake) s->wake(s->wake_ctx);
}

static void sched_unlock(qos_sched *s) {
    unsigned work = s->work_due;
    bool owner = s->owner_due;
    s->work_due = 0;
    s->owner_due = false;
    pthread_mutex_unlock(&s->lock);
    send_due(s, work, owner);
}

/* For threads other than the workers and the owner (a driver's completion): they send
 * under the lock, since once it is released qos_sched_free() may end and free s. */
static void sched_unlock_foreign(qos_sched *s) {
    send_due(s, s->work_due, s->owner_due);
    s->work_due = 0;
    s->owner_due = false;
    pthread_mutex_unlock(&s->lock);
}

static uint64_t left_of(const qos_job *j, uint64_t typical) {
    return (uint64_t)((1.0f - j->model->done_frac[j->next_op]) * (double)typical);
}

/* Every finished job passes here exactly once. */
static void finish(qos_sched *s, qos_job *j, schema_status st) {
    uint64_t now = eng_now_ns();
    qos_sched_model *m = j->model;
    j->status = st;
    j->end_ns = now;
    if (j->exec) {
        if (m->n_spare < sizeof m->spare / sizeof m->spare[0])
            m->spare[m->n_spare++] = j->exec;
        else
            eng_exec_free(j->exec);
        j->exec = NULL;
    }
    qos_sched_mem_sub(s, j->app, m->exec_bytes);
    if (j->cancelled) {
        s->cancelled++;
    } else {
        if (st == SCHEMA_OK || st == SCHEMA_OUTPUT_INSUFFICIENT_SIZE)
            s->completed++;
        else
            s->failed++;
        qos_hist_add(&s->latency[j->prio], now - j->submit_ns);
        if (j->deadline_ns) {
            j->deadline_met = st == SCHEMA_OK && now <= j->deadline_ns;
            if (j->deadline_met)
                s->met++;
            else
                s->missed++;
        }
    }
    j->state = J_FINISHED;
    j->next = NULL;
    if (s->fin_tail)
        s->fin_tail->next = j;
    else
        s->fin_head = j;
    s->fin_tail = j;
    if (!j->ran_inline) s->owner_due = true;
}

static void refuse(qos_sched *s, qos_job *j, qos_refusal why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refuse(qos_sched *s, qos_job *j, qos_refusal why, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err, sizeof j->err, fmt, ap);
    va_end(ap);
    j->refused = why;
    s->refused[why]++;
}

static schema_status refusal_status(qos_refusal why) {
    switch (why) {
    case QOS_REFUSE_INVALID: return SCHEMA_INVALID_ARGUMENT;
    case QOS_REFUSE_DEADLINE_PASSED:
    case QOS_REFUSE_TOO_SLOW: return SCHEMA_MISSED_DEADLINE_PERSISTENT;
    case QOS_REFUSE_BUSY: return SCHEMA_MISSED_DEADLINE_TRANSIENT;
    case QOS_REFUSE_QUEUE_FULL:
    case QOS_REFUSE_MEMORY: return SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT;
    case QOS_REFUSE_DEVICE_LIMIT: return SCHEMA_RESOURCE_EXHAUSTED_PERSISTENT;
    default: return SCHEMA_OK;
    }
}

/* Work the jobs running on lane l have left, but for those j will preempt. */
static uint64_t running_left(const sched_lane *l, const qos_job *j, uint64_t now) {
    uint64_t sum = 0;
    for (qos_job *r = l->running; r; r = r->next) {
        if (r->app == j->app && r->prio < j->prio) continue;
        uint64_t ran = now - r->seg_ns, left = r->q.cost_ns;
        sum += left > ran ? left - ran : 0;
    }
    return sum;
}

static qos_refusal admit_submit(qos_sched *s, qos_job *j, uint64_t now) {
    qos_sched_model *m = j->model;
    uint64_t typical = qos_est_typical(&m->est);
    if (m->exec_bytes > s->cfg.device_memory) {
        refuse(s, j, QOS_REFUSE_DEVICE_LIMIT,
               "one execution needs %zu bytes of temporaries; the device allows %llu",
               m->exec_bytes, (unsigned long long)s->cfg.device_memory);
        return j->refused;
    }
    if (j->deadline_ns && now >= j->deadline_ns) {
        refuse(s, j, QOS_REFUSE_DEADLINE_PASSED, "deadline passed before the execution was queued");
        return j->refused;
    }
    if (j->deadline_ns && now + typical > j->deadline_ns) {
        refuse(s, j, QOS_REFUSE_TOO_SLOW,
               "an execution takes about %llu us; only %llu us are left before the deadline",
               (unsigned long long)(typical / 1000),
               (unsigned long long)((j->deadline_ns - now) / 1000));
        return j->refused;
    }
    size_t queued = 0;
    for (unsigned l = 0; l < s->cfg.lanes; l++)
        queued += qos_queue_app_len(s->lanes[l].q, j->app);
    if (queued >= s->cfg.app_queue) {
        refuse(s, j, QOS_REFUSE_QUEUE_FULL, "%zu executions of this app are queued already",
               queued);
        return j->refused;
    }
    uint64_t held = qos_sched_mem_of(s, j->app);
    if (held + m->exec_bytes > s->cfg.app_memory) {
        refuse(s, j, QOS_REFUSE_MEMORY,
               "this app's queued and running executions hold %llu bytes; %zu more would pass "
               "its quota of %llu",
               (unsigned long long)held, m->exec_bytes, (unsigned long long)s->cfg.app_memory);
        return j->refused;
    }
    /* Predicted for every job, so that the feedback below learns from all of them. */
    qos_qentry probe = {.app = j->app, .prio = (uint8_t)j->prio, .deadline = j->deadline_ns};
    const sched_lane *l = &s->lanes[m->first_lane];
    uint64_t ahead = qos_queue_ahead(l->q, &probe) + running_left(l, j, now);
    uint64_t wait = ahead / l->workers;
    j->pred_wait_ns = wait;
    /* Nothing ahead: the device is as idle as it gets, and the check above stands. (Also
     * what keeps the feedback alive: refusing on stale history alone would never learn
     * that it is stale.) */
    if (j->deadline_ns && wait) {
        uint64_t factor = qos_est_tail(&s->inflation); /* x1000, at least 1000 */
        if (factor < 1000) factor = 1000;
        /* The wait doubled for stalls no history predicts (another process
         * taking the CPU for milliseconds); the job's own run at the slowest of its
         * model's recent runs. */
        uint64_t own = qos_est_max(&m->est);
        uint64_t finish_at =
            now + wait * factor / 1000 * 2 + own + own / 10 + qos_est_max(&s->lag) + MARGIN_NS;
        if (finish_at > j->deadline_ns) {
            refuse(s, j, QOS_REFUSE_BUSY,
                   "about %llu us of work is ahead of this execution; it would finish %llu us "
                   "after its deadline",
                   (unsigned long long)(wait / 1000),
                   (unsigned long long)((finish_at - j->deadline_ns) / 1000));
            return j->refused;
        }
    }
    return QOS_REFUSE_NONE;
}

/* When a worker takes j. A job that had run already (preempted, or come from another lane)
 * had been admitted: missing now is transient. Returns false after finishing j. */
static bool admit_dispatch(qos_sched *s, qos_job *j, uint64_t now) {
    if (atomic_load(&j->stop)) {
        j->cancelled = true;
        snprintf(j->err, sizeof j->err, "cancelled");
        finish(s, j, SCHEMA_GENERAL_FAILURE);
        return false;
    }
    /* A device completed its partition: the run finishes that first (its status, a missed
     * deadline the driver saw included); the next checkpoint judges the deadline. */
    if (!j->deadline_ns || j->device_done) return true;
    uint64_t left = left_of(j, qos_est_typical(&j->model->est));
    bool fresh = j->start_ns == 0;
    qos_refusal why = QOS_REFUSE_NONE;
    if (now >= j->deadline_ns)
        why = QOS_REFUSE_DEADLINE_PASSED;
    else if (now + left > j->deadline_ns)
        why = QOS_REFUSE_TOO_SLOW;
    if (!why) return true;
    if (fresh) {
        refuse(s, j, why, "%s when the execution reached the device",
               why == QOS_REFUSE_DEADLINE_PASSED ? "deadline passed"
                                                 : "too little time left before the deadline");
        s->refused_at_dispatch++;
        finish(s, j, refusal_status(why));
    } else {
        snprintf(j->err, sizeof j->err, "deadline missed while %s",
                 j->preemptions ? "preempted" : "waiting for the device of its next operation");
        finish(s, j, SCHEMA_MISSED_DEADLINE_TRANSIENT);
    }
    return false;
}

static void start(qos_sched *s, qos_job *j, uint64_t now) {
    if (!j->start_ns) {
        uint64_t pred = j->pred_wait_ns > MIN_WAIT_NS ? j->pred_wait_ns : MIN_WAIT_NS;
        qos_est_add(&s->inflation, (now - j->submit_ns) * 1000 / pred);
    }
    sched_lane *l = &s->lanes[j->lane];
    l->busy++;
    l->segments++;
    j->state = J_RUNNING;
    if (!j->start_ns) j->start_ns = now;
    j->seg_ns = now;
    j->est_ns = qos_est_typical(&j->model->est);
    j->q.cost_ns = left_of(j, j->est_ns); /* what running_left() counts down */
    atomic_store(&j->yield, false);
    qos_sched_model *m = j->model;
    if (!j->exec && m->n_spare) j->exec = m->spare[--m->n_spare];
    list_add(&l->running, j);
}

/* Queues j on lane `to` (lock held): a fresh job, one preempted there, or one arriving from
 * another lane. Unless it was preempted there, the lowest-priority job of its app running on
 * that lane yields to it when none of the lane's workers is idle. -1: out of memory. */
static int enqueue(qos_sched *s, qos_job *j, unsigned to, bool preempted) {
    sched_lane *l = &s->lanes[to];
    j->lane = (uint8_t)to;
    if (qos_queue_push(l->q, &j->q) < 0) return -1; /* a requeued one keeps its place: seq */
    j->state = J_QUEUED;
    if (!preempted && l->busy >= l->workers) {
        qos_job *victim = NULL;
        for (qos_job *r = l->running; r; r = r->next)
            if (r->app == j->app && r->prio < j->prio && (!victim || r->prio < victim->prio))
                victim = r;
        if (victim) atomic_store(&victim->yield, true);
    }
    s->work_due++;
    return 0;
}

/* A lane with queued work and room for it (lock held), lanes taking turns; prefer first
 * when it qualifies. NULL when none. */
static sched_lane *ready_lane(qos_sched *s, int prefer) {
    if (prefer >= 0) {
        sched_lane *l = &s->lanes[prefer];
        if (qos_queue_len(l->q) && l->busy < l->workers) return l;
    }
    for (unsigned k = 0; k < s->cfg.lanes; k++) {
        unsigned i = (s->next_lane + k) % s->cfg.lanes;
        sched_lane *l = &s->lanes[i];
        if (qos_queue_len(l->q) && l->busy < l->workers) {
            s->next_lane = (i + 1) % s->cfg.lanes;
            return l;
        }
    }
    return NULL;
}

/* At a step boundary of j, running on a worker, whose next operation is lane `to`'s: when
 * that lane has room and nothing queued, j goes on there on the same thread (no hand-off);
 * the lane it leaves has room again, for a worker that is idle (see worker()). */
static bool take_idle_lane(qos_sched *s, qos_job *j, unsigned to) {
    pthread_mutex_lock(&s->lock);
    sched_lane *from = &s->lanes[j->lane], *dst = &s->lanes[to];
    bool ok = !s->stopping && dst->busy < dst->workers && !qos_queue_len(dst->q);
    if (ok) {
        from->busy--;
        list_del(&from->running, j);
        dst->busy++;
        dst->segments++;
        dst->arrived++;
        list_add(&dst->running, j);
        j->lane = (uint8_t)to;
        j->seg_ns = eng_now_ns();
        j->q.cost_ns = left_of(j, j->est_ns);
        atomic_store(&j->yield, false); /* it no longer holds up the lane that asked */
        if (qos_queue_len(from->q)) s->work_due++;
    }
    sched_unlock(s);
    return ok;
}

/* ---- running (no lock held) ----------------------------------------------------------- */

static schema_status checkpoint(void *ctx, uint32_t next_op) {
    qos_job *j = ctx;
    if (atomic_load_explicit(&j->stop, memory_order_relaxed)) return ST_STOPPED;
    if (j->deadline_ns) {
        /* The whole run's estimate, whichever lanes its operations are on. */
        uint64_t now = eng_now_ns();
        uint64_t left = (uint64_t)((1.0f - j->model->done_frac[next_op]) * (double)j->est_ns);
        if (now + left > j->deadline_ns) {
            snprintf(j->err, sizeof j->err,
                     "stopped before operation %u of %u: about %llu us of work left would end "
                     "past the deadline",
                     next_op, j->model->n_ops, (unsigned long long)(left / 1000));
            return SCHEMA_MISSED_DEADLINE_TRANSIENT;
        }
    }
    const uint8_t *lane = j->model->lane;
    if (lane && lane[next_op] != j->lane) {
        j->next_op = next_op;
        /* The loop's thread never goes on into another device's work: it hands over. */
        if (j->ran_inline || !take_idle_lane(j->model->s, j, lane[next_op])) return ST_MOVE;
    }
    if (atomic_load_explicit(&j->yield, memory_order_relaxed)) {
        j->next_op = next_op;
        return ST_YIELD;
    }
    return SCHEMA_OK;
}

static void device_completed(void *ctx);

static int32_t driver_priority(qos_prio p) {
    return p == QOS_PRIO_LOW    ? NND_DRIVER_PRIORITY_LOW
           : p == QOS_PRIO_HIGH ? NND_DRIVER_PRIORITY_HIGH
                                : NND_DRIVER_PRIORITY_MEDIUM;
}

static schema_status run_segment(qos_sched *s, qos_job *j) {
    const eng_prepared *p = j->model->prepared;
    if (!j->exec && !(j->exec = eng_exec_create(p))) {
        snprintf(j->err, sizeof j->err, "out of memory creating an execution");
        return SCHEMA_GENERAL_FAILURE;
    }
    /* next_op > 0: suspended or moved (a preempted job that restarts is back at 0). */
    bool resume = j->next_op > 0 || j->device_done;
    if (!resume) j->run_ns = 0; /* starting over: only this run counts */
    j->device_done = false;
    eng_exec_set_notify(j->exec, device_completed, j);
    eng_checkpoint cp = {.check = checkpoint,
                         .ctx = j,
                         .loop_timeout_ns = j->loop_timeout_ns,
                         .priority = driver_priority(j->prio),
                         .deadline_ns = j->deadline_ns,
                         .measure = j->measure,
                         .can_suspend = true};
    uint64_t faults = s->cfg.fault_count ? s->cfg.fault_count() : 0;
    uint64_t t0 = eng_now_ns();
    schema_status st =
        resume
            ? eng_exec_resume(j->exec, j->next_op, j->shapes, &cp, j->err, sizeof j->err)
            : eng_exec_run(j->exec, j->inputs, j->outputs, j->shapes, &cp, j->err, sizeof j->err);
    j->run_ns += eng_now_ns() - t0;
    if (st == ENG_ON_DEVICE) {
        j->next_op = eng_exec_stopped_at(j->exec);
        return st;
    }
    eng_exec_driver_times(j->exec, &j->device_ns, &j->driver_ns);
    if (s->cfg.fault_count && s->cfg.fault_count() != faults) {
        snprintf(j->err, sizeof j->err, "a memory pool shrank during the execution");
        st = SCHEMA_GENERAL_FAILURE;
    }
    return st;
}

/* Queues j, whose device completed, on the lane of the operation it stopped at (lock
 * held); when the scheduler is stopping it finishes cancelled. */
static void device_requeue(qos_sched *s, qos_job *j) {
    if (s->stopping) {
        j->cancelled = true;
        snprintf(j->err, sizeof j->err, "cancelled: the daemon is stopping");
        finish(s, j, SCHEMA_GENERAL_FAILURE);
        return;
    }
    unsigned to = j->model->lane ? j->model->lane[j->next_op] : 0;
    j->device_done = true; /* run_segment() resumes it */
    /* It goes back to the lane that started the partition, to finish it there: a resume,
     * not an execution arriving from another device. */
    if (to != j->lane) s->lanes[to].arrived++;
    j->q.cost_ns = left_of(j, qos_est_typical(&j->model->est));
    if (enqueue(s, j, to, true) == 0) return;
    snprintf(j->err, sizeof j->err, "out of memory requeueing an execution");
    finish(s, j, SCHEMA_GENERAL_FAILURE);
}

/* The engine's notify: j's device completed its partition (any thread). */
static void device_completed(void *ctx) {
    qos_job *j = ctx;
    qos_sched *s = j->model->s;
    pthread_mutex_lock(&s->lock);
    if (j->state == J_ON_DEVICE) {
        list_del(&s->on_device, j);
        device_requeue(s, j);
        pthread_cond_broadcast(&s->device_cond);
    } else {
        j->device_done = true; /* its worker has not let it go yet: after_run() requeues */
    }
    sched_unlock_foreign(s);
}

/* After a run segment, lock held. Returns true when j yielded to work of its app. */
static bool after_run(qos_sched *s, qos_job *j, schema_status st) {
    sched_lane *l = &s->lanes[j->lane];
    l->busy--;
    list_del(&l->running, j);
    /* Room on l again: an idle worker may take what waits there (this one, unless inline,
     * may take another lane's work first). */
    if (qos_queue_len(l->q)) s->work_due++;
    if (st == ENG_ON_DEVICE) {
        j->ran_inline = false; /* a worker finishes it: the owner needs the wake */
        if (j->device_done) {
            device_requeue(s, j);
        } else {
            j->state = J_ON_DEVICE;
            list_add(&s->on_device, j);
        }
        return false;
    }
    if ((st == ST_YIELD || st == ST_MOVE) && !s->stopping) {
        bool yielded = st == ST_YIELD;
        unsigned to = j->model->lane ? j->model->lane[j->next_op] : 0;
        if (yielded) {
            j->preemptions++;
            s->preempted++;
            if (s->cfg.restart) j->next_op = 0, to = j->model->first_lane;
        } else {
            s->lanes[to].arrived++;
            j->ran_inline = false; /* a worker finishes it: the owner needs the wake */
        }
        j->q.cost_ns = left_of(j, qos_est_typical(&j->model->est));
        atomic_store(&j->yield, false);
        if (enqueue(s, j, to, yielded) == 0) return yielded;
        snprintf(j->err, sizeof j->err, "out of memory requeueing an execution");
        finish(s, j, SCHEMA_GENERAL_FAILURE);
        return false;
    }
    if (st == ST_YIELD || st == ST_MOVE || st == ST_STOPPED) {
        j->cancelled = true;
        snprintf(j->err, sizeof j->err, "cancelled");
        st = SCHEMA_GENERAL_FAILURE;
    } else if (st == SCHEMA_OK) {
        qos_est_add(&j->model->est, j->run_ns);
    } else if (st == SCHEMA_MISSED_DEADLINE_TRANSIENT) {
        s->aborted++;
    }
    finish(s, j, st);
    return false;
}

/* Workers serve every lane: each lane runs at most its share at once, and there are as many
 * workers as the shares add up to, so a lane with room always has an idle worker for it
 * (a job borrowing a worker's thread, inline or on another lane, holds only one share). */
static void *worker(void *arg) {
    qos_sched *s = arg;
    uint32_t prefer = 0;
    int prefer_lane = -1;
    /* At the process's nice value by default: computation keeps the share of the CPUs an
     * in-process library would have. Threads the engine starts from here inherit it. */
    qos_thread_sched_nice(s->cfg.worker_nice);
    pthread_mutex_lock(&s->lock);
    if (!s->measured && !s->measuring) {
        /* The first worker measures, so that the engine's kernel threads (started at its
         * first use) run at the workers' priority. */
        s->measuring = true;
        sched_unlock(s);
        qos_throughput tp;
        qos_throughput_measure(&tp);
        pthread_mutex_lock(&s->lock);
        s->tp = tp;
        s->measured = true;
        pthread_cond_broadcast(&s->measured_cond);
    }
    for (;;) {
        sched_lane *l = NULL;
        while (!s->stopping && !(l = ready_lane(s, prefer_lane))) {
            /* What the last run decided goes out before the wait. With work ready it goes
             * out once the next job is started: released sooner, the lock would let the
             * owner (woken, preempting this thread) in before the queue's head is taken. */
            if (s->work_due || s->owner_due) {
                sched_unlock(s);
                pthread_mutex_lock(&s->lock);
                continue;
            }
            pthread_cond_wait(&s->work, &s->lock);
        }
        if (s->stopping) break;
        bool preferred = prefer_lane >= 0 && l == &s->lanes[prefer_lane];
        qos_job *j = job_of(qos_queue_pop(l->q, preferred ? &prefer : NULL));
        prefer_lane = -1;
        uint64_t now = eng_now_ns();
        if (!admit_dispatch(s, j, now)) continue;
        start(s, j, now);
        if (ready_lane(s, -1)) s->work_due++; /* more than this one */
        sched_unlock(s);
        schema_status st = run_segment(s, j);
        pthread_mutex_lock(&s->lock);
        if (after_run(s, j, st)) {
            prefer = j->app;
            prefer_lane = j->lane;
        }
    }
    sched_unlock(s);
    return NULL;
}

/* ---- the owner's calls ---------------------------------------------------------------- */

static void free_lanes(qos_sched *s) {
    for (unsigned i = 0; i < s->cfg.lanes; i++)
        qos_queue_free(s->lanes[i].q);
}

qos_sched *qos_sched_new(const qos_sched_config *cfg, const qos_throughput *tp,
                         void (*wake)(void *ctx), void *wake_ctx) {
    qos_sched *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->cfg = *cfg;
    if (!s->cfg.workers) s->cfg.workers = 1;
    if (!s->cfg.lane_workers) s->cfg.lane_workers = 1;
    if (!s->cfg.lanes) s->cfg.lanes = 1;
    if (s->cfg.lanes > QOS_SCHED_LANES) s->cfg.lanes = QOS_SCHED_LANES;
    if (tp) s->tp = *tp;
    s->measured = tp != NULL;
    s->wake = wake;
    s->wake_ctx = wake_ctx;
    unsigned threads = s->cfg.workers + (s->cfg.lanes - 1) * s->cfg.lane_workers;
    bool ok = true;
    for (unsigned i = 0; i < s->cfg.lanes; i++) {
        sched_lane *l = &s->lanes[i];
        l->workers = i ? s->cfg.lane_workers : s->cfg.workers;
        l->q = qos_queue_new();
        ok &= l->q != NULL;
    }
    s->threads = calloc(threads, sizeof *s->threads);
    qos_est_init(&s->inflation, 1000);
    qos_est_init(&s->lag, 50000);
    if (!ok || !s->threads) goto fail;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->measured_cond, NULL);
    pthread_cond_init(&s->device_cond, NULL);
    for (; s->n_threads < threads; s->n_threads++)
        if (pthread_create(&s->threads[s->n_threads], NULL, worker, s) != 0) break;
    pthread_mutex_lock(&s->lock);
    while (s->n_threads == threads && !s->measured)
        pthread_cond_wait(&s->measured_cond, &s->lock);
    sched_unlock(s);
    if (s->n_threads == threads) {
        /* The owner's turns are short (admissions, replies): a short slice lets it preempt
         * a worker as soon as it wakes, at the same share of the CPU. Set once the workers
         * are started, so that they keep the default slice. */
        s->owner_slice = qos_thread_sched_slice(s->cfg.owner_slice_us);
        return s;
    }
    /* Not every worker started: stop those that did. */
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_broadcast(&s->work);
    sched_unlock(s);
    for (unsigned i = 0; i < s->n_threads; i++)
        pthread_join(s->threads[i], NULL);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->measured_cond);
    pthread_cond_destroy(&s->device_cond);
    pthread_mutex_destroy(&s->lock);
fail:
    free_lanes(s);
    free(s->threads);
    free(s);
    return NULL;
}

static void cancel_queued(qos_sched *s) {
    for (unsigned i = 0; i < s->cfg.lanes; i++) {
        qos_qentry *e;
        while ((e = qos_queue_pop(s->lanes[i].q, NULL))) {
            qos_job *j = job_of(e);
            j->cancelled = true;
            snprintf(j->err, sizeof j->err, "cancelled: the daemon is stopping");
            finish(s, j, SCHEMA_GENERAL_FAILURE);
        }
    }
}

void qos_sched_free(qos_sched *s) {
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    cancel_queued(s);
    for (unsigned i = 0; i < s->cfg.lanes; i++)
        for (qos_job *j = s->lanes[i].running; j; j = j->next)
            atomic_store(&j->stop, true);
    pthread_cond_broadcast(&s->work);
    sched_unlock(s);
    for (unsigned i = 0; i < s->n_threads; i++)
        pthread_join(s->threads[i], NULL);
    pthread_mutex_lock(&s->lock);
    cancel_queued(s);
    /* Work on devices: asked to stop, and waited for (each finishes cancelled). */
    for (qos_job *j = s->on_device; j; j = j->next)
        eng_exec_cancel_device(j->exec);
    while (s->on_device)
        pthread_cond_wait(&s->device_cond, &s->lock);
    sched_unlock(s);
    qos_sched_drain(s);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->measured_cond);
    pthread_cond_destroy(&s->device_cond);
    pthread_mutex_destroy(&s->lock);
    free_lanes(s);
    free(s->mem);
    free(s->threads);
    free(s);
}

schema_status qos_sched_submit(qos_sched *s, qos_job *j) {
    uint64_t now = eng_now_ns();
    j->submit_ns = now;
    j->start_ns = j->end_ns = j->run_ns = 0;
    j->status = SCHEMA_OK;
    j->refused = QOS_REFUSE_NONE;
    j->cancelled = j->deadline_met = false;
    j->preemptions = 0;
    j->err[0] = '\0';
    j->next_op = 0;
    j->lane = j->model->first_lane;
    j->pred_wait_ns = 0;
    j->ran_inline = false;
    j->exec = NULL;
    j->device_done = false;
    j->device_ns = j->driver_ns = UINT64_MAX;
    j->state = J_NEW;
    atomic_store(&j->stop, false);
    atomic_store(&j->yield, false);
    if ((unsigned)j->prio >= QOS_PRIOS) {
        pthread_mutex_lock(&s->lock);
        refuse(s, j, QOS_REFUSE_INVALID, "invalid priority");
        sched_unlock(s);
        return SCHEMA_INVALID_ARGUMENT;
    }
    memset(&j->q, 0, sizeof j->q);
    j->q.app = j->app;
    j->q.prio = (uint8_t)j->prio;
    j->q.deadline = j->deadline_ns;

    pthread_mutex_lock(&s->lock);
    qos_refusal why = admit_submit(s, j, now);
    if (why) {
        sched_unlock(s);
        return refusal_status(why);
    }
    uint64_t typical = qos_est_typical(&j->model->est);
    j->q.cost_ns = typical;
    if (s->stopping || qos_sched_mem_add(s, j->app, j->model->exec_bytes) < 0) {
        sched_unlock(s);
        snprintf(j->err, sizeof j->err, s->stopping ? "the daemon is stopping" : "out of memory");
        return SCHEMA_GENERAL_FAILURE;
    }
    qos_sched_model_ref(j->model);
    s->submitted++;
    sched_lane *l = &s->lanes[j->lane];
    if (typical < s->cfg.inline_ns && !j->model->loops && l->busy < l->workers &&
        !qos_queue_len(l->q)) {
        /* Short work on an idle device: run it here, as the worker it borrows. */
        j->ran_inline = true;
        start(s, j, now);
        sched_unlock(s);
        schema_status st = run_segment(s, j);
        pthread_mutex_lock(&s->lock);
        after_run(s, j, st); /* nobody could ask it to yield: submits come from this thread */
        sched_unlock(s);
        return SCHEMA_OK;
    }
    if (enqueue(s, j, j->lane, false) < 0) {
        qos_sched_mem_sub(s, j->app, j->model->exec_bytes);
        s->submitted--;
        sched_unlock(s);
        qos_sched_model_unref(j->model);
        snprintf(j->err, sizeof j->err, "out of memory queueing the execution");
        return SCHEMA_GENERAL_FAILURE;
    }
    sched_unlock(s);
    return SCHEMA_OK;
}

void qos_sched_cancel(qos_sched *s, qos_job *j) {
    pthread_mutex_lock(&s->lock);
    if (j->state == J_QUEUED) {
        qos_queue_remove(s->lanes[j->lane].q, &j->q);
        j->cancelled = true;
        snprintf(j->err, sizeof j->err, "cancelled");
        finish(s, j, SCHEMA_GENERAL_FAILURE);
    } else if (j->state == J_RUNNING) {
        atomic_store(&j->stop, true);
    } else if (j->state == J_ON_DEVICE) {
        /* Finishes cancelled once the device completed (admit_dispatch sees stop). */
        atomic_store(&j->stop, true);
        eng_exec_cancel_device(j->exec);
    }
    sched_unlock(s);
}

void qos_sched_drain(qos_sched *s) {
    /* Until nothing is left: a done() may submit again, and short work then finishes
     * inline, onto the list this drain already took. */
    for (;;) {
        uint64_t now = eng_now_ns();
        pthread_mutex_lock(&s->lock);
        qos_job *j = s->fin_head;
        s->fin_head = s->fin_tail = NULL;
        for (qos_job *x = j; x; x = x->next)
            qos_est_add(&s->lag, now > x->end_ns ? now - x->end_ns : 0);
        sched_unlock(s);
        if (!j) return;
        while (j) {
            qos_job *next = j->next;
            qos_sched_model *m = j->model;
            j->state = J_DRAINED;
            j->done(j); /* may free j */
            qos_sched_model_unref(m);
            j = next;
        }
    }
}

/* A model's life: held by its owner and by each job of it (scheduler.h). */
void qos_sched_model_ref(qos_sched_model *m) {
    m->refs++;
}

void qos_sched_model_unref(qos_sched_model *m) {
    if (!m || --m->refs) return;
    /* No job holds it, so no worker touches it any more. */
    for (unsigned i = 0; i < m->n_spare; i++)
        eng_exec_free(m->spare[i]);
    if (m->release) m->release(m->release_ctx);
    free(m->done_frac);
    free(m->lane);
    free(m);
}

/* scheduler.c: admission, workers, checkpoints and figures. See scheduler.h. */
#include "scheduler.h"
#include "thread_sched.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { J_NEW, J_QUEUED, J_RUNNING, J_FINISHED, J_DRAINED };

/* Checkpoint answers that never leave the scheduler. */
#define ST_STOPPED ((nnd_status)210)
#define ST_YIELD   ((nnd_status)211)

#define MIN_WAIT_NS 1000000 /* waits shorter than this say little about the queue's pace */
#define MARGIN_NS   300000  /* the reply's way to the client, and timer noise */

typedef struct app_mem {
    uint32_t app;
    uint64_t bytes;
} app_mem;

struct nnd_sched {
    nnd_sched_config cfg;
    nnd_throughput tp;
    void (*wake)(void *ctx);
    void *wake_ctx;
    pthread_mutex_t lock;
    pthread_cond_t work; /* workers wait here for jobs */
    pthread_t *threads;
    unsigned n_threads;
    bool measured;    /* the throughput is known (measured by the first worker) */
    bool owner_slice; /* the kernel took cfg.owner_slice_us for the owner's thread */
    bool stopping;
    unsigned busy; /* jobs running, on workers or inline */
    nnd_queue *q;
    nnd_job *running;             /* list */
    nnd_job *fin_head, *fin_tail; /* finished, not yet drained */
    app_mem *mem;                 /* execution memory held per app */
    size_t n_mem, cap_mem;
    /* figures */
    /* Feedback on the predictions, from what happened: how much longer than predicted
     * queued jobs waited (x1000), and how long finished jobs waited for the owner's
     * drain (the reply's way out). Admission uses both windows' tails. */
    nnd_estimator inflation, lag;
    uint64_t submitted, completed, failed, cancelled, preempted, aborted;
    uint64_t met, missed, refused[NND_REFUSALS], refused_at_dispatch;
    nnd_hist latency[NND_PRIOS];
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static nnd_job *job_of(nnd_qentry *e) {
    return e ? (nnd_job *)((char *)e - offsetof(nnd_job, q)) : NULL;
}

int nnd_prio_from_wire(int wire, nnd_prio dflt) {
    switch (wire) {
    case 0: return (int)dflt;
    case 90: return NND_PRIO_LOW;
    case 100: return NND_PRIO_MEDIUM;
    case 110: return NND_PRIO_HIGH;
    default: return -1;
    }
}

const char *nnd_prio_name(nnd_prio p) {
    static const char *names[NND_PRIOS] = {"low", "medium", "high"};
    return (unsigned)p < NND_PRIOS ? names[p] : "?";
}

const char *nnd_refusal_name(nnd_refusal r) {
    static const char *names[NND_REFUSALS] = {
        "none", "invalid_argument", "deadline_passed", "too_slow",
        "busy", "queue_full",       "memory_quota",    "device_limit"};
    return (unsigned)r < NND_REFUSALS ? names[r] : "?";
}

void nnd_sched_config_default(nnd_sched_config *c) {
    memset(c, 0, sizeof *c);
    c->workers = 1;
    c->app_queue = 64;
    c->app_memory = 1ull << 30;
    c->device_memory = 4ull << 30;
    c->inline_ns = 100000;
    c->worker_nice = 0;
    c->owner_slice_us = 100;
}

/* ---- per-app memory ------------------------------------------------------------------ */

static app_mem *mem_find(nnd_sched *s, uint32_t app) {
    for (size_t i = 0; i < s->n_mem; i++)
        if (s->mem[i].app == app) return &s->mem[i];
    return NULL;
}

static uint64_t mem_of(nnd_sched *s, uint32_t app) {
    app_mem *m = mem_find(s, app);
    return m ? m->bytes : 0;
}

static int mem_add(nnd_sched *s, uint32_t app, uint64_t bytes) {
    app_mem *m = mem_find(s, app);
    if (!m) {
        if (s->n_mem == s->cap_mem) {
            size_t cap = s->cap_mem ? 2 * s->cap_mem : 8;
            app_mem *v = realloc(s->mem, cap * sizeof *v);
            if (!v) return -1;
            s->mem = v;
            s->cap_mem = cap;
        }
        m = &s->mem[s->n_mem++];
        m->app = app;
        m->bytes = 0;
    }
    m->bytes += bytes;
    return 0;
}

static void mem_sub(nnd_sched *s, uint32_t app, uint64_t bytes) {
    app_mem *m = mem_find(s, app);
    if (!m) return;
    m->bytes -= bytes < m->bytes ? bytes : m->bytes;
    if (!m->bytes) *m = s->mem[--s->n_mem];
}

/* ---- models -------------------------------------------------------------------------- */

nnd_status nnd_sched_model_new(nnd_sched *s, const nnd_prepared *p, nnd_prio priority,
                               void (*release)(void *), void *release_ctx, nnd_sched_model **out,
                               char *err, size_t errlen) {
    *out = NULL;
    size_t bytes = nnd_prepared_arena_bytes(p);
    if (bytes > s->cfg.device_memory) {
        snprintf(err, errlen,
                 "one execution of this model needs %zu bytes of temporaries; the device "
                 "allows %llu",
                 bytes, (unsigned long long)s->cfg.device_memory);
        nnd_sched_note_refusal(s, NND_REFUSE_DEVICE_LIMIT);
        return NND_RESOURCE_EXHAUSTED_PERSISTENT;
    }
    nnd_sched_model *m = calloc(1, sizeof *m);
    uint32_t n = nnd_prepared_num_operations(p);
    float *frac = malloc(sizeof(float) * (n + 1));
    if (!m || !frac) {
        free(m);
        free(frac);
        snprintf(err, errlen, "out of memory");
        return NND_GENERAL_FAILURE;
    }
    double total = 0;
    for (uint32_t k = 0; k < n; k++) {
        frac[k] = (float)total; /* cumulative cost before k; normalized below */
        total += nnd_cost_step_ns(&s->tp, p, k);
    }
    for (uint32_t k = 0; k < n; k++)
        frac[k] = total > 0 ? (float)(frac[k] / total) : 0.0f;
    frac[n] = 1.0f;
    m->prepared = p;
    m->loops = nnd_prepared_loops(p);
    m->priority = priority;
    m->exec_bytes = bytes;
    m->seed_ns = (uint64_t)total + 1;
    m->s = s;
    m->done_frac = frac;
    m->n_ops = n;
    nnd_est_init(&m->est, m->seed_ns);
    m->refs = 1;
    m->release = release;
    m->release_ctx = release_ctx;
    *out = m;
    return NND_OK;
}

void nnd_sched_model_ref(nnd_sched_model *m) {
    m->refs++;
}

void nnd_sched_model_unref(nnd_sched_model *m) {
    if (!m || --m->refs) return;
    /* No job holds it, so no worker touches it any more. */
    for (unsigned i = 0; i < m->n_spare; i++)
        nnd_exec_free(m->spare[i]);
    if (m->release) m->release(m->release_ctx);
    free(m->done_frac);
    free(m);
}

void nnd_sched_model_estimate(nnd_sched_model *m, uint64_t *typical, uint64_t *tail) {
    pthread_mutex_lock(&m->s->lock);
    *typical = nnd_est_typical(&m->est);
    *tail = nnd_est_tail(&m->est);
    pthread_mutex_unlock(&m->s->lock);
}

/* ---- job bookkeeping (lock held) ------------------------------------------------------ */

static void list_add(nnd_job **head, nnd_job *j) {
    j->prev = NULL;
    j->next = *head;
    if (*head) (*head)->prev = j;
    *head = j;
}

static void list_del(nnd_job **head, nnd_job *j) {
    if (j->prev)
        j->prev->next = j->next;
    else
        *head = j->next;
    if (j->next) j->next->prev = j->prev;
    j->prev = j->next = NULL;
}

static uint64_t left_of(const nnd_job *j, uint64_t typical) {
    return (uint64_t)((1.0f - j->model->done_frac[j->next_op]) * (double)typical);
}

/* Every finished job passes here exactly once. */
static void finish(nnd_sched *s, nnd_job *j, nnd_status st) {
    uint64_t now = now_ns();
    nnd_sched_model *m = j->model;
    j->status = st;
    j->end_ns = now;
    if (j->exec) {
        if (m->n_spare < sizeof m->spare / sizeof m->spare[0])
            m->spare[m->n_spare++] = j->exec;
        else
            nnd_exec_free(j->exec);
        j->exec = NULL;
    }
    mem_sub(s, j->app, m->exec_bytes);
    if (j->cancelled) {
        s->cancelled++;
    } else {
        if (st == NND_OK || st == NND_OUTPUT_INSUFFICIENT_SIZE)
            s->completed++;
        else
            s->failed++;
        nnd_hist_add(&s->latency[j->prio], now - j->submit_ns);
        if (j->deadline_ns) {
            j->deadline_met = st == NND_OK && now <= j->deadline_ns;
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
    if (s->wake && !j->ran_inline) s->wake(s->wake_ctx);
}

static void refuse(nnd_sched *s, nnd_job *j, nnd_refusal why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refuse(nnd_sched *s, nnd_job *j, nnd_refusal why, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err, sizeof j->err, fmt, ap);
    va_end(ap);
    j->refused = why;
    s->refused[why]++;
}

static nnd_status refusal_status(nnd_refusal why) {
    switch (why) {
    case NND_REFUSE_INVALID: return NND_INVALID_ARGUMENT;
    case NND_REFUSE_DEADLINE_PASSED:
    case NND_REFUSE_TOO_SLOW: return NND_MISSED_DEADLINE_PERSISTENT;
    case NND_REFUSE_BUSY: return NND_MISSED_DEADLINE_TRANSIENT;
    case NND_REFUSE_QUEUE_FULL:
    case NND_REFUSE_MEMORY: return NND_RESOURCE_EXHAUSTED_TRANSIENT;
    case NND_REFUSE_DEVICE_LIMIT: return NND_RESOURCE_EXHAUSTED_PERSISTENT;
    default: return NND_OK;
    }
}

/* Work the running jobs have left, but for those j will preempt. */
static uint64_t running_left(nnd_sched *s, const nnd_job *j, uint64_t now) {
    uint64_t sum = 0;
    for (nnd_job *r = s->running; r; r = r->next) {
        if (r->app == j->app && r->prio < j->prio) continue;
        uint64_t ran = now - r->seg_ns, left = r->q.cost_ns;
        sum += left > ran ? left - ran : 0;
    }
    return sum;
}

static nnd_refusal admit_submit(nnd_sched *s, nnd_job *j, uint64_t now) {
    nnd_sched_model *m = j->model;
    uint64_t typical = nnd_est_typical(&m->est);
    if (m->exec_bytes > s->cfg.device_memory) {
        refuse(s, j, NND_REFUSE_DEVICE_LIMIT,
               "one execution needs %zu bytes of temporaries; the device allows %llu",
               m->exec_bytes, (unsigned long long)s->cfg.device_memory);
        return j->refused;
    }
    if (j->deadline_ns && now >= j->deadline_ns) {
        refuse(s, j, NND_REFUSE_DEADLINE_PASSED, "deadline passed before the execution was queued");
        return j->refused;
    }
    if (j->deadline_ns && now + typical > j->deadline_ns) {
        refuse(s, j, NND_REFUSE_TOO_SLOW,
               "an execution takes about %llu us; only %llu us are left before the deadline",
               (unsigned long long)(typical / 1000),
               (unsigned long long)((j->deadline_ns - now) / 1000));
        return j->refused;
    }
    size_t queued = nnd_queue_app_len(s->q, j->app);
    if (queued >= s->cfg.app_queue) {
        refuse(s, j, NND_REFUSE_QUEUE_FULL, "%zu executions of this app are queued already",
               queued);
        return j->refused;
    }
    uint64_t held = mem_of(s, j->app);
    if (held + m->exec_bytes > s->cfg.app_memory) {
        refuse(s, j, NND_REFUSE_MEMORY,
               "this app's queued and running executions hold %llu bytes; %zu more would pass "
               "its quota of %llu",
               (unsigned long long)held, m->exec_bytes, (unsigned long long)s->cfg.app_memory);
        return j->refused;
    }
    /* Predicted for every job, so that the feedback below learns from all of them. */
    nnd_qentry probe = {.app = j->app, .prio = (uint8_t)j->prio, .deadline = j->deadline_ns};
    uint64_t ahead = nnd_queue_ahead(s->q, &probe) + running_left(s, j, now);
    uint64_t wait = ahead / (s->cfg.workers ? s->cfg.workers : 1);
    j->pred_wait_ns = wait;
    /* Nothing ahead: the device is as idle as it gets, and the check above stands. (Also
     * what keeps the feedback alive: refusing on stale history alone would never learn
     * that it is stale.) */
    if (j->deadline_ns && wait) {
        uint64_t factor = nnd_est_tail(&s->inflation); /* x1000, at least 1000 */
        if (factor < 1000) factor = 1000;
        /* The wait doubled for stalls no history predicts (another process
         * taking the CPU for milliseconds); the job's own run at the slowest of its
         * model's recent runs. */
        uint64_t own = nnd_est_max(&m->est);
        uint64_t finish_at =
            now + wait * factor / 1000 * 2 + own + own / 10 + nnd_est_max(&s->lag) + MARGIN_NS;
        if (finish_at > j->deadline_ns) {
            refuse(s, j, NND_REFUSE_BUSY,
                   "about %llu us of work is ahead of this execution; it would finish %llu us "
                   "after its deadline",
                   (unsigned long long)(wait / 1000),
                   (unsigned long long)((finish_at - j->deadline_ns) / 1000));
            return j->refused;
        }
    }
    return NND_REFUSE_NONE;
}

/* When a worker takes j. A preempted job had been admitted and run: missing now is
 * transient. Returns false after finishing j. */
static bool admit_dispatch(nnd_sched *s, nnd_job *j, uint64_t now) {
    if (atomic_load(&j->stop)) {
        j->cancelled = true;
        snprintf(j->err, sizeof j->err, "cancelled");
        finish(s, j, NND_GENERAL_FAILURE);
        return false;
    }
    if (!j->deadline_ns) return true;
    uint64_t left = left_of(j, nnd_est_typical(&j->model->est));
    bool fresh = j->preemptions == 0;
    nnd_refusal why = NND_REFUSE_NONE;
    if (now >= j->deadline_ns)
        why = NND_REFUSE_DEADLINE_PASSED;
    else if (now + left > j->deadline_ns)
        why = NND_REFUSE_TOO_SLOW;
    if (!why) return true;
    if (fresh) {
        refuse(s, j, why, "%s when the execution reached the device",
               why == NND_REFUSE_DEADLINE_PASSED ? "deadline passed"
                                                 : "too little time left before the deadline");
        s->refused_at_dispatch++;
        finish(s, j, refusal_status(why));
    } else {
        snprintf(j->err, sizeof j->err, "deadline missed while preempted");
        finish(s, j, NND_MISSED_DEADLINE_TRANSIENT);
    }
    return false;
}

static void start(nnd_sched *s, nnd_job *j, uint64_t now) {
    if (!j->start_ns) {
        uint64_t pred = j->pred_wait_ns > MIN_WAIT_NS ? j->pred_wait_ns : MIN_WAIT_NS;
        nnd_est_add(&s->inflation, (now - j->submit_ns) * 1000 / pred);
    }
    s->busy++;
    j->state = J_RUNNING;
    if (!j->start_ns) j->start_ns = now;
    j->seg_ns = now;
    j->est_ns = nnd_est_typical(&j->model->est);
    j->q.cost_ns = left_of(j, j->est_ns); /* what running_left() counts down */
    atomic_store(&j->yield, false);
    nnd_sched_model *m = j->model;
    if (!j->exec && m->n_spare) j->exec = m->spare[--m->n_spare];
    list_add(&s->running, j);
}

/* ---- running (no lock held) ----------------------------------------------------------- */

static nnd_status checkpoint(void *ctx, uint32_t next_op) {
    nnd_job *j = ctx;
    if (atomic_load_explicit(&j->stop, memory_order_relaxed)) return ST_STOPPED;
    if (j->deadline_ns) {
        uint64_t now = now_ns();
        uint64_t left = (uint64_t)((1.0f - j->model->done_frac[next_op]) * (double)j->est_ns);
        if (now + left > j->deadline_ns) {
            snprintf(j->err, sizeof j->err,
                     "stopped before operation %u of %u: about %llu us of work left would end "
                     "past the deadline",
                     next_op, j->model->n_ops, (unsigned long long)(left / 1000));
            return NND_MISSED_DEADLINE_TRANSIENT;
        }
    }
    if (atomic_load_explicit(&j->yield, memory_order_relaxed)) {
        j->next_op = next_op;
        return ST_YIELD;
    }
    return NND_OK;
}

static nnd_status run_segment(nnd_sched *s, nnd_job *j) {
    const nnd_prepared *p = j->model->prepared;
    if (!j->exec && !(j->exec = nnd_exec_create(p))) {
        snprintf(j->err, sizeof j->err, "out of memory creating an execution");
        return NND_GENERAL_FAILURE;
    }
    bool resume = j->next_op > 0 && !s->cfg.restart;
    if (!resume) {
        j->next_op = 0;
        j->run_ns = 0; /* starting over: only this run counts */
    }
    nnd_checkpoint cp = {.check = checkpoint, .ctx = j, .loop_timeout_ns = j->loop_timeout_ns};
    uint64_t faults = s->cfg.fault_count ? s->cfg.fault_count() : 0;
    uint64_t t0 = now_ns();
    nnd_status st =
        resume
            ? nnd_exec_resume(j->exec, j->next_op, j->shapes, &cp, j->err, sizeof j->err)
            : nnd_exec_run(j->exec, j->inputs, j->outputs, j->shapes, &cp, j->err, sizeof j->err);
    j->run_ns += now_ns() - t0;
    if (s->cfg.fault_count && s->cfg.fault_count() != faults) {
        snprintf(j->err, sizeof j->err, "a memory pool shrank during the execution");
        st = NND_GENERAL_FAILURE;
    }
    return st;
}

/* After a run segment, lock held. Returns true when j yielded to work of its app. */
static bool after_run(nnd_sched *s, nnd_job *j, nnd_status st) {
    s->busy--;
    list_del(&s->running, j);
    if (st == ST_YIELD && !s->stopping) {
        j->preemptions++;
        s->preempted++;
        if (s->cfg.restart) j->next_op = 0;
        j->q.cost_ns = left_of(j, nnd_est_typical(&j->model->est));
        atomic_store(&j->yield, false);
        j->state = J_QUEUED;
        if (nnd_queue_push(s->q, &j->q) == 0) return true; /* keeps its place: seq */
        snprintf(j->err, sizeof j->err, "out of memory requeueing a preempted execution");
        finish(s, j, NND_GENERAL_FAILURE);
        return false;
    }
    if (st == ST_YIELD || st == ST_STOPPED) {
        j->cancelled = true;
        snprintf(j->err, sizeof j->err, "cancelled");
        st = NND_GENERAL_FAILURE;
    } else if (st == NND_OK) {
        nnd_est_add(&j->model->est, j->run_ns);
    } else if (st == NND_MISSED_DEADLINE_TRANSIENT) {
        s->aborted++;
    }
    finish(s, j, st);
    return false;
}

static void *worker(void *arg) {
    nnd_sched *s = arg;
    uint32_t prefer = 0;
    bool has_prefer = false;
    /* At the process's nice value by default: computation keeps the share of the CPUs an
     * in-process library would have. Threads the engine starts from here inherit it. */
    nnd_thread_sched_nice(s->cfg.worker_nice);
    pthread_mutex_lock(&s->lock);
    if (!s->measured) {
        /* The first worker measures, so that the engine's kernel threads (started at its
         * first use) run at the workers' priority. */
        pthread_mutex_unlock(&s->lock);
        nnd_throughput tp;
        nnd_throughput_measure(&tp);
        pthread_mutex_lock(&s->lock);
        s->tp = tp;
        s->measured = true;
        pthread_cond_broadcast(&s->work);
    }
    for (;;) {
        while (!s->stopping && (!nnd_queue_len(s->q) || s->busy >= s->cfg.workers))
            pthread_cond_wait(&s->work, &s->lock);
        if (s->stopping) break;
        nnd_job *j = job_of(nnd_queue_pop(s->q, has_prefer ? &prefer : NULL));
        has_prefer = false;
        uint64_t now = now_ns();
        if (!admit_dispatch(s, j, now)) continue;
        start(s, j, now);
        pthread_mutex_unlock(&s->lock);
        nnd_status st = run_segment(s, j);
        pthread_mutex_lock(&s->lock);
        if (after_run(s, j, st)) {
            prefer = j->app;
            has_prefer = true;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- the owner's calls ---------------------------------------------------------------- */

nnd_sched *nnd_sched_new(const nnd_sched_config *cfg, const nnd_throughput *tp,
                         void (*wake)(void *ctx), void *wake_ctx) {
    nnd_sched *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->cfg = *cfg;
    if (!s->cfg.workers) s->cfg.workers = 1;
    if (tp) s->tp = *tp;
    s->measured = tp != NULL;
    s->wake = wake;
    s->wake_ctx = wake_ctx;
    s->q = nnd_queue_new();
    s->threads = calloc(s->cfg.workers, sizeof *s->threads);
    nnd_est_init(&s->inflation, 1000);
    nnd_est_init(&s->lag, 50000);
    if (!s->q || !s->threads) goto fail;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    for (; s->n_threads < s->cfg.workers; s->n_threads++)
        if (pthread_create(&s->threads[s->n_threads], NULL, worker, s) != 0) break;
    pthread_mutex_lock(&s->lock);
    while (s->n_threads && !s->measured)
        pthread_cond_wait(&s->work, &s->lock);
    pthread_mutex_unlock(&s->lock);
    /* The owner's turns are short (admissions, replies): a short slice lets it preempt a
     * worker as soon as it wakes, at the same share of the CPU. Set once the workers are
     * started, so that they keep the default slice. */
    if (s->n_threads) s->owner_slice = nnd_thread_sched_slice(s->cfg.owner_slice_us);
    if (s->n_threads) return s;
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->lock);
fail:
    nnd_queue_free(s->q);
    free(s->threads);
    free(s);
    return NULL;
}

static void cancel_queued(nnd_sched *s) {
    nnd_qentry *e;
    while ((e = nnd_queue_pop(s->q, NULL))) {
        nnd_job *j = job_of(e);
        j->cancelled = true;
        snprintf(j->err, sizeof j->err, "cancelled: the daemon is stopping");
        finish(s, j, NND_GENERAL_FAILURE);
    }
}

void nnd_sched_free(nnd_sched *s) {
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    cancel_queued(s);
    for (nnd_job *j = s->running; j; j = j->next)
        atomic_store(&j->stop, true);
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->lock);
    for (unsigned i = 0; i < s->n_threads; i++)
        pthread_join(s->threads[i], NULL);
    pthread_mutex_lock(&s->lock);
    cancel_queued(s);
    pthread_mutex_unlock(&s->lock);
    nnd_sched_drain(s);
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->lock);
    nnd_queue_free(s->q);
    free(s->mem);
    free(s->threads);
    free(s);
}

nnd_status nnd_sched_submit(nnd_sched *s, nnd_job *j) {
    uint64_t now = now_ns();
    j->submit_ns = now;
    j->start_ns = j->end_ns = j->run_ns = 0;
    j->status = NND_OK;
    j->refused = NND_REFUSE_NONE;
    j->cancelled = j->deadline_met = false;
    j->preemptions = 0;
    j->err[0] = '\0';
    j->next_op = 0;
    j->pred_wait_ns = 0;
    j->ran_inline = false;
    j->exec = NULL;
    j->state = J_NEW;
    atomic_store(&j->stop, false);
    atomic_store(&j->yield, false);
    if ((unsigned)j->prio >= NND_PRIOS) {
        pthread_mutex_lock(&s->lock);
        refuse(s, j, NND_REFUSE_INVALID, "invalid priority");
        pthread_mutex_unlock(&s->lock);
        return NND_INVALID_ARGUMENT;
    }
    memset(&j->q, 0, sizeof j->q);
    j->q.app = j->app;
    j->q.prio = (uint8_t)j->prio;
    j->q.deadline = j->deadline_ns;

    pthread_mutex_lock(&s->lock);
    nnd_refusal why = admit_submit(s, j, now);
    if (why) {
        pthread_mutex_unlock(&s->lock);
        return refusal_status(why);
    }
    uint64_t typical = nnd_est_typical(&j->model->est);
    j->q.cost_ns = typical;
    if (s->stopping || mem_add(s, j->app, j->model->exec_bytes) < 0) {
        pthread_mutex_unlock(&s->lock);
        snprintf(j->err, sizeof j->err, s->stopping ? "the daemon is stopping" : "out of memory");
        return NND_GENERAL_FAILURE;
    }
    nnd_sched_model_ref(j->model);
    s->submitted++;
    if (typical < s->cfg.inline_ns && !j->model->loops && s->busy < s->cfg.workers &&
        !nnd_queue_len(s->q)) {
        /* Short work on an idle device: run it here, as the worker it borrows. */
        j->ran_inline = true;
        start(s, j, now);
        pthread_mutex_unlock(&s->lock);
        nnd_status st = run_segment(s, j);
        pthread_mutex_lock(&s->lock);
        after_run(s, j, st); /* nobody could ask it to yield: submits come from this thread */
        pthread_mutex_unlock(&s->lock);
        return NND_OK;
    }
    if (nnd_queue_push(s->q, &j->q) < 0) {
        mem_sub(s, j->app, j->model->exec_bytes);
        s->submitted--;
        pthread_mutex_unlock(&s->lock);
        nnd_sched_model_unref(j->model);
        snprintf(j->err, sizeof j->err, "out of memory queueing the execution");
        return NND_GENERAL_FAILURE;
    }
    j->state = J_QUEUED;
    if (s->busy >= s->cfg.workers) {
        /* No worker is idle: the lowest-priority running job of this app yields. */
        nnd_job *victim = NULL;
        for (nnd_job *r = s->running; r; r = r->next)
            if (r->app == j->app && r->prio < j->prio && (!victim || r->prio < victim->prio))
                victim = r;
        if (victim) atomic_store(&victim->yield, true);
    }
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->lock);
    return NND_OK;
}

void nnd_sched_cancel(nnd_sched *s, nnd_job *j) {
    pthread_mutex_lock(&s->lock);
    if (j->state == J_QUEUED) {
        nnd_queue_remove(s->q, &j->q);
        j->cancelled = true;
        snprintf(j->err, sizeof j->err, "cancelled");
        finish(s, j, NND_GENERAL_FAILURE);
    } else if (j->state == J_RUNNING) {
        atomic_store(&j->stop, true);
    }
    pthread_mutex_unlock(&s->lock);
}

void nnd_sched_drain(nnd_sched *s) {
    /* Until nothing is left: a done() may submit again, and short work then finishes
     * inline, onto the list this drain already took. */
    for (;;) {
        uint64_t now = now_ns();
        pthread_mutex_lock(&s->lock);
        nnd_job *j = s->fin_head;
        s->fin_head = s->fin_tail = NULL;
        for (nnd_job *x = j; x; x = x->next)
            nnd_est_add(&s->lag, now > x->end_ns ? now - x->end_ns : 0);
        pthread_mutex_unlock(&s->lock);
        if (!j) return;
        while (j) {
            nnd_job *next = j->next;
            nnd_sched_model *m = j->model;
            j->state = J_DRAINED;
            j->done(j); /* may free j */
            nnd_sched_model_unref(m);
            j = next;
        }
    }
}

void nnd_sched_note_refusal(nnd_sched *s, nnd_refusal why) {
    if ((unsigned)why >= NND_REFUSALS) return;
    pthread_mutex_lock(&s->lock);
    s->refused[why]++;
    pthread_mutex_unlock(&s->lock);
}

void nnd_sched_stats_get(nnd_sched *s, nnd_sched_stats *o) {
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&s->lock);
    o->cfg = s->cfg;
    o->throughput = s->tp;
    o->owner_slice = s->owner_slice;
    o->running = s->busy;
    for (unsigned p = 0; p < NND_PRIOS; p++) {
        o->queued[p] = nnd_queue_depth(s->q, p);
        o->latency_ns[p][0] = nnd_hist_quantile(&s->latency[p], 0.50);
        o->latency_ns[p][1] = nnd_hist_quantile(&s->latency[p], 0.90);
        o->latency_ns[p][2] = nnd_hist_quantile(&s->latency[p], 0.99);
        o->latency_count[p] = s->latency[p].count;
        o->latency_sum_ns[p] = s->latency[p].sum_ns;
        for (unsigned i = 0; i < NND_LATENCY_BOUNDS; i++)
            o->latency_below[p][i] = nnd_hist_count_below(&s->latency[p], NND_LATENCY_BOUND_NS(i));
    }
    o->submitted = s->submitted;
    o->completed = s->completed;
    o->failed = s->failed;
    o->cancelled = s->cancelled;
    o->preempted = s->preempted;
    o->aborted_deadline = s->aborted;
    o->deadline_met = s->met;
    o->deadline_missed = s->missed;
    memcpy(o->refused, s->refused, sizeof o->refused);
    o->refused_at_dispatch = s->refused_at_dispatch;
    pthread_mutex_unlock(&s->lock);
}

void nnd_sched_throughput(nnd_sched *s, nnd_throughput *out) {
    pthread_mutex_lock(&s->lock);
    *out = s->tp;
    pthread_mutex_unlock(&s->lock);
}

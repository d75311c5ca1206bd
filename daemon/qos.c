/* qos.c: Execute, ExecuteFenced, GetFencedExecutionInfo and Cancel through the scheduler,
 * fence waits on the loop, replies when the workers are done. See qos.h. */
#include "qos.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "buffer.h"
#include "burst.h"
#include "bus.h"
#include "convert.h"
#include "log.h"
#include "pool.h"
#include "reply.h"

typedef struct qjob qjob;
typedef struct fenced fenced;

#define JOB_SPARES 32

struct nnd_qos {
    nnd_daemon *d;
    nnd_sched *sched;
    uv_async_t async; /* workers -> loop: finished jobs to drain */
    qjob *jobs;       /* every live job: waiting on fences or in the scheduler */
    /* Blocks of finished jobs, kept for the next ones: in steady state an execution
     * allocates nothing. */
    qjob *spare[JOB_SPARES];
    size_t n_spare;
};

enum { K_EXECUTE, K_FENCED, K_BURST };

static const char *const kind_call[] = {"Execute", "ExecuteFenced", "BurstExecute"};

struct qjob {
    nnd_job j; /* first: the scheduler hands this pointer back */
    nnd_qos *q;
    nnd_session *s; /* NULL once the connection is gone: nobody to answer */
    pid_t pid;
    uid_t uid;
    uint64_t request_id, model_handle;
    int kind;
    bool measure;
    bool waiting;  /* on fences, not yet submitted */
    bool in_sched; /* submitted; done() pending */
    bool retried;  /* driver buffers regrown once */
    bool charged;  /* counts against s's quota.*.queued_executions (quota.h) */
    uint64_t t0;   /* the request's arrival */
    nnd_pool *pools;
    size_t n_pools;
    nnd_io *inputs, *outputs;
    nnd_output_shape *shapes;
    uint32_t n_out;
    nnd_buffer_binding *bb;
    fenced *f;
    qjob *prev, *next;
    size_t block_bytes; /* the job and its arrays are one block of this size */
};

typedef struct fwait {
    uv_poll_t poll;
    int fd;
    fenced *f; /* NULL once abandoned */
} fwait;

/* A fenced execution, owned by its session (NND_OBJ_EXECUTION) and by its job. */
struct fenced {
    nnd_session *s;
    int efd;   /* signalled at the end; the client got a copy */
    qjob *job; /* until the execution ends */
    bool done, released, fence_failed;
    nnd_status status;
    bool measure;
    uint64_t deadline_ns, timeout_after_fence_ns;
    uint64_t t_call, t_fenced, t_end, run_ns;
    fwait **waits;
    size_t n_waits, n_pending;
    uint64_t *waiters; /* GetFencedExecutionInfo request ids asked before the end */
    size_t n_waiters;
};

static void event_rejected(nnd_qos *q, const qjob *x, nnd_status st, nnd_refusal why,
                           const char *at) {
    cJSON *ev = nnd_bus_event(q->d->bus, "rejected");
    if (ev) {
        cJSON_AddNumberToObject(ev, "pid", x->pid);
        cJSON_AddNumberToObject(ev, "uid", x->uid);
        nnd_json_add_handle(ev, "handle", x->model_handle);
        cJSON_AddStringToObject(ev, "priority", nnd_prio_name(x->j.prio));
        cJSON_AddStringToObject(ev, "reason", nnd_refusal_name(why));
        cJSON_AddStringToObject(ev, "status", nnd_status_wire_name(st));
        cJSON_AddStringToObject(ev, "at", at);
    }
    nnd_bus_publish(q->d->bus, ev);
}

/* ---- jobs ------------------------------------------------------------------------------ */

static void job_link(nnd_qos *q, qjob *x) {
    x->prev = NULL;
    x->next = q->jobs;
    if (q->jobs) q->jobs->prev = x;
    q->jobs = x;
}

/* Gives back x's place in its session's execution quota. */
static void job_uncharge(qjob *x) {
    if (x->charged && x->s) nnd_quota_add(x->s, NND_QUOTA_QUEUED_EXECUTIONS, -1);
    x->charged = false;
}

static void job_free(nnd_qos *q, qjob *x) {
    job_uncharge(x);
    if (x->prev)
        x->prev->next = x->next;
    else if (q->jobs == x)
        q->jobs = x->next;
    if (x->next) x->next->prev = x->prev;
    if (x->bb) nnd_buffers_finish(x->bb, false, &x->j.status, NULL, NULL, 0);
    nnd_pools_release(x->pools, x->n_pools);
    if (x->j.model) nnd_sched_model_unref(x->j.model);
    if (q->n_spare < JOB_SPARES)
        q->spare[q->n_spare++] = x;
    else
        free(x);
}

static size_t round16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

/* A zeroed job with its arrays (pools, inputs, outputs, shapes, and the views job_make
 * needs while binding) in one block, a spare one when one is big enough. */
static qjob *job_alloc(nnd_qos *q, size_t n_pools, uint32_t ni, uint32_t no,
                       nnd_memory_view **views) {
    size_t at_pools = round16(sizeof(qjob));
    size_t at_in = at_pools + round16((n_pools + 1) * sizeof(nnd_pool));
    size_t at_out = at_in + round16((ni + 1) * sizeof(nnd_io));
    size_t at_shapes = at_out + round16((no + 1) * sizeof(nnd_io));
    size_t at_views = at_shapes + round16((no + 1) * sizeof(nnd_output_shape));
    size_t total = at_views + (n_pools + 1) * sizeof(nnd_memory_view);
    qjob *x = NULL;
    size_t cap = total;
    for (size_t i = 0; i < q->n_spare; i++) {
        if (q->spare[i]->block_bytes >= total) {
            x = q->spare[i];
            cap = x->block_bytes;
            q->spare[i] = q->spare[--q->n_spare];
            break;
        }
    }
    if (!x && !(x = malloc(total))) return NULL;
    memset(x, 0, total);
    x->block_bytes = cap;
    char *base = (char *)x;
    x->pools = (nnd_pool *)(base + at_pools);
    x->inputs = (nnd_io *)(base + at_in);
    x->outputs = (nnd_io *)(base + at_out);
    x->shapes = (nnd_output_shape *)(base + at_shapes);
    *views = (nnd_memory_view *)(base + at_views);
    return x;
}

/* Outputs must land in memory mapped writable. */
static nnd_status check_outputs_writable(const Nnd__ExecutionRequest *r, const nnd_pool *pools,
                                         char *err, size_t errlen) {
    for (size_t i = 0; i < r->n_outputs; i++) {
        const Nnd__RequestArgument *a = r->outputs[i];
        if (a->has_no_value || !a->location || a->location->pool_index >= r->n_pools) continue;
        if (!pools[a->location->pool_index].writable) {
            snprintf(err, errlen, "output %zu points into pool %u, which is read-only", i,
                     a->location->pool_index);
            return NND_INVALID_ARGUMENT;
        }
    }
    return NND_OK;
}

static void job_done(nnd_job *j);

/* Maps and binds a request into a new job (not linked, not submitted); with a burst, its
 * pools resolve through the burst's slots, which keep what it cached only on success. */
static nnd_status job_make(nnd_qos *q, nnd_session *s, nnd_frame_in *in, uint64_t id,
                           uint64_t model_handle, nnd_sched_model *m, nnd_burst *b,
                           const Nnd__ExecutionRequest *r, qjob **out, char *err, size_t errlen) {
    *out = NULL;
    const nnd_prepared *p = m->prepared;
    uint32_t ni = nnd_prepared_num_inputs(p), no = nnd_prepared_num_outputs(p);
    /* Refused before any mapping, so a flood of refusals costs little. */
    nnd_status st = nnd_quota_take(s, NND_QUOTA_QUEUED_EXECUTIONS, 1, err, errlen);
    if (st != NND_OK) return st;
    nnd_memory_view *views;
    qjob *x = job_alloc(q, r->n_pools, ni, no, &views);
    if (!x) {
        nnd_quota_add(s, NND_QUOTA_QUEUED_EXECUTIONS, -1);
        snprintf(err, errlen, "out of memory");
        return NND_GENERAL_FAILURE;
    }
    x->charged = true;
    x->q = q;
    x->s = s;
    x->pid = s->pid;
    x->uid = s->uid;
    x->request_id = id;
    x->model_handle = model_handle;
    x->t0 = nnd_now_ns();
    x->n_out = no;
    if (b) {
        st = nnd_burst_map_pools(b, r, in, x->pools, err, errlen);
        if (st == NND_OK) x->n_pools = r->n_pools;
    } else {
        if (!s->pool_cache) s->pool_cache = nnd_pool_cache_create();
        st = nnd_pools_map(r->pools, r->n_pools, in, false, s->pool_cache, x->pools, err, errlen);
        if (st == NND_OK) x->n_pools = r->n_pools;
    }
    for (size_t i = 0; i < x->n_pools; i++)
        views[i] = x->pools[i].view;
    if (st == NND_OK) st = check_outputs_writable(r, x->pools, err, errlen);
    if (st == NND_OK)
        st = nnd_request_from_proto(r, p, views, x->n_pools, x->inputs, x->outputs, err, errlen);
    if (st == NND_OK)
        st = nnd_buffers_bind(s, model_handle, p, r, x->inputs, x->outputs, &x->bb, err, errlen);
    if (b && st == NND_OK) nnd_burst_commit(b);
    if (st != NND_OK) {
        job_free(q, x);
        if (b) nnd_burst_rollback(b); /* after job_free: the job's views went first */
        return st;
    }
    x->j.model = m;
    nnd_sched_model_ref(m); /* also while it waits on fences, before the scheduler has it */
    x->j.app = (uint32_t)s->uid;
    x->j.inputs = x->inputs;
    x->j.outputs = x->outputs;
    x->j.shapes = x->shapes;
    x->j.done = job_done;
    x->j.ctx = x;
    *out = x;
    return NND_OK;
}

static void timing_of(const qjob *x, nnd_status st, uint64_t since, Nnd__Timing *t) {
    nnd__timing__init(t);
    t->time_on_device_ns = t->time_in_driver_ns = UINT64_MAX;
    if (!x->measure || st != NND_OK || !since) return;
    t->time_on_device_ns = x->j.run_ns;
    t->time_in_driver_ns = x->j.end_ns - since;
}

static void reply_executed(qjob *x, nnd_status st, const char *msg) {
    nnd_session *s = x->s;
    if (st != NND_OK && st != NND_OUTPUT_INSUFFICIENT_SIZE) {
        nnd_reply_error(s, x->request_id, kind_call[x->kind], st, msg);
        return;
    }
    /* Most models have a few outputs: their shapes go out from the stack. */
    Nnd__OutputShape ws_few[8], *wsp_few[8];
    bool few = x->n_out <= 8;
    Nnd__OutputShape *ws = few ? ws_few : calloc(x->n_out, sizeof *ws);
    Nnd__OutputShape **wsp = few ? wsp_few : calloc(x->n_out, sizeof *wsp);
    if (!ws || !wsp) {
        free(ws);
        free(wsp);
        nnd_reply_error(s, x->request_id, kind_call[x->kind], NND_GENERAL_FAILURE, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < x->n_out; i++) {
        nnd__output_shape__init(&ws[i]);
        ws[i].n_dimensions = x->shapes[i].rank;
        ws[i].dimensions = x->shapes[i].dims;
        ws[i].is_sufficient = x->shapes[i].sufficient;
        wsp[i] = &ws[i];
    }
    Nnd__ExecuteReply er = NND__EXECUTE_REPLY__INIT;
    er.n_output_shapes = x->n_out;
    er.output_shapes = wsp;
    Nnd__Timing timing;
    timing_of(x, st, x->t0, &timing);
    er.timing = &timing;
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = x->request_id;
    r.status = nnd_wire_status(st);
    if (st != NND_OK) r.message = (char *)msg;
    r.result_case = NND__REPLY__RESULT_EXECUTED;
    r.executed = &er;
    s->send(s->send_ctx, &r.base, NULL, 0);
    if (!few) {
        free(ws);
        free(wsp);
    }
}

/* ---- fenced executions ------------------------------------------------------------------ */

static void fwait_closed(uv_handle_t *h) {
    fwait *w = h->data;
    close(w->fd);
    free(w);
}

/* Stops every fence wait still pending. */
static void fenced_drop_waits(fenced *f) {
    for (size_t i = 0; i < f->n_waits; i++) {
        fwait *w = f->waits[i];
        if (!w) continue;
        w->f = NULL;
        uv_poll_stop(&w->poll);
        uv_close((uv_handle_t *)&w->poll, fwait_closed);
        f->waits[i] = NULL;
    }
    f->n_pending = 0;
}

static void fenced_free(fenced *f) {
    fenced_drop_waits(f);
    if (f->efd >= 0) close(f->efd);
    free(f->waits);
    free(f->waiters);
    free(f);
}

static void reply_info(fenced *f, uint64_t id) {
    Nnd__FencedExecutionInfoReply info = NND__FENCED_EXECUTION_INFO_REPLY__INIT;
    Nnd__Timing launched = NND__TIMING__INIT, at_fence = NND__TIMING__INIT;
    launched.time_on_device_ns = launched.time_in_driver_ns = UINT64_MAX;
    at_fence.time_on_device_ns = at_fence.time_in_driver_ns = UINT64_MAX;
    if (f->measure && f->status == NND_OK) {
        launched.time_on_device_ns = at_fence.time_on_device_ns = f->run_ns;
        launched.time_in_driver_ns = f->t_end - f->t_call;
        if (f->t_fenced) at_fence.time_in_driver_ns = f->t_end - f->t_fenced;
    }
    info.status = nnd_wire_status(f->status);
    info.timing_launched = &launched;
    info.timing_fenced = &at_fence;
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = id;
    r.result_case = NND__REPLY__RESULT_FENCED_INFO;
    r.fenced_info = &info;
    f->s->send(f->s->send_ctx, &r.base, NULL, 0);
}

/* The execution ended (or never ran): record, signal the fence, answer who asked. */
static void fenced_end(fenced *f, const qjob *x, nnd_status st, const char *msg) {
    fenced_drop_waits(f);
    f->done = true;
    f->job = NULL;
    f->status = st;
    if (st != NND_OK && x->s)
        nnd_log_debug("client %llu: ExecuteFenced id %llu: %s: %s",
                      (unsigned long long)x->s->serial, (unsigned long long)x->request_id,
                      nnd_status_wire_name(st), msg ? msg : "");
    f->t_end = x->j.end_ns ? x->j.end_ns : nnd_now_ns();
    f->run_ns = x->j.run_ns;
    uint64_t one = 1;
    if (write(f->efd, &one, sizeof one) != (ssize_t)sizeof one)
        nnd_log_warn("cannot signal a fenced execution's eventfd: %s", strerror(errno));
    if (x->s)
        for (size_t i = 0; i < f->n_waiters; i++)
            reply_info(f, f->waiters[i]);
    f->n_waiters = 0;
    if (f->released) fenced_free(f);
}

/* The session's free function (Release, or the connection closing). */
static void fenced_release(void *p) {
    fenced *f = p;
    f->released = true;
    if (!f->s->closing)
        for (size_t i = 0; i < f->n_waiters; i++)
            nnd_reply_error(f->s, f->waiters[i], "GetFencedExecutionInfo", NND_GENERAL_FAILURE,
                            "the execution was released before it ended");
    f->n_waiters = 0;
    if (!f->job) fenced_free(f); /* else when the execution ends */
}

/* ---- completion ------------------------------------------------------------------------ */

/* Answers (or records) the end of x and frees it. */
static void job_complete(nnd_qos *q, qjob *x, nnd_status st, const char *msg) {
    nnd_job *j = &x->j;
    if (x->kind == K_FENCED && x->f) {
        fenced_end(x->f, x, st, msg);
        x->f = NULL;
    } else if (x->s) {
        reply_executed(x, st, msg);
    }
    if (j->refused) {
        event_rejected(q, x, st, j->refused, "dispatch");
    } else {
        cJSON *ev = nnd_bus_event(q->d->bus, "executed");
        if (ev) {
            cJSON_AddNumberToObject(ev, "pid", x->pid);
            nnd_json_add_handle(ev, "handle", x->model_handle);
            cJSON_AddStringToObject(ev, "status", nnd_status_wire_name(st));
            cJSON_AddStringToObject(ev, "priority", nnd_prio_name(j->prio));
            uint64_t end = j->end_ns ? j->end_ns : nnd_now_ns();
            nnd_json_add_u64(ev, "latency_ns", end - x->t0);
            nnd_json_add_u64(ev, "queue_wait_ns", j->start_ns ? j->start_ns - j->submit_ns : 0);
            nnd_json_add_u64(ev, "run_ns", j->run_ns);
            cJSON_AddNumberToObject(ev, "preemptions", j->preemptions);
            if (j->deadline_ns)
                cJSON_AddStringToObject(ev, "deadline", j->deadline_met ? "met" : "missed");
            if (j->cancelled) cJSON_AddBoolToObject(ev, "cancelled", 1);
            if (x->kind == K_BURST) cJSON_AddBoolToObject(ev, "burst", 1);
        }
        nnd_bus_publish(q->d->bus, ev);
    }
    job_free(q, x);
}

/* The scheduler's done(), on the loop. */
static void job_done(nnd_job *j) {
    qjob *x = j->ctx;
    nnd_qos *q = x->q;
    x->in_sched = false;
    nnd_status st = j->status;
    bool ran = j->start_ns != 0;
    if (st == NND_OUTPUT_INSUFFICIENT_SIZE && x->bb && !x->retried && !j->cancelled &&
        nnd_buffers_regrow(x->bb, x->shapes, x->outputs)) {
        /* Flexible driver buffers grew to what the outputs need: one more run. */
        x->retried = true;
        st = nnd_sched_submit(q->sched, j);
        if (st == NND_OK) {
            x->in_sched = true;
            return;
        }
    }
    if (x->bb) nnd_buffers_finish(x->bb, ran, &st, x->shapes, j->err, sizeof j->err);
    x->bb = NULL;
    if (ran) q->d->executions++;
    job_complete(q, x, st, j->err);
}

/* Admits x; a refusal is answered at once. */
static void job_submit(nnd_qos *q, qjob *x) {
    x->waiting = false;
    nnd_status st = nnd_sched_submit(q->sched, &x->j);
    if (st != NND_OK) {
        event_rejected(q, x, st, x->j.refused, "submit");
        x->j.refused = NND_REFUSE_NONE; /* counted and announced: not again at completion */
        if (x->bb) nnd_buffers_finish(x->bb, false, &st, NULL, NULL, 0);
        x->bb = NULL;
        if (x->kind == K_FENCED && x->f) {
            fenced_end(x->f, x, st, x->j.err);
            x->f = NULL;
        } else if (x->s) {
            nnd_reply_error(x->s, x->request_id, kind_call[x->kind], st, x->j.err);
        }
        job_free(q, x);
        return;
    }
    x->in_sched = true;
    nnd_sched_drain(q->sched); /* short work may have run already */
}

static void on_fence(uv_poll_t *h, int status, int events) {
    (void)events;
    fwait *w = h->data;
    fenced *f = w->f;
    if (!f) return;
    if (status < 0) {
        f->fence_failed = true;
    } else {
        struct sync_file_info info;
        memset(&info, 0, sizeof info);
        /* A sync_file says whether it signalled an error; an eventfd has no such ioctl. */
        if (ioctl(w->fd, SYNC_IOC_FILE_INFO, &info) == 0 && info.status < 0) f->fence_failed = true;
    }
    for (size_t i = 0; i < f->n_waits; i++)
        if (f->waits[i] == w) f->waits[i] = NULL;
    w->f = NULL;
    uv_poll_stop(&w->poll);
    uv_close((uv_handle_t *)&w->poll, fwait_closed);
    if (--f->n_pending) return;
    qjob *x = f->job;
    nnd_qos *q = x->q;
    if (f->fence_failed) {
        snprintf(x->j.err, sizeof x->j.err, "a fence this execution waited for signalled an error");
        job_complete(q, x, NND_GENERAL_FAILURE, x->j.err);
        return;
    }
    f->t_fenced = nnd_now_ns();
    uint64_t deadline = f->deadline_ns;
    if (f->timeout_after_fence_ns) {
        uint64_t after = f->t_fenced + f->timeout_after_fence_ns;
        if (!deadline || after < deadline) deadline = after;
    }
    x->j.deadline_ns = deadline;
    job_submit(q, x);
}

/* ---- the loop side of the workers ------------------------------------------------------- */

static void on_async(uv_async_t *h) {
    nnd_qos *q = h->data;
    nnd_sched_drain(q->sched);
}

static void wake(void *ctx) {
    nnd_qos *q = ctx;
    uv_async_send(&q->async);
}

int nnd_qos_start(nnd_daemon *d, const nnd_sched_config *cfg, char *err, size_t errlen) {
    nnd_qos *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    q->d = d;
    nnd_sched_config c = *cfg;
    c.fault_count = nnd_pool_faults;
    /* No job can finish before the handle exists: the scheduler may start first. Its
     * first worker measures the throughput. */
    q->sched = nnd_sched_new(&c, NULL, wake, q);
    if (!q->sched) {
        snprintf(err, errlen, "cannot start %u worker threads", c.workers);
        free(q);
        return -1;
    }
    if (uv_async_init(d->loop, &q->async, on_async) < 0) {
        snprintf(err, errlen, "cannot create the workers' wakeup handle");
        nnd_sched_free(q->sched);
        free(q);
        return -1;
    }
    q->async.data = q;
    nnd_throughput tp;
    nnd_sched_throughput(q->sched, &tp);
    nnd_log_info("scheduler: %u worker%s, preempted work %s; device %.1f GFLOP/s, %.1f GB/s, "
                 "%.2f us per operation (measured in %.1f ms)",
                 c.workers, c.workers == 1 ? "" : "s", c.restart ? "restarts" : "resumes",
                 tp.flops_per_ns, tp.bytes_per_ns, tp.op_ns / 1000, (double)tp.took_ns / 1e6);
    d->qos = q;
    return 0;
}

static void on_async_closed(uv_handle_t *h) {
    nnd_qos *q = h->data;
    while (q->n_spare)
        free(q->spare[--q->n_spare]);
    free(q);
}

void nnd_qos_stop(nnd_daemon *d) {
    nnd_qos *q = d->qos;
    if (!q) return;
    /* Fence waits first (they are not the scheduler's), then everything it holds. */
    for (qjob *x = q->jobs, *next; x; x = next) {
        next = x->next;
        x->s = NULL;
        if (x->waiting) {
            x->j.cancelled = true;
            job_complete(q, x, NND_GENERAL_FAILURE, "cancelled: the daemon is stopping");
        }
    }
    nnd_sched_free(q->sched);
    q->sched = NULL;
    d->qos = NULL;
    uv_close((uv_handle_t *)&q->async, on_async_closed);
}

nnd_status nnd_qos_model(nnd_daemon *d, const nnd_prepared *p, int wire_priority,
                         void (*release)(void *), void *ctx, nnd_sched_model **out, char *err,
                         size_t errlen) {
    int prio = nnd_prio_from_wire(wire_priority, NND_PRIO_MEDIUM);
    return nnd_sched_model_new(d->qos->sched, p, prio < 0 ? NND_PRIO_MEDIUM : (nnd_prio)prio,
                               release, ctx, out, err, errlen);
}

/* ---- handlers ---------------------------------------------------------------------------- */

/* Execute and BurstExecute: map, bind, admit; the reply comes when the job is done. */
static void execute(nnd_qos *q, nnd_session *s, nnd_frame_in *in, uint64_t id, int kind,
                    uint64_t model_handle, nnd_sched_model *m, nnd_burst *b,
                    const Nnd__ExecutionRequest *r, bool measure, int wire_priority,
                    uint64_t deadline_ns) {
    char err[NND_ERR_LEN];
    int prio = nnd_prio_from_wire(wire_priority, m->priority);
    if (prio < 0) {
        nnd_close_unclaimed(in);
        nnd_sched_note_refusal(q->sched, NND_REFUSE_INVALID);
        snprintf(err, sizeof err, "invalid priority %d", wire_priority);
        nnd_reply_error(s, id, kind_call[kind], NND_INVALID_ARGUMENT, err);
        return;
    }
    if (!r) {
        nnd_close_unclaimed(in);
        snprintf(err, sizeof err, "%s names no request", kind_call[kind]);
        nnd_reply_error(s, id, kind_call[kind], NND_INVALID_ARGUMENT, err);
        return;
    }
    qjob *job;
    nnd_status st = job_make(q, s, in, id, model_handle, m, b, r, &job, err, sizeof err);
    nnd_close_unclaimed(in);
    if (st != NND_OK) {
        nnd_reply_error(s, id, kind_call[kind], st, err);
        return;
    }
    job->kind = kind;
    job->measure = measure;
    job->j.prio = (nnd_prio)prio;
    job->j.deadline_ns = deadline_ns;
    job_link(q, job);
    job_submit(q, job);
}

void nnd_qos_execute(nnd_daemon *d, nnd_session *s, nnd_frame_in *in, const Nnd__Request *req,
                     nnd_sched_model *m) {
    const Nnd__Execute *x = req->execute;
    execute(d->qos, s, in, req->id, K_EXECUTE, x->prepared_model, m, NULL, x->request,
            x->measure_timing, x->priority, x->deadline_ns);
}

void nnd_qos_burst_execute(nnd_daemon *d, nnd_session *s, nnd_frame_in *in, const Nnd__Request *req,
                           nnd_sched_model *m, nnd_burst *b) {
    const Nnd__BurstExecute *x = req->burst_execute;
    /* A burst runs at its compilation's priority. */
    execute(d->qos, s, in, req->id, K_BURST, nnd_burst_model(b), m, b, x->request,
            x->measure_timing, NND__PRIORITY__PRIORITY_UNSPECIFIED, x->deadline_ns);
}

void nnd_qos_execute_fenced(nnd_daemon *d, nnd_session *s, nnd_frame_in *in,
                            const Nnd__Request *req, nnd_sched_model *m) {
    nnd_qos *q = d->qos;
    const Nnd__ExecuteFenced *x = req->execute_fenced;
    char err[NND_ERR_LEN];
    nnd_status st = NND_OK;
    fenced *f = calloc(1, sizeof *f);
    if (f) {
        f->efd = -1;
        f->s = s;
        f->waits = calloc(x->n_wait_for_fds + 1, sizeof *f->waits);
    }
    if (!f || !f->waits) {
        st = NND_GENERAL_FAILURE;
        snprintf(err, sizeof err, "out of memory");
    } else if (!x->request) {
        st = NND_INVALID_ARGUMENT;
        snprintf(err, sizeof err, "ExecuteFenced names no request");
    } else if (x->deadline_ns && nnd_now_ns() >= x->deadline_ns) {
        st = NND_MISSED_DEADLINE_PERSISTENT;
        snprintf(err, sizeof err, "deadline passed before the execution was launched");
        nnd_sched_note_refusal(q->sched, NND_REFUSE_DEADLINE_PASSED);
    }
    /* The fences first: their fds must not be taken for pools. */
    for (size_t i = 0; st == NND_OK && i < x->n_wait_for_fds; i++) {
        int fd = nnd_frame_take_fd(in, x->wait_for_fds[i]);
        if (fd < 0) {
            st = NND_INVALID_ARGUMENT;
            snprintf(err, sizeof err,
                     "wait_for_fds[%zu] names fd index %u, which is missing or "
                     "named twice",
                     i, x->wait_for_fds[i]);
            break;
        }
        fwait *w = calloc(1, sizeof *w);
        if (!w || uv_poll_init(d->loop, &w->poll, fd) < 0) {
            close(fd);
            free(w);
            st = NND_INVALID_ARGUMENT;
            snprintf(err, sizeof err, "fence %zu cannot be waited on (not an eventfd or sync_file)",
                     i);
            break;
        }
        w->fd = fd;
        w->f = f;
        w->poll.data = w;
        f->waits[f->n_waits++] = w;
    }
    qjob *job = NULL;
    if (st == NND_OK)
        st = job_make(q, s, in, req->id, x->prepared_model, m, NULL, x->request, &job, err,
                      sizeof err);
    nnd_close_unclaimed(in);
    uint64_t handle = 0;
    if (st == NND_OK && (f->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        st = NND_GENERAL_FAILURE;
        snprintf(err, sizeof err, "cannot create the sync fence: %s", strerror(errno));
    }
    if (st == NND_OK && nnd_session_add(s, NND_OBJ_EXECUTION, f, fenced_release, &handle) < 0) {
        st = NND_RESOURCE_EXHAUSTED_TRANSIENT;
        snprintf(err, sizeof err, "this connection holds too many objects; release some first");
    }
    if (st != NND_OK) {
        if (job) job_free(q, job);
        if (f) fenced_free(f);
        nnd_reply_error(s, req->id, "ExecuteFenced", st, err);
        return;
    }
    job->kind = K_FENCED;
    job->measure = f->measure = x->measure_timing;
    job->j.prio = m->priority;
    job->f = f;
    f->job = job;
    f->deadline_ns = x->deadline_ns;
    f->timeout_after_fence_ns = x->timeout_after_fence_ns;
    f->t_call = job->t0;
    job_link(q, job);

    Nnd__ExecuteFencedReply fr = NND__EXECUTE_FENCED_REPLY__INIT;
    fr.execution = handle;
    fr.sync_fence_fd = 0;
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = req->id;
    r.result_case = NND__REPLY__RESULT_EXECUTE_FENCED;
    r.execute_fenced = &fr;
    s->send(s->send_ctx, &r.base, &f->efd, 1);

    if (!f->n_waits) {
        f->t_fenced = job->t0;
        job->j.deadline_ns = x->deadline_ns;
        if (x->timeout_after_fence_ns) {
            uint64_t after = f->t_fenced + x->timeout_after_fence_ns;
            if (!job->j.deadline_ns || after < job->j.deadline_ns) job->j.deadline_ns = after;
        }
        job_submit(q, job);
        return;
    }
    job->waiting = true;
    f->n_pending = f->n_waits;
    for (size_t i = 0; i < f->n_waits; i++)
        uv_poll_start(&f->waits[i]->poll, UV_READABLE, on_fence);
}

void nnd_qos_fenced_info(nnd_daemon *d, nnd_session *s, const Nnd__Request *req) {
    (void)d;
    uint64_t h = req->get_fenced_execution_info->execution;
    fenced *f = nnd_session_find(s, h, NND_OBJ_EXECUTION);
    if (!f) {
        char err[96];
        snprintf(err, sizeof err, "unknown execution handle 0x%016llx", (unsigned long long)h);
        nnd_reply_error(s, req->id, "GetFencedExecutionInfo", NND_INVALID_ARGUMENT, err);
        return;
    }
    if (f->done) {
        reply_info(f, req->id);
        return;
    }
    uint64_t *w = realloc(f->waiters, (f->n_waiters + 1) * sizeof *w);
    if (!w) {
        nnd_reply_error(s, req->id, "GetFencedExecutionInfo", NND_GENERAL_FAILURE, "out of memory");
        return;
    }
    f->waiters = w;
    f->waiters[f->n_waiters++] = req->id;
}

void nnd_qos_cancel(nnd_daemon *d, nnd_session *s, const Nnd__Request *req) {
    nnd_qos *q = d->qos;
    uint64_t id = req->cancel->request_id;
    qjob *x = q->jobs;
    while (x && !(x->s == s && x->request_id == id))
        x = x->next;
    if (!x) {
        char err[128];
        snprintf(err, sizeof err, "no execution of request id %llu is in flight",
                 (unsigned long long)id);
        nnd_reply_error(s, req->id, "Cancel", NND_INVALID_ARGUMENT, err);
        return;
    }
    Nnd__Empty done = NND__EMPTY__INIT;
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = req->id;
    r.result_case = NND__REPLY__RESULT_DONE;
    r.done = &done;
    s->send(s->send_ctx, &r.base, NULL, 0);
    if (x->waiting) {
        x->j.cancelled = true;
        job_complete(q, x, NND_GENERAL_FAILURE, "cancelled");
    } else if (x->in_sched) {
        nnd_sched_cancel(q->sched, &x->j);
    }
}

void nnd_qos_session_closed(nnd_daemon *d, nnd_session *s) {
    nnd_qos *q = d->qos;
    if (!q) return;
    for (qjob *x = q->jobs, *next; x; x = next) {
        next = x->next;
        if (x->s != s) continue;
        job_uncharge(x); /* the app gets its room back now, not when the work stops */
        x->s = NULL;
        if (x->waiting) {
            x->j.cancelled = true;
            job_complete(q, x, NND_GENERAL_FAILURE, "cancelled: the connection closed");
        } else if (x->in_sched) {
            nnd_sched_cancel(q->sched, &x->j);
        }
    }
}

/* ---- status ------------------------------------------------------------------------------ */

cJSON *nnd_qos_status(nnd_daemon *d) {
    nnd_qos *q = d->qos;
    cJSON *o = cJSON_CreateObject();
    if (!o || !q) return o;
    nnd_sched_stats st;
    nnd_sched_stats_get(q->sched, &st);
    cJSON_AddNumberToObject(o, "workers", st.cfg.workers);
    cJSON_AddStringToObject(o, "preempted_work", st.cfg.restart ? "restarts" : "resumes");
    cJSON_AddNumberToObject(o, "running", st.running);
    cJSON *queued = cJSON_AddObjectToObject(o, "queued");
    cJSON *lat = cJSON_AddObjectToObject(o, "latency_us");
    for (int p = NND_PRIOS - 1; p >= 0; p--) {
        const char *name = nnd_prio_name((nnd_prio)p);
        cJSON_AddNumberToObject(queued, name, (double)st.queued[p]);
        cJSON *l = cJSON_AddObjectToObject(lat, name);
        nnd_json_add_u64(l, "count", st.latency_count[p]);
        nnd_json_add_u64(l, "p50", st.latency_ns[p][0] / 1000);
        nnd_json_add_u64(l, "p90", st.latency_ns[p][1] / 1000);
        nnd_json_add_u64(l, "p99", st.latency_ns[p][2] / 1000);
    }
    nnd_json_add_u64(o, "submitted", st.submitted);
    nnd_json_add_u64(o, "completed", st.completed);
    nnd_json_add_u64(o, "failed", st.failed);
    nnd_json_add_u64(o, "cancelled", st.cancelled);
    nnd_json_add_u64(o, "preempted", st.preempted);
    nnd_json_add_u64(o, "aborted_for_deadline", st.aborted_deadline);
    cJSON *dl = cJSON_AddObjectToObject(o, "deadlines");
    nnd_json_add_u64(dl, "met", st.deadline_met);
    nnd_json_add_u64(dl, "missed", st.deadline_missed);
    cJSON *ref = cJSON_AddObjectToObject(o, "refused");
    for (int r = 1; r < NND_REFUSALS; r++)
        nnd_json_add_u64(ref, nnd_refusal_name((nnd_refusal)r), st.refused[r]);
    nnd_json_add_u64(ref, "of_which_at_dispatch", st.refused_at_dispatch);
    cJSON *lim = cJSON_AddObjectToObject(o, "limits");
    cJSON_AddNumberToObject(lim, "app_queue", st.cfg.app_queue);
    nnd_json_add_u64(lim, "app_memory", st.cfg.app_memory);
    nnd_json_add_u64(lim, "device_memory", st.cfg.device_memory);
    cJSON *tp = cJSON_AddObjectToObject(o, "device");
    cJSON_AddNumberToObject(tp, "gflops", st.throughput.flops_per_ns);
    cJSON_AddNumberToObject(tp, "gbytes_per_s", st.throughput.bytes_per_ns);
    cJSON_AddNumberToObject(tp, "us_per_operation", st.throughput.op_ns / 1000);
    return o;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* execution.c: executions from the request to the reply: made and bound, submitted to
 * the scheduler, answered on the loop when the workers are done; Cancel. See execution.h. */
#include "daemon/calls/execution.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/binding/bind.h"
#include "daemon/binding/burst.h"
#include "daemon/base/bus.h"
#include "daemon/devices/devices.h"
#include "daemon/stats/tally.h"
#include "daemon/base/log.h"
#include "daemon/base/wakeup.h"
#include "daemon/clients/pool.h"
#include "daemon/wire/convert.h"
#include "daemon/wire/reply.h"

#define JOB_SPARES 32

struct srv_executions {
    srv_daemon *d;
    qos_sched *sched;
    srv_wakeup wake;     /* workers -> loop: finished jobs to drain (wakeup.h says why) */
    srv_execution *jobs; /* every live job: waiting or in the scheduler */
    /* Blocks of finished jobs, kept for the next ones: in steady state an execution
     * allocates nothing. */
    srv_execution *spare[JOB_SPARES];
    size_t n_spare;
};

enum { K_EXECUTE, K_FENCED, K_BURST };

static const char *const kind_call[] = {"Execute", "ExecuteFenced", "BurstExecute"};

struct srv_execution {
    qos_job j; /* first: the scheduler hands this pointer back */
    srv_executions *q;
    srv_session *s; /* NULL once the connection is gone: nobody to answer */
    pid_t pid;
    uint64_t client; /* the session's id, for events */
    uid_t uid;
    uint64_t request_id, model_handle;
    int kind;
    bool measure;
    bool waiting;     /* not yet submitted: on fences (fenced.h) */
    bool in_sched;    /* submitted; done() pending */
    bool retried;     /* driver buffers regrown once */
    bool charged;     /* counts against s's quota.*.queued_executions (quota.h) */
    uint64_t t0;      /* the request's arrival */
    srv_binding bind; /* pools, inputs, outputs: the arrays follow the job in its block */
    eng_output_shape *shapes;
    uint32_t n_out;
    srv_execution_end_fn end; /* answered through this instead of a reply, until it ends */
    void *end_ctx;
    srv_execution *prev, *next;
    size_t block_bytes; /* the job and its arrays are one block of this size */
};

static void event_rejected(srv_executions *q, const srv_execution *x, schema_status st,
                           qos_refusal why, const char *at) {
    cJSON *ev = srv_bus_event(q->d->bus, "rejected");
    if (ev) {
        srv_json_add_client(ev, x->client, x->pid, x->uid);
        srv_json_add_handle(ev, "handle", x->model_handle);
        cJSON_AddStringToObject(ev, "priority", qos_prio_name(x->j.prio));
        cJSON_AddStringToObject(ev, "reason", qos_refusal_name(why));
        cJSON_AddStringToObject(ev, "status", srv_status_wire_name(st));
        cJSON_AddStringToObject(ev, "at", at);
    }
    srv_bus_publish(q->d->bus, ev);
}

/* ---- jobs ------------------------------------------------------------------------------ */

static void job_link(srv_executions *q, srv_execution *x) {
    x->prev = NULL;
    x->next = q->jobs;
    if (q->jobs) q->jobs->prev = x;
    q->jobs = x;
}

/* Gives back x's place in its session's execution quota. */
static void job_uncharge(srv_execution *x) {
    if (x->charged && x->s) srv_quota_add(&x->s->quota, SRV_QUOTA_QUEUED_EXECUTIONS, -1);
    x->charged = false;
}

static void job_free(srv_executions *q, srv_execution *x) {
    job_uncharge(x);
    if (x->prev)
        x->prev->next = x->next;
    else if (q->jobs == x)
        q->jobs = x->next;
    if (x->next) x->next->prev = x->prev;
    srv_binding_release(&x->bind);
    if (x->j.model) qos_sched_model_unref(x->j.model);
    if (q->n_spare < JOB_SPARES)
        q->spare[q->n_spare++] = x;
    else
        free(x);
}

static size_t round16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

/* A zeroed job with its arrays (pools, inputs, outputs, shapes, and the views the binding
 * needs) in one block, a spare one when one is big enough. */
static srv_execution *job_alloc(srv_executions *q, size_t n_pools, uint32_t ni, uint32_t no) {
    size_t at_pools = round16(sizeof(srv_execution));
    size_t at_in = at_pools + round16((n_pools + 1) * sizeof(srv_pool));
    size_t at_out = at_in + round16((ni + 1) * sizeof(eng_io));
    size_t at_shapes = at_out + round16((no + 1) * sizeof(eng_io));
    size_t at_views = at_shapes + round16((no + 1) * sizeof(eng_output_shape));
    size_t total = at_views + (n_pools + 1) * sizeof(eng_memory_view);
    srv_execution *x = NULL;
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
    x->bind.pools = (srv_pool *)(base + at_pools);
    x->bind.inputs = (eng_io *)(base + at_in);
    x->bind.outputs = (eng_io *)(base + at_out);
    x->shapes = (eng_output_shape *)(base + at_shapes);
    x->bind.views = (eng_memory_view *)(base + at_views);
    return x;
}

static void job_done(qos_job *j);

/* A new job for request id (not linked, not submitted): its place in the quota, then the
 * request bound (bind.h). */
static schema_status job_make(srv_executions *q, srv_session *s, proto_frame_in *in, uint64_t id,
                              uint64_t model_handle, qos_sched_model *m, srv_burst_obj *b,
                              const Nnd__ExecutionRequest *r, srv_execution **out, char *err,
                              size_t errlen) {
    *out = NULL;
    const eng_prepared *p = m->prepared;
    uint32_t ni = eng_prepared_num_inputs(p), no = eng_prepared_num_outputs(p);
    /* Refused before any mapping, so a flood of refusals costs little. */
    schema_status st = srv_quota_take(&s->quota, SRV_QUOTA_QUEUED_EXECUTIONS, 1, err, errlen);
    if (st != SCHEMA_OK) return st;
    srv_execution *x = job_alloc(q, r->n_pools, ni, no);
    if (!x) {
        srv_quota_add(&s->quota, SRV_QUOTA_QUEUED_EXECUTIONS, -1);
        snprintf(err, errlen, "out of memory");
        return SCHEMA_GENERAL_FAILURE;
    }
    x->charged = true;
    x->q = q;
    x->s = s;
    x->pid = s->pid;
    x->client = s->serial;
    x->uid = s->uid;
    x->request_id = id;
    x->model_handle = model_handle;
    x->t0 = srv_now_ns();
    x->n_out = no;
    st = srv_bind(&x->bind, s, in, b, model_handle, p, r, err, errlen);
    if (st != SCHEMA_OK) {
        job_free(q, x);
        return st;
    }
    x->j.model = m;
    qos_sched_model_ref(m); /* also while it waits, before the scheduler has it */
    x->j.app = (uint32_t)s->uid;
    x->j.inputs = x->bind.inputs;
    x->j.outputs = x->bind.outputs;
    x->j.shapes = x->shapes;
    x->j.done = job_done;
    x->j.ctx = x;
    *out = x;
    return SCHEMA_OK;
}

/* Sets how x runs and is answered, and puts it in flight. */
static void job_hold(srv_execution *x, int kind, bool measure, qos_prio prio,
                     srv_execution_end_fn end, void *ctx) {
    x->kind = kind;
    x->measure = measure;
    x->j.measure = measure;
    x->j.prio = prio;
    x->end = end;
    x->end_ctx = ctx;
    job_link(x->q, x);
}

static void timing_of(const srv_execution *x, schema_status st, uint64_t since, Nnd__Timing *t) {
    nnd__timing__init(t);
    t->time_on_device_ns = t->time_in_driver_ns = UINT64_MAX;
    if (!x->measure || st != SCHEMA_OK || !since) return;
    /* The CPU's share, and what drivers measured of their partitions on their devices. */
    t->time_on_device_ns = x->j.run_ns + (x->j.device_ns == UINT64_MAX ? 0 : x->j.device_ns);
    t->time_in_driver_ns = x->j.end_ns - since;
}

void srv_execution_reply(uint64_t id, schema_status st, const char *msg,
                         const eng_output_shape *shapes, uint32_t n_out, const Nnd__Timing *timing,
                         void (*out)(void *ctx, const Nnd__Reply *r), void *ctx) {
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = id;
    r.status = srv_wire_status(st);
    if (st != SCHEMA_OK) r.message = (char *)msg;
    if (st != SCHEMA_OK && st != SCHEMA_OUTPUT_INSUFFICIENT_SIZE) {
        out(ctx, &r);
        return;
    }
    /* Most models have a few outputs: their shapes go out from the stack. */
    Nnd__OutputShape ws_few[8], *wsp_few[8];
    bool few = n_out <= 8;
    Nnd__OutputShape *ws = few ? ws_few : calloc(n_out, sizeof *ws);
    Nnd__OutputShape **wsp = few ? wsp_few : calloc(n_out, sizeof *wsp);
    if (!ws || !wsp) {
        free(ws);
        free(wsp);
        r.status = NND__ERROR_STATUS__GENERAL_FAILURE;
        r.message = "out of memory";
        out(ctx, &r);
        return;
    }
    for (uint32_t i = 0; i < n_out; i++) {
        nnd__output_shape__init(&ws[i]);
        ws[i].n_dimensions = shapes[i].rank;
        ws[i].dimensions = (uint32_t *)shapes[i].dims;
        ws[i].is_sufficient = shapes[i].sufficient;
        wsp[i] = &ws[i];
    }
    Nnd__ExecuteReply er = NND__EXECUTE_REPLY__INIT;
    er.n_output_shapes = n_out;
    er.output_shapes = wsp;
    er.timing = (Nnd__Timing *)timing;
    r.result_case = NND__REPLY__RESULT_EXECUTED;
    r.executed = &er;
    out(ctx, &r);
    if (!few) {
        free(ws);
        free(wsp);
    }
}

static void send_reply(void *ctx, const Nnd__Reply *r) {
    srv_session *s = ctx;
    s->send(s->send_ctx, &r->base, NULL, 0);
}

static void reply_executed(srv_execution *x, schema_status st, const char *msg) {
    if (st != SCHEMA_OK && st != SCHEMA_OUTPUT_INSUFFICIENT_SIZE) {
        srv_reply_error(x->s, x->request_id, kind_call[x->kind], st, msg);
        return;
    }
    Nnd__Timing timing;
    timing_of(x, st, x->t0, &timing);
    srv_execution_reply(x->request_id, st, msg, x->shapes, x->n_out, &timing, send_reply, x->s);
}

/* ---- completion ------------------------------------------------------------------------ */

/* Hands x's end to its end function, once. */
static void job_end(srv_execution *x, schema_status st, const char *msg) {
    srv_execution_end e = {.s = x->s,
                           .request_id = x->request_id,
                           .status = st,
                           .msg = msg,
                           .end_ns = x->j.end_ns,
                           .run_ns = x->j.run_ns,
                           .shapes = x->shapes,
                           .n_out = x->n_out};
    timing_of(x, st, x->t0, &e.timing);
    srv_execution_end_fn end = x->end;
    x->end = NULL;
    end(x->end_ctx, &e);
}

/* Answers (or records) the end of x and frees it. */
static void job_complete(srv_executions *q, srv_execution *x, schema_status st, const char *msg) {
    qos_job *j = &x->j;
    if (x->end) {
        job_end(x, st, msg);
    } else if (x->s) {
        reply_executed(x, st, msg);
    }
    if (j->refused) {
        srv_tally_execution((uint32_t)x->uid, NULL, 0, true);
        event_rejected(q, x, st, j->refused, "dispatch");
    } else {
        const srv_device *device = srv_device_of(j->model->prepared);
        srv_device_count_execution(j->model->prepared);
        srv_tally_execution((uint32_t)x->uid, device->name,
                            (j->end_ns ? j->end_ns : srv_now_ns()) - x->t0, st != SCHEMA_OK);
        cJSON *ev = srv_bus_event(q->d->bus, "executed");
        if (ev) {
            cJSON_AddStringToObject(ev, "device", device->name);
            srv_json_add_client(ev, x->client, x->pid, x->uid);
            srv_json_add_handle(ev, "handle", x->model_handle);
            cJSON_AddStringToObject(ev, "status", srv_status_wire_name(st));
            cJSON_AddStringToObject(ev, "priority", qos_prio_name(j->prio));
            uint64_t end = j->end_ns ? j->end_ns : srv_now_ns();
            srv_json_add_u64(ev, "latency_ns", end - x->t0);
            srv_json_add_u64(ev, "queue_wait_ns", j->start_ns ? j->start_ns - j->submit_ns : 0);
            srv_json_add_u64(ev, "run_ns", j->run_ns);
            cJSON_AddNumberToObject(ev, "preemptions", j->preemptions);
            if (j->deadline_ns)
                cJSON_AddStringToObject(ev, "deadline", j->deadline_met ? "met" : "missed");
            if (j->cancelled) cJSON_AddBoolToObject(ev, "cancelled", 1);
            if (x->kind == K_BURST) cJSON_AddBoolToObject(ev, "burst", 1);
        }
        srv_bus_publish(q->d->bus, ev);
    }
    job_free(q, x);
}

/* The scheduler's done(), on the loop. */
static void job_done(qos_job *j) {
    srv_execution *x = j->ctx;
    srv_executions *q = x->q;
    x->in_sched = false;
    schema_status st = j->status;
    bool ran = j->start_ns != 0;
    if (st == SCHEMA_OUTPUT_INSUFFICIENT_SIZE && !x->retried && !j->cancelled &&
        srv_binding_regrow(&x->bind, x->shapes)) {
        /* Flexible driver buffers grew to what the outputs need: one more run. */
        x->retried = true;
        st = qos_sched_submit(q->sched, j);
        if (st == SCHEMA_OK) {
            x->in_sched = true;
            return;
        }
    }
    srv_binding_finish(&x->bind, ran, &st, x->shapes, j->err, sizeof j->err);
    if (ran) q->d->executions++;
    job_complete(q, x, st, j->err);
}

/* Admits x; a refusal is answered at once. */
static void job_submit(srv_executions *q, srv_execution *x) {
    x->waiting = false;
    schema_status st = qos_sched_submit(q->sched, &x->j);
    if (st != SCHEMA_OK) {
        event_rejected(q, x, st, x->j.refused, "submit");
        x->j.refused = QOS_REFUSE_NONE; /* counted and announced: not again at completion */
        srv_binding_finish(&x->bind, false, &st, NULL, NULL, 0);
        if (x->end) {
            job_end(x, st, x->j.err);
        } else if (x->s) {
            srv_reply_error(x->s, x->request_id, kind_call[x->kind], st, x->j.err);
        }
        job_free(q, x);
        return;
    }
    x->in_sched = true;
    qos_sched_drain(q->sched); /* short work may have run already */
}

/* ---- the loop side of the workers ------------------------------------------------------- */

static void wake_closed(srv_wakeup *w);

static void on_wake(srv_wakeup *w) {
    srv_executions *q = w->data;
    if (q->sched) qos_sched_drain(q->sched);
}

static void wake(void *ctx) {
    srv_executions *q = ctx;
    srv_wakeup_signal(&q->wake);
}

int srv_executions_start(srv_daemon *d, const qos_sched_config *cfg, char *err, size_t errlen) {
    size_t n_devices;
    srv_executions *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    q->d = d;
    qos_sched_config c = *cfg;
    c.fault_count = srv_pool_faults;
    srv_devices(&n_devices);
    c.lanes = (unsigned)n_devices; /* one per device, numbered as the device table */
    if (srv_wakeup_init(&q->wake, d->loop, on_wake, q) < 0) {
        snprintf(err, errlen, "cannot create the workers' wakeup handle");
        free(q);
        return -1;
    }
    /* Its first worker measures the throughput. */
    q->sched = qos_sched_new(&c, NULL, wake, q);
    if (!q->sched) {
        snprintf(err, errlen, "cannot start %u worker threads",
                 c.workers + (c.lanes - 1) * c.lane_workers);
        srv_wakeup_close(&q->wake, wake_closed);
        return -1;
    }
    qos_throughput tp;
    qos_sched_throughput(q->sched, &tp);
    srv_log_info("scheduler: %u worker%s on nnd-cpu, %u on each of the %u other devices, "
                 "preempted work %s; device %.1f GFLOP/s, %.1f GB/s, "
                 "%.2f us per operation (measured in %.1f ms)",
                 c.workers, c.workers == 1 ? "" : "s", c.lane_workers, c.lanes - 1,
                 c.restart ? "restarts" : "resumes", tp.flops_per_ns, tp.bytes_per_ns,
                 tp.op_ns / 1000, (double)tp.took_ns / 1e6);
    d->exec = q;
    d->sched = q->sched;
    return 0;
}

static void wake_closed(srv_wakeup *w) {
    srv_executions *q = w->data;
    while (q->n_spare)
        free(q->spare[--q->n_spare]);
    free(q);
}

void srv_executions_stop(srv_daemon *d) {
    srv_executions *q = d->exec;
    if (!q) return;
    /* Fence waits first (they are not the scheduler's), then everything it holds. */
    for (srv_execution *x = q->jobs, *next; x; x = next) {
        next = x->next;
        x->s = NULL;
        if (x->waiting) {
            x->j.cancelled = true;
            job_complete(q, x, SCHEMA_GENERAL_FAILURE, "cancelled: the daemon is stopping");
        }
    }
    qos_sched_free(q->sched);
    q->sched = NULL;
    d->sched = NULL;
    d->exec = NULL;
    srv_wakeup_close(&q->wake, wake_closed);
}

/* ---- handlers ---------------------------------------------------------------------------- */

/* Execute and BurstExecute: bind, admit; the reply comes when the job is done. */
static void execute(srv_executions *q, srv_session *s, proto_frame_in *in, uint64_t id, int kind,
                    uint64_t model_handle, qos_sched_model *m, srv_burst_obj *b,
                    const Nnd__ExecutionRequest *r, bool measure, int wire_priority,
                    uint64_t deadline_ns, uint64_t loop_timeout_ns) {
    char err[SCHEMA_ERR_LEN];
    int prio = srv_prio_from_wire(wire_priority, m->priority);
    if (prio < 0) {
        proto_frame_close_untaken(in);
        qos_sched_note_refusal(q->sched, QOS_REFUSE_INVALID);
        snprintf(err, sizeof err, "invalid priority %d", wire_priority);
        srv_reply_error(s, id, kind_call[kind], SCHEMA_INVALID_ARGUMENT, err);
        return;
    }
    if (!r) {
        proto_frame_close_untaken(in);
        snprintf(err, sizeof err, "%s names no request", kind_call[kind]);
        srv_reply_error(s, id, kind_call[kind], SCHEMA_INVALID_ARGUMENT, err);
        return;
    }
    srv_execution *job;
    schema_status st = job_make(q, s, in, id, model_handle, m, b, r, &job, err, sizeof err);
    proto_frame_close_untaken(in);
    if (st != SCHEMA_OK) {
        srv_reply_error(s, id, kind_call[kind], st, err);
        return;
    }
    job_hold(job, kind, measure, (qos_prio)prio, NULL, NULL);
    job->j.deadline_ns = deadline_ns;
    job->j.loop_timeout_ns = loop_timeout_ns;
    job_submit(q, job);
}

void srv_execute(srv_daemon *d, srv_session *s, proto_frame_in *in, const Nnd__Request *req,
                 qos_sched_model *m) {
    const Nnd__Execute *x = req->execute;
    execute(d->exec, s, in, req->id, K_EXECUTE, x->prepared_model, m, NULL, x->request,
            x->measure_timing, x->priority, x->deadline_ns, x->loop_timeout_ns);
}

void srv_execute_burst(srv_daemon *d, srv_session *s, proto_frame_in *in, const Nnd__Request *req,
                       qos_sched_model *m, srv_burst_obj *b) {
    const Nnd__BurstExecute *x = req->burst_execute;
    /* A burst runs at its compilation's priority. */
    execute(d->exec, s, in, req->id, K_BURST, srv_burst_model(b), m, b, x->request,
            x->measure_timing, NND__PRIORITY__PRIORITY_UNSPECIFIED, x->deadline_ns,
            x->loop_timeout_ns);
}

/* ---- executions answered otherwise (execution.h) ---------------------------------------- */

schema_status srv_execution_make(srv_daemon *d, srv_session *s, proto_frame_in *in, uint64_t id,
                                 uint64_t model_handle, qos_sched_model *m, srv_burst_obj *b,
                                 const Nnd__ExecutionRequest *r, srv_execution **out, char *err,
                                 size_t errlen) {
    return job_make(d->exec, s, in, id, model_handle, m, b, r, out, err, errlen);
}

void srv_execution_discard(srv_execution *x) {
    job_free(x->q, x);
}

void srv_execution_hold(srv_execution *x, bool measure, qos_prio prio, srv_execution_end_fn end,
                        void *ctx) {
    job_hold(x, K_FENCED, measure, prio, end, ctx);
}

void srv_execution_hold_burst(srv_execution *x, bool measure, qos_prio prio,
                              srv_execution_end_fn end, void *ctx) {
    job_hold(x, K_BURST, measure, prio, end, ctx);
}

uint64_t srv_execution_arrival(const srv_execution *x) {
    return x->t0;
}

void srv_execution_wait(srv_execution *x) {
    x->waiting = true;
}

void srv_execution_loop_timeout(srv_execution *x, uint64_t loop_timeout_ns) {
    x->j.loop_timeout_ns = loop_timeout_ns;
}

void srv_execution_submit(srv_execution *x, uint64_t deadline_ns) {
    x->j.deadline_ns = deadline_ns;
    job_submit(x->q, x);
}

void srv_execution_fail(srv_execution *x, schema_status st, const char *msg) {
    job_complete(x->q, x, st, msg);
}

void srv_executions_note_refusal(srv_daemon *d, qos_refusal why) {
    qos_sched_note_refusal(d->exec->sched, why);
}

/* ---- cancelling -------------------------------------------------------------------------- */

void srv_execution_cancel(srv_daemon *d, srv_session *s, const Nnd__Request *req) {
    srv_executions *q = d->exec;
    uint64_t id = req->cancel->request_id;
    srv_execution *x = q->jobs;
    while (x && !(x->s == s && x->request_id == id))
        x = x->next;
    if (!x) {
        char err[128];
        snprintf(err, sizeof err, "no execution of request id %llu is in flight",
                 (unsigned long long)id);
        srv_reply_error(s, req->id, "Cancel", SCHEMA_INVALID_ARGUMENT, err);
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
        job_complete(q, x, SCHEMA_GENERAL_FAILURE, "cancelled");
    } else if (x->in_sched) {
        qos_sched_cancel(q->sched, &x->j);
    }
}

void srv_executions_session_closed(srv_daemon *d, srv_session *s) {
    srv_executions *q = d->exec;
    if (!q) return;
    for (srv_execution *x = q->jobs, *next; x; x = next) {
        next = x->next;
        if (x->s != s) continue;
        job_uncharge(x); /* the app gets its room back now, not when the work stops */
        x->s = NULL;
        if (x->waiting) {
            x->j.cancelled = true;
            job_complete(q, x, SCHEMA_GENERAL_FAILURE, "cancelled: the connection closed");
        } else if (x->in_sched) {
            qos_sched_cancel(q->sched, &x->j);
        }
    }
}

/* ---- status ------------------------------------------------------------------------------ */

void srv_executions_devices_status(srv_daemon *d, cJSON *devices) {
    srv_executions *q = d->exec;
    if (!q || !devices) return;
    qos_sched_stats st;
    qos_sched_stats_get(q->sched, &st);
    unsigned i = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, devices) {
        if (i >= st.cfg.lanes) break;
        cJSON_AddNumberToObject(e, "workers", st.lane[i].workers);
        cJSON_AddNumberToObject(e, "running", st.lane[i].running);
        cJSON_AddNumberToObject(e, "queue_depth", (double)st.lane[i].queued);
        srv_json_add_u64(e, "run_segments", st.lane[i].segments);
        srv_json_add_u64(e, "arrived", st.lane[i].arrived);
        i++;
    }
}

cJSON *srv_executions_status(srv_daemon *d) {
    srv_executions *q = d->exec;
    cJSON *o = cJSON_CreateObject();
    if (!o || !q) return o;
    qos_sched_stats st;
    qos_sched_stats_get(q->sched, &st);
    cJSON_AddNumberToObject(o, "workers", st.cfg.workers);
    cJSON_AddStringToObject(o, "preempted_work", st.cfg.restart ? "restarts" : "resumes");
    cJSON_AddNumberToObject(o, "running", st.running);
    cJSON *queued = cJSON_AddObjectToObject(o, "queued");
    cJSON *lat = cJSON_AddObjectToObject(o, "latency_us");
    for (int p = QOS_PRIOS - 1; p >= 0; p--) {
        const char *name = qos_prio_name((qos_prio)p);
        cJSON_AddNumberToObject(queued, name, (double)st.queued[p]);
        cJSON *l = cJSON_AddObjectToObject(lat, name);
        srv_json_add_u64(l, "count", st.latency_count[p]);
        srv_json_add_u64(l, "p50", st.latency_ns[p][0] / 1000);
        srv_json_add_u64(l, "p90", st.latency_ns[p][1] / 1000);
        srv_json_add_u64(l, "p99", st.latency_ns[p][2] / 1000);
        srv_json_add_u64(l, "sum_us", st.latency_sum_ns[p] / 1000);
        cJSON *below = cJSON_AddObjectToObject(l, "below"); /* bound in us: how many under it */
        for (unsigned i = 0; i < QOS_LATENCY_BOUNDS; i++) {
            char bound[24];
            snprintf(bound, sizeof bound, "%llu", QOS_LATENCY_BOUND_NS(i) / 1000);
            srv_json_add_u64(below, bound, st.latency_below[p][i]);
        }
    }
    srv_json_add_u64(o, "submitted", st.submitted);
    srv_json_add_u64(o, "completed", st.completed);
    srv_json_add_u64(o, "failed", st.failed);
    srv_json_add_u64(o, "cancelled", st.cancelled);
    srv_json_add_u64(o, "preempted", st.preempted);
    srv_json_add_u64(o, "aborted_for_deadline", st.aborted_deadline);
    cJSON *dl = cJSON_AddObjectToObject(o, "deadlines");
    srv_json_add_u64(dl, "met", st.deadline_met);
    srv_json_add_u64(dl, "missed", st.deadline_missed);
    cJSON *ref = cJSON_AddObjectToObject(o, "refused");
    for (int r = 1; r < QOS_REFUSALS; r++)
        srv_json_add_u64(ref, qos_refusal_name((qos_refusal)r), st.refused[r]);
    srv_json_add_u64(ref, "of_which_at_dispatch", st.refused_at_dispatch);
    cJSON *lim = cJSON_AddObjectToObject(o, "limits");
    cJSON_AddNumberToObject(lim, "app_queue", st.cfg.app_queue);
    srv_json_add_u64(lim, "app_memory", st.cfg.app_memory);
    srv_json_add_u64(lim, "device_memory", st.cfg.device_memory);
    cJSON *tp = cJSON_AddObjectToObject(o, "device");
    cJSON_AddNumberToObject(tp, "gflops", st.throughput.flops_per_ns);
    cJSON_AddNumberToObject(tp, "gbytes_per_s", st.throughput.bytes_per_ns);
    cJSON_AddNumberToObject(tp, "us_per_operation", st.throughput.op_ns / 1000);
    return o;
}

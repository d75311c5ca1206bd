/* SPDX-License-Identifier: Apache-2.0 */
/* fenced.c: ExecuteFenced's fence waits on the loop, its eventfd and handle, and
 * GetFencedExecutionInfo. See fenced.h. */
#include "daemon/calls/fenced.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "daemon/calls/execution.h"
#include "daemon/base/log.h"
#include "daemon/wire/reply.h"

typedef struct fenced fenced;

typedef struct fwait {
    uv_poll_t poll;
    int fd;
    fenced *f; /* NULL once abandoned */
} fwait;

static void fwait_closed(uv_handle_t *h) {
    fwait *w = h->data;
    close(w->fd);
    free(w);
}

/* A fenced execution, owned by its session (SRV_OBJ_EXECUTION) and by its job. */
struct fenced {
    srv_session *s;
    uint64_t descriptors; /* counted against the app's quota until released */
    int efd;              /* signalled at the end; the client got a copy */
    srv_execution *job;   /* until the execution ends */
    bool done, released, fence_failed;
    schema_status status;
    bool measure;
    uint64_t deadline_ns, timeout_after_fence_ns;
    uint64_t t_call, t_fenced, t_end, run_ns;
    fwait **waits;
    size_t n_waits, n_pending;
    uint64_t *waiters; /* GetFencedExecutionInfo request ids asked before the end */
    size_t n_waiters;
};

/* min(deadline_ns, the fences' time + timeout_after_fence_ns); 0 is none. */
static uint64_t fenced_deadline(const fenced *f) {
    uint64_t deadline = f->deadline_ns;
    if (f->timeout_after_fence_ns) {
        uint64_t after = f->t_fenced + f->timeout_after_fence_ns;
        if (!deadline || after < deadline) deadline = after;
    }
    return deadline;
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
    if (f->measure && f->status == SCHEMA_OK) {
        launched.time_on_device_ns = at_fence.time_on_device_ns = f->run_ns;
        launched.time_in_driver_ns = f->t_end - f->t_call;
        if (f->t_fenced) at_fence.time_in_driver_ns = f->t_end - f->t_fenced;
    }
    info.status = srv_wire_status(f->status);
    info.timing_launched = &launched;
    info.timing_fenced = &at_fence;
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = id;
    r.result_case = NND__REPLY__RESULT_FENCED_INFO;
    r.fenced_info = &info;
    f->s->send(f->s->send_ctx, &r.base, NULL, 0);
}

/* The execution ended (or never ran): record, signal the fence, answer who asked. The
 * execution's end function (execution.h). */
static void fenced_end(void *ctx, const srv_execution_end *e) {
    fenced *f = ctx;
    fenced_drop_waits(f);
    f->done = true;
    f->job = NULL;
    f->status = e->status;
    if (e->status != SCHEMA_OK && e->s)
        srv_log_debug("client %llu: ExecuteFenced id %llu: %s: %s",
                      (unsigned long long)e->s->serial, (unsigned long long)e->request_id,
                      srv_status_wire_name(e->status), e->msg ? e->msg : "");
    f->t_end = e->end_ns ? e->end_ns : srv_now_ns();
    f->run_ns = e->run_ns;
    uint64_t one = 1;
    if (write(f->efd, &one, sizeof one) != (ssize_t)sizeof one)
        srv_log_warn("cannot signal a fenced execution's eventfd: %s", strerror(errno));
    if (e->s)
        for (size_t i = 0; i < f->n_waiters; i++)
            reply_info(f, f->waiters[i]);
    f->n_waiters = 0;
    if (f->released) fenced_free(f);
}

/* The session's free function (Release, or the connection closing). */
static void fenced_release(void *p) {
    fenced *f = p;
    f->released = true;
    srv_quota_add(&f->s->quota, SRV_QUOTA_DESCRIPTORS, -(int64_t)f->descriptors);
    f->descriptors = 0;
    if (!f->s->closing)
        for (size_t i = 0; i < f->n_waiters; i++)
            srv_reply_error(f->s, f->waiters[i], "GetFencedExecutionInfo", SCHEMA_GENERAL_FAILURE,
                            "the execution was released before it ended");
    f->n_waiters = 0;
    if (!f->job) fenced_free(f); /* else when the execution ends */
}

/* ---- waiting on the fences -------------------------------------------------------------- */

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
    if (f->fence_failed) {
        srv_execution_fail(f->job, SCHEMA_GENERAL_FAILURE,
                           "a fence this execution waited for signalled an error");
        return;
    }
    f->t_fenced = srv_now_ns();
    srv_execution_submit(f->job, fenced_deadline(f));
}

/* ---- the calls --------------------------------------------------------------------------- */

void srv_execute_fenced(srv_daemon *d, srv_session *s, proto_frame_in *in, const Nnd__Request *req,
                        qos_sched_model *m) {
    const Nnd__ExecuteFenced *x = req->execute_fenced;
    char err[SCHEMA_ERR_LEN];
    schema_status st = SCHEMA_OK;
    fenced *f = calloc(1, sizeof *f);
    if (f) {
        f->efd = -1;
        f->s = s;
        f->waits = calloc(x->n_wait_for_fds + 1, sizeof *f->waits);
    }
    if (!f || !f->waits) {
        st = SCHEMA_GENERAL_FAILURE;
        snprintf(err, sizeof err, "out of memory");
    } else if (!x->request) {
        st = SCHEMA_INVALID_ARGUMENT;
        snprintf(err, sizeof err, "ExecuteFenced names no request");
    } else if (x->deadline_ns && srv_now_ns() >= x->deadline_ns) {
        st = SCHEMA_MISSED_DEADLINE_PERSISTENT;
        snprintf(err, sizeof err, "deadline passed before the execution was launched");
        srv_executions_note_refusal(d, QOS_REFUSE_DEADLINE_PASSED);
    } else if ((st = srv_quota_take(&s->quota, SRV_QUOTA_DESCRIPTORS, 1 + x->n_wait_for_fds, err,
                                    sizeof err)) == SCHEMA_OK) {
        /* Its eventfd and the fences it waits on, held until the handle is released. */
        f->descriptors = 1 + x->n_wait_for_fds;
    }
    /* The fences first: their fds must not be taken for pools. */
    for (size_t i = 0; st == SCHEMA_OK && i < x->n_wait_for_fds; i++) {
        int fd = proto_frame_take_fd(in, x->wait_for_fds[i]);
        if (fd < 0) {
            st = SCHEMA_INVALID_ARGUMENT;
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
            st = SCHEMA_INVALID_ARGUMENT;
            snprintf(err, sizeof err, "fence %zu cannot be waited on (not an eventfd or sync_file)",
                     i);
            break;
        }
        w->fd = fd;
        w->f = f;
        w->poll.data = w;
        f->waits[f->n_waits++] = w;
    }
    srv_execution *job = NULL;
    if (st == SCHEMA_OK)
        st = srv_execution_make(d, s, in, req->id, x->prepared_model, m, NULL, x->request, &job,
                                err, sizeof err);
    proto_frame_close_untaken(in);
    uint64_t handle = 0;
    if (st == SCHEMA_OK && (f->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        st = SCHEMA_GENERAL_FAILURE;
        snprintf(err, sizeof err, "cannot create the sync fence: %s", strerror(errno));
    }
    if (st == SCHEMA_OK && srv_session_add(s, SRV_OBJ_EXECUTION, f, fenced_release, &handle) < 0) {
        st = SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT;
        snprintf(err, sizeof err, "this connection holds too many objects; release some first");
    }
    if (st != SCHEMA_OK) {
        if (job) srv_execution_discard(job);
        if (f) srv_quota_add(&s->quota, SRV_QUOTA_DESCRIPTORS, -(int64_t)f->descriptors);
        if (f) fenced_free(f);
        srv_reply_error(s, req->id, "ExecuteFenced", st, err);
        return;
    }
    f->measure = x->measure_timing;
    srv_execution_hold(job, x->measure_timing, m->priority, fenced_end, f);
    srv_execution_loop_timeout(job, x->loop_timeout_ns);
    f->job = job;
    f->deadline_ns = x->deadline_ns;
    f->timeout_after_fence_ns = x->timeout_after_fence_ns;
    f->t_call = srv_execution_arrival(job);

    Nnd__ExecuteFencedReply fr = NND__EXECUTE_FENCED_REPLY__INIT;
    fr.execution = handle;
    fr.sync_fence_fd = 0;
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = req->id;
    r.result_case = NND__REPLY__RESULT_EXECUTE_FENCED;
    r.execute_fenced = &fr;
    s->send(s->send_ctx, &r.base, &f->efd, 1);

    if (!f->n_waits) {
        f->t_fenced = f->t_call;
        srv_execution_submit(job, fenced_deadline(f));
        return;
    }
    srv_execution_wait(job);
    f->n_pending = f->n_waits;
    for (size_t i = 0; i < f->n_waits; i++)
        uv_poll_start(&f->waits[i]->poll, UV_READABLE, on_fence);
}

void srv_fenced_info(srv_daemon *d, srv_session *s, const Nnd__Request *req) {
    (void)d;
    uint64_t h = req->get_fenced_execution_info->execution;
    fenced *f = srv_session_find(s, h, SRV_OBJ_EXECUTION);
    if (!f) {
        char err[96];
        snprintf(err, sizeof err, "unknown execution handle 0x%016llx", (unsigned long long)h);
        srv_reply_error(s, req->id, "GetFencedExecutionInfo", SCHEMA_INVALID_ARGUMENT, err);
        return;
    }
    if (f->done) {
        reply_info(f, req->id);
        return;
    }
    uint64_t *w = realloc(f->waiters, (f->n_waiters + 1) * sizeof *w);
    if (!w) {
        srv_reply_error(s, req->id, "GetFencedExecutionInfo", SCHEMA_GENERAL_FAILURE,
                        "out of memory");
        return;
    }
    f->waiters = w;
    f->waiters[f->n_waiters++] = req->id;
}

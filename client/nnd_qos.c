/* SPDX-License-Identifier: Apache-2.0 */
/* nnd_qos.c: libnnd's executions with priorities and deadlines, asynchronous tickets,
 * Cancel, and fenced executions. See include/nnd/nnd_wire.h, "quality of service". */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "client/client_internal.h"
#include "client/record.h"

static void fill_execute(Nnd__Execute *x, uint64_t handle, const Nnd__ExecutionRequest *req,
                         const nnd_exec_opts *o) {
    nnd__execute__init(x);
    x->prepared_model = handle;
    x->request = (Nnd__ExecutionRequest *)req; /* packing only reads it */
    if (!o) return;
    x->measure_timing = o->measure_timing;
    x->deadline_ns = o->deadline_ns;
    x->loop_timeout_ns = o->loop_timeout_ns;
    x->priority = (Nnd__Priority)o->priority;
}

int nnd_client_execute_start(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                             const int *pool_fds, size_t n_pool_fds, const nnd_exec_opts *opts,
                             uint64_t *ticket, char *err, size_t errlen) {
    Nnd__Execute x;
    fill_execute(&x, handle, req, opts);
    Nnd__Request r = NND__REQUEST__INIT;
    r.call_case = NND__REQUEST__CALL_EXECUTE;
    r.execute = &x;
    *ticket = 0;
    cli_pending *p = malloc(sizeof *p);
    if (!p) {
        cli_set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = cli_conn_send(c, &r, pool_fds, n_pool_fds, p, cli_conn_bound(c, x.deadline_ns), true,
                           err, errlen);
    if (rc < 0) {
        free(p);
        return rc;
    }
    *ticket = r.id;
    return 0;
}

int nnd_client_execute_wait(nnd_client *c, uint64_t ticket, int timeout_ms, Nnd__Reply **reply,
                            char *err, size_t errlen) {
    if (reply) *reply = NULL;
    uint64_t until = timeout_ms < 0 ? 0 : cli_conn_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    proto_frame_in in;
    int rc = cli_conn_wait_ticket(c, ticket, until, &in, err, errlen);
    if (rc < 0) return rc;
    Nnd__Reply *r = (Nnd__Reply *)in.msg;
    in.msg = NULL;
    proto_frame_in_clear(&in); /* an Execute reply carries no fds */
    return cli_take_reply(r, true, reply, err, errlen);
}

int nnd_client_execute_opts(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                            const int *pool_fds, size_t n_pool_fds, const nnd_exec_opts *opts,
                            Nnd__Reply **reply, char *err, size_t errlen) {
    Nnd__Execute x;
    fill_execute(&x, handle, req, opts);
    Nnd__Request r = NND__REQUEST__INIT;
    r.call_case = NND__REQUEST__CALL_EXECUTE;
    r.execute = &x;
    Nnd__Reply *got = NULL;
    int st = cli_reply_call(c, &r, pool_fds, n_pool_fds, &got, err, errlen);
    if (cli_record_live()) cli_record_executed(c, handle, req, pool_fds, n_pool_fds, st, got);
    if (reply)
        *reply = got;
    else if (got)
        nnd__reply__free_unpacked(got, NULL);
    return st;
}

/* A call answered with Empty or an error; returns the status or -errno. */
static int status_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                       Nnd__Reply **out, int *reply_fds, size_t *n_reply_fds, char *err,
                       size_t errlen) {
    Nnd__Reply *r = NULL;
    int rc = nnd_client_call(c, req, fds, nfds, &r, reply_fds, n_reply_fds, err, errlen);
    return rc < 0 ? rc : cli_take_reply(r, false, out, err, errlen);
}

int nnd_client_cancel(nnd_client *c, uint64_t ticket, char *err, size_t errlen) {
    Nnd__Cancel call = NND__CANCEL__INIT;
    call.request_id = ticket;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_CANCEL;
    req.cancel = &call;
    return status_call(c, &req, NULL, 0, NULL, NULL, NULL, err, errlen);
}

int nnd_client_execute_fenced(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                              const int *pool_fds, size_t n_pool_fds, const int *wait_fds,
                              size_t n_wait_fds, const nnd_exec_opts *opts,
                              uint64_t timeout_after_fence_ns, uint64_t *execution, int *sync_fd,
                              char *err, size_t errlen) {
    *execution = 0;
    *sync_fd = -1;
    if (n_pool_fds + n_wait_fds > PROTO_FRAME_MAX_FDS - 1) {
        cli_set_err(err, errlen, "%zu fds: at most %d travel with one request",
                    n_pool_fds + n_wait_fds, PROTO_FRAME_MAX_FDS - 1);
        return -EINVAL;
    }
    int fds[PROTO_FRAME_MAX_FDS];
    uint32_t idx[PROTO_FRAME_MAX_FDS];
    for (size_t i = 0; i < n_pool_fds; i++)
        fds[i] = pool_fds[i];
    for (size_t i = 0; i < n_wait_fds; i++) {
        fds[n_pool_fds + i] = wait_fds[i];
        idx[i] = (uint32_t)(n_pool_fds + i);
    }
    Nnd__ExecuteFenced call = NND__EXECUTE_FENCED__INIT;
    call.prepared_model = handle;
    call.request = (Nnd__ExecutionRequest *)req;
    call.n_wait_for_fds = n_wait_fds;
    call.wait_for_fds = idx;
    call.timeout_after_fence_ns = timeout_after_fence_ns;
    if (opts) {
        call.measure_timing = opts->measure_timing;
        call.deadline_ns = opts->deadline_ns;
        call.loop_timeout_ns = opts->loop_timeout_ns;
    }
    Nnd__Request r = NND__REQUEST__INIT;
    r.call_case = NND__REQUEST__CALL_EXECUTE_FENCED;
    r.execute_fenced = &call;
    Nnd__Reply *reply = NULL;
    int got[1] = {-1};
    size_t n_got = 1;
    int st = status_call(c, &r, fds, n_pool_fds + n_wait_fds, &reply, got, &n_got, err, errlen);
    if (st != 0) {
        if (n_got && got[0] >= 0) close(got[0]);
        return st;
    }
    if (reply->result_case != NND__REPLY__RESULT_EXECUTE_FENCED || n_got != 1 || got[0] < 0) {
        cli_set_err(err, errlen, "the daemon's ExecuteFenced reply has no sync fence");
        if (n_got && got[0] >= 0) close(got[0]);
        nnd__reply__free_unpacked(reply, NULL);
        return -EBADMSG;
    }
    *execution = reply->execute_fenced->execution;
    *sync_fd = got[0];
    nnd__reply__free_unpacked(reply, NULL);
    return 0;
}

/* Only the values: the message's bookkeeping goes with the reply. */
static void copy_timing(Nnd__Timing *to, const Nnd__Timing *from) {
    if (!to) return;
    nnd__timing__init(to);
    to->time_on_device_ns = from ? from->time_on_device_ns : UINT64_MAX;
    to->time_in_driver_ns = from ? from->time_in_driver_ns : UINT64_MAX;
}

int nnd_client_fenced_info(nnd_client *c, uint64_t execution, int *status, Nnd__Timing *launched,
                           Nnd__Timing *fenced, char *err, size_t errlen) {
    Nnd__GetFencedExecutionInfo call = NND__GET_FENCED_EXECUTION_INFO__INIT;
    call.execution = execution;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_FENCED_EXECUTION_INFO;
    req.get_fenced_execution_info = &call;
    Nnd__Reply *r = NULL;
    int st = status_call(c, &req, NULL, 0, &r, NULL, NULL, err, errlen);
    if (st != 0) return st;
    if (r->result_case != NND__REPLY__RESULT_FENCED_INFO) {
        nnd__reply__free_unpacked(r, NULL);
        cli_set_err(err, errlen,
                    "the daemon answered GetFencedExecutionInfo with the wrong result");
        return -EBADMSG;
    }
    const Nnd__FencedExecutionInfoReply *i = r->fenced_info;
    *status = i->status;
    copy_timing(launched, i->timing_launched);
    copy_timing(fenced, i->timing_fenced);
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

int nnd_fence_wait(int fd, int timeout_ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        int n = poll(&p, 1, timeout_ms);
        if (n > 0) return (p.revents & (POLLERR | POLLNVAL)) ? -EIO : 0;
        if (n == 0) return -ETIMEDOUT;
        if (errno != EINTR) return -errno;
    }
}

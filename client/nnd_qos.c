/* nnd_qos.c: libnnd's executions with priorities and deadlines, asynchronous tickets,
 * Cancel, and fenced executions. See include/nnd/nnd.h, "quality of service". */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"

typedef struct kept {
    uint64_t id;
    bool arrived;
    nnd_frame_in in; /* the reply and its fds, once arrived */
} kept;

struct nnd_async {
    kept *v;
    size_t n, cap;
};

static kept *find(nnd_client *c, uint64_t id) {
    for (size_t i = 0; c->async && i < c->async->n; i++)
        if (c->async->v[i].id == id) return &c->async->v[i];
    return NULL;
}

static void forget(nnd_client *c, kept *k) {
    *k = c->async->v[--c->async->n];
}

bool nnd_async_keep(nnd_client *c, nnd_frame_in *in) {
    kept *k = find(c, ((const Nnd__Reply *)in->msg)->id);
    if (!k || k->arrived) return false;
    k->in = *in;
    k->arrived = true;
    return true;
}

void nnd_async_free(nnd_client *c) {
    if (!c->async) return;
    for (size_t i = 0; i < c->async->n; i++)
        if (c->async->v[i].arrived) nnd_frame_in_clear(&c->async->v[i].in);
    free(c->async->v);
    free(c->async);
    c->async = NULL;
}

static bool fatal(int e) {
    return e == EPIPE || e == ECONNRESET || e == ENOTCONN || e == ECONNREFUSED || e == EBADF ||
           e == EPROTO;
}

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
    static const int no_fds[1] = {-1}; /* frame.c memcpy()s fds even when nfds is 0 */
    int rc = 0;
    *ticket = 0;
    pthread_mutex_lock(&c->lock);
    if (c->dead) {
        nnd_client_set_err(err, errlen, "the connection to the daemon is closed");
        rc = -ENOTCONN;
        goto out;
    }
    if (!c->async && !(c->async = calloc(1, sizeof *c->async))) rc = -ENOMEM;
    if (!rc && c->async->n == c->async->cap) {
        size_t cap = c->async->cap ? 2 * c->async->cap : 16;
        kept *v = realloc(c->async->v, cap * sizeof *v);
        if (v) {
            c->async->v = v;
            c->async->cap = cap;
        } else {
            rc = -ENOMEM;
        }
    }
    if (rc) {
        nnd_client_set_err(err, errlen, "out of memory");
        goto out;
    }
    r.id = ++c->next_id;
    nnd_packed p;
    if (nnd_frame_pack(&r.base, pool_fds ? pool_fds : no_fds, n_pool_fds, &p, err, errlen) < 0) {
        rc = -EINVAL;
        goto out;
    }
    rc = nnd_frame_sendmsg(c->sock, &p, 0);
    nnd_packed_clear(&p);
    if (rc < 0) {
        nnd_client_set_err(err, errlen, "sending to the daemon failed: %s", strerror(-rc));
        if (fatal(-rc)) c->dead = true;
        goto out;
    }
    c->async->v[c->async->n++] = (kept){.id = r.id};
    *ticket = r.id;
out:
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* With the lock held: the ticket's reply, taking it from the kept ones or the socket. */
static int await(nnd_client *c, uint64_t ticket, int timeout_ms, Nnd__Reply **out, char *err,
                 size_t errlen) {
    int64_t end = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    for (;;) {
        kept *k = find(c, ticket);
        if (!k) {
            nnd_client_set_err(err, errlen, "no execution of ticket %llu is awaited",
                               (unsigned long long)ticket);
            return -EINVAL;
        }
        if (k->arrived) {
            *out = (Nnd__Reply *)k->in.msg;
            k->in.msg = NULL;
            nnd_frame_in_clear(&k->in); /* an Execute reply carries no fds */
            forget(c, k);
            return 0;
        }
        if (c->dead) {
            nnd_client_set_err(err, errlen, "the connection to the daemon is closed");
            return -ENOTCONN;
        }
        int wait = -1;
        if (end >= 0) {
            int64_t left = end - now_ms();
            if (left <= 0) {
                nnd_client_set_err(err, errlen, "no reply within %d ms", timeout_ms);
                return -ETIMEDOUT;
            }
            wait = (int)left;
        }
        nnd_frame_in in;
        char ferr[256] = "";
        int rc;
        if (wait < 0) { /* no time limit: one blocking receive, no poll() first */
            rc = nnd_frame_recv_wait(c->sock, &nnd__reply__descriptor, c->buf, &in, ferr,
                                     sizeof ferr);
            if (rc == -EINTR) continue;
        } else {
            struct pollfd pfd = {.fd = c->sock, .events = POLLIN};
            int n = poll(&pfd, 1, wait);
            if (n < 0 && errno != EINTR) {
                nnd_client_set_err(err, errlen, "poll on the daemon connection failed: %s",
                                   strerror(errno));
                return -errno;
            }
            if (n <= 0) continue;
            rc = nnd_frame_recv(c->sock, &nnd__reply__descriptor, c->buf, &in, ferr, sizeof ferr);
        }
        if (rc == -EAGAIN) continue;
        if (rc <= 0) {
            if (rc == 0) rc = -ENOTCONN;
            nnd_client_set_err(err, errlen, "receiving from the daemon failed: %s",
                               rc == -EPROTO ? ferr : strerror(-rc));
            if (fatal(-rc)) c->dead = true;
            return rc;
        }
        if (!nnd_async_keep(c, &in)) nnd_frame_in_clear(&in); /* an abandoned call's */
    }
}

int nnd_client_execute_wait(nnd_client *c, uint64_t ticket, int timeout_ms, Nnd__Reply **reply,
                            char *err, size_t errlen) {
    if (reply) *reply = NULL;
    Nnd__Reply *r = NULL;
    pthread_mutex_lock(&c->lock);
    int rc = await(c, ticket, timeout_ms, &r, err, errlen);
    pthread_mutex_unlock(&c->lock);
    return rc < 0 ? rc : nnd_client_take_reply(r, true, reply, err, errlen);
}

int nnd_client_execute_opts(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                            const int *pool_fds, size_t n_pool_fds, const nnd_exec_opts *opts,
                            Nnd__Reply **reply, char *err, size_t errlen) {
    if (reply) *reply = NULL;
    uint64_t ticket;
    int rc =
        nnd_client_execute_start(c, handle, req, pool_fds, n_pool_fds, opts, &ticket, err, errlen);
    if (rc < 0) return rc;
    return nnd_client_execute_wait(c, ticket, -1, reply, err, errlen);
}

/* A call answered with Empty or an error; returns the status or -errno. */
static int status_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                       Nnd__Reply **out, int *reply_fds, size_t *n_reply_fds, char *err,
                       size_t errlen) {
    Nnd__Reply *r = NULL;
    int rc = nnd_client_call(c, req, fds, nfds, &r, reply_fds, n_reply_fds, err, errlen);
    return rc < 0 ? rc : nnd_client_take_reply(r, false, out, err, errlen);
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
    if (n_pool_fds + n_wait_fds > NND_FRAME_MAX_FDS - 1) {
        nnd_client_set_err(err, errlen, "%zu fds: at most %d travel with one request",
                           n_pool_fds + n_wait_fds, NND_FRAME_MAX_FDS - 1);
        return -EINVAL;
    }
    int fds[NND_FRAME_MAX_FDS];
    uint32_t idx[NND_FRAME_MAX_FDS];
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
        nnd_client_set_err(err, errlen, "the daemon's ExecuteFenced reply has no sync fence");
        if (n_got && got[0] >= 0) close(got[0]);
        nnd__reply__free_unpacked(reply, NULL);
        return -EPROTO;
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
        nnd_client_set_err(err, errlen,
                           "the daemon answered GetFencedExecutionInfo with the wrong result");
        return -EPROTO;
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

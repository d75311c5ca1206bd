/* SPDX-License-Identifier: Apache-2.0 */
/* server.c: the listener, connections, and their outboxes. See server.h. */
#include "daemon/net/server.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/arena.h"
#include "daemon/base/bus.h"
#include "daemon/calls/dispatch.h"
#include "engine/engine.h"
#include "daemon/base/log.h"
#include "daemon/calls/execution.h"
#include "daemon/clients/quota.h"
#include "daemon/wire/convert.h"
#include "daemon/wire/reply.h"

#define BATCH            64 /* accepts per wakeup, so a connection storm cannot starve clients */
#define ACCEPT_RETRY_MS  100
#define REFUSED_GRACE_MS 1000 /* a refused connection that asks nothing is closed after this */
#define MEMBER_ROUTES    64   /* a member's requests awaiting their reply */

typedef struct outmsg {
    struct outmsg *next;
    proto_packed p; /* fds are ours: dups of the caller's, then the spill memfd */
    size_t n_dups;
    size_t bytes;
    srv_session *owner; /* whose descriptors quota counts the dups */
} outmsg;

typedef struct conn {
    uv_poll_t poll;
    int fd;
    srv_server *srv;
    srv_session session;
    outmsg *head, *tail;
    size_t out_frames, out_bytes;
    int events;           /* current poll mask */
    bool busy;            /* inside our poll callback: it will close us if we die */
    bool dead;            /* to be closed */
    bool closed;          /* handle closing, out of the server's list */
    bool refused;         /* over quota.app.connections: answers refusal, then closes */
    bool close_when_sent; /* close once the outbox is empty */
    uint64_t refused_ns;
    char refusal[160];
    struct conn *prev, *next;
    /* A spilled request being read off the loop: the connection reads nothing more until
     * it has been handled, so requests keep their order. */
    bool decoding;
    bool free_after_decode; /* closed meanwhile: the decode's (or the last hold's) end frees it */
    unsigned holds;         /* calls being answered off the loop (session.h) */
    uv_work_t decode;
    proto_frame_in pending; /* the datagram's other fds; then the message */
    proto_frame_spill spill;
    int64_t pending_fds; /* the spill memfd and the other fds, counted as descriptors */
    char decode_err[SCHEMA_ERR_LEN];
    /* One session, several connections (server.h): a member's requests use its owner's
     * session, and their replies come back on the member, found by request id. */
    struct conn *owner;   /* the connection whose session this one joined, or NULL */
    struct conn *members; /* an owner's members, linked through next_member */
    struct conn *next_member;
    uint64_t routes[MEMBER_ROUTES];
    unsigned n_routes;
} conn;

struct srv_server {
    srv_daemon *d;
    int fd;
    dev_t dev; /* our socket file, so stop removes only ours */
    ino_t ino;
    uv_poll_t listen_poll;
    uv_timer_t retry; /* resumes accepting after running out of fds */
    int reserve_fd;   /* given up to accept, and refuse, a connection when out of fds */
    uv_timer_t sweep; /* closes refused connections that never asked anything */
    uv_timer_t trim;  /* gives freed heap back to the system a moment after a client left */
    int open_handles;
    conn *head, *tail;
    size_t n_conns, n_refused;
    uint64_t serial;
    uint64_t dropped; /* connections cut off for not reading their replies */
    uint8_t buf[PROTO_FRAME_RECV_BUF];
    proto_arena arena; /* where each request is unpacked; reset when it has been handled */
};

static void on_conn(uv_poll_t *h, int status, int events);

/* ---- outbox ---------------------------------------------------------------------------- */

static void outmsg_free(outmsg *m) {
    srv_quota_add(&m->owner->quota, SRV_QUOTA_DESCRIPTORS, -(int64_t)m->n_dups);
    for (size_t i = 0; i < m->n_dups; i++)
        close(m->p.fds[i]);
    proto_packed_clear(&m->p);
    free(m);
}

static void set_events(conn *c, int events) {
    /* An off-loop call holds the whole session: its members read nothing either. */
    if (c->decoding || c->holds || (c->owner && c->owner->holds)) events &= ~UV_READABLE;
    if (c->closed || c->events == events) return;
    c->events = events;
    if (events)
        uv_poll_start(&c->poll, events, on_conn);
    else
        uv_poll_stop(&c->poll);
}

static void mark_dead(conn *c) {
    if (c->dead) return;
    c->dead = true;
    /* Outside our callback nobody would notice: wake the callback to close us. */
    if (!c->busy) set_events(c, UV_READABLE | UV_WRITABLE);
}

static void flush(conn *c) {
    while (c->head) {
        outmsg *m = c->head;
        int rc = proto_frame_sendmsg(c->fd, &m->p, MSG_DONTWAIT);
        if (rc == -EAGAIN) return;
        if (rc < 0) {
            srv_log_debug("client %llu: send failed: %s", (unsigned long long)c->session.serial,
                          strerror(-rc));
            mark_dead(c);
            return;
        }
        c->head = m->next;
        if (!c->head) c->tail = NULL;
        c->out_frames--;
        c->out_bytes -= m->bytes;
        outmsg_free(m);
    }
    if (c->close_when_sent) {
        mark_dead(c);
        return;
    }
    set_events(c, UV_READABLE);
}

/* Queues a packed frame; on success the outbox owns it, on failure the caller does. */
static int enqueue(conn *c, proto_packed *p, size_t nfds, size_t bytes) {
    if (c->out_frames + 1 > SRV_OUTBOX_MAX_FRAMES || c->out_bytes + bytes > SRV_OUTBOX_MAX_BYTES) {
        srv_session *ss = &c->session;
        srv_log_client(SRV_LOG_WARN,
                       "client %llu (pid %d) does not read its replies (%zu frames, %zu bytes "
                       "waiting); dropping it",
                       (unsigned long long)ss->serial, (int)ss->pid, c->out_frames, c->out_bytes);
        c->srv->dropped++;
        cJSON *ev = srv_bus_event(c->srv->d->bus, "dropped");
        if (ev) {
            srv_json_add_client(ev, ss->serial, ss->pid, ss->uid);
            cJSON_AddStringToObject(ev, "reason", "does not read its replies");
            srv_json_add_u64(ev, "frames", c->out_frames);
            srv_json_add_u64(ev, "bytes", c->out_bytes);
        }
        srv_bus_publish(c->srv->d->bus, ev);
        return -ENOBUFS;
    }
    outmsg *m = calloc(1, sizeof *m);
    if (!m) return -ENOMEM;
    m->p = *p;
    m->bytes = bytes;
    /* The caller's fds are borrowed: keep our own copies until the frame leaves. */
    for (; m->n_dups < nfds; m->n_dups++) {
        int dup = fcntl(p->fds[m->n_dups], F_DUPFD_CLOEXEC, 0);
        if (dup < 0) {
            int e = -errno;
            while (m->n_dups)
                close(m->p.fds[--m->n_dups]);
            free(m); /* the packed frame stays the caller's to clear */
            return e;
        }
        m->p.fds[m->n_dups] = dup;
    }
    /* Counted, never refused: the reply answers a request the quotas admitted. */
    m->owner = &c->session;
    srv_quota_add(&m->owner->quota, SRV_QUOTA_DESCRIPTORS, (int64_t)m->n_dups);
    if (c->tail)
        c->tail->next = m;
    else
        c->head = m;
    c->tail = m;
    c->out_frames++;
    c->out_bytes += bytes;
    set_events(c, UV_READABLE | UV_WRITABLE);
    return 0;
}

/* The member that sent request id to its owner's session, its route taken; or NULL. */
static conn *route_take(conn *owner, uint64_t id) {
    for (conn *m = owner->members; m; m = m->next_member)
        for (unsigned i = 0; i < m->n_routes; i++)
            if (m->routes[i] == id) {
                m->routes[i] = m->routes[--m->n_routes];
                return m;
            }
    return NULL;
}

/* The session's send hook. */
static int conn_send(void *ctx, const ProtobufCMessage *msg, const int *fds, size_t nfds) {
    conn *c = ctx;
    if (c->members && msg->descriptor == &nnd__reply__descriptor) {
        conn *m = route_take(c, ((const Nnd__Reply *)msg)->id);
        if (m) return m->dead ? -EPIPE : conn_send(m, msg, fds, nfds);
    }
    if (c->dead) return -EPIPE;
    static const int no_fds[1] = {-1}; /* frame.c memcpy()s from fds even when nfds is 0 */
    char err[256];
    proto_packed p;
    Nnd__Reply r = NND__REPLY__INIT;
    if (proto_frame_pack(msg, nfds ? fds : no_fds, nfds, &p, err, sizeof err) < 0) {
        /* Tell the client rather than leave its request unanswered. */
        srv_log_error("client %llu: cannot pack a reply: %s", (unsigned long long)c->session.serial,
                      err);
        r.id = msg->descriptor == &nnd__reply__descriptor ? ((const Nnd__Reply *)msg)->id : 0;
        r.status = NND__ERROR_STATUS__GENERAL_FAILURE;
        r.message = err;
        nfds = 0;
        if (proto_frame_pack(&r.base, no_fds, 0, &p, NULL, 0) < 0) {
            mark_dead(c);
            return -ENOMEM;
        }
        msg = &r.base;
    }
    int rc = -EAGAIN;
    if (!c->head) rc = proto_frame_sendmsg(c->fd, &p, MSG_DONTWAIT);
    if (rc == -EAGAIN) {
        size_t bytes = p.len + (p.spill_fd >= 0 ? protobuf_c_message_get_packed_size(msg) : 0);
        rc = enqueue(c, &p, nfds, bytes);
        if (rc == 0) return 0;
    }
    proto_packed_clear(&p);
    if (rc < 0) mark_dead(c);
    return rc;
}

/* ---- connections ----------------------------------------------------------------------- */

static void on_conn_closed(uv_handle_t *h) {
    conn *c = h->data;
    close(c->fd);
    if (c->decoding || c->holds)
        c->free_after_decode = true;
    else
        free(c);
}

/* What a departed client's models, buffers and requests used is free but still resident
 * (the allocator keeps it in its arenas); trimming gives it back. Once a second at most,
 * however fast clients come and go, since a trim walks every arena. */
#define TRIM_DELAY_MS 1000
static void on_trim(uv_timer_t *t) {
    (void)t;
    malloc_trim(0);
    eng_trim();
}

static void conn_close(conn *c) {
    if (c->closed) return;
    srv_server *s = c->srv;
    srv_session *ss = &c->session;
    if (c->refused) {
        s->n_refused--;
    } else {
        srv_log_client(SRV_LOG_INFO, "client %llu disconnected (pid %d, %zu objects released)",
                       (unsigned long long)ss->serial, (int)ss->pid,
                       srv_session_count(ss, SRV_OBJ_ANY));
        if (!uv_is_active((uv_handle_t *)&s->trim))
            uv_timer_start(&s->trim, on_trim, TRIM_DELAY_MS, 0);
        cJSON *ev = srv_bus_event(s->d->bus, "disconnect");
        if (ev) {
            srv_json_add_client(ev, ss->serial, ss->pid, ss->uid);
            cJSON_AddStringToObject(ev, "exe", ss->exe);
        }
        srv_bus_publish(s->d->bus, ev);
    }
    c->dead = true;
    if (c->owner) { /* a member leaves its owner; replies still due to it are dropped */
        conn **p = &c->owner->members;
        while (*p != c)
            p = &(*p)->next_member;
        *p = c->next_member;
        c->owner = NULL;
    }
    for (conn *m = c->members; m; m = m->next_member) { /* they used what goes now */
        m->owner = NULL;
        mark_dead(m);
    }
    c->members = NULL;
    srv_executions_session_closed(s->d, ss); /* its queued work goes, its running work stops */
    srv_session_clear(ss); /* raises the stop flag, then releases everything owned */
    while (c->head) {
        outmsg *m = c->head;
        c->head = m->next;
        outmsg_free(m);
    }
    c->tail = NULL;
    if (c->decoding) { /* the pending request's descriptors: given back now, closed later */
        srv_quota_add(&ss->quota, SRV_QUOTA_DESCRIPTORS, -c->pending_fds);
        c->pending_fds = 0;
    }
    srv_quota_disconnect(&ss->quota); /* after the release: the app's usage is down by now */
    if (c->prev)
        c->prev->next = c->next;
    else
        s->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        s->tail = c->prev;
    s->n_conns--;
    c->closed = true;
    uv_poll_stop(&c->poll);
    uv_close((uv_handle_t *)&c->poll, on_conn_closed);
}

/* recvmsg returns 0 both at EOF and for an empty datagram; only EOF sets RDHUP. */
static bool peer_gone(int fd) {
    struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};
    return poll(&pfd, 1, 0) != 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* A refused connection's first request gets the refusal; then it closes. */
static void answer_refused(conn *c, int rc, proto_frame_in *in) {
    uint64_t id = rc == 1 ? ((const Nnd__Request *)in->msg)->id : 0;
    if (rc == 1) proto_frame_in_clear(in);
    if (rc == 0 && peer_gone(c->fd)) {
        mark_dead(c);
        return;
    }
    srv_reply_status(&c->session, id, SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT, c->refusal);
    c->close_when_sent = true;
    if (!c->head) mark_dead(c); /* sent at once */
}

/* A Hello's join_session: c joins the session of that token, if it is another connection's
 * of the same process (pid and uid) that joined none itself, and c has nothing of its own. */
static void join(conn *c, uint64_t token) {
    if (c->owner || c->members || srv_session_count(&c->session, SRV_OBJ_ANY)) return;
    for (conn *o = c->srv->head; o; o = o->next) {
        if (o == c || o->owner || o->refused || o->dead || o->session.token != token) continue;
        if (o->session.pid != c->session.pid || o->session.uid != c->session.uid) return;
        c->owner = o;
        c->next_member = o->members;
        o->members = c;
        c->session.token = token; /* its HelloReply says it joined */
        return;
    }
}

/* A request goes to the session it uses: a member's to its owner's, with a route back. */
static void dispatch(conn *c, proto_frame_in *in) {
    srv_daemon *d = c->srv->d;
    const Nnd__Request *req = (const Nnd__Request *)in->msg;
    if (c->dead) return;
    if (req->call_case == NND__REQUEST__CALL_HELLO && req->hello && req->hello->join_session)
        join(c, req->hello->join_session);
    if (!c->owner || req->call_case == NND__REQUEST__CALL_HELLO) {
        srv_dispatch(d, &c->session, in);
    } else if (c->n_routes == MEMBER_ROUTES) {
        srv_reply_status(&c->session, req->id, SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT,
                         "too many requests in flight on this connection of a shared session");
    } else {
        c->routes[c->n_routes++] = req->id;
        srv_dispatch(d, &c->owner->session, in);
    }
}

/* ---- spilled requests (up to PROTO_FRAME_SPILL_MAX bytes), unpacked and noted (convert.h)
 * on a worker thread of libuv's pool: on the loop they would hold up every other client. */

static void decode_work(uv_work_t *w) {
    conn *c = w->data;
    c->pending.msg = proto_frame_unspill(&nnd__request__descriptor, &c->spill, c->decode_err,
                                         sizeof c->decode_err);
    if (c->pending.msg) c->pending.noted = srv_request_noted((Nnd__Request *)c->pending.msg);
}

static void decode_done(uv_work_t *w, int status) {
    (void)status;
    conn *c = w->data;
    c->decoding = false;
    if (c->spill.fd >= 0) close(c->spill.fd); /* cancelled before it ran */
    c->spill.fd = -1;
    if (!c->closed) srv_quota_add(&c->session.quota, SRV_QUOTA_DESCRIPTORS, -c->pending_fds);
    c->pending_fds = 0;
    if (c->free_after_decode || c->closed) {
        proto_frame_in_clear(&c->pending);
        if (c->free_after_decode && !c->holds) free(c);
        return;
    }
    c->busy = true;
    if (c->refused) {
        answer_refused(c, c->pending.msg ? 1 : -EPROTO, &c->pending);
    } else if (c->pending.msg) {
        dispatch(c, &c->pending);
    } else {
        srv_log_warn("client %llu (pid %d, uid %d): bad frame: %s",
                     (unsigned long long)c->session.serial, (int)c->session.pid,
                     (int)c->session.uid, c->decode_err);
        srv_reply_status(&c->session, 0, SCHEMA_INVALID_ARGUMENT, c->decode_err);
    }
    proto_frame_in_clear(&c->pending);
    c->busy = false;
    if (c->dead) {
        conn_close(c);
        return;
    }
    set_events(c, UV_READABLE | (c->head ? UV_WRITABLE : 0));
}

/* After its owner's holds changed: a member reads again, or stops (set_events()). */
static void members_events(conn *c) {
    for (conn *m = c->members; m; m = m->next_member)
        if (!m->dead) set_events(m, UV_READABLE | (m->head ? UV_WRITABLE : 0));
}

/* The session's hold hook. */
static void conn_hold(void *ctx, bool on) {
    conn *c = ctx;
    if (on) {
        c->holds++;
        set_events(c, c->head ? UV_WRITABLE : 0);
        members_events(c);
        return;
    }
    if (--c->holds) return;
    if (c->closed) {
        if (c->free_after_decode && !c->decoding) free(c);
        return;
    }
    set_events(c, UV_READABLE | (c->head ? UV_WRITABLE : 0));
    members_events(c);
}

static void decode_start(conn *c) {
    /* Until it is read, the request's descriptors are held for its app. */
    uint64_t n = c->pending.nfds + 1;
    char err[SCHEMA_ERR_LEN];
    if (srv_quota_take(&c->session.quota, SRV_QUOTA_DESCRIPTORS, n, err, sizeof err) != SCHEMA_OK) {
        close(c->spill.fd);
        c->spill.fd = -1;
        proto_frame_in_clear(&c->pending);
        srv_reply_status(&c->session, 0, SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT, err);
        return;
    }
    c->pending_fds = n;
    c->decoding = true;
    c->decode.data = c;
    set_events(c, c->head ? UV_WRITABLE : 0);
    if (uv_queue_work(c->srv->d->loop, &c->decode, decode_work, decode_done) < 0) {
        snprintf(c->decode_err, sizeof c->decode_err, "cannot read a spilled request now");
        decode_done(&c->decode, 0);
    }
}

/* One frame per wakeup: the poll is level-triggered, so a client with more to say is
 * woken again, after every other ready connection had its turn. Reading on until EAGAIN
 * would cost a system call per request when clients wait for each reply. */
static void read_frame(conn *c) {
    if (c->close_when_sent) return;
    srv_server *s = c->srv;
    char err[SCHEMA_ERR_LEN];
    proto_frame_in in;
    int rc = proto_frame_recv_deferred(c->fd, &nnd__request__descriptor, s->buf, &s->arena, &in,
                                       &c->spill, err, sizeof err);
    if (rc == 2) {
        c->pending = in;
        decode_start(c);
    } else if (c->refused && (rc >= 0 || rc == -EPROTO)) {
        answer_refused(c, rc, &in);
    } else if (rc == 1) {
        dispatch(c, &in);
        proto_frame_in_clear(&in);
    } else if (rc == 0) {
        if (peer_gone(c->fd))
            mark_dead(c);
        else /* An empty datagram is a Request with every field at its default. */
            srv_reply_status(&c->session, 0, SCHEMA_INVALID_ARGUMENT, "request names no call");
    } else if (rc == -EPROTO) {
        srv_log_client(SRV_LOG_WARN, "client %llu (pid %d, uid %d): bad frame: %s",
                       (unsigned long long)c->session.serial, (int)c->session.pid,
                       (int)c->session.uid, err);
        srv_reply_status(&c->session, 0, SCHEMA_INVALID_ARGUMENT, err);
    } else if (rc != -EAGAIN) {
        srv_log_debug("client %llu: receive failed: %s", (unsigned long long)c->session.serial,
                      strerror(-rc));
        mark_dead(c);
    }
}

static void on_conn(uv_poll_t *h, int status, int events) {
    conn *c = h->data;
    c->busy = true;
    if (status < 0) mark_dead(c);
    if (!c->dead && (events & UV_WRITABLE)) flush(c);
    if (!c->dead && (events & UV_READABLE)) read_frame(c);
    c->busy = false;
    if (c->dead) conn_close(c);
}

static void on_sweep(uv_timer_t *t) {
    srv_server *s = t->data;
    uint64_t now = srv_now_ns();
    for (conn *c = s->head, *next; c; c = next) {
        next = c->next;
        if (c->refused && now - c->refused_ns >= REFUSED_GRACE_MS * 1000000ull) conn_close(c);
    }
    if (!s->n_refused) uv_timer_stop(&s->sweep);
}

/* Over quota.app.connections: the connection stays open just long enough to say so. */
static void refuse(conn *c, const char *why) {
    srv_server *s = c->srv;
    srv_session *ss = &c->session;
    srv_log_client(SRV_LOG_WARN, "client %llu refused: pid %d uid %d exe %s: %s",
                   (unsigned long long)ss->serial, (int)ss->pid, (int)ss->uid,
                   ss->exe[0] ? ss->exe : "?", why);
    c->refused = true;
    c->refused_ns = srv_now_ns();
    snprintf(c->refusal, sizeof c->refusal, "%s", why);
    if (!s->n_refused++)
        uv_timer_start(&s->sweep, on_sweep, REFUSED_GRACE_MS / 2, REFUSED_GRACE_MS / 2);
}

static void conn_open(srv_server *s, int fd) {
    conn *c = calloc(1, sizeof *c);
    if (!c || uv_poll_init(s->d->loop, &c->poll, fd) < 0) {
        srv_log_error("cannot take a new connection: out of memory or handles");
        free(c);
        close(fd);
        return;
    }
    c->fd = fd;
    c->srv = s;
    c->poll.data = c;
    srv_session_init(&c->session, fd, ++s->serial);
    c->session.send = conn_send;
    c->session.send_ctx = c;
    c->session.hold = conn_hold;
    c->prev = s->tail;
    if (s->tail)
        s->tail->next = c;
    else
        s->head = c;
    s->tail = c;
    s->n_conns++;
    set_events(c, UV_READABLE);
    srv_session *ss = &c->session;
    char why[sizeof c->refusal];
    if (s->d->quota && srv_quota_connect(s->d->quota, &ss->quota, why, sizeof why) != SCHEMA_OK) {
        refuse(c, why);
        return;
    }
    srv_log_client(SRV_LOG_INFO, "client %llu connected: pid %d uid %d exe %s",
                   (unsigned long long)ss->serial, (int)ss->pid, (int)ss->uid,
                   ss->exe[0] ? ss->exe : "?");
    cJSON *ev = srv_bus_event(s->d->bus, "connect");
    if (ev) {
        srv_json_add_client(ev, ss->serial, ss->pid, ss->uid);
        cJSON_AddStringToObject(ev, "exe", ss->exe);
    }
    srv_bus_publish(s->d->bus, ev);
}

/* ---- listener -------------------------------------------------------------------------- */

static void on_listen(uv_poll_t *h, int status, int events);

static void on_retry(uv_timer_t *t) {
    srv_server *s = t->data;
    uv_poll_start(&s->listen_poll, UV_READABLE, on_listen);
}

static int open_reserve(void) {
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Out of descriptors: the reserve one takes the waiting connection, told why (in reply to
 * its first request if it is there) and closed, instead of left hanging in the backlog. */
static void refuse_out_of_fds(srv_server *s, int accept_errno) {
    char why[256];
    struct rlimit rl = {0};
    getrlimit(RLIMIT_NOFILE, &rl);
    const srv_quota_app *top = srv_quota_top_app(s->d->quota, SRV_QUOTA_DESCRIPTORS);
    int n = snprintf(why, sizeof why, "the daemon is out of file descriptors (%s, limit %llu)",
                     strerror(accept_errno), (unsigned long long)rl.rlim_cur);
    if (top && n > 0 && (size_t)n < sizeof why)
        snprintf(why + n, sizeof why - (size_t)n,
                 "; uid %u holds the most, %llu (quota.app.descriptors %llu)", (unsigned)top->uid,
                 (unsigned long long)srv_quota_app_used(top, SRV_QUOTA_DESCRIPTORS),
                 (unsigned long long)srv_quota_get_limits(s->d->quota)->app[SRV_QUOTA_DESCRIPTORS]);
    if (s->reserve_fd >= 0) close(s->reserve_fd);
    s->reserve_fd = -1;
    int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
        struct ucred cred = {0};
        socklen_t len = sizeof cred;
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
        srv_log_warn("connection of uid %u (pid %d) refused: %s", (unsigned)cred.uid, (int)cred.pid,
                     why);
        proto_frame_in in;
        char err[128];
        uint64_t id = 0;
        if (proto_frame_recv(fd, &nnd__request__descriptor, s->buf, &in, err, sizeof err) == 1) {
            id = ((const Nnd__Request *)in.msg)->id;
            proto_frame_in_clear(&in);
        }
        Nnd__Reply r = NND__REPLY__INIT;
        r.id = id;
        r.status = NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT;
        r.message = why;
        proto_packed p;
        static const int no_fds[1] = {-1};
        if (proto_frame_pack(&r.base, no_fds, 0, &p, NULL, 0) == 0) {
            proto_frame_sendmsg(fd, &p, MSG_DONTWAIT);
            proto_packed_clear(&p);
        }
        close(fd);
    } else {
        srv_log_warn("accept failed: %s", why);
    }
    s->reserve_fd = open_reserve();
}

static void on_listen(uv_poll_t *h, int status, int events) {
    (void)status;
    (void)events;
    srv_server *s = h->data;
    for (int i = 0; i < BATCH; i++) {
        int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            conn_open(s, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        int e = errno;
        if (e == EMFILE || e == ENFILE) refuse_out_of_fds(s, e);
        /* Out of fds or memory: the listener stays readable, so pause instead of spinning. */
        srv_log_warn("accept failed: %s; pausing %d ms", strerror(e), ACCEPT_RETRY_MS);
        uv_poll_stop(&s->listen_poll);
        uv_timer_start(&s->retry, on_retry, ACCEPT_RETRY_MS, 0);
        return;
    }
}

static int bind_path(int fd, const struct sockaddr_un *sa, char *err, size_t errlen) {
    const char *path = sa->sun_path;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) == 0) return 0;
        if (errno != EADDRINUSE) break;
        struct stat st;
        if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
            snprintf(err, errlen, "%s exists and is not a socket; refusing to replace it", path);
            return -1;
        }
        /* Someone answering means a live daemon; a refusal means a stale file. */
        int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (probe < 0) break;
        int rc = connect(probe, (const struct sockaddr *)sa, sizeof *sa);
        int e = errno;
        close(probe);
        if (rc == 0 || e == EAGAIN || e == EINPROGRESS || e == EPROTOTYPE) {
            snprintf(err, errlen, "another daemon is already serving %s", path);
            return -1;
        }
        if (e != ECONNREFUSED && e != ENOENT) {
            snprintf(err, errlen, "cannot probe %s: %s", path, strerror(e));
            return -1;
        }
        if (e == ECONNREFUSED) {
            srv_log_info("removing stale socket %s", path);
            if (unlink(path) < 0 && errno != ENOENT) break;
        }
    }
    snprintf(err, errlen, "cannot bind %s: %s", path, strerror(errno));
    return -1;
}

/* Polls the listening socket; the server is live from here on. */
static srv_server *serve(srv_server *s) {
    uv_poll_init(s->d->loop, &s->listen_poll, s->fd);
    uv_timer_init(s->d->loop, &s->retry);
    uv_timer_init(s->d->loop, &s->sweep);
    uv_timer_init(s->d->loop, &s->trim);
    s->listen_poll.data = s->retry.data = s->sweep.data = s->trim.data = s;
    s->open_handles = 4;
    uv_poll_start(&s->listen_poll, UV_READABLE, on_listen);
    return s;
}

srv_server *srv_server_start(srv_daemon *d, int listen_fd, char *err, size_t errlen) {
    if (listen_fd >= 0) { /* systemd's: its file is systemd's too (dev and ino stay 0) */
        srv_server *s = calloc(1, sizeof *s);
        if (!s || proto_arena_init(&s->arena, 2 * PROTO_FRAME_RECV_BUF) < 0) {
            snprintf(err, errlen, "out of memory");
            free(s);
            return NULL;
        }
        s->d = d;
        s->fd = listen_fd;
        s->reserve_fd = open_reserve();
        return serve(s);
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(d->socket_path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "socket path too long (limit %zu bytes): %s", sizeof sa.sun_path - 1,
                 d->socket_path);
        return NULL;
    }
    strcpy(sa.sun_path, d->socket_path);
    srv_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->d = d;
    s->reserve_fd = open_reserve();
    s->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0 || proto_arena_init(&s->arena, 2 * PROTO_FRAME_RECV_BUF) < 0) {
        snprintf(err, errlen, "cannot create socket: %s",
                 s->fd < 0 ? strerror(errno) : "out of memory");
        if (s->fd >= 0) close(s->fd);
        if (s->reserve_fd >= 0) close(s->reserve_fd);
        proto_arena_free(&s->arena);
        free(s);
        return NULL;
    }
    struct stat st;
    /* Any local user may connect, as any app may use an NN HAL: each connection only ever
     * sees its own objects. The socket file is made 0666 by bind itself (no chmod by path
     * afterwards); restrict access with the directory if needed. */
    mode_t umask_was = umask(0111);
    int bound = bind_path(s->fd, &sa, err, errlen);
    umask(umask_was);
    if (bound < 0) goto fail;
    if (listen(s->fd, SOMAXCONN) < 0 || stat(sa.sun_path, &st) < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", sa.sun_path, strerror(errno));
        unlink(sa.sun_path);
        goto fail;
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    return serve(s);
fail:
    close(s->fd);
    if (s->reserve_fd >= 0) close(s->reserve_fd);
    proto_arena_free(&s->arena);
    free(s);
    return NULL;
}

static void on_server_closed(uv_handle_t *h) {
    srv_server *s = h->data;
    if (--s->open_handles) return;
    close(s->fd);
    if (s->reserve_fd >= 0) close(s->reserve_fd);
    proto_arena_free(&s->arena);
    free(s);
}

void srv_server_stop(srv_server *s) {
    if (!s) return;
    uv_poll_stop(&s->listen_poll);
    uv_timer_stop(&s->retry);
    uv_timer_stop(&s->sweep);
    uv_timer_stop(&s->trim);
    while (s->head)
        conn_close(s->head);
    struct stat st;
    if (s->ino && lstat(s->d->socket_path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
        unlink(s->d->socket_path);
    uv_close((uv_handle_t *)&s->listen_poll, on_server_closed);
    uv_close((uv_handle_t *)&s->retry, on_server_closed);
    uv_close((uv_handle_t *)&s->sweep, on_server_closed);
    uv_close((uv_handle_t *)&s->trim, on_server_closed);
}

size_t srv_server_connections(const srv_server *s) {
    return s ? s->n_conns - s->n_refused : 0;
}

uint64_t srv_server_dropped(const srv_server *s) {
    return s ? s->dropped : 0;
}

void srv_server_foreach(srv_server *s, void (*fn)(srv_session *, void *), void *ctx) {
    for (conn *c = s ? s->head : NULL; c; c = c->next)
        if (!c->refused) fn(&c->session, ctx);
}

/* nnd_conn.c: many requests in flight on one libnnd connection, each thread waiting only
 * for its own reply. See client_internal.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_internal.h"

uint64_t nnd_conn_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t nnd_conn_bound(nnd_client *c, uint64_t deadline_ns) {
    uint64_t now = nnd_conn_now_ns();
    /* A deadline already past is the daemon's to refuse: it gets the margin from now. */
    if (deadline_ns) { /* saturating: a deadline may be UINT64_MAX (the NDK's longest timeout) */
        uint64_t from = deadline_ns > now ? deadline_ns : now,
                 margin = NND_DEADLINE_MARGIN_MS * 1000000ull;
        return from > UINT64_MAX - margin ? UINT64_MAX : from + margin;
    }
    uint64_t ms = atomic_load(&c->call_timeout_ms);
    return ms ? now + ms * 1000000ull : 0;
}

/* Condition variables that time out on CLOCK_MONOTONIC, like every bound here. */
static pthread_condattr_t g_cond_attr;
static void init_cond_attr(void) {
    pthread_condattr_init(&g_cond_attr);
    pthread_condattr_setclock(&g_cond_attr, CLOCK_MONOTONIC);
}

static void link_pending(nnd_client *c, nnd_pending *p) {
    p->prev = NULL;
    p->next = c->pending;
    if (c->pending) c->pending->prev = p;
    c->pending = p;
}

static void unlink_pending(nnd_client *c, nnd_pending *p) {
    if (p->prev)
        p->prev->next = p->next;
    else
        c->pending = p->next;
    if (p->next) p->next->prev = p->prev;
    p->prev = p->next = NULL;
}

static nnd_pending *find(const nnd_client *c, uint64_t id) {
    for (nnd_pending *p = c->pending; p; p = p->next)
        if (p->id == id) return p;
    return NULL;
}

static bool fatal_errno(int e) {
    return e == EPIPE || e == ECONNRESET || e == ENOTCONN || e == ECONNREFUSED || e == EBADF ||
           e == EPROTO;
}

/* With the lock held: the connection is dead; every waiter wakes to see it. */
static void mark_dead(nnd_client *c, int rc, const char *msg) {
    if (c->dead) return;
    c->dead = true;
    c->dead_rc = rc;
    snprintf(c->dead_msg, sizeof c->dead_msg, "%s", msg);
    for (nnd_pending *p = c->pending; p; p = p->next)
        if (p->waiting) pthread_cond_signal(&p->cond);
}

static void dead_error(const nnd_client *c, char *err, size_t errlen) {
    nnd_client_set_err(err, errlen, "%s", c->dead_msg);
}

int nnd_conn_send(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds, nnd_pending *p,
                  uint64_t bound_ns, bool ticket, char *err, size_t errlen) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_cond_attr);
    static const int no_fds[1] = {-1};
    if (!fds) fds = no_fds; /* frame.c memcpy()s fds even when nfds is 0 */
    pthread_mutex_lock(&c->lock);
    if (c->dead) {
        dead_error(c, err, errlen);
        pthread_mutex_unlock(&c->lock);
        return -ENOTCONN;
    }
    req->id = ++c->next_id;
    if (p) {
        memset(p, 0, sizeof *p);
        p->id = req->id;
        p->bound_ns = bound_ns;
        p->ticket = ticket;
        pthread_cond_init(&p->cond, &g_cond_attr);
        link_pending(c, p); /* before sending: the reply may come at once */
    }
    pthread_mutex_unlock(&c->lock);
    nnd_packed packed;
    char msg[sizeof c->dead_msg] = "";
    int rc = 0;
    if (nnd_frame_pack(&req->base, fds, nfds, &packed, msg, sizeof msg) < 0) {
        rc = -EINVAL; /* nothing was sent: the connection is still good */
    } else {
        /* A datagram goes whole or not at all, so threads may send at once. The socket's
         * send timeout is a tick: a full socket of a daemon that does not read is noticed. */
        while ((rc = nnd_frame_sendmsg(c->sock, &packed, 0)) == -EAGAIN || rc == -EINTR)
            if (bound_ns && nnd_conn_now_ns() >= bound_ns) break;
        nnd_packed_clear(&packed);
        if (rc == -EAGAIN)
            snprintf(msg, sizeof msg, "the daemon at %s takes no requests (its socket is full)",
                     c->path);
        else if (rc < 0)
            snprintf(msg, sizeof msg, "sending to the daemon at %s failed: %s", c->path,
                     strerror(-rc));
        if (rc == -EAGAIN) rc = -ETIMEDOUT;
        if (rc == -EPIPE || rc == -ECONNRESET) rc = -ENOTCONN;
    }
    if (rc < 0) {
        nnd_client_set_err(err, errlen, "%s", msg);
        pthread_mutex_lock(&c->lock);
        if (p) {
            unlink_pending(c, p);
            pthread_cond_destroy(&p->cond);
        }
        if (fatal_errno(-rc)) mark_dead(c, rc, msg);
        pthread_mutex_unlock(&c->lock);
    }
    return rc;
}

/* The reader's one receive, without the lock: a frame (1), nothing yet (-EAGAIN), EOF (0)
 * or an error. Waits at most a tick, or until `until` when that comes sooner. */
static int read_one(nnd_client *c, uint64_t until, nnd_frame_in *in, char *ferr, size_t len) {
    uint64_t now = nnd_conn_now_ns();
    if (!until || until > now + NND_CONN_TICK_MS * 1000000ull)
        /* Wait in recvmsg itself (up to SO_RCVTIMEO, a tick): no poll() per reply. */
        return nnd_frame_recv_wait(c->sock, &nnd__reply__descriptor, c->buf, in, ferr, len);
    struct pollfd pfd = {.fd = c->sock, .events = POLLIN};
    int ms = until > now ? (int)((until - now + 999999) / 1000000) : 0;
    int n = poll(&pfd, 1, ms);
    if (n < 0) return errno == EINTR ? -EAGAIN : -errno;
    if (n == 0) return -EAGAIN;
    return nnd_frame_recv(c->sock, &nnd__reply__descriptor, c->buf, in, ferr, len);
}

/* With the lock held: hands what the reader got to its pending, or marks the connection
 * dead. Returns a frame that nobody awaits, for the caller to clear without the lock. */
static bool deliver(nnd_client *c, int rc, nnd_frame_in *in, const char *ferr) {
    if (rc == -EAGAIN || rc == -EINTR) return false;
    if (rc <= 0) {
        char msg[sizeof c->dead_msg];
        if (rc == 0)
            snprintf(msg, sizeof msg, "the daemon at %s closed the connection", c->path);
        else if (rc == -EPROTO)
            snprintf(msg, sizeof msg, "bad reply from the daemon at %s: %s", c->path, ferr);
        else
            snprintf(msg, sizeof msg, "receiving from the daemon at %s failed: %s", c->path,
                     strerror(-rc));
        mark_dead(c, rc == 0 || fatal_errno(-rc) ? -ENOTCONN : rc, msg);
        return false;
    }
    nnd_pending *p = find(c, ((const Nnd__Reply *)in->msg)->id);
    if (!p || p->arrived) return true; /* an abandoned call's, or a Cancel's */
    p->in = *in;
    p->arrived = true;
    if (p->waiting) pthread_cond_signal(&p->cond);
    return false;
}

/* With the lock held, on leaving a wait: when nobody reads, one waiter takes the role. */
static void pass_reader(nnd_client *c) {
    if (c->reading) return;
    for (nnd_pending *p = c->pending; p; p = p->next)
        if (p->waiting && !p->arrived) {
            pthread_cond_signal(&p->cond);
            return;
        }
}

/* With the lock held: waits for p until `until` (0: no limit). 0 when p's reply arrived
 * (p stays registered), else -errno with err set. */
static int wait_locked(nnd_client *c, nnd_pending *p, uint64_t until, char *err, size_t errlen) {
    int rc = 0;
    uint64_t t0 = nnd_conn_now_ns();
    bool looked = false; /* read the socket at least once, even with no time left */
    for (;;) {
        if (p->arrived) break;
        if (c->dead) {
            dead_error(c, err, errlen);
            rc = c->dead_rc ? c->dead_rc : -ENOTCONN;
            break;
        }
        uint64_t now = nnd_conn_now_ns();
        if (until && now >= until && (looked || c->reading)) {
            nnd_client_set_err(err, errlen, "no reply from the daemon at %s within %llu ms",
                               c->path, (unsigned long long)((now - t0) / 1000000));
            rc = -ETIMEDOUT;
            break;
        }
        if (!c->reading) {
            looked = true;
            c->reading = true;
            pthread_mutex_unlock(&c->lock);
            nnd_frame_in in;
            char ferr[256] = "";
            int got = read_one(c, until, &in, ferr, sizeof ferr);
            pthread_mutex_lock(&c->lock);
            c->reading = false;
            if (deliver(c, got, &in, ferr)) {
                pthread_mutex_unlock(&c->lock);
                nnd_frame_in_clear(&in);
                pthread_mutex_lock(&c->lock);
            }
            continue;
        }
        p->waiting = true;
        if (until) {
            struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
            pthread_cond_timedwait(&p->cond, &c->lock, &ts);
        } else {
            pthread_cond_wait(&p->cond, &c->lock);
        }
        p->waiting = false;
    }
    pass_reader(c);
    return rc;
}

/* With the lock held: p leaves the table, its reply to *in when it came. */
static void settle(nnd_client *c, nnd_pending *p, nnd_frame_in *in) {
    unlink_pending(c, p);
    if (p->arrived) *in = p->in;
    pthread_cond_destroy(&p->cond);
}

int nnd_conn_wait(nnd_client *c, nnd_pending *p, nnd_frame_in *in, char *err, size_t errlen) {
    memset(in, 0, sizeof *in);
    pthread_mutex_lock(&c->lock);
    int rc = wait_locked(c, p, p->bound_ns, err, errlen);
    settle(c, p, in);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int nnd_conn_wait_ticket(nnd_client *c, uint64_t id, uint64_t until_ns, nnd_frame_in *in, char *err,
                         size_t errlen) {
    memset(in, 0, sizeof *in);
    pthread_mutex_lock(&c->lock);
    nnd_pending *p = find(c, id);
    int rc = 0;
    if (!p || !p->ticket) {
        nnd_client_set_err(err, errlen, "no execution of ticket %llu is awaited",
                           (unsigned long long)id);
        rc = -EINVAL;
    } else if (p->waiting) {
        nnd_client_set_err(err, errlen, "another thread waits for ticket %llu",
                           (unsigned long long)id);
        rc = -EBUSY;
    } else {
        uint64_t until =
            p->bound_ns && (!until_ns || p->bound_ns < until_ns) ? p->bound_ns : until_ns;
        rc = wait_locked(c, p, until, err, errlen);
        /* Collected, or its connection or its own bound gave out: the ticket is over. */
        if (rc == 0 || rc != -ETIMEDOUT || until == p->bound_ns) {
            settle(c, p, in);
            free(p);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void nnd_conn_free(nnd_client *c) {
    /* Tickets nobody collected are the client's. A call's pending lives on its caller's
     * stack and is no call's here (after fork(), it is a copy of another thread's). */
    for (nnd_pending *p = c->pending, *next; p; p = next) {
        next = p->next;
        if (!p->ticket) continue;
        if (p->arrived) nnd_frame_in_clear(&p->in);
        if (!p->waiting) pthread_cond_destroy(&p->cond);
        free(p);
    }
    c->pending = NULL;
}

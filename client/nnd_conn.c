/* SPDX-License-Identifier: Apache-2.0 */
/* nnd_conn.c: many requests in flight on one libnnd connection, each thread waiting only
 * for its own reply. See client_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/client_internal.h"

uint64_t cli_conn_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Opening a lane (below, with the bounded connect). */
static int cli_open_lane(nnd_client *c, uint8_t **buf);

uint64_t cli_conn_bound(nnd_client *c, uint64_t deadline_ns) {
    uint64_t now = cli_conn_now_ns();
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

/* With the lock held: the calling thread's lane (open or not), or NULL. */
static cli_lane *thread_lane(nnd_client *c) {
    pthread_t self = pthread_self();
    for (unsigned i = 0; i < c->n_lanes; i++)
        if (pthread_equal(c->lanes[i].thread, self)) return &c->lanes[i];
    return NULL;
}
static void init_cond_attr(void) {
    pthread_condattr_init(&g_cond_attr);
    pthread_condattr_setclock(&g_cond_attr, CLOCK_MONOTONIC);
}

static void link_pending(nnd_client *c, cli_pending *p) {
    p->prev = NULL;
    p->next = c->pending;
    if (c->pending) c->pending->prev = p;
    c->pending = p;
}

static void unlink_pending(nnd_client *c, cli_pending *p) {
    if (p->prev)
        p->prev->next = p->next;
    else
        c->pending = p->next;
    if (p->next) p->next->prev = p->prev;
    p->prev = p->next = NULL;
}

static cli_pending *find(const nnd_client *c, uint64_t id) {
    for (cli_pending *p = c->pending; p; p = p->next)
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
    for (cli_pending *p = c->pending; p; p = p->next)
        if (p->waiting) pthread_cond_signal(&p->cond);
}

static void dead_error(const nnd_client *c, char *err, size_t errlen) {
    cli_set_err(err, errlen, "%s", c->dead_msg);
}

/* Sends req on sock until bound_ns: 0, or -errno with msg set (-EINVAL: nothing was sent,
 * the connection is still good). */
static int send_frame(nnd_client *c, int sock, Nnd__Request *req, const int *fds, size_t nfds,
                      uint64_t bound_ns, char *msg, size_t len) {
    static const int no_fds[1] = {-1};
    if (!fds) fds = no_fds; /* frame.c memcpy()s fds even when nfds is 0 */
    proto_packed packed;
    if (proto_frame_pack(&req->base, fds, nfds, &packed, msg, len) < 0) return -EINVAL;
    /* A datagram goes whole or not at all, so threads may send at once. The socket's send
     * timeout is a tick: a full socket of a daemon that does not read is noticed. */
    int rc;
    while ((rc = proto_frame_sendmsg(sock, &packed, 0)) == -EAGAIN || rc == -EINTR)
        if (bound_ns && cli_conn_now_ns() >= bound_ns) break;
    proto_packed_clear(&packed);
    if (rc == -EAGAIN)
        snprintf(msg, len, "the daemon at %s takes no requests (its socket is full)", c->path);
    else if (rc < 0)
        snprintf(msg, len, "sending to the daemon at %s failed: %s", c->path, strerror(-rc));
    if (rc == -EAGAIN) rc = -ETIMEDOUT;
    if (rc == -EPIPE || rc == -ECONNRESET) rc = -ENOTCONN;
    return rc;
}

int cli_conn_send(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds, cli_pending *p,
                  uint64_t bound_ns, bool ticket, char *err, size_t errlen) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_cond_attr);
    /* A ticket goes on this shared socket: the thread's later calls follow it there, not on
     * its lane, until it is settled (so that the daemon reads them in the thread's order).
     * Its lane is made now, if it can be, to count it on. */
    if (ticket) cli_lane_for_thread(c);
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
        if (ticket && (p->lane = thread_lane(c))) p->lane->tickets++;
        pthread_cond_init(&p->cond, &g_cond_attr);
        link_pending(c, p); /* before sending: the reply may come at once */
    }
    pthread_mutex_unlock(&c->lock);
    char msg[sizeof c->dead_msg] = "";
    int rc = send_frame(c, c->sock, req, fds, nfds, bound_ns, msg, sizeof msg);
    if (rc < 0) {
        cli_set_err(err, errlen, "%s", msg);
        pthread_mutex_lock(&c->lock);
        if (p) {
            if (p->lane) p->lane->tickets--;
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
static int read_one(int sock, uint8_t *buf, uint64_t until, proto_frame_in *in, char *ferr,
                    size_t len) {
    uint64_t now = cli_conn_now_ns();
    if (!until || until > now + CLI_CONN_TICK_MS * 1000000ull)
        /* Wait in recvmsg itself (up to SO_RCVTIMEO, a tick): no poll() per reply. */
        return proto_frame_recv_wait(sock, &nnd__reply__descriptor, buf, in, ferr, len);
    struct pollfd pfd = {.fd = sock, .events = POLLIN};
    int ms = until > now ? (int)((until - now + 999999) / 1000000) : 0;
    int n = poll(&pfd, 1, ms);
    if (n < 0) return errno == EINTR ? -EAGAIN : -errno;
    if (n == 0) return -EAGAIN;
    return proto_frame_recv(sock, &nnd__reply__descriptor, buf, in, ferr, len);
}

/* A failed receive's message, and its error: -ENOTCONN for a connection that is gone. */
static int recv_failure(const nnd_client *c, int rc, const char *ferr, char *msg, size_t len) {
    if (rc == 0)
        snprintf(msg, len, "the daemon at %s closed the connection", c->path);
    else if (rc == -EPROTO)
        snprintf(msg, len, "bad reply from the daemon at %s: %s", c->path, ferr);
    else
        snprintf(msg, len, "receiving from the daemon at %s failed: %s", c->path, strerror(-rc));
    return rc == 0 || fatal_errno(-rc) ? -ENOTCONN : rc;
}

/* With the lock held: hands what the reader got to its pending, or marks the connection
 * dead. Returns a frame that nobody awaits, for the caller to clear without the lock. */
static bool deliver(nnd_client *c, int rc, proto_frame_in *in, const char *ferr) {
    if (rc == -EAGAIN || rc == -EINTR) return false;
    if (rc <= 0) {
        char msg[sizeof c->dead_msg];
        int dead_rc = recv_failure(c, rc, ferr, msg, sizeof msg);
        mark_dead(c, dead_rc, msg);
        return false;
    }
    cli_pending *p = find(c, ((const Nnd__Reply *)in->msg)->id);
    if (!p || p->arrived) return true; /* an abandoned call's, or a Cancel's */
    p->in = *in;
    p->arrived = true;
    if (p->waiting) pthread_cond_signal(&p->cond);
    return false;
}

/* With the lock held, on leaving a wait: when nobody reads, one waiter takes the role. */
static void pass_reader(nnd_client *c) {
    if (c->reading) return;
    for (cli_pending *p = c->pending; p; p = p->next)
        if (p->waiting && !p->arrived) {
            pthread_cond_signal(&p->cond);
            return;
        }
}

/* With the lock held: waits for p until `until` (0: no limit). 0 when p's reply arrived
 * (p stays registered), else -errno with err set. */
static int wait_locked(nnd_client *c, cli_pending *p, uint64_t until, char *err, size_t errlen) {
    int rc = 0;
    uint64_t t0 = cli_conn_now_ns();
    bool looked = false; /* read the socket at least once, even with no time left */
    for (;;) {
        if (p->arrived) break;
        if (c->dead) {
            dead_error(c, err, errlen);
            rc = c->dead_rc ? c->dead_rc : -ENOTCONN;
            break;
        }
        uint64_t now = cli_conn_now_ns();
        if (until && now >= until && (looked || c->reading)) {
            cli_set_err(err, errlen, "no reply from the daemon at %s within %llu ms", c->path,
                        (unsigned long long)((now - t0) / 1000000));
            rc = -ETIMEDOUT;
            break;
        }
        if (!c->reading) {
            looked = true;
            c->reading = true;
            pthread_mutex_unlock(&c->lock);
            proto_frame_in in;
            char ferr[256] = "";
            int got = read_one(c->sock, c->buf, until, &in, ferr, sizeof ferr);
            pthread_mutex_lock(&c->lock);
            c->reading = false;
            if (deliver(c, got, &in, ferr)) {
                pthread_mutex_unlock(&c->lock);
                proto_frame_in_clear(&in);
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
static void settle(nnd_client *c, cli_pending *p, proto_frame_in *in) {
    if (p->lane) p->lane->tickets--;
    unlink_pending(c, p);
    if (p->arrived) *in = p->in;
    pthread_cond_destroy(&p->cond);
}

int cli_conn_wait(nnd_client *c, cli_pending *p, proto_frame_in *in, char *err, size_t errlen) {
    memset(in, 0, sizeof *in);
    pthread_mutex_lock(&c->lock);
    int rc = wait_locked(c, p, p->bound_ns, err, errlen);
    settle(c, p, in);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int cli_conn_wait_ticket(nnd_client *c, uint64_t id, uint64_t until_ns, proto_frame_in *in,
                         char *err, size_t errlen) {
    memset(in, 0, sizeof *in);
    pthread_mutex_lock(&c->lock);
    cli_pending *p = find(c, id);
    int rc = 0;
    if (!p || !p->ticket) {
        cli_set_err(err, errlen, "no execution of ticket %llu is awaited", (unsigned long long)id);
        rc = -EINVAL;
    } else if (p->waiting) {
        cli_set_err(err, errlen, "another thread waits for ticket %llu", (unsigned long long)id);
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

void cli_conn_free(nnd_client *c) {
    /* Tickets nobody collected are the client's. A call's pending lives on its caller's
     * stack and is no call's here (after fork(), it is a copy of another thread's). */
    for (cli_pending *p = c->pending, *next; p; p = next) {
        next = p->next;
        if (!p->ticket) continue;
        if (p->arrived) proto_frame_in_clear(&p->in);
        if (!p->waiting) pthread_cond_destroy(&p->cond);
        free(p);
    }
    c->pending = NULL;
    for (unsigned i = 0; i < c->n_lanes; i++) {
        if (c->lanes[i].sock >= 0) close(c->lanes[i].sock);
        free(c->lanes[i].buf);
    }
    c->n_lanes = 0;
}

/* ---- lanes: a connection per thread ------------------------------------------------------ */

/* Bumped in a forked child: the lanes it inherited are its parent's connections. */
static atomic_uint g_fork_generation;
static void on_fork_child(void) {
    atomic_fetch_add(&g_fork_generation, 1);
}
static void init_fork_watch(void) {
    pthread_atfork(NULL, NULL, on_fork_child);
}

void cli_lanes_init(nnd_client *c, unsigned max_lanes) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_fork_watch);
    c->fork_generation = atomic_load(&g_fork_generation);
    c->connecting_thread = pthread_self();
    c->max_lanes = max_lanes < CLI_CONN_LANES ? max_lanes : CLI_CONN_LANES;
}

cli_lane *cli_lane_for_thread(nnd_client *c) {
    /* The thread that connected keeps the first connection: one thread, one connection. */
    if (!c->max_lanes || !c->session_token || pthread_equal(pthread_self(), c->connecting_thread) ||
        atomic_load(&g_fork_generation) != c->fork_generation)
        return NULL;
    bool open = false, tickets = false;
    pthread_mutex_lock(&c->lock);
    cli_lane *l = thread_lane(c);
    if (!l && !c->lanes_off && !c->dead && c->n_lanes < c->max_lanes) {
        l = &c->lanes[c->n_lanes++]; /* this thread's from now on, whatever the open gives */
        *l = (cli_lane){.thread = pthread_self(), .sock = -1};
        open = true;
    }
    tickets = l && l->tickets;
    pthread_mutex_unlock(&c->lock);
    if (open) {
        uint8_t *buf = NULL;
        int sock = cli_open_lane(c, &buf);
        pthread_mutex_lock(&c->lock);
        l->sock = sock;
        l->buf = buf;
        if (sock < 0) c->lanes_off = true; /* refused (quota, an older daemon): no more tries */
        pthread_mutex_unlock(&c->lock);
    }
    return l && l->sock >= 0 && !tickets ? l : NULL;
}

/* One exchange on sock (its receive buffer buf) that touches no state of c but the ids:
 * 0 with the reply to req in *in, or -errno with msg set. For opening a lane. */
static int cli_lane_exchange(nnd_client *c, int sock, uint8_t *buf, Nnd__Request *req,
                             const int *fds, size_t nfds, uint64_t bound_ns, proto_frame_in *in,
                             char *msg, size_t len) {
    memset(in, 0, sizeof *in);
    pthread_mutex_lock(&c->lock);
    req->id = ++c->next_id; /* one numbering for the whole session */
    pthread_mutex_unlock(&c->lock);
    int rc = send_frame(c, sock, req, fds, nfds, bound_ns, msg, len);
    uint64_t t0 = cli_conn_now_ns();
    while (rc == 0) {
        char ferr[256] = "";
        int got = read_one(sock, buf, bound_ns, in, ferr, sizeof ferr);
        if (got == 1 && ((const Nnd__Reply *)in->msg)->id == req->id) return 0;
        if (got == 1) { /* a late reply of a call that gave up, or a Cancel's */
            proto_frame_in_clear(in);
            continue;
        }
        if (got != -EAGAIN && got != -EINTR) return recv_failure(c, got, ferr, msg, len);
        uint64_t now = cli_conn_now_ns();
        if (bound_ns && now >= bound_ns) {
            snprintf(msg, len, "no reply from the daemon at %s within %llu ms", c->path,
                     (unsigned long long)((now - t0) / 1000000));
            rc = -ETIMEDOUT;
        }
    }
    return rc;
}

int cli_lane_call(nnd_client *c, cli_lane *l, Nnd__Request *req, const int *fds, size_t nfds,
                  uint64_t bound_ns, proto_frame_in *in, char *err, size_t errlen) {
    pthread_mutex_lock(&c->lock);
    bool dead = c->dead;
    if (dead) dead_error(c, err, errlen);
    pthread_mutex_unlock(&c->lock);
    if (dead) return -ENOTCONN;
    char msg[sizeof c->dead_msg] = "";
    int rc = cli_lane_exchange(c, l->sock, l->buf, req, fds, nfds, bound_ns, in, msg, sizeof msg);
    if (rc < 0) {
        cli_set_err(err, errlen, "%s", msg);
        if (rc == -ENOTCONN || fatal_errno(-rc)) { /* the daemon dropped the session */
            pthread_mutex_lock(&c->lock);
            mark_dead(c, -ENOTCONN, msg);
            pthread_mutex_unlock(&c->lock);
        }
    }
    return rc;
}

void cli_lane_send(nnd_client *c, cli_lane *l, Nnd__Request *req, uint64_t bound_ns) {
    char msg[sizeof c->dead_msg];
    pthread_mutex_lock(&c->lock);
    req->id = ++c->next_id;
    pthread_mutex_unlock(&c->lock);
    send_frame(c, l->sock, req, NULL, 0, bound_ns, msg, sizeof msg);
}

/* ---- opening a connection and its lanes ---------------------------------------------- */

/* connect() without blocking past `bound`: a listener whose backlog is full (a daemon that
 * stopped accepting) is retried until then. Returns 0 or -errno. */
int cli_connect_bounded(int sock, const struct sockaddr_un *sa, uint64_t bound) {
    int flags = fcntl(sock, F_GETFL);
    if (flags < 0 || fcntl(sock, F_SETFL, flags | O_NONBLOCK) < 0) return -errno;
    int rc;
    for (;;) {
        if (connect(sock, (const struct sockaddr *)sa, sizeof *sa) == 0) {
            rc = 0;
            break;
        }
        rc = -errno;
        if (rc == -EINTR) continue;
        if (rc != -EAGAIN || cli_conn_now_ns() >= bound) break;
        struct timespec pause = {0, 10 * 1000000};
        nanosleep(&pause, NULL);
    }
    if (rc == -EAGAIN) rc = -ETIMEDOUT;
    if (rc == 0 && fcntl(sock, F_SETFL, flags) < 0) rc = -errno;
    /* Waits in recvmsg and sendmsg end after a tick, so that bounds are looked at. */
    struct timeval tick = {0, CLI_CONN_TICK_MS * 1000};
    if (rc == 0 && (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof tick) < 0 ||
                    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tick, sizeof tick) < 0))
        rc = -errno;
    return rc;
}

/* Connects a lane to the daemon of c and joins c's session: its socket, with *buf its
 * receive buffer; -1 when the daemon did not let it join. */
static int cli_open_lane(nnd_client *c, uint8_t **buf) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", c->path);
    uint64_t bound = cli_conn_now_ns() + NND_CONNECT_TIMEOUT_MS * 1000000ull;
    *buf = malloc(PROTO_FRAME_RECV_BUF);
    int sock = *buf ? socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0) : -1;
    bool joined = false;
    if (sock >= 0 && cli_connect_bounded(sock, &sa, bound) == 0) {
        Nnd__Hello hello = NND__HELLO__INIT;
        hello.protocol_version = PROTO_PROTOCOL_VERSION;
        hello.client_name = c->name;
        hello.join_session = c->session_token;
        Nnd__Request req = NND__REQUEST__INIT;
        req.call_case = NND__REQUEST__CALL_HELLO;
        req.hello = &hello;
        proto_frame_in in;
        char msg[256];
        if (cli_lane_exchange(c, sock, *buf, &req, NULL, 0, bound, &in, msg, sizeof msg) == 0) {
            const Nnd__Reply *r = (const Nnd__Reply *)in.msg;
            /* A daemon that did not let it join answers the lane's own session. */
            joined = r->status == NND__ERROR_STATUS__NONE &&
                     r->result_case == NND__REPLY__RESULT_HELLO &&
                     r->hello->session_token == c->session_token;
            proto_frame_in_clear(&in);
        }
    }
    if (joined) return sock;
    if (sock >= 0) close(sock);
    free(*buf);
    *buf = NULL;
    return -1;
}

int cli_registered_fd(nnd_client *c, uint64_t token, uint64_t *offset) {
    int fd = -1;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n_registered; i++)
        if (c->registered[i].token == token) {
            fd = c->registered[i].fd;
            *offset = c->registered[i].offset;
        }
    pthread_mutex_unlock(&c->lock);
    return fd;
}

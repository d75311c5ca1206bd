/* SPDX-License-Identifier: Apache-2.0 */
/* burst_channel.c: burst channels on the daemon's side: their threads, the hand-over to the
 * loop, requests run through the scheduler, results written back. See burst_channel.h. */
#include "daemon/calls/burst_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "daemon/base/wakeup.h"
#include "daemon/binding/burst.h"
#include "proto/burst_chan.h"
#include "daemon/binding/burst_take.h"
#include "daemon/calls/model_obj.h"
#include "daemon/calls/execution.h"
#include "daemon/base/log.h"
#include "daemon/clients/pool.h"
#include "daemon/clients/quota.h"
#include "daemon/wire/reply.h"

struct srv_burst_channel {
    srv_daemon *d;
    srv_session *s;   /* NULL once closed */
    srv_burst_obj *b; /* NULL once closed */
    uint64_t handle;
    srv_pool pool; /* the mapping, the app's */
    proto_chan_hdr *h;
    uint8_t *req_area, *res_area;
    int bell_fd;    /* the doorbell eventfd, watched by bell */
    uv_poll_t bell; /* closed (asynchronously) with the channel */
    pthread_t thread;
    int stop;           /* atomic: closed, the thread ends */
    uint32_t arm_gen;   /* atomic, a private futex: moved on to have the thread poll */
    uint32_t polled;    /* the seq the armed thread polls away from (set before arm_gen) */
    uint32_t window_us; /* and for how long */
    /* Loop only. */
    proto_chan_poll poll;    /* the window the thread polls for, adapted here */
    uint64_t answered_ns;    /* when the last answer went out */
    srv_burst_take_state rd; /* taking requests out of the shared memory */
    bool inflight, exited, bell_closed;
    bool posted_req, posted_exit, queued; /* under the hub's lock */
    srv_burst_channel *next_ready;        /* under the hub's lock */
    srv_burst_channel *prev, *next;       /* every channel, loop only */
};

static struct {
    bool started;
    srv_wakeup wake; /* channel threads -> loop (wakeup.h) */
    pthread_mutex_t lock;
    srv_burst_channel *ready; /* channels with something for the loop; under lock */
    srv_burst_channel *all;
    srv_burst_channel_stats stats;
} hub = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- the thread ------------------------------------------------------------------------ */

/* Ends a channel (below: its thread, its memory, its descriptor count). */
static void srv_burst_channel_close(srv_burst_channel *ch);

static void post(srv_burst_channel *ch, bool exit) {
    pthread_mutex_lock(&hub.lock);
    if (exit)
        ch->posted_exit = true;
    else
        ch->posted_req = true;
    if (!ch->queued) {
        ch->queued = true;
        ch->next_ready = hub.ready;
        hub.ready = ch;
    }
    pthread_mutex_unlock(&hub.lock);
    srv_wakeup_signal(&hub.wake);
}

static bool stopping(srv_burst_channel *ch) {
    return __atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Armed by the loop after an answer (arm_gen moves on), the thread polls req_seq for the
 * window; it tells the loop when a request came, or sets daemon_sleeping (the client rings
 * from then on). A generation, not a flag: an arming made while the thread still polls
 * for an older one is never lost. */
static void *channel_thread(void *arg) {
    srv_burst_channel *ch = arg;
    proto_chan_hdr *h = ch->h;
    uint32_t done = 0; /* the last generation polled for */
    while (!stopping(ch)) {
        uint32_t gen = __atomic_load_n(&ch->arm_gen, __ATOMIC_ACQUIRE);
        if (gen == done) {
            struct timespec ts = {0, 100000000};
            syscall(SYS_futex, &ch->arm_gen, FUTEX_WAIT_PRIVATE, done, &ts, NULL, 0);
            continue;
        }
        done = gen;
        proto_chan_poll p = {.window_us = __atomic_load_n(&ch->window_us, __ATOMIC_RELAXED)};
        p.max_us = p.window_us;
        uint32_t old = __atomic_load_n(&ch->polled, __ATOMIC_RELAXED);
        bool came = proto_chan_spin(&p, &h->req_seq, old, &ch->stop);
        if (!came) {
            came = proto_chan_sleeping(&h->daemon_sleeping, &h->req_seq) != old;
        }
        if (came) post(ch, false);
    }
    post(ch, true);
    return NULL;
}

/* ---- results --------------------------------------------------------------------------- */

static void write_result(void *ctx, const Nnd__Reply *r) {
    srv_burst_channel *ch = ctx;
    size_t n = protobuf_c_message_get_packed_size(&r->base);
    if (n > PROTO_CHAN_AREA) {
        Nnd__Reply e = NND__REPLY__INIT;
        char msg[96];
        snprintf(msg, sizeof msg, "the result (%zu bytes) does not fit the burst channel (%u)", n,
                 PROTO_CHAN_AREA);
        e.id = r->id;
        e.status = NND__ERROR_STATUS__GENERAL_FAILURE;
        e.message = msg;
        write_result(ch, &e);
        return;
    }
    protobuf_c_message_pack(&r->base, ch->res_area);
    __atomic_store_n(&ch->h->res_len, (uint32_t)n, __ATOMIC_RELAXED);
    if (proto_chan_publish(&ch->h->res_seq, ch->rd.taken, &ch->h->client_sleeping))
        proto_chan_wake(&ch->h->res_seq);
}

/* After an answer: the thread polls for the next request when the client runs on another
 * CPU, else the client is to ring. A request already there is served from the next turn. */
static void await_next(srv_burst_channel *ch) {
    proto_chan_hdr *h = ch->h;
    int32_t me = sched_getcpu();
    __atomic_store_n(&h->daemon_cpu, me, __ATOMIC_RELAXED);
    ch->answered_ns = now_ns();
    if (proto_chan_should_poll(&ch->poll, __atomic_load_n(&h->client_cpu, __ATOMIC_RELAXED), me)) {
        __atomic_store_n(&h->daemon_sleeping, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&ch->polled, ch->rd.taken, __ATOMIC_RELAXED);
        __atomic_store_n(&ch->window_us, ch->poll.window_us, __ATOMIC_RELAXED);
        __atomic_add_fetch(&ch->arm_gen, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &ch->arm_gen, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        return;
    }
    if (proto_chan_sleeping(&h->daemon_sleeping, &h->req_seq) != ch->rd.taken) post(ch, false);
}

static void answer_status(srv_burst_channel *ch, uint64_t id, schema_status st, const char *msg) {
    srv_execution_reply(id, st, msg, NULL, 0, NULL, write_result, ch);
}

/* ---- freeing --------------------------------------------------------------------------- */

static void channel_free(srv_burst_channel *ch) {
    if (ch->prev)
        ch->prev->next = ch->next;
    else
        hub.all = ch->next;
    if (ch->next) ch->next->prev = ch->prev;
    srv_pool_release(&ch->pool);
    free(ch->rd.copy);
    free(ch);
    hub.stats.channels--;
}

static void maybe_free(srv_burst_channel *ch) {
    if (!ch->s && ch->exited && !ch->inflight && ch->bell_closed) channel_free(ch);
}

static void on_bell_closed(uv_handle_t *hd) {
    srv_burst_channel *ch = hd->data;
    close(ch->bell_fd);
    ch->bell_closed = true;
    maybe_free(ch);
}

/* ---- running requests (loop) ------------------------------------------------------------ */

static void execution_ended(void *ctx, const srv_execution_end *e) {
    srv_burst_channel *ch = ctx;
    ch->inflight = false;
    if (ch->s && e->s) {
        srv_execution_reply(e->request_id, e->status, e->msg, e->shapes, e->n_out, &e->timing,
                            write_result, ch);
        await_next(ch);
    }
    maybe_free(ch);
}

/* req has passed srv_burst_take()'s checks: a BurstExecute of this burst. */
static schema_status run(srv_burst_channel *ch, const Nnd__Request *req, char *err, size_t errlen) {
    const Nnd__BurstExecute *x = req->burst_execute;
    qos_sched_model *m;
    schema_status st =
        srv_model_obj_sched(ch->d, ch->s, srv_burst_model(ch->b), ch->handle, &m, err, errlen);
    if (st != SCHEMA_OK) return st;
    proto_frame_in in;
    memset(&in, 0, sizeof in); /* no fds: a pool that names one is refused by the binding */
    srv_execution *job;
    st = srv_execution_make(ch->d, ch->s, &in, req->id, srv_burst_model(ch->b), m, ch->b,
                            x->request, &job, err, errlen);
    if (st != SCHEMA_OK) return st;
    ch->inflight = true;
    hub.stats.executions++;
    /* A burst runs at its compilation's priority, as over the socket. */
    srv_execution_hold_burst(job, x->measure_timing, m->priority, execution_ended, ch);
    srv_execution_loop_timeout(job, x->loop_timeout_ns);
    srv_execution_submit(job, x->deadline_ns); /* a refusal ends it at once */
    return SCHEMA_OK;
}

/* Takes the request in the channel, if a new one is there and none is in flight. */
static void serve(srv_burst_channel *ch) {
    if (!ch->s || ch->inflight) return; /* in flight: looked at again once answered */
    char err[SCHEMA_ERR_LEN];
    Nnd__Request *req;
    schema_status st;
    if (!srv_burst_take(&ch->rd, &req, &st, err, sizeof err)) return; /* a spurious ring */
    uint32_t seq = ch->rd.taken;
    if (ch->answered_ns) proto_chan_adapt(&ch->poll, (now_ns() - ch->answered_ns) / 1000u);
    if (st == SCHEMA_OK) {
        srv_pool_set_account(ch->s->quota.app ? ch->s->quota.app->maps : NULL);
        st = run(ch, req, err, sizeof err);
        srv_pool_set_account(NULL);
    }
    if (st != SCHEMA_OK) {
        hub.stats.refused++;
        srv_log_debug("client %llu: burst channel request %u: %s: %s",
                      (unsigned long long)ch->s->serial, seq, srv_status_wire_name(st), err);
        answer_status(ch, req ? req->id : 0, st, err);
        await_next(ch);
    }
    if (req) protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* The burst's close hook (burst.h): the channel goes with its burst. */
static void close_attached(void *ch) {
    srv_burst_channel_close(ch);
}

static void on_bell(uv_poll_t *p, int status, int events) {
    (void)events;
    srv_burst_channel *ch = p->data;
    uint64_t rings;
    while (read(ch->bell_fd, &rings, sizeof rings) > 0) {
    }
    if (status == 0) serve(ch);
}

static void on_ready(srv_wakeup *w) {
    (void)w;
    pthread_mutex_lock(&hub.lock);
    srv_burst_channel *list = hub.ready;
    hub.ready = NULL;
    pthread_mutex_unlock(&hub.lock);
    while (list) {
        srv_burst_channel *ch = list;
        pthread_mutex_lock(&hub.lock);
        list = ch->next_ready;
        bool req = ch->posted_req, exit = ch->posted_exit;
        ch->posted_req = ch->posted_exit = ch->queued = false;
        pthread_mutex_unlock(&hub.lock);
        if (req && ch->s) serve(ch);
        if (exit) {
            pthread_join(ch->thread, NULL);
            ch->exited = true;
            maybe_free(ch);
        }
    }
}

/* ---- opening and closing ---------------------------------------------------------------- */

static void link_channel(srv_burst_channel *ch) {
    ch->next = hub.all;
    if (hub.all) hub.all->prev = ch;
    hub.all = ch;
}

static int count_open(const srv_session *s) {
    int n = 0;
    for (srv_burst_channel *ch = hub.all; ch; ch = ch->next)
        n += ch->s == s;
    return n;
}

/* The sealed memfd with its header; -1 when it cannot be made. */
static int make_memfd(void) {
    int fd = memfd_create("nnd-burst-channel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (ftruncate(fd, PROTO_CHAN_SIZE) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        close(fd);
        return -1;
    }
    proto_chan_hdr h;
    proto_chan_init(&h);
    if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Maps fd as the app's client memory (pool.h). */
static schema_status map_channel(srv_burst_channel *ch, int fd, char *err, size_t errlen) {
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "%s", strerror(errno));
    proto_frame_in in;
    memset(&in, 0, sizeof in);
    in.fds[0] = dup;
    in.nfds = 1;
    Nnd__MemoryPool mp = NND__MEMORY_POOL__INIT;
    mp.kind = NND__POOL_KIND__POOL_MEMFD;
    mp.size = PROTO_CHAN_SIZE;
    schema_status st = srv_pool_map(&mp, 0, &in, false, NULL, &ch->pool, err, errlen);
    proto_frame_in_clear(&in);
    return st;
}

static int start_thread(srv_burst_channel *ch) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay the loop's */
    int rc = pthread_create(&ch->thread, &attr, channel_thread, ch);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return rc;
}

/* Undoes what open made of ch before its thread started. */
static void undo(srv_burst_channel *ch, int memfd) {
    if (ch->pool.view.base) srv_pool_release(&ch->pool);
    if (ch->bell_fd >= 0) close(ch->bell_fd);
    if (memfd >= 0) close(memfd);
    free(ch->rd.copy);
    free(ch);
}

int srv_burst_channel_open(srv_daemon *d, srv_session *s, srv_burst_obj *b, uint64_t handle,
                           int fds[2]) {
    char err[SCHEMA_ERR_LEN] = "";
    srv_burst_channel *ch = NULL;
    int memfd = -1;
    if (!hub.started) {
        if (srv_wakeup_init(&hub.wake, d->loop, on_ready, NULL) < 0) goto refuse;
        hub.started = true;
    }
    if (hub.stats.channels >= SRV_MAX_BURST_CHANNELS) {
        snprintf(err, sizeof err, "the daemon has %d burst channels, the most it runs",
                 SRV_MAX_BURST_CHANNELS);
        goto refuse;
    }
    if (count_open(s) >= SRV_SESSION_MAX_BURST_CHANNELS) {
        snprintf(err, sizeof err, "this connection has %d burst channels, the most it may",
                 SRV_SESSION_MAX_BURST_CHANNELS);
        goto refuse;
    }
    /* The doorbell is a descriptor held for the app as long as the channel lives. */
    if (srv_quota_take(&s->quota, SRV_QUOTA_DESCRIPTORS, 1, err, sizeof err) != SCHEMA_OK)
        goto refuse;
    if (!(ch = calloc(1, sizeof *ch))) goto oom;
    ch->bell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!(ch->rd.copy = malloc(PROTO_CHAN_AREA)) || ch->bell_fd < 0 || (memfd = make_memfd()) < 0)
        goto oom;
    if (map_channel(ch, memfd, err, sizeof err) != SCHEMA_OK) goto undo;
    ch->d = d;
    ch->s = s;
    ch->b = b;
    ch->handle = handle;
    ch->rd.expected = 1;
    ch->rd.handle = handle;
    proto_chan_poll_init(&ch->poll);
    ch->h = (proto_chan_hdr *)ch->pool.view.base;
    ch->req_area = (uint8_t *)ch->pool.view.base + PROTO_CHAN_HEADER;
    ch->res_area = ch->req_area + PROTO_CHAN_AREA;
    ch->rd.h = ch->h;
    ch->rd.req_area = ch->req_area;
    if (uv_poll_init(d->loop, &ch->bell, ch->bell_fd) < 0) {
        snprintf(err, sizeof err, "cannot watch its doorbell");
        goto undo;
    }
    ch->bell.data = ch;
    if (start_thread(ch) != 0) {
        /* The handle must close before ch goes: it goes as a closed channel does. */
        snprintf(err, sizeof err, "cannot start its thread");
        srv_log_debug("client %llu: burst 0x%016llx without a channel: %s",
                      (unsigned long long)s->serial, (unsigned long long)handle, err);
        hub.stats.not_set_up++;
        hub.stats.channels++;
        link_channel(ch);
        ch->exited = true;
        srv_burst_channel_close(ch); /* gives the doorbell's descriptor back */
        close(memfd);
        return -1;
    }
    uv_poll_start(&ch->bell, UV_READABLE, on_bell);
    link_channel(ch);
    hub.stats.channels++;
    srv_burst_attach(b, ch, close_attached);
    fds[0] = memfd;
    fds[1] = ch->bell_fd;
    return 0;
oom:
    snprintf(err, sizeof err, "out of memory or descriptors");
undo:
    srv_quota_add(&s->quota, SRV_QUOTA_DESCRIPTORS, -1);
    if (ch) undo(ch, memfd);
refuse:
    hub.stats.not_set_up++;
    srv_log_debug("client %llu: burst 0x%016llx without a channel: %s",
                  (unsigned long long)s->serial, (unsigned long long)handle, err);
    return -1;
}

static void srv_burst_channel_close(srv_burst_channel *ch) {
    if (!ch || !ch->s) return;
    srv_quota_add(&ch->s->quota, SRV_QUOTA_DESCRIPTORS, -1);
    ch->s = NULL;
    ch->b = NULL;
    __atomic_store_n(&ch->stop, 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&ch->arm_gen, 1, __ATOMIC_RELEASE); /* a sleeping thread wakes at once */
    syscall(SYS_futex, &ch->arm_gen, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    uv_close((uv_handle_t *)&ch->bell, on_bell_closed);
}

void srv_burst_channels_stop(srv_daemon *d) {
    (void)d;
    if (!hub.started) return;
    on_ready(&hub.wake); /* exits already posted */
    for (srv_burst_channel *ch = hub.all, *next; ch; ch = next) {
        next = ch->next;
        srv_burst_channel_close(ch);
        if (!ch->exited) {
            pthread_join(ch->thread, NULL);
            ch->exited = true;
        }
        ch->inflight = false; /* the executions have all ended by now */
        maybe_free(ch);       /* or when its doorbell's handle has closed */
    }
    pthread_mutex_lock(&hub.lock);
    hub.ready = NULL;
    pthread_mutex_unlock(&hub.lock);
    srv_wakeup_close(&hub.wake, NULL);
    hub.started = false;
}

void srv_burst_channel_stats_get(srv_burst_channel_stats *out) {
    *out = hub.stats;
}

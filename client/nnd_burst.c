/* SPDX-License-Identifier: Apache-2.0 */
/* nnd_burst.c: libnnd's bursts, which send each memory's fd once and its slot number after
 * that, and executions that carry no fd through the burst's shared-memory channel when the
 * daemon gave one (cli_burst_chan.c). See include/nnd/nnd_wire.h, "bursts". */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client_internal.h"
#include "client/record.h"

/* A memory the daemon caches (or was asked to cache) as slot `slot`: a file range, the
 * file named by (dev, ino) or by the caller's key (by_key, ino = the key). */
typedef struct key {
    bool by_key;
    uint64_t dev, ino, offset, size;
    int kind;
    uint64_t slot;
    bool confirmed; /* the daemon ran an execution with it: send the slot alone */
} key;

struct nnd_burst {
    nnd_client *c;
    uint64_t handle;
    uint64_t prepared;    /* the prepared model it runs */
    pthread_mutex_t lock; /* guards the keys; never held across a call */
    key keys[NND_BURST_CLIENT_SLOTS];
    size_t n_keys;
    uint64_t next_slot;
    cli_burst_chan *chan; /* NULL: every execution over the socket */
};

/* Whether to ask for a channel: unless $NND_BURST_CHANNEL is "0". */
static bool want_channel(void) {
    const char *v = getenv("NND_BURST_CHANNEL");
    return !v || strcmp(v, "0") != 0;
}

/* Only this file's own failures; the daemon's come through nnd_client_*_call. */
static int fail(char *err, size_t errlen, int rc, const char *what) {
    if (err && errlen) snprintf(err, errlen, "%s: %s", what, strerror(-rc));
    return rc;
}

int nnd_client_burst_configure(nnd_client *c, uint64_t prepared_model, nnd_burst **burst, char *err,
                               size_t errlen) {
    *burst = NULL;
    nnd_burst *b = calloc(1, sizeof *b);
    if (!b) return fail(err, errlen, -ENOMEM, "burst");
    Nnd__ConfigureBurst call = NND__CONFIGURE_BURST__INIT;
    call.prepared_model = prepared_model;
    call.channel = want_channel();
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_CONFIGURE_BURST;
    req.configure_burst = &call;
    Nnd__Reply *r;
    int chan_fds[2];
    size_t n_fds = 2;
    int st = cli_simple_call_fds(c, &req, NULL, 0, NND__REPLY__RESULT_BURST, &r, chan_fds, &n_fds,
                                 err, errlen);
    /* No channel (an older daemon, or none to be had): the socket carries everything. */
    if (st == 0 && n_fds == 2 && r->burst->channel) {
        b->chan = cli_burst_chan_attach(chan_fds[0], chan_fds[1]);
        n_fds = 0;
    }
    while (n_fds)
        close(chan_fds[--n_fds]);
    if (st != 0) {
        free(b);
        return st;
    }
    b->c = c;
    b->handle = r->burst->burst;
    b->prepared = prepared_model;
    b->next_slot = 1;
    pthread_mutex_init(&b->lock, NULL);
    nnd__reply__free_unpacked(r, NULL);
    *burst = b;
    return 0;
}

uint64_t nnd_client_burst_handle(const nnd_burst *b) {
    return b->handle;
}

/* The key of a pool's memory, or NULL when the pool cannot be a slot, the caller gave it
 * no key, or the table is full. keys: the caller's, by fd index; NULL: fstat's identity. */
static key *key_of(nnd_burst *b, const Nnd__MemoryPool *p, const int *fds, size_t nfds,
                   const uint64_t *keys) {
    if (p->kind != NND__POOL_KIND__POOL_MEMFD && p->kind != NND__POOL_KIND__POOL_MMAP_FD)
        return NULL;
    if (p->fd_index >= nfds) return NULL;
    key want = {.by_key = keys != NULL, .offset = p->offset, .size = p->size, .kind = p->kind};
    if (keys) {
        if (!(want.ino = keys[p->fd_index])) return NULL;
    } else {
        struct stat sb;
        if (fstat(fds[p->fd_index], &sb) < 0) return NULL;
        want.dev = (uint64_t)sb.st_dev;
        want.ino = (uint64_t)sb.st_ino;
    }
    for (size_t i = 0; i < b->n_keys; i++) {
        key *k = &b->keys[i];
        if (k->by_key == want.by_key && k->dev == want.dev && k->ino == want.ino &&
            k->offset == want.offset && k->size == want.size && k->kind == want.kind)
            return k;
    }
    if (b->n_keys == NND_BURST_CLIENT_SLOTS) return NULL;
    want.slot = b->next_slot++;
    b->keys[b->n_keys] = want;
    return &b->keys[b->n_keys++];
}

static int burst_execute(nnd_burst *b, const Nnd__ExecutionRequest *req, const int *pool_fds,
                         size_t n_pool_fds, const uint64_t *keys, const nnd_exec_opts *opts,
                         Nnd__Reply **reply, char *err, size_t errlen) {
    if (reply) *reply = NULL;
    size_t n = req->n_pools;
    /* The request as sent: the same arguments over pools rewritten to slots, and only the
     * fds that still have to travel. */
    Nnd__MemoryPool *pools = calloc(n + 1, sizeof *pools);
    Nnd__MemoryPool **pool_p = calloc(n + 1, sizeof *pool_p);
    int *fds = calloc(n + 1, sizeof *fds);
    uint64_t *used = calloc(n + 1, sizeof *used); /* the slots this execution names */
    if (!pools || !pool_p || !fds || !used) {
        free(pools), free(pool_p), free(fds), free(used);
        return fail(err, errlen, -ENOMEM, "burst");
    }
    for (size_t i = 0; i < n; i++)
        if (!req->pools[i]) {
            free(pools), free(pool_p), free(fds), free(used);
            return fail(err, errlen, -EINVAL, "a request pool is NULL");
        }
    /* The lock covers the keys, not the call: executions of one burst may be in flight at
     * once. A key first sent by two of them goes with its fd twice, which the daemon takes
     * as the same memory. */
    pthread_mutex_lock(&b->lock);
    size_t nfds = 0, n_used = 0;
    for (size_t i = 0; i < n; i++) {
        pools[i] = *req->pools[i];
        pool_p[i] = &pools[i];
        key *k = key_of(b, &pools[i], pool_fds, n_pool_fds, keys);
        if (k) {
            used[n_used++] = k->slot;
            pools[i].slot = k->slot;
        }
        if (k && k->confirmed) {
            pools[i].kind = NND__POOL_KIND__POOL_BURST_SLOT;
            pools[i].fd_index = 0;
        } else if (pools[i].kind != NND__POOL_KIND__POOL_DRIVER_BUFFER &&
                   pools[i].kind != NND__POOL_KIND__POOL_BURST_SLOT &&
                   pools[i].kind != NND__POOL_KIND__POOL_REGISTERED &&
                   pools[i].fd_index < n_pool_fds) {
            fds[nfds] = pool_fds[pools[i].fd_index];
            pools[i].fd_index = (uint32_t)nfds++;
        }
    }
    Nnd__ExecutionRequest sent = *req;
    sent.pools = pool_p;
    Nnd__BurstExecute call = NND__BURST_EXECUTE__INIT;
    call.burst = b->handle;
    call.request = &sent;
    if (opts) {
        call.measure_timing = opts->measure_timing;
        call.deadline_ns = opts->deadline_ns;
        call.loop_timeout_ns = opts->loop_timeout_ns;
    }
    Nnd__Request r = NND__REQUEST__INIT;
    r.call_case = NND__REQUEST__CALL_BURST_EXECUTE;
    r.burst_execute = &call;
    pthread_mutex_unlock(&b->lock);
    int st = -EBUSY;
    if (!nfds && cli_burst_chan_usable(b->chan)) {
        Nnd__Reply *got = NULL;
        uint64_t bound = cli_conn_bound(b->c, opts ? opts->deadline_ns : 0);
        st = cli_burst_chan_call(b->chan, b->c, &r, bound, &got, err, errlen);
        if (st == 0) st = cli_take_reply(got, true, reply, err, errlen);
    }
    if (st == -EBUSY) st = cli_reply_call(b->c, &r, fds, nfds, reply, err, errlen);
    /* Ran: the daemon holds what was sent. Anything else: send the fds again next time.
     * A key forgotten meanwhile is gone, and slot numbers are never reused. */
    bool ran = st == NND__ERROR_STATUS__NONE || st == NND__ERROR_STATUS__OUTPUT_INSUFFICIENT_SIZE;
    pthread_mutex_lock(&b->lock);
    for (size_t u = 0; u < n_used; u++)
        for (size_t i = 0; i < b->n_keys; i++)
            if (b->keys[i].slot == used[u]) b->keys[i].confirmed = ran;
    pthread_mutex_unlock(&b->lock);
    free(pools), free(pool_p), free(fds), free(used);
    return st;
}

/* A burst execution, recorded (record.h) when recording is on. */
static int burst_recorded(nnd_burst *b, const Nnd__ExecutionRequest *req, const int *pool_fds,
                          size_t n_pool_fds, const uint64_t *keys, const nnd_exec_opts *opts,
                          Nnd__Reply **reply, char *err, size_t errlen) {
    if (!cli_record_live())
        return burst_execute(b, req, pool_fds, n_pool_fds, keys, opts, reply, err, errlen);
    Nnd__Reply *got = NULL;
    int st = burst_execute(b, req, pool_fds, n_pool_fds, keys, opts, &got, err, errlen);
    cli_record_executed(b->c, b->prepared, req, pool_fds, n_pool_fds, st, got);
    if (reply)
        *reply = got;
    else if (got)
        nnd__reply__free_unpacked(got, NULL);
    return st;
}

int nnd_client_burst_execute(nnd_burst *b, const Nnd__ExecutionRequest *req, const int *pool_fds,
                             size_t n_pool_fds, const nnd_exec_opts *opts, Nnd__Reply **reply,
                             char *err, size_t errlen) {
    return burst_recorded(b, req, pool_fds, n_pool_fds, NULL, opts, reply, err, errlen);
}

int nnd_client_burst_execute_keyed(nnd_burst *b, const Nnd__ExecutionRequest *req,
                                   const int *pool_fds, const uint64_t *keys, size_t n_pool_fds,
                                   const nnd_exec_opts *opts, Nnd__Reply **reply, char *err,
                                   size_t errlen) {
    return burst_recorded(b, req, pool_fds, n_pool_fds, keys, opts, reply, err, errlen);
}

/* Drops the keys that match (by_key, dev, ino), here and in the daemon. */
static int forget(nnd_burst *b, bool by_key, uint64_t dev, uint64_t ino, size_t *forgotten,
                  char *err, size_t errlen) {
    uint64_t slots[NND_BURST_CLIENT_SLOTS];
    size_t n = 0;
    pthread_mutex_lock(&b->lock);
    for (size_t i = b->n_keys; i-- > 0;) {
        key *k = &b->keys[i];
        if (k->by_key != by_key || k->dev != dev || k->ino != ino) continue;
        slots[n++] = k->slot;
        *k = b->keys[--b->n_keys];
    }
    pthread_mutex_unlock(&b->lock); /* the keys are gone here; the daemon is told next */
    int st = 0;
    if (n) {
        Nnd__BurstForget call = NND__BURST_FORGET__INIT;
        call.burst = b->handle;
        call.n_slots = n;
        call.slots = slots;
        Nnd__Request r = NND__REQUEST__INIT;
        r.call_case = NND__REQUEST__CALL_BURST_FORGET;
        r.burst_forget = &call;
        st = cli_simple_call(b->c, &r, NULL, 0, NND__REPLY__RESULT_DONE, NULL, err, errlen);
    }
    if (forgotten) *forgotten = n;
    return st;
}

int nnd_client_burst_forget_fd(nnd_burst *b, int fd, size_t *forgotten, char *err, size_t errlen) {
    if (forgotten) *forgotten = 0;
    struct stat sb;
    if (fstat(fd, &sb) < 0) return fail(err, errlen, -errno, "cannot inspect the fd to forget");
    return forget(b, false, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino, forgotten, err, errlen);
}

int nnd_client_burst_forget_key(nnd_burst *b, uint64_t key, size_t *forgotten, char *err,
                                size_t errlen) {
    return forget(b, true, 0, key, forgotten, err, errlen);
}

int nnd_client_burst_free(nnd_burst *b) {
    if (!b) return 0;
    int st = nnd_client_release(b->c, b->handle);
    cli_burst_chan_detach(b->chan);
    pthread_mutex_destroy(&b->lock);
    free(b);
    return st;
}

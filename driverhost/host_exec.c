/* SPDX-License-Identifier: Apache-2.0 */
/* host_exec: executions and device-memory copies in the driver host (host.h). A tensor is
 * read where the proxy placed it (a shared region or the call's staging memfd): never
 * copied here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driverhost/host.h"

typedef struct exec_ctx {
    nnd_driver_execution x;
    dhh_host *h;
    uint32_t call;
    bool async;
    uint32_t n_args;
    dhh_staging staging;
    uint64_t faults_before; /* all regions' (synchronous calls only) */
    struct exec_ctx *next;
    char err[DH_ERR_MAX];
    nnd_driver_arg *args; /* inputs, then outputs */
    uint32_t *regions;    /* each arg's region */
    uint32_t *arg_faults; /* each arg's region's faults before the call */
} exec_ctx;

/* Started executions, for cancel(): complete() may come from any thread, even inside cancel(). */
static pthread_mutex_t g_lock;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static exec_ctx *g_started;

static void init_lock(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_lock, &a);
}

static const char *arg_name(const exec_ctx *c, uint32_t i, uint32_t *k) {
    *k = i < c->x.n_inputs ? i : i - c->x.n_inputs;
    return i < c->x.n_inputs ? "input" : "output";
}

/* A client that shrank its pool while the driver read it: its error, not the driver's. */
static int shrink_status(exec_ctx *c, int status) {
    for (uint32_t i = 0; i < c->n_args; i++) {
        uint32_t r = c->regions[i], k;
        if (r == DH_REGION_NONE || r == DH_REGION_STAGING) continue;
        if (dhh_region_faults(r) != c->arg_faults[i]) {
            const char *what = arg_name(c, i, &k);
            snprintf(c->err, sizeof c->err,
                     "memory pool shrank while the driver read it (%s %u): the client's error",
                     what, k);
            return NND_DRIVER_INVALID_ARGUMENT;
        }
    }
    if (!c->async && dhh_faults_total() != c->faults_before) {
        snprintf(c->err, sizeof c->err,
                 "memory pool shrank while the driver read it (a constant): the client's error");
        return NND_DRIVER_INVALID_ARGUMENT;
    }
    return status;
}

static void finish(exec_ctx *c, int status) {
    status = shrink_status(c, status);
    dh_wbuf w = {0};
    dh_exec_reply_put(&w, c->x.time_on_device_ns, c->x.time_in_driver_ns, c->x.outputs,
                      c->x.n_outputs);
    dhh_reply(c->h, c->call, status, status == NND_DRIVER_OK ? NULL : c->err, &w);
    dh_wbuf_free(&w);
    dhh_staging_unmap(&c->staging);
    free(c);
}

static void on_complete(nnd_driver_execution *x, int status) {
    exec_ctx *c = (exec_ctx *)x;
    pthread_mutex_lock(&g_lock);
    for (exec_ctx **p = &g_started; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    finish(c, status);
}

/* Places one dh_arg: its address, after checking that its file still covers it. */
static int place_arg(exec_ctx *c, uint32_t i, const dh_arg *a) {
    nnd_driver_arg *d = &c->args[i];
    uint32_t k;
    const char *what = arg_name(c, i, &k);
    d->length = (size_t)a->length, d->memory = a->memory;
    d->rank = a->rank > NND_DRIVER_MAX_RANK ? NND_DRIVER_MAX_RANK : a->rank;
    memcpy(d->dims, a->dims, sizeof d->dims);
    c->regions[i] = a->region;
    if (a->region == DH_REGION_NONE) return 0;
    if (a->length == 0) { /* a zero-sized tensor: no bytes to map, but data must not be NULL */
        static uint8_t no_bytes[1];
        d->data = no_bytes;
        return 0;
    }
    uint64_t size = 0;
    if (a->region != DH_REGION_STAGING &&
        !dhh_region_covers(a->region, a->offset, a->length, &size)) {
        snprintf(c->err, sizeof c->err,
                 "memory pool shrank: %s %u needs %llu bytes at offset %llu of its pool, whose "
                 "file now has %llu",
                 what, k, (unsigned long long)a->length, (unsigned long long)a->offset,
                 (unsigned long long)size);
        return NND_DRIVER_INVALID_ARGUMENT;
    }
    c->arg_faults[i] = dhh_region_faults(a->region);
    d->data = dhh_region_resolve(&c->staging, a->region, a->offset, a->length);
    if (!d->data) {
        snprintf(c->err, sizeof c->err, "%s %u: region %u not mapped in the driver host", what, k,
                 a->region);
        return NND_DRIVER_GENERAL_FAILURE;
    }
    return 0;
}

void dhh_execute(dhh_host *h, dh_msg *m) {
    pthread_once(&g_once, init_lock);
    dh_rbuf r = {m->body, m->body_len, 0, false};
    dh_exec_head head;
    if (dh_exec_req_get(&r, &head) < 0) {
        dhh_reply(h, m->h.call, NND_DRIVER_GENERAL_FAILURE, "malformed execution message", NULL);
        return;
    }
    uint64_t n = (uint64_t)head.n_inputs + head.n_outputs;
    size_t bytes = sizeof(exec_ctx) + n * (sizeof(nnd_driver_arg) + 2 * sizeof(uint32_t));
    exec_ctx *c = calloc(1, bytes);
    if (!c) {
        dhh_reply(h, m->h.call, NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT,
                  "driver host out of memory", NULL);
        return;
    }
    c->h = h, c->call = m->h.call, c->n_args = (uint32_t)n;
    c->args = (nnd_driver_arg *)(c + 1);
    c->regions = (uint32_t *)(c->args + n);
    c->arg_faults = c->regions + n;
    dhh_prepared *p = (dhh_prepared *)(uintptr_t)head.prepared;
    c->x.prepared = p->prepared;
    c->x.n_inputs = head.n_inputs, c->x.n_outputs = head.n_outputs;
    c->x.inputs = c->args, c->x.outputs = c->args + head.n_inputs;
    c->x.priority = head.priority, c->x.deadline_ns = head.deadline_ns;
    c->x.measure = head.measure != 0;
    c->x.time_on_device_ns = c->x.time_in_driver_ns = NND_DRIVER_NO_TIME;
    c->x.err = c->err, c->x.errlen = sizeof c->err;
    c->faults_before = dhh_faults_total();
    int status = 0;
    if (m->staging_fd >= 0 && dhh_staging_map(m->staging_fd, &c->staging) < 0) {
        snprintf(c->err, sizeof c->err, "driver host cannot map the call's staging memory");
        status = NND_DRIVER_GENERAL_FAILURE;
    }
    for (uint32_t i = 0; i < n && !status; i++) {
        dh_arg a;
        dh_get(&r, &a, sizeof a);
        status = place_arg(c, i, &a);
    }
    if (status) {
        finish(c, status);
        return;
    }
    if (h->drv->start) {
        c->async = true;
        c->x.complete = on_complete;
        pthread_mutex_lock(&g_lock);
        c->next = g_started, g_started = c;
        pthread_mutex_unlock(&g_lock);
        status = h->drv->start(&c->x);
        if (status != NND_DRIVER_STARTED) on_complete(&c->x, status);
        return;
    }
    finish(c, h->drv->execute(&c->x));
}

void dhh_cancel(dhh_host *h, uint32_t call) {
    if (!h->drv->cancel) return;
    pthread_once(&g_once, init_lock);
    pthread_mutex_lock(&g_lock);
    for (exec_ctx *c = g_started; c; c = c->next)
        if (c->call == call) {
            h->drv->cancel(&c->x);
            break;
        }
    pthread_mutex_unlock(&g_lock);
}

/* Resolves a copy's buffer, or replies with why not. */
static void *copy_buffer(dhh_host *h, dh_msg *m, const dh_arg *a, dhh_staging *st,
                         uint32_t *faults) {
    uint64_t size = 0;
    if (m->staging_fd >= 0 && dhh_staging_map(m->staging_fd, st) < 0) {
        dhh_reply(h, m->h.call, NND_DRIVER_GENERAL_FAILURE, "cannot map staging memory", NULL);
        return NULL;
    }
    if (a->region != DH_REGION_STAGING &&
        !dhh_region_covers(a->region, a->offset, a->length, &size)) {
        dhh_reply(h, m->h.call, NND_DRIVER_INVALID_ARGUMENT,
                  "memory pool shrank: the copy's buffer is past its file's end", NULL);
        return NULL;
    }
    *faults = dhh_region_faults(a->region);
    void *p = dhh_region_resolve(st, a->region, a->offset, a->length);
    if (!p) dhh_reply(h, m->h.call, NND_DRIVER_GENERAL_FAILURE, "buffer not mapped", NULL);
    return p;
}

void dhh_memory_copy(dhh_host *h, dh_msg *m) {
    dh_rbuf r = {m->body, m->body_len, 0, false};
    uint32_t dev = 0;
    uint64_t handle = 0, offset = 0;
    dh_arg a;
    if (dh_copy_req_get(&r, &dev, &handle, &offset, &a) < 0 || dev >= h->n_devices ||
        !h->drv->memory_read) {
        dhh_reply(h, m->h.call, NND_DRIVER_GENERAL_FAILURE, "malformed memory copy", NULL);
        return;
    }
    dhh_staging st = {0};
    uint32_t faults = 0;
    void *buf = copy_buffer(h, m, &a, &st, &faults);
    if (buf && a.length) {
        void *d = h->devices[dev].device;
        int status = m->h.type == DH_MSG_MEM_READ
                         ? h->drv->memory_read(d, handle, offset, buf, (size_t)a.length)
                         : h->drv->memory_write(d, handle, offset, buf, (size_t)a.length);
        if (a.region != DH_REGION_STAGING && dhh_region_faults(a.region) != faults)
            dhh_reply(h, m->h.call, NND_DRIVER_INVALID_ARGUMENT,
                      "memory pool shrank while the driver copied it: the client's error", NULL);
        else
            dhh_reply(h, m->h.call, status, status ? "device memory copy failed" : NULL, NULL);
    }
    dhh_staging_unmap(&st);
}

void dhh_cache_save(dhh_host *h, dh_msg *m) {
    dh_rbuf r = {m->body, m->body_len, 0, false};
    uint64_t remote = 0, cap = 0;
    uint32_t blob = 0;
    dh_arg a;
    int rc = dh_save_req_get(&r, &remote, &blob, &cap, &a);
    dhh_prepared *p = (dhh_prepared *)(uintptr_t)remote;
    if (rc < 0 || !p || !h->drv->cache_save) {
        dhh_reply(h, m->h.call, NND_DRIVER_GENERAL_FAILURE, "malformed cache_save", NULL);
        return;
    }
    dhh_staging st = {0};
    uint32_t faults = 0;
    void *buf = NULL;
    if (cap && !(buf = copy_buffer(h, m, &a, &st, &faults))) {
        dhh_staging_unmap(&st);
        return;
    }
    size_t size = h->drv->cache_save(p->prepared, blob, buf, buf ? (size_t)cap : 0);
    dh_wbuf w = {0};
    dh_saved_put(&w, size);
    dhh_reply(h, m->h.call, NND_DRIVER_OK, NULL, &w);
    dh_wbuf_free(&w);
    dhh_staging_unmap(&st);
}

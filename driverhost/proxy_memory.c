/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_memory: device memory through a driver host (proxy_internal.h): proxy handles name
 * (host generation, the host's handle), so a handle of an earlier host fails cleanly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driverhost/proxy_internal.h"

static dhp_device *device(void *d) {
    return d;
}

static int copy_err(const dhp_call *c, int status, char *err, size_t errlen) {
    if (status != NND_DRIVER_OK && err && errlen) snprintf(err, errlen, "%s", c->err);
    return status;
}

/* ---- device memory: proxy handles name (host generation, the host's handle) ---- */

typedef struct mem_entry {
    drvhost *h;
    uint32_t gen;
    uint64_t remote;
} mem_entry;
static pthread_mutex_t g_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_entry *g_mem;
static size_t g_mem_n;

int dhp_memory_remote(drvhost *h, uint64_t handle, uint32_t gen, uint64_t *remote) {
    pthread_mutex_lock(&g_mem_lock);
    bool ok = handle >= 1 && handle <= g_mem_n && g_mem[handle - 1].h == h &&
              g_mem[handle - 1].gen == gen;
    if (ok) *remote = g_mem[handle - 1].remote;
    pthread_mutex_unlock(&g_mem_lock);
    return ok ? NND_DRIVER_OK : NND_DRIVER_DEVICE_UNAVAILABLE;
}

static uint64_t mem_add(drvhost *h, uint32_t gen, uint64_t remote) {
    uint64_t handle = 0;
    pthread_mutex_lock(&g_mem_lock);
    for (size_t i = 0; i < g_mem_n && !handle; i++)
        if (!g_mem[i].h) g_mem[i] = (mem_entry){h, gen, remote}, handle = i + 1;
    if (!handle) {
        mem_entry *n = realloc(g_mem, (g_mem_n + 1) * sizeof *n);
        if (n) g_mem = n, g_mem[g_mem_n++] = (mem_entry){h, gen, remote}, handle = g_mem_n;
    }
    pthread_mutex_unlock(&g_mem_lock);
    return handle;
}

int dhp_allocate(void *dev, const nnd_driver_buffer_desc *desc, uint64_t *handle, char *err,
                 size_t errlen) {
    dhp_device *d = device(dev);
    dh_wbuf w = {0};
    dhp_call c = {0};
    int status = NND_DRIVER_OK;
    uint64_t *remotes = calloc(desc->n_roles + 1u, sizeof *remotes);
    if (!remotes) {
        snprintf(err, errlen, "out of memory allocating for %s", d->h->plugin);
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    for (uint32_t i = 0; i < desc->n_roles && !status; i++) {
        uint32_t gen = 0;
        status =
            dhp_prepared_remote(desc->roles[i].prepared, &remotes[i], &gen, c.err, sizeof c.err);
        if (c.gen && gen != c.gen) {
            status = NND_DRIVER_DEVICE_UNAVAILABLE;
            snprintf(c.err, sizeof c.err, "driver %s: its host restarted", d->h->plugin);
        }
        c.gen = gen;
    }
    dh_allocate_req_put(&w, d->index, desc, remotes);
    free(remotes);
    dhp_bound_for(d->h, &c, NND_DRIVER_NO_DEADLINE, d->h->lim.call_timeout_ms);
    if (!status) status = dhp_call_run(d->h, DH_MSG_ALLOCATE, &w, NULL, -1, &c);
    dh_wbuf_free(&w);
    if (status == NND_DRIVER_OK) {
        uint64_t remote = 0;
        *handle = dh_allocated_get(&c.rest, &remote) == 0 ? mem_add(d->h, c.gen, remote) : 0;
        if (!*handle) {
            status = NND_DRIVER_GENERAL_FAILURE;
            snprintf(c.err, sizeof c.err, "no handle for the allocated buffer");
        }
    }
    dhp_call_free(&c);
    return copy_err(&c, status, err, errlen);
}

void dhp_memory_free(void *dev, uint64_t handle) {
    dhp_device *d = device(dev);
    mem_entry e = {0};
    pthread_mutex_lock(&g_mem_lock);
    if (handle >= 1 && handle <= g_mem_n && g_mem[handle - 1].h == d->h) {
        e = g_mem[handle - 1];
        g_mem[handle - 1].h = NULL;
    }
    pthread_mutex_unlock(&g_mem_lock);
    if (!e.h) return;
    dh_wbuf w = {0};
    dh_put_u32(&w, d->index);
    dh_put_u64(&w, e.remote);
    dhp_send_oneway(d->h, DH_MSG_MEM_FREE, &w, e.gen);
    dh_wbuf_free(&w);
}

/* A copy between host memory at buf and the host: buf placed or staged. */
static int copy(void *dev, uint32_t type, uint64_t handle, uint64_t offset, void *buf,
                size_t bytes) {
    dhp_device *d = device(dev);
    dhp_call c = {0};
    c.gen = dhp_gen(d->h);
    uint64_t remote = 0;
    if (dhp_memory_remote(d->h, handle, c.gen, &remote)) return NND_DRIVER_DEVICE_UNAVAILABLE;
    dh_arg a = {.length = bytes};
    dhp_regions regs = {0};
    uint64_t staging_len = 0;
    dhp_place(buf, bytes, &a, &regs, &staging_len);
    dhp_staging st = {.fd = -1};
    if (staging_len && dhp_staging_make(&st, staging_len) < 0)
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    if (st.base && type == DH_MSG_MEM_WRITE) memcpy(st.base + a.offset, buf, bytes);
    if (staging_len) dhp_count_staged(d->h, staging_len);
    dh_wbuf w = {0};
    dh_copy_req_put(&w, d->index, remote, offset, &a);
    dhp_bound_for(d->h, &c, NND_DRIVER_NO_DEADLINE, d->h->lim.call_timeout_ms);
    int status = dhp_call_run(d->h, type, &w, &regs, st.fd, &c);
    if (status == NND_DRIVER_OK && st.base && type == DH_MSG_MEM_READ)
        memcpy(buf, st.base + a.offset, bytes);
    dh_wbuf_free(&w);
    dhp_staging_drop(&st);
    dhp_call_free(&c);
    return status;
}

int dhp_memory_read(void *dev, uint64_t handle, uint64_t offset, void *dst, size_t bytes) {
    return copy(dev, DH_MSG_MEM_READ, handle, offset, dst, bytes);
}

int dhp_memory_write(void *dev, uint64_t handle, uint64_t offset, const void *src, size_t bytes) {
    return copy(dev, DH_MSG_MEM_WRITE, handle, offset, (void *)src, bytes);
}

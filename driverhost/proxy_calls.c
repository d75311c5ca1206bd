/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_calls: the nnd_driver table of a driver host (drvhost.h): each call becomes a
 * message to the host; prepared partitions keep what preparing them again needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driverhost/proxy_internal.h"

typedef struct dhp_prepared {
    drvhost *h;
    uint32_t dev;
    pthread_mutex_t mu;
    uint32_t gen; /* the host generation remote belongs to */
    uint64_t remote;
    uint32_t type; /* DH_MSG_PREPARE or DH_MSG_CACHE_LOAD: how to make it again */
    dh_wbuf body;
    dhp_regions regions;
    uint64_t deadline_ns;
} dhp_prepared;

drvhost *dhp_prepared_host(void *prepared) {
    return ((dhp_prepared *)prepared)->h;
}

static dhp_device *device(void *d) {
    return d;
}

static bool place_constant(void *ctx, const void *data, size_t length, uint32_t *region,
                           uint64_t *offset) {
    if (!dhp_region_find(data, length, region, offset)) return false;
    dhp_regions_note(ctx, *region);
    return true;
}

static void bound_for(drvhost *h, dhp_call *c, uint64_t deadline_ns, uint32_t ms) {
    if (deadline_ns != NND_DRIVER_NO_DEADLINE) {
        uint64_t now = dh_now_ns();
        c->bound_ns = deadline_ns + (uint64_t)h->lim.deadline_grace_ms * 1000000ull;
        c->bound_ms = c->bound_ns > now ? (uint32_t)((c->bound_ns - now) / 1000000u) : 0;
        c->timeout_status = NND_DRIVER_MISSED_DEADLINE_TRANSIENT;
    } else {
        c->bound_ns = dhp_bound(ms), c->bound_ms = ms;
        c->timeout_status = NND_DRIVER_GENERAL_FAILURE;
    }
}

static int copy_err(const dhp_call *c, int status, char *err, size_t errlen) {
    if (status != NND_DRIVER_OK && err && errlen) snprintf(err, errlen, "%s", c->err);
    return status;
}

static int t_supported(void *dev, const nnd_driver_model *model, bool *supported, char *err,
                       size_t errlen) {
    dhp_device *d = device(dev);
    dh_wbuf w = {0};
    dhp_regions regs = {0};
    dh_put_u32(&w, d->index);
    dh_put_model(&w, model, place_constant, &regs);
    dhp_call c = {0};
    bound_for(d->h, &c, NND_DRIVER_NO_DEADLINE, d->h->lim.prepare_timeout_ms);
    int status = dhp_call_run(d->h, DH_MSG_SUPPORTED, &w, &regs, -1, &c);
    dh_wbuf_free(&w);
    if (status == NND_DRIVER_OK || c.reply.body) {
        uint32_t n = dh_get_u32(&c.rest);
        const uint8_t *b = dh_take(&c.rest, n);
        if (!b || n != model->n_operations) {
            status = NND_DRIVER_GENERAL_FAILURE;
            snprintf(c.err, sizeof c.err, "malformed supported_operations reply");
        } else {
            for (uint32_t i = 0; i < n; i++)
                supported[i] = b[i] != 0;
        }
    }
    dhp_call_free(&c);
    return copy_err(&c, status, err, errlen);
}

/* Sends p's body and takes the remote id from the reply (p->mu held). */
static int make_remote(dhp_prepared *p, uint64_t *held, char *err, size_t errlen) {
    dhp_call c = {0};
    bound_for(p->h, &c, p->deadline_ns, p->h->lim.prepare_timeout_ms);
    int status = dhp_call_run(p->h, p->type, &p->body, &p->regions, -1, &c);
    if (status == NND_DRIVER_OK) {
        p->remote = dh_get_u64(&c.rest);
        uint64_t bytes = dh_get_u64(&c.rest);
        if (held) *held = bytes;
        p->gen = c.gen;
        if (c.rest.bad || !p->remote) {
            status = NND_DRIVER_GENERAL_FAILURE;
            snprintf(c.err, sizeof c.err, "malformed prepare reply");
            p->gen = 0;
        }
    }
    dhp_call_free(&c);
    return copy_err(&c, status, err, errlen);
}

static int prepare_like(void *dev, uint32_t type, const nnd_driver_model *model,
                        const nnd_driver_prepare_args *args, const nnd_driver_blob *blobs,
                        uint32_t n_blobs, nnd_driver_prepared_info *out, char *err, size_t errlen) {
    dhp_device *d = device(dev);
    dhp_prepared *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory preparing for %s", d->h->plugin);
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    p->h = d->h, p->dev = d->index, p->type = type;
    pthread_mutex_init(&p->mu, NULL);
    dh_put_u32(&p->body, d->index);
    dh_put(&p->body, args, sizeof *args);
    if (type == DH_MSG_CACHE_LOAD) {
        dh_put_u32(&p->body, n_blobs);
        for (uint32_t i = 0; i < n_blobs; i++) {
            dh_put_u64(&p->body, blobs[i].size);
            dh_put(&p->body, blobs[i].data, blobs[i].size);
        }
    }
    dh_put_model(&p->body, model, place_constant, &p->regions);
    /* Preparing again after a restart is bound by the prepare limit, not a passed deadline. */
    p->deadline_ns = args->deadline_ns;
    uint64_t held = 0;
    pthread_mutex_lock(&p->mu);
    int status = make_remote(p, &held, err, errlen);
    p->deadline_ns = NND_DRIVER_NO_DEADLINE;
    pthread_mutex_unlock(&p->mu);
    if (status != NND_DRIVER_OK) {
        dh_wbuf_free(&p->body);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return status;
    }
    out->prepared = p;
    out->held_bytes = held;
    return NND_DRIVER_OK;
}

static int t_prepare(void *dev, const nnd_driver_model *partition,
                     const nnd_driver_prepare_args *args, nnd_driver_prepared_info *out, char *err,
                     size_t errlen) {
    return prepare_like(dev, DH_MSG_PREPARE, partition, args, NULL, 0, out, err, errlen);
}

static int t_cache_load(void *dev, const nnd_driver_model *partition,
                        const nnd_driver_prepare_args *args, const nnd_driver_blob *blobs,
                        uint32_t n_blobs, nnd_driver_prepared_info *out, char *err, size_t errlen) {
    if (n_blobs > 16) {
        snprintf(err, errlen, "%u cache blobs: at most 16 cross to a driver host", n_blobs);
        return NND_DRIVER_GENERAL_FAILURE;
    }
    return prepare_like(dev, DH_MSG_CACHE_LOAD, partition, args, blobs, n_blobs, out, err, errlen);
}

int dhp_prepared_remote(void *prepared, uint64_t *remote, uint32_t *gen, char *err, size_t errlen) {
    dhp_prepared *p = prepared;
    pthread_mutex_lock(&p->mu);
    int status = NND_DRIVER_OK;
    if (p->gen != dhp_gen(p->h)) {
        char why[DH_ERR_MAX] = "";
        status = make_remote(p, NULL, why, sizeof why);
        if (status) snprintf(err, errlen, "preparing again after a driver host restart: %s", why);
    }
    *remote = p->remote, *gen = p->gen;
    pthread_mutex_unlock(&p->mu);
    return status;
}

int dhp_start_ready(void *prepared) {
    dhp_prepared *p = prepared;
    if (pthread_mutex_trylock(&p->mu) != 0) return 0; /* being prepared again */
    uint32_t gen = p->gen;
    pthread_mutex_unlock(&p->mu);
    return dhp_host_ready(p->h, gen);
}

static void t_release(void *prepared) {
    dhp_prepared *p = prepared;
    dh_wbuf w = {0};
    dh_put_u64(&w, p->remote);
    if (p->gen) dhp_send_oneway(p->h, DH_MSG_RELEASE, &w, p->gen);
    dh_wbuf_free(&w);
    dh_wbuf_free(&p->body);
    pthread_mutex_destroy(&p->mu);
    free(p);
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

static int t_allocate(void *dev, const nnd_driver_buffer_desc *desc, uint64_t *handle, char *err,
                      size_t errlen) {
    dhp_device *d = device(dev);
    dh_wbuf w = {0};
    const nnd_driver_operand *o = &desc->operand;
    dh_put_u32(&w, d->index);
    dh_put(&w, &o->type, 4);
    dh_put_u32(&w, o->rank);
    dh_put(&w, o->dims, sizeof o->dims);
    dh_put(&w, &o->scale, 4);
    dh_put(&w, &o->zero_point, 4);
    dh_put_u64(&w, desc->bytes);
    dh_put_u32(&w, desc->n_roles);
    dhp_call c = {0};
    int status = NND_DRIVER_OK;
    for (uint32_t i = 0; i < desc->n_roles && !status; i++) {
        uint64_t remote = 0;
        uint32_t gen = 0;
        status = dhp_prepared_remote(desc->roles[i].prepared, &remote, &gen, c.err, sizeof c.err);
        if (c.gen && gen != c.gen) {
            status = NND_DRIVER_DEVICE_UNAVAILABLE;
            snprintf(c.err, sizeof c.err, "driver %s: its host restarted", d->h->plugin);
        }
        c.gen = gen;
        dh_put_u64(&w, remote);
        dh_put_u32(&w, desc->roles[i].is_output ? 1u : 0u);
        dh_put_u32(&w, desc->roles[i].index);
        dh_put(&w, &desc->roles[i].frequency, 4);
    }
    bound_for(d->h, &c, NND_DRIVER_NO_DEADLINE, d->h->lim.call_timeout_ms);
    if (!status) status = dhp_call_run(d->h, DH_MSG_ALLOCATE, &w, NULL, -1, &c);
    dh_wbuf_free(&w);
    if (status == NND_DRIVER_OK) {
        uint64_t remote = dh_get_u64(&c.rest);
        *handle = remote && !c.rest.bad ? mem_add(d->h, c.gen, remote) : 0;
        if (!*handle) {
            status = NND_DRIVER_GENERAL_FAILURE;
            snprintf(c.err, sizeof c.err, "no handle for the allocated buffer");
        }
    }
    dhp_call_free(&c);
    return copy_err(&c, status, err, errlen);
}

static void t_memory_free(void *dev, uint64_t handle) {
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
    dh_put_u32(&w, d->index);
    dh_put_u64(&w, remote);
    dh_put_u64(&w, offset);
    dh_put(&w, &a, sizeof a);
    bound_for(d->h, &c, NND_DRIVER_NO_DEADLINE, d->h->lim.call_timeout_ms);
    int status = dhp_call_run(d->h, type, &w, &regs, st.fd, &c);
    if (status == NND_DRIVER_OK && st.base && type == DH_MSG_MEM_READ)
        memcpy(buf, st.base + a.offset, bytes);
    dh_wbuf_free(&w);
    dhp_staging_drop(&st);
    dhp_call_free(&c);
    return status;
}

static int t_memory_read(void *dev, uint64_t handle, uint64_t offset, void *dst, size_t bytes) {
    return copy(dev, DH_MSG_MEM_READ, handle, offset, dst, bytes);
}

static int t_memory_write(void *dev, uint64_t handle, uint64_t offset, const void *src,
                          size_t bytes) {
    return copy(dev, DH_MSG_MEM_WRITE, handle, offset, (void *)src, bytes);
}

static size_t t_cache_save(void *prepared, uint32_t blob, void *buf, size_t cap) {
    dhp_prepared *p = prepared;
    char err[DH_ERR_MAX];
    dhp_call c = {0};
    uint64_t remote = 0;
    if (dhp_prepared_remote(p, &remote, &c.gen, err, sizeof err)) return 0;
    dh_arg a = {.length = buf ? cap : 0};
    dhp_regions regs = {0};
    uint64_t staging_len = 0;
    if (buf && cap) dhp_place(buf, cap, &a, &regs, &staging_len);
    dhp_staging st = {.fd = -1};
    if (staging_len && dhp_staging_make(&st, staging_len) < 0) return 0;
    dh_wbuf w = {0};
    dh_put_u64(&w, remote);
    dh_put_u32(&w, blob);
    dh_put_u64(&w, buf ? cap : 0);
    dh_put(&w, &a, sizeof a);
    bound_for(p->h, &c, NND_DRIVER_NO_DEADLINE, p->h->lim.call_timeout_ms);
    size_t size = 0;
    if (dhp_call_run(p->h, DH_MSG_CACHE_SAVE, &w, &regs, st.fd, &c) == NND_DRIVER_OK) {
        size = (size_t)dh_get_u64(&c.rest);
        if (c.rest.bad) size = 0;
        if (st.base && size <= cap) memcpy(buf, st.base + a.offset, size);
    }
    dh_wbuf_free(&w);
    dhp_staging_drop(&st);
    dhp_call_free(&c);
    return size;
}

/* ---- open() and close(): no argument says which host, so each slot has its own pair ---- */

static int table_open(int slot, nnd_driver_device_info *devices, uint32_t max, char *err,
                      size_t errlen) {
    drvhost *h = dhp_slot_host(slot);
    if (!h) {
        snprintf(err, errlen, "driver host slot %d is empty", slot);
        return -1;
    }
    uint32_t n = h->n_devices < max ? h->n_devices : max;
    memcpy(devices, h->devices, n * sizeof *devices);
    return (int)n;
}

static void table_close(int slot) {
    drvhost *h = dhp_slot_host(slot);
    if (h) dhp_table_close(h);
}

#define SLOT_PAIR(i)                                                                               \
    static int open_##i(nnd_driver_device_info *d, uint32_t max, char *e, size_t n) {              \
        return table_open(i, d, max, e, n);                                                        \
    }                                                                                              \
    static void close_##i(void) {                                                                  \
        table_close(i);                                                                            \
    }
SLOT_PAIR(0)
SLOT_PAIR(1)
SLOT_PAIR(2)
SLOT_PAIR(3)
SLOT_PAIR(4)
SLOT_PAIR(5)
SLOT_PAIR(6)
SLOT_PAIR(7)
SLOT_PAIR(8)
SLOT_PAIR(9)
SLOT_PAIR(10)
SLOT_PAIR(11)
SLOT_PAIR(12)
SLOT_PAIR(13)
SLOT_PAIR(14)
SLOT_PAIR(15)

typedef int (*open_fn)(nnd_driver_device_info *, uint32_t, char *, size_t);
static const open_fn g_open[DRVHOST_MAX_HOSTS] = {
    open_0, open_1, open_2,  open_3,  open_4,  open_5,  open_6,  open_7,
    open_8, open_9, open_10, open_11, open_12, open_13, open_14, open_15};
static void (*const g_close[DRVHOST_MAX_HOSTS])(void) = {
    close_0, close_1, close_2,  close_3,  close_4,  close_5,  close_6,  close_7,
    close_8, close_9, close_10, close_11, close_12, close_13, close_14, close_15};

void dhp_table_init(drvhost *h) {
    nnd_driver *t = &h->table;
    memset(t, 0, sizeof *t);
    t->abi_version = NND_DRIVER_ABI_VERSION;
    t->struct_size = sizeof *t;
    t->name = h->plugin;
    t->open = g_open[h->slot];
    t->close = g_close[h->slot];
    t->supported_operations = t_supported;
    t->prepare = t_prepare;
    t->release = t_release;
    /* Both forms: across a process, every call is asynchronous underneath. */
    t->execute = dhp_execute;
    t->start = dhp_start;
    t->cancel = dhp_cancel;
    if (h->has & DH_HAS_MEMORY) {
        t->allocate = t_allocate;
        t->memory_free = t_memory_free;
        t->memory_read = t_memory_read;
        t->memory_write = t_memory_write;
    }
    if (h->has & DH_HAS_CACHE) {
        t->cache_save = t_cache_save;
        t->cache_load = t_cache_load;
    }
}

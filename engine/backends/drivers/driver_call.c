/* SPDX-License-Identifier: Apache-2.0 */
/* driver_call.c: every call into a driver, under the fault guard. See driver_call.h. */
#include "engine/backends/drivers/driver_call.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/plugins/extension_plugin.h"
#include "engine/plugins/fault_guard.h"

void eng_driver_logf(int level, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    eng_ext_logf(level, "%s", msg);
}

enum {
    C_SUPPORTED,
    C_PREPARE,
    C_CACHE_LOAD,
    C_CACHE_SAVE,
    C_RELEASE,
    C_EXECUTE,
    C_START,
    C_CANCEL,
    C_ALLOCATE,
    C_FREE,
    C_READ,
    C_WRITE
};
static const char *const call_names[] = {"supported_operations",
                                         "prepare",
                                         "cache_load",
                                         "cache_save",
                                         "release",
                                         "execute",
                                         "start",
                                         "cancel",
                                         "allocate",
                                         "memory_free",
                                         "memory_read",
                                         "memory_write"};

typedef struct call {
    const nnd_driver *d;
    void *device;
    int what;
    const nnd_driver_model *model;
    bool *supported;
    const nnd_driver_prepare_args *args;
    nnd_driver_prepared_info *out;
    const nnd_driver_blob *blobs;
    uint32_t n_blobs;
    void *prepared;
    nnd_driver_execution *x;
    const nnd_driver_buffer_desc *desc;
    uint64_t handle, offset;
    void *buf;
    size_t bytes;
    size_t size;
    char *err;
    size_t errlen;
} call;

static int invoke(void *arg) {
    call *c = arg;
    const nnd_driver *d = c->d;
    switch (c->what) {
    case C_SUPPORTED:
        return d->supported_operations(c->device, c->model, c->supported, c->err, c->errlen);
    case C_PREPARE: return d->prepare(c->device, c->model, c->args, c->out, c->err, c->errlen);
    case C_CACHE_LOAD:
        return d->cache_load(c->device, c->model, c->args, c->blobs, c->n_blobs, c->out, c->err,
                             c->errlen);
    case C_CACHE_SAVE: c->size = d->cache_save(c->prepared, c->n_blobs, c->buf, c->bytes); return 0;
    case C_RELEASE: d->release(c->prepared); return 0;
    case C_EXECUTE: return d->execute(c->x);
    case C_START: return d->start(c->x);
    case C_CANCEL: d->cancel(c->x); return 0;
    case C_ALLOCATE: return d->allocate(c->device, c->desc, &c->handle, c->err, c->errlen);
    case C_FREE: d->memory_free(c->device, c->handle); return 0;
    case C_READ: return d->memory_read(c->device, c->handle, c->offset, c->buf, c->bytes);
    default: return d->memory_write(c->device, c->handle, c->offset, c->buf, c->bytes);
    }
}

bool eng_drv_disabled(const eng_driver_dev *v) {
    return atomic_load(&v->lib->faulted);
}

/* Runs c into v's driver; -1 after a fault (logged, the driver disabled) or when the
 * driver is disabled already. */
static int guarded(eng_driver_dev *v, call *c) {
    if (eng_drv_disabled(v)) {
        if (c->err && c->errlen)
            snprintf(c->err, c->errlen, "driver %s is disabled after a fault", v->info.name);
        return -1;
    }
    c->d = v->lib->d;
    c->device = v->info.device;
    int sig = 0;
    int rc = eng_fault_guarded(invoke, c, &sig);
    if (!sig) return rc;
    atomic_store(&v->lib->faulted, true);
    eng_driver_logf(0, "driver %s (%s): %s in %s; the driver is disabled", v->info.name,
                    v->lib->path, eng_fault_signal_name(sig), call_names[c->what]);
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "driver %s faulted in %s and is disabled", v->info.name,
                 call_names[c->what]);
    return -1;
}

int eng_drv_supported(eng_driver_dev *v, const nnd_driver_model *m, bool *supported, char *err,
                      size_t errlen) {
    call c = {
        .what = C_SUPPORTED, .model = m, .supported = supported, .err = err, .errlen = errlen};
    return guarded(v, &c);
}

int eng_drv_prepare(eng_driver_dev *v, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                    nnd_driver_prepared_info *out, char *err, size_t errlen) {
    call c = {.what = C_PREPARE, .model = m, .args = a, .out = out, .err = err, .errlen = errlen};
    return guarded(v, &c);
}

int eng_drv_cache_load(eng_driver_dev *v, const nnd_driver_model *m,
                       const nnd_driver_prepare_args *a, const nnd_driver_blob *blobs,
                       uint32_t n_blobs, nnd_driver_prepared_info *out, char *err, size_t errlen) {
    if (!v->lib->has_cache) return NND_DRIVER_GENERAL_FAILURE;
    call c = {.what = C_CACHE_LOAD,
              .model = m,
              .args = a,
              .blobs = blobs,
              .n_blobs = n_blobs,
              .out = out,
              .err = err,
              .errlen = errlen};
    return guarded(v, &c);
}

size_t eng_drv_cache_save(eng_driver_dev *v, void *prepared, uint32_t blob, void *buf, size_t cap) {
    if (!v->lib->has_cache) return 0;
    call c = {
        .what = C_CACHE_SAVE, .prepared = prepared, .n_blobs = blob, .buf = buf, .bytes = cap};
    return guarded(v, &c) < 0 ? 0 : c.size;
}

/* Prepared partitions of drivers disabled after a fault: never released (the driver is
 * not called again), so kept here, still referenced, for the life of the process. */
static struct {
    pthread_mutex_t lock;
    void **states;
    size_t n, cap;
} abandoned = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void abandon(void *prepared) {
    pthread_mutex_lock(&abandoned.lock);
    if (abandoned.n == abandoned.cap) {
        size_t cap = abandoned.cap ? 2 * abandoned.cap : 16;
        void **s = realloc(abandoned.states, cap * sizeof *s);
        if (s) abandoned.states = s, abandoned.cap = cap;
    }
    if (abandoned.n < abandoned.cap) abandoned.states[abandoned.n++] = prepared;
    pthread_mutex_unlock(&abandoned.lock);
}

void eng_drv_release(eng_driver_dev *v, void *prepared) {
    call c = {.what = C_RELEASE, .prepared = prepared};
    if (eng_drv_disabled(v))
        abandon(prepared);
    else
        guarded(v, &c);
}

int eng_drv_execute(eng_driver_dev *v, nnd_driver_execution *x) {
    call c = {.what = C_EXECUTE, .x = x, .err = x->err, .errlen = x->errlen};
    return guarded(v, &c);
}

int eng_drv_start(eng_driver_dev *v, nnd_driver_execution *x) {
    call c = {.what = C_START, .x = x, .err = x->err, .errlen = x->errlen};
    return guarded(v, &c);
}

void eng_drv_cancel(eng_driver_dev *v, nnd_driver_execution *x) {
    call c = {.what = C_CANCEL, .x = x};
    if (v->lib->d->cancel && !eng_drv_disabled(v)) guarded(v, &c);
}

int eng_drv_allocate(eng_driver_dev *v, const nnd_driver_buffer_desc *desc, uint64_t *handle,
                     char *err, size_t errlen) {
    call c = {.what = C_ALLOCATE, .desc = desc, .err = err, .errlen = errlen};
    int rc = guarded(v, &c);
    *handle = rc == NND_DRIVER_OK ? c.handle : 0;
    return rc;
}

void eng_drv_memory_free(eng_driver_dev *v, uint64_t handle) {
    call c = {.what = C_FREE, .handle = handle};
    if (!eng_drv_disabled(v)) guarded(v, &c);
}

int eng_drv_memory_copy(eng_driver_dev *v, bool write, uint64_t handle, uint64_t offset, void *buf,
                        size_t bytes) {
    call c = {.what = write ? C_WRITE : C_READ,
              .handle = handle,
              .offset = offset,
              .buf = buf,
              .bytes = bytes};
    return guarded(v, &c);
}

schema_status eng_drv_status(int s) {
    /* The ABI's statuses are the HAL's numbers, as the engine's are. */
    if (s >= NND_DRIVER_OK && s <= NND_DRIVER_RESOURCE_EXHAUSTED_PERSISTENT)
        return (schema_status)s;
    return s == NND_DRIVER_UNSUPPORTED ? SCHEMA_UNSUPPORTED : SCHEMA_GENERAL_FAILURE;
}

float eng_drv_figure(const nnd_driver_capabilities *caps, int32_t type, bool relaxed,
                     bool low_power) {
    const nnd_driver_perf *p = NULL;
    if (relaxed && type == NND_DRIVER_FLOAT32)
        p = &caps->relaxed_scalar;
    else if (relaxed && type == NND_DRIVER_TENSOR_FLOAT32)
        p = &caps->relaxed_tensor;
    else if (type >= 0 && type < NND_DRIVER_OPERAND_TYPES)
        p = &caps->operand[type];
    float f = p ? (low_power ? p->power_usage : p->exec_time) : 0;
    return isfinite(f) && f > 0 ? f : INFINITY;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* buffer.c: driver-owned buffers: tokens, lifetime, access, Allocate, the copies, and what
 * one execution argument does to its buffer. See buffer.h; buffer_binding.c binds a
 * request's arguments through the functions of buffer_internal.h. */
#include "daemon/binding/buffer.h"
#include "daemon/binding/buffer_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine/backend.h"
#include "daemon/devices/devices.h"

typedef struct role {
    uint64_t model; /* prepared-model handle */
    uint32_t index;
    bool output;
} role;

/* A shape: rank 0 on a tensor means the rank is unknown; a 0 dimension is unknown. */
typedef struct shape {
    uint32_t rank;
    uint32_t dims[ENG_MAX_RANK];
} shape;

struct srv_buffer {
    atomic_uint refs;
    uint64_t token; /* constant; the registry alone decides whether it is still live */
    const struct srv_session *owner;
    size_t elem; /* bytes of one element */
    bool tensor;
    shape declared; /* combined from roles and descriptor */
    bool fixed;     /* declared shape fully known */
    size_t n_roles;
    role *roles;
    srv_buffer_account acct; /* who pays for cap; cleared when dropped */
    /* Non-NULL: the bytes are in this driver's device memory under handle (data stays
     * NULL, cap is their size); a fixed buffer, so they are never replaced. */
    const eng_backend *device;
    uint64_t handle;

    pthread_mutex_t lock; /* guards everything below */
    uint8_t *data;        /* cap bytes; replaced only under write access */
    size_t cap;
    bool initialized;
    shape cur; /* shape of the contents when initialized */
    size_t len;
    unsigned readers;
    bool writing;
};

static atomic_uint_fast64_t live_count, live_bytes;

void srv_buffer_stats(uint64_t *count, uint64_t *bytes) {
    *count = atomic_load(&live_count);
    *bytes = atomic_load(&live_bytes);
}

/* ---- shapes ------------------------------------------------------------------------ */

/* Combines a and b into out; false when they contradict each other. */
static bool combine(const shape *a, const shape *b, shape *out) {
    if (!a->rank) return (*out = *b), true;
    if (!b->rank) return (*out = *a), true;
    if (a->rank != b->rank) return false;
    shape r = {.rank = a->rank};
    for (uint32_t i = 0; i < a->rank; i++) {
        if (a->dims[i] && b->dims[i] && a->dims[i] != b->dims[i]) return false;
        r.dims[i] = a->dims[i] ? a->dims[i] : b->dims[i];
    }
    *out = r;
    return true;
}

/* Bytes of a fully known shape; false when something is unknown or it is too large. */
static bool shape_bytes(const srv_buffer *b, const shape *s, size_t *bytes) {
    if (b->tensor && !s->rank) return false;
    uint64_t n = b->elem;
    for (uint32_t i = 0; i < s->rank; i++) {
        if (!s->dims[i] || n > SRV_BUFFER_MAX_BYTES / s->dims[i]) return false;
        n *= s->dims[i];
    }
    *bytes = (size_t)n;
    return n <= SRV_BUFFER_MAX_BYTES;
}

static bool shape_from(shape *s, const uint32_t *dims, size_t rank) {
    if (rank > ENG_MAX_RANK) return false;
    s->rank = (uint32_t)rank;
    if (rank) memcpy(s->dims, dims, rank * sizeof *dims);
    return true;
}

/* "[2,3,?]" into buf. */
static const char *shape_str(const shape *s, bool tensor, char *buf, size_t len) {
    if (tensor && !s->rank) return snprintf(buf, len, "[unknown rank]"), buf;
    size_t at = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < s->rank && at < len; i++) {
        if (s->dims[i])
            at += (size_t)snprintf(buf + at, len - at, "%s%u", i ? "," : "", s->dims[i]);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s?", i ? "," : "");
    }
    if (at < len) snprintf(buf + at, len - at, "]");
    return buf;
}

/* ---- the token registry (daemon-wide) ---------------------------------------------- */

/* Open addressing by token, linear probing, power-of-two capacity, load under 1/2. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static srv_buffer **reg;
static size_t reg_cap, reg_count;

static size_t reg_slot(uint64_t token) {
    size_t i = (size_t)token & (reg_cap - 1);
    while (reg[i] && reg[i]->token != token)
        i = (i + 1) & (reg_cap - 1);
    return i;
}

static int reg_grow(void) {
    size_t cap = reg_cap ? reg_cap * 2 : 64;
    srv_buffer **old = reg, **n = calloc(cap, sizeof *n);
    if (!n) return -1;
    size_t old_cap = reg_cap;
    reg = n;
    reg_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i]) reg[reg_slot(old[i]->token)] = old[i];
    free(old);
    return 0;
}

/* Gives b a fresh token and registers it; -1 when out of memory or randomness. */
static int reg_add(srv_buffer *b) {
    pthread_mutex_lock(&reg_lock);
    int rc = (reg_count + 1) * 2 > reg_cap ? reg_grow() : 0;
    uint64_t t = 0;
    while (rc == 0 && (t == 0 || reg[reg_slot(t)])) {
        ssize_t n = getrandom(&t, sizeof t, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n != (ssize_t)sizeof t) rc = -1;
    }
    if (rc == 0) {
        b->token = t;
        reg[reg_slot(t)] = b;
        reg_count++;
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

static void reg_remove(const srv_buffer *b) {
    pthread_mutex_lock(&reg_lock);
    size_t i = reg_cap ? reg_slot(b->token) : 0;
    if (reg_cap && reg[i] == b) {
        /* Backward-shift deletion: re-seat the rest of the probe run. */
        reg[i] = NULL;
        reg_count--;
        for (size_t j = (i + 1) & (reg_cap - 1); reg[j]; j = (j + 1) & (reg_cap - 1)) {
            srv_buffer *moved = reg[j];
            reg[j] = NULL;
            reg[reg_slot(moved->token)] = moved;
        }
    }
    pthread_mutex_unlock(&reg_lock);
}

srv_buffer *srv_buffer_find(uint64_t token, const struct srv_session *owner) {
    srv_buffer *b = NULL;
    pthread_mutex_lock(&reg_lock);
    if (reg_cap && token) {
        srv_buffer *e = reg[reg_slot(token)];
        if (e && e->owner == owner) b = srv_buffer_ref(e);
    }
    pthread_mutex_unlock(&reg_lock);
    return b;
}

/* ---- lifetime and access ------------------------------------------------------------ */

srv_buffer *srv_buffer_ref(srv_buffer *b) {
    atomic_fetch_add(&b->refs, 1);
    return b;
}

void srv_buffer_unref(srv_buffer *b) {
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
    atomic_fetch_sub(&live_count, 1);
    atomic_fetch_sub(&live_bytes, b->cap);
    if (b->device) b->device->mem_free(b->device, b->handle);
    free(b->data);
    free(b->roles);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* Refunds everything charged; from now on nobody pays for the buffer. */
static void settle(srv_buffer *b) {
    if (!b->acct.refund) return;
    pthread_mutex_lock(&b->lock);
    size_t cap = b->cap;
    pthread_mutex_unlock(&b->lock);
    if (cap) b->acct.refund(b->acct.ctx, cap);
    memset(&b->acct, 0, sizeof b->acct);
}

void srv_buffer_drop(void *p) {
    srv_buffer *b = p;
    reg_remove(b);
    settle(b);
    srv_buffer_unref(b);
}

uint64_t srv_buffer_token(const srv_buffer *b) {
    return b->token;
}

schema_status srv_buffer_begin(srv_buffer *b, bool write, bool need_init, char *err,
                               size_t errlen) {
    schema_status st = SCHEMA_OK;
    pthread_mutex_lock(&b->lock);
    if (b->writing)
        st = schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                          "buffer is busy: another execution or copy is writing it");
    else if (write && b->readers)
        st = schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                          "buffer is busy: %u executions or copies are reading it", b->readers);
    else if (need_init && !b->initialized)
        st = schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                          "buffer has never been written (or its last write failed)");
    else if (write)
        b->writing = true;
    else
        b->readers++;
    pthread_mutex_unlock(&b->lock);
    return st;
}

void srv_buffer_end(srv_buffer *b, bool write) {
    pthread_mutex_lock(&b->lock);
    if (write)
        b->writing = false;
    else
        b->readers--;
    pthread_mutex_unlock(&b->lock);
}

/* Makes room for need bytes, charging the growth first. Called with write access, so
 * nobody else touches data. The old contents are not kept: every write covers all it
 * makes valid. */
static schema_status reserve(srv_buffer *b, size_t need, char *err, size_t errlen) {
    if (b->cap >= need) return SCHEMA_OK;
    if (b->device)
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "a buffer in device memory cannot grow to %zu bytes", need);
    if (b->acct.charge) {
        schema_status st = b->acct.charge(b->acct.ctx, need - b->cap, err, errlen);
        if (st != SCHEMA_OK) return st;
    }
    uint8_t *d = calloc(1, need); /* zeroed: no stale daemon memory ever leaks out */
    if (!d) {
        if (b->acct.refund) b->acct.refund(b->acct.ctx, need - b->cap);
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "out of memory growing a buffer to %zu bytes", need);
    }
    pthread_mutex_lock(&b->lock);
    free(b->data);
    atomic_fetch_add(&live_bytes, need - b->cap);
    b->data = d;
    b->cap = need;
    pthread_mutex_unlock(&b->lock);
    return SCHEMA_OK;
}

/* Ends a write: the contents now have shape s (when ok) or are undefined. */
static void end_write(srv_buffer *b, bool ok, const shape *s, size_t len) {
    pthread_mutex_lock(&b->lock);
    b->initialized = ok;
    if (ok) {
        b->cur = *s;
        b->len = len;
    }
    b->writing = false;
    pthread_mutex_unlock(&b->lock);
}

/* ---- Allocate ---------------------------------------------------------------------- */

static bool same_quant(const eng_operand_desc *a, const eng_operand_desc *b) {
    if (a->type != b->type || a->scale != b->scale || a->zero_point != b->zero_point) return false;
    const eng_channel_quant *x = &a->channel_quant, *y = &b->channel_quant;
    if (x->n_scales != y->n_scales || x->channel_dim != y->channel_dim) return false;
    return !x->n_scales || memcmp(x->scales, y->scales, x->n_scales * sizeof *x->scales) == 0;
}

/* The Allocate's roles as the engine takes them (eng_buffer_role), *n of them, to free();
 * NULL when out of memory (the buffer then stays in daemon memory). */
static eng_buffer_role *engine_roles(const Nnd__Allocate *a, const srv_buffer_model *models,
                                     size_t *n) {
    size_t n_in = a->n_input_roles;
    *n = n_in + a->n_output_roles;
    eng_buffer_role *r = calloc(*n + 1, sizeof *r);
    for (size_t k = 0; r && k < *n; k++) {
        bool output = k >= n_in;
        const Nnd__BufferRole *x = output ? a->output_roles[k - n_in] : a->input_roles[k];
        r[k] = (eng_buffer_role){.p = models[x->model_index].prepared,
                                 .output = output,
                                 .io = x->io_index,
                                 .frequency = x->probability};
    }
    return r;
}

/* A fixed buffer of `bytes` in the device memory of the driver whose partitions use it in
 * every role (srv_device_memory_for()), charged first; NULL when it stays in daemon memory:
 * no such driver (a role's tensor is no input or output of that driver's partitions), the
 * driver refused or has no room (then daemon memory), or the charge was refused (*st). */
static const eng_backend *in_device_memory(srv_buffer *b, const Nnd__Allocate *a,
                                           const srv_buffer_model *models,
                                           const eng_operand_desc *operand, size_t bytes,
                                           schema_status *st, char *err, size_t errlen) {
    size_t n = 0;
    eng_buffer_role *roles = engine_roles(a, models, &n);
    const eng_backend *dev = roles ? srv_device_memory_for(roles, n) : NULL;
    if (!dev ||
        (b->acct.charge && (*st = b->acct.charge(b->acct.ctx, bytes, err, errlen)) != SCHEMA_OK)) {
        free(roles);
        return NULL;
    }
    /* The driver sees the buffer's operand: its type and its shape as the roles fix it. */
    eng_operand_desc od = *operand;
    od.rank = b->declared.rank;
    memcpy(od.dims, b->declared.dims, sizeof(uint32_t) * od.rank);
    uint64_t h = eng_buffer_alloc(dev, &od, bytes ? bytes : 1, roles, n);
    free(roles);
    if (!h) {
        if (b->acct.refund) b->acct.refund(b->acct.ctx, bytes);
        return NULL;
    }
    b->handle = h;
    b->cap = bytes;
    atomic_fetch_add(&live_bytes, bytes);
    return dev;
}

schema_status srv_buffer_allocate(const struct srv_session *owner, const Nnd__Allocate *a,
                                  const srv_buffer_model *models, const srv_buffer_account *acct,
                                  srv_buffer **out, char *err, size_t errlen) {
    *out = NULL;
    size_t n_in = a->n_input_roles, n_roles = n_in + a->n_output_roles;
    if (!a->n_prepared_models)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "Allocate names no prepared model");
    if (!n_roles)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "Allocate names no role");
    if (n_roles > 65536)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "Allocate names %zu roles",
                            n_roles);
    srv_buffer *b = calloc(1, sizeof *b);
    role *roles = calloc(n_roles, sizeof *roles);
    if (!b || !roles) {
        free(b);
        free(roles);
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory");
    }
    schema_status st = SCHEMA_OK;
    const eng_operand_desc *first = NULL;
    shape dims = {0};
    for (size_t k = 0; k < n_roles && st == SCHEMA_OK; k++) {
        bool output = k >= n_in;
        const Nnd__BufferRole *r = output ? a->output_roles[k - n_in] : a->input_roles[k];
        const char *what = output ? "output" : "input";
        size_t at = output ? k - n_in : k;
        if (r->model_index >= a->n_prepared_models) {
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "%s role %zu names prepared model %u of %zu", what, at,
                              r->model_index, a->n_prepared_models);
            break;
        }
        const srv_buffer_model *m = &models[r->model_index];
        uint32_t n_io =
            output ? eng_prepared_num_outputs(m->prepared) : eng_prepared_num_inputs(m->prepared);
        if (r->io_index >= n_io) {
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "%s role %zu names %s %u of prepared model %u, which has %u", what,
                              at, what, r->io_index, r->model_index, n_io);
            break;
        }
        if (!(r->probability >= 0.0f && r->probability <= 1.0f)) { /* NaN fails too */
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "%s role %zu: probability %g is not in (0, 1]", what, at,
                              (double)r->probability);
            break;
        }
        roles[k] = (role){.model = m->handle, .index = r->io_index, .output = output};
        for (size_t j = 0; j < k; j++)
            if (roles[j].model == roles[k].model && roles[j].index == roles[k].index &&
                roles[j].output == output) {
                st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                  "%s role %zu repeats %s %u of prepared model %u", what, at, what,
                                  r->io_index, r->model_index);
                break;
            }
        if (st != SCHEMA_OK) break;
        const eng_operand_desc *o = output ? eng_prepared_output(m->prepared, r->io_index)
                                           : eng_prepared_input(m->prepared, r->io_index);
        shape os;
        shape_from(&os, o->dims, o->rank);
        if (!first) {
            first = o;
            dims = os;
            b->elem = schema_type_size(o->type);
            b->tensor = schema_type_is_tensor(o->type);
            if (!b->elem)
                st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                  "%s role %zu: operand type %d has no fixed element size", what,
                                  at, (int)o->type);
        } else if (!same_quant(first, o)) {
            st = schema_failf(
                err, errlen, SCHEMA_INVALID_ARGUMENT,
                "%s role %zu: operand type or quantization (%s, scale %g, zero point %d) "
                "differs from the first role's (%s, scale %g, zero point %d)",
                what, at, schema_type_name(o->type), (double)o->scale, o->zero_point,
                schema_type_name(first->type), (double)first->scale, first->zero_point);
        } else if (!combine(&dims, &os, &dims)) {
            char x[96], y[96];
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "%s role %zu: dimensions %s do not agree with the other roles' %s",
                              what, at, shape_str(&os, b->tensor, x, sizeof x),
                              shape_str(&dims, b->tensor, y, sizeof y));
        }
    }
    if (st == SCHEMA_OK && a->desc && a->desc->n_dimensions) {
        shape ds;
        char x[96], y[96];
        if (!b->tensor)
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "the descriptor gives dimensions to a scalar");
        else if (!shape_from(&ds, a->desc->dimensions, a->desc->n_dimensions))
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "the descriptor's rank %zu is over %d", a->desc->n_dimensions,
                              ENG_MAX_RANK);
        else if (!combine(&dims, &ds, &dims))
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "the descriptor's dimensions %s do not agree with the roles' %s",
                              shape_str(&ds, true, x, sizeof x),
                              shape_str(&dims, true, y, sizeof y));
    }
    size_t bytes = 0;
    if (st == SCHEMA_OK) {
        b->declared = dims;
        b->fixed = shape_bytes(b, &dims, &bytes);
        if (!b->fixed) {
            /* Unknown dimensions are flexible; known ones that are too many bytes are not. */
            bool unknown = b->tensor && !dims.rank;
            uint64_t n = b->elem;
            for (uint32_t i = 0; i < dims.rank; i++) {
                if (!dims.dims[i])
                    unknown = true;
                else
                    n = n > SRV_BUFFER_MAX_BYTES / dims.dims[i] ? SRV_BUFFER_MAX_BYTES + 1
                                                                : n * dims.dims[i];
            }
            if (!unknown || n > SRV_BUFFER_MAX_BYTES)
                st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                  "the buffer would be over the limit of %llu bytes",
                                  (unsigned long long)SRV_BUFFER_MAX_BYTES);
        }
    }
    if (st != SCHEMA_OK) {
        free(b);
        free(roles);
        return st;
    }
    atomic_init(&b->refs, 1);
    b->owner = owner;
    b->roles = roles;
    b->n_roles = n_roles;
    pthread_mutex_init(&b->lock, NULL);
    if (acct) b->acct = *acct;
    atomic_fetch_add(&live_count, 1);
    if (b->fixed) b->device = in_device_memory(b, a, models, first, bytes, &st, err, errlen);
    if (st == SCHEMA_OK && !b->device && b->fixed) st = reserve(b, bytes, err, errlen);
    if (st == SCHEMA_OK && reg_add(b) < 0)
        st =
            schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory registering a buffer");
    if (st != SCHEMA_OK) {
        settle(b);
        srv_buffer_unref(b);
        return st;
    }
    *out = b;
    return SCHEMA_OK;
}

/* ---- copies -------------------------------------------------------------------------- */

/* Client memory reaches a driver only through daemon memory: a pool that shrinks under a
 * copy faults in the daemon's memcpy, which the pool guard handles, never in the driver. */
static schema_status copy_in_device(srv_buffer *b, const srv_pool *src, const shape *s, size_t need,
                                    char *err, size_t errlen) {
    uint8_t *tmp = malloc(need ? need : 1);
    if (!tmp) {
        end_write(b, false, s, 0);
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "out of memory copying to a buffer");
    }
    uint64_t faults = srv_pool_faults();
    memcpy(tmp, src->view.base, need);
    schema_status st =
        srv_pool_faults() == faults
            ? SCHEMA_OK
            : schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                           "the source memory shrank during the copy; the buffer is now "
                           "uninitialized");
    if (st == SCHEMA_OK) st = b->device->mem_write(b->device, b->handle, 0, tmp, need, err, errlen);
    free(tmp);
    end_write(b, st == SCHEMA_OK, s, need);
    return st;
}

static schema_status copy_out_device(srv_buffer *b, const srv_pool *dst, char *err, size_t errlen) {
    uint8_t *tmp = malloc(b->len ? b->len : 1);
    if (!tmp)
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory copying a buffer");
    schema_status st = b->device->mem_read(b->device, b->handle, 0, tmp, b->len, err, errlen);
    uint64_t faults = srv_pool_faults();
    if (st == SCHEMA_OK) memcpy((void *)dst->view.base, tmp, b->len);
    if (st == SCHEMA_OK && srv_pool_faults() != faults)
        st = schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                          "the destination memory shrank during the copy");
    free(tmp);
    return st;
}

schema_status srv_buffer_copy_in(srv_buffer *b, const srv_pool *src, const uint32_t *dims,
                                 size_t rank, char *err, size_t errlen) {
    shape given, s;
    char x[96], y[96];
    if (!shape_from(&given, dims, rank))
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "rank %zu is over %d", rank,
                            ENG_MAX_RANK);
    if (rank && !b->tensor)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "the buffer holds a scalar");
    if (!combine(&b->declared, &given, &s))
        return schema_failf(
            err, errlen, SCHEMA_INVALID_ARGUMENT, "dimensions %s do not agree with the buffer's %s",
            shape_str(&given, true, x, sizeof x), shape_str(&b->declared, true, y, sizeof y));
    size_t need;
    if (!shape_bytes(b, &s, &need))
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "the data's dimensions %s are not all known (or too large)",
                            shape_str(&s, b->tensor, x, sizeof x));
    if (src->view.size != need)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "the source holds %zu bytes, dimensions %s need %zu", src->view.size,
                            shape_str(&s, b->tensor, x, sizeof x), need);
    schema_status st = srv_buffer_begin(b, true, false, err, errlen);
    if (st != SCHEMA_OK) return st;
    st = reserve(b, need, err, errlen);
    if (st != SCHEMA_OK) {
        /* The contents stay as they were: nothing was written. */
        srv_buffer_end(b, true);
        return st;
    }
    if (b->device) return copy_in_device(b, src, &s, need, err, errlen);
    uint64_t faults = srv_pool_faults();
    memcpy(b->data, src->view.base, need);
    bool ok = srv_pool_faults() == faults;
    end_write(b, ok, &s, need);
    if (!ok)
        return schema_failf(
            err, errlen, SCHEMA_GENERAL_FAILURE,
            "the source memory shrank during the copy; the buffer is now uninitialized");
    return SCHEMA_OK;
}

schema_status srv_buffer_copy_out(srv_buffer *b, const srv_pool *dst, const uint32_t *dims,
                                  size_t rank, eng_output_shape *out, char *err, size_t errlen) {
    shape given;
    char x[96], y[96];
    if (!shape_from(&given, dims, rank))
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "rank %zu is over %d", rank,
                            ENG_MAX_RANK);
    if (!dst->writable)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "the destination memory is read-only");
    schema_status st = srv_buffer_begin(b, false, true, err, errlen);
    if (st != SCHEMA_OK) return st;
    shape s = b->cur, tmp;
    if (rank && !combine(&s, &given, &tmp))
        st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                          "dimensions %s do not agree with the buffer's contents %s",
                          shape_str(&given, true, x, sizeof x),
                          shape_str(&s, b->tensor, y, sizeof y));
    else if (dst->view.size != b->len)
        st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                          "the destination holds %zu bytes, the buffer's contents %s are %zu",
                          dst->view.size, shape_str(&s, b->tensor, x, sizeof x), b->len);
    if (st == SCHEMA_OK && b->device) {
        st = copy_out_device(b, dst, err, errlen);
    } else if (st == SCHEMA_OK) {
        uint64_t faults = srv_pool_faults();
        memcpy((void *)dst->view.base, b->data, b->len);
        if (srv_pool_faults() != faults)
            st = schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                              "the destination memory shrank during the copy");
    }
    if (st == SCHEMA_OK) {
        out->rank = s.rank;
        memcpy(out->dims, s.dims, sizeof out->dims);
        out->sufficient = true;
    }
    srv_buffer_end(b, false);
    return st;
}

/* ---- one execution argument (buffer_internal.h) ------------------------------------ */

bool srv_buffer_has_role(const srv_buffer *b, uint64_t model, uint32_t index, bool output) {
    for (size_t i = 0; i < b->n_roles; i++)
        if (b->roles[i].model == model && b->roles[i].index == index &&
            b->roles[i].output == output)
            return true;
    return false;
}

schema_status srv_buffer_bind_input(srv_buffer *b, uint32_t i, eng_io *io, char *err,
                                    size_t errlen) {
    char x[96], y[96];
    shape given, s;
    shape_from(&given, io->dims, io->rank);
    schema_status st = SCHEMA_OK;
    pthread_mutex_lock(&b->lock);
    if (!combine(&b->cur, &given, &s)) {
        st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                          "input %u: dimensions %s do not agree with its buffer's contents %s", i,
                          shape_str(&given, true, x, sizeof x),
                          shape_str(&b->cur, b->tensor, y, sizeof y));
    } else {
        io->data = b->data;
        io->readable_past = 0; /* the buffer's memory is its own, not the pool's */
        io->device = b->device;
        io->device_handle = b->handle;
        io->length = b->len;
        io->rank = b->cur.rank;
        memcpy(io->dims, b->cur.dims, sizeof io->dims);
    }
    pthread_mutex_unlock(&b->lock);
    return st;
}

schema_status srv_buffer_bind_output(srv_buffer *b, const eng_operand_desc *o, uint32_t i,
                                     bool read, eng_io *io, char *err, size_t errlen) {
    char x[96], y[96];
    shape given, model, s;
    shape_from(&given, io->dims, io->rank);
    shape_from(&model, o->dims, o->rank);
    size_t need;
    if (!combine(&b->declared, &given, &s))
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "output %u: dimensions %s do not agree with its buffer's %s", i,
                            shape_str(&given, true, x, sizeof x),
                            shape_str(&b->declared, b->tensor, y, sizeof y));
    /* A flexible buffer learns its size here when the model or request knows it, else
     * from the run (srv_buffers_regrow). Never grow one this request also reads. */
    if (combine(&s, &model, &s) && shape_bytes(b, &s, &need) && !read) {
        schema_status st = reserve(b, need, err, errlen);
        if (st != SCHEMA_OK) return st;
    }
    pthread_mutex_lock(&b->lock);
    io->data = b->data;
    io->device = b->device;
    io->device_handle = b->handle;
    io->length = b->cap;
    pthread_mutex_unlock(&b->lock);
    return SCHEMA_OK;
}

bool srv_buffer_regrow_output(srv_buffer *b, bool read, const eng_output_shape *needed, eng_io *io,
                              schema_status *grow_st, char *grow_err, size_t grow_errlen) {
    shape s, tmp;
    size_t need;
    shape_from(&s, needed->dims, needed->rank);
    bool ok = !b->fixed && !read && combine(&b->declared, &s, &tmp) && shape_bytes(b, &s, &need) &&
              (*grow_st = reserve(b, need, grow_err, grow_errlen)) == SCHEMA_OK;
    if (ok) {
        pthread_mutex_lock(&b->lock);
        io->data = b->data;
        io->length = b->cap;
        pthread_mutex_unlock(&b->lock);
    }
    return ok;
}

void srv_buffer_end_output(srv_buffer *b, uint32_t i, const eng_output_shape *result,
                           schema_status *st, char *err, size_t errlen) {
    shape s, tmp;
    size_t len = 0;
    shape_from(&s, result->dims, result->rank);
    bool ok = *st == SCHEMA_OK;
    if (ok && (!combine(&b->declared, &s, &tmp) || !shape_bytes(b, &s, &len) || len > b->cap)) {
        char x[96], y[96];
        *st = schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                           "output %u: the result's dimensions %s do not fit its buffer's %s", i,
                           shape_str(&s, b->tensor, x, sizeof x),
                           shape_str(&b->declared, b->tensor, y, sizeof y));
        ok = false;
    }
    end_write(b, ok, &s, len);
}

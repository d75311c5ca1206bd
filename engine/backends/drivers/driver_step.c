/* SPDX-License-Identifier: Apache-2.0 */
/* driver_step.c: a loaded driver as an engine backend (backend.h): the step views a driver
 * gets, and every call into it under the fault guard. See driver.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backends/drivers/driver.h"
#include "engine/plugins/fault_guard.h"
#include "engine/base/footprint.h"
#include "engine/ops_common/operand.h"

/* What run() gets in c->state for a claimed step. */
typedef struct driver_claim {
    eng_driver_rec *rec;
    void *state; /* the driver's */
} driver_claim;

/* A claimed step's cost to the model's footprint (footprint.h): the claim, and its
 * constant inputs, which a driver may keep a copy of (its own allocations are not seen). */
static void count_claim(const eng_op_ctx *c, driver_claim *claim) {
    eng_footprint_add_block(claim);
    for (uint32_t j = 0; j < c->n_in; j++) {
        const eng_tensor *t = c->in[j];
        if (t->data &&
            (t->lifetime == NND_CONSTANT_COPY || t->lifetime == NND_CONSTANT_REFERENCE)) {
            size_t n = eng_tensor_bytes(t);
            if (n != SIZE_MAX) eng_footprint_add((ssize_t)n);
        }
    }
}

/* A step's operands as a driver sees them; false for what no driver is offered
 * (extension or per-channel operands, ranks beyond the view). *handle: the device memory
 * of r holding the operand for this step (execute.c keeps it fresh), or 0. */
static bool describe(nnd_ext_operand *o, const eng_tensor *t, const eng_driver_rec *r, bool output,
                     uint64_t *handle) {
    memset(o, 0, sizeof *o);
    if (eng_ext_is_code(t->type) || t->channel_quant || t->rank > NND_EXT_MAX_RANK) return false;
    o->type = t->type;
    o->is_tensor = schema_type_is_tensor(t->type);
    o->element_size = (uint32_t)schema_type_size(t->type);
    o->rank = t->rank;
    memcpy(o->dims, t->dims, sizeof(uint32_t) * t->rank);
    o->scale = t->scale;
    o->zero_point = t->zero_point;
    o->data = t->data;
    o->length = t->bytes;
    o->is_constant = t->lifetime == NND_CONSTANT_COPY || t->lifetime == NND_CONSTANT_REFERENCE;
    o->omitted = t->lifetime == NND_NO_VALUE;
    *handle = 0;
    if (t->device == &r->backend &&
        !(t->device_sync & (output ? NND_HOST_ONLY : NND_DEVICE_STALE))) {
        *handle = t->device_handle;
        o->data = NULL;
    }
    return true;
}

enum {
    CALL_SUPPORTS,
    CALL_PREPARE,
    CALL_EXECUTE,
    CALL_RELEASE,
    CALL_ALLOCATE,
    CALL_FREE,
    CALL_READ,
    CALL_WRITE,
    CALL_SERIALIZE,
    CALL_DESERIALIZE
};
static const char *const call_names[] = {
    "supports",    "prepare",     "execute",      "release",   "memory_allocate",
    "memory_free", "memory_read", "memory_write", "serialize", "deserialize"};

typedef struct driver_call {
    const nnd_driver *d;
    int what;
    nnd_driver_step *step;
    void *state;                    /* execute, release, serialize */
    void *result;                   /* prepare, deserialize */
    uint64_t handle, offset, bytes; /* memory_*: bytes is also allocate's size */
    void *buf;                      /* memory_read, memory_write; serialize, deserialize */
    size_t cap;                     /* serialize, deserialize */
    size_t size;                    /* serialize's answer */
} driver_call;

static int invoke(void *arg) {
    driver_call *v = arg;
    switch (v->what) {
    case CALL_SUPPORTS: return v->d->supports(v->step) ? 1 : 0;
    case CALL_PREPARE: v->result = v->d->prepare(v->step); return 0;
    case CALL_EXECUTE: return v->d->execute(v->state, v->step);
    case CALL_ALLOCATE: v->handle = v->d->memory_allocate(v->bytes); return 0;
    case CALL_FREE: v->d->memory_free(v->handle); return 0;
    case CALL_READ: return v->d->memory_read(v->handle, v->offset, v->buf, (size_t)v->bytes);
    case CALL_WRITE: return v->d->memory_write(v->handle, v->offset, v->buf, (size_t)v->bytes);
    case CALL_SERIALIZE: v->size = v->d->serialize(v->state, v->buf, v->cap); return 0;
    case CALL_DESERIALIZE: v->result = v->d->deserialize(v->step, v->buf, v->cap); return 0;
    default: v->d->release(v->state); return 0;
    }
}

/* Runs one call into r's driver; -1 after a fault (logged, driver disabled). */
static int guarded(eng_driver_rec *r, driver_call *v, const char *op_name, uint32_t index) {
    int sig = 0;
    int rc = eng_fault_guarded(invoke, v, &sig);
    if (!sig) return rc;
    atomic_store(&r->faulted, true);
    if (op_name)
        eng_driver_logf(0, "driver %s (%s): %s in %s of %s #%u; the driver is disabled", r->name,
                        r->path, eng_fault_signal_name(sig), call_names[v->what], op_name, index);
    else
        eng_driver_logf(0, "driver %s (%s): %s in %s; the driver is disabled", r->name, r->path,
                        eng_fault_signal_name(sig), call_names[v->what]);
    return -1;
}

/* Builds the step of r for c into ops and handles (n_in + n_out entries each); false when
 * no driver may see it. */
static bool make_step(const eng_driver_rec *r, const eng_op_ctx *c, nnd_ext_operand *ops,
                      uint64_t *handles, nnd_driver_step *s, char *msg, size_t msglen) {
    if (eng_ext_is_code(c->def->code)) return false;
    for (uint32_t j = 0; j < c->n_in; j++)
        if (!describe(&ops[j], c->in[j], r, false, &handles[j])) return false;
    for (uint32_t j = 0; j < c->n_out; j++)
        if (!describe(&ops[c->n_in + j], c->out[j], r, true, &handles[c->n_in + j])) return false;
    *s = (nnd_driver_step){.operation = c->def->code,
                           .index = c->index,
                           .n_inputs = c->n_in,
                           .n_outputs = c->n_out,
                           .inputs = ops,
                           .outputs = ops + c->n_in,
                           .relaxed = c->relaxed,
                           .err = msg,
                           .errlen = msglen,
                           .input_memory = handles,
                           .output_memory = handles + c->n_in};
    return true;
}

#define SMALL 16

static bool supports(eng_driver_rec *r, const eng_op_ctx *c) {
    if (atomic_load(&r->faulted) || c->n_in + c->n_out > SMALL) return false;
    nnd_ext_operand ops[SMALL];
    uint64_t handles[SMALL];
    nnd_driver_step s;
    char msg[8];
    if (!make_step(r, c, ops, handles, &s, msg, sizeof msg)) return false;
    driver_call v = {.d = r->d, .what = CALL_SUPPORTS, .step = &s};
    return guarded(r, &v, c->def->name, c->index) == 1;
}

static bool driver_supports(eng_op_ctx *c) {
    return supports(c->state, c);
}

static void *driver_claim_step(eng_op_ctx *c, bool last) {
    (void)last;
    eng_driver_rec *r = c->state;
    if (!supports(r, c)) return NULL;
    nnd_ext_operand ops[SMALL];
    uint64_t handles[SMALL];
    nnd_driver_step s;
    char msg[8];
    if (!make_step(r, c, ops, handles, &s, msg, sizeof msg)) return NULL;
    driver_claim *claim = malloc(sizeof *claim);
    if (!claim) return NULL;
    driver_call v = {.d = r->d, .what = CALL_PREPARE, .step = &s};
    if (guarded(r, &v, c->def->name, c->index) < 0 || !v.result) {
        free(claim);
        return NULL;
    }
    claim->rec = r;
    claim->state = v.result;
    count_claim(c, claim);
    return claim;
}

static schema_status driver_run(eng_op_ctx *c) {
    driver_claim *claim = c->state;
    eng_driver_rec *r = claim->rec;
    if (atomic_load(&r->faulted)) {
        schema_errf(c->err, c->errlen, "%s #%u: driver %s is disabled after a fault", c->def->name,
                    c->index, r->name);
        return NND_GENERAL_FAILURE;
    }
    nnd_ext_operand ops[SMALL];
    uint64_t handles[SMALL];
    nnd_driver_step s;
    char msg[NND_ERR_LEN] = "";
    if (!make_step(r, c, ops, handles, &s, msg, sizeof msg)) { /* claimed steps always fit */
        schema_errf(c->err, c->errlen, "%s #%u: not a step for driver %s", c->def->name, c->index,
                    r->name);
        return NND_GENERAL_FAILURE;
    }
    driver_call v = {.d = r->d, .what = CALL_EXECUTE, .step = &s, .state = claim->state};
    int rc = guarded(r, &v, c->def->name, c->index);
    msg[sizeof msg - 1] = '\0';
    if (rc == 0) return NND_OK;
    if (rc < 0)
        schema_errf(c->err, c->errlen, "%s #%u: driver %s faulted and is disabled", c->def->name,
                    c->index, r->name);
    else
        schema_errf(c->err, c->errlen, "%s #%u on %s: %s", c->def->name, c->index, r->name,
                    *msg ? msg : "the driver failed");
    return NND_GENERAL_FAILURE;
}

static void driver_release(void *state) {
    driver_claim *claim = state;
    eng_driver_rec *r = claim->rec;
    driver_call v = {.d = r->d, .what = CALL_RELEASE, .state = claim->state};
    if (!atomic_load(&r->faulted)) guarded(r, &v, "a step", 0);
    free(claim);
}

/* ---- device memory ---------------------------------------------------------------- */

static eng_driver_rec *rec_of(const eng_backend *b) {
    return b->impl;
}

static uint64_t driver_mem_alloc(const eng_backend *b, uint64_t bytes) {
    eng_driver_rec *r = rec_of(b);
    driver_call v = {.d = r->d, .what = CALL_ALLOCATE, .bytes = bytes};
    if (atomic_load(&r->faulted) || guarded(r, &v, NULL, 0) < 0) return 0;
    return v.handle;
}

static void driver_mem_free(const eng_backend *b, uint64_t handle) {
    eng_driver_rec *r = rec_of(b);
    driver_call v = {.d = r->d, .what = CALL_FREE, .handle = handle};
    if (!atomic_load(&r->faulted)) guarded(r, &v, NULL, 0);
}

static schema_status mem_copy(const eng_backend *b, int what, uint64_t handle, uint64_t offset,
                              void *buf, size_t bytes, char *err, size_t errlen) {
    eng_driver_rec *r = rec_of(b);
    const char *verb = what == CALL_READ ? "reading" : "writing";
    if (atomic_load(&r->faulted))
        return schema_failf(err, errlen, NND_GENERAL_FAILURE,
                            "driver %s is disabled after a fault: its device memory is lost",
                            r->name);
    driver_call v = {
        .d = r->d, .what = what, .handle = handle, .offset = offset, .bytes = bytes, .buf = buf};
    int rc = guarded(r, &v, NULL, 0);
    if (rc == 0) return NND_OK;
    return schema_failf(err, errlen, NND_GENERAL_FAILURE,
                        "driver %s %s %zu bytes of its memory: %s", r->name, verb, bytes,
                        rc < 0 ? "faulted, the driver is disabled" : "failed");
}

static schema_status driver_mem_read(const eng_backend *b, uint64_t handle, uint64_t offset,
                                     void *dst, size_t bytes, char *err, size_t errlen) {
    return mem_copy(b, CALL_READ, handle, offset, dst, bytes, err, errlen);
}

static schema_status driver_mem_write(const eng_backend *b, uint64_t handle, uint64_t offset,
                                      const void *src, size_t bytes, char *err, size_t errlen) {
    return mem_copy(b, CALL_WRITE, handle, offset, (void *)src, bytes, err, errlen);
}

/* ---- cache blobs --------------------------------------------------------------------- */

static schema_status driver_serialize(const void *state, uint8_t **blob, size_t *len, char *err,
                                      size_t errlen) {
    const driver_claim *claim = state;
    eng_driver_rec *r = claim->rec;
    *blob = NULL;
    *len = 0;
    driver_call v = {.d = r->d, .what = CALL_SERIALIZE, .state = claim->state};
    if (atomic_load(&r->faulted) || guarded(r, &v, NULL, 0) < 0)
        return schema_failf(err, errlen, NND_GENERAL_FAILURE, "driver %s is disabled after a fault",
                            r->name);
    size_t need = v.size;
    if (!need || need > NND_DRIVER_BLOB_MAX)
        return schema_failf(err, errlen, NND_UNSUPPORTED, "driver %s gave no blob of a step state",
                            r->name);
    uint8_t *b = malloc(need);
    if (!b) return schema_failf(err, errlen, NND_GENERAL_FAILURE, "out of memory");
    v.buf = b;
    v.cap = need;
    if (guarded(r, &v, NULL, 0) < 0 || v.size != need) {
        free(b);
        return schema_failf(err, errlen, NND_GENERAL_FAILURE,
                            "driver %s changed its mind about a blob's size", r->name);
    }
    *blob = b;
    *len = need;
    return NND_OK;
}

static void *driver_claim_blob(eng_op_ctx *c, const uint8_t *blob, size_t len) {
    eng_driver_rec *r = c->state;
    if (atomic_load(&r->faulted)) {
        schema_errf(c->err, c->errlen, "%s #%u: driver %s is disabled after a fault", c->def->name,
                    c->index, r->name);
        return NULL;
    }
    nnd_ext_operand ops[SMALL];
    uint64_t handles[SMALL];
    nnd_driver_step s;
    char msg[8];
    if (c->n_in + c->n_out > SMALL || !make_step(r, c, ops, handles, &s, msg, sizeof msg)) {
        schema_errf(c->err, c->errlen, "%s #%u: not a step for driver %s", c->def->name, c->index,
                    r->name);
        return NULL;
    }
    driver_claim *claim = malloc(sizeof *claim);
    if (!claim) return NULL;
    driver_call v = {
        .d = r->d, .what = CALL_DESERIALIZE, .step = &s, .buf = (void *)blob, .cap = len};
    int rc = guarded(r, &v, c->def->name, c->index);
    if (rc < 0 || !v.result) {
        free(claim);
        schema_errf(c->err, c->errlen, "%s #%u: driver %s %s its cache blob", c->def->name,
                    c->index, r->name, rc < 0 ? "faulted (and is disabled) reading" : "refused");
        return NULL;
    }
    claim->rec = r;
    claim->state = v.result;
    count_claim(c, claim);
    return claim;
}

void eng_driver_backend_init(eng_driver_rec *r) {
    r->backend = (eng_backend){.name = r->name,
                               .claim = driver_claim_step,
                               .run = driver_run,
                               .release = driver_release,
                               .float32_operand = NULL,
                               .supports = driver_supports,
                               .impl = r};
    if (r->has_memory) {
        r->backend.mem_alloc = driver_mem_alloc;
        r->backend.mem_free = driver_mem_free;
        r->backend.mem_read = driver_mem_read;
        r->backend.mem_write = driver_mem_write;
    }
    if (r->has_blobs) {
        r->backend.serialize = driver_serialize;
        r->backend.claim_blob = driver_claim_blob;
    }
    atomic_init(&r->faulted, false);
}

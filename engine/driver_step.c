/* driver_step.c: a loaded driver as an engine backend (backend.h): the step views a driver
 * gets, and every call into it under the fault guard. See driver.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "fault_guard.h"

/* What run() gets in c->state for a claimed step. */
typedef struct driver_claim {
    nnd_driver_rec *rec;
    void *state; /* the driver's */
} driver_claim;

/* A step's operands as a driver sees them; false for what no driver is offered
 * (extension or per-channel operands, ranks beyond the view). */
static bool describe(nnd_ext_operand *o, const nnd_tensor *t) {
    memset(o, 0, sizeof *o);
    if (nnd_ext_is_code(t->type) || t->channel_quant || t->rank > NND_EXT_MAX_RANK) return false;
    o->type = t->type;
    o->is_tensor = nnd_type_is_tensor(t->type);
    o->element_size = (uint32_t)nnd_type_size(t->type);
    o->rank = t->rank;
    memcpy(o->dims, t->dims, sizeof(uint32_t) * t->rank);
    o->scale = t->scale;
    o->zero_point = t->zero_point;
    o->data = t->data;
    o->length = t->bytes;
    o->is_constant = t->lifetime == NND_CONSTANT_COPY || t->lifetime == NND_CONSTANT_REFERENCE;
    o->omitted = t->lifetime == NND_NO_VALUE;
    return true;
}

enum { CALL_SUPPORTS, CALL_PREPARE, CALL_EXECUTE, CALL_RELEASE };
static const char *const call_names[] = {"supports", "prepare", "execute", "release"};

typedef struct driver_call {
    const nnd_driver *d;
    int what;
    nnd_driver_step *step;
    void *state;  /* execute, release */
    void *result; /* prepare */
} driver_call;

static int invoke(void *arg) {
    driver_call *v = arg;
    switch (v->what) {
    case CALL_SUPPORTS: return v->d->supports(v->step) ? 1 : 0;
    case CALL_PREPARE: v->result = v->d->prepare(v->step); return 0;
    case CALL_EXECUTE: return v->d->execute(v->state, v->step);
    default: v->d->release(v->state); return 0;
    }
}

/* Runs one call into r's driver; -1 after a fault (logged, driver disabled). */
static int guarded(nnd_driver_rec *r, driver_call *v, const char *op_name, uint32_t index) {
    int sig = 0;
    int rc = nnd_fault_guarded(invoke, v, &sig);
    if (!sig) return rc;
    atomic_store(&r->faulted, true);
    nnd_driver_logf(0, "driver %s (%s): %s in %s of %s #%u; the driver is disabled", r->name,
                    r->path, nnd_fault_signal_name(sig), call_names[v->what], op_name, index);
    return -1;
}

/* Builds the step for c into ops (n_in + n_out entries); false when no driver may see it. */
static bool make_step(const nnd_op_ctx *c, nnd_ext_operand *ops, nnd_driver_step *s, char *msg,
                      size_t msglen) {
    if (nnd_ext_is_code(c->def->code)) return false;
    for (uint32_t j = 0; j < c->n_in; j++)
        if (!describe(&ops[j], c->in[j])) return false;
    for (uint32_t j = 0; j < c->n_out; j++)
        if (!describe(&ops[c->n_in + j], c->out[j])) return false;
    *s = (nnd_driver_step){.operation = c->def->code,
                           .index = c->index,
                           .n_inputs = c->n_in,
                           .n_outputs = c->n_out,
                           .inputs = ops,
                           .outputs = ops + c->n_in,
                           .relaxed = c->relaxed,
                           .err = msg,
                           .errlen = msglen};
    return true;
}

#define SMALL 16

static bool supports(nnd_driver_rec *r, const nnd_op_ctx *c) {
    if (atomic_load(&r->faulted) || c->n_in + c->n_out > SMALL) return false;
    nnd_ext_operand ops[SMALL];
    nnd_driver_step s;
    char msg[8];
    if (!make_step(c, ops, &s, msg, sizeof msg)) return false;
    driver_call v = {.d = r->d, .what = CALL_SUPPORTS, .step = &s};
    return guarded(r, &v, c->def->name, c->index) == 1;
}

static bool driver_supports(nnd_op_ctx *c) {
    return supports(c->state, c);
}

static void *driver_claim_step(nnd_op_ctx *c, bool last) {
    (void)last;
    nnd_driver_rec *r = c->state;
    if (!supports(r, c)) return NULL;
    nnd_ext_operand ops[SMALL];
    nnd_driver_step s;
    char msg[8];
    if (!make_step(c, ops, &s, msg, sizeof msg)) return NULL;
    driver_claim *claim = malloc(sizeof *claim);
    if (!claim) return NULL;
    driver_call v = {.d = r->d, .what = CALL_PREPARE, .step = &s};
    if (guarded(r, &v, c->def->name, c->index) < 0 || !v.result) {
        free(claim);
        return NULL;
    }
    claim->rec = r;
    claim->state = v.result;
    return claim;
}

static nnd_status driver_run(nnd_op_ctx *c) {
    driver_claim *claim = c->state;
    nnd_driver_rec *r = claim->rec;
    if (atomic_load(&r->faulted)) {
        nnd_errf(c->err, c->errlen, "%s #%u: driver %s is disabled after a fault", c->def->name,
                 c->index, r->name);
        return NND_GENERAL_FAILURE;
    }
    nnd_ext_operand ops[SMALL];
    nnd_driver_step s;
    char msg[NND_ERR_LEN] = "";
    if (!make_step(c, ops, &s, msg, sizeof msg)) { /* claimed steps always fit */
        nnd_errf(c->err, c->errlen, "%s #%u: not a step for driver %s", c->def->name, c->index,
                 r->name);
        return NND_GENERAL_FAILURE;
    }
    driver_call v = {.d = r->d, .what = CALL_EXECUTE, .step = &s, .state = claim->state};
    int rc = guarded(r, &v, c->def->name, c->index);
    msg[sizeof msg - 1] = '\0';
    if (rc == 0) return NND_OK;
    if (rc < 0)
        nnd_errf(c->err, c->errlen, "%s #%u: driver %s faulted and is disabled", c->def->name,
                 c->index, r->name);
    else
        nnd_errf(c->err, c->errlen, "%s #%u on %s: %s", c->def->name, c->index, r->name,
                 *msg ? msg : "the driver failed");
    return NND_GENERAL_FAILURE;
}

static void driver_release(void *state) {
    driver_claim *claim = state;
    nnd_driver_rec *r = claim->rec;
    driver_call v = {.d = r->d, .what = CALL_RELEASE, .state = claim->state};
    if (!atomic_load(&r->faulted)) guarded(r, &v, "a step", 0);
    free(claim);
}

void nnd_driver_backend_init(nnd_driver_rec *r) {
    r->backend = (nnd_backend){.name = r->name,
                               .claim = driver_claim_step,
                               .run = driver_run,
                               .release = driver_release,
                               .float32_operand = NULL,
                               .supports = driver_supports,
                               .impl = r};
    atomic_init(&r->faulted, false);
}

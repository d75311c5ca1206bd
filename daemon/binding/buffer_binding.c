/* SPDX-License-Identifier: Apache-2.0 */
/* buffer_binding.c: a request's driver-buffer arguments bound for one execution, then
 * regrown and finished (buffer.h, "Executions"): which buffer each pool names, the roles
 * and conflicts of the arguments, access taken all or nothing. What each argument does to
 * its own buffer is buffer.c's (buffer_internal.h). */
#include <stdlib.h>

#include "daemon/binding/buffer.h"
#include "daemon/binding/buffer_internal.h"

typedef struct bound {
    srv_buffer *b;
    bool read, write; /* named by an input, by an output */
    bool held;        /* access taken */
    int32_t output;   /* the output writing it, or -1 */
} bound;

struct srv_buffer_binding {
    size_t n; /* distinct buffers */
    bound *e;
    uint32_t n_outputs;
    int32_t *out_entry; /* per output: index into e, or -1 */
    bool regrown;
    schema_status grow_st; /* a growth the account refused, for srv_buffers_finish() */
    char grow_err[SCHEMA_ERR_LEN];
};

static void binding_free(srv_buffer_binding *bb) {
    for (size_t i = 0; i < bb->n; i++) {
        if (bb->e[i].held) srv_buffer_end(bb->e[i].b, bb->e[i].write);
        srv_buffer_unref(bb->e[i].b);
    }
    free(bb->e);
    free(bb->out_entry);
    free(bb);
}

/* Points argument i's io at its buffer's bytes. Called with access held. */
static schema_status bind_io(const bound *e, const eng_prepared *p, uint32_t i, bool output,
                             eng_io *io, char *err, size_t errlen) {
    if (!output) return srv_buffer_bind_input(e->b, i, io, err, errlen);
    return srv_buffer_bind_output(e->b, eng_prepared_output(p, i), i, e->read, io, err, errlen);
}

/* Argument k of r (its inputs, then its outputs): whether an output, its index, and the
 * binding entry of the driver buffer its pool names, or -1 when it names none. */
static int32_t arg_entry(const Nnd__ExecutionRequest *r, const int32_t *pool_entry, size_t k,
                         bool *output, uint32_t *i, const Nnd__RequestArgument **arg) {
    *output = k >= r->n_inputs;
    *i = (uint32_t)(*output ? k - r->n_inputs : k);
    const Nnd__RequestArgument *a = *arg = *output ? r->outputs[*i] : r->inputs[*i];
    if (a->has_no_value || !a->location || a->location->pool_index >= r->n_pools) return -1;
    return pool_entry[a->location->pool_index];
}

schema_status srv_buffers_bind(const struct srv_session *owner, uint64_t model,
                               const eng_prepared *p, const Nnd__ExecutionRequest *r,
                               eng_io *inputs, eng_io *outputs, srv_buffer_binding **out, char *err,
                               size_t errlen) {
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < r->n_pools; i++)
        n += r->pools[i] && r->pools[i]->kind == NND__POOL_KIND__POOL_DRIVER_BUFFER;
    if (!n) return SCHEMA_OK; /* the common case costs one pass over the pools */

    srv_buffer_binding *bb = calloc(1, sizeof *bb);
    int32_t *pool_entry = calloc(r->n_pools, sizeof *pool_entry);
    if (bb) {
        bb->e = calloc(n, sizeof *bb->e);
        bb->out_entry = calloc(r->n_outputs + 1, sizeof *bb->out_entry);
        bb->n_outputs = (uint32_t)r->n_outputs;
    }
    if (!bb || !pool_entry || !bb->e || !bb->out_entry) {
        if (bb) binding_free(bb);
        free(pool_entry);
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory");
    }
    schema_status st = SCHEMA_OK;
    for (size_t i = 0; i < r->n_pools && st == SCHEMA_OK; i++) {
        pool_entry[i] = -1;
        if (!r->pools[i] || r->pools[i]->kind != NND__POOL_KIND__POOL_DRIVER_BUFFER) continue;
        srv_buffer *b = srv_buffer_find(r->pools[i]->token, owner);
        if (!b) {
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "pool %zu: token 0x%016llx names no buffer of this client", i,
                              (unsigned long long)r->pools[i]->token);
            break;
        }
        size_t k = 0;
        while (k < bb->n && bb->e[k].b != b)
            k++;
        if (k < bb->n) {
            srv_buffer_unref(b); /* the same buffer again, through another pool */
        } else {
            bb->e[bb->n++] = (bound){.b = b, .output = -1};
        }
        pool_entry[i] = (int32_t)k;
    }
    for (size_t i = 0; i < r->n_outputs; i++)
        bb->out_entry[i] = -1;
    /* Which buffer each argument names, against the roles it was allocated for. */
    for (size_t k = 0; k < r->n_inputs + r->n_outputs && st == SCHEMA_OK; k++) {
        bool output;
        uint32_t i;
        const Nnd__RequestArgument *a;
        int32_t at = arg_entry(r, pool_entry, k, &output, &i, &a);
        if (at < 0) continue;
        bound *e = &bb->e[at];
        if (!srv_buffer_has_role(e->b, model, i, output)) {
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "%s %u: the buffer in pool %u was not allocated for %s %u of this "
                              "prepared model",
                              output ? "output" : "input", i, a->location->pool_index,
                              output ? "output" : "input", i);
        } else if (output && e->output >= 0) {
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                              "outputs %d and %u both write the buffer in pool %u", e->output, i,
                              a->location->pool_index);
        } else if (output) {
            e->write = true;
            e->output = (int32_t)i;
            bb->out_entry[i] = at;
        } else {
            e->read = true;
        }
    }
    for (size_t k = 0; k < bb->n && st == SCHEMA_OK; k++) {
        bound *e = &bb->e[k];
        if (!e->read && !e->write) continue;
        st = srv_buffer_begin(e->b, e->write, e->read, err, errlen);
        e->held = st == SCHEMA_OK;
    }
    for (size_t k = 0; k < r->n_inputs + r->n_outputs && st == SCHEMA_OK; k++) {
        bool output;
        uint32_t i;
        const Nnd__RequestArgument *a;
        int32_t at = arg_entry(r, pool_entry, k, &output, &i, &a);
        if (at >= 0)
            st = bind_io(&bb->e[at], p, i, output, output ? &outputs[i] : &inputs[i], err, errlen);
    }
    free(pool_entry);
    if (st != SCHEMA_OK) {
        binding_free(bb);
        return st;
    }
    *out = bb;
    return SCHEMA_OK;
}

bool srv_buffers_regrow(srv_buffer_binding *bb, const eng_output_shape *shapes, eng_io *outputs) {
    if (!bb || bb->regrown) return false;
    bb->regrown = true;
    bool all = true;
    for (uint32_t i = 0; i < bb->n_outputs && all; i++) {
        if (shapes[i].sufficient) continue;
        int32_t at = bb->out_entry[i];
        if (at < 0) return false; /* the client's memory: only the client can fix it */
        bound *e = &bb->e[at];
        all = srv_buffer_regrow_output(e->b, e->read, &shapes[i], &outputs[i], &bb->grow_st,
                                       bb->grow_err, sizeof bb->grow_err);
    }
    return all;
}

void srv_buffers_finish(srv_buffer_binding *bb, bool ran, schema_status *st,
                        const eng_output_shape *shapes, char *err, size_t errlen) {
    if (!bb) return;
    for (uint32_t i = 0; i < bb->n_outputs; i++) {
        int32_t at = bb->out_entry[i];
        if (at < 0 || !bb->e[at].held) continue;
        bound *e = &bb->e[at];
        e->held = false;
        if (!ran) {
            srv_buffer_end(e->b, true);
            continue;
        }
        if (*st == SCHEMA_OUTPUT_INSUFFICIENT_SIZE && !shapes[i].sufficient && bb->grow_st) {
            /* It could have grown, but whoever pays for it refused. */
            *st = schema_failf(err, errlen, bb->grow_st, "output %u: %s", i, bb->grow_err);
        } else if (*st == SCHEMA_OUTPUT_INSUFFICIENT_SIZE && !shapes[i].sufficient) {
            /* The client cannot resize a driver buffer: as the HAL says, a failure. */
            *st = schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                               "output %u: its driver buffer is too small for the result", i);
        }
        srv_buffer_end_output(e->b, i, &shapes[i], st, err, errlen);
    }
    binding_free(bb);
}

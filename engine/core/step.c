/* SPDX-License-Identifier: Apache-2.0 */
/* step.c: a plan's step as a backend sees it when it is offered the step (internal.h:
 * eng_step_offerable, eng_step_ctx, eng_step_take, shared by preparation and driver
 * partitions), and what a step costs: its cost seed, floating-point operations and bytes
 * moved (eng_prepared_step_cost, engine.h), for the scheduler's first estimate, and the cost
 * of one pass of a plan (eng_flow_pass_cost, flow.h), which control flow steps count. */
#include "engine/backend.h"
#include "engine/core/flow.h"
#include "engine/core/internal.h"

/* ---- a step offered to a backend ---- */

bool eng_step_offerable(const eng_step *st) {
    return st->n_in <= ENG_STEP_MAX_IN && st->n_out <= ENG_STEP_MAX_OUT && !st->sub[0];
}

eng_op_ctx eng_step_ctx(const eng_prepared *p, const eng_step *st, const eng_backend *be,
                        eng_tensor **in, eng_tensor **out, char *err, size_t errlen) {
    for (uint32_t j = 0; j < st->n_in; j++)
        in[j] = &p->tensors[st->in[j]];
    for (uint32_t j = 0; j < st->n_out; j++)
        out[j] = &p->tensors[st->out[j]];
    return (eng_op_ctx){.def = st->def,
                        .index = st->index,
                        .in = in,
                        .n_in = st->n_in,
                        .out = out,
                        .n_out = st->n_out,
                        .relaxed = p->relaxed,
                        .state = be->impl,
                        .err = err,
                        .errlen = errlen};
}

void eng_step_take(eng_step *st, const eng_backend *be, void *state) {
    st->run = be->run;
    st->backend = be;
    st->state = state;
}

/* ---- what a step costs ---- */

static double elements(const eng_tensor *t) {
    double n = 1;
    for (uint32_t r = 0; r < t->rank; r++)
        n *= t->dims[r] ? t->dims[r] : 1;
    return n;
}

static bool recurrent(int32_t code) {
    switch (code) {
    case SCHEMA_OP_LSTM:
    case SCHEMA_OP_RNN:
    case SCHEMA_OP_SVDF:
    case SCHEMA_OP_QUANTIZED_16BIT_LSTM:
    case SCHEMA_OP_BIDIRECTIONAL_SEQUENCE_LSTM:
    case SCHEMA_OP_BIDIRECTIONAL_SEQUENCE_RNN:
    case SCHEMA_OP_UNIDIRECTIONAL_SEQUENCE_LSTM:
    case SCHEMA_OP_UNIDIRECTIONAL_SEQUENCE_RNN: return true;
    default: return false;
    }
}

eng_cost eng_prepared_step_cost(const eng_prepared *p, uint32_t k) {
    eng_cost c = {0, 0};
    if (k >= p->n_steps) return c;
    const eng_step *st = &p->steps[k];
    if (st->sub[0]) { /* IF: the larger branch; WHILE: one iteration */
        const eng_prepared *a = st->sub[0], *b = st->sub[1];
        bool loop = st->def->code == SCHEMA_OP_WHILE;
        c.flops = loop ? a->pass_flops + b->pass_flops
                       : (a->pass_flops > b->pass_flops ? a->pass_flops : b->pass_flops);
        c.bytes = loop ? a->pass_bytes + b->pass_bytes
                       : (a->pass_bytes > b->pass_bytes ? a->pass_bytes : b->pass_bytes);
        return c;
    }
    double in_max = 0, out = 0;
    for (uint32_t j = 0; j < st->n_in; j++) {
        const eng_tensor *t = &p->tensors[st->in[j]];
        if (t->lifetime == SCHEMA_NO_VALUE) continue;
        double n = elements(t);
        c.bytes += n * (double)schema_type_size(t->type);
        if (n > in_max) in_max = n;
    }
    for (uint32_t j = 0; j < st->n_out; j++) {
        const eng_tensor *t = &p->tensors[st->out[j]];
        double n = elements(t);
        c.bytes += n * (double)schema_type_size(t->type);
        out += n;
    }
    /* Element-wise work by default; multiply-adds per output for the filter operations. */
    c.flops = in_max > out ? in_max : out;
    const eng_tensor *w = st->n_in > 1 ? &p->tensors[st->in[1]] : NULL;
    switch (st->def->code) {
    case SCHEMA_OP_CONV_2D:
    case SCHEMA_OP_GROUPED_CONV_2D:
        if (w->rank == 4) c.flops = 2.0 * out * w->dims[1] * w->dims[2] * w->dims[3];
        break;
    case SCHEMA_OP_TRANSPOSE_CONV_2D:
        if (w->rank == 4) c.flops = 2.0 * in_max * w->dims[0] * w->dims[1] * w->dims[2];
        break;
    case SCHEMA_OP_DEPTHWISE_CONV_2D:
        if (w->rank == 4) c.flops = 2.0 * out * w->dims[1] * w->dims[2];
        break;
    case SCHEMA_OP_FULLY_CONNECTED:
        if (w->rank == 2) c.flops = 2.0 * out * w->dims[1];
        break;
    default:
        if (!recurrent(st->def->code)) break;
        /* Every weight matrix is applied once per batch row and time step. */
        const eng_tensor *x = &p->tensors[st->in[0]];
        double rows = x->rank >= 3 ? elements(x) / (x->dims[x->rank - 1] ? x->dims[x->rank - 1] : 1)
                                   : (x->rank ? (x->dims[0] ? x->dims[0] : 1) : 1);
        for (uint32_t j = 1; j < st->n_in; j++) {
            const eng_tensor *t = &p->tensors[st->in[j]];
            if (t->rank == 2 && t->lifetime != SCHEMA_NO_VALUE) c.flops += 2.0 * rows * elements(t);
        }
    }
    return c;
}

void eng_flow_pass_cost(eng_prepared *p) {
    if (p->pass_known) return;
    double flops = 0, bytes = 0;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        eng_cost c = eng_prepared_step_cost(p, k);
        flops += c.flops;
        bytes += c.bytes;
    }
    p->pass_flops = flops;
    p->pass_bytes = bytes;
    p->pass_known = true;
}

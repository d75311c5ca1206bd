/* SPDX-License-Identifier: Apache-2.0 */
/* flow_plan.c: what preparation knows of IF and WHILE: their output shapes where the
 * subgraphs fix them, and the cost of one pass of a plan; and one step's cost seed
 * (eng_prepared_step_cost, engine.h) that a pass adds up. See flow.h. */
#include <string.h>

#include "engine/core/flow.h"

static bool same_shape(const eng_tensor *a, const eng_tensor *b) {
    return a->known && b->known && a->rank == b->rank &&
           !memcmp(a->dims, b->dims, sizeof(uint32_t) * a->rank);
}

static void set_shape(eng_tensor *t, const eng_tensor *from) {
    t->rank = from->rank;
    memcpy(t->dims, from->dims, sizeof t->dims);
}

schema_status eng_flow_shape(const eng_prepared *p, const eng_step *st, eng_tensor **out) {
    const eng_prepared *a = st->sub[0], *b = st->sub[1];
    for (uint32_t j = 0; j < st->n_out; j++) {
        if (st->def->code == NND_OP_IF) {
            /* Both branches give the same shape: the IF's output has it whichever runs. */
            const eng_tensor *x = &a->tensors[a->outputs[j]], *y = &b->tensors[b->outputs[j]];
            if (!same_shape(x, y)) return NND_DEFER;
            set_shape(out[j], x);
        } else {
            /* The body keeps a carried value's shape: the loop ends with the one it began. */
            const eng_tensor *x = &p->tensors[st->in[2 + j]], *y = &b->tensors[b->outputs[j]];
            if (!same_shape(x, y)) return NND_DEFER;
            set_shape(out[j], x);
        }
    }
    return NND_OK;
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

/* ---- one step's cost seed (engine.h), for a pass above and the scheduler ------------ */

static double elements(const eng_tensor *t) {
    double n = 1;
    for (uint32_t r = 0; r < t->rank; r++)
        n *= t->dims[r] ? t->dims[r] : 1;
    return n;
}

static bool recurrent(int32_t code) {
    switch (code) {
    case NND_OP_LSTM:
    case NND_OP_RNN:
    case NND_OP_SVDF:
    case NND_OP_QUANTIZED_16BIT_LSTM:
    case NND_OP_BIDIRECTIONAL_SEQUENCE_LSTM:
    case NND_OP_BIDIRECTIONAL_SEQUENCE_RNN:
    case NND_OP_UNIDIRECTIONAL_SEQUENCE_LSTM:
    case NND_OP_UNIDIRECTIONAL_SEQUENCE_RNN: return true;
    default: return false;
    }
}

eng_cost eng_prepared_step_cost(const eng_prepared *p, uint32_t k) {
    eng_cost c = {0, 0};
    if (k >= p->n_steps) return c;
    const eng_step *st = &p->steps[k];
    if (st->sub[0]) { /* IF: the larger branch; WHILE: one iteration */
        const eng_prepared *a = st->sub[0], *b = st->sub[1];
        bool loop = st->def->code == NND_OP_WHILE;
        c.flops = loop ? a->pass_flops + b->pass_flops
                       : (a->pass_flops > b->pass_flops ? a->pass_flops : b->pass_flops);
        c.bytes = loop ? a->pass_bytes + b->pass_bytes
                       : (a->pass_bytes > b->pass_bytes ? a->pass_bytes : b->pass_bytes);
        return c;
    }
    double in_max = 0, out = 0;
    for (uint32_t j = 0; j < st->n_in; j++) {
        const eng_tensor *t = &p->tensors[st->in[j]];
        if (t->lifetime == NND_NO_VALUE) continue;
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
    case NND_OP_CONV_2D:
    case NND_OP_GROUPED_CONV_2D:
        if (w->rank == 4) c.flops = 2.0 * out * w->dims[1] * w->dims[2] * w->dims[3];
        break;
    case NND_OP_TRANSPOSE_CONV_2D:
        if (w->rank == 4) c.flops = 2.0 * in_max * w->dims[0] * w->dims[1] * w->dims[2];
        break;
    case NND_OP_DEPTHWISE_CONV_2D:
        if (w->rank == 4) c.flops = 2.0 * out * w->dims[1] * w->dims[2];
        break;
    case NND_OP_FULLY_CONNECTED:
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
            if (t->rank == 2 && t->lifetime != NND_NO_VALUE) c.flops += 2.0 * rows * elements(t);
        }
    }
    return c;
}

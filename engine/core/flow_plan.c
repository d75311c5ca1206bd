/* SPDX-License-Identifier: Apache-2.0 */
/* flow_plan.c: what preparation knows of IF and WHILE: their output shapes where the
 * subgraphs fix them, and the cost of one pass of a plan. See flow.h. */
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

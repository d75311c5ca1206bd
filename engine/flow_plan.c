/* flow_plan.c: what preparation knows of IF and WHILE: their output shapes where the
 * subgraphs fix them, and the cost of one pass of a plan. See flow.h. */
#include <string.h>

#include "flow.h"

static bool same_shape(const nnd_tensor *a, const nnd_tensor *b) {
    return a->known && b->known && a->rank == b->rank &&
           !memcmp(a->dims, b->dims, sizeof(uint32_t) * a->rank);
}

static void set_shape(nnd_tensor *t, const nnd_tensor *from) {
    t->rank = from->rank;
    memcpy(t->dims, from->dims, sizeof t->dims);
}

nnd_status nnd_flow_shape(const nnd_prepared *p, const nnd_step *st, nnd_tensor **out) {
    const nnd_prepared *a = st->sub[0], *b = st->sub[1];
    for (uint32_t j = 0; j < st->n_out; j++) {
        if (st->def->code == NND_OP_IF) {
            /* Both branches give the same shape: the IF's output has it whichever runs. */
            const nnd_tensor *x = &a->tensors[a->outputs[j]], *y = &b->tensors[b->outputs[j]];
            if (!same_shape(x, y)) return NND_DEFER;
            set_shape(out[j], x);
        } else {
            /* The body keeps a carried value's shape: the loop ends with the one it began. */
            const nnd_tensor *x = &p->tensors[st->in[2 + j]], *y = &b->tensors[b->outputs[j]];
            if (!same_shape(x, y)) return NND_DEFER;
            set_shape(out[j], x);
        }
    }
    return NND_OK;
}

void nnd_flow_pass_cost(nnd_prepared *p) {
    if (p->pass_known) return;
    double flops = 0, bytes = 0;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        nnd_cost c = nnd_prepared_step_cost(p, k);
        flops += c.flops;
        bytes += c.bytes;
    }
    p->pass_flops = flops;
    p->pass_bytes = bytes;
    p->pass_known = true;
}

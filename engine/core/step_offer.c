/* SPDX-License-Identifier: Apache-2.0 */
/* step_offer.c: a plan's step as a backend sees it when it is offered the step (internal.h:
 * eng_step_offerable, eng_step_ctx, eng_step_take), shared by preparation (prepare.c) and
 * driver partitions (backends/drivers/partition.h). */
#include "engine/backend.h"
#include "engine/core/internal.h"

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

/* SPDX-License-Identifier: Apache-2.0 */
/* fp16_region.c: see fp16_region.h. */
#include "engine/core/fp16_region.h"

#include <stdlib.h>

#include "engine/backend.h"

static bool takes_float(const eng_step *st, bool output, uint32_t j) {
    const eng_backend *b = st->backend;
    return b && b->float32_operand && b->float32_operand(st->state, output, j);
}

uint32_t eng_plan_fp16_regions(eng_prepared *p) {
    if (p->dynamic) return 0;
    bool *widen = malloc(sizeof(bool) * (p->n_operands + 1));
    if (!widen) return 0; /* every step still converts its own operands */
    for (uint32_t i = 0; i < p->n_operands; i++) {
        const eng_tensor *t = &p->tensors[i];
        widen[i] = t->lifetime == NND_TEMPORARY && t->type == NND_TENSOR_FLOAT16 && t->known;
    }
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        for (uint32_t j = 0; j < st->n_in; j++)
            widen[st->in[j]] &= takes_float(st, false, j);
        for (uint32_t j = 0; j < st->n_out; j++)
            widen[st->out[j]] &= takes_float(st, true, j);
    }
    uint32_t changed = 0;
    for (uint32_t i = 0; i < p->n_operands; i++)
        if (widen[i]) p->tensors[i].type = NND_TENSOR_FLOAT32, changed++;
    free(widen);
    return changed;
}

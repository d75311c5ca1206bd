/* SPDX-License-Identifier: Apache-2.0 */
/* prepared_bytes.c: what a prepared model holds and what preparing a model copies
 * (eng_prepared_bytes, eng_model_copy_bytes: engine.h), counted from the plan; what its
 * backends allocated is the per-thread account of engine/base/footprint.h. */
#include "engine/core/internal.h"

/* One graph's plan, without its subplans. */
static size_t plan_bytes(const eng_prepared *p) {
    size_t n = sizeof *p, ops = (size_t)p->n_operands + 1, lists = 1, scales = 1, blobs = 1;
    n += ops *
         (sizeof *p->operands + sizeof *p->tensors + sizeof *p->slot + sizeof *p->channel_quant);
    for (uint32_t k = 0; k < p->n_steps; k++)
        lists += p->steps[k].n_in + p->steps[k].n_out;
    for (uint32_t i = 0; i < p->n_operands; i++) {
        const eng_operand_desc *o = &p->operands[i];
        scales += o->channel_quant.n_scales;
        blobs += o->extension_len;
    }
    n += (size_t)p->n_steps * sizeof *p->steps + lists * sizeof *p->operand_lists;
    n += ((size_t)p->n_inputs + p->n_outputs) * sizeof(uint32_t) + scales * sizeof(float);
    /* Plan-owned constants: CONSTANT_COPY ones, and references copied for alignment. */
    n += (size_t)(p->n_pools + 1) * sizeof *p->pools + p->constants_bytes + blobs;
    return n + p->backend_bytes;
}

size_t eng_prepared_bytes(const eng_prepared *p) {
    if (!p) return 0;
    size_t n = plan_bytes(p) + (size_t)p->n_subplans * sizeof *p->subplans;
    for (uint32_t i = 0; i < p->n_subplans; i++)
        n += plan_bytes(p->subplans[i]);
    return n;
}

/* One graph's constants a preparation copies (prepare.c: CONSTANT_COPY values, and
 * references misaligned for their element type); operands not yet validated count 0. */
static uint64_t graph_copies(const eng_model_desc *m) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const eng_operand_desc *o = &m->operands[i];
        if (o->lifetime == NND_CONSTANT_COPY) {
            n += o->length;
        } else if (o->lifetime == NND_CONSTANT_REFERENCE && o->pool < m->n_pools &&
                   o->offset <= m->pools[o->pool].size &&
                   o->length <= m->pools[o->pool].size - o->offset) {
            size_t align = schema_type_size(o->type);
            uintptr_t at = (uintptr_t)(m->pools[o->pool].base + o->offset);
            if (align > 1 && at % align) n += o->length;
        }
    }
    return n;
}

uint64_t eng_model_copy_bytes(const eng_model_desc *m) {
    uint64_t n = graph_copies(m);
    for (uint32_t r = 0; r < m->n_referenced; r++) {
        eng_model_desc g = eng_model_referenced(m, r);
        n += graph_copies(&g);
    }
    return n;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* sighting.c: model signatures and the table of those seen. See sighting.h. */
#include "daemon/cache/sighting.h"

#include <blake2.h>
#include <string.h>

#define SAMPLE       16 /* bytes at each of a constant's three places */
#define PROBE_WINDOW 8  /* slots a signature may occupy */

static void add(blake2b_state *b, const void *p, size_t n) {
    blake2b_update(b, p, n);
}

/* The constant's bytes, or NULL when they lie outside what the model holds. */
static const uint8_t *constant_at(const eng_model_desc *m, const eng_operand_desc *o) {
    if (o->lifetime == SCHEMA_CONSTANT_COPY)
        return o->offset <= m->operand_values_len && o->length <= m->operand_values_len - o->offset
                   ? m->operand_values + o->offset
                   : NULL;
    if (o->lifetime != SCHEMA_CONSTANT_REFERENCE || o->pool >= m->n_pools) return NULL;
    const eng_memory_view *v = &m->pools[o->pool];
    return v->base && o->offset <= v->size && o->length <= v->size - o->offset ? v->base + o->offset
                                                                               : NULL;
}

static void add_sample(blake2b_state *b, const uint8_t *p, uint64_t len) {
    if (len <= 3 * SAMPLE) {
        add(b, p, (size_t)len);
        return;
    }
    add(b, p, SAMPLE);
    add(b, p + len / 2, SAMPLE);
    add(b, p + len - SAMPLE, SAMPLE);
}

static void add_operand(blake2b_state *b, const eng_model_desc *m, const eng_operand_desc *o) {
    uint32_t rank = o->rank <= ENG_MAX_RANK ? o->rank : ENG_MAX_RANK;
    add(b, &o->type, sizeof o->type);
    add(b, &o->rank, sizeof o->rank);
    add(b, o->dims, sizeof *o->dims * rank);
    add(b, &o->scale, sizeof o->scale);
    add(b, &o->zero_point, sizeof o->zero_point);
    add(b, &o->lifetime, sizeof o->lifetime);
    add(b, &o->length, sizeof o->length);
    add(b, &o->channel_quant.n_scales, sizeof o->channel_quant.n_scales);
    const uint8_t *p = constant_at(m, o);
    if (p) add_sample(b, p, o->length);
}

static void add_list(blake2b_state *b, const uint32_t *v, uint32_t n) {
    add(b, &n, sizeof n);
    if (n) add(b, v, sizeof *v * n);
}

static void add_graph(blake2b_state *b, const eng_model_desc *m, const eng_subgraph_desc *g) {
    add(b, &g->n_operands, sizeof g->n_operands);
    add(b, &g->n_operations, sizeof g->n_operations);
    for (uint32_t i = 0; i < g->n_operands; i++)
        add_operand(b, m, &g->operands[i]);
    for (uint32_t k = 0; k < g->n_operations; k++) {
        const eng_operation_desc *op = &g->operations[k];
        add(b, &op->type, sizeof op->type);
        add_list(b, op->inputs, op->n_inputs);
        add_list(b, op->outputs, op->n_outputs);
    }
    add_list(b, g->inputs, g->n_inputs);
    add_list(b, g->outputs, g->n_outputs);
}

void srv_sighting_of(const eng_model_desc *m, uint8_t out[SRV_SIGHTING_LEN]) {
    blake2b_state b;
    blake2b_init(&b, SRV_SIGHTING_LEN);
    eng_subgraph_desc main = {m->n_operands, m->operands, m->n_operations, m->operations,
                              m->n_inputs,   m->inputs,   m->n_outputs,    m->outputs};
    add_graph(&b, m, &main);
    for (uint32_t r = 0; r < m->n_referenced; r++)
        add_graph(&b, m, &m->referenced[r]);
    uint8_t flags[2] = {m->relaxed, m->reference_only};
    add(&b, flags, sizeof flags);
    blake2b_final(&b, out, SRV_SIGHTING_LEN);
}

bool srv_sightings_seen(srv_sightings *s, const uint8_t sig[SRV_SIGHTING_LEN]) {
    uint64_t start;
    memcpy(&start, sig, sizeof start);
    struct srv_sighting *oldest = NULL;
    s->clock++;
    for (uint32_t i = 0; i < PROBE_WINDOW; i++) {
        struct srv_sighting *slot = &s->slots[(start + i) % SRV_SIGHTINGS_MAX];
        if (slot->seen && !memcmp(slot->sig, sig, SRV_SIGHTING_LEN)) {
            slot->seen = s->clock;
            return true;
        }
        if (!oldest || slot->seen < oldest->seen) oldest = slot;
    }
    memcpy(oldest->sig, sig, SRV_SIGHTING_LEN);
    oldest->seen = s->clock;
    return false;
}

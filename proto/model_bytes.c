/* SPDX-License-Identifier: Apache-2.0 */
/* model_bytes.c: see model_bytes.h. */
#include "proto/model_bytes.h"

static uint64_t add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t graph_bytes(const Nnd__Subgraph *g) {
    uint64_t n = 0;
    for (size_t i = 0; g && i < g->n_operands; i++) {
        const Nnd__Operand *o = g->operands[i];
        if (o && o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE && o->location)
            n = add_sat(n, o->location->length);
    }
    return n;
}

uint64_t proto_wire_constant_bytes(const Nnd__Model *m) {
    if (!m) return 0;
    uint64_t n = graph_bytes(m->main);
    for (size_t r = 0; r < m->n_referenced; r++)
        n = add_sat(n, graph_bytes(m->referenced[r]));
    return n;
}

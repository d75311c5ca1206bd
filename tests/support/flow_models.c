/* SPDX-License-Identifier: Apache-2.0 */
/* flow_models.c: wire models with control flow for the tests. See flow_models.h. */
#include "tests/support/flow_models.h"

#include <stdlib.h>
#include <string.h>

#include "schema/codes.h"

static void *grow(void *p, size_t n, size_t size) {
    void *q = realloc(p, n * size);
    if (!q) abort();
    return q;
}

static void *dup(const void *p, size_t len) {
    void *q = malloc(len ? len : 1);
    if (!q) abort();
    if (len) memcpy(q, p, len);
    return q;
}

Nnd__Model *flow_model_new(void) {
    Nnd__Model *m = malloc(sizeof *m);
    if (!m) abort();
    nnd__model__init(m);
    return m;
}

Nnd__Subgraph *flow_graph(Nnd__Model *m, uint32_t *ref) {
    Nnd__Subgraph *g = malloc(sizeof *g);
    if (!g) abort();
    nnd__subgraph__init(g);
    if (!ref) {
        m->main = g;
        return g;
    }
    m->referenced = grow(m->referenced, m->n_referenced + 1, sizeof *m->referenced);
    *ref = (uint32_t)m->n_referenced;
    m->referenced[m->n_referenced++] = g;
    return g;
}

uint32_t flow_operand(Nnd__Subgraph *g, int32_t type, uint32_t rank, const uint32_t *dims,
                      Nnd__OperandLifeTime lifetime) {
    Nnd__Operand *o = malloc(sizeof *o);
    if (!o) abort();
    nnd__operand__init(o);
    o->type = type;
    o->n_dimensions = rank;
    o->dimensions = dup(dims, sizeof(uint32_t) * rank);
    o->lifetime = lifetime;
    g->operands = grow(g->operands, g->n_operands + 1, sizeof *g->operands);
    g->operands[g->n_operands] = o;
    return (uint32_t)g->n_operands++;
}

static Nnd__DataLocation *location(Nnd__Operand *o) {
    o->location = malloc(sizeof *o->location);
    if (!o->location) abort();
    nnd__data_location__init(o->location);
    return o->location;
}

uint32_t flow_constant(Nnd__Model *m, Nnd__Subgraph *g, int32_t type, uint32_t rank,
                       const uint32_t *dims, const void *bytes, size_t len) {
    uint32_t i = flow_operand(g, type, rank, dims, NND__OPERAND_LIFE_TIME__CONSTANT_COPY);
    size_t at = (m->operand_values.len + 3) & ~(size_t)3;
    m->operand_values.data = grow(m->operand_values.data, at + len + 1, 1);
    memset(m->operand_values.data + m->operand_values.len, 0, at - m->operand_values.len);
    memcpy(m->operand_values.data + at, bytes, len);
    m->operand_values.len = at + len;
    Nnd__DataLocation *l = location(g->operands[i]);
    l->offset = at;
    l->length = len;
    return i;
}

uint32_t flow_reference(Nnd__Subgraph *g, uint32_t r) {
    uint32_t i = flow_operand(g, SCHEMA_SUBGRAPH_TYPE, 0, NULL, NND__OPERAND_LIFE_TIME__SUBGRAPH);
    location(g->operands[i])->offset = r;
    return i;
}

void flow_operation(Nnd__Subgraph *g, int32_t type, uint32_t n_in, const uint32_t *in,
                    uint32_t n_out, const uint32_t *out) {
    Nnd__Operation *op = malloc(sizeof *op);
    if (!op) abort();
    nnd__operation__init(op);
    op->type = type;
    op->n_inputs = n_in;
    op->inputs = dup(in, sizeof(uint32_t) * n_in);
    op->n_outputs = n_out;
    op->outputs = dup(out, sizeof(uint32_t) * n_out);
    g->operations = grow(g->operations, g->n_operations + 1, sizeof *g->operations);
    g->operations[g->n_operations++] = op;
}

void flow_io(Nnd__Subgraph *g, uint32_t n_in, const uint32_t *in, uint32_t n_out,
             const uint32_t *out) {
    free(g->input_indexes);
    free(g->output_indexes);
    g->n_input_indexes = n_in;
    g->input_indexes = dup(in, sizeof(uint32_t) * n_in);
    g->n_output_indexes = n_out;
    g->output_indexes = dup(out, sizeof(uint32_t) * n_out);
}

/* ---- the models ---------------------------------------------------------------------------- */

#define IN  NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT
#define OUT NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT

static const uint32_t one_dim[1] = {1};
static const int32_t no_activation = 0;

static uint32_t activation(Nnd__Model *m, Nnd__Subgraph *g) {
    return flow_constant(m, g, SCHEMA_INT32, 0, NULL, &no_activation, 4);
}

/* A condition subgraph: n_in inputs of the given kinds, output LESS(input i_at, input n_at). */
static uint32_t less_condition(Nnd__Model *m, const int32_t *types, const uint32_t *ranks,
                               const uint32_t *const *dims, uint32_t n_in, uint32_t i_at,
                               uint32_t n_at) {
    uint32_t r;
    Nnd__Subgraph *g = flow_graph(m, &r);
    uint32_t ins[8];
    for (uint32_t k = 0; k < n_in; k++)
        ins[k] = flow_operand(g, types[k], ranks[k], dims[k], IN);
    uint32_t c = flow_operand(g, SCHEMA_TENSOR_BOOL8, 1, one_dim, OUT);
    flow_operation(g, SCHEMA_OP_LESS, 2, (uint32_t[]){ins[i_at], ins[n_at]}, 1, &c);
    flow_io(g, n_in, ins, 1, &c);
    return r;
}

Nnd__Model *flow_counter_model(float step) {
    Nnd__Model *m = flow_model_new();
    const int32_t types[2] = {SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT32};
    const uint32_t ranks[2] = {1, 1}, *dims[2] = {one_dim, one_dim};
    uint32_t cond = less_condition(m, types, ranks, dims, 2, 0, 1);
    uint32_t body;
    Nnd__Subgraph *b = flow_graph(m, &body);
    uint32_t i = flow_operand(b, SCHEMA_TENSOR_FLOAT32, 1, one_dim, IN);
    uint32_t n = flow_operand(b, SCHEMA_TENSOR_FLOAT32, 1, one_dim, IN);
    uint32_t s = flow_constant(m, b, SCHEMA_TENSOR_FLOAT32, 1, one_dim, &step, 4);
    uint32_t act = activation(m, b);
    uint32_t next = flow_operand(b, SCHEMA_TENSOR_FLOAT32, 1, one_dim, OUT);
    flow_operation(b, SCHEMA_OP_ADD, 3, (uint32_t[]){i, s, act}, 1, &next);
    flow_io(b, 2, (uint32_t[]){i, n}, 1, &next);
    Nnd__Subgraph *g = flow_graph(m, NULL);
    uint32_t rc = flow_reference(g, cond), rb = flow_reference(g, body);
    uint32_t x = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, one_dim, IN);
    uint32_t lim = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, one_dim, IN);
    uint32_t y = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, one_dim, OUT);
    flow_operation(g, SCHEMA_OP_WHILE, 4, (uint32_t[]){rc, rb, x, lim}, 1, &y);
    flow_io(g, 2, (uint32_t[]){x, lim}, 1, &y);
    return m;
}

/* A branch: b = op(a, a) over TENSOR_FLOAT32 [n]. */
static uint32_t branch(Nnd__Model *m, int32_t op, uint32_t n) {
    uint32_t r;
    Nnd__Subgraph *g = flow_graph(m, &r);
    uint32_t a = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, &n, IN);
    uint32_t act = activation(m, g);
    uint32_t b = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, &n, OUT);
    flow_operation(g, op, 3, (uint32_t[]){a, a, act}, 1, &b);
    flow_io(g, 1, &a, 1, &b);
    return r;
}

Nnd__Model *flow_if_model(uint32_t n) {
    Nnd__Model *m = flow_model_new();
    uint32_t then_r = branch(m, SCHEMA_OP_ADD, n), else_r = branch(m, SCHEMA_OP_SUB, n);
    Nnd__Subgraph *g = flow_graph(m, NULL);
    uint32_t c = flow_operand(g, SCHEMA_TENSOR_BOOL8, 1, one_dim, IN);
    uint32_t rt = flow_reference(g, then_r), re = flow_reference(g, else_r);
    uint32_t x = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, &n, IN);
    uint32_t y = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, &n, OUT);
    flow_operation(g, SCHEMA_OP_IF, 4, (uint32_t[]){c, rt, re, x}, 1, &y);
    flow_io(g, 2, (uint32_t[]){c, x}, 1, &y);
    return m;
}

Nnd__Model *flow_growing_model(void) {
    Nnd__Model *m = flow_model_new();
    const uint32_t unknown[1] = {0};
    /* Loop values: v (grows), l (the last element), n (input only). */
    const int32_t types[3] = {SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT32};
    const uint32_t ranks[3] = {1, 1, 1}, *dims[3] = {unknown, one_dim, one_dim};
    uint32_t cond = less_condition(m, types, ranks, dims, 3, 1, 2);
    uint32_t body;
    Nnd__Subgraph *b = flow_graph(m, &body);
    uint32_t v = flow_operand(b, SCHEMA_TENSOR_FLOAT32, 1, unknown, IN);
    uint32_t l = flow_operand(b, SCHEMA_TENSOR_FLOAT32, 1, one_dim, IN);
    uint32_t n = flow_operand(b, SCHEMA_TENSOR_FLOAT32, 1, one_dim, IN);
    const float one = 1.f;
    const int32_t axis = 0;
    uint32_t c1 = flow_constant(m, b, SCHEMA_TENSOR_FLOAT32, 1, one_dim, &one, 4);
    uint32_t act = activation(m, b);
    uint32_t ax = flow_constant(m, b, SCHEMA_INT32, 0, NULL, &axis, 4);
    uint32_t v2 = flow_operand(b, SCHEMA_TENSOR_FLOAT32, 1, unknown, OUT);
    uint32_t l2 = flow_operand(b, SCHEMA_TENSOR_FLOAT32, 1, one_dim, OUT);
    flow_operation(b, SCHEMA_OP_ADD, 3, (uint32_t[]){l, c1, act}, 1, &l2);
    flow_operation(b, SCHEMA_OP_CONCATENATION, 3, (uint32_t[]){v, l2, ax}, 1, &v2);
    flow_io(b, 3, (uint32_t[]){v, l, n}, 2, (uint32_t[]){v2, l2});
    Nnd__Subgraph *g = flow_graph(m, NULL);
    uint32_t rc = flow_reference(g, cond), rb = flow_reference(g, body);
    uint32_t x = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, one_dim, IN);
    uint32_t lim = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, one_dim, IN);
    uint32_t y = flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, unknown, OUT);
    flow_operation(g, SCHEMA_OP_WHILE, 5, (uint32_t[]){rc, rb, x, x, lim}, 1, &y);
    flow_io(g, 2, (uint32_t[]){x, lim}, 1, &y);
    return m;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* flow_check.c: validation of control flow: the references between a model's graphs and
 * the signatures of IF and WHILE against the subgraphs they run. See flow.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/flow.h"

#define FAIL(...) (schema_errf(err, errlen, __VA_ARGS__), SCHEMA_INVALID_ARGUMENT)

bool eng_flow_is_op(int32_t code) {
    return code == SCHEMA_OP_IF || code == SCHEMA_OP_WHILE;
}

void eng_model_set_graph(eng_model_desc *m, const eng_subgraph_desc *g) {
    m->n_operands = g->n_operands;
    m->operands = g->operands;
    m->n_operations = g->n_operations;
    m->operations = g->operations;
    m->n_inputs = g->n_inputs;
    m->inputs = g->inputs;
    m->n_outputs = g->n_outputs;
    m->outputs = g->outputs;
}

eng_model_desc eng_model_referenced(const eng_model_desc *m, uint32_t r) {
    eng_model_desc v = *m;
    eng_model_set_graph(&v, &m->referenced[r]);
    return v;
}

eng_model_desc eng_flow_graph(const eng_model_desc *m, uint32_t g) {
    return g < m->n_referenced ? eng_model_referenced(m, g) : *m;
}

/* "referenced subgraph 3" or "the main graph", for messages. */
static const char *graph_name(const eng_model_desc *m, uint32_t g, char *buf, size_t len) {
    if (g >= m->n_referenced) return "the main graph";
    snprintf(buf, len, "referenced subgraph %u", g);
    return buf;
}

/* One SUBGRAPH operand: its form, as HAL 1.3 gives it. */
static schema_status check_reference(const eng_model_desc *m, uint32_t g, uint32_t i, char *err,
                                     size_t errlen) {
    eng_model_desc v = eng_flow_graph(m, g);
    const eng_operand_desc *o = &v.operands[i];
    char name[48];
    const char *gn = graph_name(m, g, name, sizeof name);
    if (o->type != SCHEMA_SUBGRAPH_TYPE || o->lifetime != SCHEMA_SUBGRAPH)
        return FAIL("%s, operand %u: type SUBGRAPH goes with lifetime SUBGRAPH and no other", gn,
                    i);
    if (o->offset >= m->n_referenced)
        return FAIL("%s, operand %u: names subgraph %llu, the model has %u", gn, i,
                    (unsigned long long)o->offset, m->n_referenced);
    if (o->length || o->pool || o->rank || o->scale != 0.f || o->zero_point ||
        o->channel_quant.n_scales || o->extension_len)
        return FAIL("%s, operand %u: a subgraph reference has no length, pool, dimensions or "
                    "quantization",
                    gn, i);
    return SCHEMA_OK;
}

static bool is_reference(const eng_operand_desc *o) {
    return o->type == SCHEMA_SUBGRAPH_TYPE || o->lifetime == SCHEMA_SUBGRAPH;
}

/* Depth-first over the references, with an explicit stack (a hostile chain may be long):
 * state 0 unseen, 1 on the current path, 2 done. Post order puts callees first. */
typedef struct walk {
    uint32_t graph, next_operand;
} walk;

static schema_status visit(const eng_model_desc *m, uint32_t root, uint8_t *state, walk *stack,
                           uint32_t *order, uint32_t *n_order, char *err, size_t errlen) {
    uint32_t top = 0;
    stack[top++] = (walk){root, 0};
    state[root] = 1;
    while (top) {
        walk *w = &stack[top - 1];
        const eng_subgraph_desc *s = &m->referenced[w->graph];
        if (w->next_operand == s->n_operands) {
            state[w->graph] = 2;
            order[(*n_order)++] = w->graph;
            top--;
            continue;
        }
        uint32_t i = w->next_operand++;
        if (!is_reference(&s->operands[i])) continue;
        uint32_t t = (uint32_t)s->operands[i].offset;
        if (state[t] == 1)
            return FAIL("referenced subgraph %u, operand %u: names subgraph %u, which %s; a "
                        "subgraph may not reference itself through any chain",
                        w->graph, i, t, t == w->graph ? "is itself" : "leads back to it");
        if (state[t] == 0) {
            state[t] = 1;
            stack[top++] = (walk){t, 0};
        }
    }
    return SCHEMA_OK;
}

/* Nesting: 1 for a subgraph that runs no other, else 1 more than its deepest callee. */
static uint32_t nesting(const eng_model_desc *m, uint32_t g, const uint32_t *depth) {
    eng_model_desc v = eng_flow_graph(m, g);
    uint32_t d = 0;
    for (uint32_t i = 0; i < v.n_operands; i++)
        if (is_reference(&v.operands[i]) && depth[v.operands[i].offset] > d)
            d = depth[v.operands[i].offset];
    return d + (g < m->n_referenced);
}

schema_status eng_flow_check_references(const eng_model_desc *m, uint32_t *order, char *err,
                                        size_t errlen) {
    uint32_t n = m->n_referenced;
    if (n > ENG_MAX_SUBGRAPHS)
        return FAIL("%u referenced subgraphs, over the limit of %u", n, ENG_MAX_SUBGRAPHS);
    if (n && !m->referenced) return FAIL("referenced subgraphs missing");
    uint64_t operands = m->n_operands, operations = m->n_operations;
    for (uint32_t g = 0; g < n; g++) {
        operands += m->referenced[g].n_operands;
        operations += m->referenced[g].n_operations;
    }
    if (operands > ENG_MAX_OPERANDS || operations > ENG_MAX_OPERATIONS)
        return FAIL("the model's graphs have %llu operands and %llu operations together, over "
                    "the limit of %u each",
                    (unsigned long long)operands, (unsigned long long)operations, ENG_MAX_OPERANDS);
    for (uint32_t g = 0; g <= n; g++) {
        eng_model_desc v = eng_flow_graph(m, g);
        for (uint32_t i = 0; i < v.n_operands; i++)
            if (is_reference(&v.operands[i])) {
                schema_status s = check_reference(m, g, i, err, errlen);
                if (s) return s;
            }
    }
    if (!n) return SCHEMA_OK;
    uint8_t *state = calloc(n, 1);
    uint32_t *depth = calloc(n, sizeof(uint32_t));
    walk *stack = malloc(sizeof(walk) * n);
    schema_status s = SCHEMA_OK;
    uint32_t n_order = 0;
    if (!state || !depth || !stack) s = FAIL("out of memory checking subgraph references");
    for (uint32_t g = 0; g < n && !s; g++)
        if (!state[g]) s = visit(m, g, state, stack, order, &n_order, err, errlen);
    /* Post order: every callee's depth is known before its callers'. */
    for (uint32_t k = 0; k < n && !s; k++) {
        depth[order[k]] = nesting(m, order[k], depth);
        if (depth[order[k]] > ENG_MAX_SUBGRAPH_DEPTH)
            s = FAIL("referenced subgraph %u: subgraphs nest %u deep under it, over the limit of "
                     "%u",
                     order[k], depth[order[k]], ENG_MAX_SUBGRAPH_DEPTH);
    }
    free(state);
    free(depth);
    free(stack);
    return s;
}

/* ---- IF and WHILE signatures ----------------------------------------------------------- */

/* Whether two operands may stand for each other across a subgraph's boundary; why says
 * how they differ. */
static bool compatible(const eng_operand_desc *a, const eng_operand_desc *b, char *why,
                       size_t len) {
    if (a->type != b->type) {
        snprintf(why, len, "types %s and %s", schema_type_name(a->type), schema_type_name(b->type));
        return false;
    }
    if (a->rank && b->rank) {
        if (a->rank != b->rank) {
            snprintf(why, len, "ranks %u and %u", a->rank, b->rank);
            return false;
        }
        for (uint32_t r = 0; r < a->rank; r++)
            if (a->dims[r] && b->dims[r] && a->dims[r] != b->dims[r]) {
                snprintf(why, len, "dimension %u is %u and %u", r, a->dims[r], b->dims[r]);
                return false;
            }
    }
    if (a->scale != b->scale || a->zero_point != b->zero_point) {
        snprintf(why, len, "scales %g and %g, zero points %d and %d", a->scale, b->scale,
                 a->zero_point, b->zero_point);
        return false;
    }
    const eng_channel_quant *p = &a->channel_quant, *q = &b->channel_quant;
    if (p->n_scales != q->n_scales || p->channel_dim != q->channel_dim ||
        (p->n_scales && memcmp(p->scales, q->scales, sizeof(float) * p->n_scales))) {
        snprintf(why, len, "per-channel quantization differs");
        return false;
    }
    if (a->extension_len != b->extension_len ||
        (a->extension_len && memcmp(a->extension_data, b->extension_data, a->extension_len))) {
        snprintf(why, len, "extension data differs");
        return false;
    }
    return true;
}

/* What one IF or WHILE check is about, for messages. */
typedef struct flow_op {
    const eng_model_desc *m;
    const eng_operation_desc *op;
    const char *name;
    uint32_t k;
} flow_op;

static const eng_subgraph_desc *named_subgraph(const flow_op *f, uint32_t input, const char *role,
                                               uint32_t *index, char *err, size_t errlen) {
    uint32_t o = f->op->inputs[input];
    const eng_operand_desc *d = &f->m->operands[o];
    if (d->type != SCHEMA_SUBGRAPH_TYPE || d->lifetime != SCHEMA_SUBGRAPH) {
        schema_errf(err, errlen,
                    "%s #%u: input %u (operand %u), its %s, must be a subgraph reference (type and "
                    "lifetime SUBGRAPH), not %s",
                    f->name, f->k, input, o, role, schema_type_name(d->type));
        return NULL;
    }
    *index = (uint32_t)d->offset;
    return &f->m->referenced[*index];
}

/* Outer operand `outer` against the subgraph's operand `inner`. */
static schema_status match(const flow_op *f, const char *role, uint32_t r, const char *what,
                           uint32_t pos, uint32_t outer, const eng_subgraph_desc *s, uint32_t inner,
                           char *err, size_t errlen) {
    char why[96];
    if (compatible(&f->m->operands[outer], &s->operands[inner], why, sizeof why)) return SCHEMA_OK;
    return FAIL("%s #%u: operand %u does not match %s %u (operand %u) of its %s, subgraph %u: %s",
                f->name, f->k, outer, what, pos, inner, role, r, why);
}

static schema_status check_condition(const eng_operand_desc *d, const char *whose, uint32_t o,
                                     char *err, size_t errlen) {
    if (d->type == SCHEMA_TENSOR_BOOL8 && d->rank == 1 && d->dims[0] == 1) return SCHEMA_OK;
    return FAIL("%s (operand %u) must be a TENSOR_BOOL8 of one element, not %s of rank %u", whose,
                o, schema_type_name(d->type), d->rank);
}

static schema_status check_if(const flow_op *f, char *err, size_t errlen) {
    const eng_operation_desc *op = f->op;
    if (op->n_inputs < 3)
        return FAIL("IF #%u has %u inputs; it takes a condition, two subgraphs, then the "
                    "branches' inputs",
                    f->k, op->n_inputs);
    char whose[48];
    snprintf(whose, sizeof whose, "IF #%u: the condition", f->k);
    schema_status s =
        check_condition(&f->m->operands[op->inputs[0]], whose, op->inputs[0], err, errlen);
    for (uint32_t b = 1; b <= 2 && !s; b++) {
        const char *role = b == 1 ? "then branch" : "else branch";
        uint32_t r;
        const eng_subgraph_desc *g = named_subgraph(f, b, role, &r, err, errlen);
        if (!g) return SCHEMA_INVALID_ARGUMENT;
        if (g->n_inputs != op->n_inputs - 3 || g->n_outputs != op->n_outputs)
            return FAIL("IF #%u: its %s, subgraph %u, has %u inputs and %u outputs; the IF passes "
                        "%u and takes %u",
                        f->k, role, r, g->n_inputs, g->n_outputs, op->n_inputs - 3, op->n_outputs);
        for (uint32_t i = 0; i < g->n_inputs && !s; i++)
            s = match(f, role, r, "input", i, op->inputs[3 + i], g, g->inputs[i], err, errlen);
        for (uint32_t i = 0; i < g->n_outputs && !s; i++)
            s = match(f, role, r, "output", i, op->outputs[i], g, g->outputs[i], err, errlen);
    }
    return s;
}

/* A loop of m carried values, k state-only values and n input-only values: WHILE takes
 * 2 + m + k + n inputs and gives m outputs; the condition takes m + k + n inputs and gives
 * one; the body takes m + k + n and gives m + k, each of the same kind as its input. */
static schema_status check_while(const flow_op *f, char *err, size_t errlen) {
    const eng_operation_desc *op = f->op;
    if (op->n_inputs < 3)
        return FAIL("WHILE #%u has %u inputs; it takes two subgraphs, then the loop's inputs", f->k,
                    op->n_inputs);
    uint32_t rc, rb;
    const eng_subgraph_desc *c = named_subgraph(f, 0, "condition", &rc, err, errlen);
    if (!c) return SCHEMA_INVALID_ARGUMENT;
    const eng_subgraph_desc *b = named_subgraph(f, 1, "body", &rb, err, errlen);
    if (!b) return SCHEMA_INVALID_ARGUMENT;
    uint32_t n_in = op->n_inputs - 2;
    if (c->n_inputs != n_in || c->n_outputs != 1)
        return FAIL("WHILE #%u: its condition, subgraph %u, has %u inputs and %u outputs; it "
                    "must take the loop's %u inputs and give one",
                    f->k, rc, c->n_inputs, c->n_outputs, n_in);
    if (b->n_inputs != n_in || b->n_outputs < op->n_outputs || b->n_outputs > n_in)
        return FAIL("WHILE #%u: its body, subgraph %u, has %u inputs and %u outputs; it must "
                    "take the loop's %u inputs and give from %u to %u outputs",
                    f->k, rb, b->n_inputs, b->n_outputs, n_in, op->n_outputs, n_in);
    char whose[64];
    snprintf(whose, sizeof whose, "WHILE #%u: the output of its condition, subgraph %u,", f->k, rc);
    schema_status s =
        check_condition(&c->operands[c->outputs[0]], whose, c->outputs[0], err, errlen);
    for (uint32_t i = 0; i < n_in && !s; i++)
        s = match(f, "condition", rc, "input", i, op->inputs[2 + i], c, c->inputs[i], err, errlen);
    for (uint32_t i = 0; i < n_in && !s; i++)
        s = match(f, "body", rb, "input", i, op->inputs[2 + i], b, b->inputs[i], err, errlen);
    for (uint32_t i = 0; i < op->n_outputs && !s; i++)
        s = match(f, "body", rb, "output", i, op->outputs[i], b, b->outputs[i], err, errlen);
    char why[96];
    for (uint32_t i = 0; i < b->n_outputs && !s; i++)
        if (!compatible(&b->operands[b->inputs[i]], &b->operands[b->outputs[i]], why, sizeof why))
            s = FAIL("WHILE #%u: its body, subgraph %u, gives output %u (operand %u) unlike "
                     "input %u (operand %u), which it feeds: %s",
                     f->k, rb, i, b->outputs[i], i, b->inputs[i], why);
    return s;
}

schema_status eng_flow_check_op(const eng_model_desc *g, uint32_t k, char *err, size_t errlen) {
    const eng_operation_desc *op = &g->operations[k];
    flow_op f = {.m = g, .op = op, .name = schema_operation_name(op->type), .k = k};
    return op->type == SCHEMA_OP_IF ? check_if(&f, err, errlen) : check_while(&f, err, errlen);
}

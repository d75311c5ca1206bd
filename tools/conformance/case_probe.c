/* SPDX-License-Identifier: Apache-2.0 */
/* case_probe.c: intermediate tensors and single operations of a model. See case_probe.h. */
#include "tools/conformance/case_probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schema/codes.h"
#include "schema/hal_names.h"
#include "tools/conformance/case_tensor.h"

/* A deep copy, every part malloc'd on its own. */
static Nnd__Model *copy_model(const Nnd__Model *m) {
    size_t n = nnd__model__get_packed_size(m);
    uint8_t *buf = malloc(n + 1);
    if (!buf) return NULL;
    nnd__model__pack(m, buf);
    Nnd__Model *c = nnd__model__unpack(NULL, n, buf);
    free(buf);
    return c;
}

static bool listed(const uint32_t *v, size_t n, uint32_t x) {
    for (size_t i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

Nnd__Model *tool_probe_all(const Nnd__Model *m, uint32_t **writer) {
    const Nnd__Subgraph *g = m->main;
    if (!g || !g->n_operations) return NULL;
    size_t most = g->n_output_indexes;
    for (size_t k = 0; k < g->n_operations; k++)
        most += g->operations[k]->n_outputs;
    Nnd__Model *c = copy_model(m);
    uint32_t *outs = malloc(sizeof(uint32_t) * most), *w = malloc(sizeof(uint32_t) * most);
    if (!c || !outs || !w) goto oom;
    Nnd__Subgraph *cg = c->main;
    size_t n = cg->n_output_indexes;
    memcpy(outs, cg->output_indexes, sizeof(uint32_t) * n);
    for (size_t j = 0; j < n; j++) {
        w[j] = UINT32_MAX;
        for (size_t k = 0; k < g->n_operations; k++)
            if (listed(g->operations[k]->outputs, g->operations[k]->n_outputs, outs[j]))
                w[j] = (uint32_t)k;
    }
    for (size_t k = 0; k < g->n_operations; k++) {
        const Nnd__Operation *op = g->operations[k];
        for (size_t j = 0; j < op->n_outputs; j++) {
            uint32_t o = op->outputs[j];
            if (o >= cg->n_operands || listed(outs, n, o)) continue;
            cg->operands[o]->lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
            w[n] = (uint32_t)k;
            outs[n++] = o;
        }
    }
    free(cg->output_indexes);
    cg->output_indexes = outs;
    cg->n_output_indexes = n;
    *writer = w;
    return c;
oom:
    if (c) nnd__model__free_unpacked(c, NULL);
    free(outs), free(w);
    return NULL;
}

static bool constant(const Nnd__Operand *o) {
    return o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_COPY ||
           o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE ||
           o->lifetime == NND__OPERAND_LIFE_TIME__NO_VALUE;
}

Nnd__Model *tool_probe_op(const Nnd__Model *m, size_t k, uint32_t **from) {
    const Nnd__Subgraph *g = m->main;
    if (!g || k >= g->n_operations) return NULL;
    const Nnd__Operation *op = g->operations[k];
    if (op->type == SCHEMA_OP_IF || op->type == SCHEMA_OP_WHILE) return NULL;
    Nnd__Model *c = copy_model(m);
    size_t most = op->n_inputs + op->n_outputs;
    uint32_t *keep = malloc(sizeof(uint32_t) * (most + 1)),
             *ins = malloc(sizeof(uint32_t) * (most + 1));
    Nnd__Operand **operands = calloc(most + 1, sizeof *operands);
    if (!c || !keep || !ins || !operands) goto oom;
    Nnd__Subgraph *cg = c->main;
    size_t n = 0, n_in = 0;
    for (size_t j = 0; j < op->n_inputs + op->n_outputs; j++) {
        uint32_t o = j < op->n_inputs ? op->inputs[j] : op->outputs[j - op->n_inputs];
        if (o >= cg->n_operands) goto oom;
        if (!listed(keep, n, o)) keep[n++] = o;
    }
    Nnd__Operation *cop = cg->operations[k];
    for (size_t i = 0; i < n; i++) {
        Nnd__Operand *o = cg->operands[keep[i]];
        cg->operands[keep[i]] = NULL;
        operands[i] = o;
        bool is_out = listed(op->outputs, op->n_outputs, keep[i]);
        if (is_out)
            o->lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
        else if (!constant(o)) {
            o->lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
            ins[n_in++] = (uint32_t)i;
        }
    }
    for (size_t i = 0; i < cop->n_inputs; i++)
        for (uint32_t r = 0; r < n; r++)
            if (keep[r] == cop->inputs[i]) {
                cop->inputs[i] = r;
                break;
            }
    for (size_t i = 0; i < cop->n_outputs; i++)
        for (uint32_t r = 0; r < n; r++)
            if (keep[r] == cop->outputs[i]) {
                cop->outputs[i] = r;
                break;
            }
    /* The rest of m's graph goes; k's operands and operation stay. */
    for (size_t i = 0; i < cg->n_operands; i++)
        if (cg->operands[i]) nnd__operand__free_unpacked(cg->operands[i], NULL);
    free(cg->operands);
    cg->operands = operands;
    cg->n_operands = n;
    for (size_t i = 0; i < cg->n_operations; i++)
        if (i != k) nnd__operation__free_unpacked(cg->operations[i], NULL);
    cg->operations[0] = cop;
    cg->n_operations = 1;
    uint32_t *orig = malloc(sizeof(uint32_t) * (n_in + 1));
    uint32_t *outs = malloc(sizeof(uint32_t) * (op->n_outputs + 1));
    if (!orig || !outs) {
        free(orig), free(outs), free(keep), free(ins);
        nnd__model__free_unpacked(c, NULL);
        return NULL;
    }
    for (size_t i = 0; i < n_in; i++)
        orig[i] = keep[ins[i]];
    for (size_t i = 0; i < cop->n_outputs; i++)
        outs[i] = cop->outputs[i];
    free(cg->input_indexes), free(cg->output_indexes);
    cg->input_indexes = ins;
    cg->n_input_indexes = n_in;
    cg->output_indexes = outs;
    cg->n_output_indexes = cop->n_outputs;
    free(keep);
    *from = orig;
    return c;
oom:
    if (c) nnd__model__free_unpacked(c, NULL);
    free(keep), free(ins), free(operands);
    return NULL;
}

size_t tool_probe_bytes(const Nnd__Operand *o) {
    size_t n = schema_hal_element_size(o->type);
    for (size_t i = 0; i < o->n_dimensions; i++) {
        if (!o->dimensions[i]) return 0;
        n *= o->dimensions[i];
    }
    return n;
}

bool tool_probe_is_quant(const Nnd__Operand *o) {
    switch (o->type) {
    case SCHEMA_TENSOR_QUANT8_ASYMM:
    case SCHEMA_TENSOR_QUANT8_SYMM:
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED:
    case SCHEMA_TENSOR_QUANT16_SYMM:
    case SCHEMA_TENSOR_QUANT16_ASYMM: return true;
    default: return false;
    }
}

void tool_probe_compare(const Nnd__Operand *o, const void *a, const void *b, size_t n,
                        tool_probe_diff *d) {
    memset(d, 0, sizeof *d);
    d->count = n;
    for (size_t i = 0; i < n; i++) {
        double x = case_element_value(o->type, a, i), y = case_element_value(o->type, b, i);
        if (x == y || (isnan(x) && isnan(y))) continue;
        double diff = isnan(x) || isnan(y) ? INFINITY : fabs(x - y);
        d->differ++;
        if (diff > d->max || d->differ == 1) {
            d->max = diff;
            d->at = i;
            d->a = x;
            d->b = y;
        }
    }
}

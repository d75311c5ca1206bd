/* SPDX-License-Identifier: Apache-2.0 */
/* case_model.c: a case's "model" object into a wire model. See case_model.h. */
#include "tools/conformance/case_model.h"

#include <stdlib.h>
#include <string.h>

#include "schema/hal_names.h"
#include "tools/conformance/case_read.h"

static const struct {
    const char *name;
    Nnd__OperandLifeTime lifetime;
} lifetimes[] = {
    {"TEMPORARY_VARIABLE", NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE},
    {"MODEL_INPUT", NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT},
    {"SUBGRAPH_INPUT", NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT},
    {"MODEL_OUTPUT", NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT},
    {"SUBGRAPH_OUTPUT", NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT},
    {"CONSTANT_COPY", NND__OPERAND_LIFE_TIME__CONSTANT_COPY},
    {"CONSTANT_REFERENCE", NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE},
    {"NO_VALUE", NND__OPERAND_LIFE_TIME__NO_VALUE},
    {"SUBGRAPH", NND__OPERAND_LIFE_TIME__SUBGRAPH},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static Nnd__Operand *build_operand(const cJSON *j, char *err, size_t errlen) {
    Nnd__Operand *o = malloc(sizeof *o);
    if (!o) return NULL;
    nnd__operand__init(o);
    const char *type = case_json_str(j, "type"), *life = case_json_str(j, "lifetime");
    int32_t code = type ? schema_hal_type_code(type) : -1;
    if (code < 0) {
        case_errf(err, errlen, "unknown operand type %s", type ? type : "(none)");
        goto fail;
    }
    o->type = code;
    size_t nd;
    if (case_json_u32s(cJSON_GetObjectItemCaseSensitive(j, "dimensions"), &o->dimensions, &nd) <
        0) {
        case_errf(err, errlen, "bad dimensions");
        goto fail;
    }
    o->n_dimensions = nd;
    o->scale = (float)case_json_num(j, "scale", 0);
    o->zero_point = (int32_t)case_json_num(j, "zeroPoint", 0);
    size_t li = 0;
    while (life && li < COUNT(lifetimes) && strcmp(lifetimes[li].name, life))
        li++;
    if (!life || li == COUNT(lifetimes)) {
        case_errf(err, errlen, "unknown lifetime %s", life ? life : "(none)");
        goto fail;
    }
    o->lifetime = lifetimes[li].lifetime;
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(j, "location");
    if (loc) {
        o->location = malloc(sizeof *o->location);
        if (!o->location) goto fail;
        nnd__data_location__init(o->location);
        o->location->pool_index = (uint32_t)case_json_num(loc, "poolIndex", 0);
        o->location->offset = (uint64_t)case_json_num(loc, "offset", 0);
        o->location->length = (uint64_t)case_json_num(loc, "length", 0);
    }
    const cJSON *cq = cJSON_GetObjectItemCaseSensitive(j, "channelQuant");
    if (cq) {
        Nnd__SymmPerChannelQuantParams *q = malloc(sizeof *q);
        if (!q) goto fail;
        nnd__symm_per_channel_quant_params__init(q);
        o->extra_params_case = NND__OPERAND__EXTRA_PARAMS_CHANNEL_QUANT;
        o->channel_quant = q;
        q->channel_dim = (uint32_t)case_json_num(cq, "channelDim", 0);
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(cq, "scales");
        size_t k = cJSON_IsArray(sc) ? (size_t)cJSON_GetArraySize(sc) : 0;
        if (k) {
            q->scales = malloc(k * sizeof(float));
            if (!q->scales) goto fail;
            const cJSON *e;
            cJSON_ArrayForEach(e, sc) q->scales[q->n_scales++] = (float)e->valuedouble;
        }
    }
    return o;
fail:
    nnd__operand__free_unpacked(o, NULL);
    return NULL;
}

static Nnd__Operation *build_operation(const cJSON *j, char *err, size_t errlen) {
    Nnd__Operation *op = malloc(sizeof *op);
    if (!op) return NULL;
    nnd__operation__init(op);
    const char *type = case_json_str(j, "type");
    op->type = type ? schema_hal_operation_code(type) : -1;
    if (op->type < 0) {
        case_errf(err, errlen, "unknown operation type %s", type ? type : "(none)");
        goto fail;
    }
    if (case_json_u32s(cJSON_GetObjectItemCaseSensitive(j, "inputs"), &op->inputs, &op->n_inputs) <
            0 ||
        case_json_u32s(cJSON_GetObjectItemCaseSensitive(j, "outputs"), &op->outputs,
                       &op->n_outputs) < 0) {
        case_errf(err, errlen, "bad operation inputs or outputs");
        goto fail;
    }
    return op;
fail:
    nnd__operation__free_unpacked(op, NULL);
    return NULL;
}

/* One graph's operands, operations and input and output lists into g (already init'd). */
static int build_graph(const cJSON *j, Nnd__Subgraph *g, char *err, size_t errlen) {
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(j, "operands");
    const cJSON *opns = cJSON_GetObjectItemCaseSensitive(j, "operations");
    if (!cJSON_IsArray(ops) || !cJSON_IsArray(opns)) {
        case_errf(err, errlen, "model without operands or operations");
        return -1;
    }
    size_t n = (size_t)cJSON_GetArraySize(ops);
    if (n && !(g->operands = calloc(n, sizeof *g->operands))) goto oom;
    const cJSON *e;
    cJSON_ArrayForEach(e, ops) {
        char why[160] = "out of memory";
        Nnd__Operand *o = build_operand(e, why, sizeof why);
        if (!o) {
            case_errf(err, errlen, "operand %zu: %s", g->n_operands, why);
            return -1;
        }
        g->operands[g->n_operands++] = o;
    }
    n = (size_t)cJSON_GetArraySize(opns);
    if (n && !(g->operations = calloc(n, sizeof *g->operations))) goto oom;
    cJSON_ArrayForEach(e, opns) {
        char why[160] = "out of memory";
        Nnd__Operation *op = build_operation(e, why, sizeof why);
        if (!op) {
            case_errf(err, errlen, "operation %zu: %s", g->n_operations, why);
            return -1;
        }
        g->operations[g->n_operations++] = op;
    }
    if (case_json_u32s(cJSON_GetObjectItemCaseSensitive(j, "inputIndexes"), &g->input_indexes,
                       &g->n_input_indexes) < 0 ||
        case_json_u32s(cJSON_GetObjectItemCaseSensitive(j, "outputIndexes"), &g->output_indexes,
                       &g->n_output_indexes) < 0) {
        case_errf(err, errlen, "bad inputIndexes or outputIndexes");
        return -1;
    }
    for (size_t i = 0; i < g->n_input_indexes; i++)
        if (g->input_indexes[i] >= g->n_operands) {
            case_errf(err, errlen, "inputIndexes[%zu] out of range", i);
            return -1;
        }
    for (size_t i = 0; i < g->n_output_indexes; i++)
        if (g->output_indexes[i] >= g->n_operands) {
            case_errf(err, errlen, "outputIndexes[%zu] out of range", i);
            return -1;
        }
    return 0;
oom:
    case_errf(err, errlen, "out of memory");
    return -1;
}

/* "referenced": the subgraphs IF and WHILE operands name by index. */
static int build_referenced(const cJSON *j, Nnd__Model *m, char *err, size_t errlen) {
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(j, "referenced");
    if (!refs) return 0;
    if (!cJSON_IsArray(refs)) {
        case_errf(err, errlen, "\"referenced\" is not an array");
        return -1;
    }
    size_t n = (size_t)cJSON_GetArraySize(refs);
    if (n && !(m->referenced = calloc(n, sizeof *m->referenced))) {
        case_errf(err, errlen, "out of memory");
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, refs) {
        Nnd__Subgraph *g = malloc(sizeof *g);
        if (!g) {
            case_errf(err, errlen, "out of memory");
            return -1;
        }
        nnd__subgraph__init(g);
        m->referenced[m->n_referenced++] = g;
        char why[200] = "out of memory";
        if (build_graph(e, g, why, sizeof why) < 0) {
            case_errf(err, errlen, "referenced subgraph %zu: %s", m->n_referenced - 1, why);
            return -1;
        }
    }
    return 0;
}

Nnd__Model *case_model_from_json(const cJSON *j, char *err, size_t errlen) {
    Nnd__Model *m = malloc(sizeof *m);
    if (!m) return NULL;
    nnd__model__init(m);
    Nnd__Subgraph *g = m->main = malloc(sizeof *g);
    if (!g) goto oom;
    nnd__subgraph__init(g);
    if (build_graph(j, g, err, errlen) < 0 || build_referenced(j, m, err, errlen) < 0) goto fail;
    const char *values = case_json_str(j, "operandValues");
    if (values && *values &&
        case_base64_decode(values, &m->operand_values.data, &m->operand_values.len) < 0) {
        case_errf(err, errlen, "operandValues is not base64");
        goto fail;
    }
    m->relax_computation_float32_to_float16 = case_json_flag(j, "relaxComputationFloat32toFloat16");
    return m;
oom:
    case_errf(err, errlen, "out of memory");
fail:
    nnd__model__free_unpacked(m, NULL);
    return NULL;
}

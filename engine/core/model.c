/* SPDX-License-Identifier: Apache-2.0 */
/* model.c: model validation, as a HAL driver validates: operands, quantization, lifetimes
 * and locations, input and output lists, graph order, and each operation's signature. */
#include <stdlib.h>
#include <string.h>

#include "engine/plugins/extension.h"
#include "engine/core/flow.h"
#include "engine/core/internal.h"
#include "engine/core/validate_op.h"

#define FAIL(...) (schema_errf(err, errlen, __VA_ARGS__), SCHEMA_INVALID_ARGUMENT)

static uint64_t byte_size(const eng_operand_desc *o) {
    return schema_shape_bytes(o->type, o->rank > ENG_MAX_RANK ? 0 : o->rank, o->dims);
}

static schema_status check_quant(const eng_operand_desc *o, uint32_t i, char *err, size_t errlen) {
    switch (o->type) {
    case SCHEMA_TENSOR_QUANT8_ASYMM:
        if (!(o->scale > 0.f))
            return FAIL("operand %u: TENSOR_QUANT8_ASYMM scale %g must be > 0", i, o->scale);
        if (o->zero_point < 0 || o->zero_point > 255)
            return FAIL("operand %u: TENSOR_QUANT8_ASYMM zero point %d outside 0..255", i,
                        o->zero_point);
        return SCHEMA_OK;
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED:
        if (!(o->scale > 0.f))
            return FAIL("operand %u: TENSOR_QUANT8_ASYMM_SIGNED scale %g must be > 0", i, o->scale);
        if (o->zero_point < -128 || o->zero_point > 127)
            return FAIL("operand %u: TENSOR_QUANT8_ASYMM_SIGNED zero point %d outside -128..127", i,
                        o->zero_point);
        return SCHEMA_OK;
    case SCHEMA_TENSOR_QUANT16_ASYMM:
        if (!(o->scale > 0.f))
            return FAIL("operand %u: TENSOR_QUANT16_ASYMM scale %g must be > 0", i, o->scale);
        if (o->zero_point < 0 || o->zero_point > 65535)
            return FAIL("operand %u: TENSOR_QUANT16_ASYMM zero point %d outside 0..65535", i,
                        o->zero_point);
        return SCHEMA_OK;
    case SCHEMA_TENSOR_QUANT8_SYMM:
    case SCHEMA_TENSOR_QUANT16_SYMM:
        if (!(o->scale > 0.f))
            return FAIL("operand %u: %s scale %g must be > 0", i, schema_type_name(o->type),
                        o->scale);
        if (o->zero_point != 0)
            return FAIL("operand %u: %s zero point must be 0", i, schema_type_name(o->type));
        return SCHEMA_OK;
    case SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL: {
        const eng_channel_quant *q = &o->channel_quant;
        if (o->scale != 0.f || o->zero_point != 0)
            return FAIL("operand %u: per-channel operand must have scale 0 and zero point 0", i);
        if (!q->scales || q->channel_dim >= o->rank)
            return FAIL(
                "operand %u: per-channel quantization missing or channel dimension %u out of range",
                i, q->channel_dim);
        if (o->dims[q->channel_dim] != 0 && q->n_scales != o->dims[q->channel_dim])
            return FAIL("operand %u: %u channel scales for a channel dimension of %u", i,
                        q->n_scales, o->dims[q->channel_dim]);
        for (uint32_t k = 0; k < q->n_scales; k++)
            if (!(q->scales[k] > 0.f))
                return FAIL("operand %u: channel scale %u is %g, must be > 0", i, k, q->scales[k]);
        return SCHEMA_OK;
    }
    case SCHEMA_TENSOR_INT32:
    case SCHEMA_TENSOR_OEM_BYTE:
    case SCHEMA_OEM_SCALAR:
        /* A TENSOR_INT32 scale is a quantized bias's (input scale * filter scale). */
        if (!(o->scale >= 0.f))
            return FAIL("operand %u: scale %g must not be negative", i, o->scale);
        if (o->type == SCHEMA_TENSOR_INT32 && o->zero_point != 0)
            return FAIL("operand %u: TENSOR_INT32 zero point must be 0, is %d", i, o->zero_point);
        return SCHEMA_OK;
    default:
        if (o->scale != 0.f || o->zero_point != 0)
            return FAIL("operand %u: %s takes no scale or zero point (got %g, %d)", i,
                        schema_type_name(o->type), o->scale, o->zero_point);
        return SCHEMA_OK;
    }
}

static schema_status check_operand(const eng_model_desc *m, uint32_t i, char *err, size_t errlen) {
    const eng_operand_desc *o = &m->operands[i];
    /* Subgraph references are judged with the references between graphs (flow_check.c). */
    if (o->type == SCHEMA_SUBGRAPH_TYPE || o->lifetime == SCHEMA_SUBGRAPH) return SCHEMA_OK;
    /* A plugin that claims OEM_OPERATION takes the OEM types too, sizes unchecked, as the
     * HAL leaves them to the OEM driver (extension.h). */
    bool oem = (o->type == SCHEMA_OEM_SCALAR || o->type == SCHEMA_TENSOR_OEM_BYTE) &&
               eng_ext_oem_claimed();
    if (eng_ext_is_code(o->type) && schema_type_size(o->type) == 0)
        return FAIL("operand %u: extension operand type %u is not defined", i,
                    (unsigned)o->type & 0xffffu);
    if ((schema_type_size(o->type) == 0 && !oem) || o->type == SCHEMA_SUBGRAPH_TYPE)
        return FAIL("operand %u: unknown or unsupported operand type %d", i, o->type);
    if (o->rank > ENG_MAX_RANK)
        return FAIL("operand %u: rank %u over the limit of %u", i, o->rank, ENG_MAX_RANK);
    if (!schema_type_is_tensor(o->type) && o->rank != 0)
        return FAIL("operand %u: scalar type %s has %u dimensions", i, schema_type_name(o->type),
                    o->rank);
    /* Dimensions that claim more than any tensor may hold, even with an unknown (0) one
     * among them: every element count and step computed from them must fit. */
    if (!oem && byte_size(o) == UINT64_MAX)
        return FAIL("operand %u: dimensions claim more than 2^48 bytes", i);
    if (o->extension_len && !eng_ext_is_code(o->type))
        return FAIL("operand %u: %s is not an extension type and takes no extension data", i,
                    schema_type_name(o->type));
    /* Extension types: scale, zero point and extension data are the plugin's to judge. */
    schema_status s = eng_ext_is_code(o->type) ? SCHEMA_OK : check_quant(o, i, err, errlen);
    if (s) return s;
    switch (o->lifetime) {
    case SCHEMA_TEMPORARY:
    case SCHEMA_MODEL_INPUT:
    case SCHEMA_MODEL_OUTPUT:
        if (o->offset || o->length || o->pool)
            return FAIL("operand %u: %s operand must not have a location", i,
                        o->lifetime == SCHEMA_TEMPORARY     ? "temporary"
                        : o->lifetime == SCHEMA_MODEL_INPUT ? "input"
                                                            : "output");
        return SCHEMA_OK;
    case SCHEMA_NO_VALUE:
        if (o->length) return FAIL("operand %u: NO_VALUE operand has a length", i);
        return SCHEMA_OK;
    case SCHEMA_CONSTANT_COPY:
    case SCHEMA_CONSTANT_REFERENCE: {
        if (!eng_operand_dims_known(o))
            return FAIL("operand %u: constant with unknown dimensions", i);
        uint64_t need = byte_size(o);
        if (o->length != need && !oem)
            return FAIL("operand %u: constant length %llu, its type and dimensions need %llu", i,
                        (unsigned long long)o->length, (unsigned long long)need);
        uint64_t limit;
        if (o->lifetime == SCHEMA_CONSTANT_COPY) {
            limit = m->operand_values_len;
        } else {
            if (o->pool >= m->n_pools)
                return FAIL("operand %u: pool %u does not exist (%u pools)", i, o->pool,
                            m->n_pools);
            limit = m->pools[o->pool].size;
        }
        if (o->offset > limit || o->length > limit - o->offset)
            return FAIL("operand %u: location %llu+%llu is outside its %s of %llu bytes", i,
                        (unsigned long long)o->offset, (unsigned long long)o->length,
                        o->lifetime == SCHEMA_CONSTANT_COPY ? "operand values" : "pool",
                        (unsigned long long)limit);
        return SCHEMA_OK;
    }
    default: return FAIL("operand %u: lifetime %u is not supported", i, o->lifetime);
    }
}

static schema_status check_io_list(const eng_model_desc *m, const uint32_t *list, uint32_t n,
                                   uint32_t lifetime, const char *what, char *err, size_t errlen) {
    uint8_t *seen = calloc(m->n_operands ? m->n_operands : 1, 1);
    if (!seen) return FAIL("out of memory");
    schema_status s = SCHEMA_OK;
    for (uint32_t k = 0; k < n && !s; k++) {
        uint32_t i = list[k];
        if (i >= m->n_operands)
            s = FAIL("model %s %u names operand %u, only %u exist", what, k, i, m->n_operands);
        else if (m->operands[i].lifetime != lifetime)
            s = FAIL("model %s %u: operand %u does not have the %s lifetime", what, k, i, what);
        else if (seen[i]++)
            s = FAIL("model %s list names operand %u twice", what, i);
    }
    for (uint32_t i = 0; i < m->n_operands && !s; i++)
        if (m->operands[i].lifetime == lifetime && !seen[i])
            s = FAIL("operand %u has the %s lifetime but is not in the model's %s list", i, what,
                     what);
    free(seen);
    return s;
}

/* Validates structure (operands, lifetimes, locations, lists); op signatures excluded. A
 * referenced subgraph (eng_flow_graph) may have no inputs. */
static schema_status eng_validate_structure(const eng_model_desc *m, bool referenced, char *err,
                                            size_t errlen) {
    if (m->n_operands > ENG_MAX_OPERANDS) return FAIL("too many operands (%u)", m->n_operands);
    if (m->n_operations > ENG_MAX_OPERATIONS)
        return FAIL("too many operations (%u)", m->n_operations);
    if (m->n_operations == 0) return FAIL("model has no operations");
    if ((m->n_inputs == 0 && !referenced) || m->n_outputs == 0)
        return FAIL(referenced ? "subgraph needs at least one output"
                               : "model needs at least one input and one output");
    for (uint32_t i = 0; i < m->n_operands; i++) {
        schema_status s = check_operand(m, i, err, errlen);
        if (s) return s;
    }
    schema_status s =
        check_io_list(m, m->inputs, m->n_inputs, SCHEMA_MODEL_INPUT, "input", err, errlen);
    if (!s)
        s = check_io_list(m, m->outputs, m->n_outputs, SCHEMA_MODEL_OUTPUT, "output", err, errlen);
    if (s) return s;
    for (uint32_t k = 0; k < m->n_operations; k++) {
        const eng_operation_desc *op = &m->operations[k];
        if (op->n_outputs == 0)
            return FAIL("operation %u (%s) has no outputs", k, schema_operation_name(op->type));
        for (uint32_t j = 0; j < op->n_inputs; j++)
            if (op->inputs[j] >= m->n_operands)
                return FAIL("operation %u (%s) input %u names operand %u, only %u exist", k,
                            schema_operation_name(op->type), j, op->inputs[j], m->n_operands);
        for (uint32_t j = 0; j < op->n_outputs; j++) {
            uint32_t o = op->outputs[j];
            if (o >= m->n_operands)
                return FAIL("operation %u (%s) output %u names operand %u, only %u exist", k,
                            schema_operation_name(op->type), j, o, m->n_operands);
            uint32_t lt = m->operands[o].lifetime;
            if (lt != SCHEMA_TEMPORARY && lt != SCHEMA_MODEL_OUTPUT)
                return FAIL("operation %u (%s) writes operand %u, which is a %s", k,
                            schema_operation_name(op->type), o,
                            lt == SCHEMA_MODEL_INPUT ? "model input"
                            : lt == SCHEMA_NO_VALUE  ? "NO_VALUE operand"
                            : lt == SCHEMA_SUBGRAPH  ? "subgraph reference"
                                                     : "constant");
        }
    }
    return SCHEMA_OK;
}

schema_status eng_order_operations(const eng_model_desc *m, uint32_t *order, char *err,
                                   size_t errlen) {
    /* Kahn's algorithm over operands: writer[o] is the operation that writes o. */
    uint32_t n = m->n_operations;
    uint32_t *writer = malloc(sizeof(uint32_t) * (m->n_operands ? m->n_operands : 1));
    uint32_t *pending = calloc(n, sizeof(uint32_t));
    uint32_t *readers_start = calloc((size_t)m->n_operands + 1, sizeof(uint32_t));
    uint32_t total_reads = 0;
    for (uint32_t k = 0; k < n; k++)
        total_reads += m->operations[k].n_inputs;
    uint32_t *readers = malloc(sizeof(uint32_t) * (total_reads ? total_reads : 1));
    schema_status s = SCHEMA_OK;
    if (!writer || !pending || !readers_start || !readers) {
        s = FAIL("out of memory ordering operations");
        goto out;
    }
    memset(writer, 0xff, sizeof(uint32_t) * m->n_operands);
    for (uint32_t k = 0; k < n && !s; k++)
        for (uint32_t j = 0; j < m->operations[k].n_outputs; j++) {
            uint32_t o = m->operations[k].outputs[j];
            if (writer[o] != UINT32_MAX) {
                s = FAIL("operand %u is written by operations %u and %u", o, writer[o], k);
                break;
            }
            writer[o] = k;
        }
    for (uint32_t i = 0; i < m->n_operands && !s; i++) {
        uint32_t lt = m->operands[i].lifetime;
        if ((lt == SCHEMA_TEMPORARY || lt == SCHEMA_MODEL_OUTPUT) && writer[i] == UINT32_MAX)
            s = FAIL("operand %u (%s) is never written by any operation", i,
                     lt == SCHEMA_TEMPORARY ? "temporary" : "model output");
    }
    if (s) goto out;
    /* Count, per operation, the inputs still to be produced; index readers by operand. */
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t j = 0; j < m->operations[k].n_inputs; j++) {
            uint32_t o = m->operations[k].inputs[j];
            if (writer[o] != UINT32_MAX) pending[k]++;
            readers_start[o + 1]++;
        }
    for (uint32_t i = 0; i < m->n_operands; i++)
        readers_start[i + 1] += readers_start[i];
    {
        uint32_t *fill = calloc((size_t)m->n_operands + 1, sizeof(uint32_t));
        if (!fill) {
            s = FAIL("out of memory ordering operations");
            goto out;
        }
        for (uint32_t k = 0; k < n; k++)
            for (uint32_t j = 0; j < m->operations[k].n_inputs; j++) {
                uint32_t o = m->operations[k].inputs[j];
                readers[readers_start[o] + fill[o]++] = k;
            }
        free(fill);
    }
    uint32_t head = 0, tail = 0;
    for (uint32_t k = 0; k < n; k++)
        if (pending[k] == 0) order[tail++] = k;
    while (head < tail) {
        uint32_t k = order[head++];
        for (uint32_t j = 0; j < m->operations[k].n_outputs; j++) {
            uint32_t o = m->operations[k].outputs[j];
            for (uint32_t r = readers_start[o]; r < readers_start[o + 1]; r++)
                if (--pending[readers[r]] == 0) order[tail++] = readers[r];
        }
    }
    if (tail != n) {
        for (uint32_t k = 0; k < n; k++)
            if (pending[k]) {
                s = FAIL("operation %u (%s) is part of a cycle", k,
                         schema_operation_name(m->operations[k].type));
                break;
            }
    }
out:
    free(writer);
    free(pending);
    free(readers_start);
    free(readers);
    return s;
}

/* The tensor a check() sees for operand o, with no data bound; cq keeps its per-channel
 * quantization. */
schema_status eng_model_tensors(const eng_model_desc *m, eng_tensor *tensors, eng_channel_quant *cq,
                                const uint8_t *constants, char *err, size_t errlen) {
    (void)err, (void)errlen;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const eng_operand_desc *o = &m->operands[i];
        eng_tensor *t = &tensors[i];
        eng_operand_tensor(o, t, &cq[i]);
        if (o->lifetime == SCHEMA_CONSTANT_COPY) {
            t->data = (void *)(constants + o->offset);
            t->bytes = o->length;
        } else if (o->lifetime == SCHEMA_CONSTANT_REFERENCE) {
            t->data = (void *)(m->pools[o->pool].base + o->offset);
            t->bytes = o->length;
        }
    }
    return SCHEMA_OK;
}

schema_status eng_check_op(eng_op_ctx *c) {
    schema_status s = c->def->check ? c->def->check(c) : SCHEMA_OK;
    uint64_t optional = eng_op_optional_inputs(c->def->code);
    for (uint32_t j = 0; !s && j < c->n_in; j++)
        if (c->in[j]->lifetime == SCHEMA_NO_VALUE && (j >= 64 || !(optional >> j & 1)))
            s = (schema_errf(c->err, c->errlen,
                             "%s #%u: input %u is omitted, and it is not optional", c->def->name,
                             c->index, j),
                 SCHEMA_INVALID_ARGUMENT);
    return s;
}

/* What a graph's validation knows of the rest of the model. */
typedef struct graph_ctx {
    bool referenced;           /* a referenced subgraph, not the main graph */
    const bool *sub_ok;        /* per referenced subgraph: valid and every operation has a kernel */
    eng_refused_fn on_refused; /* main graph only; may be NULL */
    void *refused_ctx;
} graph_ctx;

/* An IF or WHILE: its signature against the subgraphs it names, then whether they run.
 * An omitted input (an IF without its condition) is a driver rule: the NNAPI runtime
 * finishes such a model and fails it later, so the model's rules let it pass. */
static schema_status check_flow_op(const eng_model_desc *m, const graph_ctx *g, uint32_t k,
                                   eng_tensor *const *in, bool model_rules_only, char *err,
                                   size_t errlen) {
    const eng_operation_desc *op = &m->operations[k];
    schema_status s = eng_flow_check_op(m, k, err, errlen);
    if (s) return s;
    eng_op_ctx c = {.def = eng_op_lookup(op->type),
                    .index = k,
                    .in = (eng_tensor **)in,
                    .n_in = op->n_inputs,
                    .err = err,
                    .errlen = errlen};
    if (!model_rules_only && (s = eng_check_op(&c))) return s; /* an omitted input */
    for (uint32_t j = 0; j < 2; j++) {
        uint32_t r = (uint32_t)m->operands[op->inputs[j + (op->type == SCHEMA_OP_IF)]].offset;
        if (!g->sub_ok[r])
            return (schema_errf(err, errlen,
                                "%s #%u: subgraph %u has an operation without a kernel",
                                c.def->name, k, r),
                    SCHEMA_UNSUPPORTED);
    }
    return SCHEMA_OK;
}

/* What control flow asks of every operation k: only IF and WHILE read subgraph references,
 * and no vendor extension operation runs inside a referenced subgraph. */
static schema_status flow_placement(const eng_model_desc *m, const graph_ctx *g, uint32_t k,
                                    char *err, size_t errlen) {
    const eng_operation_desc *op = &m->operations[k];
    for (uint32_t j = 0; j < op->n_inputs && !eng_flow_is_op(op->type); j++)
        if (m->operands[op->inputs[j]].lifetime == SCHEMA_SUBGRAPH)
            return FAIL("operation %u (%s) input %u (operand %u) is a subgraph reference; only "
                        "IF and WHILE take one",
                        k, schema_operation_name(op->type), j, op->inputs[j]);
    if (g->referenced && (eng_ext_is_code(op->type) || op->type == SCHEMA_OP_OEM_OPERATION))
        return schema_failf(err, errlen, SCHEMA_UNSUPPORTED,
                            "operation %u: vendor extension operations are not supported inside "
                            "control flow",
                            k);
    return SCHEMA_OK;
}

/* Runs every operation's signature check against the model's tensors. supported may be
 * NULL (then the first failure is returned) or receive one flag per operation. */
static schema_status check_operations(const eng_model_desc *m, const graph_ctx *g,
                                      eng_tensor *tensors, bool *supported, char *err,
                                      size_t errlen) {
    eng_tensor *ptr_in[512], *ptr_out[64];
    for (uint32_t k = 0; k < m->n_operations; k++) {
        const eng_operation_desc *op = &m->operations[k];
        const eng_op_def *def = eng_op_lookup(op->type);
        schema_status s = flow_placement(m, g, k, err, errlen);
        if (s) {
            /* refused for where it stands */
        } else if (!def) {
            if (op->type >= 0 && op->type < SCHEMA_OP_COUNT)
                s = (schema_errf(err, errlen, "operation %u: %s is not supported by this driver", k,
                                 schema_operation_name(op->type)),
                     SCHEMA_UNSUPPORTED);
            else if (op->type == SCHEMA_OP_OEM_OPERATION)
                s = (schema_errf(err, errlen,
                                 "operation %u: OEM_OPERATION is not supported without a plugin",
                                 k),
                     SCHEMA_UNSUPPORTED);
            else if (eng_ext_is_code(op->type)) /* a loaded extension, not its operation */
                s = (schema_errf(err, errlen, "operation %u: extension operation %u is not defined",
                                 k, (unsigned)op->type & 0xffffu),
                     SCHEMA_UNSUPPORTED);
            else
                s = FAIL("operation %u: unknown operation type %d", k, op->type);
        } else if (op->n_inputs > 512 || op->n_outputs > 64) {
            s = FAIL("operation %u (%s): too many operands", k, def->name);
        } else {
            for (uint32_t j = 0; j < op->n_inputs; j++)
                ptr_in[j] = &tensors[op->inputs[j]];
            for (uint32_t j = 0; j < op->n_outputs; j++)
                ptr_out[j] = &tensors[op->outputs[j]];
            eng_op_ctx c = {.def = def,
                            .index = k,
                            .in = ptr_in,
                            .n_in = op->n_inputs,
                            .out = ptr_out,
                            .n_out = op->n_outputs,
                            .relaxed = m->relaxed,
                            .model_rules_only = supported != NULL,
                            .err = err,
                            .errlen = errlen};
            if (eng_flow_is_op(op->type))
                s = check_flow_op(m, g, k, ptr_in, c.model_rules_only, err, errlen);
            else
                s = eng_check_op(&c);
            if (!s && !eng_flow_is_op(op->type) && op->n_inputs > def->key_input &&
                !eng_op_kernel(def, ptr_in[def->key_input]->type))
                s = (schema_errf(err, errlen, "%s #%u: no kernel for %s", def->name, k,
                                 schema_type_name(ptr_in[def->key_input]->type)),
                     SCHEMA_UNSUPPORTED);
        }
        if (supported) {
            supported[k] = s == SCHEMA_OK;
            if (s == SCHEMA_UNSUPPORTED && g->on_refused) g->on_refused(g->refused_ctx, k, err);
            if (s && s != SCHEMA_UNSUPPORTED) return s;
        } else if (s) {
            return s;
        }
    }
    return SCHEMA_OK;
}

/* One graph: structure, order, then every operation against its tensors. */
static schema_status validate_graph(const eng_model_desc *m, const graph_ctx *g, bool *supported,
                                    char *err, size_t errlen) {
    schema_status s = eng_validate_structure(m, g->referenced, err, errlen);
    if (s) return s;
    uint32_t *order = malloc(sizeof(uint32_t) * m->n_operations);
    eng_tensor *tensors = malloc(sizeof(eng_tensor) * (m->n_operands ? m->n_operands : 1));
    eng_channel_quant *cq = calloc(m->n_operands ? m->n_operands : 1, sizeof *cq);
    if (!order || !tensors || !cq) s = FAIL("out of memory validating model");
    if (!s) s = eng_order_operations(m, order, err, errlen);
    if (!s) s = eng_model_tensors(m, tensors, cq, m->operand_values, err, errlen);
    if (!s) s = check_operations(m, g, tensors, supported, err, errlen);
    free(order);
    free(tensors);
    free(cq);
    return s;
}

/* Every referenced subgraph, callees first, so that an IF or WHILE knows whether the
 * subgraphs it runs have kernels (sub_ok). A refusal names the subgraph. */
static schema_status validate_referenced(const eng_model_desc *m, bool *sub_ok, char *err,
                                         size_t errlen) {
    uint32_t n = m->n_referenced;
    uint32_t *order = malloc(sizeof(uint32_t) * (n + 1));
    bool *flags = NULL;
    if (!order) return FAIL("out of memory validating subgraphs");
    schema_status s = eng_flow_check_references(m, order, err, errlen);
    char inner[SCHEMA_ERR_LEN];
    for (uint32_t i = 0; i < n && !s; i++) {
        uint32_t r = order[i];
        eng_model_desc view = eng_flow_graph(m, r);
        graph_ctx g = {.referenced = true, .sub_ok = sub_ok};
        bool *grown = realloc(flags, sizeof(bool) * (view.n_operations + 1));
        if (!grown) {
            s = FAIL("out of memory validating subgraphs");
            break;
        }
        flags = grown;
        inner[0] = 0;
        s = validate_graph(&view, &g, flags, inner, sizeof inner);
        sub_ok[r] = !s;
        for (uint32_t k = 0; k < view.n_operations && sub_ok[r]; k++)
            sub_ok[r] = flags[k];
        if (s) schema_errf(err, errlen, "referenced subgraph %u: %s", r, inner);
    }
    free(flags);
    free(order);
    return s;
}

static schema_status validate_model(const eng_model_desc *m, bool *supported,
                                    eng_refused_fn on_refused, void *ctx, char *err,
                                    size_t errlen) {
    bool *sub_ok = calloc(m->n_referenced + 1, sizeof(bool));
    if (!sub_ok) return FAIL("out of memory validating model");
    /* The references are checked even without subgraphs: a main graph may name one. */
    schema_status s = validate_referenced(m, sub_ok, err, errlen);
    graph_ctx g = {
        .referenced = false, .sub_ok = sub_ok, .on_refused = on_refused, .refused_ctx = ctx};
    if (!s) s = validate_graph(m, &g, supported, err, errlen);
    free(sub_ok);
    return s;
}

schema_status eng_validate_model(const eng_model_desc *m, bool *supported, char *err,
                                 size_t errlen) {
    return validate_model(m, supported, NULL, NULL, err, errlen);
}

schema_status eng_supported_operations(const eng_model_desc *m, bool *supported, char *err,
                                       size_t errlen) {
    return validate_model(m, supported, NULL, NULL, err, errlen);
}

schema_status eng_supported_operations_why(const eng_model_desc *m, bool *supported,
                                           eng_refused_fn on_refused, void *ctx, char *err,
                                           size_t errlen) {
    return validate_model(m, supported, on_refused, ctx, err, errlen);
}

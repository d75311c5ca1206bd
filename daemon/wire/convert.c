/* SPDX-License-Identifier: Apache-2.0 */
/* convert.c: wire Model and ExecutionRequest to engine descriptions. See convert.h. */
#include "daemon/wire/convert.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plugins/extension.h"

void srv_model_desc_clear(eng_model_desc *d) {
    free((void *)d->operands);
    free((void *)d->operations);
    for (uint32_t i = 0; d->referenced && i < d->n_referenced; i++) {
        free((void *)d->referenced[i].operands);
        free((void *)d->referenced[i].operations);
    }
    free((void *)d->referenced);
    memset(d, 0, sizeof *d);
}

static bool oem_code(int32_t code) {
    return code == SCHEMA_OEM_SCALAR || code == SCHEMA_TENSOR_OEM_BYTE; /* == OEM_OPERATION too */
}

static bool graph_uses_extensions(const Nnd__Subgraph *g) {
    for (size_t i = 0; g && i < g->n_operands; i++)
        if (eng_ext_is_code(g->operands[i]->type) || oem_code(g->operands[i]->type)) return true;
    for (size_t k = 0; g && k < g->n_operations; k++)
        if (eng_ext_is_code(g->operations[k]->type) ||
            g->operations[k]->type == SCHEMA_OP_OEM_OPERATION)
            return true;
    return false;
}

bool srv_model_uses_extensions(const Nnd__Model *m) {
    if (m->n_extension_name_to_prefix || graph_uses_extensions(m->main)) return true;
    for (size_t r = 0; r < m->n_referenced; r++)
        if (graph_uses_extensions(m->referenced[r])) return true;
    return false;
}

uint32_t srv_request_noted(const Nnd__Request *req) {
    const Nnd__Model *m = NULL;
    if (req->call_case == NND__REQUEST__CALL_PREPARE_MODEL && req->prepare_model)
        m = req->prepare_model->model;
    else if (req->call_case == NND__REQUEST__CALL_GET_SUPPORTED_OPERATIONS &&
             req->get_supported_operations)
        m = req->get_supported_operations->model;
    if (!m) return 0;
    return SRV_NOTED_EXTENSIONS_CHECKED |
           (srv_model_uses_extensions(m) ? SRV_NOTED_USES_EXTENSIONS : 0);
}

bool srv_request_uses_extensions(const proto_frame_in *in, const Nnd__Model *m) {
    if (in->noted & SRV_NOTED_EXTENSIONS_CHECKED) return in->noted & SRV_NOTED_USES_EXTENSIONS;
    return srv_model_uses_extensions(m);
}

int srv_prio_from_wire(int wire, qos_prio dflt) {
    switch (wire) {
    case 0: return (int)dflt;
    case 90: return QOS_PRIO_LOW;
    case 100: return QOS_PRIO_MEDIUM;
    case 110: return QOS_PRIO_HIGH;
    default: return -1;
    }
}

/* A model's extensionNameToPrefix, checked and resolved: prefix[i] is rewritten to id[i]. */
typedef struct ext_map {
    size_t n;
    uint32_t prefix[ENG_EXT_MAX_LOADED];
    uint16_t id[ENG_EXT_MAX_LOADED];
} ext_map;

static schema_status ext_map_build(const Nnd__Model *m, bool allowed, ext_map *x, char *err,
                                   size_t errlen) {
    x->n = 0;
    if (!allowed && srv_model_uses_extensions(m) &&
        (m->n_extension_name_to_prefix || eng_ext_oem_claimed()))
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "this client may not use vendor extensions (it is not on the "
                            "daemon's extensions allowlist)");
    /* Every name must be loaded, so a longer map cannot be valid. */
    if (m->n_extension_name_to_prefix > ENG_EXT_MAX_LOADED)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "extensionNameToPrefix has %zu entries, over the limit of %d",
                            m->n_extension_name_to_prefix, ENG_EXT_MAX_LOADED);
    for (size_t i = 0; i < m->n_extension_name_to_prefix; i++) {
        const Nnd__ExtensionNameAndPrefix *e = m->extension_name_to_prefix[i];
        const char *name = e->name ? e->name : "";
        if (e->prefix == 0 || e->prefix > 0xffff)
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "extensionNameToPrefix: \"%s\" has prefix %u, not in 1..65535",
                                name, e->prefix);
        for (size_t k = 0; k < i; k++) {
            const Nnd__ExtensionNameAndPrefix *f = m->extension_name_to_prefix[k];
            if (f->prefix == e->prefix)
                return schema_failf(
                    err, errlen, SCHEMA_INVALID_ARGUMENT,
                    "extensionNameToPrefix maps prefix %u to both \"%s\" and \"%s\"", e->prefix,
                    f->name ? f->name : "", name);
            if (!strcmp(f->name ? f->name : "", name))
                return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                    "extensionNameToPrefix maps both prefixes %u and %u to \"%s\"",
                                    f->prefix, e->prefix, name);
        }
        uint16_t id = eng_ext_resolve(name);
        if (!id)
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "model uses extension \"%s\", which is not loaded", name);
        x->prefix[x->n] = e->prefix;
        x->id[x->n++] = id;
    }
    return SCHEMA_OK;
}

/* The engine code for a wire code: its prefix, if any, becomes the extension's id. */
static bool ext_map_code(const ext_map *x, int32_t code, int32_t *out) {
    uint32_t prefix = (uint32_t)code >> 16;
    if (!prefix) {
        *out = code;
        return true;
    }
    for (size_t i = 0; i < x->n; i++)
        if (x->prefix[i] == prefix) {
            *out = (int32_t)((uint32_t)x->id[i] << 16 | ((uint32_t)code & 0xffffu));
            return true;
        }
    return false;
}

schema_status srv_model_from_proto(const Nnd__Model *m, eng_memory_view *pool_views, size_t n_views,
                                   eng_model_desc *out, char *err, size_t errlen) {
    return srv_model_from_proto_ext(m, pool_views, n_views, false, out, err, errlen);
}

/* One graph of the wire model into a subgraph description, borrowing its lists. `name`
 * starts every message ("operand 3" of the main graph, "referenced subgraph 1, operand 3"). */
static schema_status graph_from_proto(const Nnd__Subgraph *g, const ext_map *xmap, const char *name,
                                      eng_subgraph_desc *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!g)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "%sa subgraph is missing", name);
    if (g->n_operands > ENG_MAX_OPERANDS || g->n_operations > ENG_MAX_OPERATIONS)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "%smodel too large (%zu operands, %zu operations)", name, g->n_operands,
                            g->n_operations);
    if (g->n_input_indexes > UINT32_MAX || g->n_output_indexes > UINT32_MAX)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "%stoo many inputs or outputs",
                            name);
    eng_operand_desc *ods = calloc(g->n_operands + 1, sizeof *ods);
    eng_operation_desc *ops = calloc(g->n_operations + 1, sizeof *ops);
    out->operands = ods;
    out->operations = ops;
    if (!ods || !ops)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "out of memory converting model");
    for (size_t i = 0; i < g->n_operands; i++) {
        const Nnd__Operand *o = g->operands[i];
        eng_operand_desc *d = &ods[i];
        if (o->n_dimensions > ENG_MAX_RANK)
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "%soperand %zu: rank %zu over the limit of %d", name, i,
                                o->n_dimensions, ENG_MAX_RANK);
        if (!ext_map_code(xmap, o->type, &d->type))
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "%soperand %zu: type 0x%08x has prefix %u, which "
                                "extensionNameToPrefix does not name",
                                name, i, (unsigned)o->type, (unsigned)o->type >> 16);
        d->rank = (uint32_t)o->n_dimensions;
        if (o->n_dimensions) memcpy(d->dims, o->dimensions, sizeof(uint32_t) * o->n_dimensions);
        d->scale = o->scale;
        d->zero_point = o->zero_point;
        d->lifetime = (uint32_t)o->lifetime;
        if (o->location) {
            d->pool = o->location->pool_index;
            d->offset = o->location->offset;
            d->length = o->location->length;
        }
        if (o->extra_params_case == NND__OPERAND__EXTRA_PARAMS_CHANNEL_QUANT) {
            const Nnd__SymmPerChannelQuantParams *q = o->channel_quant;
            if (q->n_scales > UINT32_MAX)
                return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                    "%soperand %zu: too many channel scales", name, i);
            d->channel_quant.scales = q->scales;
            d->channel_quant.n_scales = (uint32_t)q->n_scales;
            d->channel_quant.channel_dim = q->channel_dim;
        } else if (o->extra_params_case == NND__OPERAND__EXTRA_PARAMS_EXTENSION) {
            d->extension_data = o->extension.data;
            d->extension_len = (uint32_t)o->extension.len;
        }
    }
    for (size_t k = 0; k < g->n_operations; k++) {
        const Nnd__Operation *op = g->operations[k];
        if (!ext_map_code(xmap, op->type, &ops[k].type))
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "%soperation %zu: type 0x%08x has prefix %u, which "
                                "extensionNameToPrefix does not name",
                                name, k, (unsigned)op->type, (unsigned)op->type >> 16);
        ops[k].n_inputs = (uint32_t)op->n_inputs;
        ops[k].inputs = op->inputs;
        ops[k].n_outputs = (uint32_t)op->n_outputs;
        ops[k].outputs = op->outputs;
    }
    out->n_operands = (uint32_t)g->n_operands;
    out->n_operations = (uint32_t)g->n_operations;
    out->n_inputs = (uint32_t)g->n_input_indexes;
    out->inputs = g->input_indexes;
    out->n_outputs = (uint32_t)g->n_output_indexes;
    out->outputs = g->output_indexes;
    return SCHEMA_OK;
}

/* The referenced subgraphs; the engine judges how they refer to each other. */
static schema_status referenced_from_proto(const Nnd__Model *m, const ext_map *xmap,
                                           eng_model_desc *out, char *err, size_t errlen) {
    if (m->n_referenced > ENG_MAX_SUBGRAPHS)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "%zu referenced subgraphs, over the limit of %d", m->n_referenced,
                            ENG_MAX_SUBGRAPHS);
    if (!m->n_referenced) return SCHEMA_OK;
    eng_subgraph_desc *refs = calloc(m->n_referenced, sizeof *refs);
    if (!refs)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "out of memory converting model");
    out->referenced = refs;
    out->n_referenced = (uint32_t)m->n_referenced;
    for (size_t r = 0; r < m->n_referenced; r++) {
        char name[48];
        snprintf(name, sizeof name, "referenced subgraph %zu, ", r);
        schema_status s = graph_from_proto(m->referenced[r], xmap, name, &refs[r], err, errlen);
        if (s) return s;
    }
    return SCHEMA_OK;
}

schema_status srv_model_from_proto_ext(const Nnd__Model *m, eng_memory_view *pool_views,
                                       size_t n_views, bool allow_extensions, eng_model_desc *out,
                                       char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!m->main)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "model has no main subgraph");
    ext_map xmap;
    schema_status xs = ext_map_build(m, allow_extensions, &xmap, err, errlen);
    if (xs) return xs;
    if (n_views != m->n_pools)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "model names %zu pools, %zu mapped", m->n_pools, n_views);
    eng_subgraph_desc main;
    schema_status s = graph_from_proto(m->main, &xmap, "", &main, err, errlen);
    eng_model_set_graph(out, &main);
    if (!s) s = referenced_from_proto(m, &xmap, out, err, errlen);
    if (s) {
        srv_model_desc_clear(out);
        return s;
    }
    out->operand_values = m->operand_values.data;
    out->operand_values_len = m->operand_values.len;
    out->n_pools = (uint32_t)n_views;
    out->pools = pool_views;
    out->relaxed = m->relax_computation_float32_to_float16;
    return SCHEMA_OK;
}

static schema_status bind(const Nnd__RequestArgument *a, const char *what, size_t i,
                          const eng_memory_view *pools, size_t n_pools, eng_io *io, char *err,
                          size_t errlen) {
    memset(io, 0, sizeof *io);
    if (a->n_dimensions > ENG_MAX_RANK)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "%s %zu: rank %zu over the limit of %d", what, i, a->n_dimensions,
                            ENG_MAX_RANK);
    io->rank = (uint32_t)a->n_dimensions;
    if (a->n_dimensions) memcpy(io->dims, a->dimensions, sizeof(uint32_t) * a->n_dimensions);
    if (a->has_no_value) {
        io->has_no_value = true;
        return SCHEMA_OK;
    }
    const Nnd__DataLocation *l = a->location;
    if (!l)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "%s %zu has neither a location nor has_no_value", what, i);
    if (l->pool_index >= n_pools)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "%s %zu names pool %u, the request has %zu", what, i, l->pool_index,
                            n_pools);
    const eng_memory_view *p = &pools[l->pool_index];
    if (l->offset > p->size || l->length > p->size - l->offset)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "%s %zu: location %llu+%llu runs past the end of pool %u (%zu bytes)",
                            what, i, (unsigned long long)l->offset, (unsigned long long)l->length,
                            l->pool_index, p->size);
    io->data = (void *)(p->base + l->offset);
    io->length = l->length;
    io->readable_past = p->size - l->offset - l->length; /* the rest of the pool */
    return SCHEMA_OK;
}

schema_status srv_request_from_proto(const Nnd__ExecutionRequest *r, const eng_prepared *p,
                                     const eng_memory_view *pools, size_t n_pools, eng_io *inputs,
                                     eng_io *outputs, char *err, size_t errlen) {
    if (!r) return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "execution has no request");
    if (r->n_inputs != eng_prepared_num_inputs(p))
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "request has %zu inputs, the model %u", r->n_inputs,
                            eng_prepared_num_inputs(p));
    if (r->n_outputs != eng_prepared_num_outputs(p))
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "request has %zu outputs, the model %u", r->n_outputs,
                            eng_prepared_num_outputs(p));
    for (size_t i = 0; i < r->n_inputs; i++) {
        schema_status s = bind(r->inputs[i], "input", i, pools, n_pools, &inputs[i], err, errlen);
        if (s) return s;
    }
    for (size_t i = 0; i < r->n_outputs; i++) {
        schema_status s =
            bind(r->outputs[i], "output", i, pools, n_pools, &outputs[i], err, errlen);
        if (s) return s;
        if (outputs[i].has_no_value)
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "output %zu cannot be omitted", i);
    }
    return SCHEMA_OK;
}

/* ---- a description that outlives its message ------------------------------------------ */

/* Where srv_model_desc_own() copies to: measuring only while base is NULL. */
typedef struct own_block {
    uint8_t *base;
    size_t at;
} own_block;

static const void *keep(own_block *b, const void *src, size_t n) {
    if (!src || !n) return src;
    size_t at = b->at;
    b->at += (n + 7) & ~(size_t)7; /* every piece 8-aligned: scales are floats */
    if (!b->base) return src;
    memcpy(b->base + at, src, n);
    return b->base + at;
}

static void own_graph(own_block *b, eng_operand_desc *operands, uint32_t n_operands,
                      eng_operation_desc *operations, uint32_t n_operations,
                      const uint32_t **inputs, uint32_t n_inputs, const uint32_t **outputs,
                      uint32_t n_outputs) {
    for (uint32_t i = 0; i < n_operands; i++) {
        eng_operand_desc *o = &operands[i];
        o->channel_quant.scales =
            keep(b, o->channel_quant.scales, sizeof(float) * o->channel_quant.n_scales);
        o->extension_data = keep(b, o->extension_data, o->extension_len);
    }
    for (uint32_t k = 0; k < n_operations; k++) {
        eng_operation_desc *op = &operations[k];
        op->inputs = keep(b, op->inputs, sizeof(uint32_t) * op->n_inputs);
        op->outputs = keep(b, op->outputs, sizeof(uint32_t) * op->n_outputs);
    }
    *inputs = keep(b, *inputs, sizeof(uint32_t) * n_inputs);
    *outputs = keep(b, *outputs, sizeof(uint32_t) * n_outputs);
}

/* One pass over everything d borrows: measures while b->base is NULL, else copies. */
static void own_model(own_block *b, eng_model_desc *d) {
    own_graph(b, (eng_operand_desc *)d->operands, d->n_operands,
              (eng_operation_desc *)d->operations, d->n_operations, &d->inputs, d->n_inputs,
              &d->outputs, d->n_outputs);
    for (uint32_t r = 0; r < d->n_referenced; r++) {
        eng_subgraph_desc *g = (eng_subgraph_desc *)&d->referenced[r];
        own_graph(b, (eng_operand_desc *)g->operands, g->n_operands,
                  (eng_operation_desc *)g->operations, g->n_operations, &g->inputs, g->n_inputs,
                  &g->outputs, g->n_outputs);
    }
    d->operand_values = keep(b, d->operand_values, d->operand_values_len);
}

void *srv_model_desc_own(eng_model_desc *d, size_t max_bytes) {
    own_block b = {0};
    own_model(&b, d);
    if (b.at > max_bytes) return NULL;
    b.base = malloc(b.at ? b.at : 1);
    if (!b.base) return NULL;
    b.at = 0;
    own_model(&b, d);
    return b.base;
}

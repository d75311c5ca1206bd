/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_signature.c: operation signatures at addOperation, by the engine's rules. See
 * ndk_signature.h. */
#include "client/ndk_signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

/* The engine's view of an operand as the model declares it: no value, no pool. */
static void describe(const ndk_operand *o, eng_operand_desc *d) {
    memset(d, 0, sizeof *d);
    d->type = o->type;
    d->rank = o->rank <= ENG_MAX_RANK ? o->rank : ENG_MAX_RANK; /* finish refuses more */
    if (d->rank) memcpy(d->dims, o->dims, sizeof *d->dims * d->rank);
    d->scale = o->scale;
    d->zero_point = o->zero_point;
    /* A value set already makes no difference here: the signature is about types. */
    d->lifetime = o->lifetime == NDK_CONSTANT_REFERENCE ? NDK_CONSTANT_COPY : (uint32_t)o->lifetime;
    if (o->has_channel_quant)
        d->channel_quant = (eng_channel_quant){
            .scales = o->scales, .n_scales = o->n_scales, .channel_dim = o->channel_dim};
    d->extension_data = o->ext_data;
    d->extension_len = (uint32_t)o->ext_len;
}

/* What an IF or WHILE sees of the models its operands reference: per SUBGRAPH operand
 * with a model, that model's inputs and outputs (its operands 0.. and then its outputs),
 * numbered in `subgraphs` by the operand's offset. */
typedef struct referenced {
    eng_subgraph_desc *subgraphs;
    eng_operand_desc *operands;
    uint32_t *index;
    uint32_t n;
} referenced;

static void referenced_free(referenced *r) {
    free(r->subgraphs);
    free(r->operands);
    free(r->index);
}

/* Fills r for the operation's n operands d (described from ops), setting each subgraph
 * operand's offset. Returns false when out of memory. */
static bool describe_referenced(const ANeuralNetworksModel *m, const uint32_t *ops, uint32_t n,
                                eng_operand_desc *d, referenced *r) {
    memset(r, 0, sizeof *r);
    size_t n_sub = 0, n_ops = 0;
    for (uint32_t j = 0; j < n; j++) {
        const ANeuralNetworksModel *g = m->operands[ops[j]].ref_model;
        if (m->operands[ops[j]].lifetime != NDK_SUBGRAPH || !g) continue;
        n_sub++;
        n_ops += (size_t)g->n_inputs + g->n_outputs;
    }
    if (!n_sub) return true;
    r->subgraphs = calloc(n_sub, sizeof *r->subgraphs);
    r->operands = calloc(n_ops ? n_ops : 1, sizeof *r->operands);
    r->index = malloc(sizeof *r->index * (n_ops ? n_ops : 1));
    if (!r->subgraphs || !r->operands || !r->index) return false;
    size_t at = 0;
    for (uint32_t j = 0; j < n; j++) {
        const ANeuralNetworksModel *g = m->operands[ops[j]].ref_model;
        if (m->operands[ops[j]].lifetime != NDK_SUBGRAPH || !g) continue;
        eng_subgraph_desc *s = &r->subgraphs[r->n];
        uint32_t ni = g->n_inputs, no = g->n_outputs;
        for (uint32_t k = 0; k < ni + no; k++) {
            describe(&g->operands[k < ni ? g->inputs[k] : g->outputs[k - ni]],
                     &r->operands[at + k]);
            r->index[at + k] = k;
        }
        *s = (eng_subgraph_desc){.n_operands = ni + no,
                                 .operands = r->operands + at,
                                 .n_inputs = ni,
                                 .inputs = r->index + at,
                                 .n_outputs = no,
                                 .outputs = r->index + at + ni};
        d[j].offset = r->n++;
        at += ni + no;
    }
    return true;
}

int ndk_signature_check(const ANeuralNetworksModel *m, int32_t type, uint32_t n_in,
                        const uint32_t *in, uint32_t n_out, const uint32_t *out, char *err,
                        size_t errlen) {
    if ((uint32_t)type >> 16 || type == NDK_OEM_OPERATION) return ANEURALNETWORKS_NO_ERROR;
    /* The operation's own operands, numbered inputs first, then outputs. */
    uint32_t n = n_in + n_out;
    eng_operand_desc *d = malloc(sizeof *d * (n ? n : 1));
    uint32_t *idx = malloc(sizeof *idx * (n ? n : 1)), *ops = malloc(sizeof *ops * (n ? n : 1));
    referenced r = {0};
    bool ok = d && idx && ops;
    for (uint32_t j = 0; ok && j < n; j++) {
        ops[j] = j < n_in ? in[j] : out[j - n_in];
        describe(&m->operands[ops[j]], &d[j]);
        idx[j] = j;
    }
    ok = ok && describe_referenced(m, ops, n, d, &r);
    schema_status s = SCHEMA_UNSUPPORTED;
    char msg[SCHEMA_ERR_LEN];
    if (ok) {
        eng_operation_desc op = {.type = type,
                                 .n_inputs = n_in,
                                 .inputs = idx,
                                 .n_outputs = n_out,
                                 .outputs = idx + n_in};
        s = eng_validate_operation(d, n, &op, r.subgraphs, r.n, m->relaxed, msg, sizeof msg);
    }
    free(d);
    free(idx);
    free(ops);
    referenced_free(&r);
    if (!ok) return ANEURALNETWORKS_OUT_OF_MEMORY;
    if (s != SCHEMA_INVALID_ARGUMENT) return ANEURALNETWORKS_NO_ERROR;
    if (err && errlen) snprintf(err, errlen, "%s", msg);
    return ANEURALNETWORKS_BAD_DATA;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* wire_model: a model or partition (nnd_driver_model) in a message body (wire.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driverhost/wire.h"

/* The fewest body bytes an operand and an operation take: bounds the counts read. An
 * operand is seven u32 (type, rank, scale, zero point, channel dim, scale count, lifetime),
 * its dims, the u64 length, the u32 region and the u64 offset. */
#define OPERAND_MIN   (7u * 4u + 4u * NND_DRIVER_MAX_RANK + 8u + 4u + 8u)
#define OPERATION_MIN 16u

void dh_put_model(dh_wbuf *w, const nnd_driver_model *m, dh_place_fn place, void *ctx) {
    dh_put_u32(w, m->n_operands);
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const nnd_driver_operand *o = &m->operands[i];
        uint32_t rank = o->rank > NND_DRIVER_MAX_RANK ? NND_DRIVER_MAX_RANK : o->rank;
        dh_put(w, &o->type, 4);
        dh_put_u32(w, rank);
        dh_put(w, o->dims, sizeof o->dims);
        dh_put(w, &o->scale, 4);
        dh_put(w, &o->zero_point, 4);
        dh_put_u32(w, o->channel_dim);
        uint32_t ns = o->channel_scales ? o->n_channel_scales : 0;
        dh_put_u32(w, ns);
        dh_put(w, o->channel_scales, sizeof(float) * ns);
        dh_put(w, &o->lifetime, 4);
        dh_put_u64(w, o->data ? o->length : 0);
        uint32_t region = DH_REGION_NONE;
        uint64_t offset = 0;
        if (o->data && !(place && place(ctx, o->data, o->length, &region, &offset)))
            region = DH_REGION_INLINE;
        dh_put_u32(w, region);
        dh_put_u64(w, offset);
        if (region == DH_REGION_INLINE) {
            dh_put_align(w); /* a constant stays aligned for its element type */
            dh_put(w, o->data, o->length);
        }
    }
    dh_put_u32(w, m->n_operations);
    for (uint32_t i = 0; i < m->n_operations; i++) {
        const nnd_driver_operation *op = &m->operations[i];
        dh_put(w, &op->type, 4);
        dh_put_u32(w, op->n_inputs);
        dh_put_u32(w, op->n_outputs);
        dh_put_u32(w, op->index);
        dh_put(w, op->inputs, 4u * op->n_inputs);
        dh_put(w, op->outputs, 4u * op->n_outputs);
    }
    dh_put_u32(w, m->n_inputs);
    dh_put(w, m->inputs, 4u * m->n_inputs);
    dh_put_u32(w, m->n_outputs);
    dh_put(w, m->outputs, 4u * m->n_outputs);
    dh_put_u32(w, m->relaxed ? 1u : 0u);
}

/* Reads n indices into *pool (advancing it), each below limit. */
static const uint32_t *get_indices(dh_rbuf *r, uint32_t n, uint32_t limit, uint32_t **pool) {
    const uint8_t *src = dh_take(r, 4u * (size_t)n);
    if (!src) return NULL;
    uint32_t *dst = *pool;
    memcpy(dst, src, 4u * (size_t)n);
    for (uint32_t i = 0; i < n; i++)
        if (dst[i] >= limit) {
            r->bad = true;
            return NULL;
        }
    *pool += n;
    return dst;
}

int dh_get_model(dh_rbuf *r, nnd_driver_model *m, void **block, dh_resolve_fn resolve, void *ctx,
                 char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    *block = NULL;
    uint32_t n_operands = dh_get_u32(r);
    if (r->bad || (uint64_t)n_operands * OPERAND_MIN > r->len - r->pos) {
        snprintf(err, errlen, "malformed partition (%u operands)", n_operands);
        return -EPROTO;
    }
    /* Operands, operations and every index or scale fit in what the body holds. */
    size_t rest = r->len - r->pos;
    size_t ops_max = rest / OPERATION_MIN + 1;
    size_t bytes = sizeof(nnd_driver_operand) * (n_operands + 1) +
                   sizeof(nnd_driver_operation) * ops_max + rest + 16;
    uint8_t *blk = calloc(1, bytes);
    if (!blk) {
        snprintf(err, errlen, "out of memory for a partition of %u operands", n_operands);
        return -ENOMEM;
    }
    nnd_driver_operand *operands = (nnd_driver_operand *)blk;
    nnd_driver_operation *operations = (nnd_driver_operation *)(operands + n_operands + 1);
    uint32_t *pool = (uint32_t *)(operations + ops_max);
    for (uint32_t i = 0; i < n_operands && !r->bad; i++) {
        nnd_driver_operand *o = &operands[i];
        dh_get(r, &o->type, 4);
        o->rank = dh_get_u32(r);
        dh_get(r, o->dims, sizeof o->dims);
        dh_get(r, &o->scale, 4);
        dh_get(r, &o->zero_point, 4);
        o->channel_dim = dh_get_u32(r);
        o->n_channel_scales = dh_get_u32(r);
        const void *sc = dh_take(r, sizeof(float) * (size_t)o->n_channel_scales);
        if (sc && o->n_channel_scales) {
            memcpy(pool, sc, sizeof(float) * o->n_channel_scales);
            o->channel_scales = (const float *)pool;
            pool += o->n_channel_scales;
        }
        dh_get(r, &o->lifetime, 4);
        o->length = (size_t)dh_get_u64(r);
        uint32_t region = dh_get_u32(r);
        uint64_t offset = dh_get_u64(r);
        /* A rank past the limit is malformed: kept, a driver would index dims past it. */
        if (o->rank > NND_DRIVER_MAX_RANK) r->bad = true;
        if (r->bad) break;
        if (region == DH_REGION_INLINE)
            o->data = dh_take_aligned(r, o->length);
        else if (region != DH_REGION_NONE)
            o->data = resolve ? resolve(ctx, region, offset, o->length) : NULL;
        if (region != DH_REGION_NONE && !o->data && !r->bad) {
            snprintf(err, errlen, "operand %u: its constant (region %u, %llu bytes) is not mapped",
                     i, region, (unsigned long long)o->length);
            free(blk);
            return -EPROTO;
        }
    }
    uint32_t n_operations = dh_get_u32(r);
    if (!r->bad && n_operations > ops_max) r->bad = true;
    for (uint32_t i = 0; i < n_operations && !r->bad; i++) {
        nnd_driver_operation *op = &operations[i];
        dh_get(r, &op->type, 4);
        op->n_inputs = dh_get_u32(r);
        op->n_outputs = dh_get_u32(r);
        op->index = dh_get_u32(r);
        op->inputs = get_indices(r, op->n_inputs, n_operands, &pool);
        op->outputs = get_indices(r, op->n_outputs, n_operands, &pool);
    }
    m->n_inputs = dh_get_u32(r);
    m->inputs = get_indices(r, m->n_inputs, n_operands, &pool);
    m->n_outputs = dh_get_u32(r);
    m->outputs = get_indices(r, m->n_outputs, n_operands, &pool);
    m->relaxed = dh_get_u32(r) != 0;
    if (r->bad) {
        snprintf(err, errlen, "malformed partition in the driver host's message");
        free(blk);
        return -EPROTO;
    }
    m->n_operands = n_operands;
    m->operands = operands;
    m->n_operations = n_operations;
    m->operations = operations;
    *block = blk;
    return 0;
}

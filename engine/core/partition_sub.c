/* SPDX-License-Identifier: Apache-2.0 */
/* partition_sub.c: a run of a plan's steps as a driver's submodel, its preparation, and
 * its place in the plan. See partition.h. */
#include <stdlib.h>
#include <string.h>

#include "engine/base/footprint.h"
#include "engine/core/partition_sub.h"

enum { READ = 1, WRITTEN = 2, READ_OUTSIDE = 4, LISTED = 8 };

static bool is_constant(uint8_t lifetime) {
    return lifetime == SCHEMA_CONSTANT_COPY || lifetime == SCHEMA_CONSTANT_REFERENCE ||
           lifetime == SCHEMA_SUBGRAPH;
}

static void describe(const eng_prepared *p, uint32_t o, uint8_t role, nnd_driver_operand *d) {
    const eng_tensor *t = &p->tensors[o];
    memset(d, 0, sizeof *d);
    d->type = t->type;
    d->rank = t->rank;
    memcpy(d->dims, t->dims, sizeof(uint32_t) * t->rank);
    d->scale = t->scale;
    d->zero_point = t->zero_point;
    if (t->channel_quant) {
        d->channel_dim = t->channel_quant->channel_dim;
        d->n_channel_scales = t->channel_quant->n_scales;
        d->channel_scales = t->channel_quant->scales;
    }
    if (is_constant(t->lifetime)) {
        d->lifetime = NND_DRIVER_CONSTANT;
        d->data = t->lifetime == SCHEMA_SUBGRAPH ? NULL : t->data;
        d->length = t->lifetime == SCHEMA_SUBGRAPH ? 0 : p->operands[o].length;
    } else if (t->lifetime == SCHEMA_NO_VALUE) {
        d->lifetime = NND_DRIVER_OMITTED;
    } else if (!(role & WRITTEN)) {
        d->lifetime = NND_DRIVER_INPUT;
    } else {
        d->lifetime = role & READ_OUTSIDE ? NND_DRIVER_OUTPUT : NND_DRIVER_TEMPORARY;
    }
}

void eng_submodel_free(eng_submodel *s) {
    free(s->operands);
    free(s->ops);
    free(s->lists);
    free(s->map);
    free(s->in);
    memset(s, 0, sizeof *s);
}

bool eng_submodel_make(const eng_prepared *p, uint32_t first, uint32_t n, eng_submodel *s) {
    memset(s, 0, sizeof *s);
    uint32_t end = first + n, n_refs = 0;
    uint8_t *role = calloc(p->n_operands + 1, 1);
    s->map = malloc(sizeof(uint32_t) * (p->n_operands + 1));
    if (!role || !s->map) goto oom;
    for (uint32_t k = first; k < end; k++) {
        const eng_step *st = &p->steps[k];
        n_refs += st->n_in + st->n_out;
        for (uint32_t j = 0; j < st->n_in; j++)
            role[st->in[j]] |= READ;
        for (uint32_t j = 0; j < st->n_out; j++)
            role[st->out[j]] |= WRITTEN;
    }
    for (uint32_t k = 0; k < p->n_steps; k++) {
        if (k == first) k = end;
        if (k >= p->n_steps) break;
        const eng_step *st = &p->steps[k];
        for (uint32_t j = 0; j < st->n_in; j++)
            role[st->in[j]] |= READ_OUTSIDE;
    }
    for (uint32_t i = 0; i < p->n_outputs; i++)
        role[p->outputs[i]] |= READ_OUTSIDE;
    uint32_t n_operands = 0;
    for (uint32_t o = 0; o < p->n_operands; o++)
        s->map[o] = role[o] & (READ | WRITTEN) ? n_operands++ : UINT32_MAX;
    s->operands = calloc(n_operands + 1, sizeof *s->operands);
    s->ops = calloc(n + 1, sizeof *s->ops);
    s->lists = malloc(sizeof(uint32_t) * (n_refs + 1));
    s->in = malloc(sizeof(uint32_t) * (2 * (size_t)n_operands + 2));
    if (!s->operands || !s->ops || !s->lists || !s->in) goto oom;
    for (uint32_t o = 0; o < p->n_operands; o++)
        if (s->map[o] != UINT32_MAX) describe(p, o, role[o], &s->operands[s->map[o]]);
    /* Inputs and outputs in the order the steps first read or write them. */
    uint32_t n_in = 0, n_out = 0, *lists = s->lists;
    for (uint32_t k = first; k < end; k++) {
        const eng_step *st = &p->steps[k];
        nnd_driver_operation *op = &s->ops[k - first];
        op->type = st->def->code;
        op->index = st->index;
        op->n_inputs = st->n_in;
        op->n_outputs = st->n_out;
        op->inputs = lists;
        for (uint32_t j = 0; j < st->n_in; j++) {
            uint32_t o = st->in[j];
            *lists++ = s->map[o];
            if (s->operands[s->map[o]].lifetime == NND_DRIVER_INPUT && !(role[o] & LISTED))
                s->in[n_in++] = o, role[o] |= LISTED;
        }
        op->outputs = lists;
        for (uint32_t j = 0; j < st->n_out; j++)
            *lists++ = s->map[st->out[j]];
    }
    s->out = s->in + n_in;
    for (uint32_t k = first; k < end; k++)
        for (uint32_t j = 0; j < p->steps[k].n_out; j++) {
            uint32_t o = p->steps[k].out[j];
            if (s->operands[s->map[o]].lifetime == NND_DRIVER_OUTPUT && !(role[o] & LISTED))
                s->out[n_out++] = o, role[o] |= LISTED;
        }
    free(role);
    /* The submodel's own lists of them: its operand numbers, kept after in and out. */
    uint32_t *io = malloc(sizeof(uint32_t) * (n_in + n_out + 1));
    if (!io) goto oom_io;
    for (uint32_t i = 0; i < n_in + n_out; i++)
        io[i] = s->map[s->in[i]];
    s->m = (nnd_driver_model){.n_operands = n_operands,
                              .operands = s->operands,
                              .n_operations = n,
                              .operations = s->ops,
                              .n_inputs = n_in,
                              .n_outputs = n_out,
                              .inputs = io,
                              .outputs = io + n_in,
                              .relaxed = p->relaxed};
    return true;
oom:
    free(role);
oom_io:
    eng_submodel_free(s);
    return false;
}

static void submodel_done(eng_submodel *s) {
    free((void *)s->m.inputs);
    eng_submodel_free(s);
}

int eng_partition_prepare(eng_prepared *p, const eng_model_desc *m, eng_driver_dev *dev,
                          uint32_t first, uint32_t n, const nnd_driver_blob *blobs,
                          uint32_t n_blobs, eng_partition **out, char *err, size_t errlen) {
    *out = NULL;
    eng_submodel sub;
    if (!eng_submodel_make(p, first, n, &sub)) {
        schema_errf(err, errlen, "out of memory describing a partition");
        return -1;
    }
    eng_partition *part = calloc(1, sizeof *part);
    uint32_t n_in = sub.m.n_inputs, n_out = sub.m.n_outputs, n_io = n_in + n_out;
    uint32_t *io = part ? malloc(sizeof(uint32_t) * (n_io + 1)) : NULL;
    if (!io) {
        free(part);
        submodel_done(&sub);
        schema_errf(err, errlen, "out of memory preparing a partition");
        return -1;
    }
    memcpy(io, sub.in, sizeof(uint32_t) * n_io);
    nnd_driver_prepare_args args = {.preference = m->preference,
                                    .priority =
                                        m->priority ? m->priority : NND_DRIVER_PRIORITY_MEDIUM,
                                    .deadline_ns = m->deadline_ns};
    nnd_driver_prepared_info info = {0};
    int rc = -1;
    if (blobs) rc = eng_drv_cache_load(dev, &sub.m, &args, blobs, n_blobs, &info, err, errlen);
    if (blobs && rc != NND_DRIVER_OK && !eng_drv_disabled(dev))
        eng_driver_logf(1,
                        "driver %s refused the cache blobs of a partition (operations from "
                        "#%u): %s; preparing it again",
                        dev->info.name, p->steps[first].index, err);
    if (rc != NND_DRIVER_OK) {
        info = (nnd_driver_prepared_info){0};
        rc = eng_drv_prepare(dev, &sub.m, &args, &info, err, errlen);
    }
    submodel_done(&sub);
    if (rc != NND_DRIVER_OK) {
        free(io);
        free(part);
        return rc;
    }
    *part = (eng_partition){.dev = dev,
                            .prepared = info.prepared,
                            .held_bytes = info.held_bytes,
                            .first = first,
                            .n_steps = n,
                            .n_in = n_in,
                            .n_out = n_out,
                            .in = io,
                            .out = io + n_in};
    eng_footprint_add_block(part);
    eng_footprint_add((ssize_t)info.held_bytes);
    *out = part;
    return NND_DRIVER_OK;
}

void eng_partition_install(eng_prepared *p, eng_partition *part) {
    const eng_backend *be = &part->dev->backend;
    for (uint32_t k = part->first; k < part->first + part->n_steps; k++) {
        eng_step *st = &p->steps[k];
        st->backend = be;
        st->run = NULL;
        st->state = NULL;
        st->part_member = k != part->first;
    }
    eng_step_take(&p->steps[part->first], be, part);
    p->steps[part->first].part_len = part->n_steps;
    /* What is written inside and not an output never leaves the driver. */
    for (uint32_t k = part->first; k < part->first + part->n_steps; k++)
        for (uint32_t j = 0; j < p->steps[k].n_out; j++) {
            uint32_t o = p->steps[k].out[j];
            bool crossing = false;
            for (uint32_t i = 0; i < part->n_out && !crossing; i++)
                crossing = part->out[i] == o;
            if (!crossing && p->driver_owned) p->driver_owned[o] = true;
        }
}

void eng_partition_release(void *state) {
    eng_partition *part = state;
    if (!part) return;
    eng_drv_release(part->dev, part->prepared);
    free(part->in);
    free(part);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* partition_view.c: what the daemon sees of a prepared model's driver partitions: the list
 * status shows, and a client buffer's roles as roles of those partitions (device memory).
 * See engine.h (eng_prepared_each_partition, eng_buffer_alloc). */
#include <stdlib.h>

#include "engine/core/partition_sub.h"

void eng_prepared_each_partition(const eng_prepared *p,
                                 void (*fn)(const eng_partition_view *v, void *ctx), void *ctx) {
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        const eng_partition *part = st->part_len ? st->state : NULL;
        if (!part) continue;
        eng_partition_view v = {.backend = &part->dev->backend,
                                .first_op = st->index,
                                .operations = part->n_steps,
                                .held_bytes = part->held_bytes};
        fn(&v, ctx);
    }
}

/* The plan operand behind a role's model input or output; UINT32_MAX when out of range. */
static uint32_t role_operand(const eng_buffer_role *r) {
    uint32_t n = r->output ? r->p->n_outputs : r->p->n_inputs;
    if (r->io >= n) return UINT32_MAX;
    return r->output ? r->p->outputs[r->io] : r->p->inputs[r->io];
}

/* The partition roles of r on b into out (when not NULL); returns how many. A model input
 * is an input of each partition that reads it; a model output is an output of the
 * partition that writes it and an input of each later one that reads it (the run hands
 * both the buffer's handle). */
static uint32_t map_role(const eng_backend *b, const eng_buffer_role *r,
                         nnd_driver_buffer_role *out) {
    uint32_t o = role_operand(r), n = 0;
    if (o == UINT32_MAX) return 0;
    float frequency = r->frequency > 0.0f && r->frequency <= 1.0f ? r->frequency : 1.0f;
    for (uint32_t k = 0; k < r->p->n_steps; k++) {
        const eng_step *st = &r->p->steps[k];
        const eng_partition *part = st->part_len ? st->state : NULL;
        if (!part || &part->dev->backend != b) continue;
        for (uint32_t side = 0; side < 2; side++) {
            uint32_t count = side ? part->n_out : part->n_in;
            const uint32_t *ops = side ? part->out : part->in;
            for (uint32_t j = 0; j < count; j++) {
                if (ops[j] != o) continue;
                if (out)
                    out[n] = (nnd_driver_buffer_role){.prepared = part->prepared,
                                                      .is_output = side == 1,
                                                      .index = j,
                                                      .frequency = frequency};
                n++;
            }
        }
    }
    return n;
}

bool eng_buffer_roles_on(const eng_backend *b, const eng_buffer_role *roles, size_t n) {
    if (!b || !b->mem_alloc || !b->driver || !n) return false;
    for (size_t i = 0; i < n; i++)
        if (!map_role(b, &roles[i], NULL)) return false;
    return true;
}

uint64_t eng_buffer_alloc(const eng_backend *b, const eng_operand_desc *operand, uint64_t bytes,
                          const eng_buffer_role *roles, size_t n) {
    if (!eng_buffer_roles_on(b, roles, n)) return 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += map_role(b, &roles[i], NULL);
    if (total > UINT32_MAX) return 0;
    nnd_driver_buffer_role *all = calloc((size_t)total, sizeof *all);
    if (!all) return 0;
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++)
        at += map_role(b, &roles[i], all + at);
    uint64_t h = b->mem_alloc(b, operand, bytes, all, at);
    free(all);
    return h;
}

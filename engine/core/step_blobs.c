/* SPDX-License-Identifier: Apache-2.0 */
/* step_blobs.c: driver steps' prepared states as cache blobs (backend.h, "Cache blobs"):
 * taken out of a prepared model, and given back instead of preparing. See engine.h. */
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/core/internal.h"

void eng_step_blobs_free(eng_step_blob *b, uint32_t n) {
    for (uint32_t i = 0; b && i < n; i++)
        free((void *)b[i].data);
    free(b);
}

schema_status eng_prepared_blobs(const eng_prepared *p, const eng_backend *const *drivers,
                                 uint32_t n_drivers, eng_step_blob **out, uint32_t *n_out,
                                 char *err, size_t errlen) {
    *out = NULL;
    *n_out = 0;
    eng_step_blob *b = calloc(p->n_steps + 1, sizeof *b);
    if (!b) return schema_failf(err, errlen, NND_GENERAL_FAILURE, "out of memory");
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        uint32_t d = 0;
        while (d < n_drivers && drivers[d] != st->backend)
            d++;
        if (d == n_drivers) continue; /* the CPU's: prepared again from the model */
        schema_status s =
            st->backend->serialize
                ? st->backend->serialize(st->state, (uint8_t **)&b[n].data, &b[n].len, err, errlen)
                : schema_failf(err, errlen, NND_UNSUPPORTED, "device %s keeps no cache blobs",
                               st->backend->name);
        if (s) {
            eng_step_blobs_free(b, n);
            return s;
        }
        b[n].operation = st->index;
        b[n++].driver = d;
    }
    *out = b;
    *n_out = n;
    return NND_OK;
}

schema_status eng_claim_from_blobs(eng_prepared *p, const eng_model_desc *m, char *err,
                                   size_t errlen) {
    eng_tensor *in[ENG_STEP_MAX_IN], *out[ENG_STEP_MAX_OUT];
    for (uint32_t i = 0; i < m->n_blobs; i++) {
        const eng_step_blob *b = &m->blobs[i];
        eng_step *st = NULL;
        for (uint32_t k = 0; k < p->n_steps && !st; k++)
            if (p->steps[k].index == b->operation) st = &p->steps[k];
        const eng_backend *be = b->driver < m->n_drivers ? m->drivers[b->driver] : NULL;
        if (!st || st->backend || !eng_step_offerable(st) || !be || !be->claim_blob)
            return schema_failf(err, errlen, NND_GENERAL_FAILURE,
                                "cache blob %u names no driver step (operation %u, device %u)", i,
                                b->operation, b->driver);
        eng_op_ctx c = eng_step_ctx(p, st, be, in, out, err, errlen);
        void *state = be->claim_blob(&c, b->data, b->len);
        if (!state) return NND_GENERAL_FAILURE; /* claim_blob said why */
        eng_step_take(st, be, state);
    }
    return NND_OK;
}

/* step_blobs.c: driver steps' prepared states as cache blobs (backend.h, "Cache blobs"):
 * taken out of a prepared model, and given back instead of preparing. See engine.h. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "internal.h"

void nnd_step_blobs_free(nnd_step_blob *b, uint32_t n) {
    for (uint32_t i = 0; b && i < n; i++)
        free((void *)b[i].data);
    free(b);
}

nnd_status nnd_prepared_blobs(const nnd_prepared *p, const nnd_backend *const *drivers,
                              uint32_t n_drivers, nnd_step_blob **out, uint32_t *n_out, char *err,
                              size_t errlen) {
    *out = NULL;
    *n_out = 0;
    nnd_step_blob *b = calloc(p->n_steps + 1, sizeof *b);
    if (!b) return nnd_failf(err, errlen, NND_GENERAL_FAILURE, "out of memory");
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const nnd_step *st = &p->steps[k];
        uint32_t d = 0;
        while (d < n_drivers && drivers[d] != st->backend)
            d++;
        if (d == n_drivers) continue; /* the CPU's: prepared again from the model */
        nnd_status s =
            st->backend->serialize
                ? st->backend->serialize(st->state, (uint8_t **)&b[n].data, &b[n].len, err, errlen)
                : nnd_failf(err, errlen, NND_UNSUPPORTED, "device %s keeps no cache blobs",
                            st->backend->name);
        if (s) {
            nnd_step_blobs_free(b, n);
            return s;
        }
        b[n].operation = st->index;
        b[n++].driver = d;
    }
    *out = b;
    *n_out = n;
    return NND_OK;
}

nnd_status nnd_claim_from_blobs(nnd_prepared *p, const nnd_model_desc *m, char *err,
                                size_t errlen) {
    nnd_tensor *in[512], *out[64];
    for (uint32_t i = 0; i < m->n_blobs; i++) {
        const nnd_step_blob *b = &m->blobs[i];
        nnd_step *st = NULL;
        for (uint32_t k = 0; k < p->n_steps && !st; k++)
            if (p->steps[k].index == b->operation) st = &p->steps[k];
        const nnd_backend *be = b->driver < m->n_drivers ? m->drivers[b->driver] : NULL;
        if (!st || st->backend || st->sub[0] || st->n_in > 512 || st->n_out > 64 || !be ||
            !be->claim_blob)
            return nnd_failf(err, errlen, NND_GENERAL_FAILURE,
                             "cache blob %u names no driver step (operation %u, device %u)", i,
                             b->operation, b->driver);
        for (uint32_t j = 0; j < st->n_in; j++)
            in[j] = &p->tensors[st->in[j]];
        for (uint32_t j = 0; j < st->n_out; j++)
            out[j] = &p->tensors[st->out[j]];
        nnd_op_ctx c = {.def = st->def,
                        .index = st->index,
                        .in = in,
                        .n_in = st->n_in,
                        .out = out,
                        .n_out = st->n_out,
                        .relaxed = p->relaxed,
                        .state = be->impl,
                        .err = err,
                        .errlen = errlen};
        void *state = be->claim_blob(&c, b->data, b->len);
        if (!state) return NND_GENERAL_FAILURE; /* claim_blob said why */
        st->run = be->run;
        st->backend = be;
        st->state = state;
    }
    return NND_OK;
}

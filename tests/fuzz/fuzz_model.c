/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_model: model validation and preparation, then one execution. The input is
 *   u8 flags (bit 0: reference kernels only), section: a wire Nnd__Model,
 *   then the stream: one zero-padded pool per MemoryPool (its size, at most FZ_MAX_POOL),
 *   then the execution stream of fuzz_common.h.
 * The model goes through daemon/wire/convert.c as the daemon's PrepareModel does, then
 * eng_supported_operations(), eng_prepare() and, when that succeeds, fz_exec_prepared().
 * Referenced subgraphs (IF, WHILE) come with the model, as on the wire; a loop stops after
 * FZ_LOOP_TIMEOUT_NS. */
#include <stdbool.h>
#include <stdlib.h>

#include "daemon/wire/convert.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_target.h"

#define MAX_POOLS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_in in = {data, size};
    fz_set_reference_kernels(fz_u8(&in) & 1);
    fz_in ms = fz_section(&in);
    Nnd__Model *m = nnd__model__unpack(NULL, ms.len, ms.p);
    if (!m) return 0;
    eng_memory_view views[MAX_POOLS];
    size_t n_views = 0;
    bool owned = false;
    if (m->n_pools > MAX_POOLS) goto out;
    for (; n_views < m->n_pools; n_views++) {
        uint64_t want = m->pools[n_views]->size;
        size_t n = want < FZ_MAX_POOL ? (size_t)want : FZ_MAX_POOL;
        uint8_t *b = malloc(n ? n : 1);
        if (!b) goto out;
        fz_bytes(&in, b, n);
        views[n_views] = (eng_memory_view){.base = b, .size = n, .release = free, .ctx = b};
    }
    char err[SCHEMA_ERR_LEN];
    eng_model_desc d;
    if (srv_model_from_proto(m, views, n_views, &d, err, sizeof err) != SCHEMA_OK) goto out;
    bool *supported = calloc(d.n_operations + 1, sizeof *supported);
    if (supported) eng_supported_operations(&d, supported, err, sizeof err);
    free(supported);
    eng_prepared *p = NULL;
    if (eng_prepare(&d, &p, err, sizeof err) == SCHEMA_OK) {
        owned = true; /* the prepared model releases the pools */
        fz_exec_prepared(p, &in);
        eng_prepared_free(p);
    }
    srv_model_desc_clear(&d);
out:
    for (size_t i = 0; !owned && i < n_views; i++)
        free(views[i].ctx);
    nnd__model__free_unpacked(m, NULL);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_request: request validation against a prepared model. The input is
 *   u8 flags (bit 0: reference kernels only), section: a wire Nnd__Model (no pools),
 *   section: a wire Nnd__ExecutionRequest, then the stream: the bytes of each request pool
 *   in order, each as large as its MemoryPool.size says (at most FZ_MAX_POOL).
 * A model that prepares is the target; the request goes through srv_request_from_proto()
 * as the daemon's Execute does, and a request it accepts runs with eng_exec_run(), inputs
 * and outputs in place inside the pools (they may overlap, as a client's may). */
#include <stdbool.h>
#include <stdlib.h>

#include "daemon/wire/convert.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_target.h"

#define MAX_POOLS 16

static eng_prepared *prepare(fz_in ms) {
    Nnd__Model *m = nnd__model__unpack(NULL, ms.len, ms.p);
    if (!m) return NULL;
    eng_prepared *p = NULL;
    eng_model_desc d;
    char err[SCHEMA_ERR_LEN];
    if (srv_model_from_proto(m, NULL, 0, &d, err, sizeof err) == SCHEMA_OK) {
        if (eng_prepare(&d, &p, err, sizeof err) != SCHEMA_OK) p = NULL;
        srv_model_desc_clear(&d);
    }
    nnd__model__free_unpacked(m, NULL);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_in in = {data, size};
    fz_set_reference_kernels(fz_u8(&in) & 1);
    fz_in ms = fz_section(&in), rs = fz_section(&in);
    eng_prepared *p = prepare(ms);
    if (!p) return 0;
    Nnd__ExecutionRequest *r = nnd__execution_request__unpack(NULL, rs.len, rs.p);
    eng_memory_view views[MAX_POOLS];
    size_t n_views = 0;
    uint32_t n_in = eng_prepared_num_inputs(p), n_out = eng_prepared_num_outputs(p);
    eng_io *ins = calloc(n_in + 1, sizeof *ins), *outs = calloc(n_out + 1, sizeof *outs);
    if (!r || !ins || !outs || r->n_pools > MAX_POOLS) goto out;
    for (; n_views < r->n_pools; n_views++) {
        uint64_t n = r->pools[n_views]->size;
        if (n > FZ_MAX_POOL) goto out;
        uint8_t *b = malloc(n ? n : 1);
        if (!b) goto out;
        fz_bytes(&in, b, n);
        views[n_views] = (eng_memory_view){.base = b, .size = n};
    }
    char err[SCHEMA_ERR_LEN];
    if (srv_request_from_proto(r, p, views, n_views, ins, outs, err, sizeof err) == SCHEMA_OK &&
        fz_exec_affordable(p))
        fz_exec_bound(p, ins, outs);
out:
    for (size_t i = 0; i < n_views; i++)
        free((void *)views[i].base);
    free(ins);
    free(outs);
    if (r) nnd__execution_request__free_unpacked(r, NULL);
    eng_prepared_free(p);
    return 0;
}

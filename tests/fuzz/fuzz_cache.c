/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_cache: compilation cache deserialization (storage/serialize.h), as the daemon's
 * PrepareModelFromCache and content cache load it. The input is
 *   u8 flags (bit 0: reference kernels only), section: the model cache bytes,
 *   section: the data cache bytes, then the execution stream of fuzz_common.h.
 * store_ser_decode() treats both as hostile; what it accepts goes to eng_prepare() with the
 * data payload as pool 0 (in a 64-byte aligned copy, as the daemon's buffers are), and a
 * model that prepares is executed once. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_target.h"
#include "storage/serialize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_in in = {data, size};
    fz_set_reference_kernels(fz_u8(&in) & 1);
    fz_in ms = fz_section(&in), ds = fz_section(&in);
    uint8_t *heap = aligned_alloc(64, (ds.len + 64) & ~(size_t)63);
    if (!heap) return 0;
    if (ds.len) memcpy(heap, ds.p, ds.len);
    store_ser_model sm;
    char err[SCHEMA_ERR_LEN];
    eng_prepared *p = NULL;
    if (store_ser_decode(ms.p, ms.len, heap, ds.len, &sm, err, sizeof err) == SCHEMA_OK) {
        sm.pool.release = free;
        sm.pool.ctx = heap;
        if (eng_prepare(&sm.desc, &p, err, sizeof err) != SCHEMA_OK) p = NULL;
        store_ser_model_clear(&sm);
    }
    if (p) {
        fz_exec_prepared(p, &in);
        eng_prepared_free(p); /* frees heap */
    } else {
        free(heap);
    }
    return 0;
}

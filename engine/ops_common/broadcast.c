/* SPDX-License-Identifier: Apache-2.0 */
/* broadcast.c: NumPy-style broadcasting. See broadcast.h. */
#include "engine/ops_common/broadcast.h"

#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"

schema_status eng_broadcast_shape(eng_op_ctx *c, const eng_tensor *a, const eng_tensor *b,
                                  eng_tensor *out) {
    uint32_t rank = a->rank > b->rank ? a->rank : b->rank;
    uint32_t dims[ENG_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++) {
        int ia = (int)a->rank - (int)rank + (int)i, ib = (int)b->rank - (int)rank + (int)i;
        uint32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return eng_fail(c, "shapes do not broadcast: dimension %u is %u and %u", i, da, db);
        dims[i] = da == 1 ? db : da;
    }
    eng_set_shape(out, rank, dims);
    return SCHEMA_OK;
}

void eng_broadcast_walk(const eng_tensor *a, const eng_tensor *b, const eng_tensor *out,
                        eng_bcast_row_fn row, void *ctx) {
    uint32_t rank = out->rank;
    size_t total = eng_elems(out);
    if (total == 0) return;
    if (rank == 0) {
        row(ctx, 0, 0, 0, 0, 0, 1);
        return;
    }
    /* Element strides of a and b in output coordinates, 0 on broadcast dimensions. */
    size_t sa[ENG_MAX_RANK], sb[ENG_MAX_RANK];
    size_t acc_a = 1, acc_b = 1;
    for (int i = (int)rank - 1; i >= 0; i--) {
        int ia = (int)a->rank - (int)rank + i, ib = (int)b->rank - (int)rank + i;
        uint32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        sa[i] = da == 1 ? 0 : acc_a;
        sb[i] = db == 1 ? 0 : acc_b;
        acc_a *= da;
        acc_b *= db;
    }
    uint32_t inner = out->dims[rank - 1];
    uint32_t idx[ENG_MAX_RANK] = {0};
    size_t off_a = 0, off_b = 0;
    for (size_t o = 0; o < total; o += inner) {
        row(ctx, o, off_a, sa[rank - 1], off_b, sb[rank - 1], inner);
        for (int d = (int)rank - 2; d >= 0; d--) {
            idx[d]++;
            off_a += sa[d];
            off_b += sb[d];
            if (idx[d] < out->dims[d]) break;
            off_a -= sa[d] * idx[d];
            off_b -= sb[d] * idx[d];
            idx[d] = 0;
        }
    }
}

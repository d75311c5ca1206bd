/* SPDX-License-Identifier: Apache-2.0 */
/* pack.c: PACK (NNAPI feature level 6) — N >= 1 tensors of one shape (rank R >= 1) stacked
 * along a new dimension `axis` in [0, R] (input 0, an INT32 scalar; no negative axes, as
 * the reference) into a tensor of rank R + 1 whose dimension `axis` is N. Quantized inputs
 * all carry the output's scale and zero point. Each input is one strided copy into its
 * slot of the output; elements are moved as opaque bytes. */
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

static schema_status pack_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, UINT32_MAX, 1, 1);
    if (s || (s = eng_check_scalar(c, 0, SCHEMA_INT32))) return s;
    const eng_tensor *out = c->out[0];
    uint32_t want_rank = out->known && out->rank ? out->rank - 1 : 0;
    for (uint32_t i = 1; i < c->n_in; i++) {
        const eng_tensor *t = c->in[i];
        if ((s = eng_check_moved(c, i, 0))) return s;
        if (!t->known && t->rank == 0) continue; /* rank unknown */
        if (want_rank && t->rank != want_rank)
            return eng_fail(c, "input %u has rank %u, the others and the output ask for %u", i,
                            t->rank, want_rank);
        want_rank = t->rank;
    }
    return SCHEMA_OK;
}

static schema_status pack_shape(eng_op_ctx *c) {
    const eng_tensor *first = c->in[1];
    if (first->rank < 1) return eng_fail(c, "input 1 must have rank 1 or more");
    if (first->rank + 1 > ENG_MAX_RANK)
        return eng_fail(c, "the output would have rank %u, over the limit of %u", first->rank + 1,
                        ENG_MAX_RANK);
    for (uint32_t i = 2; i < c->n_in; i++) {
        const eng_tensor *t = c->in[i];
        bool same = t->rank == first->rank;
        for (uint32_t d = 0; same && d < t->rank; d++)
            same = t->dims[d] == first->dims[d];
        if (!same) return eng_fail(c, "input %u does not have the shape of input 1", i);
    }
    int32_t axis = eng_i32(c->in[0]);
    if (axis < 0 || (uint32_t)axis > first->rank)
        return eng_fail(c, "axis %d is out of range [0, %u]", axis, first->rank);
    uint32_t dims[ENG_MAX_RANK], r = 0;
    for (uint32_t d = 0; d <= first->rank; d++)
        dims[r++] = d == (uint32_t)axis ? c->n_in - 1 : first->dims[d < (uint32_t)axis ? d : d - 1];
    eng_set_shape(c->out[0], r, dims);
    return SCHEMA_OK;
}

static schema_status pack_run(eng_op_ctx *c) {
    eng_tensor *out = c->out[0];
    uint32_t axis = (uint32_t)eng_i32(c->in[0]), rank = out->rank;
    size_t es = schema_type_size(out->type);
    if (eng_elems(out) == 0) return SCHEMA_OK;
    ptrdiff_t os[ENG_MAX_RANK], ds[ENG_MAX_RANK], ss[ENG_MAX_RANK];
    eng_dense_steps(rank, out->dims, os);
    /* An input's dimension d is the output's d, or d + 1 from the axis on. */
    for (uint32_t d = 0; d + 1 < rank; d++)
        ds[d] = os[d < axis ? d : d + 1];
    for (uint32_t i = 1; i < c->n_in; i++) {
        const eng_tensor *t = c->in[i];
        eng_dense_steps(t->rank, t->dims, ss);
        uint8_t *dst = (uint8_t *)out->data + (ptrdiff_t)(i - 1) * os[axis] * (ptrdiff_t)es;
        eng_copy_nd(dst, ds, t->data, ss, t->dims, t->rank, es);
    }
    return SCHEMA_OK;
}

/* Keyed by input 1, the first packed tensor. */
ENG_OP_DEF(PACK, pack_check, pack_shape, 0, 1, ENG_KERNELS_MOVED(pack_run));

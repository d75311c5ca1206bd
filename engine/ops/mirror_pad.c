/* SPDX-License-Identifier: Apache-2.0 */
/* mirror_pad.c: MIRROR_PAD (NNAPI feature level 7) — pads each dimension of input 0 (any
 * rank from 1) with its own values mirrored at the edges. Input 1 is a [rank, 2]
 * TENSOR_INT32 of (before, after) counts; input 2 the mode: 0 REFLECT (the edge element
 * is not repeated, so a count is at most dimension - 1) or 1 SYMMETRIC (it is, so at most
 * the dimension).
 *
 * The input is copied into the middle of the output, then one dimension after the other
 * every padded slice is copied from its mirror image in the output itself: by the time
 * dimension d is padded, the dimensions before it are padded in full, so each copy spans
 * them whole and the later dimensions' middle part only. Elements are opaque bytes. */
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

enum { MODE_REFLECT = 0, MODE_SYMMETRIC = 1 };

static schema_status mirror_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 3, 3, 1, 1);
    if (s || (s = eng_check_moved(c, 0, 0)) || (s = eng_check_scalar(c, 2, SCHEMA_INT32))) return s;
    const eng_tensor *in = c->in[0], *pad = c->in[1], *out = c->out[0];
    if (pad->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "the paddings (input 1) must be TENSOR_INT32, is %s",
                        schema_type_name(pad->type));
    if ((s = eng_check_rank(c, pad, "the paddings (input 1)", 2, 2))) return s;
    if (pad->rank == 2 && pad->dims[1] && pad->dims[1] != 2)
        return eng_fail(c, "the paddings (input 1) must have 2 columns, have %u", pad->dims[1]);
    bool in_rank = in->known || in->rank;
    if (in_rank && pad->rank == 2 && pad->dims[0] && pad->dims[0] != in->rank)
        return eng_fail(c, "the paddings (input 1) have %u rows for an input of rank %u",
                        pad->dims[0], in->rank);
    if (in_rank && (out->known || out->rank) && out->rank != in->rank)
        return eng_fail(c, "output 0 has rank %u, input 0 has %u", out->rank, in->rank);
    if (c->in[2]->data) {
        int32_t mode = eng_i32(c->in[2]);
        if (mode != MODE_REFLECT && mode != MODE_SYMMETRIC)
            return eng_fail(c, "mode %d is neither 0 (REFLECT) nor 1 (SYMMETRIC)", mode);
    }
    return SCHEMA_OK;
}

static schema_status mirror_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *pt = c->in[1];
    if (in->rank < 1) return eng_fail(c, "input 0 must have rank 1 or more");
    if (pt->rank != 2 || pt->dims[0] != in->rank || pt->dims[1] != 2)
        return eng_fail(c, "the paddings (input 1) must have shape [%u, 2]", in->rank);
    if (!pt->data) return ENG_DEFER;
    int32_t mode = eng_i32(c->in[2]);
    if (mode != MODE_REFLECT && mode != MODE_SYMMETRIC)
        return eng_fail(c, "mode %d is neither 0 (REFLECT) nor 1 (SYMMETRIC)", mode);
    const int32_t *pad = pt->data;
    uint32_t dims[ENG_MAX_RANK];
    for (uint32_t d = 0; d < in->rank; d++) {
        int64_t most = (int64_t)in->dims[d] - (mode == MODE_REFLECT);
        int32_t before = pad[2 * d], after = pad[2 * d + 1];
        if (before < 0 || after < 0 || before > most || after > most)
            return eng_fail(c,
                            "paddings (%d, %d) of dimension %u (size %u) must be in [0, %lld] "
                            "in %s mode",
                            before, after, d, in->dims[d], (long long)(most < 0 ? 0 : most),
                            mode == MODE_REFLECT ? "REFLECT" : "SYMMETRIC");
        uint64_t n = (uint64_t)before + in->dims[d] + (uint64_t)after;
        if (n > UINT32_MAX) return eng_fail(c, "output dimension %u is too large", d);
        dims[d] = (uint32_t)n;
    }
    eng_set_shape(c->out[0], in->rank, dims);
    return SCHEMA_OK;
}

/* The element offset (in the output) of index vector idx. */
static ptrdiff_t offset_of(const ptrdiff_t *steps, const uint32_t *idx, uint32_t rank) {
    ptrdiff_t off = 0;
    for (uint32_t d = 0; d < rank; d++)
        off += (ptrdiff_t)idx[d] * steps[d];
    return off;
}

static schema_status mirror_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    eng_tensor *out = c->out[0];
    const int32_t *pad = c->in[1]->data;
    uint32_t rank = in->rank;
    int32_t edge = eng_i32(c->in[2]) == MODE_REFLECT ? 1 : 0; /* REFLECT skips the edge */
    size_t es = schema_type_size(in->type);
    if (eng_elems(out) == 0) return SCHEMA_OK;
    uint8_t *base = out->data;
    ptrdiff_t os[ENG_MAX_RANK], is[ENG_MAX_RANK];
    eng_dense_steps(rank, out->dims, os);
    eng_dense_steps(rank, in->dims, is);
    /* The slab copied: dimensions before d whole, d one slice, after d the middle. */
    uint32_t start[ENG_MAX_RANK], count[ENG_MAX_RANK];
    for (uint32_t d = 0; d < rank; d++)
        start[d] = (uint32_t)pad[2 * d], count[d] = in->dims[d];
    if (eng_elems(in))
        eng_copy_nd(base + offset_of(os, start, rank) * (ptrdiff_t)es, os, in->data, is, in->dims,
                    rank, es);
    for (uint32_t d = 0; d < rank; d++) {
        uint32_t before = (uint32_t)pad[2 * d], after = (uint32_t)pad[2 * d + 1], n = in->dims[d];
        count[d] = 1;
        for (uint32_t k = 0; k < before + after; k++) {
            /* Output index `to` of dimension d takes the mirror image `from`. */
            uint32_t to, from;
            if (k < before) {
                to = k;
                from = before + (before - k) - (1 - (uint32_t)edge);
            } else {
                uint32_t j = k - before;
                to = before + n + j;
                from = before + n - 1 - j - (uint32_t)edge;
            }
            start[d] = to;
            ptrdiff_t dst = offset_of(os, start, rank);
            start[d] = from;
            ptrdiff_t src = offset_of(os, start, rank);
            eng_copy_nd(base + dst * (ptrdiff_t)es, os, base + src * (ptrdiff_t)es, os, count, rank,
                        es);
        }
        start[d] = 0, count[d] = out->dims[d]; /* padded: later slabs span it whole */
    }
    return SCHEMA_OK;
}

ENG_OP_DEF(MIRROR_PAD, mirror_check, mirror_shape, 0, 0, ENG_KERNELS_MOVED(mirror_run));

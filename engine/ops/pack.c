/* pack.c: PACK (NNAPI feature level 6) — N >= 1 tensors of one shape (rank R >= 1) stacked
 * along a new dimension `axis` in [0, R] (input 0, an INT32 scalar; no negative axes, as
 * the reference) into a tensor of rank R + 1 whose dimension `axis` is N. Quantized inputs
 * all carry the output's scale and zero point. Each input is one strided copy into its
 * slot of the output; elements are moved as opaque bytes. */
#include "kernel_errors.h"
#include "op_def.h"
#include "operand.h"
#include "signature.h"
#include "tensor_copy.h"

static nnd_status pack_check(nnd_op_ctx *c) {
    nnd_status s = nnd_check_count(c, 2, UINT32_MAX, 1, 1);
    if (s || (s = nnd_check_scalar(c, 0, NND_INT32))) return s;
    const nnd_tensor *out = c->out[0];
    uint32_t want_rank = out->known && out->rank ? out->rank - 1 : 0;
    for (uint32_t i = 1; i < c->n_in; i++) {
        const nnd_tensor *t = c->in[i];
        if ((s = nnd_check_moved(c, i, 0))) return s;
        if (!t->known && t->rank == 0) continue; /* rank unknown */
        if (want_rank && t->rank != want_rank)
            return nnd_fail(c, "input %u has rank %u, the others and the output ask for %u", i,
                            t->rank, want_rank);
        want_rank = t->rank;
    }
    return NND_OK;
}

static nnd_status pack_shape(nnd_op_ctx *c) {
    const nnd_tensor *first = c->in[1];
    if (first->rank < 1) return nnd_fail(c, "input 1 must have rank 1 or more");
    if (first->rank + 1 > NND_MAX_RANK)
        return nnd_fail(c, "the output would have rank %u, over the limit of %u", first->rank + 1,
                        NND_MAX_RANK);
    for (uint32_t i = 2; i < c->n_in; i++) {
        const nnd_tensor *t = c->in[i];
        bool same = t->rank == first->rank;
        for (uint32_t d = 0; same && d < t->rank; d++)
            same = t->dims[d] == first->dims[d];
        if (!same) return nnd_fail(c, "input %u does not have the shape of input 1", i);
    }
    int32_t axis = nnd_i32(c->in[0]);
    if (axis < 0 || (uint32_t)axis > first->rank)
        return nnd_fail(c, "axis %d is out of range [0, %u]", axis, first->rank);
    uint32_t dims[NND_MAX_RANK], r = 0;
    for (uint32_t d = 0; d <= first->rank; d++)
        dims[r++] = d == (uint32_t)axis ? c->n_in - 1 : first->dims[d < (uint32_t)axis ? d : d - 1];
    nnd_set_shape(c->out[0], r, dims);
    return NND_OK;
}

static nnd_status pack_run(nnd_op_ctx *c) {
    nnd_tensor *out = c->out[0];
    uint32_t axis = (uint32_t)nnd_i32(c->in[0]), rank = out->rank;
    size_t es = nnd_type_size(out->type);
    if (nnd_elems(out) == 0) return NND_OK;
    ptrdiff_t os[NND_MAX_RANK], ds[NND_MAX_RANK], ss[NND_MAX_RANK];
    nnd_dense_steps(rank, out->dims, os);
    /* An input's dimension d is the output's d, or d + 1 from the axis on. */
    for (uint32_t d = 0; d + 1 < rank; d++)
        ds[d] = os[d < axis ? d : d + 1];
    for (uint32_t i = 1; i < c->n_in; i++) {
        const nnd_tensor *t = c->in[i];
        nnd_dense_steps(t->rank, t->dims, ss);
        uint8_t *dst = (uint8_t *)out->data + (ptrdiff_t)(i - 1) * os[axis] * (ptrdiff_t)es;
        nnd_copy_nd(dst, ds, t->data, ss, t->dims, t->rank, es);
    }
    return NND_OK;
}

/* Keyed by input 1, the first packed tensor. */
const nnd_op_def nnd_op_pack = {
    .code = NND_OP_PACK,
    .name = "PACK",
    .check = pack_check,
    .shape = pack_shape,
    .kernels = NND_KERNELS_MOVED(pack_run),
    .key_input = 1,
};

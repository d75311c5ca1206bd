/* SPDX-License-Identifier: Apache-2.0 */
/* reverse.c: REVERSE (NNAPI feature level 7) — input 0 (rank 1 to 8) with the order of
 * one dimension reversed; the dimension is the one element of the TENSOR_INT32 input 1,
 * in [0, rank) (no negative axes, as the reference). One strided copy that walks the
 * reversed dimension backwards; elements are moved as opaque bytes. */
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

#define REVERSE_MAX_RANK 8

static schema_status reverse_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 2, 1, 1);
    if (s || (s = eng_check_moved(c, 0, 0))) return s;
    const eng_tensor *axis = c->in[1];
    if (axis->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "the axis (input 1) must be TENSOR_INT32, is %s",
                        schema_type_name(axis->type));
    if ((s = eng_check_rank(c, axis, "the axis (input 1)", 1, 1))) return s;
    if (axis->known && axis->dims[0] != 1)
        return eng_fail(c, "the axis (input 1) must have shape [1], has [%u]", axis->dims[0]);
    const eng_tensor *in = c->in[0], *out = c->out[0];
    if (in->rank && out->rank && in->rank != out->rank)
        return eng_fail(c, "output 0 has rank %u, input 0 has %u", out->rank, in->rank);
    return eng_check_rank(c, in, "input 0", 1, REVERSE_MAX_RANK);
}

static schema_status reverse_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *axis = c->in[1];
    if (in->rank < 1 || in->rank > REVERSE_MAX_RANK)
        return eng_fail(c, "input 0 must have rank 1 to %u, has %u", REVERSE_MAX_RANK, in->rank);
    if (axis->rank != 1 || axis->dims[0] != 1)
        return eng_fail(c, "the axis (input 1) must have shape [1]");
    if (!axis->data) return ENG_DEFER;
    int32_t a = eng_i32(axis);
    if (a < 0 || (uint32_t)a >= in->rank)
        return eng_fail(c, "axis %d is out of range for rank %u", a, in->rank);
    eng_copy_shape(c->out[0], in);
    return SCHEMA_OK;
}

static schema_status reverse_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    uint32_t axis = (uint32_t)eng_i32(c->in[1]);
    size_t es = schema_type_size(in->type);
    if (eng_elems(in) == 0) return SCHEMA_OK;
    ptrdiff_t ds[REVERSE_MAX_RANK], ss[REVERSE_MAX_RANK];
    eng_dense_steps(in->rank, in->dims, ds);
    eng_dense_steps(in->rank, in->dims, ss);
    /* Read the axis from its last index down. */
    const uint8_t *src =
        (const uint8_t *)in->data + (in->dims[axis] - 1) * ss[axis] * (ptrdiff_t)es;
    ss[axis] = -ss[axis];
    eng_copy_nd(c->out[0]->data, ds, src, ss, in->dims, in->rank, es);
    return SCHEMA_OK;
}

ENG_OP_DEF(REVERSE, reverse_check, reverse_shape, 0, 0, ENG_KERNELS_MOVED(reverse_run));

/* SPDX-License-Identifier: Apache-2.0 */
/* fill.c: FILL (HAL 1.3) — a tensor of the shape given by a 1-D TENSOR_INT32 whose every
 * element is the value scalar (FLOAT32, FLOAT16 or INT32, matching the output type).
 * A shape entry must not be negative; 0 gives a zero-sized output. The shape tensor is
 * usually not constant, so the output shape is mostly known at execution only. */
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

static int32_t value_type_of(int32_t tensor_type) {
    switch (tensor_type) {
    case SCHEMA_TENSOR_FLOAT32: return SCHEMA_FLOAT32;
    case SCHEMA_TENSOR_FLOAT16: return SCHEMA_FLOAT16;
    case SCHEMA_TENSOR_INT32: return SCHEMA_INT32;
    default: return -1;
    }
}

/* The output shape from the shape tensor's values (data present). */
static schema_status read_shape(eng_op_ctx *c, uint32_t *rank, uint32_t *dims) {
    const eng_tensor *t = c->in[0];
    if (t->rank != 1) return eng_fail(c, "the shape (input 0) must be 1-D, has rank %u", t->rank);
    if (t->dims[0] > ENG_MAX_RANK)
        return eng_fail(c, "the shape (input 0) asks for rank %u, over the limit of %u", t->dims[0],
                        ENG_MAX_RANK);
    const int32_t *v = t->data;
    for (uint32_t d = 0; d < t->dims[0]; d++) {
        if (v[d] < 0) return eng_fail(c, "the shape (input 0) has dimension %u = %d", d, v[d]);
        dims[d] = (uint32_t)v[d];
    }
    *rank = t->dims[0];
    return SCHEMA_OK;
}

static schema_status fill_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 2, 1, 1);
    if (s) return s;
    const eng_tensor *dims = c->in[0], *out = c->out[0];
    int32_t value_type = value_type_of(out->type);
    if (value_type < 0)
        return eng_fail(c, "output 0 must be TENSOR_FLOAT32, TENSOR_FLOAT16 or TENSOR_INT32, is %s",
                        schema_type_name(out->type));
    if (dims->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "the shape (input 0) must be TENSOR_INT32, is %s",
                        schema_type_name(dims->type));
    if ((s = eng_check_rank(c, dims, "the shape (input 0)", 1, 1)) ||
        (s = eng_check_scalar(c, 1, value_type)))
        return s;
    uint32_t rank, d[ENG_MAX_RANK];
    return dims->data && dims->known ? read_shape(c, &rank, d) : SCHEMA_OK; /* a constant shape */
}

static schema_status fill_shape(eng_op_ctx *c) {
    if (!c->in[0]->data) return ENG_DEFER;
    uint32_t rank, dims[ENG_MAX_RANK];
    schema_status s = read_shape(c, &rank, dims);
    if (!s) eng_set_shape(c->out[0], rank, dims);
    return s;
}

static schema_status fill_run(eng_op_ctx *c) {
    eng_tensor *out = c->out[0];
    eng_fill_elems(out->data, c->in[1]->data, eng_elems(out), schema_type_size(out->type));
    return SCHEMA_OK;
}

/* Keyed by the value scalar (input 1), whose type fixes the output's. */
ENG_OP_DEF(FILL, fill_check, fill_shape, 0, 1,
           {{SCHEMA_FLOAT32, fill_run}, {SCHEMA_FLOAT16, fill_run}, {SCHEMA_INT32, fill_run}});

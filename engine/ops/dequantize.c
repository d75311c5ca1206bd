/* SPDX-License-Identifier: Apache-2.0 */
/* dequantize.c: DEQUANTIZE — output = scale * (input - zero_point), computed in float32
 * as the reference does and stored as FLOAT32 or FLOAT16. Inputs: QUANT8_ASYMM; from HAL
 * 1.2 QUANT8_SYMM and QUANT8_SYMM_PER_CHANNEL (one scale per index of the channel
 * dimension); from HAL 1.3 QUANT8_ASYMM_SIGNED. */
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/float16.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops/op_def.h"

static schema_status dequantize_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 1, 1, 1, 1);
    if (s) return s;
    const eng_tensor *in = c->in[0];
    if ((s = eng_check_type(c, in, "input 0", 4, SCHEMA_TENSOR_QUANT8_ASYMM,
                            SCHEMA_TENSOR_QUANT8_SYMM, SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL,
                            SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED)) ||
        (s = eng_check_type(c, c->out[0], "output 0", 2, SCHEMA_TENSOR_FLOAT32,
                            SCHEMA_TENSOR_FLOAT16)))
        return s;
    if (in->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL && !in->channel_quant)
        return eng_fail(c, "input 0 has no per-channel scales");
    return eng_check_rank(c, in, "input 0", 0, 4); /* as the NNAPI runtime's rules have it */
}

static schema_status dequantize_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    if (in->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        const eng_channel_quant *q = in->channel_quant;
        if (q->channel_dim >= in->rank || q->n_scales != in->dims[q->channel_dim])
            return eng_fail(c, "input 0 has %u channel scales for its channel dimension %u",
                            q->n_scales, q->channel_dim);
    }
    eng_copy_shape(c->out[0], in);
    return SCHEMA_OK;
}

static schema_status dequantize_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    size_t n = eng_elems(out);
    /* Per-channel: the scale changes every `stride` elements and cycles over `channels`. */
    size_t stride = n ? n : 1, channels = 1;
    const float *scales = &in->scale;
    if (in->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        uint32_t dim = in->channel_quant->channel_dim;
        stride = eng_dims_product(in, dim + 1, in->rank);
        channels = in->dims[dim];
        scales = in->channel_quant->scales;
    }
    /* Every input type is one signed or unsigned byte per element. */
    int32_t qmin = in->type == SCHEMA_TENSOR_QUANT8_ASYMM ? 0 : INT8_MIN;
    for (size_t i = 0; i < n; i++) {
        int32_t q = eng_q8_get(in->data, i, qmin);
        float v = scales[stride ? (i / stride) % channels : 0] * (float)(q - in->zero_point);
        if (out->type == SCHEMA_TENSOR_FLOAT16)
            ((eng_half *)out->data)[i] = (eng_half)v;
        else
            ((float *)out->data)[i] = v;
    }
    return SCHEMA_OK;
}

ENG_OP_DEF(DEQUANTIZE, dequantize_check, dequantize_shape, 0, 0,
           {{SCHEMA_TENSOR_QUANT8_ASYMM, dequantize_run},
            {SCHEMA_TENSOR_QUANT8_SYMM, dequantize_run},
            {SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL, dequantize_run},
            {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, dequantize_run}});

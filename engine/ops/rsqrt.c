/* SPDX-License-Identifier: Apache-2.0 */
/* rsqrt.c: RSQRT — 1 / sqrt(x) per element, any rank.
 * - Float (HAL 1.2): in float32 (FLOAT16 through the type bridge).
 * - 8-bit quantized (NNAPI feature level 7), as a lookup table (quant_table.h):
 *   - signed, as TensorFlow Lite's int8 kernel: for d = q - zero point > 0, 1 / sqrt(d) as
 *     a fixed-point multiplier and shift (eng_inv_sqrt_multiplier) applied to 1 with 20
 *     bits of headroom, then multiplied by 1 / (sqrt(in_scale) * out_scale) (sqrt and
 *     product in float, the quotient in double) and shifted back; d == 0 gives the top of
 *     the range, and so does d < 0, which TensorFlow Lite refuses at run time;
 *   - unsigned (which TensorFlow Lite has no kernel for), as the Android runtime: the
 *     stored value dequantized in float, the function applied in float, and the result
 *     quantized to the output's scale and zero point, rounding half away from zero and
 *     saturating (a negative or zero input gives the top of the range: NaN and +inf
 *     saturate there). */
#include <math.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/quant_table.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"

static schema_status rsqrt_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 1, 1, 1, 1);
    if (s) return s;
    s = eng_check_type(c, c->in[0], "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                       SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    return s ? s : eng_check_same_type(c, 0, 0);
}

static schema_status rsqrt_f32(eng_op_ctx *c) {
    const float *x = c->in[0]->data;
    float *y = c->out[0]->data;
    size_t n = eng_elems(c->out[0]);
    for (size_t i = 0; i < n; i++)
        y[i] = 1.f / sqrtf(x[i]);
    return SCHEMA_OK;
}

static schema_status rsqrt_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, rsqrt_f32);
}

#define RSQRT_HEADROOM_BITS 20 /* keeps 1 / sqrt(d) an integer before the output scale */

static void rsqrt_table_s8(const eng_op_ctx *c, int32_t qmin, int32_t qmax, uint8_t *table) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    int32_t out_mult;
    int out_shift;
    eng_quantize_multiplier(1. / (sqrtf(in->scale) * out->scale), &out_mult, &out_shift);
    for (int32_t q = qmin; q <= qmax; q++) {
        int32_t d = q - in->zero_point, r = qmax;
        if (d > 0) {
            int32_t m;
            int right;
            eng_inv_sqrt_multiplier(d, &m, &right);
            int32_t v = eng_mul_by_quantized(1, m, RSQRT_HEADROOM_BITS - right);
            r = eng_q8_offset(eng_mul_by_quantized(v, out_mult, out_shift - RSQRT_HEADROOM_BITS),
                              out->zero_point, qmin, qmax);
        }
        table[q - qmin] = (uint8_t)r;
    }
}

static void rsqrt_table(const eng_op_ctx *c, int32_t qmin, int32_t qmax, uint8_t *table) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    if (in->type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED) {
        rsqrt_table_s8(c, qmin, qmax, table);
        return;
    }
    for (int32_t q = qmin; q <= qmax; q++) {
        float r = 1.f / sqrtf(eng_dequantize_value(q, in->scale, in->zero_point));
        /* min before max, NaN taking the top, as the reference orders them */
        float v = fminf((float)qmax, (float)out->zero_point + roundf(r / out->scale));
        v = fmaxf((float)qmin, v);
        table[q - qmin] = (uint8_t)(int32_t)v;
    }
}

static schema_status rsqrt_q8(eng_op_ctx *c) {
    return eng_q8_table_run(c, rsqrt_table);
}

ENG_OP_DEF(RSQRT, rsqrt_check, eng_shape_of_input0, 0, 0,
           {{SCHEMA_TENSOR_FLOAT32, rsqrt_f32},
            {SCHEMA_TENSOR_FLOAT16, rsqrt_f16},
            {SCHEMA_TENSOR_QUANT8_ASYMM, rsqrt_q8},
            {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, rsqrt_q8}});

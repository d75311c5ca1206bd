/* SPDX-License-Identifier: Apache-2.0 */
/* affine_quant.c: affine quantization. See affine_quant.h. */
#include "engine/ops_common/affine_quant.h"

#include <math.h>

#include "engine/ops_common/kernel_errors.h"

double eng_product_multiplier(float in_scale, float filter_scale, float out_scale,
                              bool float_product) {
    double product =
        float_product ? (double)(in_scale * filter_scale) : (double)in_scale * filter_scale;
    return product / (double)out_scale;
}

int32_t eng_quantize_value(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
    float v = roundf(x / scale) + (float)zero_point;
    if (!(v > (float)qmin)) return qmin; /* also catches NaN */
    if (v > (float)qmax) return qmax;
    return (int32_t)v;
}

schema_status eng_check_same_quant(eng_op_ctx *c, uint32_t i, uint32_t o) {
    return eng_driver_rules(c) ? eng_require_same_quant(c, i, o) : SCHEMA_OK;
}

schema_status eng_require_same_quant(eng_op_ctx *c, uint32_t i, uint32_t o) {
    const eng_tensor *in = c->in[i], *out = c->out[o];
    bool quant = eng_is_quant8(in->type) || in->type == SCHEMA_TENSOR_QUANT8_SYMM ||
                 in->type == SCHEMA_TENSOR_QUANT16_ASYMM || in->type == SCHEMA_TENSOR_QUANT16_SYMM;
    if (quant && (in->scale != out->scale || in->zero_point != out->zero_point))
        return eng_fail(
            c, "output %u must have the scale and zero point of input %u (%g, %d), has (%g, %d)", o,
            i, in->scale, in->zero_point, out->scale, out->zero_point);
    return SCHEMA_OK;
}

static void eng_fixed_quant(enum eng_fixed_range r, int32_t type, float *scale,
                            int32_t *zero_point) {
    bool unit = r == ENG_FIXED_UNIT;
    *scale = unit ? 1.f / 256 : 1.f / 128;
    *zero_point = eng_q8_min(type) + (unit ? 0 : 128);
}

schema_status eng_check_fixed_quant(eng_op_ctx *c, uint32_t o, enum eng_fixed_range r) {
    const eng_tensor *out = c->out[o];
    if (!eng_driver_rules(c)) return SCHEMA_OK;
    float scale;
    int32_t zero_point;
    eng_fixed_quant(r, out->type, &scale, &zero_point);
    if (out->scale != scale || out->zero_point != zero_point)
        return eng_fail(c, "output %u must have scale 1/%d and zero point %d, has %g and %d", o,
                        r == ENG_FIXED_UNIT ? 256 : 128, zero_point, out->scale, out->zero_point);
    return SCHEMA_OK;
}

/* affine_quant.c: affine quantization. See affine_quant.h. */
#include "affine_quant.h"

#include <math.h>

#include "kernel_errors.h"

int32_t nnd_quantize_value(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
    float v = roundf(x / scale) + (float)zero_point;
    if (!(v > (float)qmin)) return qmin; /* also catches NaN */
    if (v > (float)qmax) return qmax;
    return (int32_t)v;
}

nnd_status nnd_check_same_quant(nnd_op_ctx *c, uint32_t i, uint32_t o) {
    return nnd_driver_rules(c) ? nnd_require_same_quant(c, i, o) : NND_OK;
}

nnd_status nnd_require_same_quant(nnd_op_ctx *c, uint32_t i, uint32_t o) {
    const nnd_tensor *in = c->in[i], *out = c->out[o];
    bool quant = nnd_is_quant8(in->type) || in->type == NND_TENSOR_QUANT8_SYMM ||
                 in->type == NND_TENSOR_QUANT16_ASYMM || in->type == NND_TENSOR_QUANT16_SYMM;
    if (quant && (in->scale != out->scale || in->zero_point != out->zero_point))
        return nnd_fail(
            c, "output %u must have the scale and zero point of input %u (%g, %d), has (%g, %d)", o,
            i, in->scale, in->zero_point, out->scale, out->zero_point);
    return NND_OK;
}

void nnd_fixed_quant(enum nnd_fixed_range r, int32_t type, float *scale, int32_t *zero_point) {
    bool unit = r == NND_FIXED_UNIT;
    *scale = unit ? 1.f / 256 : 1.f / 128;
    *zero_point = nnd_q8_min(type) + (unit ? 0 : 128);
}

nnd_status nnd_check_fixed_quant(nnd_op_ctx *c, uint32_t o, enum nnd_fixed_range r) {
    const nnd_tensor *out = c->out[o];
    if (!nnd_driver_rules(c)) return NND_OK;
    float scale;
    int32_t zero_point;
    nnd_fixed_quant(r, out->type, &scale, &zero_point);
    if (out->scale != scale || out->zero_point != zero_point)
        return nnd_fail(c, "output %u must have scale 1/%d and zero point %d, has %g and %d", o,
                        r == NND_FIXED_UNIT ? 256 : 128, zero_point, out->scale, out->zero_point);
    return NND_OK;
}

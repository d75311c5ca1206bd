/* SPDX-License-Identifier: Apache-2.0 */
/* fused_activation.c: fused activation bounds. See fused_activation.h. */
#include "engine/ops_common/fused_activation.h"

#include <math.h>

#include "engine/ops_common/affine_quant.h"

void eng_act_range_f32(int32_t act, float *lo, float *hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    if (act == SCHEMA_FUSED_RELU)
        *lo = 0.f;
    else if (act == SCHEMA_FUSED_RELU1)
        *lo = -1.f, *hi = 1.f;
    else if (act == SCHEMA_FUSED_RELU6)
        *lo = 0.f, *hi = 6.f;
}

void eng_act_range_quant(int32_t act, float scale, int32_t zero_point, int32_t qmin, int32_t qmax,
                         int32_t *lo, int32_t *hi) {
    /* As the reference: quantize the real bounds with round-to-nearest, then clamp. The
     * clamp comes before the conversion to int: a tiny scale (or none, for a float output)
     * gives a quotient no int32 holds. */
#define Q(x) eng_quantize_value((x), scale, zero_point, qmin, qmax)
    *lo = qmin;
    *hi = qmax;
    if (act == SCHEMA_FUSED_RELU) {
        *lo = Q(0.f);
    } else if (act == SCHEMA_FUSED_RELU6) {
        *lo = Q(0.f);
        *hi = Q(6.f);
    } else if (act == SCHEMA_FUSED_RELU1) {
        *lo = Q(-1.f);
        *hi = Q(1.f);
    }
#undef Q
}

void eng_act_range_q8(int32_t act, const eng_tensor *out, int32_t *lo, int32_t *hi) {
    eng_act_range_quant(act, out->scale, out->zero_point, eng_q8_min(out->type),
                        eng_q8_max(out->type), lo, hi);
}

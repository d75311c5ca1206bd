/* SPDX-License-Identifier: Apache-2.0 */
/* realvalue.c: real values of any numeric tensor. See realvalue.h. */
#include "engine/ops_common/realvalue.h"

#include <math.h>
#include <stdint.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/float16.h"

float eng_real_at(const eng_tensor *t, size_t i) {
    switch (t->type) {
    case SCHEMA_TENSOR_FLOAT16:
    case SCHEMA_FLOAT16: return (float)((const eng_half *)t->data)[i];
    case SCHEMA_TENSOR_INT32:
    case SCHEMA_INT32: return (float)((const int32_t *)t->data)[i];
    case SCHEMA_TENSOR_QUANT8_ASYMM:
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED:
        return eng_dequantize_value(eng_q8_get(t->data, i, eng_q8_min(t->type)), t->scale,
                                    t->zero_point);
    case SCHEMA_TENSOR_QUANT16_ASYMM:
        return eng_dequantize_value(((const uint16_t *)t->data)[i], t->scale, t->zero_point);
    case SCHEMA_TENSOR_QUANT16_SYMM:
        return eng_dequantize_value(((const int16_t *)t->data)[i], t->scale, t->zero_point);
    default: return ((const float *)t->data)[i];
    }
}

/* round(x / scale + zero_point), saturated; NaN goes to lo. */
static int32_t quantize_sat(float x, const eng_tensor *t, int32_t lo, int32_t hi) {
    float v = roundf(x / t->scale + (float)t->zero_point);
    if (!(v > (float)lo)) return lo;
    return v > (float)hi ? hi : (int32_t)v;
}

void eng_set_real_at(eng_tensor *t, size_t i, float x) {
    switch (t->type) {
    case SCHEMA_TENSOR_FLOAT16: ((eng_half *)t->data)[i] = (eng_half)x; break;
    case SCHEMA_TENSOR_QUANT8_ASYMM:
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED:
        eng_q8_put(t->data, i, quantize_sat(x, t, eng_q8_min(t->type), eng_q8_max(t->type)));
        break;
    case SCHEMA_TENSOR_QUANT16_ASYMM:
        ((uint16_t *)t->data)[i] = (uint16_t)quantize_sat(x, t, 0, UINT16_MAX);
        break;
    case SCHEMA_TENSOR_QUANT16_SYMM:
        ((int16_t *)t->data)[i] = (int16_t)quantize_sat(x, t, INT16_MIN, INT16_MAX);
        break;
    default: ((float *)t->data)[i] = x; break;
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/* activation.c: RELU, RELU1, RELU6, LOGISTIC, TANH and FLOOR — elementwise functions of
 * one tensor.
 * - Float: computed in float32 (FLOAT16 through the type bridge, as the reference does).
 * - QUANT8 (unsigned, and signed from HAL 1.3): RELUx clamp the stored values to the
 *   quantized bounds; LOGISTIC and TANH compute the float function of each dequantized
 *   input value and round it to the fixed output scale (1/256 for LOGISTIC, 1/128 for
 *   TANH), as TensorFlow Lite's 8-bit kernels do (the older fixed-point pipeline the
 *   Android runtime keeps is within one step of it). Every input value maps to one output
 *   value, so a 256-entry table is built once per run. */
#include <math.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fused_activation.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/quant_table.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"
#include "engine/ops/op_def.h"

static int32_t relu_fuse_code(int32_t op) {
    switch (op) {
    case SCHEMA_OP_RELU1: return SCHEMA_FUSED_RELU1;
    case SCHEMA_OP_RELU6: return SCHEMA_FUSED_RELU6;
    default: return SCHEMA_FUSED_RELU;
    }
}

static schema_status act_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 1, 1, 1, 1);
    if (s) return s;
    const eng_tensor *in = c->in[0];
    if (c->def->code == SCHEMA_OP_FLOOR)
        s = eng_check_type(c, in, "input 0", 2, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16);
    else
        s = eng_check_type(c, in, "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                           SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    if (s || (s = eng_check_same_type(c, 0, 0)) || (s = eng_check_rank(c, in, "input 0", 0, 4)))
        return s;
    if (!eng_is_quant8(in->type)) return SCHEMA_OK;
    /* The HAL fixes the output quantization of LOGISTIC and TANH; the RELUs keep the
     * input's. */
    if (c->def->code == SCHEMA_OP_LOGISTIC) return eng_check_fixed_quant(c, 0, ENG_FIXED_UNIT);
    if (c->def->code == SCHEMA_OP_TANH) return eng_check_fixed_quant(c, 0, ENG_FIXED_SYMMETRIC);
    return eng_check_same_quant(c, 0, 0);
}

static schema_status act_shape(eng_op_ctx *c) {
    eng_copy_shape(c->out[0], c->in[0]);
    return SCHEMA_OK;
}

/* TensorFlow Lite's reference logistic: 1 past an upper cutoff, e^x below a lower one (the
 * same to within float rounding, but not always to the bit). */
static float logistic_f32(float x) {
    if (x > 16.619047164916992188f) return 1.f;
    if (x < -9.f) return expf(x);
    return 1.f / (1.f + expf(-x));
}

static schema_status act_f32(eng_op_ctx *c) {
    const float *x = c->in[0]->data;
    float *y = c->out[0]->data;
    size_t n = eng_elems(c->out[0]);
    switch (c->def->code) {
    case SCHEMA_OP_LOGISTIC:
        for (size_t i = 0; i < n; i++)
            y[i] = logistic_f32(x[i]);
        break;
    case SCHEMA_OP_TANH:
        for (size_t i = 0; i < n; i++)
            y[i] = tanhf(x[i]);
        break;
    case SCHEMA_OP_FLOOR:
        for (size_t i = 0; i < n; i++)
            y[i] = floorf(x[i]);
        break;
    default: {
        float lo, hi;
        eng_act_range_f32(relu_fuse_code(c->def->code), &lo, &hi);
        /* max then min as the reference orders them: a NaN input gives the lower bound */
        for (size_t i = 0; i < n; i++) {
            float v = lo < x[i] ? x[i] : lo;
            y[i] = hi < v ? hi : v;
        }
        break;
    }
    }
    return SCHEMA_OK;
}

static schema_status act_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, act_f32);
}

/* Fills table[q - qmin] with the output for every stored input value q. */
static void build_q8_table(const eng_op_ctx *c, int32_t qmin, int32_t qmax, uint8_t *table) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    int32_t code = c->def->code;
    if (code != SCHEMA_OP_LOGISTIC && code != SCHEMA_OP_TANH) {
        int32_t lo, hi;
        eng_act_range_q8(relu_fuse_code(code), out, &lo, &hi);
        for (int32_t q = qmin; q <= qmax; q++)
            table[q - qmin] = (uint8_t)eng_clampi(q, lo, hi);
        return;
    }
    /* As TensorFlow Lite's kernels (reference and optimized alike) build their table: in
     * float, the function of the dequantized input divided by the output scale (as a
     * product with its float reciprocal), rounded half away from zero, plus the zero
     * point, clamped to the type. */
    float inverse_scale = 1.f / out->scale;
    for (int32_t q = qmin; q <= qmax; q++) {
        float x = in->scale * (float)(q - in->zero_point);
        float y = code == SCHEMA_OP_LOGISTIC ? 1.f / (1.f + expf(-x)) : tanhf(x);
        float r = roundf(y * inverse_scale) + (float)out->zero_point;
        table[q - qmin] = (uint8_t)eng_clampi((int32_t)r, qmin, qmax);
    }
}

static schema_status act_q8(eng_op_ctx *c) {
    return eng_q8_table_run(c, build_q8_table);
}

#define ACT_KERNELS                                                                                \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, act_f32}, {SCHEMA_TENSOR_FLOAT16, act_f16},                        \
            {SCHEMA_TENSOR_QUANT8_ASYMM, act_q8}, {                                                \
            SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, act_q8                                              \
        }                                                                                          \
    }

ENG_OP_DEF(RELU, act_check, act_shape, 0, 0, ACT_KERNELS);
ENG_OP_DEF(RELU1, act_check, act_shape, 0, 0, ACT_KERNELS);
ENG_OP_DEF(RELU6, act_check, act_shape, 0, 0, ACT_KERNELS);
ENG_OP_DEF(LOGISTIC, act_check, act_shape, 0, 0, ACT_KERNELS);
ENG_OP_DEF(TANH, act_check, act_shape, 0, 0, ACT_KERNELS);
ENG_OP_DEF(FLOOR, act_check, act_shape, 0, 0, ACT_KERNELS);

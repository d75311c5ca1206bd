/* activation.c: RELU, RELU1, RELU6, LOGISTIC, TANH and FLOOR — elementwise functions of
 * one tensor.
 * - Float: computed in float32 (FLOAT16 through the type bridge, as the reference does).
 * - QUANT8 (unsigned, and signed from HAL 1.3): RELUx clamp the stored values to the
 *   quantized bounds; LOGISTIC and TANH follow the reference's fixed-point pipeline: the
 *   input difference is rescaled to Q4.27, the gemmlowp function gives Q0.31, which is
 *   rounded to the fixed output scale (1/256 for LOGISTIC, 1/128 for TANH). Every input
 *   value maps to one output value, so a 256-entry table is built once per run. */
#include <math.h>

#include "affine_quant.h"
#include "clamp.h"
#include "fixedpoint.h"
#include "fused_activation.h"
#include "kernel_errors.h"
#include "operand.h"
#include "quant_table.h"
#include "signature.h"
#include "type_bridge.h"

#define FX_INPUT_INTEGER_BITS 4 /* the reference rescales inputs to Q4.27 */

static int32_t relu_fuse_code(int32_t op) {
    switch (op) {
    case NND_OP_RELU1: return NND_FUSED_RELU1;
    case NND_OP_RELU6: return NND_FUSED_RELU6;
    default: return NND_FUSED_RELU;
    }
}

static nnd_status act_check(nnd_op_ctx *c) {
    nnd_status s = nnd_check_count(c, 1, 1, 1, 1);
    if (s) return s;
    const nnd_tensor *in = c->in[0];
    if (c->def->code == NND_OP_FLOOR)
        s = nnd_check_type(c, in, "input 0", 2, NND_TENSOR_FLOAT32, NND_TENSOR_FLOAT16);
    else
        s = nnd_check_type(c, in, "input 0", 4, NND_TENSOR_FLOAT32, NND_TENSOR_FLOAT16,
                           NND_TENSOR_QUANT8_ASYMM, NND_TENSOR_QUANT8_ASYMM_SIGNED);
    if (s || (s = nnd_check_same_type(c, 0, 0)) || (s = nnd_check_rank(c, in, "input 0", 0, 4)))
        return s;
    if (!nnd_is_quant8(in->type)) return NND_OK;
    /* The HAL fixes the output quantization of LOGISTIC and TANH; the RELUs keep the
     * input's. */
    if (c->def->code == NND_OP_LOGISTIC) return nnd_check_fixed_quant(c, 0, NND_FIXED_UNIT);
    if (c->def->code == NND_OP_TANH) return nnd_check_fixed_quant(c, 0, NND_FIXED_SYMMETRIC);
    return nnd_check_same_quant(c, 0, 0);
}

static nnd_status act_shape(nnd_op_ctx *c) {
    nnd_copy_shape(c->out[0], c->in[0]);
    return NND_OK;
}

static nnd_status act_f32(nnd_op_ctx *c) {
    const float *x = c->in[0]->data;
    float *y = c->out[0]->data;
    size_t n = nnd_elems(c->out[0]);
    switch (c->def->code) {
    case NND_OP_LOGISTIC:
        for (size_t i = 0; i < n; i++)
            y[i] = 1.f / (1.f + expf(-x[i]));
        break;
    case NND_OP_TANH:
        for (size_t i = 0; i < n; i++)
            y[i] = tanhf(x[i]);
        break;
    case NND_OP_FLOOR:
        for (size_t i = 0; i < n; i++)
            y[i] = floorf(x[i]);
        break;
    default: {
        float lo, hi;
        nnd_act_range_f32(relu_fuse_code(c->def->code), &lo, &hi);
        /* max then min as the reference orders them: a NaN input gives the lower bound */
        for (size_t i = 0; i < n; i++) {
            float v = lo < x[i] ? x[i] : lo;
            y[i] = hi < v ? hi : v;
        }
        break;
    }
    }
    return NND_OK;
}

static nnd_status act_f16(nnd_op_ctx *c) {
    return nnd_run_f16_as_f32(c, act_f32);
}

/* Fills table[q - qmin] with the output for every stored input value q. */
static void build_q8_table(const nnd_op_ctx *c, int32_t qmin, int32_t qmax, uint8_t *table) {
    const nnd_tensor *in = c->in[0], *out = c->out[0];
    int32_t code = c->def->code;
    if (code != NND_OP_LOGISTIC && code != NND_OP_TANH) {
        int32_t lo, hi;
        nnd_act_range_q8(relu_fuse_code(code), out, &lo, &hi);
        for (int32_t q = qmin; q <= qmax; q++)
            table[q - qmin] = (uint8_t)nnd_clampi(q, lo, hi);
        return;
    }
    int32_t mult;
    int shift;
    nnd_quantize_multiplier((double)in->scale * (double)(1 << (31 - FX_INPUT_INTEGER_BITS)), &mult,
                            &shift);
    int32_t radius = nnd_input_radius(FX_INPUT_INTEGER_BITS, shift);
    /* Q0.31 down to the output's 8 (LOGISTIC) or 7 (TANH, signed) fraction bits. */
    int out_shift = code == NND_OP_LOGISTIC ? 23 : 24;
    for (int32_t q = qmin; q <= qmax; q++) {
        int32_t d = q - in->zero_point, r;
        if (d <= -radius) {
            r = qmin;
        } else if (d >= radius) {
            r = qmax;
        } else {
            int32_t x = nnd_mul_by_quantized(d, mult, shift);
            int32_t f = code == NND_OP_LOGISTIC ? nnd_fx_logistic(x, FX_INPUT_INTEGER_BITS)
                                                : nnd_fx_tanh(x, FX_INPUT_INTEGER_BITS);
            r = nnd_clampi(nnd_rounding_shift_right(f, out_shift) + out->zero_point, qmin, qmax);
        }
        table[q - qmin] = (uint8_t)r;
    }
}

static nnd_status act_q8(nnd_op_ctx *c) {
    return nnd_q8_table_run(c, build_q8_table);
}

#define ACT_OP(var, CODE, NAME)                                                                    \
    const nnd_op_def var = {                                                                       \
        .code = CODE,                                                                              \
        .name = NAME,                                                                              \
        .check = act_check,                                                                        \
        .shape = act_shape,                                                                        \
        .kernels = {{NND_TENSOR_FLOAT32, act_f32},                                                 \
                    {NND_TENSOR_FLOAT16, act_f16},                                                 \
                    {NND_TENSOR_QUANT8_ASYMM, act_q8},                                             \
                    {NND_TENSOR_QUANT8_ASYMM_SIGNED, act_q8}},                                     \
    }

ACT_OP(nnd_op_relu, NND_OP_RELU, "RELU");
ACT_OP(nnd_op_relu1, NND_OP_RELU1, "RELU1");
ACT_OP(nnd_op_relu6, NND_OP_RELU6, "RELU6");
ACT_OP(nnd_op_logistic, NND_OP_LOGISTIC, "LOGISTIC");
ACT_OP(nnd_op_tanh, NND_OP_TANH, "TANH");
ACT_OP(nnd_op_floor, NND_OP_FLOOR, "FLOOR");

/* SPDX-License-Identifier: Apache-2.0 */
/* hard_swish.c: HARD_SWISH (HAL 1.3) — x * min(6, max(0, x + 3)) / 6 per element, any rank.
 * - Float: in float32 (FLOAT16 through the type bridge), in the reference's order.
 * - 8-bit quantized (unsigned, and signed, whose storage range is the only difference):
 *   the reference's int16 fixed-point pipeline. The input is rescaled to a "hires" scale
 *   (input scale / 128); a "reluish" factor in [0, 1] is x rescaled so that 3.0 is 2^15,
 *   saturated and moved to [0, 1]; the product is shifted to the output scale. The
 *   reference cannot express an output scale below input scale / 128 (a left shift at the
 *   end): such a model is refused. The function runs as a lookup table (quant_table.h). */
#include <math.h>
#include <stdbool.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/quant_table.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"

typedef struct hswish_q {
    int32_t in_zero_point, out_zero_point;
    int16_t out_mult, reluish_mult; /* Q0.15 multipliers */
    int out_exp, reluish_exp;       /* their power-of-two exponents */
} hswish_q;

/* A Q0.31 multiplier rounded to Q0.15, saturating at the top. */
static int16_t mult_to_q15(int32_t m) {
    if (m >= INT32_MAX - (1 << 15)) return INT16_MAX;
    return (int16_t)((m + (1 << 15)) >> 16);
}

static int16_t wrap16(int32_t x) {
    return (int16_t)(uint16_t)(uint32_t)x;
}

static int16_t sat_shift_left16(int16_t x, int e) {
    int64_t r = (int64_t)x * ((int64_t)1 << e);
    return (int16_t)(r > INT16_MAX ? INT16_MAX : r < INT16_MIN ? INT16_MIN : r);
}

/* x * y / 2^15 truncated toward zero, saturating the one overflowing product. */
static int16_t sat_doubling_high_mul16(int16_t x, int16_t y) {
    if (x == INT16_MIN && y == INT16_MIN) return INT16_MAX;
    return (int16_t)((int32_t)x * y / (1 << 15));
}

/* The reference's parameters from the scales; false when the output scale is too small. */
static bool hswish_params(const eng_tensor *in, const eng_tensor *out, hswish_q *p) {
    float hires_scale = in->scale / 128.f;
    int32_t m;
    p->in_zero_point = in->zero_point;
    p->out_zero_point = out->zero_point;
    eng_quantize_multiplier(hires_scale / out->scale, &m, &p->out_exp);
    p->out_mult = mult_to_q15(m);
    eng_quantize_multiplier(hires_scale / (3.f / 32768.f), &m, &p->reluish_exp);
    p->reluish_mult = mult_to_q15(m);
    return p->out_exp <= 0;
}

/* The output for stored input q, before the clamp to the storage range. */
static int32_t hswish_value(const hswish_q *p, int32_t q) {
    int16_t hires = wrap16((q - p->in_zero_point) * 128);
    int16_t preshift = eng_fx16_srdhm(hires, p->out_mult);
    int16_t reluish = hires;
    if (p->reluish_exp > 0) reluish = sat_shift_left16(reluish, p->reluish_exp - 1);
    reluish = eng_fx16_srdhm(reluish, p->reluish_mult);
    if (p->reluish_exp > 0) reluish = sat_shift_left16(reluish, 1);
    if (p->reluish_exp < 0) reluish = (int16_t)eng_rounding_shift_right(reluish, -p->reluish_exp);
    reluish = (int16_t)((reluish + (1 << 15)) >> 1); /* [-1, 1] to [0, 1] */
    int16_t y = sat_doubling_high_mul16(reluish, preshift);
    return (int16_t)eng_rounding_shift_right(y, -p->out_exp) + p->out_zero_point;
}

static schema_status hswish_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 1, 1, 1, 1);
    if (s) return s;
    const eng_tensor *in = c->in[0], *out = c->out[0];
    if ((s = eng_check_type(c, in, "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                            SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED)) ||
        (s = eng_check_same_type(c, 0, 0)))
        return s;
    hswish_q p;
    if (eng_driver_rules(c) && eng_is_quant8(in->type) && !hswish_params(in, out, &p))
        return eng_fail(c, "output scale %g is below input scale / 128 (%g)", out->scale,
                        in->scale / 128.f);
    return SCHEMA_OK;
}

static schema_status hswish_f32(eng_op_ctx *c) {
    const float *x = c->in[0]->data;
    float *y = c->out[0]->data;
    size_t n = eng_elems(c->out[0]);
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] * fminf(6.f, fmaxf(0.f, x[i] + 3.f)) / 6.f;
    return SCHEMA_OK;
}

static schema_status hswish_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, hswish_f32);
}

static void hswish_table(const eng_op_ctx *c, int32_t qmin, int32_t qmax, uint8_t *table) {
    hswish_q p;
    hswish_params(c->in[0], c->out[0], &p);
    for (int32_t q = qmin; q <= qmax; q++)
        table[q - qmin] = (uint8_t)eng_clampi(hswish_value(&p, q), qmin, qmax);
}

static schema_status hswish_q8(eng_op_ctx *c) {
    return eng_q8_table_run(c, hswish_table);
}

ENG_OP_DEF(HARD_SWISH, hswish_check, eng_shape_of_input0, 0, 0,
           {{SCHEMA_TENSOR_FLOAT32, hswish_f32},
            {SCHEMA_TENSOR_FLOAT16, hswish_f16},
            {SCHEMA_TENSOR_QUANT8_ASYMM, hswish_q8},
            {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, hswish_q8}});

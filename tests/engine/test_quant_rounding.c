/* SPDX-License-Identifier: Apache-2.0 */
/* test_quant_rounding (unit): the integer arithmetic of the 8-bit reference kernels against
 * tables of cases worked out by hand from TensorFlow Lite's formulas (docs/numerics.md):
 * the multiplier and shift derived from a real multiplier (frexp, the mantissa times 2^31
 * rounded half away from zero, 2^31 folded into the next shift, below 2^-32 flushed to 0),
 * SaturatingRoundingDoublingHighMul (ties toward +infinity), RoundingDivideByPOT (ties away
 * from zero), their composition MultiplyByQuantizedMultiplier (two roundings), the
 * per-channel multipliers of a convolution (double product for signed inputs, float
 * product for unsigned ones and fully connected layers), ADD's 20-bit headroom pipeline and
 * the fused activation bounds. Every expected integer is written out, with how it was
 * derived; none is computed here by the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/conv_walk.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/fused_activation.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- QuantizeMultiplier ----------------------------------------------------------------- */

static const struct {
    double m;
    int32_t q;
    int shift;
    const char *why;
} multipliers[] = {
    {0.5, 1073741824, 0, "frexp 0.5 * 2^0: q = 0.5 * 2^31"},
    {1.0, 1073741824, 1, "frexp 0.5 * 2^1"},
    {0.75, 1610612736, 0, "0.75 * 2^31 exactly"},
    {0.1, 1717986918, -3, "frexp 0.8 * 2^-3; 0.8 * 2^31 = 1717986918.4 rounds down"},
    {1.0 / 3, 1431655765, -1, "frexp 2/3 * 2^-1; 1431655765.33 rounds down"},
    {0.5 + 0x1p-32, 1073741825, 0, "2^30 + 0.5: the tie rounds away from zero"},
    {1 - 0x1p-31, 2147483647, 0, "just below 1: 2^31 - 1 exactly"},
    {1 - 0x3p-33, 2147483647, 0, "2^31 - 0.75 rounds to 2^31 - 1"},
    {1 - 0x1p-33, 1073741824, 1, "2^31 - 0.25 rounds to 2^31: halved, shift raised"},
    {1 - 0x1p-40, 1073741824, 1, "2^31 - 2^-9 rounds to 2^31 as well"},
    {256.0, 1073741824, 9, "the largest left shift a kernel here meets: 0.5 * 2^9"},
    {0x3p-32, 1610612736, -30, "0.75 * 2^-30"},
    {0x1p-32, 1073741824, -31, "0.5 * 2^-31: the last shift kept"},
    {0x1p-33, 0, 0, "0.5 * 2^-32: shift below -31, flushed to zero"},
    {0x3p-34, 0, 0, "0.75 * 2^-32: flushed likewise"},
    {0.0, 0, 0, "zero"},
};

static void quantize_multiplier_table(void **state) {
    (void)state;
    for (size_t i = 0; i < N(multipliers); i++) {
        int32_t q;
        int shift;
        eng_quantize_multiplier(multipliers[i].m, &q, &shift);
        if (q != multipliers[i].q || shift != multipliers[i].shift)
            fail_msg("%a (%s): got (%d, %d), want (%d, %d)", multipliers[i].m, multipliers[i].why,
                     q, shift, multipliers[i].q, multipliers[i].shift);
    }
}

/* ---- SaturatingRoundingDoublingHighMul: (a * b + nudge) / 2^31, truncated, where nudge
 * is 2^30 for a non-negative product and 1 - 2^30 for a negative one ------------------ */

static const struct {
    int32_t a, b, want;
    const char *why;
} high_muls[] = {
    {1073741824, 1073741824, 536870912, "2^60 / 2^31 = 2^29 (+0.5 truncated)"},
    {3, 1073741824, 2, "1.5: (3 * 2^30 + 2^30) / 2^31 = 2"},
    {-3, 1073741824, -1, "-1.5: (-3 * 2^30 + 1 - 2^30) / 2^31 = -1.99.. truncates to -1"},
    {5, 1073741824, 3, "2.5 goes up to 3"},
    {-5, 1073741824, -2, "-2.5 goes up to -2"},
    {INT32_MIN, INT32_MIN, INT32_MAX, "the one overflow saturates"},
    {INT32_MAX, INT32_MAX, 2147483646, "(2^62 - 2^32 + 1 + 2^30) / 2^31 = 2^31 - 1.5.."},
    {INT32_MIN, INT32_MAX, -2147483647, "-2^31 * (2^31 - 1) / 2^31 = -(2^31 - 1) exactly"},
};

static void high_mul_table(void **state) {
    (void)state;
    for (size_t i = 0; i < N(high_muls); i++) {
        int32_t got = eng_srdhm(high_muls[i].a, high_muls[i].b);
        if (got != high_muls[i].want)
            fail_msg("srdhm(%d, %d) (%s): got %d, want %d", high_muls[i].a, high_muls[i].b,
                     high_muls[i].why, got, high_muls[i].want);
    }
}

/* ---- RoundingDivideByPOT: x >> e, plus one when the remainder x & (2^e - 1) exceeds
 * (2^e - 1) >> 1, plus one more for negative x: halves round away from zero ------------ */

static const struct {
    int32_t x;
    int e;
    int32_t want;
    const char *why;
} pot_divs[] = {
    {5, 1, 3, "2.5 away from zero"},
    {-5, 1, -3, "-2.5 away from zero: -3 + (1 > 1 ? 1 : 0)"},
    {6, 2, 2, "1.5 away from zero"},
    {-6, 2, -2, "-1.5: -6 >> 2 = -2, remainder 2, threshold 2"},
    {7, 2, 2, "1.75 to nearest"},
    {-7, 2, -2, "-1.75: -7 >> 2 = -2, remainder 1"},
    {9, 0, 9, "no shift"},
    {INT32_MAX, 31, 1, "0.99.. rounds to 1"},
    {INT32_MIN, 31, -1, "-1 exactly"},
    {1 << 30, 31, 1, "0.5 at the widest shift"},
    {-(1 << 30), 31, -1, "-0.5 at the widest shift"},
};

static void pot_div_table(void **state) {
    (void)state;
    for (size_t i = 0; i < N(pot_divs); i++) {
        int32_t got = eng_rounding_shift_right(pot_divs[i].x, pot_divs[i].e);
        if (got != pot_divs[i].want)
            fail_msg("%d / 2^%d (%s): got %d, want %d", pot_divs[i].x, pot_divs[i].e,
                     pot_divs[i].why, got, pot_divs[i].want);
    }
}

/* ---- MultiplyByQuantizedMultiplier: RoundingDivideByPOT(SRDHM(x * 2^left, q), right) --- */

static const struct {
    int32_t x, q;
    int shift;
    int32_t want;
    const char *why;
} requants[] = {
    {10, 1073741824, 0, 5, "x 0.5 = 5 exactly"},
    {3, 1073741824, 0, 2, "x 0.5 = 1.5: the tie falls in SRDHM, goes up"},
    {-3, 1073741824, 0, -1, "x 0.5 = -1.5: SRDHM takes it up to -1"},
    {-6, 1073741824, -1, -2, "x 0.25 = -1.5: SRDHM exact (-3), the shift rounds away: -2"},
    {5, 1073741824, -1, 2, "x 0.25 = 1.25: SRDHM 2.5 -> 3, then 1.5 -> 2 (two roundings)"},
    {-5, 1073741824, -1, -1, "x 0.25 = -1.25: SRDHM -2.5 -> -2, then -1 exactly"},
    {3, 1610612736, -1, 1, "x 0.375 = 1.125: SRDHM 2.25 -> 2, then 1"},
    {5, 1610612736, -1, 2, "x 0.375 = 1.875: SRDHM 3.75 -> 4, then 2"},
    {100, 1073741824, 2, 200, "x 2.0: left shift by 2 first (400), then x 0.5"},
    {INT32_MAX, INT32_MAX, -31, 1, "x (1 - 2^-31) 2^-31: SRDHM 2^31 - 2, then 0.99.. -> 1"},
    {-(1 << 30), 1073741824, -31, 0, "x 2^-32 = -0.25: SRDHM -2^29, then -0.25 -> 0"},
};

static void requant_table(void **state) {
    (void)state;
    for (size_t i = 0; i < N(requants); i++) {
        int32_t got = eng_mul_by_quantized(requants[i].x, requants[i].q, requants[i].shift);
        if (got != requants[i].want)
            fail_msg("%d x (%d, %d) (%s): got %d, want %d", requants[i].x, requants[i].q,
                     requants[i].shift, requants[i].why, got, requants[i].want);
    }
}

/* ---- per-channel convolution multipliers ------------------------------------------------ */

/* Input scale 6/255 and output scale 0.05 as floats (0.0235294122248888 and
 * 0.0500000007450580597), filter channel scales 0.0011 and 0.002 as floats
 * (0.00109999999403953552 and 0.00200000009499490261). Channel 0: the product in double is
 * 2.5882353307131456e-05, in float 2.58823529293295e-05; divided by the output scale in
 * double and quantized (frexp, x 2^31, rounded): (1138317920, -10) and (1138317903, -10).
 * Channel 1: 4.7058826684951826e-05 and 4.705882747657597e-05 give (2069669054, -10) and
 * (2069669089, -10). */
static const float in_scale = 0.0235294122248888f, out_scale = 0.05f;
static const float channel_scales[2] = {0.0011f, 0.002f};
static const int32_t want_double[2] = {1138317920, 2069669054};
static const int32_t want_float[2] = {1138317903, 2069669089};

static void requant_of(int32_t op, int32_t in_type, int32_t mult[2], int shift[2]) {
    eng_channel_quant cq = {.scales = channel_scales, .n_scales = 2, .channel_dim = 0};
    eng_tensor in = {.type = in_type, .scale = in_scale};
    eng_tensor out = {.type = in_type, .scale = out_scale};
    eng_tensor filter = {.type = SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL, .channel_quant = &cq};
    if (in_type == SCHEMA_TENSOR_QUANT8_ASYMM) /* unsigned filters are per tensor */
        filter = (eng_tensor){.type = SCHEMA_TENSOR_QUANT8_ASYMM, .scale = channel_scales[0]};
    eng_conv_requant(op, &in, &filter, &out, 2, mult, shift);
}

static void signed_conv_takes_the_double_product(void **state) {
    (void)state;
    int32_t mult[2];
    int shift[2];
    requant_of(SCHEMA_OP_CONV_2D, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, mult, shift);
    for (int c = 0; c < 2; c++) {
        assert_int_equal(mult[c], want_double[c]);
        assert_int_equal(shift[c], -10);
    }
    requant_of(SCHEMA_OP_DEPTHWISE_CONV_2D, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, mult, shift);
    assert_int_equal(mult[1], want_double[1]);
}

static void unsigned_conv_and_fully_connected_take_the_float_product(void **state) {
    (void)state;
    int32_t mult[2];
    int shift[2];
    requant_of(SCHEMA_OP_CONV_2D, SCHEMA_TENSOR_QUANT8_ASYMM, mult, shift);
    assert_int_equal(mult[0], want_float[0]);
    assert_int_equal(mult[1], want_float[0]); /* per tensor: channel 0's scale for both */
    assert_int_equal(shift[0], -10);
    requant_of(SCHEMA_OP_FULLY_CONNECTED, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, mult, shift);
    for (int c = 0; c < 2; c++)
        assert_int_equal(mult[c], want_float[c]);
}

/* The two multipliers of channel 0 move an accumulator of 2232215 by one step.
 * 2232215 x 1138317920 / 2^31 = 1183231.518 -> SRDHM 1183232, / 2^10 = 1155.5 exactly,
 * which rounds away from zero: 1156. 2232215 x 1138317903 / 2^31 = 1183231.49991 -> SRDHM
 * 1183231, / 2^10 = 1155.499 -> 1155. (Found by a search over accumulators.) */
static void one_step_apart(void **state) {
    (void)state;
    assert_int_equal(eng_mul_by_quantized(2232215, want_double[0], -10), 1156);
    assert_int_equal(eng_mul_by_quantized(2232215, want_float[0], -10), 1155);
    assert_int_equal(eng_mul_by_quantized(-2232215, want_double[0], -10), -1156);
    assert_int_equal(eng_mul_by_quantized(-2232215, want_float[0], -10), -1155);
}

/* ---- ADD: each input x 2^20, scaled by its scale / (2 max scale), summed, scaled by
 * 2 max scale / (2^20 out scale) -------------------------------------------------------- */

/* Scales a 0.5, b 0.25, out 1.0, zero points 0: twice the larger scale is 1.0, so the
 * multipliers are 0.5 (2^30, 0), 0.25 (2^30, -1) and 2^-20 (2^30, -19). */
static int32_t add_q(int32_t a, int32_t b) {
    int32_t ma, mb, mo;
    int sa, sb, so;
    eng_quantize_multiplier(0.5, &ma, &sa);
    eng_quantize_multiplier(0.25, &mb, &sb);
    eng_quantize_multiplier(0x1p-20, &mo, &so);
    int32_t x = eng_mul_by_quantized(a * (1 << 20), ma, sa);
    int32_t y = eng_mul_by_quantized(b * (1 << 20), mb, sb);
    return eng_mul_by_quantized(x + y, mo, so);
}

static void add_pipeline(void **state) {
    (void)state;
    /* 1.5 + 0.75 = 2.25: x 1572864, y 786432, sum 2359296 -> SRDHM 1179648 -> / 2^19 = 2 */
    assert_int_equal(add_q(3, 3), 2);
    /* 0.5: x 2^19, sum 2^19 -> SRDHM 2^18 -> 2^18 / 2^19 = 0.5 rounds away: 1 */
    assert_int_equal(add_q(1, 0), 1);
    /* -0.5: every step exact until the last shift, which rounds away: -1 */
    assert_int_equal(add_q(-1, 0), -1);
    /* 0.5 - 0.75 = -0.25: x 2^19, y -786432, sum -262144 -> -131072 -> -0.25 -> 0 */
    assert_int_equal(add_q(1, -3), 0);
}

/* ---- fused activation bounds: zero point + round(bound / scale), half away from zero,
 * clamped to the type ------------------------------------------------------------------ */

static const struct {
    int32_t act;
    float scale;
    int32_t zp, qmin, qmax, lo, hi;
    const char *why;
} bounds[] = {
    {SCHEMA_FUSED_RELU6, 0.05f, 10, 0, 255, 10, 130, "6 / 0.05 = 120"},
    {SCHEMA_FUSED_RELU6, 0.1f, -128, -128, 127, -128, -68, "6 / 0.1 = 60"},
    {SCHEMA_FUSED_RELU6, 0.01f, 0, 0, 255, 0, 255, "600 clamps to the type"},
    {SCHEMA_FUSED_RELU1, 0.5f, 3, 0, 255, 1, 5, "-1 / 0.5 = -2, 1 / 0.5 = 2"},
    {SCHEMA_FUSED_RELU1, 0.4f, 0, -128, 127, -3, 3,
     "1 / 0.4f is 2.49999996 in double but 2.5 in float, the quotient's type: away to 3"},
    {SCHEMA_FUSED_RELU, 0.3f, -5, -128, 127, -5, 127, "lower bound at the zero point"},
    {SCHEMA_FUSED_NONE, 0.3f, -5, -128, 127, -128, 127, "the type's range"},
};

static void activation_bounds_table(void **state) {
    (void)state;
    for (size_t i = 0; i < N(bounds); i++) {
        int32_t lo, hi;
        eng_act_range_quant(bounds[i].act, bounds[i].scale, bounds[i].zp, bounds[i].qmin,
                            bounds[i].qmax, &lo, &hi);
        if (lo != bounds[i].lo || hi != bounds[i].hi)
            fail_msg("case %zu (%s): got [%d, %d], want [%d, %d]", i, bounds[i].why, lo, hi,
                     bounds[i].lo, bounds[i].hi);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantize_multiplier_table),
        cmocka_unit_test(high_mul_table),
        cmocka_unit_test(pot_div_table),
        cmocka_unit_test(requant_table),
        cmocka_unit_test(signed_conv_takes_the_double_product),
        cmocka_unit_test(unsigned_conv_and_fully_connected_take_the_float_product),
        cmocka_unit_test(one_step_apart),
        cmocka_unit_test(add_pipeline),
        cmocka_unit_test(activation_bounds_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

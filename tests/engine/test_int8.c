/* SPDX-License-Identifier: Apache-2.0 */
/* test_int8 (unit): TENSOR_QUANT8_ASYMM_SIGNED where it is not simply the unsigned type
 * shifted by 128, and where the HAL does not take it at all.
 * - Results that depend on the sign of stored values: MEAN rounds ties up (TFLite's
 *   requantization), AVERAGE_POOL_2D rounds half away from zero, REDUCE_MAX and ARGMAX see
 *   negative values as smaller, PAD and PAD_V2 pad with a negative zero point or value.
 * - Operations the conformance vectors do not run on int8: SLICE, LESS_EQUAL and the
 *   identity CAST.
 * - TensorFlow Lite's int8 arithmetic: RESIZE_BILINEAR in 1/1024ths and LOGISTIC's float
 *   table, with values derived by hand.
 * - GetSupportedOperations is honest: the operations HAL 1.3 gives no signed 8-bit form are
 *   not supported on int8, while the same models on FLOAT32 are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/core/internal.h" /* schema_operation_name */
#include "tests/support/one_op.h"

#define S8 SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED

/* Runs the model and checks output 0 against want (n bytes). */
static void expect_output(one_op *m, const void *want, size_t n) {
    uint8_t got[64];
    assert_true(n <= sizeof got);
    one_op_run(m, got, sizeof got);
    if (memcmp(got, want, n)) {
        char line[256] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(line + strlen(line), sizeof line - strlen(line), " %d", (int8_t)got[i]);
        fail_msg("%s: output 0 is%s", schema_operation_name(m->code), line);
    }
}

/* ---- where the sign of stored values matters --------------------------------------- */

/* TFLite's MEAN: the multiplier of 1.0 is (2^30, shift 1); 1/2 folds in as (2^30, shift 0),
 * so each mean is SaturatingRoundingDoublingHighMul(sum, 2^30): -7 / 2 = -3.5 gives
 * (-7 * 2^30 + 1 - 2^30) / 2^31 truncated, -3; 7 / 2 gives (7 * 2^30 + 2^30) / 2^31 = 4.
 * Ties go up, not away from zero. */
static void mean_rounds_ties_up(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[4] = {-3, -4, 3, 4}, want[2] = {-3, 4}; /* -3.5, 3.5 */
    one_op_start(&m, SCHEMA_OP_MEAN);
    one_op_in(&m, S8, 2, (uint32_t[]){2, 2}, 0.5f, 0, x);
    one_op_ints(&m, 1, (int32_t[]){1});
    one_op_i32(&m, 0);
    one_op_out(&m, S8, 1, (uint32_t[]){2}, 0.5f, 0);
    expect_output(&m, want, sizeof want);
}

static void average_pool_rounds_half_away_from_zero(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[4] = {-2, -3, 2, 3}, want[2] = {-3, 3}; /* -2.5, 2.5 */
    one_op_start(&m, SCHEMA_OP_AVERAGE_POOL_2D);
    one_op_in(&m, S8, 4, (uint32_t[]){1, 1, 4, 1}, 1.f, 0, x);
    one_op_i32(&m, 2);                    /* VALID */
    one_op_i32(&m, 2), one_op_i32(&m, 1); /* strides w, h */
    one_op_i32(&m, 2), one_op_i32(&m, 1); /* filter w, h */
    one_op_i32(&m, 0);                    /* no activation */
    one_op_out(&m, S8, 4, (uint32_t[]){1, 1, 2, 1}, 1.f, 0);
    expect_output(&m, want, sizeof want);
}

/* TFLite's int8 RESIZE_BILINEAR works in 1/1024ths: widths 2 -> 3 give a step of
 * (2048 + 1) / 3 = 683. Output 1 sits at 683: weights 341 (of -3) and 683 (of 4), sum
 * 1024 * 1709, plus 2^19, / 2^20 = 2.17 -> 2 (a float interpolation truncated gives 1).
 * Output 2 sits at 1366: both neighbours are 4 (the right one clamped), 4.5 truncates to 4
 * after the rounding term (the sum is exactly 4 * 2^20). Output 0 is -3 * 2^20, minus
 * 2^19 for its sign, / 2^20 = -3. */
static void resize_bilinear_in_1024ths(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[2] = {-3, 4}, want[3] = {-3, 2, 4};
    one_op_start(&m, SCHEMA_OP_RESIZE_BILINEAR);
    one_op_in(&m, S8, 4, (uint32_t[]){1, 1, 2, 1}, 0.5f, 0, x);
    one_op_i32(&m, 3); /* width */
    one_op_i32(&m, 1); /* height */
    one_op_out(&m, S8, 4, (uint32_t[]){1, 1, 3, 1}, 0.5f, 0);
    expect_output(&m, want, sizeof want);
}

/* LOGISTIC from TFLite's float table, on the reference kernels: input scale 1/16, so
 * stored 16 is 1.0: 1 / (1 + e^-1) = 0.731059 * 256 = 187.15 -> 187, - 128 = 59; -16:
 * 0.268941 * 256 = 68.85 -> 69 - 128 = -59; 0 -> 128 - 128 = 0; 127 (7.94): 255.91 ->
 * 256 - 128 = 128, clamped to 127; -128 (-8): 0.0859 -> 0 - 128. */
static void logistic_rounds_the_float_function(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[5] = {16, -16, 0, 127, -128}, want[5] = {59, -59, 0, 127, -128};
    setenv("NND_REFERENCE_KERNELS", "1", 1);
    one_op_start(&m, SCHEMA_OP_LOGISTIC);
    one_op_in(&m, S8, 1, (uint32_t[]){5}, 1.f / 16, 0, x);
    one_op_out(&m, S8, 1, (uint32_t[]){5}, 1.f / 256, -128);
    expect_output(&m, want, sizeof want);
    unsetenv("NND_REFERENCE_KERNELS");
}

static void reduce_max_of_negative_values(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[2] = {-100, -50}, want[1] = {-50};
    one_op_start(&m, SCHEMA_OP_REDUCE_MAX);
    one_op_in(&m, S8, 2, (uint32_t[]){1, 2}, 1.f, 3, x);
    one_op_ints(&m, 1, (int32_t[]){1});
    one_op_bool(&m, false);
    one_op_out(&m, S8, 1, (uint32_t[]){1}, 1.f, 3);
    expect_output(&m, want, 1);
}

static void argmax_sees_negative_values_as_smaller(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[3] = {-1, 1, -128};
    static const int32_t want[1] = {1};
    one_op_start(&m, SCHEMA_OP_ARGMAX);
    one_op_in(&m, S8, 2, (uint32_t[]){1, 3}, 1.f, 0, x);
    one_op_i32(&m, 1);
    one_op_out(&m, SCHEMA_TENSOR_INT32, 1, (uint32_t[]){1}, 0.f, 0);
    expect_output(&m, want, sizeof want);
}

static void pad_with_negative_zero_point_and_value(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[1] = {5}, want_pad[3] = {-5, 5, -5}, want_v2[3] = {-7, 5, -7};
    static const int32_t paddings[2] = {1, 1};
    one_op_start(&m, SCHEMA_OP_PAD); /* pads with the zero point, the logical 0 */
    one_op_in(&m, S8, 1, (uint32_t[]){1}, 0.5f, -5, x);
    one_op_constant(&m, SCHEMA_TENSOR_INT32, 2, (uint32_t[]){1, 2}, paddings, sizeof paddings);
    one_op_out(&m, S8, 1, (uint32_t[]){3}, 0.5f, -5);
    expect_output(&m, want_pad, sizeof want_pad);
    one_op_start(&m, SCHEMA_OP_PAD_V2);
    one_op_in(&m, S8, 1, (uint32_t[]){1}, 0.5f, -5, x);
    one_op_constant(&m, SCHEMA_TENSOR_INT32, 2, (uint32_t[]){1, 2}, paddings, sizeof paddings);
    one_op_i32(&m, -7);
    one_op_out(&m, S8, 1, (uint32_t[]){3}, 0.5f, -5);
    expect_output(&m, want_v2, sizeof want_v2);
}

/* ---- operations no int8 conformance vector runs ------------------------------------ */

static void slice_moves_int8(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[4] = {-128, -1, 0, 127}, want[2] = {-1, 0};
    one_op_start(&m, SCHEMA_OP_SLICE);
    one_op_in(&m, S8, 1, (uint32_t[]){4}, 0.25f, -1, x);
    one_op_ints(&m, 1, (int32_t[]){1});
    one_op_ints(&m, 1, (int32_t[]){2});
    one_op_out(&m, S8, 1, (uint32_t[]){2}, 0.25f, -1);
    expect_output(&m, want, sizeof want);
}

static void less_equal_compares_real_values(void **state) {
    (void)state;
    one_op m;
    /* a = {-2, 3, 1}; b = 2 * (q + 1) = {-2, 4, 0} */
    static const int8_t a[3] = {-2, 3, 1}, b[3] = {-2, 1, -1};
    static const uint8_t want[3] = {1, 1, 0};
    one_op_start(&m, SCHEMA_OP_LESS_EQUAL);
    one_op_in(&m, S8, 1, (uint32_t[]){3}, 1.f, 0, a);
    one_op_in(&m, S8, 1, (uint32_t[]){3}, 2.f, -1, b);
    one_op_out(&m, SCHEMA_TENSOR_BOOL8, 1, (uint32_t[]){3}, 0.f, 0);
    expect_output(&m, want, sizeof want);
}

static void cast_copies_int8_to_itself(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[3] = {-128, 5, 127};
    one_op_start(&m, SCHEMA_OP_CAST);
    one_op_in(&m, S8, 1, (uint32_t[]){3}, 0.5f, 1, x);
    one_op_out(&m, S8, 1, (uint32_t[]){3}, 0.25f, -4); /* CAST ignores the quantization */
    expect_output(&m, x, sizeof x);
}

/* ---- honest support ----------------------------------------------------------------- */

/* Operation code over [2] tensors of the given type, in a signature the operation takes. */
static void signature_model(one_op *m, int32_t code, int32_t type) {
    static const int32_t data[4] = {1, 2, 3, 4};
    float scale = type == S8 ? 0.5f : 0.f;
    uint32_t two[1] = {2};
    one_op_start(m, code);
    if (code == SCHEMA_OP_HASHTABLE_LOOKUP) { /* lookups, keys, values [2, 2]; values, hits */
        one_op_in(m, SCHEMA_TENSOR_INT32, 1, two, 0.f, 0, data);
        one_op_ints(m, 2, data);
        one_op_in(m, type, 2, (uint32_t[]){2, 2}, scale, 0, data);
        one_op_out(m, type, 2, (uint32_t[]){2, 2}, scale, 0);
        one_op_out(m, SCHEMA_TENSOR_QUANT8_ASYMM, 1, two, 1.f, 0);
        return;
    }
    one_op_in(m, type, 1, two, scale, 0, data);
    bool reduce = code == SCHEMA_OP_REDUCE_SUM || code == SCHEMA_OP_REDUCE_PROD;
    if (code == SCHEMA_OP_DIV || code == SCHEMA_OP_POW) one_op_in(m, type, 1, two, scale, 0, data);
    if (code == SCHEMA_OP_DIV) one_op_i32(m, 0);
    if (reduce) one_op_ints(m, 1, (int32_t[]){0}), one_op_bool(m, true); /* keep dimensions */
    one_op_out(m, type, 1, reduce ? (uint32_t[]){1} : two, scale, 0);
}

static void no_int8_where_the_hal_has_none(void **state) {
    (void)state;
    static const int32_t codes[] = {
        SCHEMA_OP_ABS, SCHEMA_OP_EXP,        SCHEMA_OP_FLOOR,       SCHEMA_OP_LOG,
        SCHEMA_OP_NEG, SCHEMA_OP_SIN,        SCHEMA_OP_SQRT,        SCHEMA_OP_DIV,
        SCHEMA_OP_POW, SCHEMA_OP_REDUCE_SUM, SCHEMA_OP_REDUCE_PROD, SCHEMA_OP_HASHTABLE_LOOKUP};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        one_op m;
        signature_model(&m, codes[i], SCHEMA_TENSOR_FLOAT32);
        if (!one_op_supported(&m))
            fail_msg("%s: the FLOAT32 model", schema_operation_name(codes[i]));
        signature_model(&m, codes[i], S8);
        if (one_op_supported(&m))
            fail_msg("%s: supported on int8", schema_operation_name(codes[i]));
    }
}

static void cast_converts_no_int8(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[2] = {0};
    one_op_start(&m, SCHEMA_OP_CAST);
    one_op_in(&m, S8, 1, (uint32_t[]){2}, 0.5f, 0, x);
    one_op_out(&m, SCHEMA_TENSOR_FLOAT32, 1, (uint32_t[]){2}, 0.f, 0);
    assert_false(one_op_supported(&m));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mean_rounds_ties_up),
        cmocka_unit_test(average_pool_rounds_half_away_from_zero),
        cmocka_unit_test(resize_bilinear_in_1024ths),
        cmocka_unit_test(logistic_rounds_the_float_function),
        cmocka_unit_test(reduce_max_of_negative_values),
        cmocka_unit_test(argmax_sees_negative_values_as_smaller),
        cmocka_unit_test(pad_with_negative_zero_point_and_value),
        cmocka_unit_test(slice_moves_int8),
        cmocka_unit_test(less_equal_compares_real_values),
        cmocka_unit_test(cast_copies_int8_to_itself),
        cmocka_unit_test(no_int8_where_the_hal_has_none),
        cmocka_unit_test(cast_converts_no_int8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

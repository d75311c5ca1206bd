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

#include "engine/core/internal.h" /* schema_shape_bytes */

#define MAX_OPERANDS 12
#define S8           SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED

/* A model of one operation, built operand by operand. */
typedef struct one_op {
    eng_operand_desc operands[MAX_OPERANDS];
    uint32_t n_operands;
    uint8_t values[256];
    size_t n_values;
    uint32_t op_in[MAX_OPERANDS], n_op_in, op_out[2], n_op_out;
    uint32_t inputs[4], n_inputs;
    const void *input_data[4];
    int32_t code;
} one_op;

static uint32_t add(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                    int32_t zero_point, uint32_t lifetime) {
    assert_true(m->n_operands < MAX_OPERANDS);
    eng_operand_desc *o = &m->operands[m->n_operands];
    *o = (eng_operand_desc){
        .type = type, .rank = rank, .scale = scale, .zero_point = zero_point, .lifetime = lifetime};
    if (rank) memcpy(o->dims, dims, rank * sizeof *dims);
    return m->n_operands++;
}

/* An operation input that is a model input with the given data. */
static void in(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
               int32_t zero_point, const void *data) {
    uint32_t i = add(m, type, rank, dims, scale, zero_point, SCHEMA_MODEL_INPUT);
    m->input_data[m->n_inputs] = data;
    m->inputs[m->n_inputs++] = i;
    m->op_in[m->n_op_in++] = i;
}

/* An operation input that is a constant of n elements of `size` bytes. */
static void constant(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, const void *data,
                     size_t bytes) {
    uint32_t i = add(m, type, rank, dims, 0.f, 0, SCHEMA_CONSTANT_COPY);
    m->n_values = (m->n_values + 7) & ~(size_t)7;
    assert_true(m->n_values + bytes <= sizeof m->values);
    memcpy(m->values + m->n_values, data, bytes);
    m->operands[i].offset = m->n_values;
    m->operands[i].length = bytes;
    m->n_values += bytes;
    m->op_in[m->n_op_in++] = i;
}
static void scalar_i32(one_op *m, int32_t v) {
    constant(m, SCHEMA_INT32, 0, NULL, &v, sizeof v);
}
static void scalar_bool(one_op *m, bool v) {
    uint8_t b = v;
    constant(m, SCHEMA_BOOL, 0, NULL, &b, 1);
}
static void ints(one_op *m, uint32_t n, const int32_t *v) {
    constant(m, SCHEMA_TENSOR_INT32, 1, (uint32_t[]){n}, v, n * sizeof *v);
}

static void out(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                int32_t zero_point) {
    m->op_out[m->n_op_out++] = add(m, type, rank, dims, scale, zero_point, SCHEMA_MODEL_OUTPUT);
}

static eng_model_desc desc(one_op *m, eng_operation_desc *op) {
    *op = (eng_operation_desc){m->code, m->n_op_in, m->op_in, m->n_op_out, m->op_out};
    return (eng_model_desc){.n_operands = m->n_operands,
                            .operands = m->operands,
                            .n_operations = 1,
                            .operations = op,
                            .n_inputs = m->n_inputs,
                            .inputs = m->inputs,
                            .n_outputs = m->n_op_out,
                            .outputs = m->op_out,
                            .operand_values = m->values,
                            .operand_values_len = m->n_values};
}

/* Runs the model and checks output 0 against want (n bytes). */
static void expect_output(one_op *m, const void *want, size_t n) {
    eng_operation_desc op;
    eng_model_desc d = desc(m, &op);
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    if (eng_prepare(&d, &p, err, sizeof err))
        fail_msg("%s: %s", schema_operation_name(m->code), err);
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    eng_io io_in[4] = {{0}}, io_out[2] = {{0}};
    uint8_t got[2][64];
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        const eng_operand_desc *o = &m->operands[m->inputs[i]];
        io_in[i] = (eng_io){.data = (void *)m->input_data[i],
                            .length = schema_shape_bytes(o->type, o->rank, o->dims)};
    }
    for (uint32_t i = 0; i < m->n_op_out; i++)
        io_out[i] = (eng_io){.data = got[i], .length = sizeof got[i]};
    if (eng_exec_run(e, io_in, io_out, NULL, NULL, err, sizeof err))
        fail_msg("%s: %s", schema_operation_name(m->code), err);
    if (memcmp(got[0], want, n)) {
        char line[256] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(line + strlen(line), sizeof line - strlen(line), " %d", (int8_t)got[0][i]);
        fail_msg("%s: output 0 is%s", schema_operation_name(m->code), line);
    }
    eng_exec_free(e);
    eng_prepared_free(p);
}

static void start(one_op *m, int32_t code) {
    memset(m, 0, sizeof *m);
    m->code = code;
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
    start(&m, SCHEMA_OP_MEAN);
    in(&m, S8, 2, (uint32_t[]){2, 2}, 0.5f, 0, x);
    ints(&m, 1, (int32_t[]){1});
    scalar_i32(&m, 0);
    out(&m, S8, 1, (uint32_t[]){2}, 0.5f, 0);
    expect_output(&m, want, sizeof want);
}

static void average_pool_rounds_half_away_from_zero(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[4] = {-2, -3, 2, 3}, want[2] = {-3, 3}; /* -2.5, 2.5 */
    start(&m, SCHEMA_OP_AVERAGE_POOL_2D);
    in(&m, S8, 4, (uint32_t[]){1, 1, 4, 1}, 1.f, 0, x);
    scalar_i32(&m, 2);                    /* VALID */
    scalar_i32(&m, 2), scalar_i32(&m, 1); /* strides w, h */
    scalar_i32(&m, 2), scalar_i32(&m, 1); /* filter w, h */
    scalar_i32(&m, 0);                    /* no activation */
    out(&m, S8, 4, (uint32_t[]){1, 1, 2, 1}, 1.f, 0);
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
    start(&m, SCHEMA_OP_RESIZE_BILINEAR);
    in(&m, S8, 4, (uint32_t[]){1, 1, 2, 1}, 0.5f, 0, x);
    scalar_i32(&m, 3); /* width */
    scalar_i32(&m, 1); /* height */
    out(&m, S8, 4, (uint32_t[]){1, 1, 3, 1}, 0.5f, 0);
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
    start(&m, SCHEMA_OP_LOGISTIC);
    in(&m, S8, 1, (uint32_t[]){5}, 1.f / 16, 0, x);
    out(&m, S8, 1, (uint32_t[]){5}, 1.f / 256, -128);
    expect_output(&m, want, sizeof want);
    unsetenv("NND_REFERENCE_KERNELS");
}

static void reduce_max_of_negative_values(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[2] = {-100, -50}, want[1] = {-50};
    start(&m, SCHEMA_OP_REDUCE_MAX);
    in(&m, S8, 2, (uint32_t[]){1, 2}, 1.f, 3, x);
    ints(&m, 1, (int32_t[]){1});
    scalar_bool(&m, false);
    out(&m, S8, 1, (uint32_t[]){1}, 1.f, 3);
    expect_output(&m, want, 1);
}

static void argmax_sees_negative_values_as_smaller(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[3] = {-1, 1, -128};
    static const int32_t want[1] = {1};
    start(&m, SCHEMA_OP_ARGMAX);
    in(&m, S8, 2, (uint32_t[]){1, 3}, 1.f, 0, x);
    scalar_i32(&m, 1);
    out(&m, SCHEMA_TENSOR_INT32, 1, (uint32_t[]){1}, 0.f, 0);
    expect_output(&m, want, sizeof want);
}

static void pad_with_negative_zero_point_and_value(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[1] = {5}, want_pad[3] = {-5, 5, -5}, want_v2[3] = {-7, 5, -7};
    static const int32_t paddings[2] = {1, 1};
    start(&m, SCHEMA_OP_PAD); /* pads with the zero point, the logical 0 */
    in(&m, S8, 1, (uint32_t[]){1}, 0.5f, -5, x);
    constant(&m, SCHEMA_TENSOR_INT32, 2, (uint32_t[]){1, 2}, paddings, sizeof paddings);
    out(&m, S8, 1, (uint32_t[]){3}, 0.5f, -5);
    expect_output(&m, want_pad, sizeof want_pad);
    start(&m, SCHEMA_OP_PAD_V2);
    in(&m, S8, 1, (uint32_t[]){1}, 0.5f, -5, x);
    constant(&m, SCHEMA_TENSOR_INT32, 2, (uint32_t[]){1, 2}, paddings, sizeof paddings);
    scalar_i32(&m, -7);
    out(&m, S8, 1, (uint32_t[]){3}, 0.5f, -5);
    expect_output(&m, want_v2, sizeof want_v2);
}

/* ---- operations no int8 conformance vector runs ------------------------------------ */

static void slice_moves_int8(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[4] = {-128, -1, 0, 127}, want[2] = {-1, 0};
    start(&m, SCHEMA_OP_SLICE);
    in(&m, S8, 1, (uint32_t[]){4}, 0.25f, -1, x);
    ints(&m, 1, (int32_t[]){1});
    ints(&m, 1, (int32_t[]){2});
    out(&m, S8, 1, (uint32_t[]){2}, 0.25f, -1);
    expect_output(&m, want, sizeof want);
}

static void less_equal_compares_real_values(void **state) {
    (void)state;
    one_op m;
    /* a = {-2, 3, 1}; b = 2 * (q + 1) = {-2, 4, 0} */
    static const int8_t a[3] = {-2, 3, 1}, b[3] = {-2, 1, -1};
    static const uint8_t want[3] = {1, 1, 0};
    start(&m, SCHEMA_OP_LESS_EQUAL);
    in(&m, S8, 1, (uint32_t[]){3}, 1.f, 0, a);
    in(&m, S8, 1, (uint32_t[]){3}, 2.f, -1, b);
    out(&m, SCHEMA_TENSOR_BOOL8, 1, (uint32_t[]){3}, 0.f, 0);
    expect_output(&m, want, sizeof want);
}

static void cast_copies_int8_to_itself(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[3] = {-128, 5, 127};
    start(&m, SCHEMA_OP_CAST);
    in(&m, S8, 1, (uint32_t[]){3}, 0.5f, 1, x);
    out(&m, S8, 1, (uint32_t[]){3}, 0.25f, -4); /* CAST ignores the quantization */
    expect_output(&m, x, sizeof x);
}

/* ---- honest support ----------------------------------------------------------------- */

/* Operation code over [2] tensors of the given type, in a signature the operation takes. */
static void signature_model(one_op *m, int32_t code, int32_t type) {
    static const int32_t data[4] = {1, 2, 3, 4};
    float scale = type == S8 ? 0.5f : 0.f;
    uint32_t two[1] = {2};
    start(m, code);
    if (code == SCHEMA_OP_HASHTABLE_LOOKUP) { /* lookups, keys, values [2, 2]; values, hits */
        in(m, SCHEMA_TENSOR_INT32, 1, two, 0.f, 0, data);
        ints(m, 2, data);
        in(m, type, 2, (uint32_t[]){2, 2}, scale, 0, data);
        out(m, type, 2, (uint32_t[]){2, 2}, scale, 0);
        out(m, SCHEMA_TENSOR_QUANT8_ASYMM, 1, two, 1.f, 0);
        return;
    }
    in(m, type, 1, two, scale, 0, data);
    bool reduce = code == SCHEMA_OP_REDUCE_SUM || code == SCHEMA_OP_REDUCE_PROD;
    if (code == SCHEMA_OP_DIV || code == SCHEMA_OP_POW) in(m, type, 1, two, scale, 0, data);
    if (code == SCHEMA_OP_DIV) scalar_i32(m, 0);
    if (reduce) ints(m, 1, (int32_t[]){0}), scalar_bool(m, true); /* keep dimensions */
    out(m, type, 1, reduce ? (uint32_t[]){1} : two, scale, 0);
}

static bool is_supported(one_op *m) {
    eng_operation_desc op;
    eng_model_desc d = desc(m, &op);
    bool supported = false;
    char err[SCHEMA_ERR_LEN] = "";
    return eng_supported_operations(&d, &supported, err, sizeof err) == SCHEMA_OK && supported;
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
        if (!is_supported(&m)) fail_msg("%s: the FLOAT32 model", schema_operation_name(codes[i]));
        signature_model(&m, codes[i], S8);
        if (is_supported(&m)) fail_msg("%s: supported on int8", schema_operation_name(codes[i]));
    }
}

static void cast_converts_no_int8(void **state) {
    (void)state;
    one_op m;
    static const int8_t x[2] = {0};
    start(&m, SCHEMA_OP_CAST);
    in(&m, S8, 1, (uint32_t[]){2}, 0.5f, 0, x);
    out(&m, SCHEMA_TENSOR_FLOAT32, 1, (uint32_t[]){2}, 0.f, 0);
    assert_false(is_supported(&m));
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

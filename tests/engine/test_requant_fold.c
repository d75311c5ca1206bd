/* SPDX-License-Identifier: Apache-2.0 */
/* test_requant_fold (unit): a MEAN whose 8-bit output only an ADD of 0 requantizes (the
 * shape TensorFlow Lite's NNAPI delegate gives a MEAN with another output scale) rounds
 * once, into the ADD's output (engine/core/rewrites.h), on both kernel sets; the look-alikes
 * that are not that shape keep both roundings.
 *
 * The model: x [1, 2, 2, 1] int8 at scale 1 -> MEAN over height and width into a temporary
 * at scale 1 -> ADD of a constant [1] -> out at scale 0.5. With x = 2, 2, 2, 3 the mean is
 * 2.25, the sum of differences 9. Rounded once to the output's step (multiplier 2 as 2^30
 * and shift 2, the 1/4 folded in: 2^30 and shift 0) TensorFlow Lite's
 * MultiplyByQuantizedMultiplier gives (9 * 2^30 + 2^30) / 2^31 = 5. Rounded twice: the MEAN
 * at scale 1 (2^30, shift 1, then 2^30, shift -1) gives 5 and then 5 / 2 rounded half
 * away, 3; the ADD doubles it to 6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "schema/codes.h"

typedef struct variant {
    int8_t constant;       /* the ADD's other input, stored value (zero point 0) */
    int32_t activation;    /* the ADD's fused activation */
    bool temporary_output; /* the MEAN's output is a model output too */
} variant;

/* Runs the model once on one kernel set; out receives the ADD's output, tmp the MEAN's
 * when it is a model output. */
static void run(const variant *v, bool reference, int8_t *out, int8_t *tmp) {
    setenv("NND_REFERENCE_KERNELS", reference ? "1" : "0", 1);
    uint8_t values[64] = {0};
    int32_t axes[2] = {1, 2}, keep = 1, act = v->activation;
    memcpy(values, axes, sizeof axes);
    memcpy(values + 8, &keep, 4);
    memcpy(values + 12, &act, 4);
    values[16] = (uint8_t)v->constant;
    eng_operand_desc o[7] = {
        {.type = SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
         .rank = 4,
         .dims = {1, 2, 2, 1},
         .scale = 1,
         .lifetime = SCHEMA_MODEL_INPUT},
        {.type = SCHEMA_TENSOR_INT32,
         .rank = 1,
         .dims = {2},
         .lifetime = SCHEMA_CONSTANT_COPY,
         .offset = 0,
         .length = 8},
        {.type = SCHEMA_INT32, .lifetime = SCHEMA_CONSTANT_COPY, .offset = 8, .length = 4},
        {.type = SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
         .rank = 4,
         .dims = {1, 1, 1, 1},
         .scale = 1,
         .lifetime = v->temporary_output ? SCHEMA_MODEL_OUTPUT : SCHEMA_TEMPORARY},
        {.type = SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
         .rank = 1,
         .dims = {1},
         .scale = 1,
         .lifetime = SCHEMA_CONSTANT_COPY,
         .offset = 16,
         .length = 1},
        {.type = SCHEMA_INT32, .lifetime = SCHEMA_CONSTANT_COPY, .offset = 12, .length = 4},
        {.type = SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
         .rank = 4,
         .dims = {1, 1, 1, 1},
         .scale = 0.5f,
         .lifetime = SCHEMA_MODEL_OUTPUT},
    };
    uint32_t mean_in[] = {0, 1, 2}, mean_out[] = {3}, add_in[] = {3, 4, 5}, add_out[] = {6};
    eng_operation_desc ops[2] = {{SCHEMA_OP_MEAN, 3, mean_in, 1, mean_out},
                                 {SCHEMA_OP_ADD, 3, add_in, 1, add_out}};
    uint32_t inputs[] = {0}, outputs[] = {6, 3};
    eng_model_desc m = {.n_operands = 7,
                        .operands = o,
                        .n_operations = 2,
                        .operations = ops,
                        .n_inputs = 1,
                        .inputs = inputs,
                        .n_outputs = v->temporary_output ? 2 : 1,
                        .outputs = outputs,
                        .operand_values = values,
                        .operand_values_len = sizeof values};
    char err[256] = "";
    eng_prepared *p = NULL;
    assert_int_equal(eng_prepare(&m, &p, err, sizeof err), SCHEMA_OK);
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    int8_t x[4] = {2, 2, 2, 3};
    eng_io in = {.data = x, .length = sizeof x};
    eng_io outs[2] = {{.data = out, .length = 1}, {.data = tmp, .length = 1}};
    assert_int_equal(eng_exec_run(e, &in, outs, NULL, NULL, err, sizeof err), SCHEMA_OK);
    eng_exec_free(e);
    eng_prepared_free(p);
    unsetenv("NND_REFERENCE_KERNELS");
}

static void expect(const variant *v, int8_t want_out, int8_t want_tmp) {
    for (int reference = 0; reference < 2; reference++) {
        int8_t out = 0, tmp = 0;
        run(v, reference, &out, &tmp);
        print_message("constant %d, activation %d, temporary out %d, %s: out %d, tmp %d\n",
                      v->constant, v->activation, v->temporary_output,
                      reference ? "reference" : "fast paths", out, tmp);
        assert_int_equal(out, want_out);
        if (v->temporary_output) assert_int_equal(tmp, want_tmp);
    }
}

static void folded_rounds_once(void **state) {
    (void)state;
    expect(&(variant){0, 0, false}, 5, 0);
}

static void fused_activation_keeps_both_roundings(void **state) {
    (void)state;
    expect(&(variant){0, 1 /* RELU */, false}, 6, 0);
}

static void nonzero_constant_keeps_both_roundings(void **state) {
    (void)state;
    expect(&(variant){1, 0, false}, 8, 0); /* (3 + 1) / 0.5 */
}

static void visible_temporary_keeps_both_roundings(void **state) {
    (void)state;
    expect(&(variant){0, 0, true}, 6, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(folded_rounds_once),
        cmocka_unit_test(fused_activation_keeps_both_roundings),
        cmocka_unit_test(nonzero_constant_keeps_both_roundings),
        cmocka_unit_test(visible_temporary_keeps_both_roundings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* test_fastpath_bounds (unit): where XNNPACK's arithmetic runs out, the fast paths stay on
 * the reference kernels and the answer is right. Signed 8-bit AVERAGE_POOL_2D over the
 * whole image: XNNPACK's 32-bit sum holds 2,896 x 2,896 pixels (claimed, computed right)
 * and not 4,096 x 4,096 (left to the reference: it once averaged 127s at zero point -128
 * to -128). Every input is 127, so every right answer is 127. (SOFTMAX's row sums:
 * test_fastpath_transformer.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/core/internal.h"

/* An AVERAGE_POOL_2D of the whole [1, side, side, 1] image, scale 1 and zero point -128 in
 * and out, prepared on the fast kernels; `claimed` says whether XNNPACK took the step. */
static void average_whole_image(uint32_t side, bool claimed) {
    unsetenv("NND_REFERENCE_KERNELS");
    int32_t values[9] = {0, 0, 0, 0, 1, 1, (int32_t)side, (int32_t)side, 0};
    eng_operand_desc o[11] = {{0}};
    o[0] = (eng_operand_desc){.type = SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
                              .rank = 4,
                              .dims = {1, side, side, 1},
                              .scale = 1.f,
                              .zero_point = -128,
                              .lifetime = SCHEMA_MODEL_INPUT};
    for (uint32_t i = 0; i < 9; i++)
        o[1 + i] = (eng_operand_desc){.type = SCHEMA_INT32,
                                      .lifetime = SCHEMA_CONSTANT_COPY,
                                      .offset = i * sizeof(int32_t),
                                      .length = sizeof(int32_t)};
    o[10] = o[0];
    o[10].dims[1] = o[10].dims[2] = 1;
    o[10].lifetime = SCHEMA_MODEL_OUTPUT;
    uint32_t in[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, out = 10, model_in = 0;
    eng_operation_desc op = {SCHEMA_OP_AVERAGE_POOL_2D, 10, in, 1, &out};
    eng_model_desc d = {.n_operands = 11,
                        .operands = o,
                        .n_operations = 1,
                        .operations = &op,
                        .n_inputs = 1,
                        .inputs = &model_in,
                        .n_outputs = 1,
                        .outputs = &out,
                        .operand_values = (const uint8_t *)values,
                        .operand_values_len = sizeof values};
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    if (eng_prepare(&d, &p, err, sizeof err)) fail_msg("prepare: %s", err);
    assert_int_equal(p->n_steps, 1);
    if ((p->steps[0].backend != NULL) != claimed)
        fail_msg("%u x %u: the fast path %s the step", side, side, claimed ? "refused" : "took");
    size_t n = (size_t)side * side;
    int8_t *image = malloc(n), result = 0;
    assert_non_null(image);
    memset(image, 127, n);
    eng_io io_in = {.data = image, .length = n}, io_out = {.data = &result, .length = 1};
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    if (eng_exec_run(e, &io_in, &io_out, NULL, NULL, err, sizeof err) != SCHEMA_OK)
        fail_msg("execute: %s", err);
    assert_int_equal(result, 127);
    eng_exec_free(e);
    eng_prepared_free(p);
    free(image);
}

static void qs8_average_within_32_bits(void **state) {
    (void)state;
    average_whole_image(2896, true); /* 8,386,816 pixels: at most 2^23 */
    average_whole_image(4096, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(qs8_average_within_32_bits)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* test_kernel_bounds (unit): kernels kept within their tensors under shapes and parameters
 * the conformance vectors do not reach. Each case is a one-operation model whose inputs and
 * outputs end at a guard page (tools/conformance/case_guard.h) with nothing readable past
 * them, run on both kernel sets: a read or write past a tensor faults (the test dies), and
 * shapes whose 32-bit arithmetic would wrap must be refused with a message naming them.
 * - MAX_POOL_2D with a 5x5 window (XNNPACK's multi-pass kernel, which reads its output back
 *   in whole vectors) and 3 channels: the output's last vector goes past its end.
 * - CONCATENATION of two [2^31] inputs: the output dimension added up in 32 bits was 0.
 * - BOX_WITH_NMS_LIMIT with 2^30 + 1 classes and boxes [1, 4]: n_classes * 4 wrapped to 4,
 *   and the boxes were read as if they held 4 per class.
 * - BOX_WITH_NMS_LIMIT with 8 boxes of 2^30 - 1 classes and DETECTION_POSTPROCESSING with
 *   2^16 anchors of 2^16 + 1 classes: more candidates than their 32-bit indexes hold.
 * - GENERATE_PROPOSALS with 2^30 + 1 anchors and 4 delta channels, likewise.
 * - LSH_PROJECTION (dense) with 2^27 hash functions of 32 bits: the output size wrapped to
 *   0 and every bit was written past it.
 * - SVDF with 2^16 filters of memory 2^16: the state's row (memory x filters) wrapped to
 *   0, so an empty state passed and was read and written past its end (here a [1, 1] state
 *   is given, and the refusal must name the product). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "tests/support/one_op.h"
#include "tools/conformance/case_guard.h"

/* A model input of the operation, without data (8-bit ones at scale 1). */
static void input(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims) {
    one_op_in(m, type, rank, dims, type == SCHEMA_TENSOR_QUANT8_ASYMM ? 1.f : 0.f, 0, NULL);
}

static void output(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims) {
    one_op_out(m, type, rank, dims, type == SCHEMA_TENSOR_QUANT8_ASYMM ? 1.f : 0.f, 0);
}

/* Prepares m on one kernel set: the status, err the message. */
static schema_status prepare(one_op *m, bool reference, eng_prepared **p, char *err,
                             size_t errlen) {
    if (reference)
        setenv("NND_REFERENCE_KERNELS", "1", 1);
    else
        unsetenv("NND_REFERENCE_KERNELS");
    eng_operation_desc op;
    eng_model_desc d = one_op_desc(m, &op);
    *p = NULL;
    return eng_prepare(&d, p, err, errlen);
}

static size_t bytes_of(const eng_operand_desc *o) {
    size_t n = o->type == SCHEMA_TENSOR_QUANT8_ASYMM ? 1 : 4;
    for (uint32_t d = 0; d < o->rank; d++)
        n *= o->dims[d];
    return n;
}

/* Runs m once with every input and output at a guard page; inputs hold `fill`. */
static schema_status run_guarded(one_op *m, bool reference, float fill) {
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p;
    schema_status s = prepare(m, reference, &p, err, sizeof err);
    if (s) fail_msg("prepare: %s", err);
    eng_io in[ONE_OP_MAX_INPUTS] = {{0}}, out[ONE_OP_MAX_OUTPUTS] = {{0}};
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        size_t n = bytes_of(&m->operands[m->inputs[i]]);
        in[i].data = tool_guard_alloc(n);
        in[i].length = n;
        assert_non_null(in[i].data);
        for (size_t k = 0; k < n / sizeof(float); k++)
            ((float *)in[i].data)[k] = fill + (float)k;
    }
    for (uint32_t o = 0; o < m->n_op_out; o++) {
        size_t n = bytes_of(&m->operands[m->op_out[o]]);
        out[o].data = tool_guard_alloc(n);
        out[o].length = n;
        assert_non_null(out[o].data);
    }
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    s = eng_exec_run(e, in, out, NULL, NULL, err, sizeof err);
    eng_exec_free(e);
    eng_prepared_free(p);
    for (uint32_t i = 0; i < m->n_inputs; i++)
        tool_guard_free(in[i].data);
    for (uint32_t o = 0; o < m->n_op_out; o++)
        tool_guard_free(out[o].data);
    return s;
}

static void max_pool_output_read_back(void **state) {
    (void)state;
    for (int reference = 0; reference < 2; reference++) {
        one_op m;
        one_op_start(&m, SCHEMA_OP_MAX_POOL_2D);
        const uint32_t in_dims[4] = {1, 5, 5, 3}, out_dims[4] = {1, 1, 1, 3};
        input(&m, SCHEMA_TENSOR_FLOAT32, 4, in_dims);
        one_op_i32(&m, SCHEMA_PADDING_VALID);
        one_op_i32(&m, 1), one_op_i32(&m, 1); /* strides */
        one_op_i32(&m, 5), one_op_i32(&m, 5); /* a 25-element window: more than one pass */
        one_op_i32(&m, SCHEMA_FUSED_NONE);
        output(&m, SCHEMA_TENSOR_FLOAT32, 4, out_dims);
        assert_int_equal(run_guarded(&m, reference, 1.f), SCHEMA_OK);
    }
}

/* Prepare must refuse m on both kernel sets with a message containing `why`. */
static void refused(one_op *m, const char *why) {
    for (int reference = 0; reference < 2; reference++) {
        char err[SCHEMA_ERR_LEN] = "";
        eng_prepared *p;
        schema_status s = prepare(m, reference, &p, err, sizeof err);
        if (s == SCHEMA_OK) {
            eng_prepared_free(p);
            fail_msg("prepared; want a refusal naming \"%s\"", why);
        }
        if (!strstr(err, why)) fail_msg("refused with \"%s\"; want \"%s\"", err, why);
    }
}

static void concat_dimension_wrap(void **state) {
    (void)state;
    one_op m;
    one_op_start(&m, SCHEMA_OP_CONCATENATION);
    const uint32_t half[1] = {1u << 31}, any[1] = {0};
    input(&m, SCHEMA_TENSOR_QUANT8_ASYMM, 1, half);
    input(&m, SCHEMA_TENSOR_QUANT8_ASYMM, 1, half);
    one_op_i32(&m, 0);
    output(&m, SCHEMA_TENSOR_QUANT8_ASYMM, 1, any);
    refused(&m, "past 2^32");
}

static void nms_limit_classes_wrap(void **state) {
    (void)state;
    one_op m;
    one_op_start(&m, SCHEMA_OP_BOX_WITH_NMS_LIMIT);
    const uint32_t scores[2] = {1, (1u << 30) + 1}, boxes[2] = {1, 4}, batch[1] = {1},
                   any1[1] = {0}, any2[2] = {0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, scores);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, boxes);
    input(&m, SCHEMA_TENSOR_INT32, 1, batch);
    one_op_f32(&m, 0.f), one_op_i32(&m, -1), one_op_i32(&m, 0), one_op_f32(&m, 0.5f),
        one_op_f32(&m, 1.f), one_op_f32(&m, 0.f);
    output(&m, SCHEMA_TENSOR_FLOAT32, 1, any1);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any2);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    refused(&m, "input 1 must be");
}

static void nms_limit_candidates_wrap(void **state) {
    (void)state;
    one_op m;
    one_op_start(&m, SCHEMA_OP_BOX_WITH_NMS_LIMIT);
    const uint32_t classes = (1u << 30) - 1, scores[2] = {8, classes}, boxes[2] = {8, classes * 4},
                   batch[1] = {8}, any1[1] = {0}, any2[2] = {0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, scores);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, boxes);
    input(&m, SCHEMA_TENSOR_INT32, 1, batch);
    one_op_f32(&m, 0.f), one_op_i32(&m, -1), one_op_i32(&m, 0), one_op_f32(&m, 0.5f),
        one_op_f32(&m, 1.f), one_op_f32(&m, 0.f);
    output(&m, SCHEMA_TENSOR_FLOAT32, 1, any1);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any2);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    refused(&m, "past 2^32 candidates");
}

static void postprocessing_candidates_wrap(void **state) {
    (void)state;
    one_op m;
    one_op_start(&m, SCHEMA_OP_DETECTION_POSTPROCESSING);
    const uint32_t scores[3] = {1, 1u << 16, (1u << 16) + 1}, deltas[3] = {1, 1u << 16, 4},
                   anchors[2] = {1u << 16, 4}, any1[1] = {0}, any2[2] = {0, 0}, any3[3] = {0, 0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 3, scores);
    input(&m, SCHEMA_TENSOR_FLOAT32, 3, deltas);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, anchors);
    one_op_f32(&m, 10.f), one_op_f32(&m, 10.f), one_op_f32(&m, 5.f), one_op_f32(&m, 5.f);
    one_op_bool(&m, true);
    one_op_i32(&m, 10), one_op_i32(&m, 1), one_op_i32(&m, 10);
    one_op_f32(&m, 0.f), one_op_f32(&m, 0.5f);
    one_op_bool(&m, false);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any2);
    output(&m, SCHEMA_TENSOR_FLOAT32, 3, any3);
    output(&m, SCHEMA_TENSOR_INT32, 2, any2);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    refused(&m, "past 2^32 candidates");
}

static void proposals_anchors_wrap(void **state) {
    (void)state;
    one_op m;
    one_op_start(&m, SCHEMA_OP_GENERATE_PROPOSALS);
    const uint32_t scores[4] = {1, 1, 1, (1u << 30) + 1}, deltas[4] = {1, 1, 1, 4},
                   anchors[2] = {(1u << 30) + 1, 4}, info[2] = {1, 2}, any1[1] = {0},
                   any2[2] = {0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 4, scores);
    input(&m, SCHEMA_TENSOR_FLOAT32, 4, deltas);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, anchors);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, info);
    one_op_f32(&m, 1.f), one_op_f32(&m, 1.f), one_op_i32(&m, -1), one_op_i32(&m, -1),
        one_op_f32(&m, 0.5f), one_op_f32(&m, 0.f);
    one_op_bool(&m, false);
    output(&m, SCHEMA_TENSOR_FLOAT32, 1, any1);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any2);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    refused(&m, "input 1 must match input 0");
}

static void lsh_dense_outputs_wrap(void **state) {
    (void)state;
    one_op m;
    one_op_start(&m, SCHEMA_OP_LSH_PROJECTION);
    const uint32_t hash[2] = {1u << 27, 32}, x[2] = {1, 1}, any[1] = {0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, hash);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, x);
    one_op_omitted(&m, SCHEMA_TENSOR_FLOAT32); /* weight */
    one_op_i32(&m, 2);                         /* dense */
    output(&m, SCHEMA_TENSOR_INT32, 1, any);
    refused(&m, "past 2^32");
}

static void svdf_state_wrap(void **state) {
    (void)state;
    one_op m;
    one_op_start(&m, SCHEMA_OP_SVDF);
    const uint32_t x[2] = {1, 1}, feature[2] = {1u << 16, 1}, time[2] = {1u << 16, 1u << 16},
                   st[2] = {1, 1}, any[2] = {0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, x);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, feature);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, time);
    one_op_omitted(&m, SCHEMA_TENSOR_FLOAT32); /* bias */
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, st);
    one_op_i32(&m, 1), one_op_i32(&m, SCHEMA_FUSED_NONE);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any);
    refused(&m, "past 2^32");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(max_pool_output_read_back),
        cmocka_unit_test(concat_dimension_wrap),
        cmocka_unit_test(nms_limit_classes_wrap),
        cmocka_unit_test(nms_limit_candidates_wrap),
        cmocka_unit_test(postprocessing_candidates_wrap),
        cmocka_unit_test(proposals_anchors_wrap),
        cmocka_unit_test(lsh_dense_outputs_wrap),
        cmocka_unit_test(svdf_state_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

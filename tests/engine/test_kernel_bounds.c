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
#include "tools/conformance/case_guard.h"

#define MAX_OPERANDS 24

typedef struct model {
    eng_operand_desc operands[MAX_OPERANDS];
    uint32_t n_operands;
    uint8_t values[256];
    size_t n_values;
    uint32_t op_in[MAX_OPERANDS], n_op_in, op_out[4], n_op_out;
    uint32_t inputs[4], n_inputs;
    int32_t code;
} model;

static uint32_t operand(model *m, int32_t type, uint32_t rank, const uint32_t *dims,
                        uint32_t lifetime) {
    assert_true(m->n_operands < MAX_OPERANDS);
    eng_operand_desc *o = &m->operands[m->n_operands];
    *o = (eng_operand_desc){.type = type, .rank = rank, .lifetime = lifetime};
    if (type == SCHEMA_TENSOR_QUANT8_ASYMM) o->scale = 1.f;
    if (rank) memcpy(o->dims, dims, sizeof(uint32_t) * rank);
    return m->n_operands++;
}

/* A model input of the operation. */
static void input(model *m, int32_t type, uint32_t rank, const uint32_t *dims) {
    uint32_t i = operand(m, type, rank, dims, SCHEMA_MODEL_INPUT);
    m->inputs[m->n_inputs++] = i;
    m->op_in[m->n_op_in++] = i;
}

static void output(model *m, int32_t type, uint32_t rank, const uint32_t *dims) {
    m->op_out[m->n_op_out++] = operand(m, type, rank, dims, SCHEMA_MODEL_OUTPUT);
}

/* A constant scalar operand of the operation (4 bytes: INT32, FLOAT32 or BOOL). */
static void scalar(model *m, int32_t type, const void *v) {
    uint32_t i = operand(m, type, 0, NULL, SCHEMA_CONSTANT_COPY);
    size_t n = type == SCHEMA_BOOL ? 1 : 4;
    memcpy(m->values + m->n_values, v, n);
    m->operands[i].offset = m->n_values;
    m->operands[i].length = n;
    m->n_values += 4;
    m->op_in[m->n_op_in++] = i;
}

static void i32(model *m, int32_t v) {
    scalar(m, SCHEMA_INT32, &v);
}

static void f32(model *m, float v) {
    scalar(m, SCHEMA_FLOAT32, &v);
}

static void boolean(model *m, bool v) {
    uint8_t b = v;
    scalar(m, SCHEMA_BOOL, &b);
}

/* Prepares m on one kernel set: the status, err the message. */
static schema_status prepare(model *m, bool reference, eng_prepared **p, char *err, size_t errlen) {
    if (reference)
        setenv("NND_REFERENCE_KERNELS", "1", 1);
    else
        unsetenv("NND_REFERENCE_KERNELS");
    eng_operation_desc op = {m->code, m->n_op_in, m->op_in, m->n_op_out, m->op_out};
    eng_model_desc d = {.n_operands = m->n_operands,
                        .operands = m->operands,
                        .n_operations = 1,
                        .operations = &op,
                        .n_inputs = m->n_inputs,
                        .inputs = m->inputs,
                        .n_outputs = m->n_op_out,
                        .outputs = m->op_out,
                        .operand_values = m->values,
                        .operand_values_len = m->n_values};
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
static schema_status run_guarded(model *m, bool reference, float fill) {
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p;
    schema_status s = prepare(m, reference, &p, err, sizeof err);
    if (s) fail_msg("prepare: %s", err);
    eng_io in[4] = {{0}}, out[4] = {{0}};
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
        model m = {.code = SCHEMA_OP_MAX_POOL_2D};
        const uint32_t in_dims[4] = {1, 5, 5, 3}, out_dims[4] = {1, 1, 1, 3};
        input(&m, SCHEMA_TENSOR_FLOAT32, 4, in_dims);
        i32(&m, SCHEMA_PADDING_VALID);
        i32(&m, 1), i32(&m, 1); /* strides */
        i32(&m, 5), i32(&m, 5); /* a 25-element window: more than one pass */
        i32(&m, SCHEMA_FUSED_NONE);
        output(&m, SCHEMA_TENSOR_FLOAT32, 4, out_dims);
        assert_int_equal(run_guarded(&m, reference, 1.f), SCHEMA_OK);
    }
}

/* Prepare must refuse m on both kernel sets with a message containing `why`. */
static void refused(model *m, const char *why) {
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
    model m = {.code = SCHEMA_OP_CONCATENATION};
    const uint32_t half[1] = {1u << 31}, any[1] = {0};
    input(&m, SCHEMA_TENSOR_QUANT8_ASYMM, 1, half);
    input(&m, SCHEMA_TENSOR_QUANT8_ASYMM, 1, half);
    i32(&m, 0);
    output(&m, SCHEMA_TENSOR_QUANT8_ASYMM, 1, any);
    refused(&m, "past 2^32");
}

static void nms_limit_classes_wrap(void **state) {
    (void)state;
    model m = {.code = SCHEMA_OP_BOX_WITH_NMS_LIMIT};
    const uint32_t scores[2] = {1, (1u << 30) + 1}, boxes[2] = {1, 4}, batch[1] = {1},
                   any1[1] = {0}, any2[2] = {0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, scores);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, boxes);
    input(&m, SCHEMA_TENSOR_INT32, 1, batch);
    f32(&m, 0.f), i32(&m, -1), i32(&m, 0), f32(&m, 0.5f), f32(&m, 1.f), f32(&m, 0.f);
    output(&m, SCHEMA_TENSOR_FLOAT32, 1, any1);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any2);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    refused(&m, "input 1 must be");
}

static void nms_limit_candidates_wrap(void **state) {
    (void)state;
    model m = {.code = SCHEMA_OP_BOX_WITH_NMS_LIMIT};
    const uint32_t classes = (1u << 30) - 1, scores[2] = {8, classes}, boxes[2] = {8, classes * 4},
                   batch[1] = {8}, any1[1] = {0}, any2[2] = {0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, scores);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, boxes);
    input(&m, SCHEMA_TENSOR_INT32, 1, batch);
    f32(&m, 0.f), i32(&m, -1), i32(&m, 0), f32(&m, 0.5f), f32(&m, 1.f), f32(&m, 0.f);
    output(&m, SCHEMA_TENSOR_FLOAT32, 1, any1);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any2);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    refused(&m, "past 2^32 candidates");
}

static void postprocessing_candidates_wrap(void **state) {
    (void)state;
    model m = {.code = SCHEMA_OP_DETECTION_POSTPROCESSING};
    const uint32_t scores[3] = {1, 1u << 16, (1u << 16) + 1}, deltas[3] = {1, 1u << 16, 4},
                   anchors[2] = {1u << 16, 4}, any1[1] = {0}, any2[2] = {0, 0}, any3[3] = {0, 0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 3, scores);
    input(&m, SCHEMA_TENSOR_FLOAT32, 3, deltas);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, anchors);
    f32(&m, 10.f), f32(&m, 10.f), f32(&m, 5.f), f32(&m, 5.f);
    boolean(&m, true);
    i32(&m, 10), i32(&m, 1), i32(&m, 10);
    f32(&m, 0.f), f32(&m, 0.5f);
    boolean(&m, false);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any2);
    output(&m, SCHEMA_TENSOR_FLOAT32, 3, any3);
    output(&m, SCHEMA_TENSOR_INT32, 2, any2);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    refused(&m, "past 2^32 candidates");
}

static void proposals_anchors_wrap(void **state) {
    (void)state;
    model m = {.code = SCHEMA_OP_GENERATE_PROPOSALS};
    const uint32_t scores[4] = {1, 1, 1, (1u << 30) + 1}, deltas[4] = {1, 1, 1, 4},
                   anchors[2] = {(1u << 30) + 1, 4}, info[2] = {1, 2}, any1[1] = {0},
                   any2[2] = {0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 4, scores);
    input(&m, SCHEMA_TENSOR_FLOAT32, 4, deltas);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, anchors);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, info);
    f32(&m, 1.f), f32(&m, 1.f), i32(&m, -1), i32(&m, -1), f32(&m, 0.5f), f32(&m, 0.f);
    boolean(&m, false);
    output(&m, SCHEMA_TENSOR_FLOAT32, 1, any1);
    output(&m, SCHEMA_TENSOR_FLOAT32, 2, any2);
    output(&m, SCHEMA_TENSOR_INT32, 1, any1);
    refused(&m, "input 1 must match input 0");
}

static void lsh_dense_outputs_wrap(void **state) {
    (void)state;
    model m = {.code = SCHEMA_OP_LSH_PROJECTION};
    const uint32_t hash[2] = {1u << 27, 32}, x[2] = {1, 1}, any[1] = {0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, hash);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, x);
    m.op_in[m.n_op_in++] =
        operand(&m, SCHEMA_TENSOR_FLOAT32, 0, NULL, SCHEMA_NO_VALUE); /* weight */
    i32(&m, 2);                                                       /* dense */
    output(&m, SCHEMA_TENSOR_INT32, 1, any);
    refused(&m, "past 2^32");
}

static void svdf_state_wrap(void **state) {
    (void)state;
    model m = {.code = SCHEMA_OP_SVDF};
    const uint32_t x[2] = {1, 1}, feature[2] = {1u << 16, 1}, time[2] = {1u << 16, 1u << 16},
                   st[2] = {1, 1}, any[2] = {0, 0};
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, x);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, feature);
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, time);
    m.op_in[m.n_op_in++] = operand(&m, SCHEMA_TENSOR_FLOAT32, 0, NULL, SCHEMA_NO_VALUE); /* bias */
    input(&m, SCHEMA_TENSOR_FLOAT32, 2, st);
    i32(&m, 1), i32(&m, SCHEMA_FUSED_NONE);
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

/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_timing: which call of the NNAPI layer judges which operation rule, as the newer
 * Android runtime does (docs/nnapi-rules.md), against a real daemon.
 * - ANeuralNetworksModel_addOperation refuses with BAD_DATA what the runtime's operation
 *   rules refuse there: operand types an operation does not take, operand counts, ranks,
 *   and IF and WHILE that do not match the models they reference.
 * - It accepts what only a driver judges (quantization relations, the ranks of index
 *   tensors): such a model finishes and compiles, and its computation fails.
 * - An IF whose condition is omitted finishes, and fails later. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tests/ndk/ndk_fixture.h"

#define F32  ANEURALNETWORKS_TENSOR_FLOAT32
#define I32T ANEURALNETWORKS_TENSOR_INT32
#define Q8   ANEURALNETWORKS_TENSOR_QUANT8_ASYMM
#define Q16A ANEURALNETWORKS_TENSOR_QUANT16_ASYMM
#define B8   ANEURALNETWORKS_TENSOR_BOOL8
#define PC   ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL
#define I32  ANEURALNETWORKS_INT32
#define F32S ANEURALNETWORKS_FLOAT32

/* An operand: type, shape (rank 0: a scalar) and, for quantized types, scale and zero
 * point (scale 0: 0.5 for QUANT8_ASYMM, else none). */
typedef struct spec {
    int32_t type;
    uint32_t rank;
    uint32_t dims[5];
    float scale;
    int32_t zero_point;
} spec;

typedef struct row {
    const char *what;
    int32_t op;
    uint32_t n_in, n_out;
    spec in[8], out[2];
    int want; /* addOperation */
} row;

// clang-format off
#define TS(t, r, ...)       {t, r, {__VA_ARGS__}, 0.f, 0}
#define QS(t, s, z, r, ...) {t, r, {__VA_ARGS__}, s, z}
#define SCALAR(t)           {t, 0, {0}, 0.f, 0}
// clang-format on
#define CONV_SCALARS SCALAR(I32), SCALAR(I32), SCALAR(I32), SCALAR(I32)

/* Refused at addOperation, as the runtime's operation rules (Validation.cpp,
 * validateOperationButNotOperands, and each operation's validate()) refuse them. */
static const row k_refused[] = {
    {"EXP of TENSOR_INT32",
     ANEURALNETWORKS_EXP,
     1,
     1,
     {TS(I32T, 1, 2)},
     {TS(I32T, 1, 2)},
     BAD_DATA},
    {"RSQRT of TENSOR_INT32",
     ANEURALNETWORKS_RSQRT,
     1,
     1,
     {TS(I32T, 1, 2)},
     {TS(I32T, 1, 2)},
     BAD_DATA},
    {"ARGMAX of TENSOR_BOOL8",
     ANEURALNETWORKS_ARGMAX,
     2,
     1,
     {TS(B8, 2, 2, 2), SCALAR(I32)},
     {TS(I32T, 1, 2)},
     BAD_DATA},
    {"LESS of per-channel tensors",
     ANEURALNETWORKS_LESS,
     2,
     1,
     {TS(PC, 1, 2), TS(PC, 1, 2)},
     {TS(B8, 1, 2)},
     BAD_DATA},
    {"RESHAPE of rank 5",
     ANEURALNETWORKS_RESHAPE,
     2,
     1,
     {TS(F32, 5, 1, 1, 1, 1, 2), TS(I32T, 1, 1)},
     {TS(F32, 1, 2)},
     BAD_DATA},
    {"DEQUANTIZE of rank 5",
     ANEURALNETWORKS_DEQUANTIZE,
     1,
     1,
     {TS(Q8, 5, 1, 1, 1, 1, 2)},
     {TS(F32, 5, 1, 1, 1, 1, 2)},
     BAD_DATA},
    {"PACK without tensors",
     ANEURALNETWORKS_PACK,
     1,
     1,
     {SCALAR(I32)},
     {TS(F32, 2, 1, 2)},
     BAD_DATA},
    {"PACK with two outputs",
     ANEURALNETWORKS_PACK,
     2,
     2,
     {SCALAR(I32), TS(F32, 1, 2)},
     {TS(F32, 2, 1, 2), TS(F32, 2, 1, 2)},
     BAD_DATA},
    {"DIV of TENSOR_QUANT8_ASYMM",
     ANEURALNETWORKS_DIV,
     3,
     1,
     {TS(Q8, 1, 2), TS(Q8, 1, 2), SCALAR(I32)},
     {TS(Q8, 1, 2)},
     BAD_DATA},
    {"REVERSE to another rank",
     ANEURALNETWORKS_REVERSE,
     2,
     1,
     {TS(F32, 2, 2, 3), TS(I32T, 1, 1)},
     {TS(F32, 3, 2, 3, 1)},
     BAD_DATA},
    /* The same operations as they should be. */
    {"EXP of TENSOR_FLOAT32", ANEURALNETWORKS_EXP, 1, 1, {TS(F32, 1, 2)}, {TS(F32, 1, 2)}, OK},
    {"RESHAPE of rank 4",
     ANEURALNETWORKS_RESHAPE,
     2,
     1,
     {TS(F32, 4, 1, 1, 1, 2), TS(I32T, 1, 1)},
     {TS(F32, 1, 2)},
     OK},
    {"PACK of one tensor",
     ANEURALNETWORKS_PACK,
     2,
     1,
     {SCALAR(I32), TS(F32, 1, 2)},
     {TS(F32, 2, 1, 2)},
     OK},
};

/* Accepted at addOperation: the runtime leaves these to the driver (each operation's
 * prepare()), which refuses them as the model is prepared or run. */
static const row k_deferred[] = {
    {"CONV_2D, bias scale not input scale x filter scale",
     ANEURALNETWORKS_CONV_2D,
     7,
     1,
     {QS(Q8, 0.5f, 0, 4, 1, 3, 3, 1), QS(Q8, 0.5f, 0, 4, 1, 1, 1, 1), QS(I32T, 0.3f, 0, 1, 1),
      CONV_SCALARS},
     {QS(Q8, 1.f, 0, 4, 1, 3, 3, 1)},
     OK},
    {"FULLY_CONNECTED, bias scale not input scale x weights scale",
     ANEURALNETWORKS_FULLY_CONNECTED,
     4,
     1,
     {QS(Q8, 0.5f, 0, 2, 1, 2), QS(Q8, 0.5f, 0, 2, 1, 2), QS(I32T, 0.3f, 0, 1, 1), SCALAR(I32)},
     {QS(Q8, 1.f, 0, 2, 1, 1)},
     OK},
    {"SOFTMAX, output scale not 1/256",
     ANEURALNETWORKS_SOFTMAX,
     2,
     1,
     {QS(Q8, 0.5f, 0, 2, 1, 2), SCALAR(F32S)},
     {QS(Q8, 0.5f, 0, 2, 1, 2)},
     OK},
    {"TANH, output zero point not 128",
     ANEURALNETWORKS_TANH,
     1,
     1,
     {QS(Q8, 0.5f, 0, 1, 2)},
     {QS(Q8, 1.f / 128, 0, 1, 2)},
     OK},
    {"LOGISTIC, output scale not 1/256",
     ANEURALNETWORKS_LOGISTIC,
     1,
     1,
     {QS(Q8, 0.5f, 0, 1, 2)},
     {QS(Q8, 0.5f, 0, 1, 2)},
     OK},
    {"L2_NORMALIZATION, output scale not 1/128",
     ANEURALNETWORKS_L2_NORMALIZATION,
     1,
     1,
     {QS(Q8, 0.5f, 0, 2, 1, 2)},
     {QS(Q8, 0.5f, 128, 2, 1, 2)},
     OK},
    {"AXIS_ALIGNED_BBOX_TRANSFORM, boxes of scale 0.25",
     ANEURALNETWORKS_AXIS_ALIGNED_BBOX_TRANSFORM,
     4,
     1,
     {QS(Q16A, 0.25f, 0, 2, 1, 4), QS(Q8, 0.5f, 128, 2, 1, 4), TS(I32T, 1, 1),
      QS(Q16A, 0.125f, 0, 2, 1, 2)},
     {QS(Q16A, 0.125f, 0, 2, 1, 4)},
     OK},
    {"PAD, paddings of rank 1",
     ANEURALNETWORKS_PAD,
     2,
     1,
     {TS(F32, 2, 1, 2), TS(I32T, 1, 4)},
     {TS(F32, 2, 1, 2)},
     OK},
};

static ANeuralNetworksOperandType type_of(const spec *s) {
    float scale = s->scale != 0.f ? s->scale : s->type == Q8 ? 0.5f : 0.f;
    return (ANeuralNetworksOperandType){.type = s->type,
                                        .dimensionCount = s->rank,
                                        .dimensions = s->rank ? s->dims : NULL,
                                        .scale = scale,
                                        .zeroPoint = s->zero_point};
}

/* A model of the row's one operation, operands numbered inputs first, then outputs. */
static int add_row(ANeuralNetworksModel *m, const row *r) {
    uint32_t n = r->n_in + r->n_out, idx[10];
    for (uint32_t i = 0; i < n; i++) {
        ANeuralNetworksOperandType t = type_of(i < r->n_in ? &r->in[i] : &r->out[i - r->n_in]);
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
        idx[i] = i;
    }
    return ANeuralNetworksModel_addOperation(m, r->op, r->n_in, idx, r->n_out, idx + r->n_in);
}

static void judge_rows(const row *rows, size_t n) {
    for (size_t k = 0; k < n; k++) {
        ANeuralNetworksModel *m;
        assert_int_equal(ANeuralNetworksModel_create(&m), OK);
        int rc = add_row(m, &rows[k]);
        if (rc != rows[k].want)
            fail_msg("%s: addOperation gave %d, wanted %d", rows[k].what, rc, rows[k].want);
        ANeuralNetworksModel_free(m);
    }
}

static void test_refused_at_add_operation(void **state) {
    (void)state;
    judge_rows(k_refused, sizeof k_refused / sizeof *k_refused);
}

static void test_driver_rules_accepted_at_add_operation(void **state) {
    (void)state;
    judge_rows(k_deferred, sizeof k_deferred / sizeof *k_deferred);
}

/* The deferred rows' CONV_2D, FULLY_CONNECTED and SOFTMAX as they should be: they run. */
static const row k_deferred_fixed[] = {
    {"CONV_2D",
     ANEURALNETWORKS_CONV_2D,
     7,
     1,
     {QS(Q8, 0.5f, 0, 4, 1, 3, 3, 1), QS(Q8, 0.5f, 0, 4, 1, 1, 1, 1), QS(I32T, 0.25f, 0, 1, 1),
      CONV_SCALARS},
     {QS(Q8, 1.f, 0, 4, 1, 3, 3, 1)},
     OK},
    {"FULLY_CONNECTED",
     ANEURALNETWORKS_FULLY_CONNECTED,
     4,
     1,
     {QS(Q8, 0.5f, 0, 2, 1, 2), QS(Q8, 0.5f, 0, 2, 1, 2), QS(I32T, 0.25f, 0, 1, 1), SCALAR(I32)},
     {QS(Q8, 1.f, 0, 2, 1, 1)},
     OK},
    {"SOFTMAX",
     ANEURALNETWORKS_SOFTMAX,
     2,
     1,
     {QS(Q8, 0.5f, 0, 2, 1, 2), SCALAR(F32S)},
     {QS(Q8, 1.f / 256, 0, 2, 1, 2)},
     OK},
};

/* A deferred row as a whole model: tensors are model inputs, scalars constants (INT32 1:
 * SAME padding, unit strides, RELU; FLOAT32 1), outputs model outputs. Finished. */
static ANeuralNetworksModel *row_model(const row *r) {
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(add_row(m, r), OK);
    uint32_t ins[8], n_ins = 0, outs[2];
    for (uint32_t i = 0; i < r->n_in; i++) {
        if (r->in[i].rank) {
            ins[n_ins++] = i;
            continue;
        }
        int32_t one_i = 1;
        float one_f = 1.f;
        const void *v = r->in[i].type == F32S ? (const void *)&one_f : (const void *)&one_i;
        assert_int_equal(ANeuralNetworksModel_setOperandValue(m, (int32_t)i, v, 4), OK);
    }
    for (uint32_t o = 0; o < r->n_out; o++)
        outs[o] = r->n_in + o;
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, n_ins, ins, r->n_out, outs),
                     OK);
    int rc = ANeuralNetworksModel_finish(m);
    if (rc != OK) fail_msg("%s: finish gave %d", r->what, rc);
    return m;
}

static size_t spec_bytes(const spec *s) {
    size_t n = s->type == Q8 ? 1 : s->type == Q16A ? 2 : 4;
    for (uint32_t d = 0; d < s->rank; d++)
        n *= s->dims[d];
    return n;
}

/* Compiles the row's model and runs it on zeros: the computation's result code; compiled
 * for the one device, *device_rc gets the compilation's. */
static int run_row(const row *r, int *device_rc) {
    ANeuralNetworksModel *m = row_model(r);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    uint8_t in[8][64] = {{0}}, out[2][64];
    for (uint32_t i = 0, j = 0; i < r->n_in; i++)
        if (r->in[i].rank)
            assert_int_equal(ANeuralNetworksExecution_setInput(e, (int32_t)j++, NULL, in[i],
                                                               spec_bytes(&r->in[i])),
                             OK);
    for (uint32_t o = 0; o < r->n_out; o++)
        assert_int_equal(
            ANeuralNetworksExecution_setOutput(e, (int32_t)o, NULL, out[o], spec_bytes(&r->out[o])),
            OK);
    int rc = ANeuralNetworksExecution_compute(e);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    const ANeuralNetworksDevice *devs[] = {device()};
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c), OK);
    *device_rc = ANeuralNetworksCompilation_finish(c);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    return rc;
}

/* Each deferred row finishes and compiles (the runtime's CPU path fails it as it runs),
 * and its computation fails with OP_FAILED; compiled for the one device, its compilation
 * fails instead. The same operations with the relations kept run. */
static void test_driver_rules_refused_later(void **state) {
    (void)state;
    int device_rc;
    for (size_t k = 0; k < sizeof k_deferred / sizeof *k_deferred; k++) {
        int rc = run_row(&k_deferred[k], &device_rc);
        if (rc != ANEURALNETWORKS_OP_FAILED)
            fail_msg("%s: compute gave %d", k_deferred[k].what, rc);
        if (device_rc == OK) fail_msg("%s: compiled for the device", k_deferred[k].what);
    }
    for (size_t k = 0; k < sizeof k_deferred_fixed / sizeof *k_deferred_fixed; k++) {
        int rc = run_row(&k_deferred_fixed[k], &device_rc);
        if (rc != OK || device_rc != OK)
            fail_msg("%s: compute gave %d, compilation for the device %d", k_deferred_fixed[k].what,
                     rc, device_rc);
    }
}

/* ---- IF and WHILE ------------------------------------------------------------------------ */

static const uint32_t k_two[] = {2}, k_one[] = {1};

/* out = CAST(in) on float32 [2], finished: a branch, or a loop body taking n_in inputs
 * (the first cast, the rest unused). */
static ANeuralNetworksModel *cast_model(uint32_t n_in) {
    ANeuralNetworksModel *m;
    ANeuralNetworksOperandType t = tensor(k_two);
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    uint32_t ins[4];
    for (uint32_t i = 0; i < n_in; i++) {
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
        ins[i] = i;
    }
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    const uint32_t outs[] = {n_in};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_CAST, 1, ins, 1, outs),
                     OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, n_in, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    return m;
}

/* cond = a < b on float32 [2] into BOOL8 [1]... as a WHILE condition of two inputs. */
static ANeuralNetworksModel *less_model(void) {
    ANeuralNetworksModel *m;
    ANeuralNetworksOperandType t = tensor(k_two);
    ANeuralNetworksOperandType b = {.type = B8, .dimensionCount = 1, .dimensions = k_one};
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &b), OK);
    const uint32_t ins[] = {0, 1}, outs[] = {2};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_LESS, 2, ins, 1, outs),
                     OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    return m;
}

typedef struct flow_row {
    const char *what;
    int32_t op;
    int32_t cond_type; /* IF's condition */
    uint32_t n_data_in, n_out;
    int32_t out_type;
    int want;
} flow_row;

/* IF (condition, then, else, data...) or WHILE (condition model, body, data...) with the
 * row's operand counts and types, the subgraphs set before the operation is added. */
static int add_flow(ANeuralNetworksModel *m, const flow_row *r, const ANeuralNetworksModel *g1,
                    const ANeuralNetworksModel *g2, bool omit_condition) {
    ANeuralNetworksOperandType t = tensor(k_two), model = {.type = ANEURALNETWORKS_MODEL};
    ANeuralNetworksOperandType cond = {
        .type = r->cond_type, .dimensionCount = 1, .dimensions = k_one};
    ANeuralNetworksOperandType out = {
        .type = r->out_type, .dimensionCount = 1, .dimensions = k_two};
    uint32_t ins[8], n = 0, outs[3]; /* up to WHILE's three outputs of k_flow */
    bool is_if = r->op == ANEURALNETWORKS_IF;
    if (is_if) {
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &cond), OK);
        if (omit_condition)
            assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 0, NULL, 0), OK);
        ins[n++] = 0;
    }
    const ANeuralNetworksModel *g[] = {g1, g2};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &model), OK);
        assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, (int32_t)n, g[k]), OK);
        ins[n] = n;
        n++;
    }
    for (uint32_t i = 0; i < r->n_data_in; i++, n++) {
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
        ins[n] = n;
    }
    for (uint32_t o = 0; o < r->n_out; o++) {
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &out), OK);
        outs[o] = n + o;
    }
    return ANeuralNetworksModel_addOperation(m, r->op, n, ins, r->n_out, outs);
}

/* IF with then = else = CAST of one input; WHILE with condition LESS of two inputs and a
 * body of two inputs giving one output. */
static const flow_row k_flow[] = {
    {"IF", ANEURALNETWORKS_IF, B8, 1, 1, F32, OK},
    {"IF, a float condition", ANEURALNETWORKS_IF, F32, 1, 1, F32, BAD_DATA},
    {"IF, one input too many", ANEURALNETWORKS_IF, B8, 2, 1, F32, BAD_DATA},
    {"IF, an integer output", ANEURALNETWORKS_IF, B8, 1, 1, I32T, BAD_DATA},
    {"IF, two outputs", ANEURALNETWORKS_IF, B8, 1, 2, F32, BAD_DATA},
    {"WHILE", ANEURALNETWORKS_WHILE, 0, 2, 1, F32, OK},
    {"WHILE, one input too few", ANEURALNETWORKS_WHILE, 0, 1, 1, F32, BAD_DATA},
    {"WHILE, an integer output", ANEURALNETWORKS_WHILE, 0, 2, 1, I32T, BAD_DATA},
    {"WHILE, three outputs", ANEURALNETWORKS_WHILE, 0, 2, 3, F32, BAD_DATA},
};

static void test_flow_at_add_operation(void **state) {
    (void)state;
    ANeuralNetworksModel *branch = cast_model(1), *cond = less_model(), *body = cast_model(2);
    for (size_t k = 0; k < sizeof k_flow / sizeof *k_flow; k++) {
        const flow_row *r = &k_flow[k];
        ANeuralNetworksModel *m;
        assert_int_equal(ANeuralNetworksModel_create(&m), OK);
        bool is_if = r->op == ANEURALNETWORKS_IF;
        int rc = add_flow(m, r, is_if ? branch : cond, is_if ? branch : body, false);
        if (rc != r->want) fail_msg("%s: addOperation gave %d, wanted %d", r->what, rc, r->want);
        ANeuralNetworksModel_free(m);
    }
    ANeuralNetworksModel_free(branch);
    ANeuralNetworksModel_free(cond);
    ANeuralNetworksModel_free(body);
}

/* An IF whose condition is omitted (NO_VALUE) is added and finishes; it fails as it is
 * compiled or run, never later than that. */
static void test_if_without_condition(void **state) {
    (void)state;
    ANeuralNetworksModel *branch = cast_model(1), *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(add_flow(m, &k_flow[0], branch, branch, true), OK);
    const uint32_t ins[] = {3}, outs[] = {4};
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    ANeuralNetworksCompilation *c;
    assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    if (ANeuralNetworksCompilation_finish(c) == OK) {
        float x[2] = {1, 2}, y[2];
        ANeuralNetworksExecution *e;
        assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
        assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, x, sizeof x), OK);
        assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, y, sizeof y), OK);
        assert_int_equal(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_OP_FAILED);
        ANeuralNetworksExecution_free(e);
    }
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    ANeuralNetworksModel_free(branch);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_at_add_operation),
        cmocka_unit_test(test_driver_rules_accepted_at_add_operation),
        cmocka_unit_test(test_driver_rules_refused_later),
        cmocka_unit_test(test_flow_at_add_operation),
        cmocka_unit_test(test_if_without_condition),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

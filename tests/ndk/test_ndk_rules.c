/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_rules: two tables of what the NNAPI layer answers, as the Android runtime does,
 * against a real daemon.
 * - Signatures: ANeuralNetworksModel_addOperation judges each operation by the engine's own
 *   rules (operand counts, types, ranks) and refuses a bad one at once with BAD_DATA.
 * - Dimensions: a model whose declared shapes conflict only as it runs compiles, and its
 *   computation fails with OP_FAILED; so does a shape conflict found at execution, and an
 *   output whose computed shape contradicts a dimension it was declared with. */
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
#define I32  ANEURALNETWORKS_INT32
#define F32S ANEURALNETWORKS_FLOAT32

/* An operand: type and shape (rank 0: a scalar, or a tensor of unknown rank). */
#define S(t)                                                                                       \
    {                                                                                              \
        t, 0, {                                                                                    \
            0                                                                                      \
        }                                                                                          \
    } /* a scalar, or a tensor of unknown rank; S(0): none */
typedef struct spec {
    int32_t type;
    uint32_t rank;
    uint32_t dims[5];
} spec;

/* ---- signatures at addOperation ----------------------------------------------------------- */

typedef struct sig_row {
    const char *what;
    int32_t op;
    uint32_t n_in, n_out;
    spec in[8], out[2];
    int want;
} sig_row;

static const sig_row k_signatures[] = {
    {"ADD, float",
     ANEURALNETWORKS_ADD,
     3,
     1,
     {{F32, 1, {2}}, {F32, 1, {2}}, S(I32)},
     {{F32, 1, {2}}},
     OK},
    {"ADD, quantized",
     ANEURALNETWORKS_ADD,
     3,
     1,
     {{Q8, 1, {2}}, {Q8, 1, {2}}, S(I32)},
     {{Q8, 1, {2}}},
     OK},
    {"ADD, broadcast ranks",
     ANEURALNETWORKS_ADD,
     3,
     1,
     {{F32, 2, {3, 2}}, {F32, 1, {2}}, S(I32)},
     {{F32, 2, {3, 2}}},
     OK},
    {"ADD, two inputs",
     ANEURALNETWORKS_ADD,
     2,
     1,
     {{F32, 1, {2}}, {F32, 1, {2}}},
     {{F32, 1, {2}}},
     BAD_DATA},
    {"ADD, two outputs",
     ANEURALNETWORKS_ADD,
     3,
     2,
     {{F32, 1, {2}}, {F32, 1, {2}}, S(I32)},
     {{F32, 1, {2}}, {F32, 1, {2}}},
     BAD_DATA},
    {"ADD, inputs of two types",
     ANEURALNETWORKS_ADD,
     3,
     1,
     {{F32, 1, {2}}, {I32T, 1, {2}}, S(I32)},
     {{F32, 1, {2}}},
     BAD_DATA},
    {"ADD, a float activation",
     ANEURALNETWORKS_ADD,
     3,
     1,
     {{F32, 1, {2}}, {F32, 1, {2}}, S(F32S)},
     {{F32, 1, {2}}},
     BAD_DATA},
    {"ADD, output of another type",
     ANEURALNETWORKS_ADD,
     3,
     1,
     {{F32, 1, {2}}, {F32, 1, {2}}, S(I32)},
     {{I32T, 1, {2}}},
     BAD_DATA},
    {"ADD, rank 5",
     ANEURALNETWORKS_ADD,
     3,
     1,
     {{F32, 5, {1, 1, 1, 1, 2}}, {F32, 1, {2}}, S(I32)},
     {{F32, 5, {1, 1, 1, 1, 2}}},
     BAD_DATA},
    {"FULLY_CONNECTED",
     ANEURALNETWORKS_FULLY_CONNECTED,
     4,
     1,
     {{F32, 2, {2, 3}}, {F32, 2, {4, 3}}, {F32, 1, {4}}, S(I32)},
     {{F32, 2, {2, 4}}},
     OK},
    {"FULLY_CONNECTED, weights a scalar",
     ANEURALNETWORKS_FULLY_CONNECTED,
     4,
     1,
     {{F32, 2, {2, 3}}, S(F32S), {F32, 1, {4}}, S(I32)},
     {{F32, 2, {2, 4}}},
     BAD_DATA},
    {"SOFTMAX", ANEURALNETWORKS_SOFTMAX, 2, 1, {{F32, 2, {2, 3}}, S(F32S)}, {{F32, 2, {2, 3}}}, OK},
    {"SOFTMAX, an integer beta",
     ANEURALNETWORKS_SOFTMAX,
     2,
     1,
     {{F32, 2, {2, 3}}, S(I32)},
     {{F32, 2, {2, 3}}},
     BAD_DATA},
    {"CONV_2D, six inputs",
     ANEURALNETWORKS_CONV_2D,
     6,
     1,
     {{F32, 4, {1, 3, 3, 1}}, {F32, 4, {1, 1, 1, 1}}, {F32, 1, {1}}, S(I32), S(I32), S(I32)},
     {{F32, 4, {1, 3, 3, 1}}},
     BAD_DATA},
    {"CONV_2D, implicit padding",
     ANEURALNETWORKS_CONV_2D,
     7,
     1,
     {{F32, 4, {1, 3, 3, 1}},
      {F32, 4, {1, 1, 1, 1}},
      {F32, 1, {1}},
      S(I32),
      S(I32),
      S(I32),
      S(I32)},
     {{F32, 4, {1, 3, 3, 1}}},
     OK},
    {"RESHAPE, a float shape",
     ANEURALNETWORKS_RESHAPE,
     2,
     1,
     {{F32, 2, {2, 3}}, {F32, 1, {1}}},
     {{F32, 1, {6}}},
     BAD_DATA},
    {"RESHAPE",
     ANEURALNETWORKS_RESHAPE,
     2,
     1,
     {{F32, 2, {2, 3}}, {I32T, 1, {1}}},
     {{F32, 1, {6}}},
     OK},
    /* Unknown shapes are judged as far as they are known. */
    {"ADD, unknown ranks", ANEURALNETWORKS_ADD, 3, 1, {S(F32), S(F32), S(I32)}, {S(F32)}, OK},
    /* Not the engine's to judge: passed on, judged by the daemon when it matters. */
    {"OEM_OPERATION (10000)", 10000, 1, 1, {{F32, 1, {2}}}, {{F32, 1, {2}}}, OK},
};

/* The model of a row: its operands in order, inputs then outputs. */
static int add_row(ANeuralNetworksModel *m, const sig_row *r) {
    const spec *all[10];
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_in; i++)
        all[n++] = &r->in[i];
    for (uint32_t i = 0; i < r->n_out; i++)
        all[n++] = &r->out[i];
    for (uint32_t i = 0; i < n; i++) {
        ANeuralNetworksOperandType t = {.type = all[i]->type,
                                        .dimensionCount = all[i]->rank,
                                        .dimensions = all[i]->rank ? all[i]->dims : NULL,
                                        .scale = all[i]->type == Q8 ? 0.5f : 0.f};
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    }
    uint32_t idx[10];
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    return ANeuralNetworksModel_addOperation(m, r->op, r->n_in, idx, r->n_out, idx + r->n_in);
}

static void test_signatures(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof k_signatures / sizeof k_signatures[0]; k++) {
        const sig_row *r = &k_signatures[k];
        ANeuralNetworksModel *m;
        assert_int_equal(ANeuralNetworksModel_create(&m), OK);
        int rc = add_row(m, r);
        if (rc != r->want) fail_msg("%s: addOperation gave %d, wanted %d", r->what, rc, r->want);
        ANeuralNetworksModel_free(m);
    }
}

/* ---- dimensions ---------------------------------------------------------------------------- */

/* out = a + b, a a model input, b a constant of [2, 1] or [2, 2] floats. */
typedef struct dim_row {
    const char *what;
    spec a, b, out;
    bool for_device;     /* compiled for the one device: no fallback, as in the runtime */
    int want_compile;    /* ANeuralNetworksCompilation_finish */
    spec a_run, out_run; /* the execution's types; type 0: none given */
    int want_compute;
    uint32_t out_rank, out_dims[2]; /* after NO_ERROR */
} dim_row;

static const dim_row k_dimensions[] = {
    {.what = "shapes that agree",
     .a = {F32, 2, {2, 2}},
     .b = {F32, 2, {2, 1}},
     .out = {F32, 2, {2, 2}},
     .want_compute = OK,
     .out_rank = 2,
     .out_dims = {2, 2}},
    {.what = "a static conflict compiles and fails as it runs",
     .a = {F32, 2, {3, 2}},
     .b = {F32, 2, {2, 1}},
     .out = {F32, 2, {3, 2}},
     .want_compute = ANEURALNETWORKS_OP_FAILED},
    {.what = "the same for one device: no fallback compiles it",
     .a = {F32, 2, {3, 2}},
     .b = {F32, 2, {2, 1}},
     .out = {F32, 2, {3, 2}},
     .for_device = true,
     .want_compile = BAD_DATA},
    {.what = "a conflict found at execution",
     .a = {F32, 2, {0, 2}},
     .b = {F32, 2, {2, 1}},
     .out = {F32, 2, {0, 2}},
     .a_run = {F32, 2, {3, 2}},
     .want_compute = ANEURALNETWORKS_OP_FAILED},
    {.what = "unknown dimensions filled at execution",
     .a = {F32, 2, {0, 2}},
     .b = {F32, 2, {2, 1}},
     .out = {F32, 2, {0, 2}},
     .a_run = {F32, 2, {2, 2}},
     .want_compute = OK,
     .out_rank = 2,
     .out_dims = {2, 2}},
    {.what = "an output that contradicts its declared dimensions",
     .a = {F32, 2, {2, 2}},
     .b = {F32, 2, {2, 2}},
     .out = {F32, 2, {0, 3}},
     .want_compute = ANEURALNETWORKS_OP_FAILED},
    {.what = "an output that contradicts the execution's dimensions",
     .a = {F32, 2, {0, 2}},
     .b = {F32, 2, {2, 1}},
     .out = {F32, 2, {0, 0}},
     .a_run = {F32, 2, {2, 2}},
     .out_run = {F32, 2, {0, 3}},
     .want_compute = ANEURALNETWORKS_OP_FAILED},
    {.what = "an output of unknown rank",
     .a = {F32, 2, {2, 2}},
     .b = {F32, 2, {2, 1}},
     .out = S(F32),
     .want_compute = OK,
     .out_rank = 2,
     .out_dims = {2, 2}},
};

static ANeuralNetworksOperandType type_of(const spec *s) {
    return (ANeuralNetworksOperandType){
        .type = s->type, .dimensionCount = s->rank, .dimensions = s->rank ? s->dims : NULL};
}

/* The output buffer: what the declared shape holds when it is known, else room for any. */
static size_t y_bytes(const dim_row *r) {
    const spec *o = r->out_run.type ? &r->out_run : &r->out;
    size_t n = o->rank ? 1 : 6;
    for (uint32_t k = 0; k < o->rank; k++)
        n = o->dims[k] && n ? n * o->dims[k] : 0;
    return (n ? n : 6) * sizeof(float);
}

static void run_dim_row(const dim_row *r) {
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType a = type_of(&r->a), b = type_of(&r->b), out = type_of(&r->out);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &a), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &b), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &out), OK);
    const float b_value[4] = {10, 20, 30, 40};
    int32_t act = 0;
    size_t b_bytes = (size_t)r->b.dims[0] * r->b.dims[1] * sizeof(float);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, b_value, b_bytes), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    const uint32_t in[] = {0, 1, 2}, outs[] = {3}, ins[] = {0};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    ANeuralNetworksCompilation *c;
    const ANeuralNetworksDevice *devs[] = {device()};
    if (r->for_device)
        assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c), OK);
    else
        assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    int rc = ANeuralNetworksCompilation_finish(c);
    if (rc != r->want_compile)
        fail_msg("%s: compilation gave %d, wanted %d", r->what, rc, r->want_compile);
    if (rc == OK) {
        const spec *as = r->a_run.type ? &r->a_run : &r->a;
        ANeuralNetworksOperandType at = type_of(as), ot = type_of(&r->out_run);
        float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
        size_t x_bytes = (size_t)as->dims[0] * as->dims[1] * sizeof(float);
        ANeuralNetworksExecution *e;
        assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
        if (ANeuralNetworksExecution_setInput(e, 0, r->a_run.type ? &at : NULL, x, x_bytes) ||
            ANeuralNetworksExecution_setOutput(e, 0, r->out_run.type ? &ot : NULL, y, y_bytes(r)))
            fail_msg("%s: an argument was refused", r->what);
        rc = ANeuralNetworksExecution_compute(e);
        if (rc != r->want_compute)
            fail_msg("%s: compute gave %d, wanted %d", r->what, rc, r->want_compute);
        uint32_t rank = 0, dims[2] = {0};
        if (rc == OK) {
            assert_int_equal(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank), OK);
            assert_int_equal(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, dims), OK);
            assert_int_equal(rank, r->out_rank);
            assert_memory_equal(dims, r->out_dims, sizeof dims);
            assert_true(y[0] == x[0] + b_value[0]); /* b broadcasts or matches either way */
        } else {
            assert_int_equal(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank), BAD_STATE);
        }
        ANeuralNetworksExecution_free(e);
    }
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

static void test_dimensions(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof k_dimensions / sizeof k_dimensions[0]; k++)
        run_dim_row(&k_dimensions[k]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signatures),
        cmocka_unit_test(test_dimensions),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

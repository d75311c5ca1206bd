/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_model (integration): the NNAPI NDK API of libnnd against a real daemon: the
 * device queries, and models: every documented misuse returns its documented code (null
 * arguments UNEXPECTED_NULL, changes after finish BAD_STATE, bad indexes, types and
 * lengths BAD_DATA), a model the daemon refuses fails at finish, per-channel
 * quantization, constants over 128 bytes, and referenced models (control flow: an IF
 * run both ways). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tests/ndk/ndk_fixture.h"

/* ---- devices ------------------------------------------------------------------------- */

static void test_devices(void **state) {
    (void)state;
    uint32_t n = 0;
    assert_int_equal(ANeuralNetworks_getDeviceCount(NULL), NUL);
    assert_int_equal(ANeuralNetworks_getDeviceCount(&n), OK);
    assert_int_equal(n, 2); /* nnd-cpu and nnd-reference (test_ndk_devices.c) */
    ANeuralNetworksDevice *d, *d2;
    assert_int_equal(ANeuralNetworks_getDevice(0, NULL), NUL);
    assert_int_equal(ANeuralNetworks_getDevice(2, &d), BAD_DATA);
    assert_int_equal(ANeuralNetworks_getDevice(0, &d), OK);
    assert_int_equal(ANeuralNetworks_getDevice(0, &d2), OK);
    assert_ptr_equal(d, d2); /* the same representation every time */
    const char *name, *version;
    int32_t type;
    int64_t level;
    assert_int_equal(ANeuralNetworksDevice_getName(NULL, &name), NUL);
    assert_int_equal(ANeuralNetworksDevice_getName(d, NULL), NUL);
    assert_int_equal(ANeuralNetworksDevice_getName(d, &name), OK);
    assert_string_equal(name, "nnd-cpu");
    assert_int_equal(ANeuralNetworksDevice_getType(d, NULL), NUL);
    assert_int_equal(ANeuralNetworksDevice_getType(d, &type), OK);
    assert_int_equal(type, ANEURALNETWORKS_DEVICE_CPU);
    assert_int_equal(ANeuralNetworksDevice_getVersion(NULL, &version), NUL);
    assert_int_equal(ANeuralNetworksDevice_getVersion(d, &version), OK);
    assert_true(strlen(version) > 0);
    assert_int_equal(ANeuralNetworksDevice_getFeatureLevel(d, NULL), NUL);
    assert_int_equal(ANeuralNetworksDevice_getFeatureLevel(d, &level), OK);
    assert_int_equal(level, ANEURALNETWORKS_FEATURE_LEVEL_8);
    assert_int_equal(ANeuralNetworks_getRuntimeFeatureLevel(), ANEURALNETWORKS_FEATURE_LEVEL_8);
    assert_int_equal(ANeuralNetworksDevice_wait(NULL), NUL);
    assert_int_equal(ANeuralNetworksDevice_wait(d), OK);
    bool sup = true;
    assert_int_equal(ANeuralNetworksDevice_getExtensionSupport(d, NULL, &sup), NUL);
    assert_int_equal(ANeuralNetworksDevice_getExtensionSupport(d, "com.example.none", &sup), OK);
    assert_false(sup);
    assert_true(ANeuralNetworks_getDefaultLoopTimeout() == 2000000000ull);
    assert_true(ANeuralNetworks_getMaximumLoopTimeout() == 15000000000ull);
}

/* ---- models ---------------------------------------------------------------------------- */

static void test_model_nulls_and_types(void **state) {
    (void)state;
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(NULL), NUL);
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    assert_int_equal(ANeuralNetworksModel_addOperand(NULL, &t), NUL);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, NULL), NUL);
    ANeuralNetworksOperandType bad = {.type = 77};
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &bad), BAD_DATA);
    bad = (ANeuralNetworksOperandType){.type = ANEURALNETWORKS_INT32,
                                       .dimensionCount = 1,
                                       .dimensions = dims_n}; /* a scalar with dimensions */
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &bad), BAD_DATA);
    bad = (ANeuralNetworksOperandType){.type = ANEURALNETWORKS_TENSOR_FLOAT32,
                                       .dimensionCount = 1}; /* count without an array */
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &bad), BAD_DATA);
    bad = tensor(dims_n);
    bad.type = ANEURALNETWORKS_TENSOR_QUANT8_ASYMM; /* scale 0 */
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &bad), BAD_DATA);
    bad.scale = 0.5f;
    bad.zeroPoint = 300;
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &bad), BAD_DATA);
    bad = tensor(dims_n);
    bad.scale = 1.f; /* floats take no quantization */
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &bad), BAD_DATA);
    bad = tensor(dims_unknown); /* a partly known tensor is fine in a model */
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &bad), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    float v[N] = {0};
    int32_t i32 = 0;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(NULL, 1, v, sizeof v), NUL);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, NULL, sizeof v), NUL);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, -1, v, sizeof v), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 3, v, sizeof v), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, v, sizeof v - 1), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 0, v, sizeof v), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &i32, 2), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &i32, sizeof i32), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, NULL, 0), OK); /* omitted */
    ANeuralNetworksSymmPerChannelQuantParams q = {.channelDim = 0, .scaleCount = N, .scales = v};
    assert_int_equal(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 1, NULL), NUL);
    assert_int_equal(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 1, &q), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_relaxComputationFloat32toFloat16(NULL, true), NUL);
    assert_int_equal(ANeuralNetworksModel_finish(NULL), NUL);
    ANeuralNetworksModel_free(m);
    ANeuralNetworksModel_free(NULL);
}

static void test_model_operations(void **state) {
    (void)state;
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    for (int i = 0; i < 2; i++)
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    const uint32_t in[] = {0, 1, 2}, out[] = {3}, far[] = {0, 1, 9};
    assert_int_equal(ANeuralNetworksModel_addOperation(NULL, ANEURALNETWORKS_ADD, 3, in, 1, out),
                     NUL);
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, NULL, 1, out),
                     NUL);
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, far, 1, out),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_addOperation(m, 5000, 3, in, 1, out), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 2, in, 1, out),
                     BAD_DATA); /* ADD takes three inputs */
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out), OK);
    const uint32_t ins[] = {0, 1}, bad_in[] = {0, 7};
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, NULL, 1, out), NUL);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, bad_in, 1, out), BAD_DATA);
    /* An operand cannot be both an input and an output. */
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, ins), BAD_DATA);
    /* The activation has no value yet, but it cannot be an input once it has one. */
    int32_t act = 0;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    const uint32_t with_const[] = {0, 2};
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, with_const, 1, out),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, out), OK);
    /* Not finished: no compilation, no supported-operations query. */
    ANeuralNetworksCompilation *c = (ANeuralNetworksCompilation *)&c;
    assert_int_equal(ANeuralNetworksCompilation_create(m, &c), BAD_STATE);
    assert_null(c);
    bool sup[1];
    const ANeuralNetworksDevice *devs[] = {device()};
    assert_int_equal(ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, 1, sup),
                     BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    /* Finished: every change is BAD_STATE, and so is a second finish. */
    assert_int_equal(ANeuralNetworksModel_finish(m), BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out),
                     BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, out), BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_relaxComputationFloat32toFloat16(m, true), BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_getSupportedOperationsForDevices(NULL, devs, 1, sup),
                     NUL);
    assert_int_equal(ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, 0, sup),
                     BAD_DATA);
    const ANeuralNetworksDevice *twice[] = {devs[0], devs[0]};
    assert_int_equal(ANeuralNetworksModel_getSupportedOperationsForDevices(m, twice, 2, sup),
                     BAD_DATA);
    sup[0] = false;
    assert_int_equal(ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, 1, sup), OK);
    assert_true(sup[0]);
    ANeuralNetworksModel_free(m);
}

/* Models the NDK refuses at finish: BAD_DATA, and the model is unusable afterwards. */
static void test_model_invalid_at_finish(void **state) {
    (void)state;
    ANeuralNetworksOperandType t = tensor(dims_n);
    const uint32_t in[] = {0, 1, 2}, out[] = {3}, ins[] = {0, 1};
    int32_t act = 0;
    float f = 0;
    for (int variant = 0; variant < 3; variant++) {
        ANeuralNetworksModel *m;
        assert_int_equal(ANeuralNetworksModel_create(&m), OK);
        for (int i = 0; i < 2; i++)
            assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
        ANeuralNetworksOperandType scalar = {.type = variant == 1 ? ANEURALNETWORKS_FLOAT32
                                                                  : ANEURALNETWORKS_INT32};
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &scalar), OK);
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
        if (variant == 1)
            assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &f, sizeof f), OK);
        else
            assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
        /* ADD's activation must be an INT32: refused as the operation is added, as by the NNAPI
         * runtime, and then nothing writes the output. */
        assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out),
                         variant == 1 ? BAD_DATA : OK);
        if (variant != 0) /* variant 0: no inputs and outputs named */
            assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, out), OK);
        if (variant == 2) /* output 3 written twice */
            assert_int_equal(
                ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out), OK);
        assert_int_equal(ANeuralNetworksModel_finish(m), BAD_DATA);
        assert_int_equal(ANeuralNetworksModel_finish(m), BAD_STATE);
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), BAD_STATE);
        ANeuralNetworksCompilation *c;
        assert_int_equal(ANeuralNetworksCompilation_create(m, &c), BAD_STATE);
        ANeuralNetworksModel_free(m);
    }
}

static void test_per_channel(void **state) {
    (void)state;
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    const uint32_t dims[] = {2, 3};
    ANeuralNetworksOperandType t = {.type = ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL,
                                    .dimensionCount = 2,
                                    .dimensions = dims};
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    float scales[3] = {0.5f, 0.25f, 1.f}, bad[3] = {0.5f, -1.f, 1.f};
    ANeuralNetworksSymmPerChannelQuantParams q = {
        .channelDim = 1, .scaleCount = 2, .scales = scales};
    assert_int_equal(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 0, &q), BAD_DATA);
    q.scaleCount = 3;
    q.channelDim = 2;
    assert_int_equal(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 0, &q), BAD_DATA);
    q.channelDim = 1;
    q.scales = bad;
    assert_int_equal(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 0, &q), BAD_DATA);
    q.scales = scales;
    assert_int_equal(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 1, &q), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 0, &q), OK);
    ANeuralNetworksModel_free(m);
}

/* A constant over 128 bytes is referenced until finish and copied then: changing the
 * caller's buffer afterwards changes nothing. */
static void test_large_constant(void **state) {
    (void)state;
    float b[BIG], a[BIG], out[BIG];
    fill(b, BIG, 100.f);
    fill(a, BIG, 1.f);
    ANeuralNetworksModel *m = add_model(BIG, b, false);
    float keep[BIG];
    memcpy(keep, b, sizeof b);
    memset(b, 0, sizeof b);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, keep, out, BIG);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- control flow and extensions --------------------------------------------------------- */

/* y = relu(x) on [N]: a body for IF. */
static ANeuralNetworksModel *relu_model(void) {
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    const uint32_t in[] = {0}, out[] = {1};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_RELU, 1, in, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, in, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    return m;
}

/* y = IF(cond) relu(x) ELSE relu(x), one model for both branches, run both ways. */
static void run_if(ANeuralNetworksCompilation *c, bool cond) {
    float x[N] = {-2, -1, 1, 2}, y[N] = {0};
    const uint8_t c8 = cond;
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, &c8, 1), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, x, sizeof x), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, y, sizeof y), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    for (int i = 0; i < N; i++)
        assert_true(y[i] == (x[i] > 0 ? x[i] : 0));
    ANeuralNetworksExecution_free(e);
}

static void test_referenced_models(void **state) {
    (void)state;
    ANeuralNetworksModel *body = relu_model(), *raw, *m;
    assert_int_equal(ANeuralNetworksModel_create(&raw), OK);
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    const uint32_t one[] = {1};
    ANeuralNetworksOperandType model_t = {.type = ANEURALNETWORKS_MODEL}, t = tensor(dims_n),
                               cond_t = {.type = ANEURALNETWORKS_TENSOR_BOOL8,
                                         .dimensionCount = 1,
                                         .dimensions = one};
    /* IF(cond, then, else, x) -> y, both branches the same model. */
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &cond_t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &model_t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &model_t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(NULL, 1, body), NUL);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 1, NULL), NUL);
    /* A model not finished, the model itself among them, is in the wrong state. */
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 1, raw), BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 1, m), BAD_STATE);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 3, body), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 9, body), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 1, body), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 2, body), OK);
    const uint32_t in[] = {0, 1, 2, 3}, out[] = {4}, ins[] = {0, 3};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_IF, 4, in, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    /* Finished: no more references, to it or from it. */
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 1, body), BAD_STATE);
    bool sup[1] = {false};
    const ANeuralNetworksDevice *devs[] = {device()};
    assert_int_equal(ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, 1, sup), OK);
    assert_true(sup[0]);
    ANeuralNetworksCompilation *c = compile(m, false);
    run_if(c, true);
    run_if(c, false);
    ANeuralNetworksCompilation_free(c);
    int32_t type;
    assert_int_equal(ANeuralNetworksModel_getExtensionOperandType(m, NULL, 1, &type), NUL);
    assert_int_equal(ANeuralNetworksModel_getExtensionOperandType(m, "com.example.none", 1, &type),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandExtensionData(raw, 0, "x", 1), BAD_DATA);
    ANeuralNetworksModel_free(m);
    ANeuralNetworksModel_free(raw);
    ANeuralNetworksModel_free(body);
}

/* Feature level 8's extension attributes, on a daemon without extensions: every refusal
 * Android's runtime makes, in its order (test_extensions adds them for a real extension). */
static void test_extension_attributes(void **state) {
    (void)state;
    uint32_t n = 4;
    float b[4] = {0};
    ANeuralNetworksModel *m = add_model(n, b, false);
    ANeuralNetworksCompilation *any = NULL, *one = NULL;
    uint8_t v = 1;
    const char *none = "com.example.none";
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(NULL, none, 1, &v, 1), NUL);
    assert_int_equal(ANeuralNetworksCompilation_create(m, &any), OK);
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(any, NULL, 1, &v, 1), NUL);
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(any, none, 1, NULL, 1), NUL);
    /* Only on a compilation for exactly one device. */
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(any, none, 1, &v, 1),
                     BAD_DATA);
    const ANeuralNetworksDevice *devs[] = {device()};
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &one), OK);
    /* An extension the daemon does not offer; NULL data of length 0 is no data. */
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(one, none, 1, NULL, 0),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksCompilation_finish(one), OK);
    assert_int_equal(ANeuralNetworksCompilation_addExtensionAttribute(one, none, 1, &v, 1),
                     BAD_STATE);
    ANeuralNetworksExecution *e = NULL;
    assert_int_equal(ANeuralNetworksExecution_addExtensionAttribute(NULL, none, 1, &v, 1), NUL);
    assert_int_equal(ANeuralNetworksExecution_create(one, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_addExtensionAttribute(e, NULL, 1, &v, 1), NUL);
    assert_int_equal(ANeuralNetworksExecution_addExtensionAttribute(e, none, 1, &v, 1), BAD_DATA);
    ANeuralNetworksExecution_free(e);
    assert_int_equal(ANeuralNetworksCompilation_finish(any), OK);
    assert_int_equal(ANeuralNetworksExecution_create(any, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_addExtensionAttribute(e, none, 1, &v, 1), BAD_DATA);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(one);
    ANeuralNetworksCompilation_free(any);
    ANeuralNetworksModel_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices),           cmocka_unit_test(test_model_nulls_and_types),
        cmocka_unit_test(test_model_operations),  cmocka_unit_test(test_model_invalid_at_finish),
        cmocka_unit_test(test_per_channel),       cmocka_unit_test(test_large_constant),
        cmocka_unit_test(test_referenced_models), cmocka_unit_test(test_extension_attributes),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

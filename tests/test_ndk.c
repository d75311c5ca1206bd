/* test_ndk (integration): the NNAPI NDK API of libnnd against a real daemon. Every
 * documented misuse returns its documented code (null arguments UNEXPECTED_NULL, changes
 * after finish BAD_STATE, bad indexes, types and lengths BAD_DATA, reuse of an execution
 * BAD_STATE, ...), and the calls do what they say: constants over 128 bytes, memories,
 * descriptor memories, dynamic output shapes, timing, asynchronous and dependent
 * computes, bursts, threads, the example vendor extension. Scenarios that need a library which
 * never reached a daemon, or whose daemon dies, run in a fresh copy of this program (fork + exec of
 * itself), since the library keeps one connection per process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "nnd/NeuralNetworks.h"

#define OK        ANEURALNETWORKS_NO_ERROR
#define NUL       ANEURALNETWORKS_UNEXPECTED_NULL
#define BAD_DATA  ANEURALNETWORKS_BAD_DATA
#define BAD_STATE ANEURALNETWORKS_BAD_STATE
#define N         4  /* elements of the small ADD model */
#define BIG       64 /* elements of the large constant: 256 bytes, over the 128 limit */

static nnd_test_daemon g_daemon;

static const uint32_t dims_n[] = {N}, dims_big[] = {BIG}, dims_unknown[] = {0};

static ANeuralNetworksOperandType tensor(const uint32_t *dims) {
    return (ANeuralNetworksOperandType){
        .type = ANEURALNETWORKS_TENSOR_FLOAT32, .dimensionCount = 1, .dimensions = dims};
}

static const ANeuralNetworksOperandType k_int32 = {.type = ANEURALNETWORKS_INT32};

/* out = a + b on [n] floats: operands a 0, b 1, act 2, out 3. With b_const, b is a
 * constant holding b_value; with out_unknown, out's dimension is left unknown. Finished. */
static ANeuralNetworksModel *add_model(uint32_t n, const float *b_value, bool out_unknown) {
    const uint32_t *dims = n == N ? dims_n : dims_big;
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType t = tensor(dims), tu = tensor(dims_unknown);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, out_unknown ? &tu : &t), OK);
    int32_t act = ANEURALNETWORKS_FUSED_NONE;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    if (b_value)
        assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, b_value, n * sizeof(float)),
                         OK);
    const uint32_t in[] = {0, 1, 2}, out[] = {3}, ins[] = {0, 1};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, b_value ? 1 : 2, ins, 1, out),
                     OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    return m;
}

static ANeuralNetworksDevice *device(void) {
    ANeuralNetworksDevice *d;
    assert_int_equal(ANeuralNetworks_getDevice(0, &d), OK);
    return d;
}

static ANeuralNetworksCompilation *compile(ANeuralNetworksModel *m, bool for_device) {
    ANeuralNetworksCompilation *c;
    const ANeuralNetworksDevice *devs[] = {device()};
    if (for_device)
        assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c), OK);
    else
        assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), OK);
    return c;
}

static void fill(float *v, size_t n, float base) {
    for (size_t i = 0; i < n; i++)
        v[i] = base + (float)i;
}

/* An execution of the two-input ADD model with a, b set and out bound. */
static ANeuralNetworksExecution *add_execution(ANeuralNetworksCompilation *c, const float *a,
                                               const float *b, float *out) {
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, N * sizeof(float)), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, N * sizeof(float)), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, N * sizeof(float)), OK);
    return e;
}

static void assert_sum(const float *a, const float *b, const float *out, size_t n) {
    for (size_t i = 0; i < n; i++)
        assert_true(out[i] == a[i] + b[i]);
}

/* ---- devices ------------------------------------------------------------------------- */

static void test_devices(void **state) {
    (void)state;
    uint32_t n = 0;
    assert_int_equal(ANeuralNetworks_getDeviceCount(NULL), NUL);
    assert_int_equal(ANeuralNetworks_getDeviceCount(&n), OK);
    assert_int_equal(n, 1);
    ANeuralNetworksDevice *d, *d2;
    assert_int_equal(ANeuralNetworks_getDevice(0, NULL), NUL);
    assert_int_equal(ANeuralNetworks_getDevice(1, &d), BAD_DATA);
    assert_int_equal(ANeuralNetworks_getDevice(0, &d), OK);
    assert_int_equal(ANeuralNetworks_getDevice(0, &d2), OK);
    assert_ptr_equal(d, d2); /* the same representation every time */
    const char *name, *version;
    int32_t type;
    int64_t level;
    assert_int_equal(ANeuralNetworksDevice_getName(NULL, &name), NUL);
    assert_int_equal(ANeuralNetworksDevice_getName(d, NULL), NUL);
    assert_int_equal(ANeuralNetworksDevice_getName(d, &name), OK);
    assert_string_equal(name, "nnd");
    assert_int_equal(ANeuralNetworksDevice_getType(d, NULL), NUL);
    assert_int_equal(ANeuralNetworksDevice_getType(d, &type), OK);
    assert_int_equal(type, ANEURALNETWORKS_DEVICE_CPU);
    assert_int_equal(ANeuralNetworksDevice_getVersion(NULL, &version), NUL);
    assert_int_equal(ANeuralNetworksDevice_getVersion(d, &version), OK);
    assert_true(strlen(version) > 0);
    assert_int_equal(ANeuralNetworksDevice_getFeatureLevel(d, NULL), NUL);
    assert_int_equal(ANeuralNetworksDevice_getFeatureLevel(d, &level), OK);
    assert_int_equal(level, ANEURALNETWORKS_FEATURE_LEVEL_4);
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
        if (variant == 1) /* ADD's activation must be an INT32: the daemon says so */
            assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &f, sizeof f), OK);
        else
            assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
        assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out),
                         OK);
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

/* ---- compilations ---------------------------------------------------------------------- */

static void test_compilation(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c;
    const ANeuralNetworksDevice *devs[] = {device(), device()}, *none[] = {NULL};
    assert_int_equal(ANeuralNetworksCompilation_create(NULL, &c), NUL);
    assert_int_equal(ANeuralNetworksCompilation_create(m, NULL), NUL);
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, NULL, 1, &c), NUL);
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 0, &c), BAD_DATA);
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 2, &c), BAD_DATA);
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, none, 1, &c), NUL);
    assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    assert_int_equal(ANeuralNetworksCompilation_setPreference(NULL, 0), NUL);
    assert_int_equal(ANeuralNetworksCompilation_setPreference(c, 3), BAD_DATA);
    assert_int_equal(ANeuralNetworksCompilation_setPreference(c, -1), BAD_DATA);
    assert_int_equal(
        ANeuralNetworksCompilation_setPreference(c, ANEURALNETWORKS_PREFER_SUSTAINED_SPEED), OK);
    assert_int_equal(ANeuralNetworksCompilation_setPriority(c, 5), BAD_DATA);
    assert_int_equal(ANeuralNetworksCompilation_setPriority(c, ANEURALNETWORKS_PRIORITY_HIGH), OK);
    /* Timeouts only for a compilation made for exactly one device. */
    assert_int_equal(ANeuralNetworksCompilation_setTimeout(c, 1000000000), BAD_DATA);
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN] = {1};
    assert_int_equal(ANeuralNetworksCompilation_setCaching(c, NULL, token), NUL);
    assert_int_equal(ANeuralNetworksCompilation_setCaching(c, "/tmp", NULL), NUL);
    ANeuralNetworksExecution *e = (ANeuralNetworksExecution *)&e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), BAD_STATE); /* not finished */
    assert_null(e);
    ANeuralNetworksBurst *b;
    assert_int_equal(ANeuralNetworksBurst_create(c, &b), BAD_STATE);
    assert_int_equal(ANeuralNetworksCompilation_finish(NULL), NUL);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), OK);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), BAD_STATE);
    assert_int_equal(ANeuralNetworksCompilation_setPreference(c, 0), BAD_STATE);
    assert_int_equal(ANeuralNetworksCompilation_setPriority(c, ANEURALNETWORKS_PRIORITY_LOW),
                     BAD_STATE);
    assert_int_equal(ANeuralNetworksCompilation_setCaching(c, "/tmp", token), BAD_STATE);
    assert_int_equal(ANeuralNetworksExecution_create(c, NULL), NUL);
    ANeuralNetworksCompilation_free(c);

    /* For one device: a timeout, and caching in a directory. */
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c), OK);
    assert_int_equal(ANeuralNetworksCompilation_setTimeout(c, 10000000000ull), OK);
    char dir[] = "/tmp/nnd-ndk-cache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(ANeuralNetworksCompilation_setCaching(c, dir, token), OK);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), OK);
    assert_int_equal(ANeuralNetworksCompilation_setTimeout(c, 1), BAD_STATE);
    float a[N], bb[N], out[N];
    fill(a, N, 1.f);
    fill(bb, N, 10.f);
    e = add_execution(c, a, bb, out);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, bb, out, N);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    ANeuralNetworksCompilation_free(NULL);
    ANeuralNetworksModel_free(m);
}

/* ---- executions ------------------------------------------------------------------------ */

static void test_execution_arguments(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksExecution *e;
    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 2.f);
    assert_int_equal(ANeuralNetworksExecution_create(NULL, &e), NUL);
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(NULL, 0, NULL, a, sizeof a), NUL);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, NULL, sizeof a), NUL);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 2, NULL, a, sizeof a), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, -1, NULL, a, sizeof a), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a - 4), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a + 4), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 1, NULL, out, sizeof out), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, 3), BAD_DATA);
    /* A type may only fill in unknown dimensions, never change known ones. */
    const uint32_t other[] = {N + 1};
    ANeuralNetworksOperandType wrong = tensor(other), same = tensor(dims_n);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, &wrong, a, sizeof a), BAD_DATA);
    same.type = ANEURALNETWORKS_TENSOR_INT32;
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, &same, a, sizeof a), BAD_DATA);
    same = tensor(dims_n);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, &same, a, sizeof a), OK);
    /* Not every argument set yet. */
    assert_int_equal(ANeuralNetworksExecution_compute(e), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    uint32_t rank;
    uint64_t ns;
    assert_int_equal(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank), BAD_STATE);
    assert_int_equal(ANeuralNetworksExecution_getDuration(e, 0, &ns), BAD_STATE);
    /* Timing only for a compilation made for exactly one device. */
    assert_int_equal(ANeuralNetworksExecution_setMeasureTiming(e, true), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setTimeout(e, 1000), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setLoopTimeout(NULL, 1000), NUL);
    assert_int_equal(ANeuralNetworksExecution_setLoopTimeout(e, UINT64_MAX), OK); /* clamped */
    assert_int_equal(ANeuralNetworksExecution_compute(NULL), NUL);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    /* Used once: everything that would change or rerun it is BAD_STATE. */
    assert_int_equal(ANeuralNetworksExecution_compute(e), BAD_STATE);
    ANeuralNetworksEvent *ev = (ANeuralNetworksEvent *)&ev;
    assert_int_equal(ANeuralNetworksExecution_startCompute(e, &ev), BAD_STATE);
    assert_null(ev);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), BAD_STATE);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), BAD_STATE);
    assert_int_equal(ANeuralNetworksExecution_setLoopTimeout(e, 1000), BAD_STATE);
    assert_int_equal(ANeuralNetworksExecution_getOutputOperandRank(e, 0, NULL), NUL);
    assert_int_equal(ANeuralNetworksExecution_getOutputOperandRank(e, 1, &rank), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank), OK);
    assert_int_equal(rank, 1);
    uint32_t dims[1] = {0};
    assert_int_equal(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, dims), OK);
    assert_int_equal(dims[0], N);
    /* No measurement was asked for: UINT64_MAX (and BAD_STATE, as the NNAPI runtime). */
    assert_int_equal(ANeuralNetworksExecution_getDuration(e, 7, &ns), BAD_DATA);
    assert_int_equal(
        ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_DURATION_IN_DRIVER, &ns),
        BAD_STATE);
    assert_true(ns == UINT64_MAX);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksExecution_free(NULL);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

static void test_timing_and_timeouts(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, true);
    float a[N], b[N], out[N];
    fill(a, N, 3.f);
    fill(b, N, 4.f);
    ANeuralNetworksExecution *e = add_execution(c, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_setMeasureTiming(e, true), OK);
    assert_int_equal(ANeuralNetworksExecution_setTimeout(e, 10000000000ull), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    uint64_t hw = 0, drv = 0, fenced = 0;
    assert_int_equal(
        ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_DURATION_ON_HARDWARE, &hw), OK);
    assert_int_equal(
        ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_DURATION_IN_DRIVER, &drv), OK);
    assert_int_equal(
        ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_FENCED_DURATION_IN_DRIVER, &fenced),
        OK);
    assert_true(hw != UINT64_MAX && drv != UINT64_MAX && hw <= drv && fenced == drv);
    assert_int_equal(ANeuralNetworksExecution_setMeasureTiming(e, false), BAD_STATE);
    assert_int_equal(ANeuralNetworksExecution_setTimeout(e, 1), BAD_STATE);
    ANeuralNetworksExecution_free(e);
    /* Timeouts reach the daemon as deadlines: 1 ns is over before it starts. */
    e = add_execution(c, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_setTimeout(e, 1), OK);
    int rc = ANeuralNetworksExecution_compute(e);
    assert_true(rc == ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT ||
                rc == ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT);
    uint64_t ns;
    assert_int_equal(ANeuralNetworksExecution_getDuration(e, 0, &ns), BAD_STATE);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    const ANeuralNetworksDevice *devs[] = {device()};
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c), OK);
    assert_int_equal(ANeuralNetworksCompilation_setTimeout(c, 1), OK);
    rc = ANeuralNetworksCompilation_finish(c);
    assert_true(rc == ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT ||
                rc == ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT);
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), BAD_STATE);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* An output whose size only the execution knows: too small a buffer is
 * OUTPUT_INSUFFICIENT_SIZE with the needed dimensions; a big enough one works. */
static void test_dynamic_output(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, true);
    ANeuralNetworksCompilation *c = compile(m, false);
    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 1.f);
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out - 4), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE);
    uint32_t rank = 0, dims[1] = {0};
    assert_int_equal(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank),
                     ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE);
    assert_int_equal(rank, 1);
    assert_int_equal(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, dims),
                     ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE);
    assert_int_equal(dims[0], N);
    ANeuralNetworksExecution_free(e);
    e = add_execution(c, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    assert_int_equal(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, dims), OK);
    assert_int_equal(dims[0], N);
    ANeuralNetworksExecution_free(e);
    /* An output type may name the dimensions the model left unknown. */
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, &t, out, sizeof out - 4), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, &t, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

static void test_async_and_events(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, true);
    float a[N], b[N], out[N], out2[N];
    fill(a, N, 5.f);
    fill(b, N, 6.f);
    ANeuralNetworksExecution *e = add_execution(c, a, b, out);
    ANeuralNetworksEvent *ev = NULL, *ev2 = NULL;
    assert_int_equal(ANeuralNetworksExecution_startCompute(NULL, &ev), NUL);
    assert_int_equal(ANeuralNetworksExecution_startCompute(e, NULL), NUL);
    assert_int_equal(ANeuralNetworksExecution_startCompute(e, &ev), OK);
    assert_non_null(ev);
    assert_int_equal(ANeuralNetworksEvent_wait(NULL), NUL);
    assert_int_equal(ANeuralNetworksEvent_wait(ev), OK);
    assert_int_equal(ANeuralNetworksEvent_wait(ev), OK); /* again: still signalled */
    assert_sum(a, b, out, N);
    int fd = 7;
    assert_int_equal(ANeuralNetworksEvent_getSyncFenceFd(ev, &fd), BAD_DATA);
    assert_int_equal(fd, -1);
    /* A dependent compute waits for ev, then runs. */
    ANeuralNetworksExecution *e2 = add_execution(c, out, b, out2);
    const ANeuralNetworksEvent *deps[] = {ev};
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e2, deps, 1, 0, NULL),
                     NUL);
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e2, NULL, 1, 0, &ev2),
                     NUL);
    assert_int_equal(
        ANeuralNetworksExecution_startComputeWithDependencies(e2, deps, 1, 1000000000ull, &ev2),
        OK);
    assert_int_equal(ANeuralNetworksEvent_wait(ev2), OK);
    assert_sum(out, b, out2, N);
    ANeuralNetworksEvent_free(ev2);
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e2, deps, 1, 0, &ev2),
                     BAD_STATE);
    assert_null(ev2);
    ANeuralNetworksExecution_free(e2);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksEvent_free(ev);
    ANeuralNetworksEvent_free(NULL);
    /* An event from a sync fence: any fd that becomes readable (here an eventfd). */
    int efd = eventfd(1, EFD_CLOEXEC);
    assert_true(efd >= 0);
    assert_int_equal(ANeuralNetworksEvent_createFromSyncFenceFd(-1, &ev), BAD_DATA);
    assert_int_equal(ANeuralNetworksEvent_createFromSyncFenceFd(efd, NULL), NUL);
    assert_int_equal(ANeuralNetworksEvent_createFromSyncFenceFd(efd, &ev), OK);
    close(efd); /* the event owns a duplicate */
    assert_int_equal(ANeuralNetworksEvent_wait(ev), OK);
    assert_int_equal(ANeuralNetworksEvent_getSyncFenceFd(ev, NULL), NUL);
    assert_int_equal(ANeuralNetworksEvent_getSyncFenceFd(ev, &fd), OK);
    assert_true(fd >= 0);
    close(fd);
    /* It can be a dependency too. */
    e = add_execution(c, a, b, out);
    deps[0] = ev;
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e, deps, 1, 0, &ev2),
                     OK);
    assert_int_equal(ANeuralNetworksEvent_wait(ev2), OK);
    ANeuralNetworksEvent_free(ev2);
    ANeuralNetworksEvent_free(ev);
    ANeuralNetworksExecution_free(e);
    /* Freed while in flight: the computation finishes and frees it; the event still works. */
    e = add_execution(c, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_startCompute(e, &ev), OK);
    ANeuralNetworksExecution_free(e);
    assert_int_equal(ANeuralNetworksEvent_wait(ev), OK);
    ANeuralNetworksEvent_free(ev);
    /* Only a single-device compilation takes a duration after the fences. */
    ANeuralNetworksCompilation *c2 = compile(m, false);
    e = add_execution(c2, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e, NULL, 0, 1000, &ev),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e, NULL, 0, 0, &ev), OK);
    ANeuralNetworksEvent_free(ev);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c2);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

static void test_burst(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false), *c2 = compile(m, false);
    ANeuralNetworksBurst *b;
    assert_int_equal(ANeuralNetworksBurst_create(NULL, &b), NUL);
    assert_int_equal(ANeuralNetworksBurst_create(c, &b), OK);
    float a[N], x[N], out[N];
    fill(a, N, 1.f);
    for (int round = 0; round < 3; round++) {
        fill(x, N, (float)round);
        ANeuralNetworksExecution *e = add_execution(c, a, x, out);
        assert_int_equal(ANeuralNetworksExecution_burstCompute(e, NULL), NUL);
        assert_int_equal(ANeuralNetworksExecution_burstCompute(e, b), OK);
        assert_sum(a, x, out, N);
        ANeuralNetworksExecution_free(e);
    }
    ANeuralNetworksExecution *e = add_execution(c2, a, x, out);
    assert_int_equal(ANeuralNetworksExecution_burstCompute(e, b), BAD_DATA);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksBurst_free(b);
    ANeuralNetworksBurst_free(NULL);
    ANeuralNetworksCompilation_free(c2);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- memory ---------------------------------------------------------------------------- */

static int memfd_with(size_t size) {
    int fd = memfd_create("test-ndk", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    return fd;
}

static void test_memory_from_fd(void **state) {
    (void)state;
    ANeuralNetworksMemory *mem = NULL;
    size_t size = 4096;
    int fd = memfd_with(size);
    int rw = PROT_READ | PROT_WRITE;
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, rw, fd, 0, NULL), NUL);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(0, rw, fd, 0, &mem), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, rw, -1, 0, &mem), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size + 1, rw, fd, 0, &mem), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, 0x100, fd, 0, &mem), BAD_DATA);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(64, PROT_READ, p[0], 0, &mem),
                     ANEURALNETWORKS_UNMAPPABLE);
    close(p[0]);
    close(p[1]);
    assert_null(mem);

    /* The model's constant b lives in the memory, a and the output too. */
    uint8_t *map = mmap(NULL, size, rw, MAP_SHARED, fd, 0);
    assert_true(map != MAP_FAILED);
    float *b = (float *)map, *a = (float *)(map + 1024), *out = (float *)(map + 2048);
    fill(b, N, 10.f);
    fill(a, N, 20.f);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, rw, fd, 0, &mem), OK);
    close(fd); /* the memory holds a duplicate */
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    for (int i = 0; i < 2; i++)
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(NULL, 1, mem, 0, 16), NUL);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, NULL, 0, 16), NUL);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, 0, 12), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, size - 8, 16),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 9, mem, 0, 16), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m, 1, mem, 0, 16), OK);
    int32_t act = 0;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    const uint32_t in[] = {0, 1, 2}, outs[] = {3}, ins[] = {0};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, NULL, 1024, 16), NUL);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, size - 8, 16),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 1024, 8),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 1024, 16), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 1, NULL, mem, 2048, 16),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 2048, 16), OK);
    ANeuralNetworksMemory_free(mem); /* the model and the execution keep it alive */
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    ANeuralNetworksExecution_free(e);

    /* A read-only memory cannot take an output. */
    fd = memfd_with(size);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, PROT_READ, fd, 0, &mem), OK);
    close(fd);
    float x[N] = {0};
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, x, sizeof x), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 0, 16), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_UNMAPPABLE);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksMemory_free(mem);
    ANeuralNetworksMemory_free(NULL);
    munmap(map, size);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

static void test_memory_from_desc(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksMemoryDesc *desc;
    ANeuralNetworksMemory *mem;
    assert_int_equal(ANeuralNetworksMemoryDesc_create(NULL), NUL);
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&desc), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), BAD_DATA); /* no role yet */
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, &mem), BAD_STATE);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, NULL, 0, 1.f), NUL);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 1, 1.f), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 0.f), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 0.5f), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 0, 0.5f), OK);
    const uint32_t wrong[] = {N + 1};
    assert_int_equal(ANeuralNetworksMemoryDesc_setDimensions(desc, 1, NULL), NUL);
    assert_int_equal(ANeuralNetworksMemoryDesc_setDimensions(desc, 1, wrong), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_setDimensions(desc, 1, dims_n), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), BAD_STATE);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 1, 0.5f), BAD_STATE);
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, NULL), NUL);
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, &mem), OK);
    ANeuralNetworksMemoryDesc_free(desc);
    ANeuralNetworksMemoryDesc_free(NULL);

    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 2.f);
    ANeuralNetworksExecution *e;
    /* Uninitialized: not yet usable as an input; and only whole. */
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 16), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 1, NULL, mem, 0, 0), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_OP_FAILED);
    ANeuralNetworksExecution_free(e);
    /* Written as an output, then read as an input. */
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    ANeuralNetworksExecution_free(e);
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == a[i] + 2 * b[i]);
    ANeuralNetworksExecution_free(e);
    /* Copied out into an fd memory; sizes must agree. Constants cannot come from it. */
    int fd = memfd_with(16);
    ANeuralNetworksMemory *plain, *small;
    assert_int_equal(ANeuralNetworksMemory_createFromFd(16, PROT_READ | PROT_WRITE, fd, 0, &plain),
                     OK);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(8, PROT_READ | PROT_WRITE, fd, 0, &small),
                     OK);
    assert_int_equal(ANeuralNetworksMemory_copy(NULL, plain), NUL);
    assert_int_equal(ANeuralNetworksMemory_copy(mem, small), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_copy(mem, plain), OK);
    float got[N];
    assert_int_equal(pread(fd, got, sizeof got, 0), (ssize_t)sizeof got);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == a[i] + b[i]);
    ANeuralNetworksModel *m2;
    assert_int_equal(ANeuralNetworksModel_create(&m2), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    assert_int_equal(ANeuralNetworksModel_addOperand(m2, &t), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromMemory(m2, 0, mem, 0, 16), BAD_DATA);
    ANeuralNetworksModel_free(m2);
    ANeuralNetworksMemory_free(small);
    ANeuralNetworksMemory_free(plain);
    ANeuralNetworksMemory_free(mem);
    close(fd);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* A descriptor memory of unknown shape needs a daemon buffer (the library cannot size
 * shared memory for it): it takes its shape from the output written into it. */
static void test_memory_flexible(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, true);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksMemoryDesc *desc;
    ANeuralNetworksMemory *mem, *mem2, *plain;
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&desc), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(desc, c, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(desc, c, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(desc), OK);
    int rc = ANeuralNetworksMemory_createFromDesc(desc, &mem);
    if (rc == ANEURALNETWORKS_OP_FAILED) { /* a daemon without memory domains */
        ANeuralNetworksMemoryDesc_free(desc);
        ANeuralNetworksCompilation_free(c);
        ANeuralNetworksModel_free(m);
        skip();
    }
    assert_int_equal(rc, OK);
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(desc, &mem2), OK);
    ANeuralNetworksMemoryDesc_free(desc);
    float a[N], b[N], got[N];
    fill(a, N, 1.f);
    fill(b, N, 3.f);
    int fd = memfd_with(16);
    assert_int_equal(ANeuralNetworksMemory_createFromFd(16, PROT_READ | PROT_WRITE, fd, 0, &plain),
                     OK);
    assert_int_equal(ANeuralNetworksMemory_copy(mem, plain), BAD_DATA); /* never written */
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    ANeuralNetworksExecution_free(e);
    /* daemon buffer -> daemon buffer -> fd memory, then into an execution again */
    assert_int_equal(ANeuralNetworksMemory_copy(mem, mem2), OK);
    assert_int_equal(ANeuralNetworksMemory_copy(mem2, plain), OK);
    assert_int_equal(pread(fd, got, sizeof got, 0), (ssize_t)sizeof got);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == a[i] + b[i]);
    float out[N];
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem2, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == a[i] + 2 * b[i]);
    ANeuralNetworksExecution_free(e);
    /* fd memory -> daemon buffer */
    fill(got, N, 7.f);
    assert_int_equal(pwrite(fd, got, sizeof got, 0), (ssize_t)sizeof got);
    assert_int_equal(ANeuralNetworksMemory_copy(plain, mem), OK);
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 0), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == got[i] + b[i]);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksMemory_free(plain);
    ANeuralNetworksMemory_free(mem2);
    ANeuralNetworksMemory_free(mem);
    close(fd);
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
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 1, raw), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 3, body), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 9, body), BAD_DATA);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 1, body), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValueFromModel(m, 2, body), OK);
    const uint32_t in[] = {0, 1, 2, 3}, out[] = {4}, ins[] = {0, 3};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_IF, 4, in, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    /* The daemon has no control flow yet: unsupported, and refused at compile time. */
    bool sup[1] = {true};
    const ANeuralNetworksDevice *devs[] = {device()};
    assert_int_equal(ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, 1, sup), OK);
    ANeuralNetworksCompilation *c;
    assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    int rc = ANeuralNetworksCompilation_finish(c);
    assert_true(rc == OK || rc == BAD_DATA);
    assert_true(sup[0] == (rc == OK));
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

/* ---- threads --------------------------------------------------------------------------- */

typedef struct thread_arg {
    ANeuralNetworksCompilation *c;
    int failures;
} thread_arg;

static void *compute_many(void *p) {
    thread_arg *t = p;
    for (int i = 0; i < 50; i++) {
        float a[N], b[N], out[N];
        fill(a, N, (float)i);
        fill(b, N, 0.5f);
        ANeuralNetworksExecution *e;
        if (ANeuralNetworksExecution_create(t->c, &e) ||
            ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a) ||
            ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b) ||
            ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out) ||
            ANeuralNetworksExecution_compute(e)) {
            t->failures++;
        } else {
            for (int k = 0; k < N; k++)
                t->failures += out[k] != a[k] + b[k];
        }
        ANeuralNetworksExecution_free(e);
    }
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false);
    pthread_t t[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg){c, 0};
        assert_int_equal(pthread_create(&t[i], NULL, compute_many, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* After fork() the child must not talk over the parent's connection: its old compilations
 * are DEAD_OBJECT, new work gets a connection of its own, and the parent goes on. */
static void test_fork(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false);
    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 2.f);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int bad = 0;
        ANeuralNetworksExecution *e;
        ANeuralNetworksCompilation *c2;
        bad |= ANeuralNetworksExecution_create(c, &e) != OK;
        bad |= ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a) != OK;
        bad |= ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b) != OK;
        bad |= ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out) != OK;
        bad |= ANeuralNetworksExecution_compute(e) != ANEURALNETWORKS_DEAD_OBJECT;
        ANeuralNetworksExecution_free(e);
        bad |= ANeuralNetworksCompilation_create(m, &c2) != OK;
        bad |= ANeuralNetworksCompilation_finish(c2) != OK;
        bad |= ANeuralNetworksExecution_create(c2, &e) != OK;
        bad |= ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a) != OK;
        bad |= ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b) != OK;
        bad |= ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out) != OK;
        bad |= ANeuralNetworksExecution_compute(e) != OK;
        for (int i = 0; i < N; i++)
            bad |= out[i] != a[i] + b[i];
        ANeuralNetworksExecution_free(e);
        ANeuralNetworksCompilation_free(c2);
        _exit(bad);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ANeuralNetworksExecution *e = add_execution(c, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- a library without a daemon, and a daemon that goes away ----------------------------- */

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "child: %s:%d: %s\n", __FILE__, __LINE__, #cond);                      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Never reached a daemon: device queries and compilation say UNAVAILABLE_DEVICE; building
 * a model needs no daemon. */
static int child_unreachable(void) {
    setenv("NND_SOCKET", "/nonexistent/nnd.sock", 1);
    ANeuralNetworksDevice *d = device();
    int32_t type;
    const char *v;
    EXPECT(ANeuralNetworksDevice_getType(d, &type) == ANEURALNETWORKS_UNAVAILABLE_DEVICE);
    EXPECT(ANeuralNetworksDevice_getVersion(d, &v) == ANEURALNETWORKS_UNAVAILABLE_DEVICE);
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c;
    EXPECT(ANeuralNetworksCompilation_create(m, &c) == OK);
    EXPECT(ANeuralNetworksCompilation_finish(c) == ANEURALNETWORKS_UNAVAILABLE_DEVICE);
    ANeuralNetworksExecution *e;
    EXPECT(ANeuralNetworksExecution_create(c, &e) == BAD_STATE);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    return 0;
}

/* The daemon dies under a compilation: its executions are DEAD_OBJECT, and so is a new
 * compilation while no daemon answers; once one does, Device_wait returns and new work
 * succeeds (the old compilation stays dead). */
static int child_daemon_gone(void) {
    nnd_test_daemon d1, d2;
    const char *const quiet[] = {"--log-level", "warn", NULL};
    EXPECT(nnd_test_daemon_start(&d1, quiet) == 0);
    setenv("NND_SOCKET", d1.socket_path, 1);
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false), *c2;
    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 1.f);
    ANeuralNetworksExecution *e = add_execution(c, a, b, out);
    EXPECT(ANeuralNetworksExecution_compute(e) == OK);
    ANeuralNetworksExecution_free(e);
    EXPECT(nnd_test_daemon_stop(&d1) == 0);
    e = add_execution(c, a, b, out);
    EXPECT(ANeuralNetworksExecution_compute(e) == ANEURALNETWORKS_DEAD_OBJECT);
    uint32_t rank;
    EXPECT(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank) == BAD_STATE);
    ANeuralNetworksExecution_free(e);
    e = add_execution(c, a, b, out);
    ANeuralNetworksEvent *ev;
    EXPECT(ANeuralNetworksExecution_startCompute(e, &ev) == OK);
    EXPECT(ANeuralNetworksEvent_wait(ev) == ANEURALNETWORKS_DEAD_OBJECT);
    ANeuralNetworksEvent_free(ev);
    ANeuralNetworksExecution_free(e);
    EXPECT(ANeuralNetworksCompilation_create(m, &c2) == OK);
    EXPECT(ANeuralNetworksCompilation_finish(c2) == ANEURALNETWORKS_DEAD_OBJECT);
    ANeuralNetworksCompilation_free(c2);
    /* A daemon again (at a new path, read afresh from $NND_SOCKET). */
    EXPECT(nnd_test_daemon_start(&d2, quiet) == 0);
    setenv("NND_SOCKET", d2.socket_path, 1);
    c2 = compile(m, false); /* new work finds the new daemon by itself */
    EXPECT(ANeuralNetworksDevice_wait(device()) == OK);
    e = add_execution(c2, a, b, out);
    EXPECT(ANeuralNetworksExecution_compute(e) == OK);
    ANeuralNetworksExecution_free(e);
    e = add_execution(c, a, b, out);
    EXPECT(ANeuralNetworksExecution_compute(e) == ANEURALNETWORKS_DEAD_OBJECT);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c2);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    EXPECT(nnd_test_daemon_stop(&d2) == 0);
    return 0;
}

/* The example vendor extension through the NDK's extension calls: fibonacci(n), n an
 * extension INT64 scalar, into a float tensor whose size only the execution knows. Needs
 * a daemon that loads the plugin and lets this program use it. */
static int child_extensions(void) {
#ifdef NND_EXTENSIONS_DIR
    char plugin[512], list[300], exe[256];
    snprintf(plugin, sizeof plugin, "%s/libnnd_fibonacci.so", NND_EXTENSIONS_DIR);
    if (access(plugin, R_OK)) return 77; /* not built: skipped */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    EXPECT(n > 0);
    exe[n] = '\0';
    char dir[] = "/tmp/nnd-ndk-ext-XXXXXX";
    EXPECT(mkdtemp(dir));
    snprintf(list, sizeof list, "%s/allowlist", dir);
    FILE *f = fopen(list, "w");
    EXPECT(f && fprintf(f, "%s\n", exe) > 0 && fclose(f) == 0);
    nnd_test_daemon d;
    const char *const args[] = {
        "--log-level", "warn", "--extensions-dir", NND_EXTENSIONS_DIR, "--extensions-allowlist",
        list,          NULL};
    EXPECT(nnd_test_daemon_start(&d, args) == 0);
    setenv("NND_SOCKET", d.socket_path, 1);
    const char *name = "com.example.fibonacci";
    bool sup = false;
    EXPECT(ANeuralNetworksDevice_getExtensionSupport(device(), name, &sup) == OK && sup);
    ANeuralNetworksModel *m;
    int32_t int64_type, fib;
    EXPECT(ANeuralNetworksModel_create(&m) == OK);
    EXPECT(ANeuralNetworksModel_getExtensionOperandType(m, name, 0, &int64_type) == OK);
    EXPECT(ANeuralNetworksModel_getExtensionOperationType(m, name, 0, &fib) == OK);
    EXPECT((uint32_t)int64_type >> 16 && (uint32_t)fib >> 16);
    ANeuralNetworksOperandType n_t = {.type = int64_type}, out_t = tensor(dims_unknown);
    EXPECT(ANeuralNetworksModel_addOperand(m, &n_t) == OK);
    EXPECT(ANeuralNetworksModel_addOperand(m, &out_t) == OK);
    const uint32_t in[] = {0}, out[] = {1};
    EXPECT(ANeuralNetworksModel_addOperation(m, fib, 1, in, 1, out) == OK);
    EXPECT(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, in, 1, out) == OK);
    EXPECT(ANeuralNetworksModel_finish(m) == OK);
    ANeuralNetworksCompilation *c;
    EXPECT(ANeuralNetworksCompilation_create(m, &c) == OK);
    EXPECT(ANeuralNetworksCompilation_finish(c) == OK);
    ANeuralNetworksExecution *e;
    int64_t count = 10;
    float fibs[10];
    EXPECT(ANeuralNetworksExecution_create(c, &e) == OK);
    EXPECT(ANeuralNetworksExecution_setInput(e, 0, NULL, &count, 4) == BAD_DATA);
    EXPECT(ANeuralNetworksExecution_setInput(e, 0, NULL, &count, sizeof count) == OK);
    EXPECT(ANeuralNetworksExecution_setOutput(e, 0, NULL, fibs, sizeof fibs) == OK);
    EXPECT(ANeuralNetworksExecution_compute(e) == OK);
    uint32_t dims[1];
    EXPECT(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, dims) == OK && dims[0] == 10);
    EXPECT(fibs[0] == 1 && fibs[1] == 1 && fibs[9] == 55);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    EXPECT(nnd_test_daemon_stop(&d) == 0);
    unlink(list);
    rmdir(dir);
    return 0;
#else
    return 77;
#endif
}

/* Runs this program again with `--child NAME` and returns its exit status. */
static int run_child(const char *name) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/proc/self/exe", "test_ndk", "--child", name, (char *)NULL);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_unreachable(void **state) {
    (void)state;
    assert_int_equal(run_child("unreachable"), 0);
}

static void test_daemon_gone(void **state) {
    (void)state;
    assert_int_equal(run_child("daemon-gone"), 0);
}

static void test_extensions(void **state) {
    (void)state;
    int rc = run_child("extensions");
    if (rc == 77) skip();
    assert_int_equal(rc, 0);
}

static int setup(void **state) {
    (void)state;
    const char *const quiet[] = {"--log-level", "warn", NULL};
    if (nnd_test_daemon_start(&g_daemon, quiet) < 0) return -1;
    setenv("NND_SOCKET", g_daemon.socket_path, 1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (g_daemon.pid > 0) nnd_test_daemon_stop(&g_daemon); /* a test failed before the last */
    return 0;
}

/* Last: the shared daemon shuts down cleanly (a test, as cmocka ignores a failed teardown). */
static void test_clean_stop(void **state) {
    (void)state;
    assert_int_equal(nnd_test_daemon_stop(&g_daemon), 0);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--child"))
        return !strcmp(argv[2], "unreachable")   ? child_unreachable()
               : !strcmp(argv[2], "daemon-gone") ? child_daemon_gone()
               : !strcmp(argv[2], "extensions")  ? child_extensions()
                                                 : 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_model_nulls_and_types),
        cmocka_unit_test(test_model_operations),
        cmocka_unit_test(test_model_invalid_at_finish),
        cmocka_unit_test(test_per_channel),
        cmocka_unit_test(test_large_constant),
        cmocka_unit_test(test_compilation),
        cmocka_unit_test(test_execution_arguments),
        cmocka_unit_test(test_timing_and_timeouts),
        cmocka_unit_test(test_dynamic_output),
        cmocka_unit_test(test_async_and_events),
        cmocka_unit_test(test_burst),
        cmocka_unit_test(test_memory_from_fd),
        cmocka_unit_test(test_memory_from_desc),
        cmocka_unit_test(test_memory_flexible),
        cmocka_unit_test(test_referenced_models),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_daemon_gone),
        cmocka_unit_test(test_extensions),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_validation: argument and state rules of the NNAPI layer that the newer Android
 * runtime has (its TestValidation and TestUnspecifiedDimensions points; docs/nnapi-rules.md),
 * against a real daemon:
 * - an operand whose byte size overflows 32 bits is refused by addOperand;
 * - a timeout of UINT64_MAX saturates: the compilation and the computations (sync, burst,
 *   async, fenced) succeed;
 * - a memory descriptor refuses a role whose per-channel scales differ from its first
 *   role's, and a scalar role once it has dimensions;
 * - ANeuralNetworksMemory_copy refuses a device memory never written, and any failed copy
 *   leaves its destination uninitialized;
 * - a fused activation out of range reaches execution, which fails with OP_FAILED;
 * - a temporary whose computed shape contradicts its declared one fails the execution
 *   with OP_FAILED. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/engine.h"
#include "tests/ndk/ndk_fixture.h"

#define OP_FAILED ANEURALNETWORKS_OP_FAILED

/* ---- addOperand --------------------------------------------------------------------------- */

static int add_tensor(int32_t type, uint32_t rank, const uint32_t *dims) {
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType t = {.type = type, .dimensionCount = rank, .dimensions = dims};
    int rc = ANeuralNetworksModel_addOperand(m, &t);
    ANeuralNetworksModel_free(m);
    return rc;
}

static void test_operand_byte_size(void **state) {
    (void)state;
    const uint32_t nine[] = {5, 4, 4, 786433, 5, 3, 16777216, 4, 5}; /* TestValidation's */
    const uint32_t four_gib[] = {65536, 16384}, under[] = {65535, 16384};
    const uint32_t partial[] = {0, 65536, 65536}, bytes[] = {65536, 65535};
    assert_int_equal(add_tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 9, nine), BAD_DATA);
    assert_int_equal(add_tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 2, four_gib), BAD_DATA);
    assert_int_equal(add_tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 2, under), OK);
    /* The dimensions known so far count. */
    assert_int_equal(add_tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 3, partial), BAD_DATA);
    /* Bytes, not elements: a one-byte type fits where a float does not. */
    assert_int_equal(add_tensor(ANEURALNETWORKS_TENSOR_BOOL8, 2, bytes), OK);
    assert_int_equal(add_tensor(ANEURALNETWORKS_TENSOR_FLOAT32, 2, bytes), BAD_DATA);
}

typedef struct ranked {
    uint32_t rank;
    int rc;
} ranked;

static void add_ranked(void *arg) {
    ranked *r = arg;
    uint32_t dims[ENG_MAX_RANK + 2];
    for (uint32_t i = 0; i < ENG_MAX_RANK + 2; i++)
        dims[i] = 1;
    r->rc = add_tensor(ANEURALNETWORKS_TENSOR_FLOAT32, r->rank, dims);
}

/* A rank over the engine's limit is refused by addOperand itself, the limit named (with
 * NND_DEBUG), not later at finish. */
static void test_operand_rank_limit(void **state) {
    (void)state;
    ranked at = {.rank = ENG_MAX_RANK}, over = {.rank = ENG_MAX_RANK + 1};
    add_ranked(&at);
    assert_int_equal(at.rc, OK);
    setenv("NND_DEBUG", "1", 1);
    const char *note = stderr_of(add_ranked, &over);
    unsetenv("NND_DEBUG");
    assert_int_equal(over.rc, BAD_DATA);
    char want[64];
    snprintf(want, sizeof want, "rank %u, over the limit of %u", ENG_MAX_RANK + 1, ENG_MAX_RANK);
    assert_non_null(strstr(note, want));
    /* A huge rank is refused before its dimensions are read. */
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    uint32_t one = 1;
    ANeuralNetworksOperandType t = {
        .type = ANEURALNETWORKS_TENSOR_FLOAT32, .dimensionCount = 100000, .dimensions = &one};
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), BAD_DATA);
    ANeuralNetworksModel_free(m);
}

/* ---- timeouts ------------------------------------------------------------------------------ */

static void test_timeout_maximum(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    const ANeuralNetworksDevice *devs[] = {device()};
    ANeuralNetworksCompilation *c;
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c), OK);
    assert_int_equal(ANeuralNetworksCompilation_setTimeout(c, UINT64_MAX), OK);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), OK);
    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 10.f);
    ANeuralNetworksBurst *burst;
    assert_int_equal(ANeuralNetworksBurst_create(c, &burst), OK);
    for (int mode = 0; mode < 4; mode++) { /* sync, burst, async, fenced */
        memset(out, 0, sizeof out);
        ANeuralNetworksExecution *e = add_execution(c, a, b, out);
        assert_int_equal(ANeuralNetworksExecution_setTimeout(e, UINT64_MAX), OK);
        ANeuralNetworksEvent *ev = NULL;
        if (mode == 0) {
            assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
        } else if (mode == 1) {
            assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), OK);
        } else {
            if (mode == 2)
                assert_int_equal(ANeuralNetworksExecution_startCompute(e, &ev), OK);
            else
                assert_int_equal(
                    ANeuralNetworksExecution_startComputeWithDependencies(e, NULL, 0, 0, &ev), OK);
            assert_int_equal(ANeuralNetworksEvent_wait(ev), OK);
            ANeuralNetworksEvent_free(ev);
        }
        assert_sum(a, b, out, N);
        ANeuralNetworksExecution_free(e);
    }
    ANeuralNetworksBurst_free(burst);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- memory descriptors -------------------------------------------------------------------- */

/* out = DEQUANTIZE(in), in a [2, 2] per-channel model input of the given channel scales. */
static ANeuralNetworksCompilation *dequantize_compilation(const float *scales,
                                                          ANeuralNetworksModel **model) {
    static const uint32_t dims[] = {2, 2};
    ANeuralNetworksOperandType in = {.type = ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL,
                                     .dimensionCount = 2,
                                     .dimensions = dims},
                               out = {.type = ANEURALNETWORKS_TENSOR_FLOAT32,
                                      .dimensionCount = 2,
                                      .dimensions = dims};
    ANeuralNetworksSymmPerChannelQuantParams q = {
        .channelDim = 0, .scaleCount = 2, .scales = scales};
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &in), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &out), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, 0, &q), OK);
    const uint32_t ins[] = {0}, outs[] = {1};
    assert_int_equal(
        ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_DEQUANTIZE, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    *model = m;
    return compile(m, false);
}

static void test_desc_channel_scales(void **state) {
    (void)state;
    const float s12[] = {1.f, 2.f}, s13[] = {1.f, 3.f};
    ANeuralNetworksModel *m1, *m2, *m3;
    ANeuralNetworksCompilation *c1 = dequantize_compilation(s12, &m1),
                               *c2 = dequantize_compilation(s13, &m2),
                               *c3 = dequantize_compilation(s12, &m3);
    ANeuralNetworksMemoryDesc *d;
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&d), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(d, c1, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(d, c2, 0, 1.f), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(d, c3, 0, 1.f), OK);
    ANeuralNetworksMemoryDesc_free(d);
    ANeuralNetworksCompilation *cs[] = {c1, c2, c3};
    ANeuralNetworksModel *ms[] = {m1, m2, m3};
    for (int k = 0; k < 3; k++) {
        ANeuralNetworksCompilation_free(cs[k]);
        ANeuralNetworksModel_free(ms[k]);
    }
}

/* out = a + b on [N] floats with the activation a model input (operand 2, input 2). */
static ANeuralNetworksModel *add_model_scalar_input(void) {
    ANeuralNetworksModel *m;
    ANeuralNetworksOperandType t = tensor(dims_n);
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    const uint32_t ins[] = {0, 1, 2}, outs[] = {3};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, ins, 1, outs),
                     OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 3, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    return m;
}

static void test_desc_scalar_with_dimensions(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model_scalar_input();
    ANeuralNetworksCompilation *c = compile(m, false);
    const uint32_t two[] = {2};
    ANeuralNetworksMemoryDesc *d;
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&d), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_setDimensions(d, 1, two), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(d, c, 2, 1.f), BAD_DATA);
    ANeuralNetworksMemoryDesc_free(d);
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&d), OK); /* without: the role is fine */
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(d, c, 2, 1.f), OK);
    ANeuralNetworksMemoryDesc_free(d);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- copies of device memories --------------------------------------------------------------- */

static ANeuralNetworksMemory *memfd_memory(size_t size) {
    int fd = memfd_create("test-ndk-validation", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    ANeuralNetworksMemory *mem;
    assert_int_equal(ANeuralNetworksMemory_createFromFd(size, PROT_READ | PROT_WRITE, fd, 0, &mem),
                     OK);
    close(fd); /* the memory holds its own */
    return mem;
}

/* A device memory in input 0's role of c. */
static ANeuralNetworksMemory *device_memory(ANeuralNetworksCompilation *c) {
    ANeuralNetworksMemoryDesc *d;
    ANeuralNetworksMemory *mem;
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&d), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addInputRole(d, c, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(d), OK);
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(d, &mem), OK);
    ANeuralNetworksMemoryDesc_free(d);
    return mem;
}

static void test_copy_uninitialized(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false);
    ANeuralNetworksMemory *dev1 = device_memory(c), *dev2 = device_memory(c);
    ANeuralNetworksMemory *good = memfd_memory(N * sizeof(float)),
                          *bad = memfd_memory((N + 1) * sizeof(float));
    /* Never written. */
    assert_int_equal(ANeuralNetworksMemory_copy(dev1, good), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_copy(dev2, dev1), BAD_DATA);
    /* Written, then a refused copy into it: uninitialized again. */
    assert_int_equal(ANeuralNetworksMemory_copy(good, dev1), OK);
    assert_int_equal(ANeuralNetworksMemory_copy(dev1, good), OK);
    assert_int_equal(ANeuralNetworksMemory_copy(bad, dev1), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_copy(dev1, good), BAD_DATA);
    /* A failed copy from a memory never written uninitializes its destination too. */
    assert_int_equal(ANeuralNetworksMemory_copy(good, dev1), OK);
    assert_int_equal(ANeuralNetworksMemory_copy(dev2, dev1), BAD_DATA);
    assert_int_equal(ANeuralNetworksMemory_copy(dev1, good), BAD_DATA);
    /* A copy onto itself succeeds, as the runtime's, even of a memory never written. */
    assert_int_equal(ANeuralNetworksMemory_copy(dev2, dev2), OK);
    ANeuralNetworksMemory *mems[] = {dev1, dev2, good, bad};
    for (int k = 0; k < 4; k++)
        ANeuralNetworksMemory_free(mems[k]);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- failures that reach execution ----------------------------------------------------------- */

/* out = a + b with b a constant and a fused activation code of act (TestValidation's
 * createModel: 999 when invalid): the model finishes and compiles. */
static ANeuralNetworksModel *add_model_activation(int32_t act) {
    ANeuralNetworksModel *m;
    ANeuralNetworksOperandType t = tensor(dims_n);
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    const float b[N] = {0};
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    const uint32_t ins[] = {0, 1, 2}, outs[] = {3};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, ins, 1, outs),
                     OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    return m;
}

static void test_activation_fails_at_execution(void **state) {
    (void)state;
    ANeuralNetworksModel *good_m = add_model_activation(ANEURALNETWORKS_FUSED_NONE),
                         *bad_m = add_model_activation(999);
    ANeuralNetworksCompilation *good = compile(good_m, false), *bad = compile(bad_m, false);
    /* A device memory written by the good model, then an output of the bad one. */
    ANeuralNetworksMemoryDesc *d;
    ANeuralNetworksMemory *mem, *host = memfd_memory(N * sizeof(float));
    assert_int_equal(ANeuralNetworksMemoryDesc_create(&d), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(d, good, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_addOutputRole(d, bad, 0, 1.f), OK);
    assert_int_equal(ANeuralNetworksMemoryDesc_finish(d), OK);
    assert_int_equal(ANeuralNetworksMemory_createFromDesc(d, &mem), OK);
    ANeuralNetworksMemoryDesc_free(d);
    float x[N] = {1, 2, 3, 4};
    ANeuralNetworksCompilation *cs[] = {good, bad};
    for (int k = 0; k < 2; k++) {
        ANeuralNetworksExecution *e;
        assert_int_equal(ANeuralNetworksExecution_create(cs[k], &e), OK);
        assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, x, sizeof x), OK);
        assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 0, 0), OK);
        assert_int_equal(ANeuralNetworksExecution_compute(e), k ? OP_FAILED : OK);
        ANeuralNetworksExecution_free(e);
        /* Written by the good run; the failed run leaves it uninitialized. */
        assert_int_equal(ANeuralNetworksMemory_copy(mem, host), k ? BAD_DATA : OK);
    }
    ANeuralNetworksMemory_free(mem);
    ANeuralNetworksMemory_free(host);
    ANeuralNetworksCompilation_free(good);
    ANeuralNetworksCompilation_free(bad);
    ANeuralNetworksModel_free(good_m);
    ANeuralNetworksModel_free(bad_m);
}

/* a [2, ?] + b [2, 1] (a constant) into a temporary declared [t0, ?], then RELU into the
 * output: the temporary computes to [2, columns of a]. */
static ANeuralNetworksModel *temporary_model(uint32_t t0) {
    const uint32_t a_dims[] = {2, 0}, b_dims[] = {2, 1}, t_dims[] = {t0, 0}, o_dims[] = {0, 0};
    ANeuralNetworksOperandType a = {.type = ANEURALNETWORKS_TENSOR_FLOAT32,
                                    .dimensionCount = 2,
                                    .dimensions = a_dims},
                               b = a, t = a, o = a;
    b.dimensions = b_dims;
    t.dimensions = t_dims;
    o.dimensions = o_dims;
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &a), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &b), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &o), OK);
    const float b_value[2] = {1, 2};
    int32_t act = ANEURALNETWORKS_FUSED_NONE;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, b_value, sizeof b_value), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    const uint32_t add_in[] = {0, 1, 2}, add_out[] = {3}, relu_out[] = {4}, ins[] = {0};
    assert_int_equal(
        ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, add_in, 1, add_out), OK);
    assert_int_equal(
        ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_RELU, 1, add_out, 1, relu_out), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, relu_out), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    return m;
}

static void test_temporary_contradicts_declared(void **state) {
    (void)state;
    for (uint32_t t0 = 2; t0 <= 3; t0++) {
        ANeuralNetworksModel *m = temporary_model(t0);
        ANeuralNetworksCompilation *c = compile(m, false);
        const uint32_t a_dims[] = {2, 1};
        ANeuralNetworksOperandType a = {
            .type = ANEURALNETWORKS_TENSOR_FLOAT32, .dimensionCount = 2, .dimensions = a_dims};
        float x[2] = {1, 2}, y[2] = {0};
        ANeuralNetworksExecution *e;
        assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
        assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, &a, x, sizeof x), OK);
        assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, y, sizeof y), OK);
        int rc = ANeuralNetworksExecution_compute(e);
        if (t0 == 2) { /* declared [2, ?]: it agrees */
            assert_int_equal(rc, OK);
            assert_true(y[0] == 2.f && y[1] == 4.f);
        } else {
            assert_int_equal(rc, OP_FAILED);
        }
        ANeuralNetworksExecution_free(e);
        ANeuralNetworksCompilation_free(c);
        ANeuralNetworksModel_free(m);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operand_byte_size),
        cmocka_unit_test(test_operand_rank_limit),
        cmocka_unit_test(test_timeout_maximum),
        cmocka_unit_test(test_desc_channel_scales),
        cmocka_unit_test(test_desc_scalar_with_dimensions),
        cmocka_unit_test(test_copy_uninitialized),
        cmocka_unit_test(test_activation_fails_at_execution),
        cmocka_unit_test(test_temporary_contradicts_declared),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

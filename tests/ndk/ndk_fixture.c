/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_fixture.c: what the test_ndk_* programs share. See ndk_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/ndk/ndk_fixture.h"

tst_daemon g_daemon;

const uint32_t dims_n[] = {N}, dims_big[] = {BIG}, dims_unknown[] = {0};

ANeuralNetworksOperandType tensor(const uint32_t *dims) {
    return (ANeuralNetworksOperandType){
        .type = ANEURALNETWORKS_TENSOR_FLOAT32, .dimensionCount = 1, .dimensions = dims};
}

const ANeuralNetworksOperandType k_int32 = {.type = ANEURALNETWORKS_INT32};

/* out = a + b on [n] floats: operands a 0, b 1, act 2, out 3. With b_const, b is a
 * constant holding b_value; with out_unknown, out's dimension is left unknown. Finished. */
ANeuralNetworksModel *add_model(uint32_t n, const float *b_value, bool out_unknown) {
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

ANeuralNetworksDevice *device(void) {
    ANeuralNetworksDevice *d;
    assert_int_equal(ANeuralNetworks_getDevice(0, &d), OK);
    return d;
}

ANeuralNetworksCompilation *compile(ANeuralNetworksModel *m, bool for_device) {
    ANeuralNetworksCompilation *c;
    const ANeuralNetworksDevice *devs[] = {device()};
    if (for_device)
        assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, 1, &c), OK);
    else
        assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), OK);
    return c;
}

void fill(float *v, size_t n, float base) {
    for (size_t i = 0; i < n; i++)
        v[i] = base + (float)i;
}

/* An execution of the two-input ADD model with a, b set and out bound. */
ANeuralNetworksExecution *add_execution(ANeuralNetworksCompilation *c, const float *a,
                                        const float *b, float *out) {
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, N * sizeof(float)), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, N * sizeof(float)), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, N * sizeof(float)), OK);
    return e;
}

void assert_sum(const float *a, const float *b, const float *out, size_t n) {
    for (size_t i = 0; i < n; i++)
        assert_true(out[i] == a[i] + b[i]);
}

int ndk_setup(void **state) {
    (void)state;
    const char *const quiet[] = {"--log-level", "warn", NULL};
    if (tst_daemon_start(&g_daemon, quiet) < 0) return -1;
    setenv("NND_SOCKET", g_daemon.socket_path, 1);
    return 0;
}

int ndk_teardown(void **state) {
    (void)state;
    if (g_daemon.pid > 0) tst_daemon_stop(&g_daemon); /* a test failed before the last */
    return 0;
}

/* Last: the shared daemon shuts down cleanly (a test, as cmocka ignores a failed teardown). */
void test_clean_stop(void **state) {
    (void)state;
    assert_int_equal(tst_daemon_stop(&g_daemon), 0);
}

const char *stderr_of(void (*f)(void *), void *arg) {
    static char text[4096];
    char path[] = "/tmp/nnd-test-stderr-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    f(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = 0;
    close(fd);
    return text;
}

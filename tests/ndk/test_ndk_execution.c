/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_execution (integration): the NNAPI NDK API of libnnd against a real daemon:
 * compilations and executions: documented misuse and result codes (reuse of an execution
 * BAD_STATE, ...), timing and timeouts, dynamic output shapes, asynchronous and dependent
 * computes with their events, and bursts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tests/ndk/ndk_fixture.h"

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compilation),         cmocka_unit_test(test_execution_arguments),
        cmocka_unit_test(test_timing_and_timeouts), cmocka_unit_test(test_dynamic_output),
        cmocka_unit_test(test_async_and_events),    cmocka_unit_test(test_burst),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

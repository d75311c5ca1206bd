/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_burst (integration): ANeuralNetworksBurst_* of libnnd's NNAPI layer against a
 * real daemon, watched through the daemon's burst counters (admin status). Burst computes
 * over memories and plain buffers give the right sums and map each memory once; freeing a
 * memory a burst cached makes the daemon forget it (at once, or when the last execution
 * using it is freed); freeing the burst drops its slots; the documented misuse codes; and
 * two threads sharing one burst get BAD_STATE, never a wrong result, when they overlap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "nnd/NeuralNetworks.h"

#define OK        ANEURALNETWORKS_NO_ERROR
#define NUL       ANEURALNETWORKS_UNEXPECTED_NULL
#define BAD_DATA  ANEURALNETWORKS_BAD_DATA
#define BAD_STATE ANEURALNETWORKS_BAD_STATE
#define N         4 /* floats of each tensor */
#define MEM_SIZE  4096

static tst_daemon g_daemon;

/* The daemon's live bursts, and the client memories it keeps mapped for them: burst slots
 * and registered memories (the NNAPI layer registers what its executions use). */
static void counts(double *bursts, double *held) {
    cJSON *st = tst_admin(g_daemon.state_dir, "status");
    assert_non_null(st);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(st, "bursts");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(st, "registered_memory");
    assert_non_null(b);
    assert_non_null(r);
    *bursts = cJSON_GetObjectItemCaseSensitive(b, "live")->valuedouble;
    *held = cJSON_GetObjectItemCaseSensitive(b, "slots")->valuedouble +
            cJSON_GetObjectItemCaseSensitive(r, "live")->valuedouble;
    cJSON_Delete(st);
}

static void expect_counts(double bursts, double held) {
    double b, h;
    counts(&b, &h);
    if (b != bursts || h != held)
        fail_msg("the daemon holds %g bursts and %g memories, wanted %g and %g", b, h, bursts,
                 held);
}

/* out = a + b on [N] floats, both inputs given at execution. */
static ANeuralNetworksCompilation *add_compilation(ANeuralNetworksModel **model) {
    static const uint32_t dims[] = {N};
    ANeuralNetworksOperandType t = {
        .type = ANEURALNETWORKS_TENSOR_FLOAT32, .dimensionCount = 1, .dimensions = dims};
    ANeuralNetworksOperandType i32 = {.type = ANEURALNETWORKS_INT32};
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &i32), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    int32_t act = ANEURALNETWORKS_FUSED_NONE;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    const uint32_t in[] = {0, 1, 2}, out[] = {3}, ins[] = {0, 1};
    assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, ins, 1, out), OK);
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    ANeuralNetworksCompilation *c;
    assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), OK);
    *model = m;
    return c;
}

/* A memory over a fresh memfd, mapped at *map. */
static ANeuralNetworksMemory *memory(float **map) {
    int fd = memfd_create("ndk-burst", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, MEM_SIZE), 0);
    *map = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(*map != MAP_FAILED);
    ANeuralNetworksMemory *mem;
    assert_int_equal(
        ANeuralNetworksMemory_createFromFd(MEM_SIZE, PROT_READ | PROT_WRITE, fd, 0, &mem), OK);
    close(fd); /* the memory keeps its own duplicate */
    return mem;
}

/* a from mem at offset 0, out into mem at offset 64, b from a plain buffer. */
static ANeuralNetworksExecution *mem_execution(ANeuralNetworksCompilation *c,
                                               ANeuralNetworksMemory *mem, const float *b) {
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    size_t bytes = N * sizeof(float);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, bytes), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, bytes), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, mem, 64, bytes), OK);
    return e;
}

static void expect_sum(const float *a, const float *b, const float *out) {
    for (int i = 0; i < N; i++)
        if (out[i] != a[i] + b[i])
            fail_msg("out[%d] = %g, wanted %g", i, (double)out[i], (double)(a[i] + b[i]));
}

/* Rounds over one memory and the compilation's staging memfd: two memories, each mapped
 * once (registered); freeing the memory unregisters it, freeing the compilation its
 * staging memfd. */
static void test_burst_slots(void **state) {
    (void)state;
    ANeuralNetworksModel *m;
    ANeuralNetworksCompilation *c = add_compilation(&m);
    double bursts0, slots0;
    counts(&bursts0, &slots0);
    ANeuralNetworksBurst *burst;
    assert_int_equal(ANeuralNetworksBurst_create(c, &burst), OK);
    expect_counts(bursts0 + 1, slots0);
    float *map;
    ANeuralNetworksMemory *mem = memory(&map);
    float b[N];
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++)
            map[i] = (float)(round * 10 + i), b[i] = 0.5f * (float)i - (float)round;
        ANeuralNetworksExecution *e = mem_execution(c, mem, b);
        assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), OK);
        expect_sum(map, b, map + 16);
        assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), BAD_STATE); /* done */
        ANeuralNetworksExecution_free(e);
        expect_counts(bursts0 + 1, slots0 + 2); /* the memory and the staging memfd */
    }
    /* Freed while an execution still holds it: forgotten when that execution goes. */
    ANeuralNetworksExecution *e = mem_execution(c, mem, b);
    assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), OK);
    ANeuralNetworksMemory_free(mem);
    expect_counts(bursts0 + 1, slots0 + 2);
    ANeuralNetworksExecution_free(e);
    expect_counts(bursts0 + 1, slots0 + 1);
    munmap(map, MEM_SIZE);

    /* A new memory is a new slot; freed with no execution holding it, forgotten at once. */
    mem = memory(&map);
    for (int i = 0; i < N; i++)
        map[i] = (float)(100 + i);
    e = mem_execution(c, mem, b);
    assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), OK);
    expect_sum(map, b, map + 16);
    ANeuralNetworksExecution_free(e);
    expect_counts(bursts0 + 1, slots0 + 2);
    ANeuralNetworksMemory_free(mem);
    expect_counts(bursts0 + 1, slots0 + 1);
    munmap(map, MEM_SIZE);

    /* Plain buffers only: the staging memfd's slot serves. */
    float a[N], out[N];
    for (int i = 0; i < N; i++)
        a[i] = (float)-i;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), OK);
    expect_sum(a, b, out);
    ANeuralNetworksExecution_free(e);
    expect_counts(bursts0 + 1, slots0 + 1);

    ANeuralNetworksBurst_free(burst);
    expect_counts(bursts0, slots0 + 1);
    ANeuralNetworksCompilation_free(c);
    expect_counts(bursts0, slots0);
    ANeuralNetworksModel_free(m);
}

/* The documented misuse codes. */
static void test_burst_misuse(void **state) {
    (void)state;
    ANeuralNetworksModel *m;
    ANeuralNetworksCompilation *c = add_compilation(&m), *c2;
    assert_int_equal(ANeuralNetworksCompilation_create(m, &c2), OK);
    ANeuralNetworksBurst *burst;
    assert_int_equal(ANeuralNetworksBurst_create(NULL, &burst), NUL);
    assert_int_equal(ANeuralNetworksBurst_create(c, NULL), NUL);
    assert_int_equal(ANeuralNetworksBurst_create(c2, &burst), BAD_STATE); /* not finished */
    assert_null(burst);
    assert_int_equal(ANeuralNetworksCompilation_finish(c2), OK);
    assert_int_equal(ANeuralNetworksBurst_create(c, &burst), OK);
    float a[N] = {1, 2, 3, 4}, b[N] = {4, 3, 2, 1}, out[N];
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c2, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), BAD_DATA); /* other model */
    assert_int_equal(ANeuralNetworksExecution_burstCompute(NULL, burst), NUL);
    assert_int_equal(ANeuralNetworksExecution_burstCompute(e, NULL), NUL);
    ANeuralNetworksExecution_free(e);
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), BAD_DATA); /* no output */
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), OK);
    expect_sum(a, b, out);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksBurst_free(burst);
    ANeuralNetworksBurst_free(NULL);
    ANeuralNetworksCompilation_free(c2);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* Two threads computing on one burst: overlapping calls are BAD_STATE (one at a time per
 * burst), every other call computes its own right sum. */
typedef struct racer {
    ANeuralNetworksCompilation *c;
    ANeuralNetworksBurst *burst;
    float base;
    int ok, busy, wrong;
} racer;

static atomic_int busy_seen;

static void *race(void *arg) {
    racer *r = arg;
    for (int i = 0; i < 20000 && !(atomic_load(&busy_seen) && r->ok >= 20); i++) {
        float a[N], b[N], out[N];
        for (int k = 0; k < N; k++)
            a[k] = r->base + (float)i, b[k] = (float)k, out[k] = -1;
        ANeuralNetworksExecution *e;
        if (ANeuralNetworksExecution_create(r->c, &e) != OK) {
            r->wrong++;
            break;
        }
        ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a);
        ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b);
        ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out);
        int rc = ANeuralNetworksExecution_burstCompute(e, r->burst);
        if (rc == BAD_STATE) {
            r->busy++;
            atomic_fetch_add(&busy_seen, 1);
            usleep(50); /* let the other finish rather than spin through the budget */
        } else if (rc == OK && out[N - 1] == a[N - 1] + b[N - 1] && out[0] == a[0]) {
            r->ok++;
        } else {
            r->wrong++;
        }
        ANeuralNetworksExecution_free(e);
    }
    return NULL;
}

static void test_burst_one_compute_at_a_time(void **state) {
    (void)state;
    ANeuralNetworksModel *m;
    ANeuralNetworksCompilation *c = add_compilation(&m);
    ANeuralNetworksBurst *burst;
    assert_int_equal(ANeuralNetworksBurst_create(c, &burst), OK);
    racer r[2] = {{.c = c, .burst = burst, .base = 0}, {.c = c, .burst = burst, .base = 1e4f}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(r[0].wrong + r[1].wrong, 0);
    assert_true(r[0].ok > 0 && r[1].ok > 0);
    assert_true(r[0].busy + r[1].busy > 0);
    ANeuralNetworksBurst_free(burst);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

static int setup(void **state) {
    (void)state;
    const char *const quiet[] = {"--log-level", "warn", NULL};
    if (tst_daemon_start(&g_daemon, quiet) < 0) return -1;
    setenv("NND_SOCKET", g_daemon.socket_path, 1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    return tst_daemon_stop(&g_daemon) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_slots),
        cmocka_unit_test(test_burst_misuse),
        cmocka_unit_test(test_burst_one_compute_at_a_time),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_threads: the NNAPI layer's one session under many threads, fenced executions
 * whose fences the daemon waits for, and the execution calls of feature level 5 (reusable
 * executions, padding, preferred alignment), against a real daemon; last, a daemon that
 * stops answering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tests/ndk/ndk_fixture.h"
#include "nnd/nnd.h"
#include "tests/support/wire.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static double daemon_figure(const char *group, const char *key) {
    cJSON *st = tst_admin_status(&g_daemon);
    const cJSON *g = group ? cJSON_GetObjectItemCaseSensitive(st, group) : st;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, key);
    assert_non_null(v);
    double x = v->valuedouble;
    cJSON_Delete(st);
    return x;
}

/* ---- sixteen threads, one connection --------------------------------------------------- */

typedef struct worker {
    ANeuralNetworksCompilation *c;
    int id, failures;
} worker;

static void *work(void *p) {
    worker *w = p;
    for (int i = 0; i < 60; i++) {
        float a[N], b[N], out[N];
        fill(a, N, (float)(w->id * 1000 + i));
        fill(b, N, 0.25f);
        ANeuralNetworksExecution *e;
        if (ANeuralNetworksExecution_create(w->c, &e) ||
            ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a) ||
            ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b) ||
            ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out) ||
            ANeuralNetworksExecution_compute(e)) {
            w->failures++;
        } else {
            for (int k = 0; k < N; k++)
                w->failures += out[k] != a[k] + b[k];
        }
        ANeuralNetworksExecution_free(e);
    }
    return NULL;
}

static void test_sixteen_threads(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false);
    enum { THREADS = 16 };
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.c = c, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    /* All of it went to the process's one session: its first connection and a lane of
     * each thread, joined to it (the model compiled on the first is found on every lane). */
    assert_int_equal((int)daemon_figure(NULL, "connections"), 1 + THREADS);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- memories of the ADD model ----------------------------------------------------------- */

typedef struct mem {
    int fd;
    float *map;
    ANeuralNetworksMemory *m;
} mem;

static mem mem_new(void) {
    mem x;
    void *map;
    x.fd = nnd_memfd_create("test-ndk", 4096, &map);
    assert_true(x.fd >= 0);
    x.map = map;
    assert_int_equal(
        ANeuralNetworksMemory_createFromFd(4096, PROT_READ | PROT_WRITE, x.fd, 0, &x.m), OK);
    return x;
}

static void mem_free(mem *x) {
    ANeuralNetworksMemory_free(x->m);
    munmap(x->map, 4096);
    close(x->fd);
}

/* An execution of the ADD model over memories: out = a + b. */
static ANeuralNetworksExecution *mem_execution(ANeuralNetworksCompilation *c, const mem *a,
                                               const mem *b, const mem *out) {
    ANeuralNetworksExecution *e;
    const size_t len = N * sizeof(float);
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, a->m, 0, len), OK);
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 1, NULL, b->m, 0, len), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, out->m, 0, len), OK);
    return e;
}

/* ---- fenced executions: the daemon waits for the fences ------------------------------------ */

static void test_fenced_chain(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, true);
    mem a = mem_new(), b = mem_new(), mid = mem_new(), out = mem_new();
    fill(a.map, N, 1.f);
    fill(b.map, N, 10.f);
    /* A fence of the application's, not signalled yet. */
    int user = eventfd(0, EFD_CLOEXEC);
    ANeuralNetworksEvent *gate, *ev1, *ev2;
    assert_int_equal(ANeuralNetworksEvent_createFromSyncFenceFd(user, &gate), OK);
    ANeuralNetworksExecution *e1 = mem_execution(c, &a, &b, &mid);
    ANeuralNetworksExecution *e2 = mem_execution(c, &mid, &b, &out);
    assert_int_equal(ANeuralNetworksExecution_setMeasureTiming(e2, true), OK);
    const ANeuralNetworksEvent *d1[] = {gate};
    uint64_t t0 = now_ns();
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e1, d1, 1, 0, &ev1), OK);
    const ANeuralNetworksEvent *d2[] = {ev1};
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e2, d2, 1, 0, &ev2), OK);
    /* Both calls returned at once: the fences are the daemon's to wait for. */
    assert_true(now_ns() - t0 < 2000000000ull);
    int fd = -1;
    assert_int_equal(ANeuralNetworksEvent_getSyncFenceFd(ev1, &fd), OK);
    assert_true(fd >= 0);
    close(fd);
    sleep_ms(50);
    for (int k = 0; k < N; k++)
        assert_true(mid.map[k] == 0 && out.map[k] == 0);
    /* Still running: a second compute is BAD_STATE. */
    assert_int_equal(ANeuralNetworksExecution_compute(e2), BAD_STATE);
    uint64_t one = 1;
    assert_int_equal(write(user, &one, sizeof one), (ssize_t)sizeof one);
    assert_int_equal(ANeuralNetworksEvent_wait(ev2), OK);
    assert_int_equal(ANeuralNetworksEvent_wait(ev1), OK);
    for (int k = 0; k < N; k++) {
        assert_true(mid.map[k] == a.map[k] + b.map[k]);
        assert_true(out.map[k] == mid.map[k] + b.map[k]);
    }
    uint64_t launched = 0, fenced = 0;
    assert_int_equal(
        ANeuralNetworksExecution_getDuration(e2, ANEURALNETWORKS_DURATION_IN_DRIVER, &launched),
        OK);
    assert_int_equal(ANeuralNetworksExecution_getDuration(
                         e2, ANEURALNETWORKS_FENCED_DURATION_IN_DRIVER, &fenced),
                     OK);
    assert_true(launched != UINT64_MAX && fenced != UINT64_MAX && fenced <= launched);
    /* Freed before its event is waited for: the event completes it. */
    ANeuralNetworksExecution *e3 = mem_execution(c, &a, &b, &out);
    ANeuralNetworksEvent *ev3;
    assert_int_equal(ANeuralNetworksExecution_startComputeWithDependencies(e3, NULL, 0, 0, &ev3),
                     OK);
    ANeuralNetworksExecution_free(e3);
    assert_int_equal(ANeuralNetworksEvent_wait(ev3), OK);
    ANeuralNetworksEvent_free(ev3);
    ANeuralNetworksEvent_free(ev2);
    ANeuralNetworksEvent_free(ev1);
    ANeuralNetworksEvent_free(gate);
    close(user);
    ANeuralNetworksExecution_free(e2);
    ANeuralNetworksExecution_free(e1);
    /* The daemon released every fenced execution. */
    mem_free(&a), mem_free(&b), mem_free(&mid), mem_free(&out);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- reusable executions ----------------------------------------------------------------- */

typedef struct racer {
    ANeuralNetworksExecution *e;
    int rc;
} racer;

static void *race(void *p) {
    racer *r = p;
    r->rc = ANeuralNetworksExecution_compute(r->e);
    return NULL;
}

static void test_reusable(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false);
    mem a = mem_new(), b = mem_new(), out = mem_new();
    fill(b.map, N, 0.5f);
    ANeuralNetworksExecution *e = mem_execution(c, &a, &b, &out);
    assert_int_equal(ANeuralNetworksExecution_setReusable(NULL, true), NUL);
    assert_int_equal(ANeuralNetworksExecution_setReusable(e, true), OK);
    ANeuralNetworksBurst *burst;
    assert_int_equal(ANeuralNetworksBurst_create(c, &burst), OK);
    double maps0 = daemon_figure("bursts", "slot_maps");
    double reg0 = daemon_figure("registered_memory", "registrations");
    /* Every way to compute, again and again, with new input each time. */
    for (int round = 0; round < 8; round++) {
        fill(a.map, N, (float)(round * 10));
        memset(out.map, 0, N * sizeof(float));
        ANeuralNetworksEvent *ev = NULL;
        switch (round % 4) {
        case 0: assert_int_equal(ANeuralNetworksExecution_compute(e), OK); break;
        case 1:
            assert_int_equal(ANeuralNetworksExecution_startCompute(e, &ev), OK);
            assert_int_equal(ANeuralNetworksEvent_wait(ev), OK);
            break;
        case 2: assert_int_equal(ANeuralNetworksExecution_burstCompute(e, burst), OK); break;
        default:
            assert_int_equal(
                ANeuralNetworksExecution_startComputeWithDependencies(e, NULL, 0, 0, &ev), OK);
            assert_int_equal(ANeuralNetworksEvent_wait(ev), OK);
        }
        ANeuralNetworksEvent_free(ev);
        assert_sum(a.map, b.map, out.map, N);
    }
    /* The daemon mapped the request's three memories once, when they were registered, not
     * once per computation nor per burst. */
    assert_int_equal((int)(daemon_figure("registered_memory", "registrations") - reg0), 3);
    assert_int_equal((int)(daemon_figure("bursts", "slot_maps") - maps0), 0);
    /* Bindings and settings stay as they were. */
    assert_int_equal(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, a.m, 0, 16),
                     BAD_STATE);
    assert_int_equal(ANeuralNetworksExecution_setReusable(e, false), BAD_STATE);
    /* Two threads at once: one computes, the other may find it busy. */
    racer r[2] = {{e, -1}, {e, -1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        assert_true(r[i].rc == OK || r[i].rc == BAD_STATE);
    }
    assert_true(r[0].rc == OK || r[1].rc == OK);
    ANeuralNetworksBurst_free(burst);
    ANeuralNetworksExecution_free(e);
    /* Not reusable (the default): once. */
    e = mem_execution(c, &a, &b, &out);
    assert_int_equal(ANeuralNetworksExecution_setReusable(e, false), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), BAD_STATE);
    ANeuralNetworksExecution_free(e);
    mem_free(&a), mem_free(&b), mem_free(&out);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- padding and preferred layout -------------------------------------------------------- */

static void test_padding_and_alignment(void **state) {
    (void)state;
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c;
    uint32_t v = 0;
    assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(c, 0, &v),
                     BAD_STATE);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), OK);
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(NULL, 0, &v),
                     NUL);
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput(c, 0, NULL),
                     NUL);
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(c, 2, &v),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput(c, 1, &v),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(c, 1, &v), OK);
    assert_true(v >= 1 && !(v & (v - 1))); /* a power of two */
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryPaddingForInput(c, 1, &v), OK);
    assert_true(v >= 1 && !(v & (v - 1)));
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryAlignmentForOutput(c, 0, &v), OK);
    assert_true(v >= 1 && !(v & (v - 1)));
    assert_int_equal(ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput(c, 0, &v), OK);
    assert_true(v >= 1 && !(v & (v - 1)));

    float a[N + 16], b[N], out[N + 16];
    fill(a, N + 16, 1.f);
    fill(b, N, 2.f);
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_enableInputAndOutputPadding(NULL, true), NUL);
    /* Without padding the length must be exact. */
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_enableInputAndOutputPadding(e, true), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, N * sizeof(float) - 4),
                     BAD_DATA);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), OK);
    /* Once an argument is set, padding is settled. */
    assert_int_equal(ANeuralNetworksExecution_enableInputAndOutputPadding(e, false), BAD_STATE);
    /* An argument is set once. */
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a), BAD_STATE);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b), OK);
    for (size_t k = 0; k < N + 16; k++)
        out[k] = -1;
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    assert_true(out[N] == -1); /* the padding is not the output's */
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* ---- a daemon that stops answering ------------------------------------------------------- */

/* Runs f with stderr going to a file; returns what was written there (static buffer). */
typedef struct timed {
    ANeuralNetworksExecution *e;
    int rc;
    uint64_t took;
} timed;

static void compute_timed(void *p) {
    timed *t = p;
    uint64_t t0 = now_ns();
    t->rc = ANeuralNetworksExecution_compute(t->e);
    t->took = now_ns() - t0;
}

static void finish_compilation(void *p) {
    ANeuralNetworksModel *m = p;
    ANeuralNetworksCompilation *c;
    assert_int_equal(ANeuralNetworksCompilation_create(m, &c), OK);
    int rc = ANeuralNetworksCompilation_finish(c);
    assert_true(rc == ANEURALNETWORKS_UNAVAILABLE_DEVICE || rc == ANEURALNETWORKS_DEAD_OBJECT);
    ANeuralNetworksCompilation_free(c);
}

static void test_stopped_daemon(void **state) {
    (void)state;
    tst_daemon d;
    const char *const quiet[] = {"--log-level", "warn", NULL};
    assert_int_equal(tst_daemon_start(&d, quiet), 0);
    setenv("NND_SOCKET", d.socket_path, 1); /* new work goes there */
    setenv("NND_DEBUG", "1", 1);
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, true);
    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 2.f);
    ANeuralNetworksExecution *e = add_execution(c, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    ANeuralNetworksExecution_free(e);
    int fds0 = wire_count_fds(0);

    assert_int_equal(kill(d.pid, SIGSTOP), 0);
    timed t = {.e = add_execution(c, a, b, out)};
    assert_int_equal(ANeuralNetworksExecution_setTimeout(t.e, 300000000ull), OK);
    const char *note = stderr_of(compute_timed, &t);
    print_message("# compute with a 300 ms timeout, daemon stopped: %d after %.0f ms; %s", t.rc,
                  (double)t.took / 1e6, note);
    assert_int_equal(t.rc, ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT);
    assert_true(t.took >= 300000000ull && t.took < 1300000000ull);
    assert_non_null(strstr(note, d.socket_path)); /* NND_DEBUG: one line naming the socket */
    ANeuralNetworksExecution_free(t.e);
    assert_int_equal(kill(d.pid, SIGCONT), 0);
    /* The connection goes on: the late reply is dropped. */
    e = add_execution(c, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    ANeuralNetworksExecution_free(e);
    assert_int_equal(wire_count_fds(0), fds0);
    ANeuralNetworksCompilation_free(c);

    /* No daemon there at all: the note names the socket tried. */
    setenv("NND_SOCKET", "/nonexistent-nnd/nnd.sock", 1);
    note = stderr_of(finish_compilation, m);
    assert_non_null(strstr(note, "/nonexistent-nnd/nnd.sock"));
    unsetenv("NND_DEBUG");
    setenv("NND_SOCKET", g_daemon.socket_path, 1);
    ANeuralNetworksModel_free(m);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixteen_threads), cmocka_unit_test(test_fenced_chain),
        cmocka_unit_test(test_reusable),        cmocka_unit_test(test_padding_and_alignment),
        cmocka_unit_test(test_stopped_daemon),  cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

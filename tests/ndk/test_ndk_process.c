/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_process (integration): the NNAPI NDK API of libnnd across processes (threads
 * are test_ndk_threads'): a fork() child, and, in a fresh copy of this program (fork +
 * exec of itself, since the library keeps one connection per process), a library that
 * never reached a daemon, a daemon that dies, and the example vendor extension. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/ndk/ndk_fixture.h"

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

/* Never reached a daemon: the device list is the built-in pair every daemon has (names and
 * types known without asking), the version and compilation say UNAVAILABLE_DEVICE;
 * building a model needs no daemon. */
static int child_unreachable(void) {
    setenv("NND_SOCKET", "/nonexistent/nnd.sock", 1);
    ANeuralNetworksDevice *d = device();
    int32_t type;
    const char *v;
    uint32_t n = 0;
    EXPECT(ANeuralNetworks_getDeviceCount(&n) == OK && n == 2);
    EXPECT(ANeuralNetworksDevice_getType(d, &type) == OK && type == ANEURALNETWORKS_DEVICE_CPU);
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
    tst_daemon d1, d2;
    const char *const quiet[] = {"--log-level", "warn", NULL};
    EXPECT(tst_daemon_start(&d1, quiet) == 0);
    setenv("NND_SOCKET", d1.socket_path, 1);
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c = compile(m, false), *c2;
    float a[N], b[N], out[N];
    fill(a, N, 1.f);
    fill(b, N, 1.f);
    ANeuralNetworksExecution *e = add_execution(c, a, b, out);
    EXPECT(ANeuralNetworksExecution_compute(e) == OK);
    ANeuralNetworksExecution_free(e);
    EXPECT(tst_daemon_stop(&d1) == 0);
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
    EXPECT(tst_daemon_start(&d2, quiet) == 0);
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
    EXPECT(tst_daemon_stop(&d2) == 0);
    return 0;
}

/* The example vendor extension through the NDK's extension calls: fibonacci(n), n an
 * extension INT64 scalar, into a float tensor whose size only the execution knows. Needs
 * a daemon that loads the plugin and lets this program use it. */
static int child_extensions(void) {
#ifdef TST_EXTENSIONS_DIR
    char plugin[512], list[300], exe[256];
    snprintf(plugin, sizeof plugin, "%s/libnnd_fibonacci.so", TST_EXTENSIONS_DIR);
    if (access(plugin, R_OK)) return 77; /* not built: skipped */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    EXPECT(n > 0);
    exe[n] = '\0';
    char dir[] = "/tmp/nnd-ndk-ext-XXXXXX";
    EXPECT(mkdtemp(dir));
    snprintf(list, sizeof list, "%s/allowlist", dir);
    FILE *f = fopen(list, "w");
    EXPECT(f && fprintf(f, "%s\n", exe) > 0 && fclose(f) == 0);
    tst_daemon d;
    const char *const args[] = {
        "--log-level", "warn", "--extensions-dir", TST_EXTENSIONS_DIR, "--extensions-allowlist",
        list,          NULL};
    EXPECT(tst_daemon_start(&d, args) == 0);
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
    EXPECT(tst_daemon_stop(&d) == 0);
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
        execl("/proc/self/exe", "test_ndk_process", "--child", name, (char *)NULL);
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

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--child"))
        return !strcmp(argv[2], "unreachable")   ? child_unreachable()
               : !strcmp(argv[2], "daemon-gone") ? child_daemon_gone()
               : !strcmp(argv[2], "extensions")  ? child_extensions()
                                                 : 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork),        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_daemon_gone), cmocka_unit_test(test_extensions),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

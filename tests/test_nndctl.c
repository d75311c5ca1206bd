/* test_nndctl: the nndctl command run as a subprocess against a real daemon: info, status,
 * conformance on the ADD and MUL vectors, a bad path, and events. */
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

#include "tests/harness.h"
#include "tests/subprocess.h"
#include "nnd/nnd.h"

static tst_daemon daemon_;

typedef tst_child child;

static child spawn(const char *const *args) {
    child ch = tst_spawn(NNDCTL_PATH, args, 0, false);
    assert_true(ch.pid > 0);
    return ch;
}

static int finish(child ch, char *out, size_t outlen, int timeout_ms) {
    return tst_finish(ch, out, outlen, timeout_ms);
}

static int run(const char *const *args, char *out, size_t outlen) {
    return finish(spawn(args), out, outlen, 120000);
}

static int setup(void **state) {
    (void)state;
    return tst_daemon_start(&daemon_, NULL);
}

static int teardown(void **state) {
    (void)state;
    if (daemon_.pid > 0) tst_daemon_stop(&daemon_); /* a test failed before the last */
    return 0;
}

static void test_info(void **state) {
    (void)state;
    static char out[1 << 16];
    const char *args[] = {"--socket", daemon_.socket_path, "--state-dir", daemon_.state_dir, "info",
                          NULL};
    assert_int_equal(run(args, out, sizeof out), 0);
    print_message("%s", out);
    assert_non_null(strstr(out, "version: "));
    assert_non_null(strstr(out, "device type: "));
    assert_non_null(strstr(out, "devices:\n  nnd-cpu "));
    assert_non_null(strstr(out, "\n  nnd-reference "));
    assert_non_null(strstr(out, "supported operation types: "));
}

static void test_status(void **state) {
    (void)state;
    static char out[1 << 16];
    const char *args[] = {"--state-dir", daemon_.state_dir, "status", NULL};
    assert_int_equal(run(args, out, sizeof out), 0);
    assert_true(strlen(out) > 0);
    const char *none[] = {"--state-dir", "/nonexistent", "status", NULL};
    assert_int_not_equal(run(none, out, sizeof out), 0);
}

/* Runs conformance on one vector file; expects exit 0 and "0 failed" in the closing line. */
static void conformance_file(const char *file) {
    static char out[1 << 20];
    const char *args[] = {"--socket", daemon_.socket_path, "conformance", "--jobs", "2", file,
                          NULL};
    int rc = run(args, out, sizeof out);
    print_message("%s", out);
    const char *last = strstr(out, "conformance: ");
    assert_non_null(last);
    unsigned passed = 0, failed = 1, skipped = 0;
    assert_int_equal(
        sscanf(last, "conformance: %u passed, %u failed, %u skipped", &passed, &failed, &skipped),
        3);
    assert_int_equal(failed, 0);
    assert_true(passed > 0);
    assert_int_equal(rc, 0);
}

static void test_conformance_add(void **state) {
    (void)state;
    conformance_file(NND_CONFORMANCE_DIR "/V1_0/add.json");
}

static void test_conformance_mul(void **state) {
    (void)state;
    conformance_file(NND_CONFORMANCE_DIR "/V1_0/mul.json");
}

static void test_conformance_bad_path(void **state) {
    (void)state;
    char out[4096];
    const char *args[] = {"--socket", daemon_.socket_path, "conformance", "/nonexistent.json",
                          NULL};
    assert_int_equal(run(args, out, sizeof out), 2);
    const char *usage[] = {"--socket", daemon_.socket_path, "frobnicate", NULL};
    assert_int_equal(run(usage, out, sizeof out), 2);
}

/* A subscriber sees the connect event of a new client, as one JSON line. */
static void test_events(void **state) {
    (void)state;
    static char out[1 << 16];
    const char *args[] = {"--state-dir", daemon_.state_dir, "events", "--count", "1", NULL};
    child ch = spawn(args);
    /* A subscription takes a moment to reach the publisher: keep making events until the
     * subscriber has one. */
    int rc = -1;
    for (int i = 0; i < 50; i++) {
        usleep(100 * 1000);
        char err[256];
        nnd_client *c = nnd_client_connect(daemon_.socket_path, "eventful", err, sizeof err);
        assert_non_null(c);
        nnd_client_close(c);
        int status;
        if (waitpid(ch.pid, &status, WNOHANG) == ch.pid) {
            rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
            ssize_t k = read(ch.out, out, sizeof out - 1);
            out[k > 0 ? k : 0] = 0;
            close(ch.out);
            break;
        }
    }
    if (rc == -1) rc = finish(ch, out, sizeof out, 100);
    assert_int_equal(rc, 0);
    print_message("%s", out);
    assert_true(out[0] == '{');
    char *nl = strchr(out, '\n');
    assert_non_null(nl);
    assert_true(nl[1] == 0);
}

/* Last: the daemon shuts down cleanly (a test, as cmocka ignores a failed teardown). */
static void test_clean_stop(void **state) {
    (void)state;
    assert_int_equal(tst_daemon_stop(&daemon_), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_conformance_add),
        cmocka_unit_test(test_conformance_mul),
        cmocka_unit_test(test_conformance_bad_path),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

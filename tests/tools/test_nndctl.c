/* SPDX-License-Identifier: Apache-2.0 */
/* test_nndctl: the nndctl command run as a subprocess against a real daemon: info and
 * status (summaries and --json), conformance on the ADD and MUL vectors, a bad path, and
 * events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "tests/support/subprocess.h"
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

/* The value at key of a JSON object, or fails naming the key. */
static const cJSON *field(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) fail_msg("no \"%s\" in the JSON", key);
    return v;
}

static const cJSON *device_named(const cJSON *devices, const char *name) {
    const cJSON *d;
    cJSON_ArrayForEach(d, devices) if (!strcmp(field(d, "name")->valuestring, name)) return d;
    fail_msg("no device %s", name);
    return NULL;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* info: one line per device with its own type; --json the same as JSON, floats as the
 * floats they are (exec_time 0.1, not 0.100000001490116). */
static void test_info(void **state) {
    (void)state;
    static char out[1 << 16];
    const char *args[] = {"--socket", daemon_.socket_path, "--state-dir", daemon_.state_dir, "info",
                          NULL};
    assert_int_equal(run(args, out, sizeof out), 0);
    print_message("%s", out);
    assert_non_null(strstr(out, "daemon       nnd "));
    assert_null(strstr(out, "device type"));
    assert_non_null(strstr(out, "devices      2\n  nnd-cpu        CPU          feature level 8, "));
    assert_non_null(strstr(out, "\n  nnd-reference  CPU          feature level 8, "));
    assert_non_null(strstr(out, "exec time 0.1\n"));
    assert_non_null(strstr(out, "operation types supported"));
    assert_true(count_lines(out) < 12);

    const char *json[] = {"--socket", daemon_.socket_path, "info", "--json", NULL};
    assert_int_equal(run(json, out, sizeof out), 0);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    assert_true(field(j, "supported_operation_types")->valuedouble > 100);
    const cJSON *cpu = device_named(field(j, "devices"), "nnd-cpu");
    assert_string_equal(field(cpu, "type")->valuestring, "CPU");
    assert_true(field(cpu, "exec_time")->valuedouble == 0.1);
    assert_int_equal(field(cpu, "feature_level")->valueint, 8);
    assert_int_equal(cJSON_GetArraySize(field(field(j, "capabilities"), "operand_performance")),
                     15);
    cJSON_Delete(j);
    const char *extra[] = {"--socket", daemon_.socket_path, "info", "--yaml", NULL};
    assert_int_equal(run(extra, out, sizeof out), 2);
}

/* status: a short summary with units and names; only histograms that counted something
 * (busy: after the conformance runs); --json the daemon's reply, every field. */
static void check_status(bool busy) {
    static char out[1 << 16];
    const char *args[] = {"--state-dir", daemon_.state_dir, "status", NULL};
    assert_int_equal(run(args, out, sizeof out), 0);
    print_message("%s", out);
    char line[600];
    snprintf(line, sizeof line, "\nsocket       %s\n", daemon_.socket_path);
    assert_non_null(strstr(out, line));
    assert_non_null(strstr(out, "\n  nnd-cpu        CPU          "));
    assert_non_null(strstr(out, "\n  nnd-reference  CPU          "));
    assert_non_null(strstr(out, " MiB resident"));
    assert_null(strstr(out, "0000000"));             /* no float noise */
    assert_null(strstr(out, "below"));               /* no raw histogram buckets */
    assert_null(strstr(out, "\nlatency      high")); /* nothing ran at high priority */
    assert_int_equal(strstr(out, "\nlatency      medium ") != NULL, busy);
    assert_true(count_lines(out) < 30);

    const char *json[] = {"--state-dir", daemon_.state_dir, "status", "--json", NULL};
    assert_int_equal(run(json, out, sizeof out), 0);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    assert_string_equal(field(j, "socket")->valuestring, daemon_.socket_path);
    const cJSON *cpu = device_named(field(j, "devices"), "nnd-cpu");
    assert_int_equal(field(cpu, "type")->valueint, 2); /* ANEURALNETWORKS_DEVICE_CPU */
    assert_true(field(cpu, "exec_time")->valuedouble == 0.1);
    const cJSON *medium = field(field(field(j, "scheduler"), "latency_us"), "medium");
    assert_int_equal(field(medium, "count")->valuedouble > 0, busy);
    assert_non_null(field(medium, "below")); /* the whole histogram */
    cJSON_Delete(j);
}

static void test_status(void **state) {
    (void)state;
    check_status(false);
    static char out[4096];
    const char *none[] = {"--state-dir", "/nonexistent", "status", NULL};
    assert_int_not_equal(run(none, out, sizeof out), 0);
    const char *extra[] = {"--state-dir", daemon_.state_dir, "status", "--all", NULL};
    assert_int_equal(run(extra, out, sizeof out), 2);
}

static void test_status_after_work(void **state) {
    (void)state;
    check_status(true);
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
    conformance_file(TST_CONFORMANCE_DIR "/V1_0/add.json");
}

static void test_conformance_mul(void **state) {
    (void)state;
    conformance_file(TST_CONFORMANCE_DIR "/V1_0/mul.json");
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
        cmocka_unit_test(test_status_after_work),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

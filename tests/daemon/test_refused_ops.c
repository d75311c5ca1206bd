/* SPDX-License-Identifier: Apache-2.0 */
/* test_refused_ops (integration): what GetSupportedOperations refused, as an operator sees
 * it, from a real daemon at --log-level debug. A client asks about an ADD (supported) and
 * twice about an OEM_OPERATION with no plugin to claim it (refused); then status counts
 * OEM_OPERATION twice and ADD not at all, `nndctl status` shows that count, `nndctl metrics`
 * has it as the counter nnd_refused_operations_total{operation="OEM_OPERATION"} and passes
 * promtool's check, and the log has one debug line per refusal naming the operation, its
 * operand types and the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/subprocess.h"
#include "tests/support/wire.h"

#define OEM_OPERATION 10000

static tst_daemon daemon_;
static char log_path[] = "/tmp/nnd-refused-log-XXXXXX";
static char out[1 << 20];

static int setup(void **state) {
    (void)state;
    int fd = mkstemp(log_path);
    if (fd < 0) return -1;
    close(fd);
    const char *args[] = {"--log-level", "debug", NULL};
    tst_daemon_opts o = {.extra_args = args, .log_path = log_path};
    return tst_daemon_start_opts(&daemon_, &o);
}

static int teardown(void **state) {
    (void)state;
    if (daemon_.pid > 0) tst_daemon_stop(&daemon_);
    unlink(log_path);
    return 0;
}

/* GetSupportedOperations on the one-operation model m; returns its flag. */
static bool supported(nnd_client *c, const wire_add_model *m) {
    bool flag = false;
    char err[256];
    int rc = nnd_client_supported_operations(c, &m->model, NULL, 0, &flag, 1, err, sizeof err);
    if (rc != 0) print_message("GetSupportedOperations: %s\n", err);
    assert_int_equal(rc, 0);
    return flag;
}

static void refusals_are_counted_shown_and_logged(void **state) {
    (void)state;
    char err[256];
    nnd_client *c = nnd_client_connect(daemon_.socket_path, "refused", err, sizeof err);
    assert_non_null(c);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    assert_true(supported(c, &m));
    m.op.type = OEM_OPERATION;
    assert_false(supported(c, &m));
    assert_false(supported(c, &m));
    nnd_client_close(c);

    cJSON *status = tst_admin_status(&daemon_);
    const cJSON *refused = cJSON_GetObjectItemCaseSensitive(status, "refused_operations");
    assert_true(cJSON_IsObject(refused));
    const cJSON *oem = cJSON_GetObjectItemCaseSensitive(refused, "OEM_OPERATION");
    assert_true(cJSON_IsNumber(oem));
    assert_int_equal(oem->valueint, 2);
    assert_int_equal(cJSON_GetArraySize(refused), 1); /* the ADD was not refused */
    cJSON_Delete(status);

    const char *st[] = {"--state-dir", daemon_.state_dir, "status", NULL};
    assert_int_equal(tst_run(NNDCTL_PATH, st, 0, false, out, sizeof out, 30000), 0);
    assert_non_null(
        strstr(out, "\nunsupported  OEM_OPERATION 2 (operations GetSupportedOperations"));

    const char *metrics[] = {"--state-dir", daemon_.state_dir, "metrics", NULL};
    assert_int_equal(tst_run(NNDCTL_PATH, metrics, 0, false, out, sizeof out, 30000), 0);
    assert_non_null(strstr(out, "\n# TYPE nnd_refused_operations_total counter\n"
                                "nnd_refused_operations_total{operation=\"OEM_OPERATION\"} 2\n"));

    size_t len = 0;
    char *log = (char *)tst_read_file(log_path, &len);
    assert_non_null(log);
    const char *line = "GetSupportedOperations refused operation 0 OEM_OPERATION "
                       "(TENSOR_FLOAT32, TENSOR_FLOAT32, INT32 -> TENSOR_FLOAT32): "
                       "operation 0: OEM_OPERATION is not supported without a plugin\n";
    char *first = strstr(log, line);
    assert_non_null(first);
    assert_non_null(strstr(first + 1, line)); /* once per refusal */
    assert_null(strstr(log, "refused operation 0 ADD"));
    free(log);

    tst_expect_promtool_ok(out);
}

static void clean_stop(void **state) {
    (void)state;
    assert_int_equal(tst_daemon_stop(&daemon_), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refusals_are_counted_shown_and_logged),
        cmocka_unit_test(clean_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

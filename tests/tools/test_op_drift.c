/* SPDX-License-Identifier: Apache-2.0 */
/* test_op_drift (integration): the bench's MobileNets, v1 and v2 in QUANT8 and INT8
 * (tests/support/mobilenet.h), operation by operation on both kernel sets. Each net is built
 * through the NNAPI names and run once through a daemon with NND_RECORD set, and the
 * recording is compared by nnd-conformance-local --compare (compare_local.h): every
 * operation alone, fed the reference kernels' own tensors, must give within one step on
 * the fast paths what it gives on the reference kernels. The tool's report (the first
 * operation where the whole model parts, every operation past the bound) is printed. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "schema/codes.h"
#include "tests/support/harness.h"
#include "tests/support/mobilenet.h"
#include "tests/support/mobilenet_nnapi.h"
#include "tests/support/subprocess.h"

static tst_daemon daemon_;
static char rec_dir[] = "/tmp/nnd-op-drift-XXXXXX";
#define MAX_FILES 16
static char seen[MAX_FILES][256];
static size_t n_seen;

static int start(void **state) {
    (void)state;
    if (!mkdtemp(rec_dir)) return -1;
    setenv("NND_RECORD", rec_dir, 1); /* read once, at libnnd's first call */
    unsetenv("NND_REFERENCE_KERNELS");
    if (tst_daemon_start(&daemon_, NULL) != 0) return -1;
    setenv("NND_SOCKET", daemon_.socket_path, 1);
    return 0;
}

static int stop(void **state) {
    (void)state;
    for (size_t i = 0; i < n_seen; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", rec_dir, seen[i]);
        unlink(path);
    }
    rmdir(rec_dir);
    return tst_daemon_stop(&daemon_);
}

/* The recording that appeared since the last call, into path. */
static bool new_recording(char *path, size_t len) {
    DIR *d = opendir(rec_dir);
    struct dirent *e;
    bool found = false;
    while (d && (e = readdir(d)) && !found) {
        if (!strstr(e->d_name, ".json")) continue;
        bool old = false;
        for (size_t i = 0; i < n_seen && !old; i++)
            old = strcmp(seen[i], e->d_name) == 0;
        if (old || n_seen == MAX_FILES) continue;
        snprintf(seen[n_seen++], sizeof seen[0], "%s", e->d_name);
        snprintf(path, len, "%s/%s", rec_dir, e->d_name);
        found = true;
    }
    if (d) closedir(d);
    return found;
}

static void within_one_step(int (*init)(bench_net *, int32_t), int32_t type, const char *name) {
    bench_net net;
    assert_int_equal(init(&net, type), 0);
    void *input = bench_net_input(&net);
    assert_non_null(input);
    bench_nnapi r;
    assert_int_equal(bench_nnapi_open(&r, &net, input), 0);
    assert_true(bench_nnapi_run(&r) > 0);
    bench_nnapi_close(&r); /* writes the recording */
    bench_net_free(&net);
    free(input);
    char path[4400];
    assert_true(new_recording(path, sizeof path));
    static char out[1 << 16];
    const char *args[] = {"--compare", path, NULL};
    int rc = tst_run(TST_CONFORMANCE_LOCAL, args, 0, true, out, sizeof out, 240000);
    print_message("%s:\n%s", name, out);
    assert_int_equal(rc, 0);
}

static void v1_quant8(void **state) {
    (void)state;
    within_one_step(bench_net_init, SCHEMA_TENSOR_QUANT8_ASYMM, "MobileNet v1 QUANT8");
}
static void v1_int8(void **state) {
    (void)state;
    within_one_step(bench_net_init, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, "MobileNet v1 INT8");
}
static void v2_quant8(void **state) {
    (void)state;
    within_one_step(bench_net_init_v2, SCHEMA_TENSOR_QUANT8_ASYMM, "MobileNet v2 QUANT8");
}
static void v2_int8(void **state) {
    (void)state;
    within_one_step(bench_net_init_v2, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, "MobileNet v2 INT8");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(v1_quant8),
        cmocka_unit_test(v1_int8),
        cmocka_unit_test(v2_quant8),
        cmocka_unit_test(v2_int8),
    };
    return cmocka_run_group_tests(tests, start, stop);
}

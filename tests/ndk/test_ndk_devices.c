/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_devices: the devices behind one daemon through the NNAPI layer and the wire.
 * getDeviceCount and getDevice list nnd-cpu and nnd-reference; createForDevices compiles
 * for exactly the devices named (the daemon's per-device counters say which ran it),
 * the fastest of several named, and the cache keeps one device's compilation from the
 * other's under one app token; a PrepareModel naming a device the daemon does not have,
 * or one twice, is INVALID_ARGUMENT naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/ndk/ndk_fixture.h"
#include "tests/support/wire.h"

/* A device's counter ("prepares", "executions") from a fresh status; -1 when absent. */
static double device_count(const char *name, const char *field) {
    cJSON *status = tst_admin_status(&g_daemon);
    double v = tst_status_device_figure(status, name, field);
    cJSON_Delete(status);
    return v;
}

static ANeuralNetworksDevice *named(const char *want) {
    uint32_t n = 0;
    assert_int_equal(ANeuralNetworks_getDeviceCount(&n), OK);
    for (uint32_t i = 0; i < n; i++) {
        ANeuralNetworksDevice *d;
        const char *name;
        assert_int_equal(ANeuralNetworks_getDevice(i, &d), OK);
        assert_int_equal(ANeuralNetworksDevice_getName(d, &name), OK);
        if (!strcmp(name, want)) return d;
    }
    fail_msg("no device %s", want);
    return NULL;
}

static void test_device_list(void **state) {
    (void)state;
    uint32_t n = 0;
    assert_int_equal(ANeuralNetworks_getDeviceCount(&n), OK);
    assert_int_equal(n, 2);
    static const char *const names[] = {"nnd-cpu", "nnd-reference"};
    for (uint32_t i = 0; i < n; i++) {
        ANeuralNetworksDevice *d, *again;
        const char *name;
        int32_t type;
        int64_t level;
        assert_int_equal(ANeuralNetworks_getDevice(i, &d), OK);
        assert_int_equal(ANeuralNetworks_getDevice(i, &again), OK);
        assert_ptr_equal(d, again);
        assert_int_equal(ANeuralNetworksDevice_getName(d, &name), OK);
        assert_string_equal(name, names[i]);
        assert_int_equal(ANeuralNetworksDevice_getType(d, &type), OK);
        assert_int_equal(type, ANEURALNETWORKS_DEVICE_CPU);
        assert_int_equal(ANeuralNetworksDevice_getFeatureLevel(d, &level), OK);
        assert_int_equal(level, ANEURALNETWORKS_FEATURE_LEVEL_8);
    }
    ANeuralNetworksDevice *d;
    assert_int_equal(ANeuralNetworks_getDevice(n, &d), BAD_DATA);
}

/* Compiles the ADD model for devs, runs it once and checks the sum. */
static void run_on(const ANeuralNetworksDevice *const *devs, uint32_t n_devs, const char *cache_dir,
                   const uint8_t *token) {
    ANeuralNetworksModel *m = add_model(N, NULL, false);
    ANeuralNetworksCompilation *c;
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(m, devs, n_devs, &c), OK);
    if (cache_dir) assert_int_equal(ANeuralNetworksCompilation_setCaching(c, cache_dir, token), OK);
    assert_int_equal(ANeuralNetworksCompilation_finish(c), OK);
    float a[N], b[N], out[N];
    fill(a, N, 1.f), fill(b, N, 10.f);
    ANeuralNetworksExecution *e = add_execution(c, a, b, out);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    assert_sum(a, b, out, N);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

static void test_reference_device_runs_the_model(void **state) {
    (void)state;
    double cpu = device_count("nnd-cpu", "prepares");
    double ref = device_count("nnd-reference", "prepares");
    double ref_runs = device_count("nnd-reference", "executions");
    const ANeuralNetworksDevice *devs[] = {named("nnd-reference")};
    run_on(devs, 1, NULL, NULL);
    assert_true(device_count("nnd-reference", "prepares") == ref + 1);
    assert_true(device_count("nnd-reference", "executions") == ref_runs + 1);
    assert_true(device_count("nnd-cpu", "prepares") == cpu);
}

static void test_fastest_of_those_named(void **state) {
    (void)state;
    double cpu = device_count("nnd-cpu", "prepares");
    double ref = device_count("nnd-reference", "prepares");
    const ANeuralNetworksDevice *devs[] = {named("nnd-reference"), named("nnd-cpu")};
    run_on(devs, 2, NULL, NULL);
    assert_true(device_count("nnd-cpu", "prepares") == cpu + 1);
    assert_true(device_count("nnd-reference", "prepares") == ref);
}

/* One app token, one cache directory, two devices: each compilation stays on its device,
 * the second time from the cache as much as the first. */
static void test_cache_keeps_devices_apart(void **state) {
    (void)state;
    char dir[] = "/tmp/nnd-devices-cache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN];
    memset(token, 7, sizeof token);
    const ANeuralNetworksDevice *cpu[] = {named("nnd-cpu")}, *ref[] = {named("nnd-reference")};
    for (int round = 0; round < 2; round++) {
        double c0 = device_count("nnd-cpu", "prepares");
        double r0 = device_count("nnd-reference", "prepares");
        run_on(cpu, 1, dir, token);
        assert_true(device_count("nnd-cpu", "prepares") == c0 + 1);
        run_on(ref, 1, dir, token);
        assert_true(device_count("nnd-reference", "prepares") == r0 + 1);
        assert_true(device_count("nnd-cpu", "prepares") == c0 + 1);
    }
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void expect_refused(char **devices, size_t n, const char *fragment) {
    int sock = tst_connect_raw(&g_daemon);
    assert_true(sock >= 0);
    assert_int_equal(wire_hello(sock, 1), 0);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
    pm.model = &m.model;
    pm.n_devices = n;
    pm.devices = devices;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 2;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &pm;
    Nnd__Reply *r = wire_call(sock, &req, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->status, NND__ERROR_STATUS__INVALID_ARGUMENT);
    if (!strstr(r->message, fragment)) fail_msg("\"%s\" lacks \"%s\"", r->message, fragment);
    wire_free(r);
    close(sock);
}

static void test_unknown_or_repeated_device_refused(void **state) {
    (void)state;
    char *unknown[] = {"nnd-cpu", "nnd-gpu"}, *twice[] = {"nnd-reference", "nnd-reference"};
    expect_refused(unknown, 2, "\"nnd-gpu\"");
    expect_refused(twice, 2, "twice");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_list),
        cmocka_unit_test(test_reference_device_runs_the_model),
        cmocka_unit_test(test_fastest_of_those_named),
        cmocka_unit_test(test_cache_keeps_devices_apart),
        cmocka_unit_test(test_unknown_or_repeated_device_refused),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}

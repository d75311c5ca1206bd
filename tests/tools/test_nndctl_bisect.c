/* SPDX-License-Identifier: Apache-2.0 */
/* test_nndctl_bisect (integration): nndctl conformance on the MobileNet v2 int8 real-model
 * case through a real daemon. --exact on nnd-reference: TensorFlow Lite's reference bits.
 * --bisect between nnd-reference and nnd-cpu: where the CPU has AVX-512 VNNI the fast
 * paths compute the reference's integers (docs/numerics.md) and every intermediate tensor
 * agrees; elsewhere they part at the first CONV_2D (one step, XNNPACK's single rounding
 * against TensorFlow Lite's two), a difference that stays when the operation runs alone.
 * The same device twice agrees; one device alone is a usage error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/harness.h"
#include "tests/support/subprocess.h"

static tst_daemon daemon_;

static int run(const char *const *args, char *out, size_t outlen) {
    return tst_run(NNDCTL_PATH, args, 0, true, out, outlen, 240000);
}

static int setup(void **state) {
    (void)state;
    return tst_daemon_start(&daemon_, NULL);
}

static int teardown(void **state) {
    (void)state;
    return tst_daemon_stop(&daemon_);
}

static void exact_on_reference(void **state) {
    (void)state;
    static char out[1 << 16];
    const char *args[] = {"--socket", daemon_.socket_path, "conformance", "--exact",
                          "--device", "nnd-reference",     TST_MNV2_INT8, NULL};
    int rc = run(args, out, sizeof out);
    print_message("%s", out);
    assert_int_equal(rc, 0);
}

/* Whether nnd-cpu's 8-bit convolutions are the engine's exact ones (AVX-512 VNNI). */
static bool cpu_has_vnni(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, " avx512_vnni") != NULL;
    if (f) fclose(f);
    return found;
}

static void bisect_reference_and_cpu(void **state) {
    (void)state;
    static char out[1 << 16];
    const char *args[] = {
        "--socket",      daemon_.socket_path, "conformance", "--bisect",    "--device",
        "nnd-reference", "--device",          "nnd-cpu",     TST_MNV2_INT8, NULL};
    int rc = run(args, out, sizeof out);
    print_message("%s", out);
    if (cpu_has_vnni()) {
        assert_int_equal(rc, 0);
        assert_non_null(strstr(out, "every intermediate tensor agrees"));
        return;
    }
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "first: operation 2 (CONV_2D) differs: max 1 steps"));
    assert_non_null(strstr(out, "alone, fed the same inputs: operation 2 (CONV_2D) differs"));
}

static void bisect_same_device_agrees(void **state) {
    (void)state;
    static char out[1 << 16];
    const char *args[] = {
        "--socket",      daemon_.socket_path, "conformance",   "--bisect",    "--device",
        "nnd-reference", "--device",          "nnd-reference", TST_MNV2_INT8, NULL};
    assert_int_equal(run(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "every intermediate tensor agrees"));
    const char *one[] = {"--socket", daemon_.socket_path, "conformance", "--bisect",
                         "--device", "nnd-cpu",           TST_MNV2_INT8, NULL};
    assert_int_equal(run(one, out, sizeof out), 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_on_reference),
        cmocka_unit_test(bisect_reference_and_cpu),
        cmocka_unit_test(bisect_same_device_agrees),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

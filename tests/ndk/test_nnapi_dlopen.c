/* SPDX-License-Identifier: Apache-2.0 */
/* test_nnapi_dlopen: libnnd found the way NNAPI delegates find the Android runtime:
 * dlopen("libneuralnetworks.so") with nothing but the library path set (ctest sets
 * LD_LIBRARY_PATH; this program does not link libnnd), then one dlsym per function.
 * Every function NeuralNetworks.h declares must resolve, from the library loaded under
 * that name, and a small ADD model must run through the resolved pointers against a real
 * daemon. Usage: test_nnapi_dlopen [HEADER] (default: the source tree's header). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/harness.h"
#include "nnd/NeuralNetworks.h"

#define MAX_NAMES 256
static const char *header_path = TST_NNAPI_HEADER;
static void *lib;

static bool ident_char(char c) {
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* The names of the functions the header declares: identifiers starting with
 * ANeuralNetworks followed by "(", outside comments. */
static size_t declared_functions(char names[][96], size_t max) {
    FILE *f = fopen(header_path, "r");
    assert_non_null(f);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '/' && text[i + 1] == '*') {
            char *end = strstr(text + i + 2, "*/");
            if (!end) break;
            i = (size_t)(end - text) + 1;
            continue;
        }
        if (strncmp(text + i, "ANeuralNetworks", 15) || (i && ident_char(text[i - 1]))) continue;
        size_t k = i;
        while (k < len && ident_char(text[k]))
            k++;
        if (text[k] == '(' && k - i < 96 && n < max) {
            memcpy(names[n], text + i, k - i);
            names[n++][k - i] = 0;
        }
        i = k;
    }
    return n;
}

static void every_declared_function_resolves(void **state) {
    (void)state;
    static char names[MAX_NAMES][96];
    size_t n = declared_functions(names, MAX_NAMES);
    /* Feature level 30 plus the extension calls: far more than this; fewer means the
     * scan above went wrong, not that the library is complete. */
    assert_true(n >= 60);
    size_t missing = 0;
    for (size_t i = 0; i < n; i++) {
        void *fn = dlsym(lib, names[i]);
        if (!fn) {
            fprintf(stderr, "not resolved: %s\n", names[i]);
            missing++;
            continue;
        }
        Dl_info info;
        assert_true(dladdr(fn, &info) != 0);
        if (!strstr(info.dli_fname, "libneuralnetworks.so")) {
            fprintf(stderr, "%s comes from %s\n", names[i], info.dli_fname);
            missing++;
        }
    }
    printf("%zu functions declared, %zu resolved from %s\n", n, n - missing, header_path);
    assert_int_equal(missing, 0);
}

/* Resolves one function into a pointer of the header's own type. */
#define RESOLVE(name) __typeof__(&name) p_##name = (__typeof__(&name))dlsym(lib, #name)

static void add_model_runs_through_the_pointers(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    setenv("NND_SOCKET", d.socket_path, 1);
    RESOLVE(ANeuralNetworks_getDeviceCount);
    RESOLVE(ANeuralNetworksModel_create);
    RESOLVE(ANeuralNetworksModel_addOperand);
    RESOLVE(ANeuralNetworksModel_setOperandValue);
    RESOLVE(ANeuralNetworksModel_addOperation);
    RESOLVE(ANeuralNetworksModel_identifyInputsAndOutputs);
    RESOLVE(ANeuralNetworksModel_finish);
    RESOLVE(ANeuralNetworksModel_free);
    RESOLVE(ANeuralNetworksCompilation_create);
    RESOLVE(ANeuralNetworksCompilation_finish);
    RESOLVE(ANeuralNetworksCompilation_free);
    RESOLVE(ANeuralNetworksExecution_create);
    RESOLVE(ANeuralNetworksExecution_setInput);
    RESOLVE(ANeuralNetworksExecution_setOutput);
    RESOLVE(ANeuralNetworksExecution_compute);
    RESOLVE(ANeuralNetworksExecution_free);

    uint32_t devices = 0;
    assert_int_equal(p_ANeuralNetworks_getDeviceCount(&devices), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(devices, 2); /* nnd-cpu and nnd-reference: the test daemon loads no drivers */
    ANeuralNetworksModel *m;
    assert_int_equal(p_ANeuralNetworksModel_create(&m), ANEURALNETWORKS_NO_ERROR);
    const uint32_t dims[] = {4};
    ANeuralNetworksOperandType tensor = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, dims, 0, 0};
    ANeuralNetworksOperandType scalar = {ANEURALNETWORKS_INT32, 0, NULL, 0, 0};
    for (int i = 0; i < 4; i++)
        assert_int_equal(p_ANeuralNetworksModel_addOperand(m, i == 2 ? &scalar : &tensor),
                         ANEURALNETWORKS_NO_ERROR);
    const int32_t none = ANEURALNETWORKS_FUSED_NONE;
    assert_int_equal(p_ANeuralNetworksModel_setOperandValue(m, 2, &none, sizeof none),
                     ANEURALNETWORKS_NO_ERROR);
    const uint32_t in[] = {0, 1, 2}, out[] = {3}, model_in[] = {0, 1};
    assert_int_equal(p_ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(p_ANeuralNetworksModel_identifyInputsAndOutputs(m, 2, model_in, 1, out),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(p_ANeuralNetworksModel_finish(m), ANEURALNETWORKS_NO_ERROR);
    ANeuralNetworksCompilation *c;
    assert_int_equal(p_ANeuralNetworksCompilation_create(m, &c), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(p_ANeuralNetworksCompilation_finish(c), ANEURALNETWORKS_NO_ERROR);
    ANeuralNetworksExecution *e;
    assert_int_equal(p_ANeuralNetworksExecution_create(c, &e), ANEURALNETWORKS_NO_ERROR);
    const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
    float sum[4] = {0};
    assert_int_equal(p_ANeuralNetworksExecution_setInput(e, 0, NULL, a, sizeof a),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(p_ANeuralNetworksExecution_setInput(e, 1, NULL, b, sizeof b),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(p_ANeuralNetworksExecution_setOutput(e, 0, NULL, sum, sizeof sum),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(p_ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_NO_ERROR);
    for (int i = 0; i < 4; i++)
        assert_true(sum[i] == a[i] + b[i]);
    p_ANeuralNetworksExecution_free(e);
    p_ANeuralNetworksCompilation_free(c);
    p_ANeuralNetworksModel_free(m);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

int main(int argc, char **argv) {
    if (argc > 1) header_path = argv[1];
    /* By name only, as an NNAPI delegate does: the library path decides which file. */
    lib = dlopen("libneuralnetworks.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen(\"libneuralnetworks.so\"): %s\n", dlerror());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_declared_function_resolves),
        cmocka_unit_test(add_model_runs_through_the_pointers),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* Not dlclose()d: libnnd keeps its connection thread state until exit, as in a
     * program that loaded it for its lifetime. */
    return failed;
}

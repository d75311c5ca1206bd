/* SPDX-License-Identifier: Apache-2.0 */
/* test_mobilenet (integration): the bench's MobileNet v1 (tests/support/mobilenet.h) built through
 * the NNAPI names in FLOAT32, FLOAT16, QUANT8 and INT8 (signed activations, per-channel
 * convolution weights) compiles and runs through a real daemon on the fast paths, and its
 * probabilities agree with a second daemon's that runs every step on the reference kernels
 * (NND_REFERENCE_KERNELS=1): FLOAT32 to 1e-4, FLOAT16 within the conformance vectors'
 * FP16 tolerance, the 8-bit types within two output steps and 30% (each layer may differ
 * by one step, and a logit step moves a probability by a quarter). The first class agrees
 * too where it stands out. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schema/codes.h"
#include "tests/support/harness.h"
#include "tests/support/mobilenet.h"
#include "tests/support/mobilenet_nnapi.h"

static tst_daemon fast, reference;

static int start(void **state) {
    (void)state;
    unsetenv("NND_REFERENCE_KERNELS");
    if (tst_daemon_start(&fast, NULL) != 0) return -1;
    setenv("NND_REFERENCE_KERNELS", "1", 1); /* inherited by this daemon only */
    int rc = tst_daemon_start(&reference, NULL);
    unsetenv("NND_REFERENCE_KERNELS");
    return rc;
}

static int stop(void **state) {
    (void)state;
    int a = tst_daemon_stop(&fast), b = tst_daemon_stop(&reference);
    return a || b ? -1 : 0;
}

/* Runs net once through the daemon d; its output copied to out. */
static void run_on(const tst_daemon *d, const bench_net *net, const void *input, void *out) {
    setenv("NND_SOCKET", d->socket_path, 1); /* libnnd connects to the daemon it names */
    bench_nnapi r;
    assert_int_equal(bench_nnapi_open(&r, net, input), 0);
    assert_true(bench_nnapi_run(&r) > 0);
    memcpy(out, bench_nnapi_output(&r), net->out_elems * net->elem_size);
    bench_nnapi_close(&r);
}

static size_t top_class(const bench_net *net, const void *out, double *second) {
    size_t best = 0;
    double top = -1;
    *second = -1;
    for (size_t i = 0; i < net->out_elems; i++) {
        double p = bench_net_output(net, out, i);
        if (p > top)
            *second = top, top = p, best = i;
        else if (p > *second)
            *second = p;
    }
    return best;
}

static void agrees_with_reference(int32_t type, double abs_tol, double rel_tol) {
    bench_net net;
    assert_int_equal(bench_net_init(&net, type), 0);
    void *input = bench_net_input(&net);
    size_t bytes = net.out_elems * net.elem_size;
    void *got = malloc(bytes), *want = malloc(bytes);
    assert_true(input && got && want);
    run_on(&fast, &net, input, got);
    run_on(&reference, &net, input, want);
    double worst = 0;
    for (size_t i = 0; i < net.out_elems; i++) {
        double x = bench_net_output(&net, want, i), y = bench_net_output(&net, got, i);
        worst = fmax(worst, fabs(x - y));
        if (!(fabs(x - y) <= abs_tol + rel_tol * fabs(x)))
            fail_msg("%s class %zu: reference %g, fast paths %g", bench_net_type_name(type), i, x,
                     y);
    }
    double second_want, second_got;
    size_t cw = top_class(&net, want, &second_want), cg = top_class(&net, got, &second_got);
    print_message("%s: probabilities differ by %.3g at most; first class %zu (p %.3f, next "
                  "%.3f), fast paths %zu\n",
                  bench_net_type_name(type), worst, cw, bench_net_output(&net, want, cw),
                  second_want, cg);
    /* A first class ahead by more than both sides' error is the same on both. */
    double lead = bench_net_output(&net, want, cw) - second_want;
    if (lead > 2 * (abs_tol + rel_tol * bench_net_output(&net, want, cw))) {
        assert_int_equal(cw, cg);
    }
    bench_net_free(&net);
    free(input), free(got), free(want);
}

static void float32_agrees(void **state) {
    (void)state;
    agrees_with_reference(SCHEMA_TENSOR_FLOAT32, 1e-4, 0);
}

static void float16_agrees(void **state) {
    (void)state;
    agrees_with_reference(SCHEMA_TENSOR_FLOAT16, 0.0048828125, 0.0048828125);
}

/* SOFTMAX outputs have steps of 1/256; its input, the logits, steps of 0.25, so one step
 * there (the rounding of one layer may move a logit by one) scales a probability by up to
 * e^0.25. */
#define Q8_ABS (2.0 / 256)
#define Q8_REL 0.3
static void quant8_agrees(void **state) {
    (void)state;
    agrees_with_reference(SCHEMA_TENSOR_QUANT8_ASYMM, Q8_ABS, Q8_REL);
}

static void int8_per_channel_agrees(void **state) {
    (void)state;
    agrees_with_reference(SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, Q8_ABS, Q8_REL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(float32_agrees), cmocka_unit_test(float16_agrees),
        cmocka_unit_test(quant8_agrees), cmocka_unit_test(int8_per_channel_agrees)};
    return cmocka_run_group_tests(tests, start, stop);
}

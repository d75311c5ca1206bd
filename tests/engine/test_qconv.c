/* SPDX-License-Identifier: Apache-2.0 */
/* test_qconv (unit): qconv.h's exact 8-bit convolutions against a plain loop of the
 * reference arithmetic (int32 sum of (x - zx) * (w - zw) plus bias, wrapping, then
 * eng_mul_by_quantized, the zero point and the clamp), byte for byte. Random CONV_2D
 * (1x1 on the input's own pixels, windows through im2col, strides, dilations, paddings),
 * DEPTHWISE_CONV_2D and FULLY_CONNECTED shapes, both signednesses, per-channel
 * multipliers from tiny to just below 1 (right shifts 0 to 31), extreme zero points and
 * clamps, and weights and inputs at the ends of their range, where sums wrap. On a CPU
 * without AVX-512 VNNI qconv takes nothing, and the test says so and checks only that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/ops_common/fixedpoint.h"
#include "engine/backends/xnnpack/qconv.h"

static uint32_t rnd(uint32_t n) {
    return (uint32_t)rand() % n;
}

/* A byte at the ends of the range one time in four, else anywhere. */
static uint8_t rnd_byte(void) {
    uint32_t r = rnd(8);
    return r == 0 ? 0 : r == 1 ? 255 : r == 2 ? 127 : r == 3 ? 128 : (uint8_t)rnd(256);
}

static int32_t stored(bool is_signed, const uint8_t *p, size_t i) {
    return is_signed ? (int8_t)p[i] : p[i];
}

/* The reference kernel's arithmetic on d, written out. */
static void expected(const eng_qconv_desc *d, const uint8_t *x, uint8_t *y) {
    const uint8_t *f = d->filter;
    uint32_t icg = d->depthwise ? 1 : d->in_c;
    for (uint32_t b = 0; b < d->batch; b++)
        for (uint32_t oy = 0; oy < d->out_h; oy++)
            for (uint32_t ox = 0; ox < d->out_w; ox++)
                for (uint32_t oc = 0; oc < d->out_c; oc++) {
                    uint32_t sum = 0;
                    for (uint32_t ky = 0; ky < d->fh; ky++)
                        for (uint32_t kx = 0; kx < d->fw; kx++) {
                            int64_t iy = (int64_t)oy * d->sh - d->pad_top + (int64_t)ky * d->dh;
                            int64_t ix = (int64_t)ox * d->sw - d->pad_left + (int64_t)kx * d->dw;
                            if (iy < 0 || ix < 0 || iy >= d->in_h || ix >= d->in_w) continue;
                            size_t px =
                                ((b * d->in_h + (size_t)iy) * d->in_w + (size_t)ix) * d->in_c;
                            for (uint32_t k = 0; k < icg; k++) {
                                uint32_t ic = d->depthwise ? oc : k;
                                size_t fi =
                                    d->depthwise
                                        ? ((size_t)ky * d->fw + kx) * d->out_c + oc
                                        : (((size_t)oc * d->fh + ky) * d->fw + kx) * d->in_c + k;
                                int32_t xv = stored(d->is_signed, x, px + ic) - d->in_zero;
                                int32_t wv = stored(d->is_signed, f, fi) - d->filter_zero;
                                sum += (uint32_t)(xv * wv);
                            }
                        }
                    int32_t acc = (int32_t)(sum + (uint32_t)d->bias[oc]);
                    int32_t v = eng_mul_by_quantized(acc, d->mult[oc], d->shift[oc]) + d->out_zero;
                    v = v < d->qlo ? d->qlo : v > d->qhi ? d->qhi : v;
                    y[((b * d->out_h + oy) * d->out_w + ox) * d->out_c + oc] = (uint8_t)v;
                }
}

enum { KIND_CONV, KIND_DW, KIND_FC };

/* One random case; returns whether qconv took it (and then checked it byte for byte). */
static bool one_case(int i, pthreadpool_t tp) {
    eng_qconv_desc d = {0};
    int kind = i % 3;
    d.is_signed = (i / 3) % 2;
    d.depthwise = kind == KIND_DW;
    d.batch = 1 + rnd(2);
    bool one = kind == KIND_FC || rnd(3) == 0;
    d.fh = one ? 1 : 1 + rnd(5), d.fw = one ? 1 : 1 + rnd(5);
    d.sh = kind == KIND_FC ? 1 : 1 + rnd(2), d.sw = kind == KIND_FC ? 1 : 1 + rnd(2);
    d.dh = kind == KIND_FC || rnd(3) ? 1 : 2, d.dw = kind == KIND_FC || rnd(3) ? 1 : 2;
    d.in_h = kind == KIND_FC ? 1 : 1 + rnd(12), d.in_w = kind == KIND_FC ? 1 : 1 + rnd(12);
    d.in_c = 1 + rnd(kind == KIND_FC ? 300 : 80);
    if (rnd(2)) d.in_c = (d.in_c + 3) / 4 * 4; /* plain rows where the window allows */
    d.out_c = d.depthwise ? d.in_c : 1 + rnd(70);
    d.pad_top = rnd(d.fh), d.pad_left = rnd(d.fw);
    int64_t span_h = (int64_t)d.in_h + 2 * d.pad_top - ((int64_t)d.fh - 1) * d.dh - 1;
    int64_t span_w = (int64_t)d.in_w + 2 * d.pad_left - ((int64_t)d.fw - 1) * d.dw - 1;
    if (span_h < 0 || span_w < 0) return one_case(i, tp); /* no output: another shape */
    d.out_h = (uint32_t)(span_h / d.sh + 1), d.out_w = (uint32_t)(span_w / d.sw + 1);
    size_t taps = (size_t)d.fh * d.fw;
    size_t nx = (size_t)d.batch * d.in_h * d.in_w * d.in_c;
    size_t nf = d.depthwise ? taps * d.out_c : (size_t)d.out_c * taps * d.in_c;
    size_t ny = (size_t)d.batch * d.out_h * d.out_w * d.out_c;
    uint8_t *x = malloc(nx), *f = malloc(nf), *want = malloc(ny), *got = malloc(ny);
    int32_t *bias = malloc(sizeof(int32_t) * d.out_c), *mult = malloc(sizeof(int32_t) * d.out_c);
    int *shift = malloc(sizeof(int) * d.out_c);
    assert_true(x && f && want && got && bias && mult && shift);
    for (size_t k = 0; k < nx; k++)
        x[k] = rnd_byte();
    for (size_t k = 0; k < nf; k++)
        f[k] = rnd_byte();
    bool wide = rnd(4) == 0; /* multipliers so small that large sums are needed */
    for (uint32_t n = 0; n < d.out_c; n++) {
        bias[n] = rnd(8) == 0 ? (int32_t)(rnd(2) ? INT32_MAX - rnd(1000) : INT32_MIN + rnd(1000))
                              : (int32_t)rnd(200001) - 100000;
        double m = wide ? 1e-7 * (1 + rnd(1000)) : 1e-4 * (1 + rnd(9999));
        if (rnd(20) == 0) m = 0.9999999;
        eng_quantize_multiplier(m, &mult[n], &shift[n]);
    }
    d.filter = f, d.bias = bias, d.mult = mult, d.shift = shift;
    d.filter_zero = d.is_signed ? 0 : (int32_t)rnd(256);
    int32_t lo = d.is_signed ? -128 : 0;
    d.in_zero = lo + (int32_t)rnd(256), d.out_zero = lo + (int32_t)rnd(256);
    d.qlo = lo + (int32_t)rnd(40), d.qhi = lo + 255 - (int32_t)rnd(40);
    eng_qconv *q = eng_qconv_create(&d);
    if (q) {
        size_t sb = eng_qconv_scratch_bytes(q);
        void *scratch = sb ? malloc(sb) : NULL;
        memset(got, 0xa5, ny);
        eng_qconv_run(q, x, got, scratch, tp, 0);
        expected(&d, x, want);
        for (size_t k = 0; k < ny; k++)
            if (want[k] != got[k])
                fail_msg("case %d (%s, %s, %ux%u in %ux%ux%u out %ux%ux%u): element %zu is %d, "
                         "the reference gives %d",
                         i,
                         kind == KIND_CONV ? "CONV_2D"
                         : kind == KIND_DW ? "DEPTHWISE"
                                           : "FC",
                         d.is_signed ? "signed" : "unsigned", d.fh, d.fw, d.in_h, d.in_w, d.in_c,
                         d.out_h, d.out_w, d.out_c, k, stored(d.is_signed, got, k),
                         stored(d.is_signed, want, k));
        free(scratch);
        eng_qconv_free(q);
    }
    free(x), free(f), free(want), free(got), free(bias), free(mult), free(shift);
    return q != NULL;
}

static void exact_on_random_convolutions(void **state) {
    (void)state;
    srand(40);
    pthreadpool_t tp = pthreadpool_create(2);
    int taken = 0, cases = 600;
    for (int i = 0; i < cases; i++)
        taken += one_case(i, i % 2 ? tp : NULL);
    pthreadpool_destroy(tp);
    print_message("qconv took %d of %d random convolutions\n", taken, cases);
    if (!taken)
        print_message("no AVX-512 VNNI here: qconv takes nothing, nothing compared\n");
    else
        assert_int_equal(taken, cases); /* every case is one qconv is meant to take */
}

/* What qconv must leave to XNNPACK: a left shift (multiplier of 1 or more). */
static void refuses_left_shift(void **state) {
    (void)state;
    uint8_t f[4] = {0};
    int32_t bias[1] = {0}, mult[1];
    int shift[1];
    eng_quantize_multiplier(1.5, mult, shift);
    eng_qconv_desc d = {.batch = 1,
                        .in_h = 1,
                        .in_w = 1,
                        .in_c = 4,
                        .out_h = 1,
                        .out_w = 1,
                        .out_c = 1,
                        .fh = 1,
                        .fw = 1,
                        .sh = 1,
                        .sw = 1,
                        .dh = 1,
                        .dw = 1,
                        .filter = f,
                        .bias = bias,
                        .mult = mult,
                        .shift = shift,
                        .qhi = 255};
    assert_null(eng_qconv_create(&d));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_on_random_convolutions),
        cmocka_unit_test(refuses_left_shift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

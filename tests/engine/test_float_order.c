/* SPDX-License-Identifier: Apache-2.0 */
/* test_float_order (unit): FLOAT32 reference kernels whose results depend on the order of
 * their float arithmetic give TensorFlow Lite's reference results to the bit
 * (docs/numerics.md). Each oracle below is TensorFlow Lite's loop written out in float: one
 * running total per output in its order, float exponentials and divisions, its cutoffs and
 * floors. Inputs span several powers of two, so that another order or a double
 * accumulator rounds differently somewhere (each case checks that one does: `differs`).
 * - CONV_2D: the total runs over window rows, columns, then input channels, product by
 *   product; the bias comes last.
 * - TRANSPOSE_CONV_2D: each output sums its input pixels in row order (TensorFlow Lite
 *   scatters them so), input channels within each.
 * - AVERAGE_POOL_2D and L2_POOL_2D: a float total in row order over the clipped window,
 *   divided by the count in float; small windows and one wider than the sliding path's
 *   threshold.
 * - MEAN: a float total in row order, divided by the count in float.
 * - SOFTMAX and LOG_SOFTMAX: float exponentials of (x - max) * beta, summed in order.
 * - LOGISTIC: 1 past 16.619..., e^x below -9.
 * - L2_NORMALIZATION: the norm is at least 1e-6. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/core/internal.h" /* schema_operation_name */
#include "tests/support/one_op.h"

#define F32 SCHEMA_TENSOR_FLOAT32

/* Deterministic values of mixed magnitude: sign, 2^-6..2^5 and a 24-bit mantissa. */
static uint32_t seed;
static float mixed(void) {
    seed = seed * 1664525u + 1013904223u;
    float mant = 1.f + (float)(seed >> 9) / (float)(1u << 23);
    int e = (int)((seed >> 3) % 12) - 6;
    return ldexpf((seed & 1) ? -mant : mant, e);
}
static void fill(float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        x[i] = mixed();
}

/* got must equal want to the bit; `alt`, the same computed another way (another order, a
 * double total), must differ somewhere, or the case does not tell the orders apart. */
static void expect_bits(const char *what, const float *got, const float *want, const float *alt,
                        size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)))
            fail_msg("%s: element %zu is %.9g, TensorFlow Lite's order gives %.9g", what, i,
                     (double)got[i], (double)want[i]);
    if (alt && !memcmp(alt, want, n * sizeof(float)))
        fail_msg("%s: the other order gives the same results: the case tells nothing", what);
}

static int setup(void **state) {
    (void)state;
    setenv("NND_REFERENCE_KERNELS", "1", 1); /* the kernels under test, not the fast paths */
    seed = 12345u;
    return 0;
}

/* ---- CONV_2D --------------------------------------------------------------------------- */

enum { CH = 3, CW = 5, CI = 8, CO = 4, CK = 3 }; /* 3 x 5 x 8 image, 4 filters of 3 x 3 */

static void conv_2d_sums_in_window_order(void **state) {
    (void)state;
    static float x[CH * CW * CI], w[CO * CK * CK * CI], b[CO], y[CH * CW * CO];
    static float want[CH * CW * CO], alt[CH * CW * CO];
    fill(x, CH * CW * CI), fill(w, CO * CK * CK * CI), fill(b, CO);
    /* SAME padding, stride 1: the window is centred on each pixel. */
    for (int oy = 0; oy < CH; oy++)
        for (int ox = 0; ox < CW; ox++)
            for (int oc = 0; oc < CO; oc++) {
                float total = 0.f, by_tap = 0.f;
                for (int ky = 0; ky < CK; ky++)
                    for (int kx = 0; kx < CK; kx++) {
                        int iy = oy + ky - 1, ix = ox + kx - 1;
                        if (iy < 0 || iy >= CH || ix < 0 || ix >= CW) continue;
                        float tap = 0.f;
                        for (int ic = 0; ic < CI; ic++) {
                            float p = x[(iy * CW + ix) * CI + ic] *
                                      w[((oc * CK + ky) * CK + kx) * CI + ic];
                            total += p;
                            tap += p;
                        }
                        by_tap += tap;
                    }
                want[(oy * CW + ox) * CO + oc] = total + b[oc];
                alt[(oy * CW + ox) * CO + oc] = by_tap + b[oc];
            }
    one_op m;
    one_op_start(&m, SCHEMA_OP_CONV_2D);
    one_op_in(&m, F32, 4, (uint32_t[]){1, CH, CW, CI}, 0.f, 0, x);
    one_op_constant(&m, F32, 4, (uint32_t[]){CO, CK, CK, CI}, w, sizeof w);
    one_op_constant(&m, F32, 1, (uint32_t[]){CO}, b, sizeof b);
    one_op_i32(&m, 1);                    /* SAME */
    one_op_i32(&m, 1), one_op_i32(&m, 1); /* strides w, h */
    one_op_i32(&m, 0);                    /* no activation */
    one_op_out(&m, F32, 4, (uint32_t[]){1, CH, CW, CO}, 0.f, 0);
    one_op_run(&m, y, sizeof y);
    expect_bits("CONV_2D", y, want, alt, CH * CW * CO);
}

/* ---- TRANSPOSE_CONV_2D ----------------------------------------------------------------- */

enum { TH = 3, TW = 4, TI = 6, TO = 3, TK = 3, TS = 2, TOH = 6, TOW = 8 };

/* TensorFlow Lite's scatter: every input pixel, in row order (or from the last back), adds
 * its products to the outputs it covers, its input channels in order. */
static void scatter(const float *x, const float *w, float *out, bool backwards) {
    memset(out, 0, sizeof(float) * TOH * TOW * TO);
    for (int p = 0; p < TH * TW; p++) {
        int q = backwards ? TH * TW - 1 - p : p, iy = q / TW, ix = q % TW;
        for (int ic = 0; ic < TI; ic++)
            for (int ky = 0; ky < TK; ky++)
                for (int kx = 0; kx < TK; kx++)
                    for (int oc = 0; oc < TO; oc++) {
                        int oy = iy * TS + ky, ox = ix * TS + kx;
                        if (oy >= TOH || ox >= TOW) continue;
                        out[(oy * TOW + ox) * TO + oc] +=
                            x[(iy * TW + ix) * TI + ic] * w[((oc * TK + ky) * TK + kx) * TI + ic];
                    }
    }
}

static void transpose_conv_sums_input_pixels_in_row_order(void **state) {
    (void)state;
    static float x[TH * TW * TI], w[TO * TK * TK * TI], b[TO], y[TOH * TOW * TO];
    static float want[TOH * TOW * TO], alt[TOH * TOW * TO];
    fill(x, TH * TW * TI), fill(w, TO * TK * TK * TI), fill(b, TO);
    /* Explicit padding: left 0, right 1, top 0, bottom 1 (output 2 * in), stride 2. */
    scatter(x, w, want, false);
    scatter(x, w, alt, true);
    for (int i = 0; i < TOH * TOW * TO; i++)
        want[i] += b[i % TO], alt[i] += b[i % TO];
    one_op m;
    one_op_start(&m, SCHEMA_OP_TRANSPOSE_CONV_2D);
    one_op_in(&m, F32, 4, (uint32_t[]){1, TH, TW, TI}, 0.f, 0, x);
    one_op_constant(&m, F32, 4, (uint32_t[]){TO, TK, TK, TI}, w, sizeof w);
    one_op_constant(&m, F32, 1, (uint32_t[]){TO}, b, sizeof b);
    one_op_i32(&m, 0), one_op_i32(&m, 1); /* padding left, right */
    one_op_i32(&m, 0), one_op_i32(&m, 1); /* top, bottom */
    one_op_i32(&m, TS), one_op_i32(&m, TS);
    one_op_i32(&m, 0);      /* no activation */
    one_op_bool(&m, false); /* NHWC */
    one_op_out(&m, F32, 4, (uint32_t[]){1, TOH, TOW, TO}, 0.f, 0);
    one_op_run(&m, y, sizeof y);
    expect_bits("TRANSPOSE_CONV_2D", y, want, alt, TOH * TOW * TO);
}

/* ---- AVERAGE_POOL_2D, L2_POOL_2D ------------------------------------------------------- */

/* A k x k window, stride 1, SAME padding, over an h x w x c image; l2: L2_POOL_2D. */
static void pool_case(int32_t code, int h, int w, int c, int k) {
    size_t n = (size_t)h * w * c;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    float *want = malloc(n * sizeof *want), *alt = malloc(n * sizeof *alt);
    assert_true(x && y && want && alt);
    fill(x, n);
    bool l2 = code == SCHEMA_OP_L2_POOL_2D;
    int before = (k - 1) / 2;
    for (int oy = 0; oy < h; oy++)
        for (int ox = 0; ox < w; ox++)
            for (int ch = 0; ch < c; ch++) {
                float total = 0.f;
                double wide = 0.0;
                int count = 0;
                for (int iy = oy - before; iy < oy - before + k; iy++)
                    for (int ix = ox - before; ix < ox - before + k; ix++) {
                        if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                        float v = x[((size_t)iy * w + ix) * c + ch];
                        total += l2 ? v * v : v;
                        wide += l2 ? (double)v * v : v;
                        count++;
                    }
                size_t o = ((size_t)oy * w + ox) * c + ch;
                want[o] = l2 ? sqrtf(total / (float)count) : total / (float)count;
                alt[o] = (float)(l2 ? sqrt(wide / count) : wide / count);
            }
    one_op m;
    one_op_start(&m, code);
    one_op_in(&m, F32, 4, (uint32_t[]){1, (uint32_t)h, (uint32_t)w, (uint32_t)c}, 0.f, 0, x);
    one_op_i32(&m, 1);                    /* SAME */
    one_op_i32(&m, 1), one_op_i32(&m, 1); /* strides */
    one_op_i32(&m, k), one_op_i32(&m, k); /* filter */
    one_op_i32(&m, 0);
    one_op_out(&m, F32, 4, (uint32_t[]){1, (uint32_t)h, (uint32_t)w, (uint32_t)c}, 0.f, 0);
    one_op_run(&m, y, n * sizeof *y);
    char what[64];
    snprintf(what, sizeof what, "%s %dx%d", schema_operation_name(code), k, k);
    expect_bits(what, y, want, alt, n);
    free(x), free(y), free(want), free(alt);
}

static void pools_total_in_float(void **state) {
    (void)state;
    pool_case(SCHEMA_OP_AVERAGE_POOL_2D, 5, 6, 4, 3);
    pool_case(SCHEMA_OP_AVERAGE_POOL_2D, 12, 12, 3, 11); /* 121 taps: past the sliding limit */
    pool_case(SCHEMA_OP_L2_POOL_2D, 5, 6, 4, 3);
}

/* ---- MEAN ------------------------------------------------------------------------------ */

static void mean_totals_in_row_order(void **state) {
    (void)state;
    /* [2, 5, 7, 3] over axes 1 and 2 (a global average), and over axis 3 alone. */
    enum { B = 2, H = 5, W = 7, C = 3 };
    static float x[B * H * W * C], y[B * C], want[B * C], alt[B * C];
    fill(x, B * H * W * C);
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++) {
            float total = 0.f, backwards = 0.f;
            for (int i = 0; i < H * W; i++) {
                total += x[(b * H * W + i) * C + c];
                backwards += x[(b * H * W + (H * W - 1 - i)) * C + c];
            }
            want[b * C + c] = total / (float)(H * W);
            alt[b * C + c] = backwards / (float)(H * W);
        }
    one_op m;
    one_op_start(&m, SCHEMA_OP_MEAN);
    one_op_in(&m, F32, 4, (uint32_t[]){B, H, W, C}, 0.f, 0, x);
    one_op_ints(&m, 2, (int32_t[]){1, 2});
    one_op_i32(&m, 0); /* keep_dims off */
    one_op_out(&m, F32, 2, (uint32_t[]){B, C}, 0.f, 0);
    one_op_run(&m, y, sizeof y);
    expect_bits("MEAN over H and W", y, want, alt, B * C);
}

/* ---- SOFTMAX, LOG_SOFTMAX -------------------------------------------------------------- */

enum { SR = 3, SD = 200 };

static void softmax_case(bool logs, float beta) {
    static float x[SR * SD], y[SR * SD], want[SR * SD], alt[SR * SD];
    fill(x, SR * SD);
    for (int r = 0; r < SR; r++) {
        const float *xr = x + r * SD;
        float max = xr[0];
        for (int k = 1; k < SD; k++)
            max = xr[k] > max ? xr[k] : max;
        float sum = 0.f;
        double wide = 0.0;
        for (int k = 0; k < SD; k++) {
            sum += expf((xr[k] - max) * beta);
            wide += exp((double)((xr[k] - max) * beta));
        }
        for (int k = 0; k < SD; k++) {
            float z = (xr[k] - max) * beta;
            want[r * SD + k] = logs ? z - logf(sum) : expf(z) / sum;
            alt[r * SD + k] = (float)(logs ? z - log(wide) : exp((double)z) / wide);
        }
    }
    one_op m;
    one_op_start(&m, logs ? SCHEMA_OP_LOG_SOFTMAX : SCHEMA_OP_SOFTMAX);
    one_op_in(&m, F32, 2, (uint32_t[]){SR, SD}, 0.f, 0, x);
    one_op_f32(&m, beta);
    if (logs) one_op_i32(&m, -1); /* axis */
    one_op_out(&m, F32, 2, (uint32_t[]){SR, SD}, 0.f, 0);
    one_op_run(&m, y, sizeof y);
    expect_bits(logs ? "LOG_SOFTMAX" : "SOFTMAX", y, want, alt, SR * SD);
}

static void softmax_sums_float_exponentials(void **state) {
    (void)state;
    softmax_case(false, 1.f);
    softmax_case(false, 0.37f);
    softmax_case(true, 1.f);
}

/* ---- LOGISTIC, L2_NORMALIZATION -------------------------------------------------------- */

static void logistic_has_tflites_cutoffs(void **state) {
    (void)state;
    /* Below -9 e^x, which 1 / (1 + e^-x) misses by a rounding here and there. */
    enum { N = 64 };
    static float x[N], y[N], want[N], alt[N];
    for (int i = 0; i < N; i++) {
        x[i] = -9.5f - 0.173f * (float)i;
        want[i] = expf(x[i]);
        alt[i] = 1.f / (1.f + expf(-x[i]));
    }
    one_op m;
    one_op_start(&m, SCHEMA_OP_LOGISTIC);
    one_op_in(&m, F32, 1, (uint32_t[]){N}, 0.f, 0, x);
    one_op_out(&m, F32, 1, (uint32_t[]){N}, 0.f, 0);
    one_op_run(&m, y, sizeof y);
    expect_bits("LOGISTIC", y, want, alt, N);
}

static void l2_normalization_floors_the_norm(void **state) {
    (void)state;
    /* Two rows whose norms are under 1e-6 (divided by 1e-6, not by the norm), one of zeros
     * and one of ordinary values. */
    static const float x[4][3] = {
        {1e-7f, -2e-7f, 3e-7f}, {4e-8f, 0.f, -1e-8f}, {0.f, 0.f, 0.f}, {0.5f, -1.5f, 2.25f}};
    float y[4][3], want[4][3], alt[4][3];
    for (int r = 0; r < 4; r++) {
        float sum = 0.f;
        for (int k = 0; k < 3; k++)
            sum += x[r][k] * x[r][k];
        float norm = sqrtf(sum);
        for (int k = 0; k < 3; k++) {
            want[r][k] = x[r][k] / (norm > 1e-6f ? norm : 1e-6f);
            alt[r][k] = norm > 0.f ? x[r][k] / norm : 0.f;
        }
    }
    one_op m;
    one_op_start(&m, SCHEMA_OP_L2_NORMALIZATION);
    one_op_in(&m, F32, 2, (uint32_t[]){4, 3}, 0.f, 0, x);
    one_op_out(&m, F32, 2, (uint32_t[]){4, 3}, 0.f, 0);
    one_op_run(&m, y, sizeof y);
    expect_bits("L2_NORMALIZATION", &y[0][0], &want[0][0], &alt[0][0], 12);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(conv_2d_sums_in_window_order, setup),
        cmocka_unit_test_setup(transpose_conv_sums_input_pixels_in_row_order, setup),
        cmocka_unit_test_setup(pools_total_in_float, setup),
        cmocka_unit_test_setup(mean_totals_in_row_order, setup),
        cmocka_unit_test_setup(softmax_sums_float_exponentials, setup),
        cmocka_unit_test_setup(logistic_has_tflites_cutoffs, setup),
        cmocka_unit_test_setup(l2_normalization_floors_the_norm, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

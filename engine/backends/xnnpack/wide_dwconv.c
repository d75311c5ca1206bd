/* SPDX-License-Identifier: Apache-2.0 */
/* wide_dwconv.c: direct depthwise convolution across channels. See wide_dwconv.h. */
#include "engine/backends/xnnpack/wide_dwconv.h"

#include <immintrin.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct eng_wide_dwconv {
    eng_wide_dwconv_desc d; /* filter and bias point into data */
    float data[];           /* filter [fh, fw, channels], then bias [channels] */
};

/* Where output pixel p's window starts in the input, and its image. */
typedef struct window_at {
    const float *image;
    int64_t iy0, ix0;
} window_at;

static window_at window_of(const eng_wide_dwconv_desc *d, const float *x, size_t p) {
    size_t ox = p % d->out_w, rest = p / d->out_w, oy = rest % d->out_h, n = rest / d->out_h;
    return (window_at){.image = x + n * d->in_h * d->in_w * d->channels,
                       .iy0 = (int64_t)oy * d->sh - d->pad_top,
                       .ix0 = (int64_t)ox * d->sw - d->pad_left};
}

/* The input at tap (ky, kx) of window w, offset by channel c0; NULL in the padding. */
static inline const float *tap_input(const eng_wide_dwconv_desc *d, window_at w, uint32_t ky,
                                     uint32_t kx, size_t c0) {
    int64_t iy = w.iy0 + (int64_t)ky * d->dh, ix = w.ix0 + (int64_t)kx * d->dw;
    if (iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w) return NULL;
    return w.image + ((size_t)iy * d->in_w + (size_t)ix) * d->channels + c0;
}

static inline const float *tap_filter(const eng_wide_dwconv_desc *d, uint32_t ky, uint32_t kx,
                                      size_t c0) {
    return d->filter + ((size_t)ky * d->fw + kx) * d->channels + c0;
}

/* ---- AVX2 with FMA: 64 channels in eight registers, then 8, then one at a time -------- */

#define WIDE_TARGET __attribute__((target("avx2,fma")))

WIDE_TARGET static void pixels_avx2(const eng_wide_dwconv *k, const float *x, float *y,
                                    size_t first, size_t count) {
    const eng_wide_dwconv_desc *d = &k->d;
    const __m256 lo = _mm256_set1_ps(d->lo), hi = _mm256_set1_ps(d->hi);
    for (size_t p = first; p < first + count; p++) {
        window_at w = window_of(d, x, p);
        float *out = y + p * d->channels;
        size_t c0 = 0;
        for (; c0 + 64 <= d->channels; c0 += 64) {
            __m256 acc[8];
            for (int v = 0; v < 8; v++)
                acc[v] = _mm256_loadu_ps(d->bias + c0 + 8 * v);
            for (uint32_t ky = 0; ky < d->fh; ky++)
                for (uint32_t kx = 0; kx < d->fw; kx++) {
                    const float *xi = tap_input(d, w, ky, kx, c0), *wi = tap_filter(d, ky, kx, c0);
                    if (!xi) continue;
                    for (int v = 0; v < 8; v++)
                        acc[v] = _mm256_fmadd_ps(_mm256_loadu_ps(xi + 8 * v),
                                                 _mm256_loadu_ps(wi + 8 * v), acc[v]);
                }
            for (int v = 0; v < 8; v++)
                _mm256_storeu_ps(out + c0 + 8 * v, _mm256_min_ps(_mm256_max_ps(acc[v], lo), hi));
        }
        for (; c0 + 8 <= d->channels; c0 += 8) {
            __m256 acc = _mm256_loadu_ps(d->bias + c0);
            for (uint32_t ky = 0; ky < d->fh; ky++)
                for (uint32_t kx = 0; kx < d->fw; kx++) {
                    const float *xi = tap_input(d, w, ky, kx, c0), *wi = tap_filter(d, ky, kx, c0);
                    if (xi) acc = _mm256_fmadd_ps(_mm256_loadu_ps(xi), _mm256_loadu_ps(wi), acc);
                }
            _mm256_storeu_ps(out + c0, _mm256_min_ps(_mm256_max_ps(acc, lo), hi));
        }
        for (; c0 < d->channels; c0++) {
            float acc = d->bias[c0];
            for (uint32_t ky = 0; ky < d->fh; ky++)
                for (uint32_t kx = 0; kx < d->fw; kx++) {
                    const float *xi = tap_input(d, w, ky, kx, c0), *wi = tap_filter(d, ky, kx, c0);
                    if (xi) acc = fmaf(*xi, *wi, acc);
                }
            out[c0] = fminf(fmaxf(acc, d->lo), d->hi);
        }
    }
}

/* ---- the operator ------------------------------------------------------------------------ */

eng_wide_dwconv *eng_wide_dwconv_create(const eng_wide_dwconv_desc *d) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return NULL;
    if (!d->batch || !d->in_h || !d->in_w || !d->out_h || !d->out_w || !d->channels || !d->fh ||
        !d->fw || !d->sh || !d->sw || !d->dh || !d->dw || !(d->lo <= d->hi))
        return NULL;
    size_t taps = (size_t)d->fh * d->fw, floats = (taps + 1) * d->channels;
    if (floats / d->channels != taps + 1 ||
        floats > SIZE_MAX / sizeof(float) - sizeof(eng_wide_dwconv))
        return NULL;
    eng_wide_dwconv *k = malloc(sizeof *k + floats * sizeof(float));
    if (!k) return NULL;
    k->d = *d;
    memcpy(k->data, d->filter, taps * d->channels * sizeof(float));
    memcpy(k->data + taps * d->channels, d->bias, d->channels * sizeof(float));
    k->d.filter = k->data;
    k->d.bias = k->data + taps * d->channels;
    return k;
}

typedef struct run_args {
    const eng_wide_dwconv *k;
    const float *x;
    float *y;
} run_args;

static void run_tile(void *ctx, size_t first, size_t count) {
    const run_args *a = ctx;
    pixels_avx2(a->k, a->x, a->y, first, count);
}

void eng_wide_dwconv_run(const eng_wide_dwconv *k, const float *x, float *y, pthreadpool_t tp,
                         uint32_t flags) {
    const eng_wide_dwconv_desc *d = &k->d;
    size_t pixels = (size_t)d->batch * d->out_h * d->out_w;
    size_t threads = tp ? pthreadpool_get_threads_count(tp) : 1;
    /* A few tiles per thread, so that one held up leaves its share to the others. */
    size_t tile = (pixels + 4 * threads - 1) / (4 * threads);
    run_args a = {.k = k, .x = x, .y = y};
    pthreadpool_parallelize_1d_tile_1d(tp, run_tile, &a, pixels, tile ? tile : 1, flags);
}

void eng_wide_dwconv_free(eng_wide_dwconv *k) {
    free(k);
}

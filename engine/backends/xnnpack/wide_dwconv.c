/* SPDX-License-Identifier: Apache-2.0 */
/* wide_dwconv.c: direct depthwise convolution across channels. See wide_dwconv.h. */
#include "engine/backends/xnnpack/wide_dwconv.h"

#include <immintrin.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops_common/conv_walk.h"

struct eng_wide_dwconv {
    eng_wide_dwconv_desc d; /* filter and bias point into data */
    float data[];           /* filter [fh, fw, channels], then bias [channels] */
};

/* Output pixel p's window: its image, where it starts, and its taps inside the image,
 * [ky0, ky1) by [kx0, kx1) (taps in the padding add nothing). */
typedef struct window_at {
    const float *image;
    int64_t iy0, ix0;
    uint32_t ky0, ky1, kx0, kx1;
} window_at;

static window_at window_of(const eng_wide_dwconv_desc *d, const float *x, size_t p) {
    size_t ox = p % d->out_w, rest = p / d->out_w, oy = rest % d->out_h, n = rest / d->out_h;
    window_at w = {.image = x + n * d->in_h * d->in_w * d->channels,
                   .iy0 = (int64_t)oy * d->sh - d->pad_top,
                   .ix0 = (int64_t)ox * d->sw - d->pad_left};
    eng_conv_tap_span(w.iy0, (int32_t)d->dh, d->fh, d->in_h, &w.ky0, &w.ky1);
    eng_conv_tap_span(w.ix0, (int32_t)d->dw, d->fw, d->in_w, &w.kx0, &w.kx1);
    return w;
}

/* ---- AVX2 with FMA ------------------------------------------------------------------------ */

#define WIDE_TARGET __attribute__((target("avx2,fma")))
#define WIDE_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline

/* Eight floats at p; with `masked`, only the lanes of `tail` (the others read as 0). */
WIDE_INLINE __m256 load8(const float *p, bool masked, __m256i tail) {
    return masked ? _mm256_maskload_ps(p, tail) : _mm256_loadu_ps(p);
}

/* Channels c0 to c0 + 8 nv of the output pixel at out with window w, in nv registers, the
 * last one's lanes those of `tail` when `masked`: the bias, then each inside tap in window
 * order by fused multiply-add, clamped to [lo, hi]. */
WIDE_INLINE void channel_block(const eng_wide_dwconv_desc *d, const window_at *w, float *out,
                               size_t c0, int nv, bool masked, __m256i tail) {
    __m256 acc[8];
    for (int v = 0; v < nv; v++)
        acc[v] = load8(d->bias + c0 + 8 * v, masked && v == nv - 1, tail);
    for (uint32_t ky = w->ky0; ky < w->ky1; ky++) {
        size_t row = (size_t)(w->iy0 + (int64_t)ky * d->dh) * d->in_w;
        for (uint32_t kx = w->kx0; kx < w->kx1; kx++) {
            const float *xi = w->image +
                              (row + (size_t)(w->ix0 + (int64_t)kx * d->dw)) * d->channels + c0,
                        *wi = d->filter + ((size_t)ky * d->fw + kx) * d->channels + c0;
            for (int v = 0; v < nv; v++) {
                bool m = masked && v == nv - 1;
                acc[v] =
                    _mm256_fmadd_ps(load8(xi + 8 * v, m, tail), load8(wi + 8 * v, m, tail), acc[v]);
            }
        }
    }
    const __m256 lo = _mm256_set1_ps(d->lo), hi = _mm256_set1_ps(d->hi);
    for (int v = 0; v < nv; v++) {
        __m256 r = _mm256_min_ps(_mm256_max_ps(acc[v], lo), hi);
        if (masked && v == nv - 1)
            _mm256_maskstore_ps(out + c0 + 8 * v, tail, r);
        else
            _mm256_storeu_ps(out + c0 + 8 * v, r);
    }
}

/* Output pixels first to first + count: 64 channels in eight registers, then 8 in one,
 * then the last 1 to 7 in one with a lane mask. */
WIDE_TARGET static void pixels_avx2(const eng_wide_dwconv *k, const float *x, float *y,
                                    size_t first, size_t count) {
    const eng_wide_dwconv_desc *d = &k->d;
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(d->channels % 8)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (size_t p = first; p < first + count; p++) {
        window_at w = window_of(d, x, p);
        float *out = y + p * d->channels;
        size_t c0 = 0;
        for (; c0 + 64 <= d->channels; c0 += 64)
            channel_block(d, &w, out, c0, 8, false, tail);
        for (; c0 + 8 <= d->channels; c0 += 8)
            channel_block(d, &w, out, c0, 1, false, tail);
        if (c0 < d->channels) channel_block(d, &w, out, c0, 1, true, tail);
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

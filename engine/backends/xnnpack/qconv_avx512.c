/* SPDX-License-Identifier: Apache-2.0 */
/* qconv_avx512.c: qconv's vector kernels (qconv_kernels.h) on AVX-512 with VNNI, compiled
 * for that target function by function and called only where the CPU has it. */
#include <immintrin.h>
#include <string.h>

#include "engine/backends/xnnpack/qconv_kernels.h"

#define QCONV_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

bool eng_qconv_avx512_usable(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vnni");
}

/* Sixteen accumulators of channels n0 .. n0 + 15 to stored values: the two roundings in
 * int64 lanes, even channels then odd ones (qconv_kernels.h), the zero point, the clamp. */
QCONV_TARGET static inline __m128i requant16(const struct eng_qconv *q, __m512i acc, uint32_t n0) {
    const __m512i lim = _mm512_set1_epi64(-(1ll << 30));
    __m512i m = _mm512_loadu_si512(q->mult + n0);
    __m512i pe = _mm512_mul_epi32(acc, m);
    __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), _mm512_srli_epi64(m, 32));
    __mmask8 ne = _mm512_cmplt_epi64_mask(pe, lim), no = _mm512_cmplt_epi64_mask(po, lim);
    pe = _mm512_add_epi64(pe, _mm512_loadu_si512(q->nudge + n0));
    po = _mm512_add_epi64(po, _mm512_loadu_si512(q->nudge + n0 + 8));
    pe = _mm512_mask_sub_epi64(pe, ne, pe, _mm512_loadu_si512(q->neg_fix + n0));
    po = _mm512_mask_sub_epi64(po, no, po, _mm512_loadu_si512(q->neg_fix + n0 + 8));
    pe = _mm512_srav_epi64(pe, _mm512_loadu_si512(q->total_shift + n0));
    po = _mm512_srav_epi64(po, _mm512_loadu_si512(q->total_shift + n0 + 8));
    __m512i r = _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
    r = _mm512_add_epi32(r, _mm512_set1_epi32(q->d.out_zero));
    r = _mm512_max_epi32(r, _mm512_set1_epi32(q->d.qlo));
    r = _mm512_min_epi32(r, _mm512_set1_epi32(q->d.qhi));
    return _mm512_cvtepi32_epi8(r); /* in range: truncation keeps the stored byte */
}

static inline __mmask16 lanes(uint32_t n0, uint32_t n) {
    return n0 + 16 <= n ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - n0)) - 1);
}

/* nb vectors of 16 channels; signed inputs are moved to unsigned (x + 128, the weights'
 * sums folded into colconst) because the dot product takes unsigned by signed bytes. */
QCONV_TARGET static inline __attribute__((always_inline)) void
gemm_tile(const struct eng_qconv *q, const uint8_t *const rows[QCONV_MR],
          const int32_t row_terms[QCONV_MR], uint32_t nrows, uint32_t n0, uint8_t *y, size_t ys,
          int nb, bool flip) {
    __m512i acc[QCONV_MR][2];
    __m512i c0 = _mm512_loadu_si512(q->colconst + n0);
    __m512i c1 = nb > 1 ? _mm512_loadu_si512(q->colconst + n0 + 16) : _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int r = 0; r < QCONV_MR; r++) {
        __m512i t = _mm512_set1_epi32(row_terms[r]);
        acc[r][0] = _mm512_add_epi32(c0, t);
        acc[r][1] = _mm512_add_epi32(c1, t);
    }
    size_t block = (size_t)q->kp * 16;
    const int8_t *b0 = q->w + (size_t)(n0 / 16) * block, *b1 = b0 + block;
    const __m512i sign = _mm512_set1_epi32((int32_t)0x80808080u);
    for (uint32_t k = 0; k < q->kp; k += 4) {
        __m512i w0 = _mm512_loadu_si512(b0 + (size_t)k * 16);
        __m512i w1 = nb > 1 ? _mm512_loadu_si512(b1 + (size_t)k * 16) : _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int r = 0; r < QCONV_MR; r++) {
            int32_t v;
            memcpy(&v, rows[r] + k, 4);
            __m512i a = _mm512_set1_epi32(v);
            if (flip) a = _mm512_xor_si512(a, sign);
            acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], a, w0);
            if (nb > 1) acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], a, w1);
        }
    }
    uint32_t n = q->d.out_c;
    for (uint32_t r = 0; r < nrows; r++)
        for (int h = 0; h < nb && n0 + 16 * (uint32_t)h < n; h++) {
            uint32_t c = n0 + 16 * (uint32_t)h;
            _mm_mask_storeu_epi8(y + r * ys + c, lanes(c, n), requant16(q, acc[r][h], c));
        }
}

QCONV_TARGET void eng_qconv_gemm_avx512(const struct eng_qconv *q,
                                        const uint8_t *const rows[QCONV_MR],
                                        const int32_t row_terms[QCONV_MR], uint32_t nrows,
                                        uint32_t n0, uint8_t *y, size_t ys) {
    bool two = n0 + 16 < q->d.out_c;
    if (q->d.is_signed) {
        if (two)
            gemm_tile(q, rows, row_terms, nrows, n0, y, ys, 2, true);
        else
            gemm_tile(q, rows, row_terms, nrows, n0, y, ys, 1, true);
    } else {
        if (two)
            gemm_tile(q, rows, row_terms, nrows, n0, y, ys, 2, false);
        else
            gemm_tile(q, rows, row_terms, nrows, n0, y, ys, 1, false);
    }
}

QCONV_TARGET static inline __m512i widen16(const uint8_t *p, __mmask16 m, bool is_signed) {
    __m128i v = _mm_maskz_loadu_epi8(m, p);
    return is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
}

QCONV_TARGET void eng_qconv_dw_avx512(const struct eng_qconv *q, const uint8_t *const *taps,
                                      uint8_t *y) {
    uint32_t n = q->d.out_c;
    bool s = q->d.is_signed;
    for (uint32_t c = 0; c < n; c += 16) {
        __mmask16 m = lanes(c, n);
        __m512i acc = _mm512_loadu_si512(q->colconst + c);
        const int32_t *w = q->w32 + c;
        for (uint32_t t = 0; t < q->taps; t++, w += q->np)
            acc = _mm512_add_epi32(
                acc, _mm512_mullo_epi32(widen16(taps[t] + c, m, s), _mm512_loadu_si512(w)));
        _mm_mask_storeu_epi8(y + c, m, requant16(q, acc, c));
    }
}

QCONV_TARGET uint32_t eng_qconv_sum_avx512(const uint8_t *p, size_t n) {
    __m512i acc = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        acc = _mm512_add_epi64(acc,
                               _mm512_sad_epu8(_mm512_loadu_si512(p + i), _mm512_setzero_si512()));
    if (i < n) {
        __mmask64 m = (__mmask64)((~0ull) >> (64 - (n - i)));
        acc = _mm512_add_epi64(
            acc, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(m, p + i), _mm512_setzero_si512()));
    }
    return (uint32_t)_mm512_reduce_add_epi64(acc);
}

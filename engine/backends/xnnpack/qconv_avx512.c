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

/* The requantization of channels n0 .. n0 + 15, loaded once for many accumulators: even
 * channels then odd ones in the int64 lanes (qconv_kernels.h). */
typedef struct rq16 {
    __m512i m, m_odd, nudge_e, nudge_o, fix_e, fix_o, shift_e, shift_o, zo, lo, hi;
} rq16;

QCONV_TARGET static inline rq16 rq16_load(const struct eng_qconv *q, uint32_t n0) {
    rq16 r;
    r.m = _mm512_loadu_si512(q->mult + n0);
    r.m_odd = _mm512_srli_epi64(r.m, 32);
    r.nudge_e = _mm512_loadu_si512(q->nudge + n0);
    r.nudge_o = _mm512_loadu_si512(q->nudge + n0 + 8);
    r.fix_e = _mm512_loadu_si512(q->neg_fix + n0);
    r.fix_o = _mm512_loadu_si512(q->neg_fix + n0 + 8);
    r.shift_e = _mm512_loadu_si512(q->total_shift + n0);
    r.shift_o = _mm512_loadu_si512(q->total_shift + n0 + 8);
    r.zo = _mm512_set1_epi32(q->d.out_zero);
    r.lo = _mm512_set1_epi32(q->d.qlo);
    r.hi = _mm512_set1_epi32(q->d.qhi);
    return r;
}

/* Sixteen accumulators to stored values: the two roundings in int64 lanes, the zero
 * point, the clamp. */
QCONV_TARGET static inline __m128i requant16(const rq16 *p, __m512i acc) {
    const __m512i lim = _mm512_set1_epi64(-(1ll << 30));
    __m512i pe = _mm512_mul_epi32(acc, p->m);
    __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), p->m_odd);
    __mmask8 ne = _mm512_cmplt_epi64_mask(pe, lim), no = _mm512_cmplt_epi64_mask(po, lim);
    pe = _mm512_add_epi64(pe, p->nudge_e);
    po = _mm512_add_epi64(po, p->nudge_o);
    pe = _mm512_mask_sub_epi64(pe, ne, pe, p->fix_e);
    po = _mm512_mask_sub_epi64(po, no, po, p->fix_o);
    pe = _mm512_srav_epi64(pe, p->shift_e);
    po = _mm512_srav_epi64(po, p->shift_o);
    __m512i r = _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
    r = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(r, p->zo), p->lo), p->hi);
    return _mm512_cvtepi32_epi8(r); /* in range: truncation keeps the stored byte */
}

static inline __mmask16 lanes(uint32_t n0, uint32_t n) {
    return n0 + 16 <= n ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - n0)) - 1);
}

/* nb vectors of 16 channels. The dot product takes unsigned by signed bytes: unsigned
 * inputs by weights stored as w - 128, signed inputs by weights stored as w + 128
 * (qconv_kernels.h), so that stored values are multiplied as they are. */
QCONV_TARGET static inline __attribute__((always_inline)) void
gemm_tile(const struct eng_qconv *q, const uint8_t *const rows[QCONV_MR],
          const int32_t row_terms[QCONV_MR], uint32_t nrows, uint32_t n0, uint8_t *y, size_t ys,
          int nb, bool signed_in) {
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
    const uint8_t *b0 = q->w + (size_t)(n0 / 16) * block, *b1 = b0 + block;
    for (uint32_t k = 0; k < q->kp; k += 4) {
        __m512i w0 = _mm512_loadu_si512(b0 + (size_t)k * 16);
        __m512i w1 = nb > 1 ? _mm512_loadu_si512(b1 + (size_t)k * 16) : _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int r = 0; r < QCONV_MR; r++) {
            int32_t v;
            memcpy(&v, rows[r] + k, 4);
            __m512i a = _mm512_set1_epi32(v);
            if (signed_in) {
                acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], w0, a);
                if (nb > 1) acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], w1, a);
            } else {
                acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], a, w0);
                if (nb > 1) acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], a, w1);
            }
        }
    }
    uint32_t n = q->d.out_c;
    for (int h = 0; h < nb && n0 + 16 * (uint32_t)h < n; h++) {
        uint32_t c = n0 + 16 * (uint32_t)h;
        rq16 p = rq16_load(q, c);
        __mmask16 m = lanes(c, n);
        for (uint32_t r = 0; r < nrows; r++)
            _mm_mask_storeu_epi8(y + r * ys + c, m, requant16(&p, acc[r][h]));
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
                                      uint32_t pixels, uint8_t *y) {
    uint32_t n = q->d.out_c, nt = q->taps;
    bool s = q->d.is_signed;
    for (uint32_t c = 0; c < n; c += 16) {
        __mmask16 m = lanes(c, n);
        rq16 p = rq16_load(q, c);
        const __m512i start = _mm512_loadu_si512(q->colconst + c);
        const int32_t *w0 = q->w32 + c;
        for (uint32_t px = 0; px < pixels; px++) {
            const uint8_t *const *tp = taps + (size_t)px * nt;
            const int32_t *w = w0;
            __m512i acc = start;
            for (uint32_t t = 0; t < nt; t++, w += q->np)
                acc = _mm512_add_epi32(
                    acc, _mm512_mullo_epi32(widen16(tp[t] + c, m, s), _mm512_loadu_si512(w)));
            _mm_mask_storeu_epi8(y + (size_t)px * n + c, m, requant16(&p, acc));
        }
    }
}

QCONV_TARGET uint32_t eng_qconv_sum_avx512(const uint8_t *p, size_t n, bool flip) {
    __m512i acc = _mm512_setzero_si512();
    const __m512i f = flip ? _mm512_set1_epi8((char)0x80) : _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512(p + i), f),
                                                    _mm512_setzero_si512()));
    if (i < n) {
        __mmask64 m = (__mmask64)((~0ull) >> (64 - (n - i)));
        __m512i v =
            _mm512_maskz_mov_epi8(m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, p + i), f));
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, _mm512_setzero_si512()));
    }
    return (uint32_t)_mm512_reduce_add_epi64(acc);
}

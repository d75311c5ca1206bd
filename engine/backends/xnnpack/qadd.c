/* SPDX-License-Identifier: Apache-2.0 */
/* qadd.c: exact 8-bit ADD and SUB (qadd.h). The multipliers are binary.c's, derived the
 * same way; the products are qconv_kernels.h's int64 form of the two roundings. */
#include <immintrin.h>

#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/fused_activation.h"
#include "engine/backends/xnnpack/qadd.h"

#define QADD_TARGET     __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define QADD_LEFT_SHIFT 20   /* the reference's headroom before rescaling */
#define QADD_TILE       4096 /* elements of one task */

static bool usable(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

bool eng_qadd_init(eng_qadd *q, const eng_tensor *a, const eng_tensor *b, const eng_tensor *y,
                   int32_t act, bool subtract) {
    if (!usable()) return false;
    int sa, sb, so;
    double twice_max = 2.0 * (a->scale > b->scale ? a->scale : b->scale);
    eng_quantize_multiplier(a->scale / twice_max, &q->ma, &sa);
    eng_quantize_multiplier(b->scale / twice_max, &q->mb, &sb);
    eng_quantize_multiplier(twice_max / ((1 << QADD_LEFT_SHIFT) * (double)y->scale), &q->mo, &so);
    if (sa > 0 || sb > 0 || so > 0 || sa < -31 || sb < -31 || so < -31) return false;
    q->ra = -sa, q->rb = -sb, q->ro = -so;
    q->is_signed = y->type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
    q->subtract = subtract;
    q->za = a->zero_point, q->zb = b->zero_point, q->zo = y->zero_point;
    eng_act_range_q8(act, y, &q->lo, &q->hi);
    return true;
}

/* x * m with the two roundings for one multiplier and right shift r in every lane. */
typedef struct lanes_mult {
    __m512i m, nudge, neg_fix, shift;
} lanes_mult;

QADD_TARGET static lanes_mult lanes_of(int32_t m, int r) {
    lanes_mult l = {_mm512_set1_epi64(m),
                    _mm512_set1_epi64((1ll << 30) + (r ? (1ll << (31 + r - 1)) : 0)),
                    _mm512_set1_epi64(r ? (1ll << 31) : 0), _mm512_set1_epi64(31 + r)};
    return l;
}

QADD_TARGET static inline __m512i mul_round(__m512i x, const lanes_mult *l) {
    const __m512i lim = _mm512_set1_epi64(-(1ll << 30));
    __m512i pe = _mm512_mul_epi32(x, l->m), po = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), l->m);
    __mmask8 ne = _mm512_cmplt_epi64_mask(pe, lim), no = _mm512_cmplt_epi64_mask(po, lim);
    pe = _mm512_mask_sub_epi64(_mm512_add_epi64(pe, l->nudge), ne, _mm512_add_epi64(pe, l->nudge),
                               l->neg_fix);
    po = _mm512_mask_sub_epi64(_mm512_add_epi64(po, l->nudge), no, _mm512_add_epi64(po, l->nudge),
                               l->neg_fix);
    pe = _mm512_srav_epi64(pe, l->shift);
    po = _mm512_srav_epi64(po, l->shift);
    return _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
}

typedef struct qadd_job {
    const eng_qadd *q;
    const uint8_t *a, *b;
    uint8_t *y;
    size_t n;
} qadd_job;

QADD_TARGET static void qadd_tile(void *ctx, size_t i0, size_t count) {
    const qadd_job *j = ctx;
    const eng_qadd *q = j->q;
    lanes_mult la = lanes_of(q->ma, q->ra), lb = lanes_of(q->mb, q->rb),
               lo = lanes_of(q->mo, q->ro);
    const __m512i za = _mm512_set1_epi32(q->za), zb = _mm512_set1_epi32(q->zb);
    const __m512i zo = _mm512_set1_epi32(q->zo), qlo = _mm512_set1_epi32(q->lo);
    const __m512i qhi = _mm512_set1_epi32(q->hi);
    for (size_t i = i0; i < i0 + count; i += 16) {
        size_t left = i0 + count - i;
        __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
        __m128i va = _mm_maskz_loadu_epi8(m, j->a + i), vb = _mm_maskz_loadu_epi8(m, j->b + i);
        __m512i x = q->is_signed ? _mm512_cvtepi8_epi32(va) : _mm512_cvtepu8_epi32(va);
        __m512i y = q->is_signed ? _mm512_cvtepi8_epi32(vb) : _mm512_cvtepu8_epi32(vb);
        x = _mm512_slli_epi32(_mm512_sub_epi32(x, za), QADD_LEFT_SHIFT);
        y = _mm512_slli_epi32(_mm512_sub_epi32(y, zb), QADD_LEFT_SHIFT);
        x = mul_round(x, &la);
        y = mul_round(y, &lb);
        __m512i r = mul_round(q->subtract ? _mm512_sub_epi32(x, y) : _mm512_add_epi32(x, y), &lo);
        r = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(r, zo), qlo), qhi);
        _mm_mask_storeu_epi8(j->y + i, m, _mm512_cvtepi32_epi8(r));
    }
}

void eng_qadd_run(const eng_qadd *q, const void *a, const void *b, void *y, size_t n,
                  pthreadpool_t tp, uint32_t flags) {
    qadd_job j = {q, a, b, y, n};
    pthreadpool_parallelize_1d_tile_1d(tp, qadd_tile, &j, n, QADD_TILE, flags);
}

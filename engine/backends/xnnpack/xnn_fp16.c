/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_fp16.c: FP16 steps on the FLOAT32 operators (xnn_step.h). XNNPACK's own F16
 * operators in this version are slow on x86 (a 1x1 CONV_2D on 28x28x256 takes four to
 * seven times as long as the F32 one), so an FP16 step is widened: its constants
 * are converted to float once at claim and its FP16 activations at run, where they meet
 * the FP32 operator; inside an FP16 region (engine/core/rewrites.h) they are float already. */
#include <stdlib.h>
#include <string.h>

#include "engine/ops_common/float16.h"
#include "engine/ops_common/operand.h"
#include "engine/backends/xnnpack/xnn_step.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define XNN_F16C 1

__attribute__((target("avx,f16c"))) static size_t f16_to_f32_f16c(const uint16_t *in, float *out,
                                                                  size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    return i;
}

__attribute__((target("avx,f16c"))) static size_t f32_to_f16_f16c(const float *in, uint16_t *out,
                                                                  size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}

/* CPUID and XGETBV by hand: older compilers' __builtin_cpu_supports knows no "f16c". */
static bool cpu_converts_halves(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    if (!(c & bit_AVX) || !(c & bit_OSXSAVE) || !(c & bit_F16C)) return false;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 6) == 6; /* the OS saves XMM and YMM state */
}

static bool has_f16c(void) {
    static int known = -1; /* a benign race: every thread computes the same answer */
    if (known < 0) known = cpu_converts_halves();
    return known;
}
#endif

void xnnb_f16_to_f32(const void *in, float *out, size_t n) {
    size_t i = 0;
#ifdef XNN_F16C
    if (has_f16c()) i = f16_to_f32_f16c(in, out, n);
#endif
    const eng_half *h = in;
    for (; i < n; i++)
        out[i] = (float)h[i];
}

void xnnb_f32_to_f16(const float *in, void *out, size_t n) {
    size_t i = 0;
#ifdef XNN_F16C
    if (has_f16c()) i = f32_to_f16_f16c(in, out, n);
#endif
    eng_half *h = out;
    for (; i < n; i++)
        h[i] = (eng_half)in[i];
}

static int32_t wide_type(int32_t type) {
    return type == SCHEMA_TENSOR_FLOAT16 ? SCHEMA_TENSOR_FLOAT32
           : type == SCHEMA_FLOAT16      ? SCHEMA_FLOAT32
                                         : type;
}

void xnnb_widened_free(xnnb_widened *w) {
    for (uint32_t j = 0; w->owned && j < w->n_in; j++)
        free(w->owned[j]);
    free(w->owned), free(w->in), free(w->out), free(w->in_p), free(w->out_p);
    memset(w, 0, sizeof *w);
}

bool xnnb_widen(const eng_op_ctx *c, eng_op_ctx *wide_c, xnnb_widened *w) {
    memset(w, 0, sizeof *w);
    w->n_in = c->n_in, w->n_out = c->n_out;
    w->in = calloc(c->n_in + 1, sizeof *w->in);
    w->out = calloc(c->n_out + 1, sizeof *w->out);
    w->in_p = calloc(c->n_in + 1, sizeof *w->in_p);
    w->out_p = calloc(c->n_out + 1, sizeof *w->out_p);
    w->owned = calloc(c->n_in + 1, sizeof *w->owned);
    if (!w->in || !w->out || !w->in_p || !w->out_p || !w->owned) return xnnb_widened_free(w), false;
    for (uint32_t j = 0; j < c->n_in; j++) {
        eng_tensor *t = &w->in[j];
        *t = *c->in[j];
        w->in_p[j] = t;
        int32_t type = wide_type(t->type);
        if (type == t->type) continue;
        t->type = type;
        if (!t->data) continue;
        size_t n = eng_elems(t);
        float *f = aligned_alloc(64, (n * sizeof(float) + XNN_EXTRA_BYTES + 63) & ~(size_t)63);
        if (!f) return xnnb_widened_free(w), false;
        xnnb_f16_to_f32(t->data, f, n);
        w->owned[j] = f;
        t->data = f;
        t->bytes = n * sizeof(float);
    }
    for (uint32_t j = 0; j < c->n_out; j++) {
        w->out[j] = *c->out[j];
        w->out[j].type = wide_type(w->out[j].type);
        w->out_p[j] = &w->out[j];
    }
    *wide_c = *c;
    wide_c->in = w->in_p, wide_c->out = w->out_p;
    return true;
}

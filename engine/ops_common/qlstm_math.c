/* SPDX-License-Identifier: Apache-2.0 */
/* qlstm_math.c: QUANTIZED_LSTM integer kernels. See qlstm_math.h. */
#include "engine/ops_common/qlstm_math.h"

#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fixedpoint.h"

static int16_t wrap16(int32_t x) {
    return (int16_t)(uint16_t)(uint32_t)x;
}

void eng_qlstm_fold_bias(int32_t zero_point, const int8_t *w, uint32_t rows, uint32_t cols,
                         const int32_t *bias, int32_t *out) {
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t row_sum = 0; /* unsigned: the reference's int32 sums wrap */
        for (uint32_t k = 0; k < cols; k++)
            row_sum += (uint32_t)(int32_t)w[(size_t)r * cols + k];
        out[r] = (int32_t)((uint32_t)(bias ? bias[r] : 0) + row_sum * (uint32_t)zero_point);
    }
}

void eng_qlstm_matmul_acc(const int8_t *x, const int32_t *bias, const int8_t *w, int32_t mult,
                          int shift, uint32_t n_batch, uint32_t n_in, uint32_t n_out,
                          int32_t out_zero_point, int32_t lo, int32_t hi, int16_t *out) {
    for (uint32_t b = 0; b < n_batch; b++) {
        const int8_t *xb = x + (size_t)b * n_in;
        for (uint32_t r = 0; r < n_out; r++) {
            const int8_t *wr = w + (size_t)r * n_in;
            uint32_t acc = (uint32_t)bias[r];
            for (uint32_t k = 0; k < n_in; k++)
                acc += (uint32_t)(xb[k] * wr[k]);
            int16_t *o = &out[(size_t)b * n_out + r];
            int64_t v =
                (int64_t)eng_mul_by_quantized((int32_t)acc, mult, shift) + out_zero_point + *o;
            *o = (int16_t)(v > hi ? hi : v < lo ? lo : v);
        }
    }
}

void eng_qlstm_peephole_acc(const int16_t *w, const int16_t *cell, uint32_t n_batch, uint32_t n,
                            int32_t mult, int shift, int16_t *out) {
    for (size_t i = 0; i < (size_t)n_batch * n; i++) {
        int32_t prod = eng_mul_by_quantized(w[i % n] * cell[i], mult, shift);
        out[i] = (int16_t)eng_clampi(prod + out[i], INT16_MIN, INT16_MAX);
    }
}

/* 1 / sqrt(x) as a multiplier and a right shift (the reference's
 * GetInvSqrtQuantizedMultiplierExp with reverse shift -1): Newton-Raphson on Q3.28. */
static void inv_sqrt(int32_t x, int32_t *mult, int *shift) {
    if (x <= 1) {
        *mult = INT32_MAX, *shift = 0;
        return;
    }
    int exp = 11;
    while (x >= (1 << 29)) {
        x /= 4;
        ++exp;
    }
    int pairs = (__builtin_clz((uint32_t)x) - 1) / 2 - 1;
    exp -= pairs;
    x <<= 2 * pairs;
    const int32_t half_three = (1 << 28) + (1 << 27), half_sqrt2 = 1518500250;
    int32_t half_x = eng_rounding_shift_right(x >> 1, 1), v = 1 << 28; /* 1.0 in Q3.28 */
    for (int i = 0; i < 5; i++) {
        int32_t v3 = eng_fx_mul_pot(eng_srdhm(eng_srdhm(v, v), v), 6);
        int32_t d = (int32_t)((uint32_t)eng_srdhm(half_three, v) - (uint32_t)eng_srdhm(half_x, v3));
        v = eng_fx_mul_pot(d, 3);
    }
    v = eng_srdhm(v, half_sqrt2);
    if (exp < 0) {
        v = (int32_t)((uint32_t)v << -exp);
        exp = 0;
    }
    *mult = v, *shift = -exp;
}

void eng_qlstm_layer_norm(int16_t *v, const int16_t *w, const int32_t *bias, int32_t mult,
                          int shift, int32_t variance_limit, uint32_t n_batch, uint32_t n) {
    const int32_t overflow_guard = 1 << 20;
    for (uint32_t b = 0; b < n_batch; b++, v += n) {
        int64_t sum = 0, sum_sq = 0;
        for (uint32_t i = 0; i < n; i++) {
            sum += v[i];
            sum_sq += (int32_t)v[i] * v[i];
        }
        int32_t mean = (int32_t)(sum * 1024 / n);
        int64_t variance = sum_sq * (overflow_guard / (int32_t)n) - (int64_t)mean * mean;
        int32_t variance2 = (int32_t)(variance / overflow_guard);
        if (variance2 < 1) variance2 = variance_limit;
        int32_t inv_mult;
        int inv_shift;
        inv_sqrt(variance2, &inv_mult, &inv_shift);
        for (uint32_t i = 0; i < n; i++) {
            int32_t shifted = 1024 * v[i] - mean;
            int32_t rescaled = eng_mul_by_quantized(shifted, inv_mult, inv_shift);
            /* int32 arithmetic in the reference, widened after */
            int64_t val3 =
                (int32_t)((uint32_t)rescaled * (uint32_t)(int32_t)w[i] + (uint32_t)bias[i]);
            int32_t val4 = (int32_t)((val3 > 0 ? val3 + 512 : val3 - 512) / 1024);
            int32_t val5 = eng_mul_by_quantized(val4, mult, shift + 12);
            v[i] = (int16_t)eng_clampi(val5, INT16_MIN, INT16_MAX);
        }
    }
}

void eng_qlstm_sigmoid(int16_t *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        v[i] = eng_fx16_logistic(v[i], 3);
}

void eng_qlstm_tanh(const int16_t *v, size_t n, int integer_bits, int16_t *out) {
    for (size_t i = 0; i < n; i++)
        out[i] = eng_fx16_tanh(v[i], integer_bits);
}

void eng_qlstm_mul(const int16_t *a, const int16_t *b, size_t n, int shift, int16_t *out) {
    for (size_t i = 0; i < n; i++)
        out[i] = wrap16(eng_rounding_shift_right((int32_t)a[i] * b[i], shift));
}

void eng_qlstm_mul_to_q8(const int16_t *a, const int16_t *b, size_t n, int32_t mult, int shift,
                         int32_t zero_point, int8_t *out) {
    for (size_t i = 0; i < n; i++) {
        int32_t v = eng_mul_by_quantized((int32_t)a[i] * b[i], mult, shift);
        out[i] = (int8_t)eng_clampi((int32_t)((int64_t)v - zero_point), -128, 127);
    }
}

void eng_qlstm_add(const int16_t *a, const int16_t *b, size_t n, int16_t *out) {
    for (size_t i = 0; i < n; i++)
        out[i] = (int16_t)eng_clampi(a[i] + b[i], INT16_MIN, INT16_MAX);
}

void eng_qlstm_clip16(int16_t *v, size_t n, int16_t limit) {
    for (size_t i = 0; i < n; i++)
        v[i] = (int16_t)eng_clampi(v[i], -limit, limit);
}

void eng_qlstm_clip8(int8_t *v, size_t n, int8_t limit) {
    for (size_t i = 0; i < n; i++)
        v[i] = (int8_t)eng_clampi(v[i], -limit, limit);
}

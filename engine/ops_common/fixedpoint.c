/* SPDX-License-Identifier: Apache-2.0 */
/* fixedpoint.c: reference fixed-point arithmetic. See fixedpoint.h. */
#include "engine/ops_common/fixedpoint.h"

#include <math.h>

#include "engine/ops_common/clamp.h"

void eng_quantize_multiplier(double m, int32_t *q, int *shift) {
    if (m == 0.0) {
        *q = 0;
        *shift = 0;
        return;
    }
    double f = frexp(m, shift);
    int64_t r = (int64_t)llround(f * (double)(1ll << 31));
    if (r == (1ll << 31)) {
        r /= 2;
        ++*shift;
    }
    if (*shift < -31) { /* below 2^-32: every product rounds to 0, as TFLite flushes it */
        *shift = 0;
        r = 0;
    }
    *q = (int32_t)r;
}

int32_t eng_srdhm(int32_t a, int32_t b) {
    if (a == b && a == INT32_MIN) return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / (1ll << 31));
}

int32_t eng_rounding_shift_right(int32_t x, int e) {
    if (e <= 0) return x;
    if (e > 31) return 0; /* |x| / 2^32 < 1/2 rounds to 0; and no shift that wide is defined */
    int32_t mask = (int32_t)((1ll << e) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

int32_t eng_mul_by_quantized(int32_t x, int32_t q, int shift) {
    /* A left shift past 32 saturates any non-zero x just as 32 does (and past 62 would not
     * be defined): extreme scale ratios give such shifts. */
    int left = shift > 0 ? (shift > 32 ? 32 : shift) : 0;
    int right = shift > 0 ? 0 : -shift;
    int64_t shifted = (int64_t)x * ((int64_t)1 << left);
    if (shifted > INT32_MAX) shifted = INT32_MAX;
    if (shifted < INT32_MIN) shifted = INT32_MIN;
    return eng_rounding_shift_right(eng_srdhm((int32_t)shifted, q), right);
}

/* gemmlowp runs the same algorithms on int32 and int16 raw values; `bits` (32 or 16) is
 * the raw width, and every value is a raw value of that width held in an int32_t. Plain
 * adds wrap at that width, as the reference's two's complement arithmetic does. */
static int32_t fxw_wrap(int64_t x, int bits) {
    if (bits == 32) return (int32_t)(uint32_t)x;
    int32_t v = (int32_t)(x & 0xffff);
    return v >= 0x8000 ? v - 0x10000 : v;
}
static int32_t fxw_add(int32_t a, int32_t b, int bits) {
    return fxw_wrap((int64_t)a + b, bits);
}
static int32_t fxw_sub(int32_t a, int32_t b, int bits) {
    return fxw_wrap((int64_t)a - b, bits);
}
static int32_t fxw_max(int bits) {
    return bits == 32 ? INT32_MAX : INT16_MAX;
}
/* A 32-bit constant as the reference narrows it: rounded to the raw width. */
static int32_t fxw_const(int32_t c, int bits) {
    return bits == 32 ? c : eng_rounding_shift_right(c, 32 - bits);
}

static int32_t fxw_srdhm(int32_t a, int32_t b, int bits) {
    if (bits == 32) return eng_srdhm(a, b);
    if (a == b && a == INT16_MIN) return INT16_MAX;
    int32_t ab = a * b;
    return (ab + (ab >= 0 ? (1 << 14) : (1 - (1 << 14)))) / (1 << 15);
}

static int32_t fxw_mul_pot(int32_t x, int e, int bits) {
    if (e < 0) return eng_rounding_shift_right(x, -e);
    if (e == 0) return x;
    int32_t limit = (int32_t)((1ll << (bits - 1 - e)) - 1);
    if (x > limit) return fxw_max(bits);
    if (x < -limit) return -fxw_max(bits) - 1;
    return (int32_t)((uint32_t)x << e);
}

/* exp(a) for a in [-1/4, 0), Q0: a fourth-order Taylor expansion around -1/8. */
static int32_t fxw_exp_quarter(int32_t a, int bits) {
    const int32_t exp_minus_eighth = fxw_const(1895147668, bits);
    const int32_t one_third = fxw_const(715827883, bits);
    int32_t x = fxw_add(a, 1 << (bits - 4), bits);
    int32_t x2 = fxw_srdhm(x, x, bits), x3 = fxw_srdhm(x2, x, bits), x4 = fxw_srdhm(x2, x2, bits);
    int32_t x4_over_4 = fxw_mul_pot(x4, -2, bits);
    int32_t poly = fxw_mul_pot(
        fxw_add(fxw_srdhm(fxw_add(x4_over_4, x3, bits), one_third, bits), x2, bits), -1, bits);
    int32_t tail = fxw_srdhm(exp_minus_eighth, fxw_add(x, poly, bits), bits);
    /* The 16-bit variant saturates this last add (the result can reach 1). */
    if (bits == 16) return eng_clampi(exp_minus_eighth + tail, INT16_MIN, INT16_MAX);
    return fxw_add(exp_minus_eighth, tail, bits);
}

static int32_t fxw_exp_neg(int32_t a, int integer_bits, int bits) {
    /* exp(-2^k) in Q0.31 for k = -2..4: multiplied in for each bit of the whole part. */
    static const int32_t exp_pow2[7] = {1672461947, 1302514674, 790015084, 290630308,
                                        39332535,   720401,     242};
    int frac = bits - 1 - integer_bits;
    int32_t quarter = (int32_t)1 << (frac - 2);
    int32_t a_mod = fxw_sub(a & (quarter - 1), quarter, bits);
    int32_t result = fxw_exp_quarter(fxw_mul_pot(a_mod, integer_bits, bits), bits);
    int32_t remainder = fxw_sub(a_mod, a, bits);
    for (int k = -2; k <= 4; k++)
        if (integer_bits > k && (remainder & ((int32_t)1 << (frac + k))))
            result = fxw_srdhm(result, fxw_const(exp_pow2[k + 2], bits), bits);
    if (integer_bits > 5 && a < -((int32_t)1 << (frac + 5))) result = 0; /* below -32 */
    return a == 0 ? fxw_max(bits) : result;
}

/* Newton-Raphson reciprocal of (1 + a) / 2, a in Q0; the result is in Q2. */
static int32_t fxw_half_reciprocal(int32_t a, int bits) {
    int64_t sum = (int64_t)a + fxw_max(bits);
    int32_t hd = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    /* 48/17 - 32/17 * hd */
    int32_t x = fxw_add(fxw_const(1515870810, bits),
                        fxw_srdhm(hd, fxw_const(-1010580540, bits), bits), bits);
    for (int i = 0; i < 3; i++) {
        int32_t residual = fxw_sub(1 << (bits - 3), fxw_srdhm(hd, x, bits), bits);
        x = fxw_add(x, fxw_mul_pot(fxw_srdhm(x, residual, bits), 2, bits), bits);
    }
    return x;
}

static int32_t fxw_logistic(int32_t a, int integer_bits, int bits) {
    if (a == 0) return 1 << (bits - 2);
    int32_t magnitude = a > 0 ? a : fxw_sub(0, a, bits);
    int32_t e = fxw_exp_neg(fxw_sub(0, magnitude, bits), integer_bits, bits);
    int32_t pos = fxw_mul_pot(fxw_half_reciprocal(e, bits), 1, bits);
    return a > 0 ? pos : fxw_sub(fxw_max(bits), pos, bits);
}

static int32_t fxw_tanh(int32_t a, int integer_bits, int bits) {
    if (a == 0) return 0;
    int32_t neg = a < 0 ? a : fxw_sub(0, a, bits);
    /* tanh(|a|) = (1 - e) / (1 + e) with e = exp(-2|a|): the doubling is a change of
     * integer bits, not of the raw value. */
    int32_t e = fxw_exp_neg(neg, integer_bits + 1, bits);
    int32_t t = fxw_mul_pot(fxw_sub(fxw_half_reciprocal(e, bits), 1 << (bits - 3), bits), 2, bits);
    return a < 0 ? fxw_sub(0, t, bits) : t;
}

int32_t eng_fx_mul_pot(int32_t x, int e) {
    return fxw_mul_pot(x, e, 32);
}
int32_t eng_fx_exp_neg(int32_t a, int integer_bits) {
    return fxw_exp_neg(a, integer_bits, 32);
}
int32_t eng_fx_one_over_one_plus(int32_t a) {
    return fxw_mul_pot(fxw_half_reciprocal(a, 32), 1, 32);
}
int32_t eng_fx_logistic(int32_t a, int integer_bits) {
    return fxw_logistic(a, integer_bits, 32);
}
int32_t eng_fx_tanh(int32_t a, int integer_bits) {
    return fxw_tanh(a, integer_bits, 32);
}

int16_t eng_fx16_srdhm(int16_t a, int16_t b) {
    return (int16_t)fxw_srdhm(a, b, 16);
}
int16_t eng_fx16_mul_pot(int16_t x, int e) {
    return (int16_t)fxw_mul_pot(x, e, 16);
}
int16_t eng_fx16_logistic(int16_t a, int integer_bits) {
    return (int16_t)fxw_logistic(a, integer_bits, 16);
}
int16_t eng_fx16_tanh(int16_t a, int integer_bits) {
    return (int16_t)fxw_tanh(a, integer_bits, 16);
}

int32_t eng_input_radius(int integer_bits, int left_shift) {
    double max_rescaled = ldexp((double)((1 << integer_bits) - 1), 31 - integer_bits - left_shift);
    return max_rescaled >= (double)INT32_MAX ? INT32_MAX : (int32_t)floor(max_rescaled);
}

static int32_t fx_wrap_sub(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

void eng_inv_sqrt_multiplier(int32_t input, int32_t *mult, int *right_shift) {
    if (input <= 1) {
        *mult = INT32_MAX;
        *right_shift = 0;
        return;
    }
    int shift = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        shift++;
    }
    int pairs = (__builtin_clz((uint32_t)input) - 1) / 2 - 1;
    shift -= pairs;
    input <<= 2 * pairs;
    const int32_t three_halves = (1 << 28) + (1 << 27), half_sqrt2 = 1518500250;
    int32_t half_input = eng_fx_mul_pot(input >> 1, -1);
    int32_t x = 1 << 28; /* 1.0 */
    for (int i = 0; i < 5; i++) {
        int32_t x3 = eng_fx_mul_pot(eng_srdhm(eng_srdhm(x, x), x), 6);
        x = eng_fx_mul_pot(fx_wrap_sub(eng_srdhm(three_halves, x), eng_srdhm(half_input, x3)), 3);
    }
    x = eng_srdhm(x, half_sqrt2);
    if (shift < 0) {
        x = (int32_t)((uint32_t)x << -shift);
        shift = 0;
    }
    *mult = x;
    *right_shift = shift;
}

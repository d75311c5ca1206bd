/* SPDX-License-Identifier: Apache-2.0 */
/* fixedpoint: integer arithmetic of the quantized kernels, bit for bit as the NNAPI
 * reference (TFLite and gemmlowp) computes it.
 *
 * Contract: values are raw two's complement integers; a Qm.n value has m integer bits.
 * Results saturate or round exactly where the reference does, so that quantized outputs
 * match the conformance vectors to the last bit. Nothing here knows a tensor type, a
 * scale or a zero point: those are affine_quant.h's; this file is the arithmetic they
 * are turned into (a multiplier and a shift, then these operations).
 */
#ifndef ENG_OPS_COMMON_FIXEDPOINT_H
#define ENG_OPS_COMMON_FIXEDPOINT_H

#include <stdint.h>

/* ---- requantization --------------------------------------------------------------------- */
/* m == q * 2^(shift - 31) with q in [2^30, 2^31), q rounded half away from zero (a q that
 * rounds up to 2^31 is halved and the shift raised); shift > 0 is a left shift. A
 * multiplier below 2^-32 (shift < -31) becomes q = 0, shift 0, as TensorFlow Lite's. */
void eng_quantize_multiplier(double m, int32_t *q, int *shift);
int32_t eng_srdhm(int32_t a, int32_t b);            /* SaturatingRoundingDoublingHighMul */
int32_t eng_rounding_shift_right(int32_t x, int e); /* RoundingDivideByPOT */
/* x * m for a multiplier from eng_quantize_multiplier. */
int32_t eng_mul_by_quantized(int32_t x, int32_t q, int shift);

/* 1 / sqrt(input) for input >= 0 as a multiplier and a right shift (TFLite's
 * GetInvSqrtQuantizedMultiplierExp): Newton-Raphson in Q3.28 on the input normalized by
 * powers of four. Inputs 0 and 1 take the largest multiplier and no shift, as TFLite does
 * (its older form overflowed at 1). */
void eng_inv_sqrt_multiplier(int32_t input, int32_t *mult, int *right_shift);

/* ---- gemmlowp fixed-point functions (raw int32 values; Qm.n = m integer bits) ---------- */
/* SaturatingRoundingMultiplyByPOT: x * 2^e, saturating for e > 0, rounding for e < 0. */
int32_t eng_fx_mul_pot(int32_t x, int e);
/* exp(a) for a <= 0 in Q(integer_bits); result Q0.31 (exp_on_negative_values). */
int32_t eng_fx_exp_neg(int32_t a, int integer_bits);
/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out (one_over_one_plus_x_for_x_in_0_1). */
int32_t eng_fx_one_over_one_plus(int32_t a);
/* Largest |input difference| whose rescaled value still fits integer_bits after a
 * left_shift (the reference's CalculateInputRadius). */
int32_t eng_input_radius(int integer_bits, int left_shift);
/* The same on int16 raw values (gemmlowp's 16-bit FixedPoint, Q0.15 results): the product
 * of two values (SaturatingRoundingDoublingHighMul), x * 2^e, logistic and tanh. */
int16_t eng_fx16_srdhm(int16_t a, int16_t b);
int16_t eng_fx16_mul_pot(int16_t x, int e);
int16_t eng_fx16_logistic(int16_t a, int integer_bits);
int16_t eng_fx16_tanh(int16_t a, int integer_bits);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* qlstm_math: the integer vector kernels of QUANTIZED_LSTM (HAL 1.3), bit for bit as the
 * reference computes them: 8-bit products accumulated in int32 and rescaled to 16-bit
 * gate values, layer normalization with an integer inverse square root, gemmlowp sigmoid
 * and tanh on int16, and the element-wise products, sums and clips that make the cell
 * state and the 8-bit hidden state.
 *
 * Contract: plain arrays, row-major [n_batch, n] unless said otherwise; a multiplier and
 * shift come from eng_quantize_multiplier (fixedpoint.h). Where the reference's int32 or
 * int16 arithmetic wraps, these wrap the same way (never undefined behaviour). Nothing
 * allocates or fails.
 */
#ifndef ENG_OPS_COMMON_QLSTM_MATH_H
#define ENG_OPS_COMMON_QLSTM_MATH_H

#include <stddef.h>
#include <stdint.h>

/* out[r] = bias[r] (0 when bias is NULL) + zero_point * sum of row r of w [rows, cols]:
 * the zero-point term of an 8-bit product, folded into a bias. */
void eng_qlstm_fold_bias(int32_t zero_point, const int8_t *w, uint32_t rows, uint32_t cols,
                         const int32_t *bias, int32_t *out);
/* out[b][r] = clamp(out[b][r] + out_zero_point + rescale(bias[r] + <row r of w, x[b]>),
 * lo, hi) for x [n_batch, n_in] and w [n_out, n_in]. */
void eng_qlstm_matmul_acc(const int8_t *x, const int32_t *bias, const int8_t *w, int32_t mult,
                          int shift, uint32_t n_batch, uint32_t n_in, uint32_t n_out,
                          int32_t out_zero_point, int32_t lo, int32_t hi, int16_t *out);
/* out[b][i] += rescale(w[i] * cell[b][i]), saturating to int16 (peephole connections). */
void eng_qlstm_peephole_acc(const int16_t *w, const int16_t *cell, uint32_t n_batch, uint32_t n,
                            int32_t mult, int shift, int16_t *out);
/* Normalizes each row of v in place to zero mean and unit variance, then scales by the
 * layer normalization weights w, adds bias and rescales (mult, shift: the weights' scale).
 * variance_limit stands in for a variance below 1. */
void eng_qlstm_layer_norm(int16_t *v, const int16_t *w, const int32_t *bias, int32_t mult,
                          int shift, int32_t variance_limit, uint32_t n_batch, uint32_t n);
/* In place: sigmoid of Q3.12 values into Q0.15; tanh of values with integer_bits (0..6)
 * into Q0.15. */
void eng_qlstm_sigmoid(int16_t *v, size_t n);
void eng_qlstm_tanh(const int16_t *v, size_t n, int integer_bits, int16_t *out);
/* out = a * b / 2^shift, rounded, narrowed to int16 as the reference narrows it. */
void eng_qlstm_mul(const int16_t *a, const int16_t *b, size_t n, int shift, int16_t *out);
/* out = clamp(rescale(a * b) - zero_point, -128, 127): the 8-bit hidden state. */
void eng_qlstm_mul_to_q8(const int16_t *a, const int16_t *b, size_t n, int32_t mult, int shift,
                         int32_t zero_point, int8_t *out);
/* out = a + b, saturating to int16. */
void eng_qlstm_add(const int16_t *a, const int16_t *b, size_t n, int16_t *out);
/* Clamps every value to [-limit, limit]. */
void eng_qlstm_clip16(int16_t *v, size_t n, int16_t limit);
void eng_qlstm_clip8(int8_t *v, size_t n, int8_t limit);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* qconv_kernels: what qconv.c (packing, rows, threads) and its vector kernels share.
 *
 * Contract: the layout of a packed convolution. Channels are padded to np (a multiple of
 * 32) and the sum length k to kp (a multiple of 4); padding weights are 0. Per channel n:
 * colconst[n] is the bias less the zero-point terms, so that an accumulator started there
 * plus the row's term (row_factor below) plus the dot products of the stored values with
 * the stored weights gives the reference's int32 sum. The requantization of channel n inside
 * a block of 16 (b = n - n % 16, lane l = n % 16) is mult[n] and, at index
 * b + (l % 2) * 8 + l / 2 (even lanes first, as the int64 lanes of a vector hold them),
 * nudge (2^30 + 2^(31 + r - 1) for a right shift r > 0, else 2^30), neg_fix (2^31 when
 * r > 0: a negative first rounding rounds its ties away from zero) and total_shift
 * (31 + r): y = (x * mult + nudge - (x * mult < -2^30 ? neg_fix : 0)) >> total_shift is
 * the reference's RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, mult), r). */
#ifndef ENG_BACKENDS_XNNPACK_QCONV_KERNELS_H
#define ENG_BACKENDS_XNNPACK_QCONV_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/backends/xnnpack/qconv_desc.h"

#define QCONV_MR 8 /* rows of one GEMM tile */

struct eng_qconv {
    eng_qconv_desc d; /* pointers cleared */
    uint32_t k, kp, np, taps;
    bool direct; /* rows are the input's pixels themselves (1x1, stride 1, k % 4 == 0) */
    /* A row's term is row_factor times the sum of its stored values, moved up by 128 when
     * signed. Unsigned: 128 - filter zero point, the weights stored as w - 128 (signed
     * bytes); signed: -128, the weights stored as w + 128 (unsigned bytes). */
    int32_t row_factor;
    uint8_t *w;   /* GEMM: [np / 16][kp / 4][16][4], w ^ 0x80 either way */
    int32_t *w32; /* depthwise: [taps][np], w - zw */
    int32_t *colconst, *mult;
    int64_t *nudge, *neg_fix, *total_shift;
    uint8_t *zero_row; /* depthwise padding: np + 64 bytes of the input's zero point */
};

/* The vector kernels (qconv_avx512.c). */
bool eng_qconv_avx512_usable(void);
/* Columns n0 .. n0 + 31 (those below out_c) of nrows <= QCONV_MR rows: rows[r] holds the
 * row's kp stored values, row_terms[r] its row_factor * sum; output row r at y + r * ys. */
void eng_qconv_gemm_avx512(const struct eng_qconv *q, const uint8_t *const rows[QCONV_MR],
                           const int32_t row_terms[QCONV_MR], uint32_t nrows, uint32_t n0,
                           uint8_t *y, size_t ys);
/* Depthwise output pixels px < pixels, every channel, into y + px * out_c: taps[px * taps
 * + t] points at tap t's in_c stored values (zero_row for padding). */
void eng_qconv_dw_avx512(const struct eng_qconv *q, const uint8_t *const *taps, uint32_t pixels,
                         uint8_t *y);
/* Sum of n stored bytes as unsigned values, each first moved by 128 (x ^ 0x80) with flip. */
uint32_t eng_qconv_sum_avx512(const uint8_t *p, size_t n, bool flip);

#endif

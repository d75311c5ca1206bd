/* SPDX-License-Identifier: Apache-2.0 */
/* wide_dwconv: FLOAT32 DEPTHWISE_CONV_2D (depth multiplier 1) with windows of more taps
 * than XNNPACK has a depthwise kernel for.
 *
 * Why: this XNNPACK's depthwise kernels take windows of up to 25 taps; a wider one (a
 * conformer's 1 x 31 along the sequence) becomes a grouped convolution with one GEMM per
 * channel, measured at 120 us for x [1, 1, 64, 144], against about 10 us for the direct
 * loop here (vectorized across channels, one fused multiply-add per tap and channel).
 *
 * Contract:
 * - eng_wide_dwconv_create() copies the filter ([1, fh, fw, channels]) and bias, and returns
 *   NULL when out of memory, on a CPU without AVX2 and FMA, or when d is not a window
 *   these kernels take (a zero size); the caller then keeps XNNPACK's operator.
 *   One block from malloc (eng_footprint_add_block counts it); eng_wide_dwconv_free()
 *   frees it.
 * - eng_wide_dwconv_run() computes the whole NHWC output from the input: per output pixel
 *   and channel, bias plus the taps inside the image in window order (taps in the padding
 *   count as 0), clamped to [lo, hi], with fused multiply-adds: within float rounding of
 *   the reference kernel, not bit for bit. It reads only x's pixels,
 *   writes only y's, allocates nothing and runs on tp (NULL: the calling thread) with
 *   pthreadpool's flags. A created convolution is read-only: runs may overlap.
 */
#ifndef ENG_BACKENDS_XNNPACK_WIDE_DWCONV_H
#define ENG_BACKENDS_XNNPACK_WIDE_DWCONV_H

#include <pthreadpool.h>
#include <stdint.h>

/* Windows of more taps than this go to these kernels (XNNPACK's largest depthwise tile). */
#define ENG_WIDE_DWCONV_MIN_TAPS 26

typedef struct eng_wide_dwconv_desc {
    uint32_t batch, in_h, in_w, out_h, out_w, channels;
    uint32_t fh, fw, sh, sw, dh, dw, pad_top, pad_left;
    const float *filter, *bias;
    float lo, hi;
} eng_wide_dwconv_desc;

typedef struct eng_wide_dwconv eng_wide_dwconv;

eng_wide_dwconv *eng_wide_dwconv_create(const eng_wide_dwconv_desc *d);
void eng_wide_dwconv_run(const eng_wide_dwconv *k, const float *x, float *y, pthreadpool_t tp,
                         uint32_t flags);
void eng_wide_dwconv_free(eng_wide_dwconv *k);

#endif

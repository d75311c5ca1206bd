/* SPDX-License-Identifier: Apache-2.0 */
/* qconv_desc: the description of an exact 8-bit convolution (qconv.h), shared by qconv and
 * its vector kernels (qconv_kernels.h).
 *
 * Contract: a plain struct; every size in elements, NHWC, stored values of the input's
 * signedness throughout. */
#ifndef ENG_BACKENDS_XNNPACK_QCONV_DESC_H
#define ENG_BACKENDS_XNNPACK_QCONV_DESC_H

#include <stdbool.h>
#include <stdint.h>

typedef struct eng_qconv_desc {
    bool is_signed; /* TENSOR_QUANT8_ASYMM_SIGNED input and output, else TENSOR_QUANT8_ASYMM */
    bool depthwise; /* filter [1, fh, fw, out_c], out_c == in_c */
    uint32_t batch, in_h, in_w, in_c, out_h, out_w, out_c;
    uint32_t fh, fw, sh, sw, dh, dw, pad_top, pad_left;
    /* CONV_2D and FULLY_CONNECTED [out_c, fh, fw, in_c]; stored values of the input's
     * signedness (a signed filter's zero point must be 0). */
    const void *filter;
    int32_t filter_zero;
    const int32_t *bias; /* out_c */
    const int32_t *mult;
    const int *shift;                    /* out_c, eng_quantize_multiplier's */
    int32_t in_zero, out_zero, qlo, qhi; /* qlo..qhi: the clamp, stored values */
} eng_qconv_desc;

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* image_geometry: rank-4 images in either layout (NHWC, or NCHW when an operation's layout
 * flag is set) and the sizes of a sliding window over them.
 *
 * Contract: an eng_image names the four dimensions and their element strides, so kernels
 * index one way for both layouts. Padding and output sizes follow the HAL's definitions
 * (implicit SAME/VALID schemes, explicit head and tail padding, dilation). Nothing here
 * validates; the operations' check() and shape() do.
 */
#ifndef ENG_OPS_COMMON_IMAGE_GEOMETRY_H
#define ENG_OPS_COMMON_IMAGE_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

/* Implicit padding as the HAL defines it; out receives the output size. */
void eng_implicit_padding(int32_t scheme, uint32_t in, uint32_t stride, uint32_t filter,
                          uint32_t dilation, uint32_t *out, int32_t *pad_head, int32_t *pad_tail);
/* Output size for explicit padding; 0 when the window does not fit. */
uint32_t eng_window_out(uint32_t in, uint32_t filter, uint32_t dilation, uint32_t stride,
                        int32_t pad_head, int32_t pad_tail);

/* A rank-4 image tensor seen as N, H, W, C with element strides, for either layout. */
typedef struct eng_image {
    uint32_t n, h, w, c;
    size_t sn, sh, sw, sc;
} eng_image;
void eng_image_of(const eng_tensor *t, bool nchw, eng_image *im);
static inline size_t eng_image_at(const eng_image *im, uint32_t n, uint32_t h, uint32_t w,
                                  uint32_t c) {
    return n * im->sn + h * im->sh + w * im->sw + c * im->sc;
}
/* Sets an N,H,W,C shape on t in the given layout. */
void eng_set_image_shape(eng_tensor *t, bool nchw, uint32_t n, uint32_t h, uint32_t w, uint32_t c);

#endif

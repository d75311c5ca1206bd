/* SPDX-License-Identifier: Apache-2.0 */
/* image_geometry.c: image views and window sizes. See image_geometry.h. */
#include "engine/ops_common/image_geometry.h"

#include "engine/ops_common/operand.h"

void eng_implicit_padding(int32_t scheme, uint32_t in, uint32_t stride, uint32_t filter,
                          uint32_t dilation, uint32_t *out, int32_t *pad_head, int32_t *pad_tail) {
    uint32_t eff = (filter - 1) * dilation + 1;
    *pad_head = *pad_tail = 0;
    if (scheme == SCHEMA_PADDING_SAME) {
        *out = (in + stride - 1) / stride;
        int64_t total = (int64_t)(*out - 1) * stride + eff - in;
        if (total < 0) total = 0;
        *pad_head = (int32_t)(total / 2);
        *pad_tail = (int32_t)(total - total / 2);
    } else {
        *out = in >= eff ? (in - eff + stride) / stride : 0;
    }
}

uint32_t eng_window_out(uint32_t in, uint32_t filter, uint32_t dilation, uint32_t stride,
                        int32_t pad_head, int32_t pad_tail) {
    int64_t eff = (int64_t)(filter - 1) * dilation + 1;
    int64_t span = (int64_t)in + pad_head + pad_tail - eff;
    if (span < 0 || stride == 0) return 0;
    return (uint32_t)(span / stride + 1);
}

void eng_image_of(const eng_tensor *t, bool nchw, eng_image *im) {
    if (nchw) {
        im->n = t->dims[0], im->c = t->dims[1], im->h = t->dims[2], im->w = t->dims[3];
        im->sw = 1, im->sh = im->w, im->sc = (size_t)im->h * im->w, im->sn = im->sc * im->c;
    } else {
        im->n = t->dims[0], im->h = t->dims[1], im->w = t->dims[2], im->c = t->dims[3];
        im->sc = 1, im->sw = im->c, im->sh = (size_t)im->w * im->c, im->sn = im->sh * im->h;
    }
}

void eng_set_image_shape(eng_tensor *t, bool nchw, uint32_t n, uint32_t h, uint32_t w, uint32_t c) {
    uint32_t d[4] = {n, h, w, c};
    if (nchw) d[1] = c, d[2] = h, d[3] = w;
    eng_set_shape(t, 4, d);
}

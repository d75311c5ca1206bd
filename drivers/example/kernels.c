/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.c: the example driver's kernels. See kernels.h. */
#include "kernels.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

float ex_activate(float v, int32_t act) {
    switch (act) {
    case ACT_RELU: return v < 0 ? 0 : v;
    case ACT_RELU1: return v < -1 ? -1 : v > 1 ? 1 : v;
    case ACT_RELU6: return v < 0 ? 0 : v > 6 ? 6 : v;
    default: return v;
    }
}

/* The element of an input broadcast to output position idx (by output coordinates). */
static uint64_t broadcast_index(const ex_shape *s, const ex_shape *so, const uint32_t *coord) {
    uint64_t at = 0;
    for (uint32_t r = 0; r < s->rank; r++) {
        uint32_t d = s->dims[r];
        uint32_t c = coord[so->rank - s->rank + r];
        at = at * d + (d == 1 ? 0 : c);
    }
    return at;
}

void ex_binary(int mul, const float *a, const ex_shape *sa, const float *b, const ex_shape *sb,
               float *out, const ex_shape *so, int32_t act) {
    uint64_t n = 1;
    for (uint32_t r = 0; r < so->rank; r++)
        n *= so->dims[r];
    bool same = sa->rank == so->rank && sb->rank == so->rank &&
                !memcmp(sa->dims, so->dims, sizeof(uint32_t) * so->rank) &&
                !memcmp(sb->dims, so->dims, sizeof(uint32_t) * so->rank);
    if (same) { /* the common case: no index arithmetic */
        for (uint64_t i = 0; i < n; i++)
            out[i] = ex_activate(mul ? a[i] * b[i] : a[i] + b[i], act);
        return;
    }
    uint32_t coord[8] = {0};
    for (uint64_t i = 0; i < n; i++) {
        float x = a[broadcast_index(sa, so, coord)], y = b[broadcast_index(sb, so, coord)];
        out[i] = ex_activate(mul ? x * y : x + y, act);
        for (uint32_t r = so->rank; r-- > 0;) { /* next coordinate, last dimension fastest */
            if (++coord[r] < so->dims[r]) break;
            coord[r] = 0;
        }
    }
}

void ex_clamp(const float *in, float *out, uint64_t n, float lo, float hi) {
    for (uint64_t i = 0; i < n; i++)
        out[i] = in[i] < lo ? lo : in[i] > hi ? hi : in[i];
}

void ex_conv2d(const float *in, const uint32_t in_dims[4], const float *filter, const float *bias,
               uint32_t out_c, float *out, const uint32_t out_dims[4], const ex_window *w) {
    uint32_t n = in_dims[0], ih = in_dims[1], iw = in_dims[2], ic = in_dims[3];
    uint32_t oh = out_dims[1], ow = out_dims[2];
    for (uint32_t b = 0; b < n; b++)
        for (uint32_t y = 0; y < oh; y++)
            for (uint32_t x = 0; x < ow; x++)
                for (uint32_t o = 0; o < out_c; o++) {
                    float acc = bias ? bias[o] : 0;
                    for (uint32_t ky = 0; ky < w->kh; ky++) {
                        int64_t iy = (int64_t)y * w->stride_h + ky - w->pad_top;
                        if (iy < 0 || iy >= ih) continue;
                        for (uint32_t kx = 0; kx < w->kw; kx++) {
                            int64_t ix = (int64_t)x * w->stride_w + kx - w->pad_left;
                            if (ix < 0 || ix >= iw) continue;
                            const float *px = in + (((uint64_t)b * ih + iy) * iw + ix) * ic;
                            const float *pf =
                                filter + (((uint64_t)o * w->kh + ky) * w->kw + kx) * ic;
                            for (uint32_t c = 0; c < ic; c++)
                                acc += px[c] * pf[c];
                        }
                    }
                    out[(((uint64_t)b * oh + y) * ow + x) * out_c + o] = ex_activate(acc, w->act);
                }
}

void ex_pool2d(int is_max, const float *in, const uint32_t in_dims[4], float *out,
               const uint32_t out_dims[4], const ex_window *w) {
    uint32_t n = in_dims[0], ih = in_dims[1], iw = in_dims[2], ch = in_dims[3];
    uint32_t oh = out_dims[1], ow = out_dims[2];
    for (uint32_t b = 0; b < n; b++)
        for (uint32_t y = 0; y < oh; y++)
            for (uint32_t x = 0; x < ow; x++)
                for (uint32_t c = 0; c < ch; c++) {
                    float acc = is_max ? -FLT_MAX : 0;
                    uint32_t count = 0;
                    for (uint32_t ky = 0; ky < w->kh; ky++) {
                        int64_t iy = (int64_t)y * w->stride_h + ky - w->pad_top;
                        if (iy < 0 || iy >= ih) continue;
                        for (uint32_t kx = 0; kx < w->kw; kx++) {
                            int64_t ix = (int64_t)x * w->stride_w + kx - w->pad_left;
                            if (ix < 0 || ix >= iw) continue;
                            float v = in[(((uint64_t)b * ih + iy) * iw + ix) * ch + c];
                            acc = is_max ? (v > acc ? v : acc) : acc + v;
                            count++;
                        }
                    }
                    if (!is_max) acc = count ? acc / (float)count : 0;
                    out[(((uint64_t)b * oh + y) * ow + x) * ch + c] = ex_activate(acc, w->act);
                }
}

void ex_fully_connected(const float *in, uint32_t batch, uint32_t size, const float *weights,
                        const float *bias, uint32_t units, float *out, int32_t act) {
    for (uint32_t b = 0; b < batch; b++)
        for (uint32_t u = 0; u < units; u++) {
            float acc = bias ? bias[u] : 0;
            const float *x = in + (uint64_t)b * size, *wr = weights + (uint64_t)u * size;
            for (uint32_t i = 0; i < size; i++)
                acc += x[i] * wr[i];
            out[(uint64_t)b * units + u] = ex_activate(acc, act);
        }
}

void ex_softmax(const float *in, uint64_t rows, uint32_t depth, float beta, float *out) {
    for (uint64_t r = 0; r < rows; r++) {
        const float *x = in + r * depth;
        float *y = out + r * depth;
        float max = -FLT_MAX;
        for (uint32_t i = 0; i < depth; i++)
            if (x[i] > max) max = x[i];
        double sum = 0;
        for (uint32_t i = 0; i < depth; i++)
            sum += (y[i] = expf((x[i] - max) * beta));
        for (uint32_t i = 0; i < depth; i++)
            y[i] = (float)(y[i] / sum);
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.cl: the nnd-opencl kernels (FLOAT32), OpenCL C 1.2. Shapes, strides and
 * parameters are kernel arguments: one program serves every partition of a device, so it
 * is built (or loaded from the program cache) once. Images are addressed through strides
 * (n, h, w, c), so one kernel serves NHWC and NCHW; the hot ones have an NHWC variant whose
 * channel stride is the literal 1. Work-item dimension 0 runs along the
 * channels, whose weights are contiguous: a CPU device vectorises across it, a GPU
 * coalesces. Activation bounds lo and hi clamp every result (-INF, INF: none). */

#define CLAMP_ACT(v) fmin(fmax((v), lo), hi)

/* CONV_2D. Filter re-laid as [kh][kw][ic][oc]; each work-item makes PX pixels along x of
 * one output channel. gid: (oc, x block, n * oh + y). */
#define PX 4
inline void conv2d_body(__global const float *in, __global const float *w,
                        __global const float *bias, __global float *out, int4 ishape,
                        int4 istr, int4 oshape, int4 ostr, int4 win, int4 dil_pad, float lo,
                        float hi, int isc, int osc) {
    /* ishape: h, w, c, -; oshape: h, w, c, n; win: kh, kw, sh, sw; dil_pad: dh, dw, pt, pl */
    int oc = get_global_id(0), xb = get_global_id(1) * PX, ny = get_global_id(2);
    if (oc >= oshape.z) return;
    int n = ny / oshape.x, y = ny % oshape.x;
    float acc[PX];
    for (int p = 0; p < PX; p++)
        acc[p] = bias[oc];
    int iy0 = y * win.z - dil_pad.z;
    for (int ky = 0; ky < win.x; ky++) {
        int iy = iy0 + ky * dil_pad.x;
        if (iy < 0 || iy >= ishape.x) continue;
        for (int kx = 0; kx < win.y; kx++) {
            __global const float *wp = w + ((ky * win.y + kx) * ishape.z) * oshape.z + oc;
            int ix[PX];
            bool ok[PX];
            for (int p = 0; p < PX; p++) {
                ix[p] = (xb + p) * win.w - dil_pad.w + kx * dil_pad.y;
                ok[p] = xb + p < oshape.y && ix[p] >= 0 && ix[p] < ishape.y;
            }
            __global const float *ip = in + n * istr.x + iy * istr.y;
            for (int ic = 0; ic < ishape.z; ic++) {
                float wv = wp[ic * oshape.z];
                for (int p = 0; p < PX; p++)
                    if (ok[p]) acc[p] += ip[ix[p] * istr.z + ic * isc] * wv;
            }
        }
    }
    for (int p = 0; p < PX; p++)
        if (xb + p < oshape.y)
            out[n * ostr.x + y * ostr.y + (xb + p) * ostr.z + oc * osc] = CLAMP_ACT(acc[p]);
}

/* The channel strides as arguments (NCHW), or as the literal 1 of NHWC: a compiler that
 * vectorises across work-items then sees contiguous loads and stores. */
__kernel void conv2d(__global const float *in, __global const float *w,
                     __global const float *bias, __global float *out, int4 ishape, int4 istr,
                     int4 oshape, int4 ostr, int4 win, int4 dil_pad, float lo, float hi) {
    conv2d_body(in, w, bias, out, ishape, istr, oshape, ostr, win, dil_pad, lo, hi, istr.w,
                ostr.w);
}
__kernel void conv2d_nhwc(__global const float *in, __global const float *w,
                          __global const float *bias, __global float *out, int4 ishape,
                          int4 istr, int4 oshape, int4 ostr, int4 win, int4 dil_pad, float lo,
                          float hi) {
    conv2d_body(in, w, bias, out, ishape, istr, oshape, ostr, win, dil_pad, lo, hi, 1, 1);
}

/* DEPTHWISE_CONV_2D. Filter [kh][kw][oc] as NNAPI lays it; output channel oc reads input
 * channel oc / multiplier. gid: (oc, x, n * oh + y). */
inline void depthwise_body(__global const float *in, __global const float *w,
                           __global const float *bias, __global float *out, int4 ishape,
                           int4 istr, int4 oshape, int4 ostr, int4 win, int4 dil_pad, int mult,
                           float lo, float hi, int isc, int osc) {
    int oc = get_global_id(0), x = get_global_id(1), ny = get_global_id(2);
    if (oc >= oshape.z) return;
    int n = ny / oshape.x, y = ny % oshape.x, ic = oc / mult;
    float acc = bias[oc];
    int iy0 = y * win.z - dil_pad.z, ix0 = x * win.w - dil_pad.w;
    __global const float *ip = in + n * istr.x + ic * isc;
    for (int ky = 0; ky < win.x; ky++) {
        int iy = iy0 + ky * dil_pad.x;
        if (iy < 0 || iy >= ishape.x) continue;
        for (int kx = 0; kx < win.y; kx++) {
            int ix = ix0 + kx * dil_pad.y;
            if (ix < 0 || ix >= ishape.y) continue;
            acc += ip[iy * istr.y + ix * istr.z] * w[(ky * win.y + kx) * oshape.z + oc];
        }
    }
    out[n * ostr.x + y * ostr.y + x * ostr.z + oc * osc] = CLAMP_ACT(acc);
}
__kernel void depthwise(__global const float *in, __global const float *w,
                        __global const float *bias, __global float *out, int4 ishape, int4 istr,
                        int4 oshape, int4 ostr, int4 win, int4 dil_pad, int mult, float lo,
                        float hi) {
    depthwise_body(in, w, bias, out, ishape, istr, oshape, ostr, win, dil_pad, mult, lo, hi,
                   istr.w, ostr.w);
}
/* NHWC with multiplier 1: input channel oc, contiguous. */
__kernel void depthwise_nhwc(__global const float *in, __global const float *w,
                             __global const float *bias, __global float *out, int4 ishape,
                             int4 istr, int4 oshape, int4 ostr, int4 win, int4 dil_pad,
                             int mult, float lo, float hi) {
    depthwise_body(in, w, bias, out, ishape, istr, oshape, ostr, win, dil_pad, 1, lo, hi, 1, 1);
}

/* NHWC with output channels a multiple of 8: each work-item makes 8 channels of PX pixels
 * with vector arithmetic. gid: (oc / 8, x block, n * oh + y). */
#define CLAMP8(v) fmin(fmax((v), (float8)(lo)), (float8)(hi))
__kernel void conv2d_nhwc8(__global const float *in, __global const float *w,
                           __global const float *bias, __global float *out, int4 ishape,
                           int4 istr, int4 oshape, int4 ostr, int4 win, int4 dil_pad, float lo,
                           float hi) {
    int oc = get_global_id(0) * 8, xb = get_global_id(1) * PX, ny = get_global_id(2);
    if (oc >= oshape.z) return;
    int n = ny / oshape.x, y = ny % oshape.x;
    float8 acc[PX];
    float8 b0 = vload8(0, bias + oc);
    for (int p = 0; p < PX; p++)
        acc[p] = b0;
    int iy0 = y * win.z - dil_pad.z;
    for (int ky = 0; ky < win.x; ky++) {
        int iy = iy0 + ky * dil_pad.x;
        if (iy < 0 || iy >= ishape.x) continue;
        for (int kx = 0; kx < win.y; kx++) {
            __global const float *wp = w + ((ky * win.y + kx) * ishape.z) * oshape.z + oc;
            int ix[PX];
            bool ok[PX];
            for (int p = 0; p < PX; p++) {
                ix[p] = (xb + p) * win.w - dil_pad.w + kx * dil_pad.y;
                ok[p] = xb + p < oshape.y && ix[p] >= 0 && ix[p] < ishape.y;
            }
            __global const float *ip = in + n * istr.x + iy * istr.y;
            for (int ic = 0; ic < ishape.z; ic++) {
                float8 wv = vload8(0, wp + ic * oshape.z);
                for (int p = 0; p < PX; p++)
                    if (ok[p]) acc[p] = fma((float8)(ip[ix[p] * istr.z + ic]), wv, acc[p]);
            }
        }
    }
    for (int p = 0; p < PX; p++)
        if (xb + p < oshape.y)
            vstore8(CLAMP8(acc[p]), 0, out + n * ostr.x + y * ostr.y + (xb + p) * ostr.z + oc);
}

/* DEPTHWISE_CONV_2D, NHWC, multiplier 1, channels a multiple of 8: 8 channels a
 * work-item. gid: (c / 8, x, n * oh + y). */
__kernel void depthwise_nhwc8(__global const float *in, __global const float *w,
                              __global const float *bias, __global float *out, int4 ishape,
                              int4 istr, int4 oshape, int4 ostr, int4 win, int4 dil_pad,
                              int mult, float lo, float hi) {
    int oc = get_global_id(0) * 8, x = get_global_id(1), ny = get_global_id(2);
    if (oc >= oshape.z) return;
    int n = ny / oshape.x, y = ny % oshape.x;
    float8 acc = vload8(0, bias + oc);
    int iy0 = y * win.z - dil_pad.z, ix0 = x * win.w - dil_pad.w;
    __global const float *ip = in + n * istr.x + oc;
    for (int ky = 0; ky < win.x; ky++) {
        int iy = iy0 + ky * dil_pad.x;
        if (iy < 0 || iy >= ishape.x) continue;
        for (int kx = 0; kx < win.y; kx++) {
            int ix = ix0 + kx * dil_pad.y;
            if (ix < 0 || ix >= ishape.y) continue;
            acc = fma(vload8(0, ip + iy * istr.y + ix * istr.z),
                      vload8(0, w + (ky * win.y + kx) * oshape.z + oc), acc);
        }
    }
    vstore8(CLAMP8(acc), 0, out + n * ostr.x + y * ostr.y + x * ostr.z + oc);
}

/* C[b][m][n] = act(bias[n] + sum_k A[b][m][k] B[b][k][n]), A and B through strides.
 * Each work-item makes MR rows of one column. gid: (n, m block, b).
 * mnk: M, N, K, has_bias; sa: a's m, k and batch strides; sb: b's k, n and batch. */
#define MR 4
inline void gemm_body(__global const float *a, __global const float *b,
                      __global const float *bias, __global float *c, int4 mnk, int4 sa, int4 sb,
                      float lo, float hi, int sbn) {
    int n = get_global_id(0), m0 = get_global_id(1) * MR, bt = get_global_id(2);
    if (n >= mnk.y) return;
    float acc[MR];
    float b0 = mnk.w ? bias[n] : 0.f;
    for (int r = 0; r < MR; r++)
        acc[r] = b0;
    __global const float *ap = a + bt * sa.z + m0 * sa.x;
    __global const float *bp = b + bt * sb.z + n * sbn;
    int rows = min(MR, mnk.x - m0);
    if (rows == MR) {
        for (int k = 0; k < mnk.z; k++) {
            float bv = bp[k * sb.x];
            for (int r = 0; r < MR; r++)
                acc[r] += ap[r * sa.x + k * sa.y] * bv;
        }
    } else {
        for (int k = 0; k < mnk.z; k++) {
            float bv = bp[k * sb.x];
            for (int r = 0; r < rows; r++)
                acc[r] += ap[r * sa.x + k * sa.y] * bv;
        }
    }
    __global float *cp = c + (bt * mnk.x + m0) * mnk.y + n;
    for (int r = 0; r < rows; r++)
        cp[r * mnk.y] = CLAMP_ACT(acc[r]);
}
__kernel void gemm(__global const float *a, __global const float *b,
                   __global const float *bias, __global float *c, int4 mnk, int4 sa, int4 sb,
                   float lo, float hi) {
    gemm_body(a, b, bias, c, mnk, sa, sb, lo, hi, sb.y);
}
/* B's columns contiguous (n stride 1): FULLY_CONNECTED's re-laid weights. Each work-item
 * makes MR rows of NV columns with vector arithmetic (a CPU device runs it on its vector
 * units as written; it does not vectorise a k loop across work-items). gid: (n / NV, m
 * block, b); a partial block at the right edge goes column by column. */
#define NV 8
__kernel void gemm_bn1(__global const float *a, __global const float *b,
                       __global const float *bias, __global float *c, int4 mnk, int4 sa,
                       int4 sb, float lo, float hi) {
    int n0 = get_global_id(0) * NV, m0 = get_global_id(1) * MR, bt = get_global_id(2);
    if (n0 >= mnk.y) return;
    if (n0 + NV > mnk.y) {
        for (int n = n0; n < mnk.y; n++) {
            int rows = min(MR, mnk.x - m0);
            for (int r = 0; r < rows; r++) {
                float acc = mnk.w ? bias[n] : 0.f;
                for (int k = 0; k < mnk.z; k++)
                    acc += a[bt * sa.z + (m0 + r) * sa.x + k * sa.y] * b[bt * sb.z + k * sb.x + n];
                c[(bt * mnk.x + m0 + r) * mnk.y + n] = CLAMP_ACT(acc);
            }
        }
        return;
    }
    float8 b0 = mnk.w ? vload8(0, bias + n0) : (float8)(0.f);
    float8 acc[MR];
    for (int r = 0; r < MR; r++)
        acc[r] = b0;
    __global const float *ap = a + bt * sa.z + m0 * sa.x;
    __global const float *bp = b + bt * sb.z + n0;
    int rows = min(MR, mnk.x - m0);
    if (rows == MR) {
        for (int k = 0; k < mnk.z; k++) {
            float8 bv = vload8(0, bp + k * sb.x);
            for (int r = 0; r < MR; r++)
                acc[r] = fma((float8)(ap[r * sa.x + k * sa.y]), bv, acc[r]);
        }
    } else {
        for (int k = 0; k < mnk.z; k++) {
            float8 bv = vload8(0, bp + k * sb.x);
            for (int r = 0; r < rows; r++)
                acc[r] = fma((float8)(ap[r * sa.x + k * sa.y]), bv, acc[r]);
        }
    }
    __global float *cp = c + (bt * mnk.x + m0) * mnk.y + n0;
    for (int r = 0; r < rows; r++)
        vstore8(fmin(fmax(acc[r], (float8)(lo)), (float8)(hi)), 0, cp + r * mnk.y);
}

/* ADD (0), SUB (1), MUL (2), DIV (3) with broadcasting: out dims d (rank 4, leading 1s),
 * a's and b's strides per out dimension (0 where broadcast). */
__kernel void binary(__global const float *a, __global const float *b, __global float *out,
                     int op, int4 d, int4 sa, int4 sb, float lo, float hi) {
    int i = get_global_id(0);
    if (i >= d.x * d.y * d.z * d.w) return;
    int i3 = i % d.w, r = i / d.w, i2 = r % d.z;
    r /= d.z;
    int i1 = r % d.y, i0 = r / d.y;
    float x = a[i0 * sa.x + i1 * sa.y + i2 * sa.z + i3 * sa.w];
    float y = b[i0 * sb.x + i1 * sb.y + i2 * sb.z + i3 * sb.w];
    float v = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
    out[i] = CLAMP_ACT(v);
}

/* RELU (0), RELU1 (1), RELU6 (2), LOGISTIC (3), TANH (4), HARD_SWISH (5). */
__kernel void unary(__global const float *in, __global float *out, int op, int count) {
    int i = get_global_id(0);
    if (i >= count) return;
    float x = in[i], v;
    switch (op) {
    case 0: v = fmax(x, 0.f); break;
    case 1: v = fmin(fmax(x, -1.f), 1.f); break;
    case 2: v = fmin(fmax(x, 0.f), 6.f); break;
    case 3: v = 1.f / (1.f + exp(-x)); break;
    case 4: v = tanh(x); break;
    default: v = x * fmin(6.f, fmax(0.f, x + 3.f)) / 6.f; break;
    }
    out[i] = v;
}

/* AVERAGE_POOL_2D (is_max 0: padding neither adds nor counts) and MAX_POOL_2D.
 * gid: (c, x, n * oh + y); win: fh, fw, sh, sw; pad: pt, pl. */
inline void pool_body(__global const float *in, __global float *out, int4 ishape, int4 istr,
                      int4 oshape, int4 ostr, int4 win, int2 pad, int is_max, float lo,
                      float hi, int isc, int osc) {
    int ch = get_global_id(0), x = get_global_id(1), ny = get_global_id(2);
    if (ch >= oshape.z) return;
    int n = ny / oshape.x, y = ny % oshape.x;
    int iy0 = y * win.z - pad.x, ix0 = x * win.w - pad.y;
    int y0 = max(iy0, 0), y1 = min(iy0 + win.x, ishape.x);
    int x0 = max(ix0, 0), x1 = min(ix0 + win.y, ishape.y);
    __global const float *ip = in + n * istr.x + ch * isc;
    float acc = is_max ? -INFINITY : 0.f;
    for (int iy = y0; iy < y1; iy++)
        for (int ix = x0; ix < x1; ix++) {
            float v = ip[iy * istr.y + ix * istr.z];
            acc = is_max ? fmax(acc, v) : acc + v;
        }
    int count = max(y1 - y0, 0) * max(x1 - x0, 0);
    if (count == 0)
        acc = 0.f;
    else if (!is_max)
        acc /= (float)count;
    out[n * ostr.x + y * ostr.y + x * ostr.z + ch * osc] = CLAMP_ACT(acc);
}
__kernel void pool(__global const float *in, __global float *out, int4 ishape, int4 istr,
                   int4 oshape, int4 ostr, int4 win, int2 pad, int is_max, float lo, float hi) {
    pool_body(in, out, ishape, istr, oshape, ostr, win, pad, is_max, lo, hi, istr.w, ostr.w);
}
__kernel void pool_nhwc(__global const float *in, __global float *out, int4 ishape,
                        int4 istr, int4 oshape, int4 ostr, int4 win, int2 pad, int is_max,
                        float lo, float hi) {
    pool_body(in, out, ishape, istr, oshape, ostr, win, pad, is_max, lo, hi, 1, 1);
}

/* SOFTMAX along an axis of `len` elements `inner` apart. gid: (inner index, outer index). */
__kernel void softmax(__global const float *in, __global float *out, int len, int inner,
                      float beta) {
    int j = get_global_id(0), o = get_global_id(1);
    if (j >= inner) return;
    __global const float *ip = in + o * len * inner + j;
    __global float *op = out + o * len * inner + j;
    float m = -INFINITY;
    for (int k = 0; k < len; k++)
        m = fmax(m, ip[k * inner]);
    float s = 0.f;
    for (int k = 0; k < len; k++) {
        float e = exp((ip[k * inner] - m) * beta);
        op[k * inner] = e;
        s += e;
    }
    for (int k = 0; k < len; k++)
        op[k * inner] /= s;
}

/* Copies `outer` rows of src_len elements into rows dst_len apart, at dst_off: one input of
 * CONCATENATION, or a whole tensor (RESHAPE, SQUEEZE; outer 1). gid: (element, row). */
__kernel void copy_rows(__global const float *src, __global float *dst, int src_len,
                        int dst_len, int dst_off) {
    int i = get_global_id(0), o = get_global_id(1);
    if (i >= src_len) return;
    dst[o * dst_len + dst_off + i] = src[o * src_len + i];
}

/* TRANSPOSE and PAD: out (rank 4) element at coordinates i reads src at the sum of
 * (i[k] - off[k]) * s[k] when every i[k] - off[k] is in [0, lim[k]), else pad. */
__kernel void gather4(__global const float *src, __global float *dst, int4 d, int4 s,
                      int4 off, int4 lim, float pad) {
    int i = get_global_id(0);
    if (i >= d.x * d.y * d.z * d.w) return;
    int4 c;
    c.w = i % d.w;
    int r = i / d.w;
    c.z = r % d.z;
    r /= d.z;
    c.y = r % d.y;
    c.x = r / d.y;
    c -= off;
    bool in = all(c >= (int4)(0)) && all(c < lim);
    dst[i] = in ? src[c.x * s.x + c.y * s.y + c.z * s.z + c.w * s.w] : pad;
}

/* MEAN: out element at coordinates i of the kept shape d (reduced dimensions 1) averages
 * src over the reduced dimensions' extents r (1 where kept); s: src strides. */
__kernel void mean(__global const float *src, __global float *dst, int4 d, int4 r, int4 s,
                   float inv_count) {
    int i = get_global_id(0);
    if (i >= d.x * d.y * d.z * d.w) return;
    int c3 = i % d.w, q = i / d.w, c2 = q % d.z;
    q /= d.z;
    int c1 = q % d.y, c0 = q / d.y;
    __global const float *p = src + c0 * s.x + c1 * s.y + c2 * s.z + c3 * s.w;
    float acc = 0.f;
    for (int a = 0; a < r.x; a++)
        for (int b = 0; b < r.y; b++)
            for (int e = 0; e < r.z; e++)
                for (int f = 0; f < r.w; f++)
                    acc += p[a * s.x + b * s.y + e * s.z + f * s.w];
    dst[i] = acc * inv_count;
}

/* RESIZE_BILINEAR. scale: y, x source steps; half_pixel: centres at +0.5.
 * gid: (c, x, n * oh + y). */
__kernel void resize_bilinear(__global const float *in, __global float *out, int4 ishape,
                              int4 istr, int4 oshape, int4 ostr, float2 scale, int half_pixel) {
    int ch = get_global_id(0), x = get_global_id(1), ny = get_global_id(2);
    if (ch >= oshape.z) return;
    int n = ny / oshape.x, y = ny % oshape.x;
    float vy = half_pixel ? ((float)y + 0.5f) * scale.x - 0.5f : (float)y * scale.x;
    float vx = half_pixel ? ((float)x + 0.5f) * scale.y - 0.5f : (float)x * scale.y;
    int ylo = clamp((int)floor(vy), 0, ishape.x - 1), yhi = clamp((int)ceil(vy), 0, ishape.x - 1);
    int xlo = clamp((int)floor(vx), 0, ishape.y - 1), xhi = clamp((int)ceil(vx), 0, ishape.y - 1);
    float ty = vy - (float)ylo, tx = vx - (float)xlo;
    __global const float *ip = in + n * istr.x + ch * istr.w;
    float p00 = ip[ylo * istr.y + xlo * istr.z], p10 = ip[yhi * istr.y + xlo * istr.z];
    float p01 = ip[ylo * istr.y + xhi * istr.z], p11 = ip[yhi * istr.y + xhi * istr.z];
    out[n * ostr.x + y * ostr.y + x * ostr.z + ch * ostr.w] =
        p00 * (1 - ty) * (1 - tx) + p10 * ty * (1 - tx) + p01 * (1 - ty) * tx + p11 * ty * tx;
}

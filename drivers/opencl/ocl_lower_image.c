/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_lower_image.c: the image operations into launches (ocl_plan.h): CONV_2D,
 * DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D and RESIZE_BILINEAR, NHWC or NCHW,
 * explicit padding or a padding scheme, strides and dilations, as NNAPI defines them. The
 * output shape the model declares must be the one these parameters give, or the operation
 * is declined. */
#include <stdlib.h>
#include <string.h>

#include "ocl_plan.h"

typedef struct image {
    int32_t n, h, w, c;
    int32_t sn, sh, sw, sc; /* element strides */
} image;

static image image_of(const nnd_driver_operand *o, bool nchw) {
    const uint32_t *d = o->dims;
    image im;
    if (nchw) {
        im = (image){(int32_t)d[0], (int32_t)d[2], (int32_t)d[3], (int32_t)d[1], 0, 0, 0, 0};
        im.sw = 1, im.sh = im.w, im.sc = im.h * im.w, im.sn = im.c * im.h * im.w;
    } else {
        im = (image){(int32_t)d[0], (int32_t)d[1], (int32_t)d[2], (int32_t)d[3], 0, 0, 0, 0};
        im.sc = 1, im.sw = im.c, im.sh = im.w * im.c, im.sn = im.h * im.w * im.c;
    }
    return im;
}

/* One axis of a window: the output size for in, filter, stride, dilation and the padding
 * (explicit head and tail, or a scheme: 1 SAME, 2 VALID, which sets the head). */
static int32_t window_out(int32_t in, int32_t k, int32_t s, int32_t dil, int32_t scheme,
                          int32_t *head, int32_t tail) {
    int32_t eff = (k - 1) * dil + 1;
    if (scheme == 1) {
        int32_t out = (in + s - 1) / s, need = (out - 1) * s + eff - in;
        *head = need > 0 ? need / 2 : 0;
        return out;
    }
    if (scheme == 2) {
        *head = 0;
        return in >= eff ? (in - eff + s) / s : 0;
    }
    int32_t span = in + *head + tail;
    return span >= eff ? (span - eff) / s + 1 : 0;
}

typedef struct window {
    int32_t kh, kw, sh, sw, dh, dw, pt, pl;
    bool nchw;
    float lo, hi;
    int32_t mult;
} window;

/* Reads the window parameters from `first` on (the input after the filter, bias or image)
 * in either form; extra: the multiplier of DEPTHWISE_CONV_2D sits before the activation. */
static bool read_window(ocl_plan *p, const nnd_driver_operation *op, uint32_t first, bool extra,
                        bool dilation, window *w, int32_t *pads, int32_t *scheme) {
    uint32_t n = op->n_inputs, e = extra ? 1 : 0;
    const nnd_driver_operand *probe = ocl_in(p, op, first + 4 + e);
    bool expl = n > first + 4 + e && probe && probe->type == NND_DRIVER_INT32;
    uint32_t at = first + (expl ? 4 : 1);                 /* the strides */
    uint32_t base = expl ? first + 6 + e : first + 3 + e; /* the activation */
    bool ok_count = n == base + 1 || n == base + 2 || (dilation && n == base + 4);
    if (!ok_count) return ocl_fail(p, "%u inputs is not a form this operation takes", n);
    *scheme = 0;
    for (int k = 0; k < 4; k++)
        pads[k] = 0;
    if (expl) {
        for (uint32_t k = 0; k < 4; k++)
            if (!ocl_const_i32(ocl_in(p, op, first + k), &pads[k]) || pads[k] < 0)
                return ocl_fail(p, "explicit paddings must be constant non-negative INT32");
    } else if (!ocl_const_i32(ocl_in(p, op, first), scheme) || *scheme < 1 || *scheme > 2) {
        return ocl_fail(p, "the padding scheme must be a constant 1 (SAME) or 2 (VALID)");
    }
    if (!ocl_const_i32(ocl_in(p, op, at), &w->sw) ||
        !ocl_const_i32(ocl_in(p, op, at + 1), &w->sh) || w->sw < 1 || w->sh < 1)
        return ocl_fail(p, "strides must be constant positive INT32");
    w->mult = 1;
    if (extra && (!ocl_const_i32(ocl_in(p, op, at + 2), &w->mult) || w->mult < 1))
        return ocl_fail(p, "the depth multiplier must be a constant positive INT32");
    if (!ocl_act(ocl_in(p, op, base), &w->lo, &w->hi))
        return ocl_fail(p, "the fused activation must be a constant code 0 to 3");
    w->nchw = false;
    if (n > base + 1 && !ocl_const_bool(ocl_in(p, op, base + 1), &w->nchw))
        return ocl_fail(p, "the layout flag must be a constant BOOL");
    w->dw = w->dh = 1;
    if (n == base + 4 &&
        (!ocl_const_i32(ocl_in(p, op, base + 2), &w->dw) ||
         !ocl_const_i32(ocl_in(p, op, base + 3), &w->dh) || w->dw < 1 || w->dh < 1))
        return ocl_fail(p, "dilations must be constant positive INT32");
    return true;
}

/* Pads from the scheme or the explicit values, and the output shape check. */
static bool place_window(ocl_plan *p, window *w, const int32_t pads[4], int32_t scheme,
                         const image *in, const image *out) {
    w->pl = pads[0], w->pt = pads[2];
    int32_t oh = window_out(in->h, w->kh, w->sh, w->dh, scheme, &w->pt, pads[3]);
    int32_t ow = window_out(in->w, w->kw, w->sw, w->dw, scheme, &w->pl, pads[1]);
    if (oh != out->h || ow != out->w || in->n != out->n)
        return ocl_fail(p, "the output shape is not the one the window gives (%dx%d)", oh, ow);
    return true;
}

static void window_args(ocl_launch *l, const image *in, const image *out, const window *w) {
    ocl_arg_int4(l, in->h, in->w, in->c, 0);
    ocl_arg_int4(l, in->sn, in->sh, in->sw, in->sc);
    ocl_arg_int4(l, out->h, out->w, out->c, out->n);
    ocl_arg_int4(l, out->sn, out->sh, out->sw, out->sc);
    ocl_arg_int4(l, w->kh, w->kw, w->sh, w->sw);
}

bool ocl_lower_conv(ocl_plan *p, const nnd_driver_operation *op, bool depthwise) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *f = ocl_in(p, op, 1), *b = ocl_in(p, op, 2),
                             *y = ocl_out(p, op);
    if (!ocl_f32_tensor(x, 4, 4) || !ocl_f32_tensor(f, 4, 4) || !ocl_f32_tensor(b, 1, 1) ||
        !ocl_f32_tensor(y, 4, 4))
        return ocl_fail(p, "needs TENSOR_FLOAT32 input, filter, bias and output, shapes known");
    window w;
    int32_t pads[4], scheme;
    if (!read_window(p, op, 3, depthwise, true, &w, pads, &scheme)) return false;
    image in = image_of(x, w.nchw), out = image_of(y, w.nchw);
    uint32_t oc = f->dims[depthwise ? 3 : 0];
    w.kh = (int32_t)f->dims[1], w.kw = (int32_t)f->dims[2];
    if (b->dims[0] != oc || (int32_t)oc != out.c)
        return ocl_fail(p, "filter, bias and output disagree on the output channels");
    if (depthwise ? f->dims[0] != 1 || in.c * w.mult != out.c : (int32_t)f->dims[3] != in.c)
        return ocl_fail(p, "the filter's shape does not match the input's channels");
    if (!place_window(p, &w, pads, scheme, &in, &out)) return false;
    uint32_t fbuf;
    size_t taps = (size_t)w.kh * w.kw * in.c;
    if (depthwise || p->check_only) {
        fbuf = ocl_plan_operand(p, op->inputs[1]);
    } else if (f->lifetime == NND_DRIVER_CONSTANT) {
        /* [oc][kh][kw][ic] -> [kh][kw][ic][oc]: work-items along oc read in a row */
        float *t = malloc(taps * oc * sizeof(float));
        if (!t) return ocl_fail(p, "out of memory");
        const float *src = f->data;
        for (size_t o = 0; o < oc; o++)
            for (size_t k = 0; k < taps; k++)
                t[k * oc + o] = src[o * taps + k];
        fbuf = ocl_plan_owned(p, t, taps * oc * sizeof(float));
    } else { /* a filter computed or given at execution: re-laid by a launch before */
        fbuf = ocl_plan_temp(p, taps * oc * sizeof(float));
        ocl_launch *g = ocl_plan_launch(p, OCL_K_GATHER4, 1, taps * oc, 1, 1);
        if (!g) return ocl_fail(p, "out of memory");
        /* out [taps][oc] as rank 4 [1, 1, taps, oc]: element (t, o) reads src[o * taps + t] */
        ocl_arg_buf(g, ocl_plan_operand(p, op->inputs[1]));
        ocl_arg_buf(g, fbuf);
        ocl_arg_int4(g, 1, 1, (int32_t)taps, (int32_t)oc);
        ocl_arg_int4(g, 0, 0, 1, (int32_t)taps);
        ocl_arg_int4(g, 0, 0, 0, 0);
        ocl_arg_int4(g, 1, 1, (int32_t)taps, (int32_t)oc);
        ocl_arg_float(g, 0.f);
    }
    /* The vector variants for NHWC with channels in eights, else one channel a work-item. */
    bool by8 = !w.nchw && out.c % 8 == 0 && (!depthwise || w.mult == 1);
    int k = depthwise ? (by8                      ? OCL_K_DEPTHWISE_NHWC8
                         : !w.nchw && w.mult == 1 ? OCL_K_DEPTHWISE_NHWC
                                                  : OCL_K_DEPTHWISE)
                      : (by8      ? OCL_K_CONV2D_NHWC8
                         : w.nchw ? OCL_K_CONV2D
                                  : OCL_K_CONV2D_NHWC);
    size_t chans = by8 ? (size_t)out.c / 8 : (size_t)out.c;
    size_t cols = depthwise ? (size_t)out.w : ((size_t)out.w + 3) / 4;
    ocl_launch *l = ocl_plan_launch(p, k, 3, chans, cols, (size_t)out.n * out.h);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[0]));
    ocl_arg_buf(l, fbuf);
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[2]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->outputs[0]));
    window_args(l, &in, &out, &w);
    ocl_arg_int4(l, w.dh, w.dw, w.pt, w.pl);
    if (depthwise) ocl_arg_int(l, w.mult);
    ocl_arg_float(l, w.lo);
    ocl_arg_float(l, w.hi);
    return true;
}

bool ocl_lower_pool(ocl_plan *p, const nnd_driver_operation *op, bool is_max) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *y = ocl_out(p, op);
    if (!ocl_f32_tensor(x, 4, 4) || !ocl_f32_tensor(y, 4, 4))
        return ocl_fail(p, "needs a TENSOR_FLOAT32 input and output of rank 4, shapes known");
    /* The filter size sits between the strides and the activation: read it as the
     * depthwise multiplier's slot would be, twice. */
    uint32_t n = op->n_inputs;
    bool expl = n >= 10;
    uint32_t fsize = expl ? 7 : 4;
    window w;
    int32_t pads[4] = {0}, scheme = 0;
    if (!ocl_const_i32(ocl_in(p, op, fsize), &w.kw) ||
        !ocl_const_i32(ocl_in(p, op, fsize + 1), &w.kh) || w.kw < 1 || w.kh < 1)
        return ocl_fail(p, "the filter size must be constant positive INT32");
    if (n != (expl ? 10u : 7u) && n != (expl ? 11u : 8u))
        return ocl_fail(p, "%u inputs is not a form this operation takes", n);
    if (expl) {
        for (uint32_t k = 0; k < 4; k++)
            if (!ocl_const_i32(ocl_in(p, op, 1 + k), &pads[k]) || pads[k] < 0)
                return ocl_fail(p, "explicit paddings must be constant non-negative INT32");
    } else if (!ocl_const_i32(ocl_in(p, op, 1), &scheme) || scheme < 1 || scheme > 2) {
        return ocl_fail(p, "the padding scheme must be a constant 1 (SAME) or 2 (VALID)");
    }
    uint32_t at = expl ? 5 : 2, act = fsize + 2;
    if (!ocl_const_i32(ocl_in(p, op, at), &w.sw) || !ocl_const_i32(ocl_in(p, op, at + 1), &w.sh) ||
        w.sw < 1 || w.sh < 1)
        return ocl_fail(p, "strides must be constant positive INT32");
    if (!ocl_act(ocl_in(p, op, act), &w.lo, &w.hi))
        return ocl_fail(p, "the fused activation must be a constant code 0 to 3");
    w.nchw = false;
    if (n > act + 1 && !ocl_const_bool(ocl_in(p, op, act + 1), &w.nchw))
        return ocl_fail(p, "the layout flag must be a constant BOOL");
    w.dh = w.dw = 1;
    image in = image_of(x, w.nchw), out = image_of(y, w.nchw);
    if (in.c != out.c) return ocl_fail(p, "input and output channels differ");
    if (!place_window(p, &w, pads, scheme, &in, &out)) return false;
    ocl_launch *l = ocl_plan_launch(p, w.nchw ? OCL_K_POOL : OCL_K_POOL_NHWC, 3, (size_t)out.c,
                                    (size_t)out.w, (size_t)out.n * out.h);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[0]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->outputs[0]));
    window_args(l, &in, &out, &w);
    ocl_arg_int2(l, w.pt, w.pl);
    ocl_arg_int(l, is_max);
    ocl_arg_float(l, w.lo);
    ocl_arg_float(l, w.hi);
    return true;
}

static float axis_scale(int32_t in, int32_t out, bool align_corners) {
    if (align_corners && out > 1) return (float)(in - 1) / (float)(out - 1);
    return (float)in / (float)out;
}

bool ocl_lower_resize(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *y = ocl_out(p, op);
    uint32_t n = op->n_inputs;
    if (n < 3 || n > 6 || !ocl_f32_tensor(x, 4, 4) || !ocl_f32_tensor(y, 4, 4))
        return ocl_fail(p, "needs a TENSOR_FLOAT32 input and output of rank 4, shapes known");
    bool flags[3] = {false, false, false}; /* NCHW, align corners, half-pixel centres */
    for (uint32_t k = 3; k < n; k++)
        if (!ocl_const_bool(ocl_in(p, op, k), &flags[k - 3]))
            return ocl_fail(p, "input %u must be a constant BOOL", k);
    if (flags[1] && flags[2])
        return ocl_fail(p, "align_corners and half_pixel_centers cannot both be set");
    image in = image_of(x, flags[0]), out = image_of(y, flags[0]);
    if (in.n != out.n || in.c != out.c) return ocl_fail(p, "input and output disagree");
    ocl_launch *l = ocl_plan_launch(p, OCL_K_RESIZE_BILINEAR, 3, (size_t)out.c, (size_t)out.w,
                                    (size_t)out.n * out.h);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[0]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->outputs[0]));
    ocl_arg_int4(l, in.h, in.w, in.c, 0);
    ocl_arg_int4(l, in.sn, in.sh, in.sw, in.sc);
    ocl_arg_int4(l, out.h, out.w, out.c, out.n);
    ocl_arg_int4(l, out.sn, out.sh, out.sw, out.sc);
    ocl_arg_float2(l, axis_scale(in.h, out.h, flags[1]), axis_scale(in.w, out.w, flags[1]));
    ocl_arg_int(l, flags[2]);
    return true;
}

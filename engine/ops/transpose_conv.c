/* SPDX-License-Identifier: Apache-2.0 */
/* transpose_conv.c: TRANSPOSE_CONV_2D, the transpose (gradient) of CONV_2D. Operands and
 * arithmetic are those of the convolution engine in conv_walk.c (filter [out_c, fh, fw, in_c],
 * per-tensor or per-channel requantization); only the scalars and the output size differ,
 * and the walk scatters each input pixel over a window of the output. */
#include "engine/ops_common/conv_walk.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"

#include <string.h>

/* Operand layout. Explicit: 0 input, 1 filter, 2 bias, 3..6 padding left, right, top,
 * bottom, 7..8 stride w, h, 9 activation, 10 layout. Implicit: 3 output shape tensor,
 * 4 padding scheme, 5..6 strides, 7 activation, 8 layout. */
enum { EXPLICIT_N = 11, IMPLICIT_N = 9 };

static bool is_explicit(const eng_op_ctx *c) {
    return c->n_in == EXPLICIT_N;
}

static schema_status tconv_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, IMPLICIT_N, EXPLICIT_N, 1, 1);
    if (s) return s;
    if (c->n_in != EXPLICIT_N && c->n_in != IMPLICIT_N)
        return eng_fail(c, "takes %u (explicit padding) or %u (implicit) inputs, got %u",
                        EXPLICIT_N, IMPLICIT_N, c->n_in);
    if ((s = eng_conv_check_tensors(c, 0)) || (s = eng_check_rank(c, c->in[0], "input 0", 4, 4)) ||
        (s = eng_check_rank(c, c->in[1], "filter (input 1)", 4, 4)) ||
        (s = eng_check_rank(c, c->in[2], "bias (input 2)", 1, 1)))
        return s;
    bool ex = is_explicit(c);
    uint32_t first_int = 3, layout = c->n_in - 1, act = c->n_in - 2;
    if (!ex) {
        if (c->in[3]->type != SCHEMA_TENSOR_INT32)
            return eng_fail(c, "output shape (input 3) must be TENSOR_INT32, is %s",
                            schema_type_name(c->in[3]->type));
        if ((s = eng_check_rank(c, c->in[3], "output shape (input 3)", 1, 1))) return s;
        first_int = 4;
    }
    for (uint32_t i = first_int; i < c->n_in; i++)
        if ((s = eng_check_scalar(c, i, i == layout ? SCHEMA_BOOL : SCHEMA_INT32))) return s;
    /* Padding right and bottom may be negative: they trim the output. */
    for (uint32_t i = first_int; i < act; i++) {
        const eng_tensor *t = c->in[i];
        if (!t->data) continue;
        int32_t v = eng_i32(t);
        bool stride = i >= act - 2;
        if (stride && v <= 0) return eng_fail(c, "stride (input %u) is %d, must be positive", i, v);
        if (!ex && i == 4 && v != SCHEMA_PADDING_SAME && v != SCHEMA_PADDING_VALID)
            return eng_fail(c, "padding scheme (input 4) is %d, not 1 (SAME) or 2 (VALID)", v);
        if (ex && (i == 3 || i == 5) && v < 0)
            return eng_fail(c, "padding (input %u) is %d, must not be negative", i, v);
    }
    return eng_check_activation(c, act);
}

/* SAME padding for a transposed window, from the requested output size: the head as for a
 * convolution of that size, the tail fitted to the end of the last stride (may be
 * negative). VALID pads nothing. */
static void tconv_implicit_padding(int32_t scheme, int64_t size, int64_t stride, int64_t filter,
                                   int64_t *head, int64_t *tail) {
    *head = *tail = 0;
    if (scheme != SCHEMA_PADDING_SAME) return;
    int64_t out = (size + stride - 1) / stride;
    int64_t span = (out - 1) * stride + filter;
    if (span > size) *head = (span - size) / 2;
    *tail = span - size - *head;
}

/* Reads the scalars (ENG_DEFER until all are known), and fills g: input and filter sizes,
 * padding, and the output size in * stride + filter - stride - padding per axis. */
static schema_status tconv_geom(eng_op_ctx *c, eng_conv_params *p, eng_conv_geom *g) {
    for (uint32_t i = 3; i < c->n_in; i++)
        if (!c->in[i]->data) return ENG_DEFER;
    const eng_tensor *in = c->in[0], *f = c->in[1], *b = c->in[2];
    bool ex = is_explicit(c);
    uint32_t base = ex ? 7 : 5; /* stride w */
    *p = (eng_conv_params){.stride_w = eng_i32(c->in[base]),
                           .stride_h = eng_i32(c->in[base + 1]),
                           .act = eng_i32(c->in[base + 2]),
                           .nchw = eng_bool(c->in[base + 3]),
                           .dil_w = 1,
                           .dil_h = 1};
    if (in->rank != 4 || f->rank != 4 || b->rank != 1)
        return eng_fail(c, "input, filter and bias need ranks 4, 4 and 1, have %u, %u and %u",
                        in->rank, f->rank, b->rank);
    if (p->stride_w <= 0 || p->stride_h <= 0)
        return eng_fail(c, "strides (%d, %d) must be positive", p->stride_w, p->stride_h);
    eng_image im;
    eng_image_of(in, p->nchw, &im);
    uint32_t out_c = f->dims[0], fh = f->dims[1], fw = f->dims[2];
    if (!im.h || !im.w || !im.c)
        return eng_fail(c, "input 0 has an empty image (height %u, width %u, depth %u)", im.h, im.w,
                        im.c);
    if (!out_c || !fh || !fw) return eng_fail(c, "filter (input 1) is empty");
    if (f->dims[3] != im.c)
        return eng_fail(c, "filter (input 1) has depth %u, input 0 has %u channels", f->dims[3],
                        im.c);
    if (b->dims[0] != out_c)
        return eng_fail(c, "bias (input 2) has %u elements for %u output channels", b->dims[0],
                        out_c);
    if (f->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL && f->channel_quant->n_scales != out_c)
        return eng_fail(c, "filter (input 1) has %u channel scales for %u output channels",
                        f->channel_quant->n_scales, out_c);
    int64_t left, right, top, bottom;
    if (ex) {
        left = eng_i32(c->in[3]), right = eng_i32(c->in[4]);
        top = eng_i32(c->in[5]), bottom = eng_i32(c->in[6]);
    } else {
        const eng_tensor *os = c->in[3];
        if (os->rank != 1 || os->dims[0] != 4)
            return eng_fail(c, "output shape (input 3) must have 4 elements");
        /* Only the spatial sizes matter; constants may sit unaligned. */
        int32_t shape[4];
        memcpy(shape, os->data, sizeof shape);
        int32_t scheme = eng_i32(c->in[4]);
        tconv_implicit_padding(scheme, shape[p->nchw ? 3 : 2], p->stride_w, fw, &left, &right);
        tconv_implicit_padding(scheme, shape[p->nchw ? 2 : 1], p->stride_h, fh, &top, &bottom);
    }
    if (left < 0 || top < 0)
        return eng_fail(c, "padding left %lld and top %lld must not be negative", (long long)left,
                        (long long)top);
    int64_t out_w = (int64_t)im.w * p->stride_w + fw - p->stride_w - left - right;
    int64_t out_h = (int64_t)im.h * p->stride_h + fh - p->stride_h - top - bottom;
    if (out_w <= 0 || out_h <= 0 || out_w > INT32_MAX || out_h > INT32_MAX || left > INT32_MAX ||
        top > INT32_MAX)
        return eng_fail(c, "padding (%lld, %lld, %lld, %lld) gives an output of %lld x %lld",
                        (long long)left, (long long)right, (long long)top, (long long)bottom,
                        (long long)out_h, (long long)out_w);
    *g = (eng_conv_geom){.batches = im.n,
                         .in_h = im.h,
                         .in_w = im.w,
                         .in_c = im.c,
                         .out_h = (uint32_t)out_h,
                         .out_w = (uint32_t)out_w,
                         .out_c = out_c,
                         .filter_h = fh,
                         .filter_w = fw,
                         .groups = 1,
                         .pad_top = (int32_t)top,
                         .pad_left = (int32_t)left,
                         .stride_h = p->stride_h,
                         .stride_w = p->stride_w,
                         .dil_h = 1,
                         .dil_w = 1,
                         .filter_oc_stride = (size_t)fh * fw * im.c,
                         .filter_tap_stride = im.c,
                         .nchw = p->nchw};
    return SCHEMA_OK;
}

/* Shape (run == false) or compute the output. */
static schema_status tconv_op(eng_op_ctx *c, bool run) {
    eng_conv_params p;
    eng_conv_geom g;
    schema_status s = tconv_geom(c, &p, &g);
    if (s || run)
        return s ? s
                 : eng_conv_transpose_run(c, &g, c->in[0], c->in[1], c->in[2], c->out[0], p.act);
    eng_set_image_shape(c->out[0], g.nchw, g.batches, g.out_h, g.out_w, g.out_c);
    return SCHEMA_OK;
}

static schema_status tconv_shape(eng_op_ctx *c) {
    return tconv_op(c, false);
}
static schema_status tconv_run(eng_op_ctx *c) {
    return tconv_op(c, true);
}
static schema_status tconv_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, tconv_run);
}

ENG_OP_DEF(TRANSPOSE_CONV_2D, tconv_check, tconv_shape, 0, 0,
           {{SCHEMA_TENSOR_FLOAT32, tconv_run},
            {SCHEMA_TENSOR_FLOAT16, tconv_f16},
            {SCHEMA_TENSOR_QUANT8_ASYMM, tconv_run},
            {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, tconv_run}});

/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_conv.c: the XNNPACK backend's claims of the windowed and weighted operations
 * (xnn_step.h): CONV_2D, DEPTHWISE_CONV_2D (NHWC; unsigned 8-bit with per-tensor filters,
 * signed with per-tensor or per-channel ones), FULLY_CONNECTED, AVERAGE_POOL_2D and
 * MAX_POOL_2D. A window is claimed when XNNPACK's output size agrees with the
 * reference's. Quantized AVERAGE_POOL_2D only without padding (XNNPACK's average counts
 * padded pixels, the reference does not) and with the output's quantization equal to the
 * input's (the reference averages stored values); signed only over the whole image
 * (this version has a qs8 global average pool, no windowed one). FLOAT32 DEPTHWISE_CONV_2D
 * with a window wider than XNNPACK's depthwise kernels runs on wide_dwconv.h's loop. */
#include "engine/ops_common/conv_walk.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/operand.h"
#include "engine/backends/xnnpack/wide_dwconv.h"
#include "engine/backends/xnnpack/xnn_step.h"

/* ---- kinds of step: how each operator is set up for a run ------------------------------ */

static enum xnn_status conv_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                  pthreadpool_t tp) {
    (void)b;
    if (s->dt == XD_QS8)
        return s->per_channel
                   ? xnn_setup_convolution2d_nhwc_qc8(s->op, s->batch, s->h, s->w, a, y, tp)
                   : xnn_setup_convolution2d_nhwc_qs8(s->op, s->batch, s->h, s->w, a, y, tp);
    if (s->dt == XD_QU8)
        return xnn_setup_convolution2d_nhwc_qu8(s->op, s->batch, s->h, s->w, a, y, tp);
    return xnn_setup_convolution2d_nhwc_f32(s->op, s->batch, s->h, s->w, a, y, tp);
}

static enum xnn_status fc_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                pthreadpool_t tp) {
    (void)b;
    if (s->dt == XD_QS8) return xnn_setup_fully_connected_nc_qs8(s->op, s->batch, a, y, tp);
    if (s->dt == XD_QU8) return xnn_setup_fully_connected_nc_qu8(s->op, s->batch, a, y, tp);
    return xnn_setup_fully_connected_nc_f32(s->op, s->batch, a, y, tp);
}

static enum xnn_status max_pool_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                      pthreadpool_t tp) {
    (void)b;
    if (s->dt == XD_QS8)
        return xnn_setup_max_pooling2d_nhwc_s8(s->op, s->batch, s->h, s->w, a, y, tp);
    if (s->dt == XD_QU8)
        return xnn_setup_max_pooling2d_nhwc_u8(s->op, s->batch, s->h, s->w, a, y, tp);
    return xnn_setup_max_pooling2d_nhwc_f32(s->op, s->batch, s->h, s->w, a, y, tp);
}

/* Unsigned 8-bit and FLOAT32 (signed: global_avg_setup). */
static enum xnn_status avg_pool_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                      pthreadpool_t tp) {
    (void)b;
    if (s->dt == XD_QU8)
        return xnn_setup_average_pooling2d_nhwc_qu8(s->op, s->batch, s->h, s->w, a, y, tp);
    return xnn_setup_average_pooling2d_nhwc_f32(s->op, s->batch, s->h, s->w, a, y, tp);
}

/* Signed 8-bit AVERAGE_POOL_2D over the whole image. */
static enum xnn_status global_avg_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                        pthreadpool_t tp) {
    (void)b;
    return xnn_setup_global_average_pooling_nwc_qs8(s->op, s->batch, s->h * s->w, a, y, tp);
}

static const xnnb_kind conv_kind = {.setup = conv_setup};
static const xnnb_kind fc_kind = {.setup = fc_setup};
/* Multi-pass max pooling (windows over 9 elements) reads its output back. */
static const xnnb_kind max_pool_kind = {.setup = max_pool_setup, .reads_output = true};
static const xnnb_kind avg_pool_kind = {.setup = avg_pool_setup};
static const xnnb_kind global_avg_kind = {.setup = global_avg_setup};

/* FLOAT32 depthwise windows wider than XNNPACK's kernels: wide_dwconv.h's direct loop. */
static schema_status wide_dwconv_step_run(eng_op_ctx *c, xnnb_step *s, pthreadpool_t tp) {
    const eng_tensor *x = c->in[0];
    eng_tensor *y = c->out[0];
    if (eng_elems(x) != s->in_elems[0] || eng_elems(y) != s->out_elems || !x->data || !y->data)
        return s->reference(c);
    eng_wide_dwconv_run(s->extra, x->data, y->data, tp, xnnb_pool_flags(s));
    return SCHEMA_OK;
}

static void wide_dwconv_step_release(void *extra) {
    eng_wide_dwconv_free(extra);
}

static const xnnb_composite wide_dwconv_composite = {.run = wide_dwconv_step_run,
                                                     .release = wide_dwconv_step_release};

/* False when wide_dwconv.h does not take it: XNNPACK's operator then. */
static bool claim_wide_dwconv(const eng_op_ctx *c, const xnnb_window *wd, float lo, float hi,
                              xnnb_step *s) {
    const eng_tensor *x = c->in[0], *y = c->out[0];
    eng_wide_dwconv_desc d = {.batch = x->dims[0],
                              .in_h = x->dims[1],
                              .in_w = x->dims[2],
                              .out_h = y->dims[1],
                              .out_w = y->dims[2],
                              .channels = x->dims[3],
                              .fh = wd->fh,
                              .fw = wd->fw,
                              .sh = wd->sh,
                              .sw = wd->sw,
                              .dh = wd->dh,
                              .dw = wd->dw,
                              .pad_top = wd->pad[0],
                              .pad_left = wd->pad[3],
                              .filter = c->in[1]->data,
                              .bias = c->in[2]->data,
                              .lo = lo,
                              .hi = hi};
    eng_wide_dwconv *k = eng_wide_dwconv_create(&d);
    if (!k) return false;
    xnnb_own_composite(s, &wide_dwconv_composite, k);
    return true;
}

static bool image_dims(const eng_tensor *t, uint32_t *n, uint32_t *h, uint32_t *w, uint32_t *ch) {
    if (t->rank != 4) return false;
    *n = t->dims[0], *h = t->dims[1], *w = t->dims[2], *ch = t->dims[3];
    return true;
}

/* Paddings (top, right, bottom, left) per the explicit values or the implicit scheme, and
 * whether XNNPACK's output size (padded span - dilated window) / stride + 1 is the
 * output's. */
static bool window_fits(xnnb_window *wd, int32_t scheme, const int32_t *explicit_tlbr,
                        uint32_t in_h, uint32_t in_w, uint32_t out_h, uint32_t out_w) {
    int32_t t = explicit_tlbr[0], l = explicit_tlbr[1], b = explicit_tlbr[2], r = explicit_tlbr[3];
    uint32_t unused;
    if (scheme) {
        eng_implicit_padding(scheme, in_h, wd->sh, wd->fh, wd->dh, &unused, &t, &b);
        eng_implicit_padding(scheme, in_w, wd->sw, wd->fw, wd->dw, &unused, &l, &r);
    }
    if (t < 0 || l < 0 || b < 0 || r < 0) return false;
    wd->pad[0] = (uint32_t)t, wd->pad[1] = (uint32_t)r, wd->pad[2] = (uint32_t)b;
    wd->pad[3] = (uint32_t)l;
    return out_h && out_w && eng_window_out(in_h, wd->fh, wd->dh, wd->sh, t, b) == out_h &&
           eng_window_out(in_w, wd->fw, wd->dw, wd->sw, l, r) == out_w;
}

/* XNNPACK builds an indirection buffer of one pointer per output pixel and window tap at
 * setup, that is at prepare: shapes come from the client, so past this bound a step stays
 * on the reference kernel instead of letting one prepare allocate without limit. */
#define XNN_MAX_INDIRECTION_BYTES (256.0 * 1024 * 1024)
/* The most pixels a signed 8-bit average over the whole image may sum (xnnb_claim_pool). */
#define XNN_MAX_QS8_AVERAGE_PIXELS (1u << 23)
static bool indirection_fits(uint32_t n, uint32_t oh, uint32_t ow, const xnnb_window *wd) {
    return (double)n * oh * ow * wd->fh * wd->fw * sizeof(void *) <= XNN_MAX_INDIRECTION_BYTES;
}

enum xnn_status xnnb_claim_conv(eng_op_ctx *c, xnnb_step *s) {
    const eng_tensor *x = c->in[0], *f = c->in[1], *bias = c->in[2], *y = c->out[0];
    bool dw = c->def->code == SCHEMA_OP_DEPTHWISE_CONV_2D;
    eng_conv_params p;
    if (eng_conv_read_params(c, dw ? 1 : 0, &p) || p.nchw) return xnn_status_unsupported_parameter;
    uint32_t n, h, w, in_c, on, oh, ow, out_c;
    if (!image_dims(x, &n, &h, &w, &in_c) || !image_dims(y, &on, &oh, &ow, &out_c) ||
        f->rank != 4 || on != n)
        return xnn_status_unsupported_parameter;
    xnnb_window wd = {.fh = f->dims[1],
                      .fw = f->dims[2],
                      .sh = (uint32_t)p.stride_h,
                      .sw = (uint32_t)p.stride_w,
                      .dh = (uint32_t)p.dil_h,
                      .dw = (uint32_t)p.dil_w,
                      .groups = 1,
                      .group_in = in_c,
                      .group_out = out_c,
                      .depthwise = dw};
    int32_t tlbr[4] = {p.pad_top, p.pad_left, p.pad_bottom, p.pad_right};
    if (!window_fits(&wd, p.scheme, tlbr, h, w, oh, ow) || !indirection_fits(n, oh, ow, &wd) ||
        (s->dt != XD_F32 && !xnnb_requant_ok(x, f, y)))
        return xnn_status_unsupported_parameter;
    if (dw) {
        if (f->dims[3] != out_c || p.extra <= 0 || (uint64_t)p.extra * in_c != out_c)
            return xnn_status_unsupported_parameter;
        wd.groups = in_c, wd.group_in = 1, wd.group_out = (uint32_t)p.extra;
    } else if (f->dims[0] != out_c || f->dims[3] != in_c) {
        return xnn_status_unsupported_parameter;
    }
    float lo, hi;
    int32_t qlo, qhi;
    if (!xnnb_act_bounds(y, p.act, &lo, &hi, &qlo, &qhi)) return xnn_status_unsupported_parameter;
    if (s->dt == XD_F32 && dw && wd.group_out == 1 && !s->f16 &&
        (uint64_t)wd.fh * wd.fw >= ENG_WIDE_DWCONV_MIN_TAPS && claim_wide_dwconv(c, &wd, lo, hi, s))
        return xnn_status_success;
    uint32_t flags = s->flags | (dw ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0);
    s->kind = &conv_kind;
    s->batch = n, s->h = h, s->w = w;
    if (s->dt != XD_F32 && xnnb_qconv_claim(c, &wd, p.act, s)) return xnn_status_success;
    if (s->dt == XD_QS8) return xnnb_qs8_create_conv(&wd, x, f, bias, y, qlo, qhi, s);
    if (s->dt == XD_QU8)
        return xnn_create_convolution2d_nhwc_qu8(
            wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3], wd.fh, wd.fw, wd.sh, wd.sw, wd.dh, wd.dw,
            wd.groups, wd.group_in, wd.group_out, in_c, out_c, (uint8_t)x->zero_point, x->scale,
            (uint8_t)f->zero_point, f->scale, f->data, bias->data, (uint8_t)y->zero_point, y->scale,
            (uint8_t)qlo, (uint8_t)qhi, flags, &s->op);
    return xnn_create_convolution2d_nhwc_f32(wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3], wd.fh,
                                             wd.fw, wd.sh, wd.sw, wd.dh, wd.dw, wd.groups,
                                             wd.group_in, wd.group_out, in_c, out_c, f->data,
                                             bias->data, lo, hi, flags, &s->op);
}

enum xnn_status xnnb_claim_fc(eng_op_ctx *c, xnnb_step *s) {
    const eng_tensor *x = c->in[0], *wt = c->in[1], *bias = c->in[2], *y = c->out[0];
    if (wt->rank != 2 || !c->in[3]->data) return xnn_status_unsupported_parameter;
    size_t units = wt->dims[0], size = wt->dims[1];
    if (!units || !size || eng_elems(x) % size || eng_elems(y) != eng_elems(x) / size * units ||
        (s->dt != XD_F32 && !xnnb_requant_ok(x, wt, y)))
        return xnn_status_unsupported_parameter;
    float lo, hi;
    int32_t qlo, qhi;
    if (!xnnb_act_bounds(y, eng_i32(c->in[3]), &lo, &hi, &qlo, &qhi))
        return xnn_status_unsupported_parameter;
    s->kind = &fc_kind;
    s->batch = eng_elems(x) / size;
    xnnb_window one = {.fh = 1, .fw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1};
    if (s->dt != XD_F32 && xnnb_qconv_claim(c, &one, eng_i32(c->in[3]), s))
        return xnn_status_success;
    if (s->dt == XD_QS8) return xnnb_qs8_create_fc(size, units, x, wt, bias, y, qlo, qhi, s);
    if (s->dt == XD_QU8)
        return xnn_create_fully_connected_nc_qu8(
            size, units, size, units, (uint8_t)x->zero_point, x->scale, (uint8_t)wt->zero_point,
            wt->scale, wt->data, bias->data, (uint8_t)y->zero_point, y->scale, (uint8_t)qlo,
            (uint8_t)qhi, s->flags, &s->op);
    return xnn_create_fully_connected_nc_f32(size, units, size, units, wt->data, bias->data, lo, hi,
                                             s->flags, &s->op);
}

/* Pool operands: 0 input, then explicit padding (left, right, top, bottom) or a scheme,
 * stride w, stride h, filter w, filter h, activation, optional NCHW flag. */
enum xnn_status xnnb_claim_pool(eng_op_ctx *c, xnnb_step *s) {
    const eng_tensor *x = c->in[0], *y = c->out[0];
    bool explicit_pad = c->n_in >= 10;
    uint32_t at = explicit_pad ? 5 : 2;
    for (uint32_t i = 1; i < c->n_in; i++)
        if (!c->in[i]->data) return xnn_status_unsupported_parameter;
    if (c->n_in == at + 6 && eng_bool(c->in[at + 5])) return xnn_status_unsupported_parameter;
    uint32_t n, h, w, ch, on, oh, ow, oc;
    if (!image_dims(x, &n, &h, &w, &ch) || !image_dims(y, &on, &oh, &ow, &oc) || on != n ||
        oc != ch)
        return xnn_status_unsupported_parameter;
    int32_t v[4];
    for (int i = 0; i < 4; i++)
        if ((v[i] = eng_i32(c->in[at + i])) <= 0) return xnn_status_unsupported_parameter;
    xnnb_window wd = {.sw = (uint32_t)v[0],
                      .sh = (uint32_t)v[1],
                      .fw = (uint32_t)v[2],
                      .fh = (uint32_t)v[3],
                      .dh = 1,
                      .dw = 1};
    int32_t tlbr[4] = {0};
    if (explicit_pad) {
        tlbr[0] = eng_i32(c->in[3]), tlbr[1] = eng_i32(c->in[1]);
        tlbr[2] = eng_i32(c->in[4]), tlbr[3] = eng_i32(c->in[2]);
    }
    int32_t scheme = explicit_pad ? 0 : eng_i32(c->in[1]);
    if (!window_fits(&wd, scheme, tlbr, h, w, oh, ow) || !indirection_fits(n, oh, ow, &wd))
        return xnn_status_unsupported_parameter;
    bool padded = wd.pad[0] | wd.pad[1] | wd.pad[2] | wd.pad[3];
    float lo, hi;
    int32_t qlo, qhi;
    if (!xnnb_act_bounds(y, eng_i32(c->in[at + 4]), &lo, &hi, &qlo, &qhi))
        return xnn_status_unsupported_parameter;
    s->batch = n, s->h = h, s->w = w;
    if (c->def->code == SCHEMA_OP_MAX_POOL_2D) {
        s->kind = &max_pool_kind;
        if (s->dt == XD_QS8)
            return xnn_create_max_pooling2d_nhwc_s8(wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3],
                                                    wd.fh, wd.fw, wd.sh, wd.sw, 1, 1, ch, ch, ch,
                                                    (int8_t)qlo, (int8_t)qhi, s->flags, &s->op);
        if (s->dt == XD_QU8)
            return xnn_create_max_pooling2d_nhwc_u8(wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3],
                                                    wd.fh, wd.fw, wd.sh, wd.sw, 1, 1, ch, ch, ch,
                                                    (uint8_t)qlo, (uint8_t)qhi, s->flags, &s->op);
        return xnn_create_max_pooling2d_nhwc_f32(wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3], wd.fh,
                                                 wd.fw, wd.sh, wd.sw, 1, 1, ch, ch, ch, lo, hi,
                                                 s->flags, &s->op);
    }
    s->kind = &avg_pool_kind;
    if (s->dt != XD_F32 && (padded || x->scale != y->scale || x->zero_point != y->zero_point))
        return xnn_status_unsupported_parameter;
    if (s->dt == XD_QS8) {
        /* XNNPACK sums the image in 32 bits from a bias of -zero_point x pixels: up to 255
         * x pixels in all, which leaves int32 past about 2^23 pixels (2^24 pixels of 127 at
         * zero point -128 averaged to -128). Larger images stay on the reference kernel. */
        if (wd.fh != h || wd.fw != w || (uint64_t)h * w > XNN_MAX_QS8_AVERAGE_PIXELS)
            return xnn_status_unsupported_parameter;
        s->kind = &global_avg_kind;
        return xnn_create_global_average_pooling_nwc_qs8(
            ch, ch, ch, (int8_t)x->zero_point, x->scale, (int8_t)y->zero_point, y->scale,
            (int8_t)qlo, (int8_t)qhi, s->flags, &s->op);
    }
    if (s->dt == XD_QU8)
        return xnn_create_average_pooling2d_nhwc_qu8(
            0, 0, 0, 0, wd.fh, wd.fw, wd.sh, wd.sw, ch, ch, ch, (uint8_t)x->zero_point, x->scale,
            (uint8_t)y->zero_point, y->scale, (uint8_t)qlo, (uint8_t)qhi, s->flags, &s->op);
    return xnn_create_average_pooling2d_nhwc_f32(wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3], wd.fh,
                                                 wd.fw, wd.sh, wd.sw, ch, ch, ch, lo, hi, s->flags,
                                                 &s->op);
}

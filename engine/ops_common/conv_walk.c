/* SPDX-License-Identifier: Apache-2.0 */
/* conv_walk.c: the convolution engine. See conv_walk.h. */
#include "engine/ops_common/conv_walk.h"

#include <math.h>
#include <string.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/fused_activation.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

/* Where the scalars of a windowed convolution sit, from the input count and the type of
 * the operand that is the layout flag under implicit padding (INT32 there means the
 * explicit form). */
typedef struct conv_slots {
    bool explicit_pad;
    uint32_t stride, extra, act, layout; /* input indices */
} conv_slots;

static void conv_slots_of(const eng_op_ctx *c, uint32_t n_extra, conv_slots *s) {
    uint32_t implicit_n = 7 + n_extra;
    s->explicit_pad = c->n_in > implicit_n && c->in[implicit_n]->type == SCHEMA_INT32;
    s->stride = s->explicit_pad ? 7 : 4;
    s->extra = s->stride + 2;
    s->act = s->extra + n_extra;
    s->layout = s->act + 1;
}

schema_status eng_conv_check_params(eng_op_ctx *c, uint32_t n_extra, unsigned flags) {
    schema_status s = eng_check_count(c, 7 + n_extra, 13 + n_extra, 1, 1);
    if (s) return s;
    conv_slots sl;
    conv_slots_of(c, n_extra, &sl);
    uint32_t n = c->n_in, base = sl.layout;
    bool ok = n == base + 1 || (!(flags & ENG_CONV_LAYOUT_REQUIRED) && n == base) ||
              ((flags & ENG_CONV_DILATION) && n == base + 3);
    if (!ok)
        return eng_fail(c, "%u inputs do not form the %s padding signature", n,
                        sl.explicit_pad ? "explicit" : "implicit");
    for (uint32_t i = 3; i < n; i++)
        if ((s = eng_check_scalar(c, i, i == base ? SCHEMA_BOOL : SCHEMA_INT32))) return s;
    for (uint32_t i = 3; i < n; i++) {
        const eng_tensor *t = c->in[i];
        if (!t->data || i == base) continue;
        int32_t v = eng_i32(t);
        if (i < sl.stride && sl.explicit_pad && v < 0)
            return eng_fail(c, "padding (input %u) is %d, must not be negative", i, v);
        if (i < sl.stride && !sl.explicit_pad && v != SCHEMA_PADDING_SAME &&
            v != SCHEMA_PADDING_VALID)
            return eng_fail(c, "padding scheme (input %u) is %d, not 1 (SAME) or 2 (VALID)", i, v);
        if (i >= sl.stride && i != sl.act && v <= 0)
            return eng_fail(c, "%s (input %u) is %d, must be positive",
                            i < sl.extra ? "stride" : (i < sl.act ? "parameter" : "dilation"), i,
                            v);
    }
    return eng_check_activation(c, sl.act);
}

schema_status eng_conv_read_params(const eng_op_ctx *c, uint32_t n_extra, eng_conv_params *p) {
    conv_slots sl;
    conv_slots_of(c, n_extra, &sl);
    for (uint32_t i = 3; i < c->n_in; i++)
        if (!c->in[i]->data) return ENG_DEFER;
    *p = (eng_conv_params){.dil_w = 1, .dil_h = 1};
    if (sl.explicit_pad) {
        p->pad_left = eng_i32(c->in[3]);
        p->pad_right = eng_i32(c->in[4]);
        p->pad_top = eng_i32(c->in[5]);
        p->pad_bottom = eng_i32(c->in[6]);
    } else {
        p->scheme = eng_i32(c->in[3]);
    }
    p->stride_w = eng_i32(c->in[sl.stride]);
    p->stride_h = eng_i32(c->in[sl.stride + 1]);
    if (n_extra) p->extra = eng_i32(c->in[sl.extra]);
    p->act = eng_i32(c->in[sl.act]);
    if (c->n_in > sl.layout) p->nchw = eng_bool(c->in[sl.layout]);
    if (c->n_in > sl.layout + 2) {
        p->dil_w = eng_i32(c->in[sl.layout + 1]);
        p->dil_h = eng_i32(c->in[sl.layout + 2]);
    }
    return SCHEMA_OK;
}

schema_status eng_conv_check_tensors(eng_op_ctx *c, int channel_dim) {
    const eng_tensor *in = c->in[0], *f = c->in[1], *b = c->in[2];
    schema_status s =
        eng_check_type(c, in, "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                       SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    if (s || (s = eng_check_same_type(c, 0, 0))) return s;
    if (!eng_is_quant8(in->type)) {
        if (f->type != in->type || b->type != in->type)
            return eng_fail(c, "filter (input 1) and bias (input 2) must be %s like the input",
                            schema_type_name(in->type));
        return SCHEMA_OK;
    }
    if (b->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "bias (input 2) must be TENSOR_INT32 for a quantized input, is %s",
                        schema_type_name(b->type));
    if (f->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        if (channel_dim < 0)
            return eng_fail(c, "filter (input 1) cannot be TENSOR_QUANT8_SYMM_PER_CHANNEL here");
        if (!f->channel_quant || f->channel_quant->channel_dim != (uint32_t)channel_dim)
            return eng_fail(c, "filter (input 1) must be quantized per channel along dimension %d",
                            channel_dim);
        return SCHEMA_OK;
    }
    /* Per-tensor weights share the input's storage type: no mixing of signedness. */
    if (f->type != in->type)
        return eng_fail(c, "filter (input 1) has type %s, not %s like the input%s",
                        schema_type_name(f->type), schema_type_name(in->type),
                        channel_dim < 0 ? "" : " (or TENSOR_QUANT8_SYMM_PER_CHANNEL)");
    if (!eng_driver_rules(c)) return SCHEMA_OK;
    /* As the reference: the product is formed in float, then compared in double. */
    double product = in->scale * f->scale, bias = b->scale;
    if (fabs(product - bias) > 1e-6 * fmin(product, bias))
        return eng_fail(c, "bias (input 2) scale %g is not input scale * filter scale (%g)",
                        b->scale, product);
    return SCHEMA_OK;
}

schema_status eng_conv_geometry(eng_op_ctx *c, const eng_conv_params *p, const eng_tensor *in,
                                uint32_t filter_h, uint32_t filter_w, eng_conv_geom *g) {
    eng_image im;
    eng_image_of(in, p->nchw, &im);
    *g = (eng_conv_geom){.batches = im.n,
                         .in_h = im.h,
                         .in_w = im.w,
                         .in_c = im.c,
                         .filter_h = filter_h,
                         .filter_w = filter_w,
                         .stride_h = p->stride_h,
                         .stride_w = p->stride_w,
                         .dil_h = p->dil_h,
                         .dil_w = p->dil_w,
                         .nchw = p->nchw};
    if (!im.h || !im.w || !im.c)
        return eng_fail(c, "input 0 has an empty image (height %u, width %u, depth %u)", im.h, im.w,
                        im.c);
    if (!filter_h || !filter_w) return eng_fail(c, "filter (input 1) has an empty window");
    int64_t eff_w = (int64_t)(filter_w - 1) * p->dil_w + 1;
    int64_t eff_h = (int64_t)(filter_h - 1) * p->dil_h + 1;
    if (eff_w > INT32_MAX || eff_h > INT32_MAX) return eng_fail(c, "dilated filter is too large");
    int32_t left = p->pad_left, right = p->pad_right, top = p->pad_top, bottom = p->pad_bottom;
    uint32_t unused;
    if (p->scheme) {
        eng_implicit_padding(p->scheme, im.w, (uint32_t)p->stride_w, filter_w, (uint32_t)p->dil_w,
                             &unused, &left, &right);
        eng_implicit_padding(p->scheme, im.h, (uint32_t)p->stride_h, filter_h, (uint32_t)p->dil_h,
                             &unused, &top, &bottom);
    }
    if (left >= eff_w || right >= eff_w || top >= eff_h || bottom >= eff_h)
        return eng_fail(c, "padding (%d, %d, %d, %d) must be smaller than the %lldx%lld filter",
                        left, right, top, bottom, (long long)eff_h, (long long)eff_w);
    g->pad_left = left;
    g->pad_top = top;
    g->out_w =
        eng_window_out(im.w, filter_w, (uint32_t)p->dil_w, (uint32_t)p->stride_w, left, right);
    g->out_h =
        eng_window_out(im.h, filter_h, (uint32_t)p->dil_h, (uint32_t)p->stride_h, top, bottom);
    return SCHEMA_OK;
}

void eng_conv_requant(int32_t op, const eng_tensor *in, const eng_tensor *filter,
                      const eng_tensor *out, uint32_t n, int32_t *mult, int *shift) {
    bool per_channel =
        filter->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL && filter->channel_quant;
    /* TFLite keeps the uint8 kernels' float product (and FULLY_CONNECTED's, of both types);
     * its signed convolutions take the product per channel in double. */
    bool float_product = op == SCHEMA_OP_FULLY_CONNECTED || in->type == SCHEMA_TENSOR_QUANT8_ASYMM;
    for (uint32_t i = 0; i < n; i++) {
        float fs = per_channel ? filter->channel_quant->scales[i] : filter->scale;
        eng_quantize_multiplier(eng_product_multiplier(in->scale, fs, out->scale, float_product),
                                &mult[i], &shift[i]);
    }
}

typedef struct conv_job conv_job;
struct conv_job {
    const eng_conv_geom *g;
    const void *in;     /* NHWC; float, or int16 without the zero point */
    const void *filter; /* float, or int16 without the zero point */
    void *acc;          /* out_c accumulators, float or int32 */
    uint32_t icg, ocg;  /* input and output channels per group */
    /* acc += the products of one input pixel with one filter tap */
    void (*tap)(const conv_job *j, size_t in_off, size_t filter_off);
    /* writes acc + bias to the output pixel at out_off */
    void (*emit)(const conv_job *j, size_t out_off);
    eng_image out_im;
    const void *bias;
    void *out;
    float lo, hi;         /* float activation range */
    int32_t qlo, qhi, zo; /* quantized activation range, output zero point */
    const int32_t *mult;  /* per output channel */
    const int *shift;
};

/* Each output channel adds the products of its group's input channels with its filter tap
 * to its running total; channels within a group are contiguous in both, so the inner loop
 * is too. One total from the first tap to the last, product by product, as TensorFlow
 * Lite's reference sums (float results then round the same way, not only within a step).
 * Products are ACC; sums are SUM: for the quantized kernel unsigned, so that a sum past
 * the int32 range wraps as the reference's two's complement accumulator does (a product of
 * two widened 8-bit values always fits). */
#define CONV_TAP(name, T, ACC, SUM)                                                                \
    static void name(const conv_job *j, size_t in_off, size_t filter_off) {                        \
        const T *x = (const T *)j->in + in_off, *w = (const T *)j->filter + filter_off;            \
        ACC *acc = j->acc;                                                                         \
        size_t so = j->g->filter_oc_stride;                                                        \
        for (uint32_t grp = 0, oc = 0; grp < j->g->groups; grp++, x += j->icg)                     \
            for (uint32_t m = 0; m < j->ocg; m++, oc++) {                                          \
                const T *wo = w + oc * so;                                                         \
                SUM s = (SUM)acc[oc];                                                              \
                for (uint32_t k = 0; k < j->icg; k++)                                              \
                    s += (SUM)((ACC)x[k] * (ACC)wo[k]);                                            \
                acc[oc] = (ACC)s;                                                                  \
            }                                                                                      \
    }
CONV_TAP(conv_tap_f32, float, float, float)
CONV_TAP(conv_tap_q, int16_t, int32_t, uint32_t)
#undef CONV_TAP

static void conv_emit_f32(const conv_job *j, size_t o) {
    const float *acc = j->acc, *bias = j->bias;
    float *out = j->out;
    for (uint32_t oc = 0; oc < j->g->out_c; oc++)
        out[o + oc * j->out_im.sc] = eng_clampf(acc[oc] + bias[oc], j->lo, j->hi);
}

/* acc + bias wraps as the reference's int32 sum does; the zero point saturates. */
static void conv_emit_q8(const conv_job *j, size_t o) {
    const int32_t *acc = j->acc, *bias = j->bias;
    for (uint32_t oc = 0; oc < j->g->out_c; oc++) {
        int32_t sum = (int32_t)((uint32_t)acc[oc] + (uint32_t)bias[oc]);
        int32_t v = eng_mul_by_quantized(sum, j->mult[oc], j->shift[oc]);
        eng_q8_put(j->out, o + oc * j->out_im.sc, eng_q8_offset(v, j->zo, j->qlo, j->qhi));
    }
}

void eng_conv_tap_span(int64_t origin, int32_t dilation, uint32_t filter, uint32_t size,
                       uint32_t *lo, uint32_t *hi) {
    int64_t a = origin < 0 ? (-origin + dilation - 1) / dilation : 0;
    int64_t b = origin < (int64_t)size ? ((int64_t)size - origin + dilation - 1) / dilation : 0;
    if (b > filter) b = filter;
    if (a > b) a = b;
    *lo = (uint32_t)a;
    *hi = (uint32_t)b;
}

static void conv_walk(const conv_job *j) {
    const eng_conv_geom *g = j->g;
    size_t row = (size_t)g->in_w * g->in_c, image = row * g->in_h;
    for (uint32_t n = 0; n < g->batches; n++)
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            int64_t iy0 = (int64_t)oy * g->stride_h - g->pad_top;
            uint32_t ky0, ky1;
            eng_conv_tap_span(iy0, g->dil_h, g->filter_h, g->in_h, &ky0, &ky1);
            for (uint32_t ox = 0; ox < g->out_w; ox++) {
                int64_t ix0 = (int64_t)ox * g->stride_w - g->pad_left;
                uint32_t kx0, kx1;
                eng_conv_tap_span(ix0, g->dil_w, g->filter_w, g->in_w, &kx0, &kx1);
                memset(j->acc, 0, sizeof(int32_t) * g->out_c); /* all-zero bits: 0.0f too */
                for (uint32_t ky = ky0; ky < ky1; ky++) {
                    size_t y = (size_t)(iy0 + (int64_t)ky * g->dil_h);
                    for (uint32_t kx = kx0; kx < kx1; kx++) {
                        size_t x = (size_t)(ix0 + (int64_t)kx * g->dil_w);
                        j->tap(j, n * image + y * row + x * g->in_c,
                               ((size_t)ky * g->filter_w + kx) * g->filter_tap_stride);
                    }
                }
                j->emit(j, eng_image_at(&j->out_im, n, oy, ox, 0));
            }
        }
}

/* n elements of t from index i with stride s into dst[o...]: floats as they are,
 * quantized values (8-bit of either signedness, or per-channel int8 with zero point 0)
 * widened to int16 without their zero point. */
static void conv_widen(const eng_tensor *t, size_t i, size_t s, size_t n, void *dst, size_t o) {
    if (t->type == SCHEMA_TENSOR_FLOAT32) {
        const float *src = t->data;
        float *d = dst;
        for (size_t k = 0; k < n; k++)
            d[o + k] = src[i + k * s];
        return;
    }
    int32_t qmin =
        t->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL ? INT8_MIN : eng_q8_min(t->type);
    int16_t *d = dst;
    for (size_t k = 0; k < n; k++)
        d[o + k] = (int16_t)(eng_q8_get(t->data, i + k * s, qmin) - t->zero_point);
}

static void conv_image(uint32_t n, uint32_t h, uint32_t w, uint32_t ch, bool nchw, eng_image *im) {
    eng_tensor t = {.rank = 4};
    eng_set_image_shape(&t, nchw, n, h, w, ch);
    eng_image_of(&t, nchw, im);
}

/* The input as NHWC elements of the kernel's type, in scratch unless usable in place. */
static const void *conv_input(eng_op_ctx *c, const eng_conv_geom *g, const eng_tensor *in) {
    if (in->type == SCHEMA_TENSOR_FLOAT32 && !g->nchw) return in->data;
    size_t elem = in->type == SCHEMA_TENSOR_FLOAT32 ? sizeof(float) : sizeof(int16_t);
    size_t pixels = (size_t)g->batches * g->in_h * g->in_w;
    void *dst = eng_scratch(c, pixels * g->in_c * elem);
    if (!dst) return NULL;
    eng_image im;
    conv_image(g->batches, g->in_h, g->in_w, g->in_c, g->nchw, &im);
    size_t o = 0;
    for (uint32_t n = 0; n < im.n; n++)
        for (uint32_t y = 0; y < im.h; y++)
            for (uint32_t x = 0; x < im.w; x++, o += im.c)
                conv_widen(in, eng_image_at(&im, n, y, x, 0), im.sc, im.c, dst, o);
    return dst;
}

/* The largest tap k <= min(filter - 1, t) with t - k a multiple of stride; negative when
 * there is none. */
static int64_t last_tap(int64_t t, uint32_t filter, int32_t stride) {
    int64_t k = t < (int64_t)filter - 1 ? t : (int64_t)filter - 1;
    k -= (stride - (t - k) % stride) % stride;
    return k;
}

/* The transpose of conv_walk: input pixel i scatters into output pixels i * stride - pad +
 * k, so output pixel o gathers the taps k with o + pad - k a non-negative multiple of the
 * stride, from input pixel (o + pad - k) / stride when that is inside the image. The taps
 * go from the last down, so that the input pixels come in row order: TensorFlow Lite's
 * reference scatters them in that order, and the float sums then round alike. */
static void conv_walk_transposed(const conv_job *j) {
    const eng_conv_geom *g = j->g;
    size_t row = (size_t)g->in_w * g->in_c, image = row * g->in_h;
    for (uint32_t n = 0; n < g->batches; n++)
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            int64_t ty = (int64_t)oy + g->pad_top;
            for (uint32_t ox = 0; ox < g->out_w; ox++) {
                int64_t tx = (int64_t)ox + g->pad_left;
                memset(j->acc, 0, sizeof(int32_t) * g->out_c);
                for (int64_t ky = last_tap(ty, g->filter_h, g->stride_h); ky >= 0;
                     ky -= g->stride_h) {
                    int64_t y = (ty - ky) / g->stride_h;
                    if (y >= g->in_h) break; /* and every smaller tap's pixel too */
                    for (int64_t kx = last_tap(tx, g->filter_w, g->stride_w); kx >= 0;
                         kx -= g->stride_w) {
                        int64_t x = (tx - kx) / g->stride_w;
                        if (x >= g->in_w) break;
                        j->tap(j, n * image + (size_t)y * row + (size_t)x * g->in_c,
                               ((size_t)ky * g->filter_w + (size_t)kx) * g->filter_tap_stride);
                    }
                }
                j->emit(j, eng_image_at(&j->out_im, n, oy, ox, 0));
            }
        }
}

static schema_status conv_run_with(eng_op_ctx *c, const eng_conv_geom *g, const eng_tensor *in,
                                   const eng_tensor *filter, const eng_tensor *bias,
                                   eng_tensor *out, int32_t act, void (*walk)(const conv_job *)) {
    if (!g->batches || !g->out_h || !g->out_w || !g->out_c) return SCHEMA_OK;
    /* Aligned views of the operands: constants may sit at any offset. */
    eng_tensor x = *in, w = *filter;
    x.data = (void *)eng_aligned_data(c, in);
    w.data = (void *)eng_aligned_data(c, filter);
    conv_job j = {.g = g,
                  .icg = g->in_c / g->groups,
                  .ocg = g->out_c / g->groups,
                  .bias = eng_aligned_data(c, bias),
                  .out = out->data,
                  .acc = eng_scratch(c, sizeof(int32_t) * g->out_c)};
    if (!x.data || !w.data || !j.bias || !j.acc) return SCHEMA_GENERAL_FAILURE;
    conv_image(g->batches, g->out_h, g->out_w, g->out_c, g->nchw, &j.out_im);
    if (in->type == SCHEMA_TENSOR_FLOAT32) {
        j.tap = conv_tap_f32;
        j.emit = conv_emit_f32;
        j.filter = w.data;
        eng_act_range_f32(act, &j.lo, &j.hi);
    } else if (eng_is_quant8(in->type)) {
        size_t nf = eng_elems(filter);
        int16_t *wq = eng_scratch(c, nf * sizeof(int16_t));
        int32_t *mult = eng_scratch(c, sizeof(int32_t) * g->out_c);
        int *shift = eng_scratch(c, sizeof(int) * g->out_c);
        if (!wq || !mult || !shift) return SCHEMA_GENERAL_FAILURE;
        conv_widen(&w, 0, 1, nf, wq, 0);
        eng_conv_requant(c->def->code, in, filter, out, g->out_c, mult, shift);
        eng_act_range_q8(act, out, &j.qlo, &j.qhi);
        j.tap = conv_tap_q;
        j.emit = conv_emit_q8;
        j.filter = wq;
        j.mult = mult;
        j.shift = shift;
        j.zo = out->zero_point;
    } else {
        return eng_unsupported(c, "no convolution kernel for %s", schema_type_name(in->type));
    }
    j.in = conv_input(c, g, &x);
    if (!j.in) return SCHEMA_GENERAL_FAILURE;
    walk(&j);
    return SCHEMA_OK;
}

schema_status eng_conv_run(eng_op_ctx *c, const eng_conv_geom *g, const eng_tensor *in,
                           const eng_tensor *filter, const eng_tensor *bias, eng_tensor *out,
                           int32_t act) {
    return conv_run_with(c, g, in, filter, bias, out, act, conv_walk);
}

schema_status eng_conv_transpose_run(eng_op_ctx *c, const eng_conv_geom *g, const eng_tensor *in,
                                     const eng_tensor *filter, const eng_tensor *bias,
                                     eng_tensor *out, int32_t act) {
    return conv_run_with(c, g, in, filter, bias, out, act, conv_walk_transposed);
}

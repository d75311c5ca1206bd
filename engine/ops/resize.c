/* SPDX-License-Identifier: Apache-2.0 */
/* resize.c: RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR on NHWC or NCHW images.
 * Inputs: image; output width and height as INT32, or (HAL 1.2) as FLOAT32/FLOAT16 scale
 * factors (new size = floor(size * scale)); the layout flag (optional for BILINEAR in
 * HAL 1.2, required for NEAREST_NEIGHBOR); HAL 1.3's optional align_corners and
 * half_pixel_centers flags.
 * Source coordinates follow TFLite's reference: scale = in / out (or (in - 1) / (out - 1)
 * with align_corners), sampled at i * scale or, with half-pixel centers, at
 * (i + 0.5) * scale - 0.5. BILINEAR interpolates in float32. 8-bit data interpolates the
 * stored values (input and output share their quantization) as TensorFlow Lite's
 * reference kernels do: TENSOR_QUANT8_ASYMM in float32 with 0.5 added before the
 * truncating cast (round half up); TENSOR_QUANT8_ASYMM_SIGNED in integers, with source
 * positions and weights in 1/1024ths and the sum of the four products rounded half away
 * from zero. NEAREST_NEIGHBOR copies elements, so one path serves every type. */
#include <math.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/float16.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"
#include "engine/ops/op_def.h"

enum { IN_IMAGE, IN_WIDTH, IN_HEIGHT, IN_LAYOUT, IN_ALIGN_CORNERS, IN_HALF_PIXEL };

typedef struct resize_opts {
    bool nchw, align_corners, half_pixel;
} resize_opts;

static bool flag(const eng_op_ctx *c, uint32_t i) {
    return eng_has_input(c, i) && c->in[i]->data && eng_bool(c->in[i]);
}

static resize_opts read_opts(const eng_op_ctx *c) {
    resize_opts o = {flag(c, IN_LAYOUT), flag(c, IN_ALIGN_CORNERS), flag(c, IN_HALF_PIXEL)};
    return o;
}

static schema_status resize_check(eng_op_ctx *c) {
    bool nearest = c->def->code == SCHEMA_OP_RESIZE_NEAREST_NEIGHBOR;
    schema_status s = eng_check_count(c, nearest ? 4 : 3, 6, 1, 1);
    if (s) return s;
    const eng_tensor *in = c->in[IN_IMAGE];
    if ((s = eng_check_type(c, in, "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                            SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED)) ||
        (s = eng_check_same_type(c, 0, 0)) || (s = eng_check_same_quant(c, 0, 0)) ||
        (s = eng_check_rank(c, in, "input 0", 4, 4)))
        return s;
    int32_t st = c->in[IN_WIDTH]->type;
    int32_t scale_type = in->type == SCHEMA_TENSOR_FLOAT16 ? SCHEMA_FLOAT16 : SCHEMA_FLOAT32;
    if (st != SCHEMA_INT32 && st != scale_type)
        return eng_fail(c, "input 1 must be INT32 (a size) or %s (a scale), is %s",
                        schema_type_name(scale_type), schema_type_name(st));
    if ((s = eng_check_scalar(c, IN_HEIGHT, st))) return s;
    for (uint32_t i = IN_LAYOUT; i < c->n_in; i++)
        if (eng_has_input(c, i) && (s = eng_check_scalar(c, i, SCHEMA_BOOL))) return s;
    for (uint32_t i = IN_WIDTH; i <= IN_HEIGHT; i++) {
        const eng_tensor *t = c->in[i];
        if (!t->data) continue;
        if (st == SCHEMA_INT32 ? eng_i32(t) <= 0 : !(eng_f32(t) > 0.f))
            return eng_fail(c, "output %s (input %u) must be positive",
                            i == IN_WIDTH ? "width" : "height", i);
    }
    resize_opts o = read_opts(c);
    if (o.align_corners && o.half_pixel)
        return eng_fail(c, "align_corners and half_pixel_centers cannot both be set");
    return SCHEMA_OK;
}

/* Output size along one axis from input i (a size or a scale factor). */
static schema_status out_size(eng_op_ctx *c, uint32_t i, uint32_t in_size, uint32_t *size) {
    const eng_tensor *t = c->in[i];
    double v;
    if (t->type == SCHEMA_INT32)
        v = eng_i32(t);
    else
        v = floorf((float)in_size * eng_f32(t)); /* float product, as the reference */
    if (!(v >= 1.0 && v <= (double)INT32_MAX))
        return eng_fail(c, "output %s from input %u is %g", i == IN_WIDTH ? "width" : "height", i,
                        v);
    *size = (uint32_t)v;
    return SCHEMA_OK;
}

static schema_status resize_shape(eng_op_ctx *c) {
    resize_opts o = read_opts(c);
    eng_image im;
    eng_image_of(c->in[IN_IMAGE], o.nchw, &im);
    if (!im.h || !im.w || !im.c)
        return eng_fail(c, "input 0 needs a non-zero height, width and depth (%u, %u, %u)", im.h,
                        im.w, im.c);
    uint32_t h, w;
    schema_status s = out_size(c, IN_HEIGHT, im.h, &h);
    if (s || (s = out_size(c, IN_WIDTH, im.w, &w))) return s;
    eng_set_image_shape(c->out[0], o.nchw, im.n, h, w, im.c);
    return SCHEMA_OK;
}

/* Source step per output step along an axis. */
static float axis_scale(uint32_t in, uint32_t out, const resize_opts *o) {
    if (o->align_corners && out > 1) return (float)(in - 1) / (float)(out - 1);
    return (float)in / (float)out;
}

/* ---- bilinear ----------------------------------------------------------------------- */

typedef struct lerp {
    uint32_t lo, hi;
    float t; /* weight of hi; may be negative at the border with half-pixel centers */
} lerp;

static lerp lerp_at(uint32_t i, float scale, uint32_t in, const resize_opts *o) {
    float v = o->half_pixel ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
    float lo = floorf(v), hi = ceilf(v);
    lerp l;
    l.lo = lo < 0.f ? 0 : (lo > (float)(in - 1) ? in - 1 : (uint32_t)lo);
    l.hi = hi > (float)(in - 1) ? in - 1 : (hi < 0.f ? 0 : (uint32_t)hi);
    l.t = v - (float)l.lo;
    return l;
}

/* Interpolates float images src -> dst with the shapes of the op's input and output. */
static void bilinear_f32(const eng_op_ctx *c, const float *src, float *dst) {
    resize_opts o = read_opts(c);
    eng_image in, out;
    eng_image_of(c->in[IN_IMAGE], o.nchw, &in);
    eng_image_of(c->out[0], o.nchw, &out);
    float sy = axis_scale(in.h, out.h, &o), sx = axis_scale(in.w, out.w, &o);
    for (uint32_t n = 0; n < out.n; n++)
        for (uint32_t y = 0; y < out.h; y++) {
            lerp ly = lerp_at(y, sy, in.h, &o);
            for (uint32_t x = 0; x < out.w; x++) {
                lerp lx = lerp_at(x, sx, in.w, &o);
                const float *p00 = src + eng_image_at(&in, n, ly.lo, lx.lo, 0);
                const float *p10 = src + eng_image_at(&in, n, ly.hi, lx.lo, 0);
                const float *p01 = src + eng_image_at(&in, n, ly.lo, lx.hi, 0);
                const float *p11 = src + eng_image_at(&in, n, ly.hi, lx.hi, 0);
                float *q = dst + eng_image_at(&out, n, y, x, 0);
                for (uint32_t ch = 0; ch < out.c; ch++) {
                    size_t i = ch * in.sc;
                    q[ch * out.sc] = p00[i] * (1 - ly.t) * (1 - lx.t) + p10[i] * ly.t * (1 - lx.t) +
                                     p01[i] * (1 - ly.t) * lx.t + p11[i] * ly.t * lx.t;
                }
            }
        }
}

static schema_status bilinear_run_f32(eng_op_ctx *c) {
    bilinear_f32(c, c->in[IN_IMAGE]->data, c->out[0]->data);
    return SCHEMA_OK;
}

/* FLOAT16 and TENSOR_QUANT8_ASYMM interpolate in float32 and convert back: FLOAT16 rounds
 * to nearest, QUANT8 adds 0.5 and truncates. (The FLOAT16 scale scalars are only read by
 * shape(), so the images alone are converted.) */
static schema_status bilinear_run_converted(eng_op_ctx *c) {
    const eng_tensor *in = c->in[IN_IMAGE], *out = c->out[0];
    size_t n_in = eng_elems(in), n_out = eng_elems(out);
    float *src = eng_scratch(c, (n_in + n_out) * sizeof(float) + 1);
    if (!src) return SCHEMA_GENERAL_FAILURE;
    float *dst = src + n_in;
    int32_t type = in->type, qmin = eng_q8_min(type), qmax = eng_q8_max(type);
    for (size_t i = 0; i < n_in; i++) {
        if (type == SCHEMA_TENSOR_FLOAT16)
            src[i] = (float)((const eng_half *)in->data)[i];
        else
            src[i] = (float)eng_q8_get(in->data, i, qmin);
    }
    bilinear_f32(c, src, dst);
    for (size_t i = 0; i < n_out; i++) {
        if (type == SCHEMA_TENSOR_FLOAT16)
            ((eng_half *)out->data)[i] = (eng_half)dst[i];
        else
            eng_q8_put(out->data, i, eng_f2i_clamp(dst[i] + 0.5f, qmin, qmax));
    }
    return SCHEMA_OK;
}

/* ---- bilinear on signed 8-bit values, in 1/1024ths ----------------------------------- */

#define FRAC_BITS 10

/* Source step per output step in 1/1024ths, rounded to nearest. */
static int32_t axis_scale_fixed(uint32_t in, uint32_t out, const resize_opts *o) {
    if (o->align_corners && out > 1)
        return (int32_t)((((int64_t)in - 1) * (1 << FRAC_BITS) + (out - 1) / 2) / (out - 1));
    return (int32_t)(((int64_t)in * (1 << FRAC_BITS) + out / 2) / out);
}

typedef struct lerp_fixed {
    uint32_t lo, hi;
    int64_t w_hi, w_lo; /* weights in 1/1024ths; w_lo + w_hi == 1024 */
} lerp_fixed;

static lerp_fixed lerp_fixed_at(uint32_t i, int32_t scale, uint32_t in, const resize_opts *o) {
    int64_t v = (int64_t)i * scale;
    if (o->half_pixel) v += scale / 2 - (1 << (FRAC_BITS - 1));
    int64_t lo = v / (1 << FRAC_BITS), hi = (v + (1 << FRAC_BITS) - 1) / (1 << FRAC_BITS);
    /* The scale is rounded to 1/1024ths, so v can run past the last row (up to about twice
     * the input size when out is much larger than in): both ends are clamped into the
     * input, as lerp_at does. With lo == hi the weights only scale one value. */
    lerp_fixed l;
    l.lo = lo < 0 ? 0 : (lo > (int64_t)in - 1 ? in - 1 : (uint32_t)lo);
    l.hi = hi < 0 ? 0 : (hi > (int64_t)in - 1 ? in - 1 : (uint32_t)hi);
    l.w_hi = v - ((int64_t)l.lo << FRAC_BITS);
    l.w_lo = (1 << FRAC_BITS) - l.w_hi;
    return l;
}

static schema_status bilinear_run_s8(eng_op_ctx *c) {
    resize_opts o = read_opts(c);
    const eng_tensor *src = c->in[IN_IMAGE];
    eng_tensor *dst = c->out[0];
    eng_image in, out;
    eng_image_of(src, o.nchw, &in);
    eng_image_of(dst, o.nchw, &out);
    int32_t sy = axis_scale_fixed(in.h, out.h, &o), sx = axis_scale_fixed(in.w, out.w, &o);
    const int64_t half = (int64_t)1 << (2 * FRAC_BITS - 1), unit = half * 2;
    for (uint32_t n = 0; n < out.n; n++)
        for (uint32_t y = 0; y < out.h; y++) {
            lerp_fixed ly = lerp_fixed_at(y, sy, in.h, &o);
            for (uint32_t x = 0; x < out.w; x++) {
                lerp_fixed lx = lerp_fixed_at(x, sx, in.w, &o);
                size_t p00 = eng_image_at(&in, n, ly.lo, lx.lo, 0);
                size_t p10 = eng_image_at(&in, n, ly.hi, lx.lo, 0);
                size_t p01 = eng_image_at(&in, n, ly.lo, lx.hi, 0);
                size_t p11 = eng_image_at(&in, n, ly.hi, lx.hi, 0);
                size_t q = eng_image_at(&out, n, y, x, 0);
                for (uint32_t ch = 0; ch < out.c; ch++) {
                    size_t i = ch * in.sc;
                    int64_t sum = eng_q8_get(src->data, p00 + i, INT8_MIN) * ly.w_lo * lx.w_lo +
                                  eng_q8_get(src->data, p10 + i, INT8_MIN) * ly.w_hi * lx.w_lo +
                                  eng_q8_get(src->data, p01 + i, INT8_MIN) * ly.w_lo * lx.w_hi +
                                  eng_q8_get(src->data, p11 + i, INT8_MIN) * ly.w_hi * lx.w_hi;
                    int64_t r = (sum + (sum > 0 ? half : -half)) / unit;
                    eng_q8_put(dst->data, q + ch * out.sc,
                               eng_clampi((int32_t)r, INT8_MIN, INT8_MAX));
                }
            }
        }
    return SCHEMA_OK;
}

static schema_status bilinear_run_q8(eng_op_ctx *c) {
    return c->in[IN_IMAGE]->type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED ? bilinear_run_s8(c)
                                                                      : bilinear_run_converted(c);
}

/* ---- nearest neighbor --------------------------------------------------------------- */

static uint32_t nearest_at(uint32_t i, float scale, uint32_t in, const resize_opts *o) {
    float v = ((float)i + (o->half_pixel ? 0.5f : 0.f)) * scale;
    float r = o->align_corners ? roundf(v) : floorf(v);
    if (r > (float)(in - 1)) return in - 1;
    return r < 0.f ? 0 : (uint32_t)r;
}

static schema_status nearest_run(eng_op_ctx *c) {
    resize_opts o = read_opts(c);
    const eng_tensor *src = c->in[IN_IMAGE];
    eng_tensor *dst = c->out[0];
    eng_image in, out;
    eng_image_of(src, o.nchw, &in);
    eng_image_of(dst, o.nchw, &out);
    float sy = axis_scale(in.h, out.h, &o), sx = axis_scale(in.w, out.w, &o);
    size_t es = schema_type_size(src->type);
    const uint8_t *from = src->data;
    uint8_t *to = dst->data;
    for (uint32_t n = 0; n < out.n; n++)
        for (uint32_t y = 0; y < out.h; y++) {
            uint32_t iy = nearest_at(y, sy, in.h, &o);
            for (uint32_t x = 0; x < out.w; x++) {
                uint32_t ix = nearest_at(x, sx, in.w, &o);
                eng_copy_elems(to + eng_image_at(&out, n, y, x, 0) * es, out.sc,
                               from + eng_image_at(&in, n, iy, ix, 0) * es, in.sc, out.c, es);
            }
        }
    return SCHEMA_OK;
}

#define RESIZE_KERNELS(f32, f16, q8)                                                               \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, f32}, {SCHEMA_TENSOR_FLOAT16, f16},                                \
            {SCHEMA_TENSOR_QUANT8_ASYMM, q8}, {                                                    \
            SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, q8                                                  \
        }                                                                                          \
    }

ENG_OP_DEF(RESIZE_BILINEAR, resize_check, resize_shape, ENG_INPUT(3) | ENG_INPUT(4) | ENG_INPUT(5),
           0, RESIZE_KERNELS(bilinear_run_f32, bilinear_run_converted, bilinear_run_q8));
ENG_OP_DEF(RESIZE_NEAREST_NEIGHBOR, resize_check, resize_shape,
           ENG_INPUT(3) | ENG_INPUT(4) | ENG_INPUT(5), 0,
           RESIZE_KERNELS(nearest_run, nearest_run, nearest_run));

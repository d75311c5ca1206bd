/* SPDX-License-Identifier: Apache-2.0 */
/* pool.c: AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D. One window walker clips each
 * output pixel's window to the image (padding contributes nothing and is not counted) and
 * hands it to a reducer: FLOAT32 in float, in TensorFlow Lite's reference order; 8-bit
 * quantized data in exact integers (averages round half away from zero, as in the
 * reference). FLOAT16 runs the float32 path through the type bridge. Quantized outputs keep
 * the input's scale and zero point. */
#include <float.h>
#include <math.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fused_activation.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"
#include "engine/ops/op_def.h"

enum pool_kind { POOL_AVG, POOL_MAX, POOL_L2 };

static enum pool_kind pool_kind_of(const eng_op_ctx *c) {
    switch (c->def->code) {
    case SCHEMA_OP_MAX_POOL_2D: return POOL_MAX;
    case SCHEMA_OP_L2_POOL_2D: return POOL_L2;
    default: return POOL_AVG;
    }
}

/* Operand layout: 0 input, then either explicit padding (1..4 left, right, top, bottom) or
 * an implicit scheme (1), then stride w, stride h, filter w, filter h, activation and an
 * optional NCHW flag. The reference tells the two forms apart by the input count. */
static bool pool_explicit(const eng_op_ctx *c) {
    return c->n_in >= 10;
}
static uint32_t pool_stride_slot(const eng_op_ctx *c) {
    return pool_explicit(c) ? 5 : 2;
}

static schema_status pool_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 7, 11, 1, 1);
    if (s) return s;
    if (c->n_in == 9)
        return eng_fail(c, "takes 7 or 8 (implicit) or 10 or 11 (explicit padding) inputs, got 9");
    const eng_tensor *in = c->in[0];
    if (pool_kind_of(c) == POOL_L2)
        s = eng_check_type(c, in, "input 0", 2, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16);
    else
        s = eng_check_type(c, in, "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                           SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    if (s || (s = eng_check_same_type(c, 0, 0)) || (s = eng_check_same_quant(c, 0, 0)) ||
        (s = eng_check_rank(c, in, "input 0", 4, 4)))
        return s;
    uint32_t stride = pool_stride_slot(c), act = stride + 4, layout = act + 1;
    for (uint32_t i = 1; i < c->n_in; i++)
        if ((s = eng_check_scalar(c, i, i == layout ? SCHEMA_BOOL : SCHEMA_INT32))) return s;
    for (uint32_t i = 1; i < act; i++) {
        if (!c->in[i]->data) continue;
        int32_t v = eng_i32(c->in[i]);
        if (i >= stride && v <= 0)
            return eng_fail(c, "%s (input %u) is %d, must be positive",
                            i < stride + 2 ? "stride" : "filter size", i, v);
        if (i < stride && pool_explicit(c) && v < 0)
            return eng_fail(c, "padding (input %u) is %d, must not be negative", i, v);
        if (i < stride && !pool_explicit(c) && v != SCHEMA_PADDING_SAME &&
            v != SCHEMA_PADDING_VALID)
            return eng_fail(c, "padding scheme (input 1) is %d, not 1 (SAME) or 2 (VALID)", v);
    }
    return eng_check_activation(c, act);
}

typedef struct pool_geom {
    eng_image in;
    uint32_t out_h, out_w;
    int32_t pad_top, pad_left, stride_h, stride_w, filter_h, filter_w, act;
    bool nchw;
} pool_geom;

/* Reads the scalars and derives the window geometry; fails on inconsistent values. */
static schema_status pool_geometry(eng_op_ctx *c, pool_geom *g) {
    uint32_t st = pool_stride_slot(c);
    for (uint32_t i = 1; i < c->n_in; i++)
        if (!c->in[i]->data) return ENG_DEFER;
    g->nchw = c->n_in == st + 6 && eng_bool(c->in[st + 5]);
    eng_image_of(c->in[0], g->nchw, &g->in);
    g->stride_w = eng_i32(c->in[st]);
    g->stride_h = eng_i32(c->in[st + 1]);
    g->filter_w = eng_i32(c->in[st + 2]);
    g->filter_h = eng_i32(c->in[st + 3]);
    g->act = eng_i32(c->in[st + 4]);
    if (g->stride_w <= 0 || g->stride_h <= 0 || g->filter_w <= 0 || g->filter_h <= 0)
        return eng_fail(c, "strides and filter sizes must be positive");
    int32_t left, right, top, bottom;
    uint32_t unused;
    if (pool_explicit(c)) {
        left = eng_i32(c->in[1]), right = eng_i32(c->in[2]);
        top = eng_i32(c->in[3]), bottom = eng_i32(c->in[4]);
    } else {
        int32_t scheme = eng_i32(c->in[1]);
        if (scheme != SCHEMA_PADDING_SAME && scheme != SCHEMA_PADDING_VALID)
            return eng_fail(c, "padding scheme (input 1) is %d, not 1 (SAME) or 2 (VALID)", scheme);
        eng_implicit_padding(scheme, g->in.w, (uint32_t)g->stride_w, (uint32_t)g->filter_w, 1,
                             &unused, &left, &right);
        eng_implicit_padding(scheme, g->in.h, (uint32_t)g->stride_h, (uint32_t)g->filter_h, 1,
                             &unused, &top, &bottom);
    }
    if (left < 0 || right < 0 || top < 0 || bottom < 0)
        return eng_fail(c, "padding must not be negative");
    /* A padding as wide as the filter would give windows with no input at all. */
    if (left >= g->filter_w || right >= g->filter_w || top >= g->filter_h || bottom >= g->filter_h)
        return eng_fail(c, "padding (%d, %d, %d, %d) must be smaller than the %dx%d filter", left,
                        right, top, bottom, g->filter_h, g->filter_w);
    if (g->act < SCHEMA_FUSED_NONE || g->act > SCHEMA_FUSED_RELU6)
        return eng_fail(c, "fused activation %d is not 0..3", g->act);
    g->pad_left = left;
    g->pad_top = top;
    g->out_w =
        eng_window_out(g->in.w, (uint32_t)g->filter_w, 1, (uint32_t)g->stride_w, left, right);
    g->out_h =
        eng_window_out(g->in.h, (uint32_t)g->filter_h, 1, (uint32_t)g->stride_h, top, bottom);
    return SCHEMA_OK;
}

static schema_status pool_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    if (in->rank != 4) return eng_fail(c, "input 0 must have rank 4, has %u", in->rank);
    pool_geom g;
    schema_status s = pool_geometry(c, &g);
    if (s) return s;
    /* Only the batch may be empty. */
    if (!g.in.h || !g.in.w || !g.in.c)
        return eng_fail(c, "input 0 has an empty image (height %u, width %u, depth %u)", g.in.h,
                        g.in.w, g.in.c);
    eng_set_image_shape(c->out[0], g.nchw, g.in.n, g.out_h, g.out_w, g.in.c);
    return SCHEMA_OK;
}

/* ---- the window walker -------------------------------------------------------------- */

typedef struct pool_job {
    pool_geom g;
    eng_image out;
    enum pool_kind kind;
    bool q8;      /* 8-bit quantized data, else float32 */
    int32_t qmin; /* of the 8-bit type */
    const void *in_data;
    void *out_data;
    float lo, hi;     /* float activation range */
    int32_t qlo, qhi; /* quantized activation range */
} pool_job;

static void pool_store(const pool_job *j, double acc, uint64_t count, size_t out);

/* A float window as TensorFlow Lite's reference kernels reduce it, so that the results
 * agree to the bit: a float total in row order, divided by the count in float (L2: the
 * square root of that); the maximum starts from the lowest finite float. */
static void pool_reduce_f32(const pool_job *j, size_t in, uint32_t h, uint32_t w, size_t out) {
    size_t sh = j->g.in.sh, sw = j->g.in.sw;
    const float *x = j->in_data;
    float acc = j->kind == POOL_MAX ? -FLT_MAX : 0.f;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t k = 0; k < w; k++) {
            float v = x[in + y * sh + k * sw];
            if (j->kind == POOL_MAX)
                acc = v > acc ? v : acc;
            else
                acc += j->kind == POOL_L2 ? v * v : v;
        }
    uint64_t count = (uint64_t)h * w;
    if (count == 0)
        acc = 0.f;
    else if (j->kind != POOL_MAX)
        acc /= (float)count;
    if (j->kind == POOL_L2) acc = sqrtf(acc);
    ((float *)j->out_data)[out] = eng_clampf(acc, j->lo, j->hi);
}

/* Reduces the h x w window whose first element is at input offset `in` and writes the
 * result at output offset `out`. Accumulating in double keeps quantized sums exact, so the
 * integer average below rounds as the reference's integer pipeline does. */
static void pool_reduce(const pool_job *j, size_t in, uint32_t h, uint32_t w, size_t out) {
    if (!j->q8) {
        pool_reduce_f32(j, in, h, w, out);
        return;
    }
    size_t sh = j->g.in.sh, sw = j->g.in.sw;
    double acc = j->kind == POOL_MAX ? -DBL_MAX : 0.0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t k = 0; k < w; k++) {
            size_t at = in + y * sh + k * sw;
            double v =
                j->q8 ? eng_q8_get(j->in_data, at, j->qmin) : ((const float *)j->in_data)[at];
            if (j->kind == POOL_MAX)
                acc = v > acc ? v : acc;
            else
                acc += j->kind == POOL_L2 ? v * v : v;
        }
    pool_store(j, acc, (uint64_t)h * w, out);
}

/* Writes one output element from its window's reduction acc over count elements. */
static void pool_store(const pool_job *j, double acc, uint64_t count, size_t out) {
    if (count == 0) acc = 0.0;
    if (j->q8) {
        int64_t r = (int64_t)acc, half = (int64_t)(count / 2);
        if (j->kind == POOL_AVG && count) r = (r >= 0 ? r + half : r - half) / (int64_t)count;
        eng_q8_put(j->out_data, out, eng_clampi((int32_t)r, j->qlo, j->qhi));
        return;
    }
    if (j->kind != POOL_MAX && count) acc /= (double)count;
    if (j->kind == POOL_L2) acc = sqrt(acc);
    ((float *)j->out_data)[out] = eng_clampf((float)acc, j->lo, j->hi);
}

static uint32_t clip(int64_t v, uint32_t hi) {
    return v < 0 ? 0 : (v > hi ? hi : (uint32_t)v);
}

/* ---- wide windows ------------------------------------------------------------------------
 * A window of more than POOL_WIDE_WINDOW elements reduced afresh for every output element
 * costs output x window: with a filter as large as the image and stride 1, that is
 * quadratic and no checkpoint stops it. Such windows are reduced in two separable passes
 * (columns, then rows), each sliding along the image: a running sum in double precision
 * (exact for QUANT8 sums) or a monotone queue for the maximum, so the work is linear in
 * the input and output. */
#define POOL_WIDE_WINDOW 64
/* Float windows are summed afresh in TensorFlow Lite's order (pool_reduce_f32) up to this
 * many additions in all, some tens of milliseconds; past it they slide too, in double. */
#define POOL_DIRECT_WORK (1ull << 26)

/* The window [lo, hi) of output k along one axis, clipped to len. */
static void window_of(int64_t k, int32_t stride, int32_t pad, int32_t filter, uint32_t len,
                      uint32_t *lo, uint32_t *hi) {
    int64_t s = k * stride - pad;
    *lo = clip(s, len);
    *hi = clip(s + filter, len);
}

/* dst[k * dst_step] = the reduction of src[lo(k) .. hi(k)) for k < n, where both window
 * ends never decrease with k. queue: room for len indexes (maximum only). */
static void slide(const pool_job *j, const double *src, uint32_t len, int32_t stride, int32_t pad,
                  int32_t filter, uint32_t n, double *dst, size_t dst_step, uint32_t *queue) {
    uint32_t lo = 0, hi = 0, qh = 0, qt = 0; /* queue[qh..qt): indexes, values decreasing */
    double sum = 0.0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t a, b;
        window_of(k, stride, pad, filter, len, &a, &b);
        if (a >= hi) { /* disjoint from the last window: start afresh */
            lo = hi = a;
            sum = 0.0;
            qh = qt = 0;
        }
        for (; hi < b; hi++) {
            if (j->kind == POOL_MAX) {
                while (qt > qh && src[queue[qt - 1]] <= src[hi])
                    qt--;
                queue[qt++] = hi;
            } else {
                sum += src[hi];
            }
        }
        for (; lo < a; lo++)
            if (j->kind != POOL_MAX) sum -= src[lo];
        while (qt > qh && queue[qh] < a)
            qh++;
        if (j->kind == POOL_MAX)
            dst[(size_t)k * dst_step] = qt > qh ? src[queue[qh]] : -DBL_MAX;
        else
            dst[(size_t)k * dst_step] = sum;
    }
}

static schema_status pool_walk_wide(eng_op_ctx *c, const pool_job *j) {
    const pool_geom *g = &j->g;
    const eng_image *im = &g->in, *om = &j->out;
    uint64_t cols = (uint64_t)om->h * im->w, longest = im->h > im->w ? im->h : im->w;
    if (cols > SIZE_MAX / sizeof(double) / 2) return eng_fail(c, "pooling scratch too large");
    double *colred = eng_scratch(c, (size_t)cols * sizeof(double));
    double *line = eng_scratch(c, (size_t)longest * sizeof(double));
    double *row = eng_scratch(c, (size_t)om->w * sizeof(double));
    uint32_t *queue = eng_scratch(c, (size_t)longest * sizeof(uint32_t));
    if (!colred || !line || !row || !queue) return eng_fail(c, "out of scratch memory");
    for (uint32_t n = 0; n < im->n; n++)
        for (uint32_t ch = 0; ch < im->c; ch++) {
            /* Columns: colred[oy][x] reduces input rows y0(oy)..y1(oy) of column x. */
            for (uint32_t x = 0; x < im->w; x++) {
                for (uint32_t y = 0; y < im->h; y++) {
                    size_t at = eng_image_at(im, n, y, x, ch);
                    double v = j->q8 ? eng_q8_get(j->in_data, at, j->qmin)
                                     : ((const float *)j->in_data)[at];
                    line[y] = j->kind == POOL_L2 ? v * v : v;
                }
                slide(j, line, im->h, g->stride_h, g->pad_top, g->filter_h, om->h, colred + x,
                      im->w, queue);
            }
            /* Rows: each output row reduces its column results along x. */
            for (uint32_t oy = 0; oy < om->h; oy++) {
                slide(j, colred + (size_t)oy * im->w, im->w, g->stride_w, g->pad_left, g->filter_w,
                      om->w, row, 1, queue);
                uint32_t y0, y1;
                window_of(oy, g->stride_h, g->pad_top, g->filter_h, im->h, &y0, &y1);
                for (uint32_t ox = 0; ox < om->w; ox++) {
                    uint32_t x0, x1;
                    window_of(ox, g->stride_w, g->pad_left, g->filter_w, im->w, &x0, &x1);
                    pool_store(j, row[ox], (uint64_t)(y1 - y0) * (x1 - x0),
                               eng_image_at(om, n, oy, ox, ch));
                }
            }
        }
    return SCHEMA_OK;
}

/* Every output element's window, clipped to the image: padding is neither read nor
 * counted. */
static void pool_walk(const pool_job *j) {
    const pool_geom *g = &j->g;
    const eng_image *im = &g->in, *om = &j->out;
    for (uint32_t n = 0; n < im->n; n++)
        for (uint32_t oy = 0; oy < om->h; oy++) {
            int64_t ys = (int64_t)oy * g->stride_h - g->pad_top;
            uint32_t y0 = clip(ys, im->h), y1 = clip(ys + g->filter_h, im->h);
            for (uint32_t ox = 0; ox < om->w; ox++) {
                int64_t xs = (int64_t)ox * g->stride_w - g->pad_left;
                uint32_t x0 = clip(xs, im->w), x1 = clip(xs + g->filter_w, im->w);
                for (uint32_t ch = 0; ch < im->c; ch++)
                    pool_reduce(j, eng_image_at(im, n, y0, x0, ch), y1 - y0, x1 - x0,
                                eng_image_at(om, n, oy, ox, ch));
            }
        }
}

/* FLOAT32 and the 8-bit quantized types. */
static schema_status pool_run(eng_op_ctx *c) {
    const eng_tensor *out = c->out[0];
    pool_job j = {.kind = pool_kind_of(c),
                  .q8 = eng_is_quant8(out->type),
                  .qmin = eng_q8_min(out->type),
                  .in_data = c->in[0]->data,
                  .out_data = out->data};
    schema_status s = pool_geometry(c, &j.g);
    if (s) return s == ENG_DEFER ? SCHEMA_GENERAL_FAILURE : s;
    if (eng_elems(out) == 0) return SCHEMA_OK;
    eng_image_of(out, j.g.nchw, &j.out);
    eng_act_range_f32(j.g.act, &j.lo, &j.hi);
    if (j.q8) eng_act_range_q8(j.g.act, out, &j.qlo, &j.qhi);
    uint64_t window = (uint64_t)j.g.filter_h * j.g.filter_w;
    bool direct_float = !j.q8 && window <= POOL_DIRECT_WORK / eng_elems(out);
    if (window > POOL_WIDE_WINDOW && !direct_float) return pool_walk_wide(c, &j);
    pool_walk(&j);
    return SCHEMA_OK;
}

static schema_status pool_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, pool_run);
}

/* L2 pooling has no quantized form: its row leaves the quantized kernels out. */
#define POOL_KERNELS(Q8)                                                                           \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, pool_run}, {SCHEMA_TENSOR_FLOAT16, pool_f16},                      \
            {SCHEMA_TENSOR_QUANT8_ASYMM, Q8}, {                                                    \
            SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, Q8                                                  \
        }                                                                                          \
    }

ENG_OP_DEF(AVERAGE_POOL_2D, pool_check, pool_shape, 0, 0, POOL_KERNELS(pool_run));
ENG_OP_DEF(MAX_POOL_2D, pool_check, pool_shape, 0, 0, POOL_KERNELS(pool_run));
ENG_OP_DEF(L2_POOL_2D, pool_check, pool_shape, 0, 0, POOL_KERNELS(NULL));

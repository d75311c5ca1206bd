/* SPDX-License-Identifier: Apache-2.0 */
/* roi.c: operations on regions of a feature map — ROI_ALIGN, ROI_POOLING and
 * HEATMAP_MAX_KEYPOINT, in NHWC or NCHW.
 *
 * Region boxes are [x1, y1, x2, y2] in image units (QUANT16_ASYMM with scale 0.125 for the
 * quantized forms); dividing by the stride maps them onto the feature map. Values are
 * read and written through eng_real_at / eng_set_real_at, except for quantized ROI_ALIGN,
 * whose reference is an integer pipeline (sampling weights in 1/255 steps, one
 * fixed-point rescale per output) that is followed here so results agree. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/boxes.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/realvalue.h"
#include "engine/ops_common/signature.h"

/* ---- shared by ROI_ALIGN and ROI_POOLING ---------------------------------------------- */

typedef struct roi_params {
    int32_t out_h, out_w, ratio_h, ratio_w; /* sampling ratios: ROI_ALIGN only */
    float stride_h, stride_w;
    bool nchw;
} roi_params;

static bool is_align(const eng_op_ctx *c) {
    return c->def->code == SCHEMA_OP_ROI_ALIGN;
}

static schema_status roi_params_read(eng_op_ctx *c, roi_params *p) {
    p->out_h = eng_i32(c->in[3]);
    p->out_w = eng_i32(c->in[4]);
    p->stride_h = eng_f32(c->in[5]);
    p->stride_w = eng_f32(c->in[6]);
    p->ratio_h = is_align(c) ? eng_i32(c->in[7]) : 0;
    p->ratio_w = is_align(c) ? eng_i32(c->in[8]) : 0;
    p->nchw = eng_bool(c->in[c->n_in - 1]);
    if (p->out_h <= 0 || p->out_w <= 0)
        return eng_fail(c, "output size (inputs 3, 4) must be positive, is %d x %d", p->out_h,
                        p->out_w);
    if (!(p->stride_h > 0) || !(p->stride_w > 0))
        return eng_fail(c, "strides (inputs 5, 6) must be positive");
    if (p->ratio_h < 0 || p->ratio_w < 0)
        return eng_fail(c, "sampling ratios (inputs 7, 8) must not be negative");
    return SCHEMA_OK;
}

static schema_status roi_check(eng_op_ctx *c) {
    bool align = is_align(c);
    uint32_t n_in = align ? 10 : 8;
    schema_status s = eng_check_count(c, n_in, n_in, 1, 1);
    if (s || (s = eng_check_box_signature(c, align ? "TBIiiffiib" : "TBIiiffb", "T")) ||
        (!align && (s = eng_check_same_quant(c, 0, 0))) || (s = eng_check_input_ranks(c, "421")))
        return s;
    for (uint32_t i = 3; i < n_in; i++)
        if (!c->in[i]->data) return SCHEMA_OK;
    roi_params p;
    return roi_params_read(c, &p);
}

static schema_status roi_shape(eng_op_ctx *c) {
    roi_params p;
    schema_status s = roi_params_read(c, &p);
    if (s) return s;
    eng_image im;
    eng_image_of(c->in[0], p.nchw, &im);
    uint32_t n = c->in[1]->dims[0];
    if (is_align(c) && (!im.n || !im.h || !im.w || !im.c))
        return eng_fail(c, "input 0 must not be empty");
    if (c->in[1]->dims[1] != 4) return eng_fail(c, "input 1 must be [num_rois, 4]");
    if (c->in[2]->dims[0] != n) return eng_fail(c, "input 2 must be [%u]", n);
    eng_set_image_shape(c->out[0], p.nchw, n, (uint32_t)p.out_h, (uint32_t)p.out_w, im.c);
    return SCHEMA_OK;
}

/* A walk over every output bin of every region: setup() (optional) runs once the
 * parameters and images are known, region() prepares a region (box set), bin() computes
 * output bin (y, x) of it for every channel. */
typedef struct roi_job roi_job;
struct roi_job {
    eng_op_ctx *c;
    roi_params p;
    eng_image im, om;
    uint32_t r;   /* region */
    size_t base;  /* its image's first element in input 0 */
    float box[4]; /* on the feature map */
    schema_status (*setup)(roi_job *j);
    void (*region)(roi_job *j);
    void (*bin)(roi_job *j, uint32_t y, uint32_t x);
    /* ROI_ALIGN */
    float step_w, step_h, bin_w, bin_h;
    uint32_t ratio_w, ratio_h;
    uint32_t max_samples; /* per bin, from the operation's work budget */
    int32_t mult, shift;
    float *acc;
    int64_t *qacc; /* 64 bits: a client's sampling ratio sets how many samples it sums */
    /* ROI_POOLING */
    int32_t x1, y1;
};

/* Region r's box, scaled by 1 / stride onto the feature map, and its image; fails for a
 * bad batch index or a box that is inverted or leaves the map. */
static schema_status roi_region(roi_job *j) {
    eng_op_ctx *c = j->c;
    int32_t b = ((const int32_t *)c->in[2]->data)[j->r];
    if (b < 0 || (uint32_t)b >= j->im.n)
        return eng_fail(c, "region %u has batch index %d, not in [0, %u)", j->r, b, j->im.n);
    float scale_w = 1.f / j->p.stride_w, scale_h = 1.f / j->p.stride_h;
    float *box = j->box;
    for (uint32_t k = 0; k < 4; k++)
        box[k] = eng_real_at(c->in[1], (size_t)j->r * 4 + k) * (k % 2 ? scale_h : scale_w);
    if (!eng_box_valid(box) || box[0] < 0 || box[1] < 0 || box[2] > (float)j->im.w ||
        box[3] > (float)j->im.h)
        return eng_fail(c, "region %u is inverted or outside the feature map", j->r);
    j->base = (size_t)b * j->im.sn;
    return SCHEMA_OK;
}

static schema_status roi_walk(roi_job *j) {
    schema_status s = roi_params_read(j->c, &j->p);
    if (s) return s;
    eng_image_of(j->c->in[0], j->p.nchw, &j->im);
    eng_image_of(j->c->out[0], j->p.nchw, &j->om);
    if (j->setup && (s = j->setup(j))) return s;
    for (j->r = 0; j->r < j->om.n; j->r++) {
        if ((s = roi_region(j))) return s;
        j->region(j);
        /* No channels: every bin is empty, however many there are. */
        for (uint32_t y = 0; j->om.c > 0 && y < (uint32_t)j->p.out_h; y++)
            for (uint32_t x = 0; x < (uint32_t)j->p.out_w; x++)
                j->bin(j, y, x);
    }
    return SCHEMA_OK;
}

/* ---- ROI_ALIGN ------------------------------------------------------------------------ */

/* One bilinear sample: the four neighbouring pixels (element offsets within the image)
 * and their weights. */
typedef struct sample {
    size_t at[4];
    float w[4];
} sample;

static void align_sample(const eng_image *im, float y, float x, sample *s) {
    /* Clamped into the map first (NaN to 0): converting a float outside uint32 is undefined. */
    y = y > 0.f ? fminf(y, (float)im->h) : 0.f;
    x = x > 0.f ? fminf(x, (float)im->w) : 0.f;
    uint32_t y0 = (uint32_t)floorf(y), x0 = (uint32_t)floorf(x), y1 = y0 + 1, x1 = x0 + 1;
    float dy = y - (float)y0, dx = x - (float)x0;
    /* Samples past the last row or column take its value. */
    if (x0 >= im->w - 1) x0 = x1 = im->w - 1, dx = 0;
    if (y0 >= im->h - 1) y0 = y1 = im->h - 1, dy = 0;
    s->at[0] = y0 * im->sh + x0 * im->sw, s->w[0] = (1 - dx) * (1 - dy);
    s->at[1] = y0 * im->sh + x1 * im->sw, s->w[1] = dx * (1 - dy);
    s->at[2] = y1 * im->sh + x0 * im->sw, s->w[2] = (1 - dx) * dy;
    s->at[3] = y1 * im->sh + x1 * im->sw, s->w[3] = dx * dy;
}

#define WEIGHT_STEP      (1.0f / 255.0f) /* quantized sampling weights */
#define MAX_RATIO        1024u           /* samples per bin side */
#define MAX_SAMPLES      256u            /* samples per bin: a bin with more gets a coarser grid */
#define WORK_BUDGET      (1ull << 24)    /* samples times channels over the whole operation */
#define POOL_READ_BUDGET (1ull << 30)    /* ROI_POOLING: values read over the whole operation */

static int32_t sat32(int64_t v) {
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

static bool align_quant(const roi_job *j) {
    return eng_is_quant8(j->c->in[0]->type);
}

static void align_region(roi_job *j) {
    const float *box = j->box;
    float roi_w = fmaxf(box[2] - box[0], 1.f), roi_h = fmaxf(box[3] - box[1], 1.f);
    j->step_w = roi_w / (float)j->p.out_w;
    j->step_h = roi_h / (float)j->p.out_h;
    /* Ratio 0: adaptive, about one sample per feature-map pixel. */
    /* At most MAX_RATIO samples a side: ratios and box sizes are the client's, and a bin's
     * samples are all computed (an unbounded product is a hang, and its float undefined). */
    float rw = j->p.ratio_w > 0 ? (float)j->p.ratio_w : ceilf(j->step_w);
    float rh = j->p.ratio_h > 0 ? (float)j->p.ratio_h : ceilf(j->step_h);
    j->ratio_w = rw >= 1.f ? (rw < MAX_RATIO ? (uint32_t)rw : MAX_RATIO) : 1;
    j->ratio_h = rh >= 1.f ? (rh < MAX_RATIO ? (uint32_t)rh : MAX_RATIO) : 1;
    /* Every output value averages ratio_w x ratio_h samples of every channel: a client's
     * huge ratio, or a huge box sampled adaptively, times a large output would run for
     * minutes inside one operation (no checkpoint there). Past max_samples (MAX_SAMPLES,
     * or fewer when the output is so large that the whole operation would pass
     * WORK_BUDGET) the grid is coarsened, halving its denser side: still an even grid
     * over the same bin. */
    while (j->ratio_w * j->ratio_h > j->max_samples) {
        if (j->ratio_w >= j->ratio_h)
            j->ratio_w = (j->ratio_w + 1) / 2;
        else
            j->ratio_h = (j->ratio_h + 1) / 2;
    }
    j->bin_w = j->step_w / (float)j->ratio_w;
    j->bin_h = j->step_h / (float)j->ratio_h;
    if (align_quant(j)) {
        float in_scale = j->c->in[0]->scale, out_scale = j->c->out[0]->scale;
        int shift;
        eng_quantize_multiplier(in_scale * WEIGHT_STEP / out_scale /
                                    (float)(j->ratio_w * j->ratio_h),
                                &j->mult, &shift);
        j->shift = shift;
    }
}

/* Average of the bin's sampling points, each interpolated bilinearly. */
static void align_bin(roi_job *j, uint32_t y, uint32_t x) {
    const eng_tensor *in = j->c->in[0];
    eng_tensor *out = j->c->out[0];
    const eng_image *im = &j->im;
    bool quant = align_quant(j);
    float y_start = j->step_h * (float)y + j->box[1], x_start = j->step_w * (float)x + j->box[0];
    memset(j->acc, 0, sizeof(float) * im->c);
    memset(j->qacc, 0, sizeof(int64_t) * im->c);
    for (uint32_t yi = 0; yi < j->ratio_h; yi++)
        for (uint32_t xi = 0; xi < j->ratio_w; xi++) {
            sample sm;
            align_sample(im, y_start + j->bin_h / 2 + j->bin_h * (float)yi,
                         x_start + j->bin_w / 2 + j->bin_w * (float)xi, &sm);
            int32_t wq[4];
            for (int k = 0; k < 4; k++)
                wq[k] = eng_f2i_clamp(roundf(sm.w[k] / WEIGHT_STEP), -(1 << 20), 1 << 20);
            for (uint32_t ch = 0; ch < im->c; ch++) {
                size_t at = j->base + ch * im->sc;
                if (quant) {
                    int32_t v = 0, qmin = eng_q8_min(in->type);
                    for (int k = 0; k < 4; k++)
                        v += wq[k] * (eng_q8_get(in->data, at + sm.at[k], qmin) - in->zero_point);
                    j->qacc[ch] += v;
                } else {
                    float v = 0;
                    for (int k = 0; k < 4; k++)
                        v += sm.w[k] * eng_real_at(in, at + sm.at[k]);
                    j->acc[ch] += v;
                }
            }
        }
    for (uint32_t ch = 0; ch < im->c; ch++) {
        size_t o = eng_image_at(&j->om, j->r, y, x, ch);
        if (quant)
            eng_q8_put(out->data, o,
                       eng_clampi(sat32((int64_t)eng_mul_by_quantized(sat32(j->qacc[ch]), j->mult,
                                                                      j->shift) +
                                        out->zero_point),
                                  eng_q8_min(out->type), eng_q8_max(out->type)));
        else
            eng_set_real_at(out, o, j->acc[ch] / (float)(j->ratio_w * j->ratio_h));
    }
}

/* Per-channel sums of one bin. */
static schema_status align_setup(roi_job *j) {
    uint64_t values = (uint64_t)j->om.n * (uint64_t)j->p.out_h * (uint64_t)j->p.out_w * j->im.c;
    uint64_t budget = values ? WORK_BUDGET / values : MAX_SAMPLES;
    j->max_samples = budget >= MAX_SAMPLES ? MAX_SAMPLES : budget ? (uint32_t)budget : 1;
    j->acc = eng_scratch(j->c, sizeof(float) * j->im.c);
    j->qacc = eng_scratch(j->c, sizeof(int64_t) * j->im.c);
    return j->acc && j->qacc ? SCHEMA_OK : eng_fail(j->c, "out of memory");
}

static schema_status align_run(eng_op_ctx *c) {
    roi_job j = {.c = c, .setup = align_setup, .region = align_region, .bin = align_bin};
    return roi_walk(&j);
}

ENG_OP_DEF(ROI_ALIGN, roi_check, roi_shape, 0, 0, ENG_KERNELS_FQ(align_run));

/* ---- ROI_POOLING ---------------------------------------------------------------------- */

/* Region corners snap to whole pixels; a region is at least one pixel. */
static void pool_region(roi_job *j) {
    /* Boxes are client data: corners are clamped before any integer arithmetic. */
    const int32_t lim = 1 << 29;
    j->x1 = eng_f2i_clamp(roundf(j->box[0]), -lim, lim);
    j->y1 = eng_f2i_clamp(roundf(j->box[1]), -lim, lim);
    int32_t w = eng_f2i_clamp(roundf(j->box[2]), -lim, lim) - j->x1 + 1,
            h = eng_f2i_clamp(roundf(j->box[3]), -lim, lim) - j->y1 + 1;
    j->step_w = (float)(w > 1 ? w : 1) / (float)j->p.out_w;
    j->step_h = (float)(h > 1 ? h : 1) / (float)j->p.out_h;
}

/* [start, end) of bin k of `step` pixels from `origin`, limited to size. */
static void pool_span(float step, uint32_t k, int32_t origin, uint32_t size, uint32_t *start,
                      uint32_t *end) {
    float lo = floorf(step * (float)k + (float)origin),
          hi = ceilf(step * (float)(k + 1) + (float)origin);
    *start = !(lo > 0.f) ? 0 : lo < (float)size ? (uint32_t)lo : size;
    *end = !(hi > 0.f) ? 0 : hi < (float)size ? (uint32_t)hi : size;
}

/* Maximum over the bin's pixels; an empty bin gives 0. */
static void pool_bin(roi_job *j, uint32_t y, uint32_t x) {
    const eng_tensor *in = j->c->in[0];
    uint32_t h0, h1, w0, w1;
    pool_span(j->step_h, y, j->y1, j->im.h, &h0, &h1);
    pool_span(j->step_w, x, j->x1, j->im.w, &w0, &w1);
    for (uint32_t ch = 0; ch < j->im.c; ch++) {
        float best = 0;
        bool first = true;
        for (uint32_t py = h0; py < h1; py++)
            for (uint32_t px = w0; px < w1; px++) {
                float v = eng_real_at(in, j->base + py * j->im.sh + px * j->im.sw + ch * j->im.sc);
                if (first || v > best) best = v, first = false;
            }
        eng_set_real_at(j->c->out[0], eng_image_at(&j->om, j->r, y, x, ch), best);
    }
}

/* Values one region's bins read: its pixels on the map, and a row or column more per bin
 * where floor and ceil make neighbouring bins share one. */
static uint64_t pool_region_reads(const roi_job *j) {
    uint64_t w = 0, h = 0;
    if (j->im.c == 0) return 0; /* no bins are walked */
    for (uint32_t x = 0; x < (uint32_t)j->p.out_w; x++) {
        uint32_t a, b;
        pool_span(j->step_w, x, j->x1, j->im.w, &a, &b);
        w += b > a ? b - a : 0;
    }
    for (uint32_t y = 0; y < (uint32_t)j->p.out_h; y++) {
        uint32_t a, b;
        pool_span(j->step_h, y, j->y1, j->im.h, &a, &b);
        h += b > a ? b - a : 0;
    }
    /* Saturating: bin counts and map sizes are the client's. */
    if (w && h > UINT64_MAX / w) return UINT64_MAX;
    uint64_t px = w * h;
    return j->im.c && px > UINT64_MAX / j->im.c ? UINT64_MAX : px * j->im.c;
}

/* Every bin reads all its pixels (a maximum cannot be sampled), so the regions a client
 * gives set the work: past POOL_READ_BUDGET values the operation is refused before it
 * starts rather than holding a worker for minutes with no checkpoint. */
static schema_status pool_setup(roi_job *j) {
    uint64_t reads = 0;
    for (j->r = 0; j->r < j->om.n; j->r++) {
        schema_status s = roi_region(j);
        if (s) return s;
        pool_region(j);
        uint64_t more = pool_region_reads(j);
        reads = more > POOL_READ_BUDGET ? more : reads + more;
        if (reads > POOL_READ_BUDGET)
            return eng_fail(j->c,
                            "its %u regions read more than %llu values of the feature map, the "
                            "most one operation may",
                            j->om.n, (unsigned long long)POOL_READ_BUDGET);
    }
    return SCHEMA_OK;
}

static schema_status pool_run(eng_op_ctx *c) {
    roi_job j = {.c = c, .setup = pool_setup, .region = pool_region, .bin = pool_bin};
    return roi_walk(&j);
}

ENG_OP_DEF(ROI_POOLING, roi_check, roi_shape, 0, 0, ENG_KERNELS_FQ(pool_run));

/* ---- HEATMAP_MAX_KEYPOINT ------------------------------------------------------------- */

static schema_status keypoint_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 3, 3, 2, 2);
    if (s || (s = eng_check_box_signature(c, "TBb", "TB"))) return s;
    return eng_check_input_ranks(c, "42");
}

static schema_status keypoint_shape(eng_op_ctx *c) {
    eng_image im;
    eng_image_of(c->in[0], eng_bool(c->in[2]), &im);
    if (im.h != im.w || im.h < 2)
        return eng_fail(c, "heatmaps must be square and at least 2 x 2, are %u x %u", im.h, im.w);
    if (c->in[1]->dims[0] != im.n || c->in[1]->dims[1] != 4)
        return eng_fail(c, "input 1 must be [%u, 4]", im.n);
    uint32_t dims[3] = {im.n, im.c, 2};
    eng_set_shape(c->out[0], 2, dims);
    eng_set_shape(c->out[1], 3, dims);
    return SCHEMA_OK;
}

/* Refines the maximum at the center of a 3x3 grid by fitting a quadratic (second-order
 * Taylor expansion): delta receives the offset (x, y), *score the value there. A
 * singular fit (|det| below atol + rtol * |A00 A11|) leaves both untouched. */
static void keypoint_refine(const float g[3][3], float tol, float *delta, float *score) {
    float b[2] = {-(g[1][2] - g[1][0]) / 2.f, -(g[2][1] - g[0][1]) / 2.f};
    float a00 = g[1][0] - 2.f * g[1][1] + g[1][2];
    float a01 = (g[2][2] - g[2][0] - g[0][2] + g[0][0]) / 4.f;
    float a11 = g[0][1] - 2.f * g[1][1] + g[2][1];
    float diag = a00 * a11, det = diag - a01 * a01;
    if (fabsf(det) < tol + tol * diag) return;
    delta[0] = (a11 * b[0] - a01 * b[1]) / det;
    delta[1] = (a00 * b[1] - a01 * b[0]) / det;
    /* Keep the correction within 1.5 pixels. */
    float far = fmaxf(fabsf(delta[0]), fabsf(delta[1]));
    if (far > 1.5f) {
        float s = 1.5f / far;
        delta[0] *= s;
        delta[1] *= s;
    }
    *score = g[1][1] - b[0] * delta[0] - b[1] * delta[1] +
             ((a00 * delta[0] + a01 * delta[1]) * delta[0] +
              (a01 * delta[0] + a11 * delta[1]) * delta[1]) /
                 2.f;
}

static schema_status keypoint_run(eng_op_ctx *c) {
    const eng_tensor *heat = c->in[0], *boxes = c->in[1];
    eng_image im;
    eng_image_of(heat, eng_bool(c->in[2]), &im);
    /* The reference's singularity tolerance is looser for FLOAT16. */
    float tol = heat->type == SCHEMA_TENSOR_FLOAT16 ? 1e-3f : 1e-5f;
    int32_t size = (int32_t)im.h;
    for (uint32_t n = 0; n < im.n; n++) {
        float box[4];
        for (uint32_t k = 0; k < 4; k++)
            box[k] = eng_real_at(boxes, (size_t)n * 4 + k);
        if (!eng_box_valid(box)) return eng_fail(c, "box %u has x2 < x1 or y2 < y1", n);
        for (uint32_t kp = 0; kp < im.c; kp++) {
            uint32_t best_y = 0, best_x = 0;
            float best = -FLT_MAX;
            for (uint32_t y = 0; y < im.h; y++)
                for (uint32_t x = 0; x < im.w; x++) {
                    float v = eng_real_at(heat, eng_image_at(&im, n, y, x, kp));
                    if (best < v) best = v, best_y = y, best_x = x;
                }
            /* 3x3 neighbourhood, mirrored at the borders. */
            float g[3][3];
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int32_t y = (int32_t)best_y + dy, x = (int32_t)best_x + dx;
                    y = y < 0 ? 1 : (y >= size ? size - 2 : y);
                    x = x < 0 ? 1 : (x >= size ? size - 2 : x);
                    g[dy + 1][dx + 1] =
                        eng_real_at(heat, eng_image_at(&im, n, (uint32_t)y, (uint32_t)x, kp));
                }
            float delta[2] = {0, 0}, score = best;
            keypoint_refine(g, tol, delta, &score);
            size_t o = (size_t)n * im.c + kp;
            eng_set_real_at(c->out[0], o, score);
            float rel_x = ((float)best_x + delta[0] + 0.5f) / (float)size;
            float rel_y = ((float)best_y + delta[1] + 0.5f) / (float)size;
            eng_set_real_at(c->out[1], o * 2, rel_x * (box[2] - box[0]) + box[0]);
            eng_set_real_at(c->out[1], o * 2 + 1, rel_y * (box[3] - box[1]) + box[1]);
        }
    }
    return SCHEMA_OK;
}

ENG_OP_DEF(HEATMAP_MAX_KEYPOINT, keypoint_check, keypoint_shape, 0, 0,
           ENG_KERNELS_FQ(keypoint_run));

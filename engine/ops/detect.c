/* SPDX-License-Identifier: Apache-2.0 */
/* detect.c: the detection family — AXIS_ALIGNED_BBOX_TRANSFORM, BOX_WITH_NMS_LIMIT,
 * GENERATE_PROPOSALS and DETECTION_POSTPROCESSING.
 *
 * The reference computes every form in float (FLOAT16 and the quantized box and score
 * encodings are converted around a float32 core), so one kernel per operation reads and
 * writes elements through eng_real_at / eng_set_real_at. Boxes copied unchanged from an
 * input keep their stored encoding.
 *
 * BOX_WITH_NMS_LIMIT and GENERATE_PROPOSALS output as many boxes as survive selection:
 * shape() runs the selection itself when the inputs are known (with a heap workspace, as
 * shape() has no scratch) and defers otherwise; run() repeats it and writes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/boxes.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/index_sort.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/realvalue.h"
#include "engine/ops_common/signature.h"

/* True when inputs [from, to) all have their values (constants at prepare). */
static bool inputs_known(const eng_op_ctx *c, uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to && i < c->n_in; i++)
        if (!c->in[i]->data) return false;
    return true;
}

/* Workspace for shape() (heap) or run() (scratch); free with work_free. */
static void *work_alloc(eng_op_ctx *c, size_t bytes) {
    return c->scratch ? eng_scratch(c, bytes) : malloc(bytes ? bytes : 1);
}
static void work_free(eng_op_ctx *c, void *p) {
    if (!c->scratch) free(p);
}

/* Outputs 0..n-1 as 1-D [count] tensors, except `boxes_out` which is [count, 4]. */
static void set_count_shapes(eng_op_ctx *c, uint32_t count, uint32_t boxes_out) {
    for (uint32_t o = 0; o < c->n_out; o++) {
        uint32_t dims[2] = {count, 4};
        eng_set_shape(c->out[o], o == boxes_out ? 2 : 1, dims);
    }
}

/* ---- greedy non-maximum suppression ---------------------------------------------------- */

enum nms_kernel { NMS_HARD = 0, NMS_LINEAR = 1, NMS_GAUSSIAN = 2, NMS_DISCARD = 3 };

typedef struct nms_params {
    int32_t kernel;        /* NMS_DISCARD drops overlaps without touching scores */
    float iou_threshold;   /* hard, linear, discard */
    float sigma;           /* gaussian */
    float score_threshold; /* soft kernels: a candidate whose score falls below is dropped */
    int32_t max_keep;      /* < 0: unlimited */
    const float *boxes;    /* candidate i's box is at boxes + (i / box_div) * 4 */
    uint32_t box_div;
} nms_params;

static const float *nms_box(const nms_params *p, uint32_t i) {
    return p->boxes + (size_t)(i / p->box_div) * 4;
}

static float nms_weight(const nms_params *p, float iou) {
    switch (p->kernel) {
    case NMS_HARD: return iou < p->iou_threshold ? 1.f : 0.f;
    case NMS_LINEAR: return iou < p->iou_threshold ? 1.f : 1.f - iou;
    default: return expf(-1.f * iou * iou / p->sigma);
    }
}

static void swap_u32(uint32_t *a, uint32_t *b) {
    uint32_t t = *a;
    *a = *b;
    *b = t;
}

/* Selects from the candidates sel[0..n) in place: the best remaining one moves to the
 * front, the rest are discounted (or dropped) by their overlap with it, until max_keep are
 * kept. Returns the count kept, sel[0..count) in selection order. The candidate order of
 * the reference (dropped ones swap with the last) is kept so ties resolve alike. */
static uint32_t nms(const nms_params *p, float *scores, uint32_t *sel, uint32_t n) {
    uint32_t limit = p->max_keep < 0 ? n : (uint32_t)p->max_keep, kept = 0, end = n;
    while (kept < end && kept < limit) {
        uint32_t best = kept;
        for (uint32_t i = kept + 1; i < end; i++)
            if (scores[sel[i]] > scores[sel[best]]) best = i;
        swap_u32(&sel[kept], &sel[best]);
        const float *top = nms_box(p, sel[kept]);
        for (uint32_t i = kept + 1; i < end;) {
            float iou = eng_box_iou(nms_box(p, sel[i]), top);
            bool drop;
            if (p->kernel == NMS_DISCARD) {
                drop = iou >= p->iou_threshold;
            } else {
                scores[sel[i]] *= nms_weight(p, iou);
                drop = scores[sel[i]] < p->score_threshold;
            }
            if (drop)
                swap_u32(&sel[i], &sel[--end]);
            else
                i++;
        }
        kept++;
    }
    return kept;
}

/* Per class 1..n_classes-1: the candidates among items [0, n_items) (index item * n_classes
 * + class) scoring above score_threshold go through nms; the survivors of all classes are
 * sorted by descending score and cut to max_total (< 0: no cut). sel needs n_items *
 * n_classes entries, tmp as many. Returns the count. */
static uint32_t nms_per_class(const nms_params *p, float *scores, uint32_t n_items,
                              uint32_t n_classes, float score_threshold, int32_t max_total,
                              uint32_t *sel, uint32_t *tmp) {
    uint32_t total = 0;
    for (uint32_t k = 1; k < n_classes; k++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < n_items; i++) {
            uint32_t idx = i * n_classes + k;
            if (scores[idx] > score_threshold) sel[total + n++] = idx;
        }
        total += nms(p, scores, sel + total, n);
    }
    eng_sort_by_score(sel, total, scores, tmp);
    return max_total >= 0 && total > (uint32_t)max_total ? (uint32_t)max_total : total;
}

/* ---- AXIS_ALIGNED_BBOX_TRANSFORM -------------------------------------------------------- */

static schema_status bbox_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 4, 4, 1, 1);
    if (s) return s;
    const eng_tensor *roi = c->in[0];
    if ((s = eng_check_type(c, roi, "input 0", 3, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                            SCHEMA_TENSOR_QUANT16_ASYMM)))
        return s;
    /* Quantized: QUANT16_ASYMM boxes and image sizes, 8-bit deltas of either signedness. */
    bool quant = roi->type == SCHEMA_TENSOR_QUANT16_ASYMM;
    if ((s = eng_check_signature(c, quant ? "T*IT" : "TTIT", "T"))) return s;
    if (quant && !eng_is_quant8(c->in[1]->type))
        return eng_fail(c,
                        "input 1 must be TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED, is %s",
                        schema_type_name(c->in[1]->type));
    if ((s = eng_check_box_quant(c, roi, "input 0")) ||
        (s = eng_check_box_quant(c, c->in[3], "input 3")) ||
        (s = eng_check_box_quant(c, c->out[0], "output 0")))
        return s;
    return eng_check_input_ranks(c, "2212");
}

static schema_status bbox_shape(eng_op_ctx *c) {
    const eng_tensor *roi = c->in[0], *delta = c->in[1], *info = c->in[3];
    uint32_t n = roi->dims[0];
    if (roi->dims[1] != 4) return eng_fail(c, "input 0 must be [num_rois, 4]");
    if (delta->dims[0] != n || delta->dims[1] == 0 || delta->dims[1] % 4)
        return eng_fail(c, "input 1 must be [%u, num_classes * 4]", n);
    if (c->in[2]->dims[0] != n) return eng_fail(c, "input 2 must be [%u]", n);
    if (info->dims[0] == 0 || info->dims[1] != 2)
        return eng_fail(c, "input 3 must be [batches > 0, 2]");
    uint32_t dims[2] = {n, delta->dims[1]};
    eng_set_shape(c->out[0], 2, dims);
    return SCHEMA_OK;
}

static schema_status bbox_run(eng_op_ctx *c) {
    const eng_tensor *roi = c->in[0], *delta = c->in[1], *info = c->in[3];
    const int32_t *batch = c->in[2]->data;
    uint32_t n = roi->dims[0], per_roi = delta->dims[1], n_batches = info->dims[0];
    for (uint32_t r = 0; r < n; r++) {
        if (batch[r] < 0 || (uint32_t)batch[r] >= n_batches)
            return eng_fail(c, "box %u has batch index %d, not in [0, %u)", r, batch[r], n_batches);
        float box[4], d[4], out[4];
        for (int k = 0; k < 4; k++)
            box[k] = eng_real_at(roi, (size_t)r * 4 + k);
        if (!eng_box_valid(box)) return eng_fail(c, "box %u has x2 < x1 or y2 < y1", r);
        float height = eng_real_at(info, (size_t)batch[r] * 2);
        float width = eng_real_at(info, (size_t)batch[r] * 2 + 1);
        for (uint32_t j = 0; j < per_roi; j += 4) {
            size_t at = (size_t)r * per_roi + j;
            for (int k = 0; k < 4; k++)
                d[k] = eng_real_at(delta, at + k);
            eng_box_apply_delta(box, d, out);
            eng_box_clip(out, height, width);
            for (int k = 0; k < 4; k++)
                eng_set_real_at(c->out[0], at + k, out[k]);
        }
    }
    return SCHEMA_OK;
}

ENG_OP_DEF(AXIS_ALIGNED_BBOX_TRANSFORM, bbox_check, bbox_shape, 0, 0,
           {{SCHEMA_TENSOR_FLOAT32, bbox_run},
            {SCHEMA_TENSOR_FLOAT16, bbox_run},
            {SCHEMA_TENSOR_QUANT16_ASYMM, bbox_run}});

/* ---- BOX_WITH_NMS_LIMIT ------------------------------------------------------------------ */

typedef struct limit_params {
    float score_threshold, iou_threshold, sigma, nms_score_threshold;
    int32_t max_detections, kernel;
} limit_params;

static schema_status limit_params_read(eng_op_ctx *c, limit_params *p) {
    p->score_threshold = eng_f32(c->in[3]);
    p->max_detections = eng_i32(c->in[4]);
    p->kernel = eng_i32(c->in[5]);
    p->iou_threshold = eng_f32(c->in[6]);
    p->sigma = eng_f32(c->in[7]);
    p->nms_score_threshold = eng_f32(c->in[8]);
    if (p->kernel < NMS_HARD || p->kernel > NMS_GAUSSIAN)
        return eng_fail(c, "NMS kernel (input 5) is %d, not 0 (hard), 1 (linear) or 2 (gaussian)",
                        p->kernel);
    return SCHEMA_OK;
}

static schema_status limit_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 9, 9, 4, 4);
    if (s || (s = eng_check_box_signature(c, "TBIfiifff", "TBII")) ||
        (s = eng_check_same_quant(c, 0, 0)) || (s = eng_check_input_ranks(c, "221")))
        return s;
    limit_params p;
    return inputs_known(c, 3, 9) ? limit_params_read(c, &p) : SCHEMA_OK;
}

/* Float copies of scores and boxes, the selection and a sort buffer. */
typedef struct limit_work {
    float *scores, *boxes;
    uint32_t *sel, *tmp;
} limit_work;

static bool class_before(const void *ctx, uint32_t a, uint32_t b) {
    uint32_t n_classes = *(const uint32_t *)ctx;
    return a % n_classes < b % n_classes;
}

/* Runs the selection; the survivors are w->sel[0..*count): per batch, by class, and by
 * descending (updated) score within a class. */
static schema_status limit_select(eng_op_ctx *c, const limit_params *lp, limit_work *w,
                                  uint32_t *count) {
    const eng_tensor *score = c->in[0], *box = c->in[1];
    const int32_t *batch = c->in[2]->data;
    uint32_t n_rois = score->dims[0], n_classes = score->dims[1];
    size_t n = (size_t)n_rois * n_classes;
    for (size_t i = 0; i < n; i++)
        w->scores[i] = eng_real_at(score, i);
    for (size_t i = 0; i < n * 4; i++)
        w->boxes[i] = eng_real_at(box, i);
    nms_params p = {
        lp->kernel, lp->iou_threshold, lp->sigma, lp->nms_score_threshold, lp->max_detections, NULL,
        1};
    uint32_t total = 0;
    /* Boxes of one image are consecutive: each run of equal batch indices is one image. */
    for (uint32_t first = 0, last; first < n_rois; first = last) {
        last = first + 1;
        while (last < n_rois && batch[last] == batch[first])
            last++;
        size_t base = (size_t)first * n_classes;
        for (size_t i = base; i < (size_t)last * n_classes; i++)
            if (i % n_classes && w->scores[i] > lp->score_threshold &&
                !eng_box_valid(w->boxes + i * 4))
                return eng_fail(c, "box %zu of class %zu has x2 < x1 or y2 < y1", i / n_classes,
                                i % n_classes);
        p.boxes = w->boxes + base * 4;
        uint32_t *sel = w->sel + total;
        uint32_t kept = nms_per_class(&p, w->scores + base, last - first, n_classes,
                                      lp->score_threshold, lp->max_detections, sel, w->tmp);
        eng_stable_sort(sel, kept, w->tmp, class_before, &n_classes);
        for (uint32_t i = 0; i < kept; i++)
            sel[i] += (uint32_t)base;
        total += kept;
    }
    *count = total;
    return SCHEMA_OK;
}

static schema_status limit_with_work(eng_op_ctx *c, bool write) {
    const eng_tensor *score = c->in[0];
    uint32_t count = 0;
    size_t n = (size_t)score->dims[0] * score->dims[1];
    if (n == 0) {
        if (!write) set_count_shapes(c, 0, 1);
        return SCHEMA_OK;
    }
    limit_params lp;
    schema_status s = limit_params_read(c, &lp);
    if (s) return s;
    char *mem = work_alloc(c, n * (sizeof(float) * 5 + sizeof(uint32_t) * 2));
    if (!mem) return eng_fail(c, "out of memory for %zu boxes", n);
    limit_work w = {(float *)mem, (float *)mem + n, (uint32_t *)(mem + n * 5 * sizeof(float)),
                    (uint32_t *)(mem + n * 5 * sizeof(float)) + n};
    s = limit_select(c, &lp, &w, &count);
    if (!s && !write) set_count_shapes(c, count, 1);
    if (!s && write) {
        if (count != c->out[0]->dims[0]) {
            s = eng_fail(c, "selected %u boxes, output holds %u", count, c->out[0]->dims[0]);
        } else {
            const eng_tensor *box = c->in[1];
            const int32_t *batch = c->in[2]->data;
            size_t esize = schema_type_size(box->type);
            int32_t *cls = c->out[2]->data, *bat = c->out[3]->data;
            for (uint32_t i = 0; i < count; i++) {
                uint32_t idx = w.sel[i];
                eng_set_real_at(c->out[0], i, w.scores[idx]);
                memcpy((char *)c->out[1]->data + (size_t)i * 4 * esize,
                       (const char *)box->data + (size_t)idx * 4 * esize, 4 * esize);
                cls[i] = (int32_t)(idx % score->dims[1]);
                bat[i] = batch[idx / score->dims[1]];
            }
        }
    }
    work_free(c, mem);
    return s;
}

static schema_status limit_shape(eng_op_ctx *c) {
    const eng_tensor *score = c->in[0], *box = c->in[1];
    uint32_t n = score->dims[0], n_classes = score->dims[1];
    if (n_classes < 2) return eng_fail(c, "input 0 needs at least 2 classes, has %u", n_classes);
    if ((uint64_t)n * n_classes > UINT32_MAX) /* candidates are indexed in 32 bits */
        return eng_fail(c, "%u boxes of %u classes is past 2^32 candidates", n, n_classes);
    /* In 64 bits: n_classes * 4 wraps 32 for 2^30 classes and more. */
    if (box->dims[0] != n || box->dims[1] != (uint64_t)n_classes * 4)
        return eng_fail(c, "input 1 must be [%u, %u]", n, n_classes * 4);
    if (c->in[2]->dims[0] != n) return eng_fail(c, "input 2 must be [%u]", n);
    if (n && !inputs_known(c, 0, 3)) return ENG_DEFER;
    return limit_with_work(c, false);
}

static schema_status limit_run(eng_op_ctx *c) {
    return limit_with_work(c, true);
}

ENG_OP_DEF(BOX_WITH_NMS_LIMIT, limit_check, limit_shape, 0, 0, ENG_KERNELS_FQ(limit_run));

/* ---- GENERATE_PROPOSALS ------------------------------------------------------------------ */

typedef struct proposal_params {
    float stride_h, stride_w, iou_threshold, min_size;
    int32_t pre_nms, post_nms;
    bool nchw;
    uint32_t batches, height, width, anchors;
} proposal_params;

static schema_status proposal_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 11, 11, 3, 3);
    if (s || (s = eng_check_box_signature(c, "TT*Bffiiffb", "TBI")) ||
        (s = eng_check_same_quant(c, 0, 0)) || (s = eng_check_input_ranks(c, "4422")))
        return s;
    /* Anchors: QUANT16_SYMM with scale 0.125 for the quantized form. */
    if (!eng_is_quant8(c->in[0]->type)) return eng_check_scalar(c, 2, c->in[0]->type);
    if ((s = eng_check_scalar(c, 2, SCHEMA_TENSOR_QUANT16_SYMM))) return s;
    if (eng_driver_rules(c) && c->in[2]->scale != 0.125f)
        return eng_fail(c, "input 2 must have scale 0.125, has %g", c->in[2]->scale);
    return SCHEMA_OK;
}

static schema_status proposal_params_read(eng_op_ctx *c, proposal_params *p) {
    p->stride_h = eng_f32(c->in[4]);
    p->stride_w = eng_f32(c->in[5]);
    p->pre_nms = eng_i32(c->in[6]);
    p->post_nms = eng_i32(c->in[7]);
    p->iou_threshold = eng_f32(c->in[8]);
    p->min_size = eng_f32(c->in[9]);
    p->nchw = eng_bool(c->in[10]);
    eng_image im;
    eng_image_of(c->in[0], p->nchw, &im);
    p->batches = im.n, p->height = im.h, p->width = im.w, p->anchors = im.c;
    eng_image_of(c->in[1], p->nchw, &im);
    if (im.n != p->batches || im.h != p->height || im.w != p->width ||
        im.c != (uint64_t)p->anchors * 4) /* in 64 bits, as it could wrap 32 */
        return eng_fail(c, "input 1 must match input 0 with num_anchors * 4 channels");
    if (c->in[2]->dims[0] != p->anchors || c->in[2]->dims[1] != 4)
        return eng_fail(c, "input 2 must be [%u, 4]", p->anchors);
    if (c->in[3]->dims[0] != p->batches || c->in[3]->dims[1] != 2)
        return eng_fail(c, "input 3 must be [%u, 2]", p->batches);
    return SCHEMA_OK;
}

/* Per-image buffers: anchors moved over the grid, their transformed boxes, scores, the
 * selection and a sort buffer. */
typedef struct proposal_work {
    float *grid, *boxes, *scores;
    uint32_t *sel, *tmp;
} proposal_work;

/* Keeps boxes larger than min_size both ways whose center lies inside the image. */
static uint32_t proposal_filter(const float *boxes, float min_size, float height, float width,
                                uint32_t *sel, uint32_t n) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        const float *b = boxes + (size_t)sel[i] * 4;
        float w = b[2] - b[0], h = b[3] - b[1];
        if (w > min_size && h > min_size && b[0] + w / 2 < width && b[1] + h / 2 < height)
            sel[kept++] = sel[i];
    }
    return kept;
}

/* Selects the proposals of image b into w->sel; returns their count. */
static uint32_t proposal_image(eng_op_ctx *c, const proposal_params *p, proposal_work *w,
                               uint32_t b) {
    const eng_tensor *score = c->in[0], *delta = c->in[1], *info = c->in[3];
    eng_image si, di;
    eng_image_of(score, p->nchw, &si);
    eng_image_of(delta, p->nchw, &di);
    float height = eng_real_at(info, (size_t)b * 2), width = eng_real_at(info, (size_t)b * 2 + 1);
    uint32_t n = 0;
    for (uint32_t y = 0; y < p->height; y++)
        for (uint32_t x = 0; x < p->width; x++)
            for (uint32_t a = 0; a < p->anchors; a++, n++) {
                float d[4];
                for (uint32_t k = 0; k < 4; k++)
                    d[k] = eng_real_at(delta, eng_image_at(&di, b, y, x, a * 4 + k));
                eng_box_apply_delta(w->grid + (size_t)n * 4, d, w->boxes + (size_t)n * 4);
                eng_box_clip(w->boxes + (size_t)n * 4, height, width);
                w->scores[n] = eng_real_at(score, eng_image_at(&si, b, y, x, a));
                w->sel[n] = n;
            }
    if (p->pre_nms > 0 && (uint32_t)p->pre_nms < n) {
        eng_sort_by_score(w->sel, n, w->scores, w->tmp);
        n = (uint32_t)p->pre_nms;
    }
    n = proposal_filter(w->boxes, p->min_size, height, width, w->sel, n);
    nms_params np = {
        NMS_DISCARD, p->iou_threshold, 0, 0, p->post_nms > 0 ? p->post_nms : -1, w->boxes, 1};
    return nms(&np, w->scores, w->sel, n);
}

static schema_status proposal_with_work(eng_op_ctx *c, bool write) {
    proposal_params p;
    schema_status s = proposal_params_read(c, &p);
    if (s) return s;
    size_t n = (size_t)p.height * p.width * p.anchors;
    char *mem = work_alloc(c, n * (sizeof(float) * 9 + sizeof(uint32_t) * 2));
    if (!mem) return eng_fail(c, "out of memory for %zu anchors", n);
    float *f = (float *)mem;
    uint32_t *u = (uint32_t *)(f + n * 9);
    proposal_work w = {f, f + n * 4, f + n * 8, u, u + n};
    /* Anchors shifted to every feature-map position, the same for every image. */
    size_t at = 0;
    for (uint32_t y = 0; y < p.height; y++)
        for (uint32_t x = 0; x < p.width; x++)
            for (uint32_t a = 0; a < p.anchors; a++)
                for (uint32_t k = 0; k < 4; k++, at++)
                    w.grid[at] = eng_real_at(c->in[2], (size_t)a * 4 + k) +
                                 (k % 2 ? (float)y * p.stride_h : (float)x * p.stride_w);
    uint32_t total = 0, cap = write ? c->out[0]->dims[0] : UINT32_MAX;
    for (uint32_t b = 0; n && b < p.batches && !s; b++) {
        uint32_t kept = proposal_image(c, &p, &w, b);
        if (write && kept > cap - total) {
            s = eng_fail(c, "more proposals than the output holds (%u)", cap);
            break;
        }
        for (uint32_t i = 0; write && i < kept; i++) {
            uint32_t o = total + i, idx = w.sel[i];
            eng_set_real_at(c->out[0], o, w.scores[idx]);
            for (uint32_t k = 0; k < 4; k++)
                eng_set_real_at(c->out[1], (size_t)o * 4 + k, w.boxes[(size_t)idx * 4 + k]);
            ((int32_t *)c->out[2]->data)[o] = (int32_t)b;
        }
        total += kept;
    }
    if (!s && write && total != cap)
        s = eng_fail(c, "selected %u proposals, output holds %u", total, cap);
    if (!s && !write) set_count_shapes(c, total, 1);
    work_free(c, mem);
    return s;
}

static schema_status proposal_shape(eng_op_ctx *c) {
    proposal_params p;
    schema_status s = proposal_params_read(c, &p);
    if (s) return s;
    if (inputs_known(c, 0, 4)) return proposal_with_work(c, false);
    if ((size_t)p.batches * p.height * p.width * p.anchors != 0) return ENG_DEFER;
    set_count_shapes(c, 0, 1);
    return SCHEMA_OK;
}

static schema_status proposal_run(eng_op_ctx *c) {
    return proposal_with_work(c, true);
}

ENG_OP_DEF(GENERATE_PROPOSALS, proposal_check, proposal_shape, 0, 0, ENG_KERNELS_FQ(proposal_run));

/* ---- DETECTION_POSTPROCESSING ------------------------------------------------------------- */

typedef struct postproc_params {
    float scale_y, scale_x, scale_h, scale_w, score_threshold, iou_threshold;
    bool regular, background_label;
    int32_t max_detections, max_classes_per_detection, max_per_class;
} postproc_params;

static schema_status postproc_params_read(eng_op_ctx *c, postproc_params *p) {
    p->scale_y = eng_f32(c->in[3]);
    p->scale_x = eng_f32(c->in[4]);
    p->scale_h = eng_f32(c->in[5]);
    p->scale_w = eng_f32(c->in[6]);
    p->regular = eng_bool(c->in[7]);
    p->max_detections = eng_i32(c->in[8]);
    p->max_classes_per_detection = eng_i32(c->in[9]);
    p->max_per_class = eng_i32(c->in[10]);
    p->score_threshold = eng_f32(c->in[11]);
    p->iou_threshold = eng_f32(c->in[12]);
    p->background_label = eng_bool(c->in[13]);
    if (!(p->scale_y > 0) || !(p->scale_x > 0) || !(p->scale_h > 0) || !(p->scale_w > 0))
        return eng_fail(c, "the delta scales (inputs 3..6) must be positive");
    if (!(p->score_threshold >= 0) || !(p->iou_threshold >= 0))
        return eng_fail(c, "the score and IoU thresholds (inputs 11, 12) must not be negative");
    if (p->max_detections <= 0) return eng_fail(c, "max_num_detections (input 8) must be positive");
    if (p->regular && p->max_per_class <= 0)
        return eng_fail(c, "max detections per class (input 10) must be positive");
    if (!p->regular && p->max_classes_per_detection <= 0)
        return eng_fail(c, "max classes per detection (input 9) must be positive");
    /* The output holds max_num_detections x max classes slots: the product must not wrap. */
    if (!p->regular &&
        (uint64_t)p->max_detections * (uint64_t)p->max_classes_per_detection > (uint64_t)INT32_MAX)
        return eng_fail(c, "max_num_detections (input 8) times max classes per detection "
                           "(input 9) is over 2^31");
    return SCHEMA_OK;
}

static schema_status postproc_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 14, 14, 4, 4);
    if (s || (s = eng_check_float_signature(c, "TTTffffbiiiffb", "TTII")) ||
        (s = eng_check_input_ranks(c, "332")))
        return s;
    postproc_params p;
    return inputs_known(c, 3, 14) ? postproc_params_read(c, &p) : SCHEMA_OK;
}

/* Detections per image: max_num_detections, times the classes per detection for the
 * fast (single NMS) algorithm. */
static uint32_t postproc_slots(const postproc_params *p) {
    return (uint32_t)p->max_detections * (p->regular ? 1u : (uint32_t)p->max_classes_per_detection);
}

static schema_status postproc_shape(eng_op_ctx *c) {
    const eng_tensor *score = c->in[0], *delta = c->in[1], *anchor = c->in[2];
    postproc_params p;
    schema_status s = postproc_params_read(c, &p);
    if (s) return s;
    uint32_t batches = score->dims[0], n_anchors = score->dims[1];
    if (score->dims[2] < 2) return eng_fail(c, "input 0 needs at least 2 classes");
    if ((uint64_t)n_anchors * score->dims[2] > UINT32_MAX) /* indexed in 32 bits */
        return eng_fail(c, "%u anchors of %u classes is past 2^32 candidates", n_anchors,
                        score->dims[2]);
    if (delta->dims[0] != batches || delta->dims[1] != n_anchors || delta->dims[2] < 4)
        return eng_fail(c, "input 1 must be [%u, %u, >= 4]", batches, n_anchors);
    if (anchor->dims[0] != n_anchors || anchor->dims[1] != 4)
        return eng_fail(c, "input 2 must be [%u, 4]", n_anchors);
    uint32_t dims[3] = {batches, postproc_slots(&p), 4};
    eng_set_shape(c->out[0], 2, dims);
    eng_set_shape(c->out[1], 3, dims);
    eng_set_shape(c->out[2], 2, dims);
    eng_set_shape(c->out[3], 1, dims);
    return SCHEMA_OK;
}

typedef struct postproc_job {
    eng_op_ctx *c;
    const postproc_params *p;
    const float *boxes; /* of the current image */
    size_t base;        /* first output slot of the current image */
} postproc_job;

static void postproc_emit(const postproc_job *j, uint32_t slot, float score, uint32_t anchor,
                          uint32_t cls) {
    size_t o = j->base + slot;
    eng_set_real_at(j->c->out[0], o, score);
    for (uint32_t k = 0; k < 4; k++)
        eng_set_real_at(j->c->out[1], o * 4 + k, j->boxes[(size_t)anchor * 4 + k]);
    ((int32_t *)j->c->out[2]->data)[o] = (int32_t)cls - (j->p->background_label ? 0 : 1);
}

static schema_status postproc_run(eng_op_ctx *c) {
    const eng_tensor *score = c->in[0], *delta = c->in[1], *anchor = c->in[2];
    postproc_params p;
    schema_status s = postproc_params_read(c, &p);
    if (s) return s;
    uint32_t batches = score->dims[0], n_anchors = score->dims[1], n_classes = score->dims[2];
    uint32_t enc = delta->dims[2], slots = postproc_slots(&p);
    size_t n = (size_t)n_anchors * n_classes;
    float *boxes = eng_scratch(c, sizeof(float) * ((size_t)n_anchors * 5 + n));
    uint32_t *sel = eng_scratch(c, sizeof(uint32_t) * (n * 2 + n_classes * 2));
    if (!boxes || !sel) return eng_fail(c, "out of memory");
    float *scores = boxes + (size_t)n_anchors * 4, *best = scores + n;
    uint32_t *tmp = sel + n, *order = tmp + n, *order_tmp = order + n_classes;
    for (uint32_t o = 0; o < 4; o++)
        memset(c->out[o]->data, 0, eng_elems(c->out[o]) * schema_type_size(c->out[o]->type));
    postproc_job job = {c, &p, boxes, 0};
    nms_params np = {NMS_DISCARD, p.iou_threshold, 0, 0, 0, boxes, 1};
    for (uint32_t b = 0; b < batches; b++) {
        job.base = (size_t)b * slots;
        /* Anchors are [ctr_y, ctr_x, h, w]; deltas [dy, dx, dh, dw]; boxes [y1, x1, y2, x2]. */
        for (uint32_t a = 0; a < n_anchors; a++) {
            float an[4], d[4];
            for (uint32_t k = 0; k < 4; k++) {
                an[k] = eng_real_at(anchor, (size_t)a * 4 + k);
                d[k] = eng_real_at(delta, ((size_t)b * n_anchors + a) * enc + k);
            }
            eng_box_from_center(an[0] + an[2] * d[0] / p.scale_y, an[1] + an[3] * d[1] / p.scale_x,
                                an[2] * expf(d[2] / p.scale_h), an[3] * expf(d[3] / p.scale_w),
                                boxes + (size_t)a * 4);
        }
        for (size_t i = 0; i < n; i++)
            scores[i] = eng_real_at(score, (size_t)b * n + i);
        uint32_t kept;
        if (p.regular) {
            np.box_div = n_classes;
            np.max_keep = p.max_per_class;
            kept = nms_per_class(&np, scores, n_anchors, n_classes, p.score_threshold,
                                 p.max_detections, sel, tmp);
            for (uint32_t i = 0; i < kept; i++)
                postproc_emit(&job, i, scores[sel[i]], sel[i] / n_classes, sel[i] % n_classes);
        } else {
            /* One NMS over each anchor's best non-background score. */
            uint32_t per = n_classes - 1 < (uint32_t)p.max_classes_per_detection
                               ? n_classes - 1
                               : (uint32_t)p.max_classes_per_detection;
            uint32_t cand = 0;
            for (uint32_t a = 0; a < n_anchors; a++) {
                const float *row = scores + (size_t)a * n_classes;
                best[a] = row[1];
                for (uint32_t k = 2; k < n_classes; k++)
                    best[a] = row[k] > best[a] ? row[k] : best[a];
                if (best[a] > p.score_threshold) sel[cand++] = a;
            }
            np.box_div = 1;
            np.max_keep = p.max_detections;
            uint32_t anchors_kept = nms(&np, best, sel, cand);
            for (uint32_t i = 0; i < anchors_kept; i++) {
                const float *row = scores + (size_t)sel[i] * n_classes;
                for (uint32_t k = 1; k < n_classes; k++)
                    order[k - 1] = k;
                eng_sort_by_score(order, n_classes - 1, row, order_tmp);
                for (uint32_t k = 0; k < per; k++)
                    postproc_emit(&job, i * per + k, row[order[k]], sel[i], order[k]);
            }
            kept = anchors_kept * per;
        }
        ((int32_t *)c->out[3]->data)[b] = (int32_t)kept;
    }
    return SCHEMA_OK;
}

ENG_OP_DEF(DETECTION_POSTPROCESSING, postproc_check, postproc_shape, 0, 0,
           {{SCHEMA_TENSOR_FLOAT32, postproc_run}, {SCHEMA_TENSOR_FLOAT16, postproc_run}});

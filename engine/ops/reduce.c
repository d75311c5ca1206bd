/* SPDX-License-Identifier: Apache-2.0 */
/* reduce.c: reductions over axes — MEAN, REDUCE_SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN,
 * REDUCE_ALL, REDUCE_ANY, ARGMAX, ARGMIN — and TOPK_V2. One walker visits, for every output
 * element, the input offsets it reduces; the per-type rows fold them. As in the reference,
 * 8-bit quantized MAX/MIN work on stored values. 8-bit MEAN requantizes the sum of the
 * input differences from the zero point as TensorFlow Lite's reference does: the
 * multiplier of in_scale / out_scale, divided by the element count, rounds the mean to
 * nearest (the Android runtime's older kernel truncated, one step apart at most). */
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/float16.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

#include <float.h>
#include <string.h>

/* ---- the walker --------------------------------------------------------------------- */

/* Output element o reduces input offsets base(o) + rel[k] for k < n_rel, where base walks
 * the kept dimensions in order. */
typedef struct reduce_plan {
    size_t *rel, n_rel, n_out;
    uint32_t n_keep;
    uint32_t keep_dims[ENG_MAX_RANK];
    size_t keep_step[ENG_MAX_RANK];
} reduce_plan;

typedef void (*reduce_row_fn)(void *ctx, size_t out, size_t base, const size_t *rel, size_t n);

static schema_status reduce_plan_make(eng_op_ctx *c, const eng_tensor *in, const bool *reduce,
                                      reduce_plan *p) {
    ptrdiff_t step[ENG_MAX_RANK];
    eng_dense_steps(in->rank, in->dims, step);
    uint32_t red_dims[ENG_MAX_RANK], n_red = 0;
    size_t red_step[ENG_MAX_RANK];
    p->n_keep = 0, p->n_rel = 1, p->n_out = 1;
    for (uint32_t d = 0; d < in->rank; d++) {
        if (reduce[d]) {
            red_dims[n_red] = in->dims[d], red_step[n_red++] = (size_t)step[d];
            p->n_rel *= in->dims[d];
        } else {
            p->keep_dims[p->n_keep] = in->dims[d], p->keep_step[p->n_keep++] = (size_t)step[d];
            p->n_out *= in->dims[d];
        }
    }
    p->rel = eng_scratch(c, p->n_rel * sizeof(size_t) + 1);
    if (!p->rel) return eng_fail(c, "out of scratch memory");
    /* Offsets of the reduced sub-box in increasing order, so each output folds its inputs
     * in the order the reference visits them. */
    uint32_t idx[ENG_MAX_RANK] = {0};
    size_t off = 0;
    for (size_t k = 0; k < p->n_rel; k++) {
        p->rel[k] = off;
        for (int d = (int)n_red - 1; d >= 0; d--) {
            off += red_step[d];
            if (++idx[d] < red_dims[d]) break;
            off -= red_step[d] * red_dims[d];
            idx[d] = 0;
        }
    }
    return SCHEMA_OK;
}

static void reduce_walk(const reduce_plan *p, reduce_row_fn row, void *ctx) {
    uint32_t idx[ENG_MAX_RANK] = {0};
    size_t base = 0;
    for (size_t o = 0; o < p->n_out; o++) {
        row(ctx, o, base, p->rel, p->n_rel);
        for (int d = (int)p->n_keep - 1; d >= 0; d--) {
            base += p->keep_step[d];
            if (++idx[d] < p->keep_dims[d]) break;
            base -= p->keep_step[d] * p->keep_dims[d];
            idx[d] = 0;
        }
    }
}

/* Element i of a tensor's data as a double (exact for every type here). */
static double load(const void *data, int32_t type, size_t i) {
    switch (type) {
    case SCHEMA_TENSOR_FLOAT32: return ((const float *)data)[i];
    case SCHEMA_TENSOR_FLOAT16: return (double)((const eng_half *)data)[i];
    case SCHEMA_TENSOR_INT32: return ((const int32_t *)data)[i];
    default: return eng_q8_get(data, i, eng_q8_min(type)); /* 8-bit quantized, BOOL8 */
    }
}

/* ---- signatures --------------------------------------------------------------------- */

enum red_op { RED_SUM, RED_PROD, RED_MAX, RED_MIN, RED_MEAN, RED_ALL, RED_ANY };

static enum red_op red_op_of(const eng_op_ctx *c) {
    switch (c->def->code) {
    case SCHEMA_OP_REDUCE_PROD: return RED_PROD;
    case SCHEMA_OP_REDUCE_MAX: return RED_MAX;
    case SCHEMA_OP_REDUCE_MIN: return RED_MIN;
    case SCHEMA_OP_MEAN: return RED_MEAN;
    case SCHEMA_OP_REDUCE_ALL: return RED_ALL;
    case SCHEMA_OP_REDUCE_ANY: return RED_ANY;
    default: return RED_SUM;
    }
}

/* ARGMAX, ARGMIN and TOPK_V2: input 0 of FLOAT32, FLOAT16, an 8-bit quantized type or
 * INT32, rank 1 or more. */
static schema_status check_input(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    schema_status s = eng_check_type(c, in, "input 0", 5, SCHEMA_TENSOR_FLOAT32,
                                     SCHEMA_TENSOR_FLOAT16, SCHEMA_TENSOR_QUANT8_ASYMM,
                                     SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, SCHEMA_TENSOR_INT32);
    return s ? s : eng_check_rank(c, in, "input 0", 1, ENG_MAX_RANK);
}

/* ---- MEAN and REDUCE_* -------------------------------------------------------------- */
/* Inputs: 0 data, 1 axes (1-D TENSOR_INT32), 2 keep_dims (INT32 > 0 for MEAN, BOOL for
 * the others). */

static schema_status reduce_check(eng_op_ctx *c) {
    enum red_op op = red_op_of(c);
    schema_status s = eng_check_count(c, 3, 3, 1, 1);
    if (s) return s;
    /* SUM and PROD are float only, ALL and ANY take BOOL8, the others add the 8-bit
     * quantized types, whose output keeps the input's scale and zero point. */
    const eng_tensor *in = c->in[0];
    if (op == RED_ALL || op == RED_ANY)
        s = eng_check_type(c, in, "input 0", 1, SCHEMA_TENSOR_BOOL8);
    else
        s = eng_check_type(c, in, "input 0", op == RED_SUM || op == RED_PROD ? 2 : 4,
                           SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16, SCHEMA_TENSOR_QUANT8_ASYMM,
                           SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    if (s || (s = eng_check_rank(c, in, "input 0", 1, 4)) || (s = eng_check_same_type(c, 0, 0)) ||
        (s = eng_check_same_quant(c, 0, 0)))
        return s;
    const eng_tensor *axes = c->in[1];
    if (axes->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "axes (input 1) must be TENSOR_INT32, is %s",
                        schema_type_name(axes->type));
    if ((s = eng_check_rank(c, axes, "axes (input 1)", 1, 1))) return s;
    return eng_check_scalar(c, 2, op == RED_MEAN ? SCHEMA_INT32 : SCHEMA_BOOL);
}

/* Marks the reduced dimensions; ENG_DEFER when the axes are not known yet. */
static schema_status reduce_axes(eng_op_ctx *c, bool *reduce) {
    const eng_tensor *in = c->in[0], *axes = c->in[1];
    size_t n = eng_elems(axes);
    if (n && !axes->data) return ENG_DEFER;
    if (axes->rank != 1) return eng_fail(c, "axes (input 1) must be 1-D");
    for (uint32_t d = 0; d < in->rank; d++)
        reduce[d] = false;
    for (size_t k = 0; k < n; k++) {
        int32_t a = ((const int32_t *)axes->data)[k];
        uint32_t d;
        if (!eng_resolve_axis(a, in->rank, &d))
            return eng_fail(c, "axis %d is out of range for rank %u", a, in->rank);
        reduce[d] = true;
    }
    return SCHEMA_OK;
}

/* Output 0 is input 0 without the reduced dimensions, or with them as 1 when keep. */
static void set_reduced_shape(eng_op_ctx *c, const bool *reduce, bool keep) {
    const eng_tensor *in = c->in[0];
    uint32_t dims[ENG_MAX_RANK], r = 0;
    for (uint32_t d = 0; d < in->rank; d++)
        if (!reduce[d] || keep) dims[r++] = reduce[d] ? 1 : in->dims[d];
    /* A result with no dimensions left is [1], as the Android runtime answers. */
    if (r == 0) dims[r++] = 1;
    eng_set_shape(c->out[0], r, dims);
}

static schema_status reduce_shape(eng_op_ctx *c) {
    bool reduce[ENG_MAX_RANK];
    schema_status s = reduce_axes(c, reduce);
    if (s) return s;
    set_reduced_shape(c, reduce,
                      red_op_of(c) == RED_MEAN ? eng_i32(c->in[2]) > 0 : eng_bool(c->in[2]));
    return SCHEMA_OK;
}

/* What a row folds: input and output data, the input type and the fold (ARGMAX and ARGMIN
 * use RED_MAX and RED_MIN). */
typedef struct fold_job {
    const void *in;
    void *out;
    int32_t type;
    enum red_op op;
    int32_t zp_in, zp_out; /* 8-bit MEAN: quantization and requantization */
    int32_t mult;
    int shift;
} fold_job;

static float fold_f(enum red_op op, float acc, float x) {
    switch (op) {
    case RED_PROD: return acc * x;
    case RED_MAX: return x > acc ? x : acc;
    case RED_MIN: return x < acc ? x : acc;
    default: return acc + x;
    }
}

/* FLOAT32 and FLOAT16: fold in float32, then store in the tensor's type. */
static void reduce_row_float(void *ctx, size_t o, size_t base, const size_t *rel, size_t n) {
    const fold_job *j = ctx;
    float acc = j->op == RED_PROD  ? 1.f
                : j->op == RED_MAX ? -FLT_MAX
                : j->op == RED_MIN ? FLT_MAX
                                   : 0.f;
    for (size_t k = 0; k < n; k++)
        acc = fold_f(j->op, acc, (float)load(j->in, j->type, base + rel[k]));
    if (j->op == RED_MEAN) acc /= (float)n;
    if (j->type == SCHEMA_TENSOR_FLOAT16)
        ((eng_half *)j->out)[o] = (eng_half)acc;
    else
        ((float *)j->out)[o] = acc;
}

/* 8-bit quantized (MAX, MIN, MEAN on stored values) and BOOL8 (ALL is MIN and ANY is MAX
 * over 0/1). */
static void reduce_row_int(void *ctx, size_t o, size_t base, const size_t *rel, size_t n) {
    const fold_job *j = ctx;
    bool boolean = j->type == SCHEMA_TENSOR_BOOL8;
    bool max = j->op == RED_MAX || j->op == RED_ANY, min = j->op == RED_MIN || j->op == RED_ALL;
    int32_t qmin = eng_q8_min(j->type);
    int32_t acc = min ? (boolean ? 1 : eng_q8_max(j->type)) : max ? qmin : 0;
    for (size_t k = 0; k < n; k++) {
        int32_t x = eng_q8_get(j->in, base + rel[k], qmin);
        if (boolean) x = x != 0;
        acc = max ? (x > acc ? x : acc) : min ? (x < acc ? x : acc) : acc + x;
    }
    eng_q8_put(j->out, o, acc);
}

/* 8-bit MEAN: (sum of (x - zp_in)) * in_scale / (n * out_scale) + zp_out. The multiplier
 * of in_scale / out_scale takes 1/n in: shifted up by floor(log2 n) (at most 32, and no
 * further than a right shift of 31 allows) and divided by n, truncating. The int32 sum
 * wraps as the reference's does. */
static void reduce_row_mean_q8(void *ctx, size_t o, size_t base, const size_t *rel, size_t n) {
    const fold_job *j = ctx;
    int32_t qmin = eng_q8_min(j->type);
    uint32_t sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += (uint32_t)eng_q8_get(j->in, base + rel[k], qmin);
    int32_t r = j->zp_out;
    if (n) {
        int up = 63 - __builtin_clzll((unsigned long long)n);
        if (up > 32) up = 32;
        if (up > 31 + j->shift) up = 31 + j->shift;
        int32_t mult = (int32_t)(((int64_t)j->mult << up) / (int64_t)n);
        int32_t diff = (int32_t)(sum - (uint32_t)j->zp_in * (uint32_t)n);
        r = eng_q8_offset(eng_mul_by_quantized(diff, mult, j->shift - up), j->zp_out, qmin,
                          eng_q8_max(j->type));
    }
    eng_q8_put(j->out, o, r);
}

/* Folds input 0 over the reduced dimensions into output 0 with row(). */
static schema_status fold_run(eng_op_ctx *c, const bool *reduce, reduce_row_fn row,
                              enum red_op op) {
    const eng_tensor *in = c->in[0];
    if (eng_elems(c->out[0]) == 0) return SCHEMA_OK;
    reduce_plan p;
    schema_status s = reduce_plan_make(c, in, reduce, &p);
    if (s) return s;
    fold_job j = {.in = in->data, .out = c->out[0]->data, .type = in->type, .op = op};
    if (op == RED_MEAN && eng_is_quant8(in->type)) {
        const eng_tensor *out = c->out[0];
        j.zp_in = in->zero_point;
        j.zp_out = out->zero_point;
        eng_quantize_multiplier((double)in->scale / (double)out->scale, &j.mult, &j.shift);
    }
    reduce_walk(&p, row, &j);
    return SCHEMA_OK;
}

static schema_status reduce_run(eng_op_ctx *c) {
    bool reduce[ENG_MAX_RANK];
    schema_status s = reduce_axes(c, reduce);
    if (s) return s;
    enum red_op op = red_op_of(c);
    bool float_type = eng_is_float(c->in[0]->type);
    if (op == RED_MEAN && !float_type) return fold_run(c, reduce, reduce_row_mean_q8, op);
    return fold_run(c, reduce, float_type ? reduce_row_float : reduce_row_int, op);
}

/* ---- ARGMAX / ARGMIN ---------------------------------------------------------------- */
/* Inputs: 0 data, 1 axis (INT32). Output: TENSOR_INT32 without the axis. */

static schema_status arg_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 2, 1, 1);
    if (s || (s = check_input(c)) || (s = eng_check_scalar(c, 1, SCHEMA_INT32))) return s;
    if (c->out[0]->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "output 0 must be TENSOR_INT32, is %s",
                        schema_type_name(c->out[0]->type));
    return SCHEMA_OK;
}

static schema_status arg_axis(eng_op_ctx *c, uint32_t *axis) {
    const eng_tensor *in = c->in[0];
    if (!eng_resolve_axis(eng_i32(c->in[1]), in->rank, axis))
        return eng_fail(c, "axis %d is out of range for rank %u", eng_i32(c->in[1]), in->rank);
    if (in->dims[*axis] == 0) return eng_fail(c, "input 0 is empty along axis %u", *axis);
    return SCHEMA_OK;
}

/* The axis as a reduction mask. */
static schema_status arg_axis_mask(eng_op_ctx *c, bool *reduce) {
    uint32_t axis;
    schema_status s = arg_axis(c, &axis);
    for (uint32_t d = 0; !s && d < c->in[0]->rank; d++)
        reduce[d] = d == axis;
    return s;
}

static schema_status arg_shape(eng_op_ctx *c) {
    bool reduce[ENG_MAX_RANK];
    schema_status s = arg_axis_mask(c, reduce);
    if (!s) set_reduced_shape(c, reduce, false);
    return s;
}

/* rel[k] is the k-th element along the axis; the first extreme wins ties. */
static void arg_row(void *ctx, size_t o, size_t base, const size_t *rel, size_t n) {
    const fold_job *j = ctx;
    bool min = j->op == RED_MIN;
    double best = load(j->in, j->type, base);
    int32_t at = 0;
    for (size_t k = 1; k < n; k++) {
        double x = load(j->in, j->type, base + rel[k]);
        if (min ? x < best : x > best) best = x, at = (int32_t)k;
    }
    ((int32_t *)j->out)[o] = at;
}

static schema_status arg_run(eng_op_ctx *c) {
    bool reduce[ENG_MAX_RANK];
    schema_status s = arg_axis_mask(c, reduce);
    if (s) return s;
    return fold_run(c, reduce, arg_row, c->def->code == SCHEMA_OP_ARGMIN ? RED_MIN : RED_MAX);
}

/* ---- TOPK_V2 ------------------------------------------------------------------------ */
/* Inputs: 0 data, 1 k (INT32). Outputs: 0 the k largest values of each last-dimension
 * row, descending (larger index first among equals), 1 their indices (TENSOR_INT32). */

static schema_status topk_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 2, 2, 2);
    if (s || (s = check_input(c)) || (s = eng_check_same_type(c, 0, 0)) ||
        (s = eng_check_same_quant(c, 0, 0)) || (s = eng_check_scalar(c, 1, SCHEMA_INT32)))
        return s;
    if (c->out[1]->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "output 1 must be TENSOR_INT32, is %s",
                        schema_type_name(c->out[1]->type));
    if (c->in[1]->data && eng_i32(c->in[1]) < 1)
        return eng_fail(c, "k (%d) must be positive", eng_i32(c->in[1]));
    return SCHEMA_OK;
}

static schema_status topk_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    int32_t k = eng_i32(c->in[1]);
    if (in->rank == 0) return eng_fail(c, "input 0 must have rank 1 or more");
    if (k < 1 || (uint32_t)k > in->dims[in->rank - 1])
        return eng_fail(c, "k (%d) must be in [1, %u]", k, in->dims[in->rank - 1]);
    for (uint32_t o = 0; o < 2; o++) {
        eng_copy_shape(c->out[o], in);
        c->out[o]->dims[in->rank - 1] = (uint32_t)k;
    }
    return SCHEMA_OK;
}

typedef struct topk_item {
    double value;
    int32_t index;
} topk_item;

/* Whether x ranks before y: the larger value, or the larger index among equals. */
static bool topk_before(const topk_item *x, const topk_item *y) {
    return x->value != y->value ? x->value > y->value : x->index > y->index;
}

/* Restores the heap property (every parent ranks before its children) below node i. */
static void topk_sift(topk_item *h, size_t n, size_t i) {
    for (;;) {
        size_t best = i, l = 2 * i + 1, r = l + 1;
        if (l < n && topk_before(&h[l], &h[best])) best = l;
        if (r < n && topk_before(&h[r], &h[best])) best = r;
        if (best == i) return;
        topk_item t = h[i];
        h[i] = h[best], h[best] = t;
        i = best;
    }
}

/* Moves the k first-ranked items of h[0..n) to h[n - k..n), the first-ranked last: a
 * partial heap sort, in place (no allocation). */
static void topk_select(topk_item *h, size_t n, size_t k) {
    for (size_t i = n / 2; i-- > 0;)
        topk_sift(h, n, i);
    for (size_t m = n; m > n - k; m--) {
        topk_item t = h[0];
        h[0] = h[m - 1], h[m - 1] = t;
        topk_sift(h, m - 1, 0);
    }
}

static schema_status topk_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    size_t row = in->dims[in->rank - 1], k = (size_t)eng_i32(c->in[1]);
    size_t rows = row ? eng_elems(in) / row : 0, es = schema_type_size(in->type);
    topk_item *items = eng_scratch(c, row * sizeof *items + 1);
    if (!items) return eng_fail(c, "out of scratch memory");
    const uint8_t *src = in->data;
    uint8_t *values = c->out[0]->data;
    int32_t *indices = c->out[1]->data;
    for (size_t r = 0; r < rows; r++) {
        for (size_t i = 0; i < row; i++)
            items[i] = (topk_item){load(in->data, in->type, r * row + i), (int32_t)i};
        topk_select(items, row, k);
        for (size_t i = 0; i < k; i++) {
            const topk_item *it = &items[row - 1 - i];
            memcpy(values + (r * k + i) * es, src + (r * row + (size_t)it->index) * es, es);
            indices[r * k + i] = it->index;
        }
    }
    return SCHEMA_OK;
}

/* ---- definitions -------------------------------------------------------------------- */

// clang-format off
#define REDUCE_KERNELS {{SCHEMA_TENSOR_FLOAT32, reduce_run}, {SCHEMA_TENSOR_FLOAT16, reduce_run}, \
                        {SCHEMA_TENSOR_QUANT8_ASYMM, reduce_run}, \
                        {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, reduce_run}, {SCHEMA_TENSOR_BOOL8, reduce_run}}
// clang-format on

ENG_OP_DEF(MEAN, reduce_check, reduce_shape, 0, 0, REDUCE_KERNELS);
ENG_OP_DEF(REDUCE_SUM, reduce_check, reduce_shape, 0, 0, REDUCE_KERNELS);
ENG_OP_DEF(REDUCE_PROD, reduce_check, reduce_shape, 0, 0, REDUCE_KERNELS);
ENG_OP_DEF(REDUCE_MAX, reduce_check, reduce_shape, 0, 0, REDUCE_KERNELS);
ENG_OP_DEF(REDUCE_MIN, reduce_check, reduce_shape, 0, 0, REDUCE_KERNELS);
ENG_OP_DEF(REDUCE_ALL, reduce_check, reduce_shape, 0, 0, REDUCE_KERNELS);
ENG_OP_DEF(REDUCE_ANY, reduce_check, reduce_shape, 0, 0, REDUCE_KERNELS);

ENG_OP_DEF(ARGMAX, arg_check, arg_shape, 0, 0, ENG_KERNELS_FQI(arg_run));
ENG_OP_DEF(ARGMIN, arg_check, arg_shape, 0, 0, ENG_KERNELS_FQI(arg_run));
ENG_OP_DEF(TOPK_V2, topk_check, topk_shape, 0, 0, ENG_KERNELS_FQI(topk_run));

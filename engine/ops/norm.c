/* SPDX-License-Identifier: Apache-2.0 */
/* norm.c: SOFTMAX, LOG_SOFTMAX, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION and
 * INSTANCE_NORMALIZATION. Each normalizes 1-D slices of its input independently: along
 * one axis for the first four, over the H*W pixels of each (batch, channel) for instance
 * normalization. One walker hands every slice (first element, element step, length) to a
 * per-operation slice kernel. Float16 runs the float32 kernels through the type bridge;
 * 8-bit quantized softmax and L2 normalization (unsigned, and signed from HAL 1.3) follow
 * the reference's fixed-point pipelines on stored values. */
#include <math.h>
#include <string.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"
#include "engine/ops/op_def.h"

/* ---- signatures --------------------------------------------------------------------- */

/* The scalars after input 0, one letter each: 'f' a float of the tensor's precision
 * (FLOAT16 for a FLOAT16 tensor, else FLOAT32), 'i' INT32, 'a' the INT32 axis, 'b' BOOL.
 * Inputs from min_in on may be left out of the operation (the axis defaults to -1). */
typedef struct norm_sig {
    const char *scalars;
    uint32_t min_in, min_rank, max_rank;
    bool quant8;
} norm_sig;

static const norm_sig *sig_of(const eng_op_ctx *c) {
    static const norm_sig softmax = {"fa", 2, 1, 4, true},
                          log_softmax = {"fa", 3, 1, ENG_MAX_RANK, false},
                          l2 = {"a", 1, 1, 4, true}, lrn = {"ifffa", 5, 1, 4, false},
                          instance = {"fffb", 5, 4, 4, false};
    switch (c->def->code) {
    case SCHEMA_OP_SOFTMAX: return &softmax;
    case SCHEMA_OP_LOG_SOFTMAX: return &log_softmax;
    case SCHEMA_OP_L2_NORMALIZATION: return &l2;
    case SCHEMA_OP_LOCAL_RESPONSE_NORMALIZATION: return &lrn;
    default: return &instance;
    }
}

/* Resolves the axis input (default -1) against the rank of input 0. */
static schema_status norm_axis(eng_op_ctx *c, uint32_t *axis) {
    const char *a = strchr(sig_of(c)->scalars, 'a');
    uint32_t slot = a ? 1 + (uint32_t)(a - sig_of(c)->scalars) : 0;
    int32_t v = slot && eng_has_input(c, slot) ? eng_i32(c->in[slot]) : -1;
    int32_t rank = (int32_t)c->in[0]->rank;
    if (v < -rank || v >= rank)
        return eng_fail(c, "axis (input %u) is %d, must be in [%d, %d)", slot, v, -rank, rank);
    *axis = (uint32_t)(v < 0 ? v + rank : v);
    return SCHEMA_OK;
}

static schema_status norm_check(eng_op_ctx *c) {
    const norm_sig *sig = sig_of(c);
    schema_status s = eng_check_count(c, sig->min_in, 1 + (uint32_t)strlen(sig->scalars), 1, 1);
    if (s) return s;
    const eng_tensor *in = c->in[0];
    if (sig->quant8)
        s = eng_check_type(c, in, "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                           SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    else
        s = eng_check_type(c, in, "input 0", 2, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16);
    if (s || (s = eng_check_same_type(c, 0, 0)) ||
        (s = eng_check_rank(c, in, "input 0", sig->min_rank, sig->max_rank)))
        return s;
    int32_t float_type = in->type == SCHEMA_TENSOR_FLOAT16 ? SCHEMA_FLOAT16 : SCHEMA_FLOAT32;
    for (uint32_t i = 1; i < c->n_in; i++) {
        char kind = sig->scalars[i - 1];
        int32_t type = kind == 'f' ? float_type : (kind == 'b' ? SCHEMA_BOOL : SCHEMA_INT32);
        if ((s = eng_check_scalar(c, i, type))) return s;
        uint32_t axis;
        if (kind == 'a' && c->in[i]->data && in->rank > 0 && (s = norm_axis(c, &axis))) return s;
    }
    if (c->def->code == SCHEMA_OP_SOFTMAX && c->in[1]->data && !(eng_f32(c->in[1]) > 0.f))
        return eng_fail(c, "beta (input 1) is %g, must be positive", eng_f32(c->in[1]));
    /* The quantized results have a fixed scale: softmax in [0, 1), L2 in [-1, 1]. */
    if (eng_is_quant8(in->type))
        return eng_check_fixed_quant(
            c, 0, c->def->code == SCHEMA_OP_SOFTMAX ? ENG_FIXED_UNIT : ENG_FIXED_SYMMETRIC);
    return SCHEMA_OK;
}

static schema_status norm_shape(eng_op_ctx *c) {
    const norm_sig *sig = sig_of(c);
    const eng_tensor *in = c->in[0];
    if (in->rank < sig->min_rank || in->rank > sig->max_rank)
        return eng_fail(c, "input 0 must have rank %u to %u, has %u", sig->min_rank, sig->max_rank,
                        in->rank);
    uint32_t axis;
    schema_status s = strchr(sig->scalars, 'a') ? norm_axis(c, &axis) : SCHEMA_OK;
    if (s) return s;
    if (c->def->code == SCHEMA_OP_SOFTMAX && !(eng_f32(c->in[1]) > 0.f))
        return eng_fail(c, "beta (input 1) is %g, must be positive", eng_f32(c->in[1]));
    eng_copy_shape(c->out[0], in);
    return SCHEMA_OK;
}

/* ---- the slice walker --------------------------------------------------------------- */

typedef struct norm_job {
    const void *in;
    void *out;
    float beta, bias, alpha, gamma, epsilon;
    int32_t radius;
    bool log;               /* LOG_SOFTMAX */
    int32_t mult, diff_min; /* quantized parameters */
    int32_t zp_in, zp_out, qmin, qmax;
    int shift;
} norm_job;

/* fn(job, first, step, n) for the slice of n elements starting at `first`, `step` apart. */
typedef void (*slice_fn)(const norm_job *j, size_t first, size_t step, size_t n);

/* Slices of a tensor seen as [outer, n, inner] along the middle dimension. */
static void slice_walk(size_t outer, size_t n, size_t inner, slice_fn fn, const norm_job *j) {
    if (n == 0) return;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++)
            fn(j, o * n * inner + i, inner, n);
}

static schema_status along_axis(eng_op_ctx *c, slice_fn fn, norm_job *j) {
    const eng_tensor *t = c->in[0];
    uint32_t axis;
    schema_status s = norm_axis(c, &axis);
    if (s) return s;
    j->in = t->data;
    j->out = c->out[0]->data;
    slice_walk(eng_dims_product(t, 0, axis), t->dims[axis], eng_dims_product(t, axis + 1, t->rank),
               fn, j);
    return SCHEMA_OK;
}

/* ---- float32 slice kernels ---------------------------------------------------------- */

/* exp((x - max) * beta) / sum, or for LOG_SOFTMAX (x - max) * beta - log(sum): in float,
 * the sum taken in order, as TensorFlow Lite's reference kernels (their results to the
 * bit, not only within float rounding). The output holds the exponentials meanwhile. */
static void softmax_slice(const norm_job *j, size_t first, size_t step, size_t n) {
    const float *x = (const float *)j->in + first;
    float *y = (float *)j->out + first;
    float max = x[0];
    for (size_t k = 1; k < n; k++)
        max = x[k * step] > max ? x[k * step] : max;
    float sum = 0.f;
    for (size_t k = 0; k < n; k++) {
        float e = expf((x[k * step] - max) * j->beta);
        if (!j->log) y[k * step] = e;
        sum += e;
    }
    if (j->log) {
        float log_sum = logf(sum);
        for (size_t k = 0; k < n; k++)
            y[k * step] = (x[k * step] - max) * j->beta - log_sum;
    } else {
        for (size_t k = 0; k < n; k++)
            y[k * step] /= sum;
    }
}

/* As TensorFlow Lite: the norm is at least 1e-6, so that an all-zero slice stays zero. */
#define L2NORM_FLOOR 1e-6f

static void l2norm_slice(const norm_job *j, size_t first, size_t step, size_t n) {
    const float *x = (const float *)j->in + first;
    float *y = (float *)j->out + first;
    float sum = 0.f;
    for (size_t k = 0; k < n; k++)
        sum += x[k * step] * x[k * step];
    float norm = sqrtf(sum);
    norm = norm > L2NORM_FLOOR ? norm : L2NORM_FLOOR;
    for (size_t k = 0; k < n; k++)
        y[k * step] = x[k * step] / norm;
}

/* Each element divided by (bias + alpha * sum of squares within radius)^beta. Small
 * windows are summed afresh for each element, as the reference does; a window wider than
 * LRN_DIRECT_WINDOW slides a double-precision sum instead, so that a huge radius costs
 * O(n) per slice rather than O(n^2) (a model may ask for any radius). */
#define LRN_DIRECT_WINDOW 64

static void lrn_slice(const norm_job *j, size_t first, size_t step, size_t n) {
    const float *x = (const float *)j->in + first;
    float *y = (float *)j->out + first;
    if (2 * (int64_t)j->radius + 1 <= LRN_DIRECT_WINDOW) {
        for (size_t k = 0; k < n; k++) {
            int64_t lo = (int64_t)k - j->radius, hi = (int64_t)k + j->radius + 1;
            if (lo < 0) lo = 0;
            if (hi > (int64_t)n) hi = (int64_t)n;
            float sum = 0.f;
            for (int64_t d = lo; d < hi; d++)
                sum += x[d * step] * x[d * step];
            y[k * step] = x[k * step] * powf(j->bias + j->alpha * sum, -j->beta);
        }
        return;
    }
    double sum = 0; /* of squares over [lo, hi) */
    int64_t lo = 0, hi = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t want_lo = (int64_t)k - j->radius, want_hi = (int64_t)k + j->radius + 1;
        if (want_lo < 0) want_lo = 0;
        if (want_hi > (int64_t)n) want_hi = (int64_t)n;
        for (; hi < want_hi; hi++)
            sum += (double)x[hi * step] * x[hi * step];
        for (; lo < want_lo; lo++)
            sum -= (double)x[lo * step] * x[lo * step];
        y[k * step] = x[k * step] * powf(j->bias + j->alpha * (float)sum, -j->beta);
    }
}

/* (x - mean) * gamma / sqrt(variance + epsilon) + beta over one channel of one image, the
 * variance taken about the mean in a second pass (the Android 10 reference used the mean
 * of the squares; later data and runtimes use the variance). */
static void instance_slice(const norm_job *j, size_t first, size_t step, size_t n) {
    const float *x = (const float *)j->in + first;
    float *y = (float *)j->out + first;
    double sum = 0.0;
    for (size_t k = 0; k < n; k++)
        sum += x[k * step];
    float mean = (float)(sum / (double)n);
    double deviations = 0.0;
    for (size_t k = 0; k < n; k++) {
        double d = (double)x[k * step] - mean;
        deviations += d * d;
    }
    float denom = sqrtf((float)(deviations / (double)n) + j->epsilon);
    for (size_t k = 0; k < n; k++)
        y[k * step] = (x[k * step] - mean) * j->gamma / denom + j->beta;
}

/* ---- 8-bit quantized slice kernels (reference fixed-point pipelines) ------------------- */

#define SOFTMAX_DIFF_BITS  5  /* integer bits of the scaled input differences */
#define SOFTMAX_ACCUM_BITS 12 /* integer bits of the sum of exponentials */

static int32_t wrap_add(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* exp of a (negative) input difference in Q0.31, or -1 when it is below diff_min and
 * counts as zero. */
static int32_t softmax_q8_exp(const norm_job *j, int32_t diff) {
    if (diff < j->diff_min) return -1;
    return eng_fx_exp_neg(eng_mul_by_quantized(diff, j->mult, j->shift), SOFTMAX_DIFF_BITS);
}

/* Stored value k of a slice. */
static int32_t slice_q8(const norm_job *j, size_t first, size_t step, size_t k) {
    return eng_q8_get(j->in, first + k * step, j->qmin);
}

static void softmax_slice_q8(const norm_job *j, size_t first, size_t step, size_t n) {
    int32_t max = j->qmin;
    for (size_t k = 0; k < n; k++) {
        int32_t x = slice_q8(j, first, step, k);
        max = x > max ? x : max;
    }
    int32_t sum = 0; /* Q12.19 */
    for (size_t k = 0; k < n; k++) {
        int32_t e = softmax_q8_exp(j, slice_q8(j, first, step, k) - max);
        if (e >= 0) sum = wrap_add(sum, eng_fx_mul_pot(e, -SOFTMAX_ACCUM_BITS));
    }
    /* 1 / sum as a Q0.31 reciprocal of sum normalized into [1, 2), and the shift that
     * undoes the normalization. */
    uint32_t fixed = (uint32_t)sum;
    int headroom = fixed ? __builtin_clz(fixed) : 31;
    int bits_over_unit = SOFTMAX_ACCUM_BITS - headroom;
    int32_t scale = eng_fx_one_over_one_plus((int32_t)((fixed << headroom) - (1u << 31)));
    int out_shift = bits_over_unit + 31 - 8;
    if (out_shift > 31) out_shift = 31;
    for (size_t k = 0; k < n; k++) {
        int32_t e = softmax_q8_exp(j, slice_q8(j, first, step, k) - max);
        int32_t r = e < 0 ? 0 : eng_rounding_shift_right(eng_srdhm(scale, e), out_shift);
        eng_q8_put(j->out, first + k * step, eng_q8_offset(r, j->zp_out, j->qmin, j->qmax));
    }
}

static void l2norm_slice_q8(const norm_job *j, size_t first, size_t step, size_t n) {
    int64_t sum = 0;
    for (size_t k = 0; k < n; k++) {
        int32_t d = slice_q8(j, first, step, k) - j->zp_in;
        sum += d * d;
    }
    int32_t mult;
    int shift;
    eng_inv_sqrt_multiplier(sum > INT32_MAX ? INT32_MAX : (int32_t)sum, &mult, &shift);
    for (size_t k = 0; k < n; k++) {
        int32_t d = slice_q8(j, first, step, k) - j->zp_in;
        /* Scaling by 128 (the output's 1/128 steps): TFLite's uint8 kernel multiplies before
         * the rounding multiply and shift, its int8 kernel folds it into the shift. */
        int32_t r = j->qmin < 0 ? eng_mul_by_quantized(d, mult, 7 - shift)
                                : eng_rounding_shift_right(eng_srdhm(d * 128, mult), shift);
        eng_q8_put(j->out, first + k * step, eng_q8_offset(r, j->zp_out, j->qmin, j->qmax));
    }
}

/* ---- kernels ------------------------------------------------------------------------ */

static schema_status softmax_f32(eng_op_ctx *c) {
    norm_job j = {.beta = eng_f32(c->in[1]), .log = c->def->code == SCHEMA_OP_LOG_SOFTMAX};
    return along_axis(c, softmax_slice, &j);
}

/* The quantization a quantized slice kernel reads and writes. */
static norm_job q8_job(const eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    return (norm_job){.zp_in = in->zero_point,
                      .zp_out = out->zero_point,
                      .qmin = eng_q8_min(out->type),
                      .qmax = eng_q8_max(out->type)};
}

static schema_status softmax_q8(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    norm_job j = q8_job(c);
    double real = 1.0 * eng_f32(c->in[1]) * in->scale * (double)(1 << (31 - SOFTMAX_DIFF_BITS));
    eng_quantize_multiplier(fmin(real, (double)INT32_MAX), &j.mult, &j.shift);
    /* Differences below -radius would overflow the rescaled input: their exp is 0. */
    j.diff_min = -eng_input_radius(SOFTMAX_DIFF_BITS, j.shift > 0 ? j.shift : 0);
    return along_axis(c, softmax_slice_q8, &j);
}

static schema_status l2norm_f32(eng_op_ctx *c) {
    norm_job j = {0};
    return along_axis(c, l2norm_slice, &j);
}

static schema_status l2norm_q8(eng_op_ctx *c) {
    norm_job j = q8_job(c);
    return along_axis(c, l2norm_slice_q8, &j);
}

static schema_status lrn_f32(eng_op_ctx *c) {
    norm_job j = {.radius = eng_i32(c->in[1]),
                  .bias = eng_f32(c->in[2]),
                  .alpha = eng_f32(c->in[3]),
                  .beta = eng_f32(c->in[4])};
    return along_axis(c, lrn_slice, &j);
}

static schema_status instance_f32(eng_op_ctx *c) {
    const eng_tensor *t = c->in[0];
    norm_job j = {.in = t->data,
                  .out = c->out[0]->data,
                  .gamma = eng_f32(c->in[1]),
                  .beta = eng_f32(c->in[2]),
                  .epsilon = eng_f32(c->in[3])};
    bool nchw = eng_bool(c->in[4]);
    eng_image im;
    eng_image_of(t, nchw, &im);
    size_t pixels = (size_t)im.h * im.w;
    /* NCHW: each channel's pixels are contiguous; NHWC: c apart. */
    if (nchw)
        slice_walk((size_t)im.n * im.c, pixels, 1, instance_slice, &j);
    else
        slice_walk(im.n, pixels, im.c, instance_slice, &j);
    return SCHEMA_OK;
}

/* FLOAT16: the operation's float32 kernel through the type bridge. */
static schema_status norm_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, eng_op_kernel(c->def, SCHEMA_TENSOR_FLOAT32));
}

/* Q8 is NULL for the operations without a quantized form (it ends the kernel list), else
 * it serves both 8-bit types. */
#define NORM_KERNELS(F32, Q8)                                                                      \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, F32}, {SCHEMA_TENSOR_FLOAT16, norm_f16},                           \
            {SCHEMA_TENSOR_QUANT8_ASYMM, Q8}, {                                                    \
            SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, Q8                                                  \
        }                                                                                          \
    }

ENG_OP_DEF(SOFTMAX, norm_check, norm_shape, ENG_INPUT(2), 0, NORM_KERNELS(softmax_f32, softmax_q8));
ENG_OP_DEF(LOG_SOFTMAX, norm_check, norm_shape, 0, 0, NORM_KERNELS(softmax_f32, NULL));
ENG_OP_DEF(L2_NORMALIZATION, norm_check, norm_shape, ENG_INPUT(1), 0,
           NORM_KERNELS(l2norm_f32, l2norm_q8));
ENG_OP_DEF(LOCAL_RESPONSE_NORMALIZATION, norm_check, norm_shape, ENG_INPUT(5), 0,
           NORM_KERNELS(lrn_f32, NULL));
ENG_OP_DEF(INSTANCE_NORMALIZATION, norm_check, norm_shape, 0, 0, NORM_KERNELS(instance_f32, NULL));

/* common: the math and checks every kernel shares, so that each lives once.
 * - messages: nnd_fail() prefixes "OPNAME #index: " and returns NND_INVALID_ARGUMENT.
 * - signature checks: counts, types, ranks, activation codes.
 * - scalars: read INT32, FLOAT32/FLOAT16 and BOOL parameters.
 * - activation ranges for float and quantized outputs.
 * - fixed-point requantization as in the NNAPI reference (TFLite gemmlowp rounding).
 * - broadcasting: output shape and a row-wise walk with strides 0 or 1.
 * - 2-D geometry: implicit padding, output sizes, NHWC/NCHW image views.
 * - type bridges: run a float32 kernel for FLOAT16 or QUANT8 tensors by converting
 *   inputs into scratch and results back (for operations whose reference semantics are
 *   float math followed by quantization).
 */
#ifndef NND_OPS_COMMON_H
#define NND_OPS_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op.h"

/* IEEE half precision. Clang before 15 has no _Float16 on x86: __fp16 stores the same bits
 * (the fuzz build, scripts/fuzz.sh, links compiler-rt for its conversions). */
#if defined(__clang__) && __clang_major__ < 15 && (defined(__x86_64__) || defined(__i386__))
typedef __fp16 nnd_half;
#else
typedef _Float16 nnd_half;
#endif

/* ---- messages and signature checks ---------------------------------------------------- */
nnd_status nnd_fail(nnd_op_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
nnd_status nnd_unsupported(nnd_op_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
nnd_status nnd_check_count(nnd_op_ctx *c, uint32_t min_in, uint32_t max_in, uint32_t min_out,
                           uint32_t max_out);
/* Fails unless t->type is one of the n listed types; `what` names the operand. */
nnd_status nnd_check_type(nnd_op_ctx *c, const nnd_tensor *t, const char *what, int n, ...);
/* Fails unless the rank (when known) is within [min, max]. */
nnd_status nnd_check_rank(nnd_op_ctx *c, const nnd_tensor *t, const char *what, uint32_t min,
                          uint32_t max);
/* Input i is a scalar of the given type (INT32, FLOAT32, FLOAT16, BOOL). */
nnd_status nnd_check_scalar(nnd_op_ctx *c, uint32_t i, int32_t type);
/* Input i, when constant, is a fused activation code 0..3. */
nnd_status nnd_check_activation(nnd_op_ctx *c, uint32_t i);
/* Output o has the same type as input i (and, for quantized types, no checks on scale). */
nnd_status nnd_check_same_type(nnd_op_ctx *c, uint32_t i, uint32_t o);

static inline bool nnd_present(const nnd_tensor *t) { return t->lifetime != NND_NO_VALUE; }
static inline bool nnd_has_input(const nnd_op_ctx *c, uint32_t i) {
    return i < c->n_in && nnd_present(c->in[i]);
}
/* An optional input that is a model input: at prepare it has no data yet, and whether the
 * request will omit it is only known at execution (shape() may want NND_DEFER). */
static inline bool nnd_input_pending(const nnd_op_ctx *c, uint32_t i) {
    return nnd_has_input(c, i) && c->in[i]->lifetime == NND_MODEL_INPUT && !c->in[i]->data;
}
static inline bool nnd_is_quant8(int32_t type) {
    return type == NND_TENSOR_QUANT8_ASYMM || type == NND_TENSOR_QUANT8_ASYMM_SIGNED;
}
static inline bool nnd_is_float(int32_t type) {
    return type == NND_TENSOR_FLOAT32 || type == NND_TENSOR_FLOAT16;
}

/* ---- scalars and shapes ------------------------------------------------------------- */
int32_t nnd_i32(const nnd_tensor *t);  /* INT32 scalar, or element 0 of an INT32 tensor */
float nnd_f32(const nnd_tensor *t);    /* FLOAT32 or FLOAT16 scalar */
bool nnd_bool(const nnd_tensor *t);    /* BOOL scalar */
size_t nnd_elems(const nnd_tensor *t); /* product of dims (1 for rank 0) */
void nnd_set_shape(nnd_tensor *t, uint32_t rank, const uint32_t *dims);
static inline void nnd_copy_shape(nnd_tensor *dst, const nnd_tensor *src) {
    nnd_set_shape(dst, src->rank, src->dims);
}
/* Product of dims[from..to). */
size_t nnd_dims_product(const nnd_tensor *t, uint32_t from, uint32_t to);

/* ---- activation --------------------------------------------------------------------- */
void nnd_act_range_f32(int32_t act, float *lo, float *hi);
/* Quantized clamp bounds for an activation on an output of the given scale/zero point and
 * representable range [qmin, qmax]. */
void nnd_act_range_quant(int32_t act, float scale, int32_t zero_point, int32_t qmin,
                         int32_t qmax, int32_t *lo, int32_t *hi);
static inline float nnd_clampf(float x, float lo, float hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}
static inline int32_t nnd_clampi(int32_t x, int32_t lo, int32_t hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}
/* x truncated into [lo, hi], NaN giving lo: converting a float past the int range is
 * undefined, and floats computed from client data go anywhere. */
static inline int32_t nnd_f2i_clamp(float x, int32_t lo, int32_t hi) {
    if (!(x > (float)lo)) return lo;
    if (x >= (float)hi) return hi;
    return (int32_t)x;
}

/* ---- fixed-point requantization (NNAPI reference semantics) --------------------------- */
/* m == q * 2^(shift - 31) with q in [2^30, 2^31); shift > 0 is a left shift. */
void nnd_quantize_multiplier(double m, int32_t *q, int *shift);
int32_t nnd_srdhm(int32_t a, int32_t b);           /* SaturatingRoundingDoublingHighMul */
int32_t nnd_rounding_shift_right(int32_t x, int e); /* RoundingDivideByPOT */
/* x * m for a multiplier from nnd_quantize_multiplier. */
int32_t nnd_mul_by_quantized(int32_t x, int32_t q, int shift);
/* The NNAPI 1.0 convolution multiplier: in_scale * filter_scale / out_scale, checked < 1
 * by the caller where required. */
double nnd_conv_multiplier(float in_scale, float filter_scale, float out_scale);
/* round-half-away-from-zero quantization of a real value, clamped to [qmin, qmax]. */
int32_t nnd_quantize_value(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax);
static inline float nnd_dequantize_value(int32_t q, float scale, int32_t zero_point) {
    return scale * (float)(q - zero_point);
}

/* ---- broadcasting ------------------------------------------------------------------- */
/* Sets out's shape to the NumPy-style broadcast of a and b, or fails naming both shapes. */
nnd_status nnd_broadcast_shape(nnd_op_ctx *c, const nnd_tensor *a, const nnd_tensor *b,
                               nnd_tensor *out);
/* Calls row(ctx, out_off, a_off, a_step, b_off, b_step, n) for each innermost run of the
 * output; steps are 0 (broadcast) or 1. Offsets are in elements. */
typedef void (*nnd_bcast_row_fn)(void *ctx, size_t out_off, size_t a_off, size_t a_step,
                                 size_t b_off, size_t b_step, size_t n);
void nnd_broadcast_walk(const nnd_tensor *a, const nnd_tensor *b, const nnd_tensor *out,
                        nnd_bcast_row_fn row, void *ctx);

/* ---- 2-D geometry ------------------------------------------------------------------- */
/* Implicit padding as the HAL defines it; out receives the output size. */
void nnd_implicit_padding(int32_t scheme, uint32_t in, uint32_t stride, uint32_t filter,
                          uint32_t dilation, uint32_t *out, int32_t *pad_head,
                          int32_t *pad_tail);
/* Output size for explicit padding; 0 when the window does not fit. */
uint32_t nnd_window_out(uint32_t in, uint32_t filter, uint32_t dilation, uint32_t stride,
                        int32_t pad_head, int32_t pad_tail);

/* A rank-4 image tensor seen as N, H, W, C with element strides, for either layout. */
typedef struct nnd_image {
    uint32_t n, h, w, c;
    size_t sn, sh, sw, sc;
} nnd_image;
void nnd_image_of(const nnd_tensor *t, bool nchw, nnd_image *im);
static inline size_t nnd_image_at(const nnd_image *im, uint32_t n, uint32_t h, uint32_t w,
                                  uint32_t c) {
    return n * im->sn + h * im->sh + w * im->sw + c * im->sc;
}
/* Sets an N,H,W,C shape on t in the given layout. */
void nnd_set_image_shape(nnd_tensor *t, bool nchw, uint32_t n, uint32_t h, uint32_t w,
                         uint32_t c);

/* ---- type bridges ------------------------------------------------------------------- */
/* Runs f32 with every FLOAT16 tensor/scalar (inputs and outputs) presented as FLOAT32. */
nnd_status nnd_run_f16_as_f32(nnd_op_ctx *c, nnd_op_fn f32);
/* Runs f32 with every TENSOR_QUANT8_ASYMM input dequantized and every QUANT8 output
 * quantized back (round half away from zero, saturating). */
nnd_status nnd_run_quant8_as_f32(nnd_op_ctx *c, nnd_op_fn f32);

/* ---- convolution -------------------------------------------------------------------- */
/* One engine for CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D and FULLY_CONNECTED: a
 * grouped convolution where in_c / groups input channels feed out_c / groups outputs.
 * Depthwise is groups == in_c (out_c / groups = depth multiplier); FC is a 1x1 conv.
 *
 * Operand order of the windowed operations: 0 input, 1 filter, 2 bias, then either
 * explicit padding (left, right, top, bottom) or an implicit scheme, stride w, stride h,
 * `n_extra` operation-specific INT32 scalars (depth multiplier, groups), the fused
 * activation, an optional NCHW flag and optional dilation factors (w, h). */
typedef struct nnd_conv_params {
    int32_t scheme; /* NND_PADDING_SAME/VALID, or 0 for explicit padding */
    int32_t pad_left, pad_right, pad_top, pad_bottom;
    int32_t stride_w, stride_h, dil_w, dil_h;
    int32_t extra; /* the first operation-specific scalar, 0 if none */
    int32_t act;
    bool nchw;
} nnd_conv_params;

enum {
    NND_CONV_DILATION = 1,       /* dilation factors may follow the layout flag */
    NND_CONV_LAYOUT_REQUIRED = 2 /* the layout flag is not optional */
};
/* Signature of the scalars: count, types, and values of the constant ones. */
nnd_status nnd_conv_check_params(nnd_op_ctx *c, uint32_t n_extra, unsigned flags);
/* Reads the scalars; NND_DEFER when one is not known yet. Padding stays as given. */
nnd_status nnd_conv_read_params(const nnd_op_ctx *c, uint32_t n_extra, nnd_conv_params *p);
/* Types of input 0, filter (input 1), bias (input 2) and output 0: FLOAT32, FLOAT16 or
 * QUANT8_ASYMM throughout, with a TENSOR_INT32 bias for QUANT8_ASYMM (scale
 * input * filter), whose filter may instead be QUANT8_SYMM_PER_CHANNEL along
 * channel_dim (< 0: not accepted). */
nnd_status nnd_conv_check_tensors(nnd_op_ctx *c, int channel_dim);

typedef struct nnd_conv_geom {
    uint32_t batches, in_h, in_w, in_c;
    uint32_t out_h, out_w, out_c;
    uint32_t filter_h, filter_w, groups;
    int32_t pad_top, pad_left, stride_h, stride_w, dil_h, dil_w;
    /* Filter element (oc, ky, kx, k) with k < in_c / groups is at
     * oc * filter_oc_stride + (ky * filter_w + kx) * filter_tap_stride + k. */
    size_t filter_oc_stride, filter_tap_stride;
    bool nchw; /* layout of input and output */
} nnd_conv_geom;

/* Fills the input sizes (per layout), padding (resolving an implicit scheme), strides,
 * dilation and output size for a filter_h x filter_w window; fails when a padding is
 * not smaller than the dilated filter. The caller sets out_c, groups, filter strides. */
nnd_status nnd_conv_geometry(nnd_op_ctx *c, const nnd_conv_params *p, const nnd_tensor *in,
                             uint32_t filter_h, uint32_t filter_w, nnd_conv_geom *g);
/* Output multipliers for n output channels: in * filter[channel] / out, per channel for
 * a QUANT8_SYMM_PER_CHANNEL filter, else the same for all. */
void nnd_conv_requant(const nnd_tensor *in, const nnd_tensor *filter, const nnd_tensor *out,
                      uint32_t n, int32_t *mult, int *shift);
/* t's data, or an aligned scratch copy when it is not aligned for its element type
 * (constants can sit at any offset of the operand values); NULL when out of memory. */
const void *nnd_aligned_data(nnd_op_ctx *c, const nnd_tensor *t);
/* Computes out (dims already set) for a FLOAT32 or QUANT8_ASYMM input. */
nnd_status nnd_conv_run(nnd_op_ctx *c, const nnd_conv_geom *g, const nnd_tensor *in,
                        const nnd_tensor *filter, const nnd_tensor *bias, nnd_tensor *out,
                        int32_t act);
/* The transposed convolution (groups == 1, no dilation) of the same operands: input pixel
 * i spreads over output pixels i * stride - pad + k; pad_top and pad_left must not be
 * negative. g->in_* are the input's sizes, g->out_* the output's. */
nnd_status nnd_conv_transpose_run(nnd_op_ctx *c, const nnd_conv_geom *g, const nnd_tensor *in,
                                  const nnd_tensor *filter, const nnd_tensor *bias,
                                  nnd_tensor *out, int32_t act);

/* ---- gemmlowp fixed-point functions (raw int32 values; Qm.n = m integer bits) ---------- */
/* SaturatingRoundingMultiplyByPOT: x * 2^e, saturating for e > 0, rounding for e < 0. */
int32_t nnd_fx_mul_pot(int32_t x, int e);
/* exp(a) for a <= 0 in Q(integer_bits); result Q0.31 (exp_on_negative_values). */
int32_t nnd_fx_exp_neg(int32_t a, int integer_bits);
/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out (one_over_one_plus_x_for_x_in_0_1). */
int32_t nnd_fx_one_over_one_plus(int32_t a);
/* logistic(a) and tanh(a) for a in Q(integer_bits); results Q0.31. */
int32_t nnd_fx_logistic(int32_t a, int integer_bits);
int32_t nnd_fx_tanh(int32_t a, int integer_bits);
/* Largest |input difference| whose rescaled value still fits integer_bits after a
 * left_shift (the reference's CalculateInputRadius). */
int32_t nnd_input_radius(int integer_bits, int left_shift);
/* The same on int16 raw values (gemmlowp's 16-bit FixedPoint, Q0.15 results): the product
 * of two values (SaturatingRoundingDoublingHighMul), x * 2^e, logistic and tanh. */
int16_t nnd_fx16_srdhm(int16_t a, int16_t b);
int16_t nnd_fx16_mul_pot(int16_t x, int e);
int16_t nnd_fx16_logistic(int16_t a, int integer_bits);
int16_t nnd_fx16_tanh(int16_t a, int integer_bits);

/* ---- byte moving ---------------------------------------------------------------------- */
/* For quantized types: fails unless output o has input i's scale and zero point (the
 * operations that move stored values without requantizing). */
nnd_status nnd_check_same_quant(nnd_op_ctx *c, uint32_t i, uint32_t o);
/* Copies n elements of esize bytes, reading every src_step-th and writing every
 * dst_step-th element (steps in elements). */
void nnd_copy_elems(void *dst, size_t dst_step, const void *src, size_t src_step, size_t n,
                    size_t esize);
/* N-d strided copy: for every index vector i < count[0..rank), the element at
 * sum(i[d] * src_step[d]) from src goes to sum(i[d] * dst_step[d]) from dst. Steps are in
 * elements and may be zero or negative; the caller keeps every address in bounds. Nothing
 * is touched when some count is 0. Up to NND_COPY_MAX_RANK dimensions. */
#define NND_COPY_MAX_RANK (2 * NND_MAX_RANK)
void nnd_copy_nd(void *dst, const ptrdiff_t *dst_step, const void *src, const ptrdiff_t *src_step,
                 const uint32_t *count, uint32_t rank, size_t esize);
/* Row-major element steps of a shape (steps[rank - 1] == 1). */
void nnd_dense_steps(uint32_t rank, const uint32_t *dims, ptrdiff_t *steps);
/* Sets n elements of esize bytes at dst to copies of the element at value. */
void nnd_fill_elems(void *dst, const void *value, size_t n, size_t esize);
/* Resolves an axis in [-rank, rank) to [0, rank); false when out of range. */
bool nnd_resolve_axis(int32_t axis, uint32_t rank, uint32_t *out);
/* Kernel rows running one type-agnostic function for FLOAT32, FLOAT16 and QUANT8_ASYMM
 * inputs (FQ), and also TENSOR_INT32 (FQI). */
// clang-format off
#define NND_KERNELS_FQ(run) \
    {{NND_TENSOR_FLOAT32, run}, {NND_TENSOR_FLOAT16, run}, {NND_TENSOR_QUANT8_ASYMM, run}}
#define NND_KERNELS_FQI(run) \
    {{NND_TENSOR_FLOAT32, run}, {NND_TENSOR_FLOAT16, run}, {NND_TENSOR_QUANT8_ASYMM, run}, \
     {NND_TENSOR_INT32, run}}
// clang-format on

/* ---- recurrent layers (RNN, LSTM, SVDF and their sequence forms) -------------------- */
/* Activation codes of the recurrent layers: the fused codes 0..3, then tanh, sign bit
 * (1 for negative inputs, else 0) and logistic sigmoid. */
enum { NND_ACT_TANH = 4, NND_ACT_SIGN_BIT = 5, NND_ACT_SIGMOID = 6 };
float nnd_recurrent_act(int32_t act, float x);
void nnd_recurrent_act_vec(int32_t act, float *x, size_t n);
/* out[b * out_bstride + r * out_rstride] += <row r of w, x + b * x_stride> for b < batch,
 * r < rows; w is a row-major [rows, cols] matrix. */
void nnd_matvec_acc(const float *w, uint32_t rows, uint32_t cols, const float *x, size_t x_stride,
                    uint32_t batch, float *out, size_t out_bstride, size_t out_rstride);
/* One direction of a recurrent layer over a sequence: its input, optional auxiliary input
 * (aux NULL: none) and output, with element strides per time step (_t) and per batch row
 * (_b). */
typedef struct nnd_seq_io {
    const float *x, *aux;
    float *out;
    uint32_t n_time, n_batch, n_input, n_aux;
    size_t x_t, x_b, aux_t, aux_b, out_t, out_b;
} nnd_seq_io;
/* x is [batch, input] (a single step) or a 3-D [time, batch, input] (time major) or
 * [batch, time, input] sequence; aux (may be NULL) has x's layout; out has x's layout with
 * rows of out_width elements (wider than the cell's output when two directions share a
 * merged output). */
void nnd_seq_io_init(nnd_seq_io *io, bool time_major, const nnd_tensor *x, const nnd_tensor *aux,
                     float *out, size_t out_width);
/* Copies n_batch contiguous state rows of `width` elements into the output at step t. */
void nnd_seq_store(const nnd_seq_io *io, uint32_t t, const float *rows, size_t width);
/* Time steps and batch rows of the 3-D sequence input 0. */
nnd_status nnd_seq_dims(nnd_op_ctx *c, bool time_major, uint32_t *n_time, uint32_t *n_batch);
/* BIDIRECTIONAL_SEQUENCE_*: checks the output count against merge (1 output when merging,
 * else 2), the 3-D input 0, and the optional auxiliary input aux_i (the input's first two
 * dimensions); *n_aux receives its feature size, 0 when omitted. */
nnd_status nnd_seq_bidi_check(nnd_op_ctx *c, bool merge, bool time_major, uint32_t aux_i,
                              uint32_t *n_batch, uint32_t *n_aux);
/* Sets the output shapes: [d0, d1, fw + bw] when merging, else [d0, d1, fw] and
 * [d0, d1, bw], d0 and d1 being input 0's. */
void nnd_seq_bidi_set_shapes(nnd_op_ctx *c, bool merge, uint32_t fw_width, uint32_t bw_width);
/* The two directions' views: input 0, the auxiliary input aux_i, and output 0 (shared,
 * the backward rows starting fw_width elements in) when merging, else outputs 0 and 1. */
void nnd_seq_bidi_io(const nnd_op_ctx *c, bool merge, bool time_major, uint32_t aux_i,
                     uint32_t fw_width, nnd_seq_io *fw, nnd_seq_io *bw);

/* Defines `const nnd_op_def var` with float32 kernel f32 and FLOAT16 through the bridge. */
#define NND_FLOAT_OP(var, CODE, NAME, check_fn, shape_fn, f32)                                     \
    static nnd_status f32##_as_f16(nnd_op_ctx *c) {                                                \
        return nnd_run_f16_as_f32(c, f32);                                                         \
    }                                                                                              \
    const nnd_op_def var = {                                                                       \
        .code = CODE,                                                                              \
        .name = NAME,                                                                              \
        .check = check_fn,                                                                         \
        .shape = shape_fn,                                                                         \
        .kernels = {{NND_TENSOR_FLOAT32, f32}, {NND_TENSOR_FLOAT16, f32##_as_f16}}}

/* ---- signatures and shapes of multi-operand operations ------------------------------ */
/* Checks input and output types against kind strings, one letter per operand relative to
 * the type of input 0: 'T' that tensor type, 'f' the float scalar that goes with it
 * (FLOAT16 for TENSOR_FLOAT16, else FLOAT32), 'i' INT32, 'b' BOOL, 'I' TENSOR_INT32,
 * '*' any. Operands beyond a string's end are not checked. */
nnd_status nnd_check_signature(nnd_op_ctx *c, const char *in_kinds, const char *out_kinds);
/* Input 0 is TENSOR_FLOAT32 or TENSOR_FLOAT16 (else unsupported), then as above. */
nnd_status nnd_check_float_signature(nnd_op_ctx *c, const char *in_kinds, const char *out_kinds);
/* Fails unless input i has exactly the given rank and dimensions; `what` names it. */
nnd_status nnd_expect_dims(nnd_op_ctx *c, uint32_t i, const char *what, uint32_t rank,
                           const uint32_t *dims);

/* ---- real values of any numeric tensor ------------------------------------------------ */
/* Element i of a FLOAT32, FLOAT16, INT32, QUANT8_ASYMM, QUANT16_ASYMM or QUANT16_SYMM tensor
 * as a real number (quantized values are dequantized with the tensor's scale/zero point). */
float nnd_real_at(const nnd_tensor *t, size_t i);
/* Stores x at element i of a FLOAT32, FLOAT16, QUANT8_ASYMM, QUANT16_ASYMM or QUANT16_SYMM
 * tensor: quantized as round(x / scale + zero point) (half away from zero) saturated to the
 * type's range, as the reference does. */
void nnd_set_real_at(nnd_tensor *t, size_t i, float x);

/* ---- ordering ------------------------------------------------------------------------- */
/* true when index a must come before index b. */
typedef bool (*nnd_before_fn)(const void *ctx, uint32_t a, uint32_t b);
/* Stable merge sort of n indices; tmp has room for n. */
void nnd_stable_sort(uint32_t *idx, size_t n, uint32_t *tmp, nnd_before_fn before,
                     const void *ctx);
/* Stable sort by descending key[idx[i]]. */
void nnd_sort_by_score(uint32_t *idx, size_t n, const float *key, uint32_t *tmp);

/* ---- axis-aligned boxes (detection operations) ---------------------------------------- */
/* A box is four floats [x1, y1, x2, y2] with x1 <= x2, y1 <= y2; the same math serves
 * [y1, x1, y2, x2] boxes. */
/* Corners of the box with the given center and size. */
void nnd_box_from_center(float cx, float cy, float w, float h, float *box);
/* Applies a regression delta [dx, dy, dw, dh]: the center moves by (dx * width, dy *
 * height), the size scales by (exp(dw), exp(dh)). */
void nnd_box_apply_delta(const float *box, const float *delta, float *out);
/* Clamps x coordinates to [0, width] and y coordinates to [0, height]. */
void nnd_box_clip(float *box, float height, float width);
/* Intersection over union of two boxes. */
float nnd_box_iou(const float *a, const float *b);
static inline bool nnd_box_valid(const float *box) {
    return box[0] <= box[2] && box[1] <= box[3];
}
/* Quantized box tensors (QUANT16_ASYMM) must have scale 0.125 and zero point 0; other
 * types pass. `what` names the operand. */
nnd_status nnd_check_box_quant(nnd_op_ctx *c, const nnd_tensor *t, const char *what);

/* Signature of the detection and region operations: input 0 is FLOAT32, FLOAT16 or
 * QUANT8_ASYMM (else unsupported), operands match the kinds of nnd_check_signature, and
 * each 'B' (box) operand has input 0's float type, or is QUANT16_ASYMM with scale 0.125 and
 * zero point 0 when input 0 is quantized. */
nnd_status nnd_check_box_signature(nnd_op_ctx *c, const char *in_kinds, const char *out_kinds);
/* Each input i whose ranks[i] is a digit must have that rank (when known); other
 * characters skip the input. */
nnd_status nnd_check_input_ranks(nnd_op_ctx *c, const char *ranks);

/* Defines `const nnd_op_def nnd_op_<id>` for the HAL operation OP (code and name from
 * its spelling) with the given check, shape and kernel rows ({{type, run}, ...}). */
// clang-format off
#define NND_OP_DEF(id, OP, check_fn, shape_fn, ...) \
    const nnd_op_def nnd_op_##id = {.code = NND_OP_##OP, .name = #OP, .check = check_fn, \
        .shape = shape_fn, .kernels = __VA_ARGS__}
// clang-format on

#endif

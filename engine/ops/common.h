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

typedef _Float16 nnd_half;

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

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* xnnb_step: what the pieces of the XNNPACK backend (backend.h) share. xnn.c is the
 * backend itself (process-wide state, claim dispatch from the rows of XNNB_FAST_PATHS, run,
 * release); each family's claim and the kinds of step it makes (setup included) live in its
 * own file: xnn_conv.c (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the pools),
 * xnn_eltwise.c (ADD, MUL and the unary operations), xnn_norm.c, xnn_transformer.c,
 * xnn_batch_matmul.c; xnn_fp16.c lets an
 * FP16 step take its FP32 operator; xnn_qs8.c holds the signed 8-bit operators (qs8, and
 * qc8 for per-channel filters); xnn_qconv.c puts 8-bit convolutions on qconv.h's exact
 * kernels, and xnn_eltwise.c 8-bit ADD and SUB of one shape on qadd.h's.
 *
 * Contract of a family claim: it is given the step's context with tensors of one
 * computing type (s->dt: TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM or
 * TENSOR_QUANT8_ASYMM_SIGNED, filters possibly per channel), constants bound;
 * it sets s->kind (its family's xnnb_kind, or NULL and s->composite) and the setup
 * arguments and creates s->op with s->flags (weights packed), or returns a status other than
 * success to leave the step to the reference. It checks every parameter XNNPACK would assert on:
 * the client chooses them all.
 */
#ifndef ENG_BACKENDS_XNNPACK_XNN_STEP_H
#define ENG_BACKENDS_XNNPACK_XNN_STEP_H

#include <pthread.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include "engine/op.h"

/* The computing type of a step's operator. */
enum xnnb_dtype {
    XD_F32, /* TENSOR_FLOAT32 (and TENSOR_FLOAT16, widened) */
    XD_QU8, /* TENSOR_QUANT8_ASYMM */
    XD_QS8  /* TENSOR_QUANT8_ASYMM_SIGNED: qs8, or qc8 with a per-channel filter */
};

struct xnnb_kind;

typedef struct xnnb_step {
    xnn_operator_t op;
    const struct xnnb_kind *kind; /* NULL: s->composite runs the step */
    enum xnnb_dtype dt;
    bool per_channel; /* XD_QS8 CONV: the qc8 operator */
    bool f16;         /* a TENSOR_FLOAT16 step computed by the FLOAT32 operator */
    uint32_t flags;   /* for every create: XNN_FLAG_YIELD_WORKERS on a plan's last step */
    /* Setup arguments: images are batch x h x w, FC batch rows, unary ops n elements. */
    size_t batch, h, w;
    size_t a_rank, b_rank, a_shape[ENG_MAX_RANK], b_shape[ENG_MAX_RANK];
    size_t in_elems[2], out_elems; /* elements of input 0 (and 1) read and output written */
    /* f16: inputs 0 and 1 when constant, converted to float once at claim (XNNPACK may
     * read XNN_EXTRA_BYTES past their end); NULL otherwise. */
    float *wide[2];
    eng_op_fn reference;
    pthread_mutex_t lock;
    /* kind NULL: several operators, or work around one (xnn_transformer.h). */
    const struct xnnb_composite *composite;
    void *extra; /* the composite's own state, freed by its release */
} xnnb_step;

/* What a family's claim picks for its step besides the operator: how the operator is set
 * up for one run (input a, input b when binary, output y), and what the generic run must
 * know of it. Each family file defines its own. */
typedef struct xnnb_kind {
    enum xnn_status (*setup)(const xnnb_step *s, const void *a, const void *b, void *y,
                             pthreadpool_t tp);
    bool binary;       /* input 1 is a second tensor the operator reads */
    bool reads_output; /* reads its output back past its end (multi-pass max pooling) */
} xnnb_kind;

/* The fast paths, one row each: the operation, the claim of its family (defined in that
 * family's file, xnn_<family>.c) and whether the step is weighted (input 1 a constant
 * filter of the input's kind, input 2 its bias: xnn.c checks them before the claim).
 * Adding a fast path is its claim file and its row here. */
// clang-format off
#define XNNB_FAST_PATHS(X) \
    X(CONV_2D, xnnb_claim_conv, true) \
    X(DEPTHWISE_CONV_2D, xnnb_claim_conv, true) \
    X(FULLY_CONNECTED, xnnb_claim_fc, true) \
    X(AVERAGE_POOL_2D, xnnb_claim_pool, false) \
    X(MAX_POOL_2D, xnnb_claim_pool, false) \
    X(ADD, xnnb_claim_binary, false) \
    X(MUL, xnnb_claim_binary, false) \
    X(SUB, xnnb_claim_binary, false) \
    X(DIV, xnnb_claim_binary, false) \
    X(RELU, xnnb_claim_unary, false) \
    X(RELU1, xnnb_claim_unary, false) \
    X(RELU6, xnnb_claim_unary, false) \
    X(LOGISTIC, xnnb_claim_unary, false) \
    X(TANH, xnnb_claim_unary, false) \
    X(HARD_SWISH, xnnb_claim_unary, false) \
    X(ELU, xnnb_claim_unary, false) \
    X(BATCH_MATMUL, xnnb_claim_batch_matmul, false) \
    X(SOFTMAX, xnnb_claim_transformer, false) \
    X(MEAN, xnnb_claim_norm, false) \
    X(RSQRT, xnnb_claim_norm, false) \
    X(SQRT, xnnb_claim_norm, false)
// clang-format on
#define XNNB_CLAIM_DECLARE(op, claim, weighted) enum xnn_status claim(eng_op_ctx *c, xnnb_step *s);
XNNB_FAST_PATHS(XNNB_CLAIM_DECLARE)
#undef XNNB_CLAIM_DECLARE

/* A step the generic run cannot express: run() does the whole call (falling back to
 * s->reference itself), release() frees s->extra. */
typedef struct xnnb_composite {
    schema_status (*run)(eng_op_ctx *c, xnnb_step *s, pthreadpool_t tp);
    void (*release)(void *extra);
} xnnb_composite;

/* p (n bytes within t's memory) itself when XNNPACK may over-read XNN_EXTRA_BYTES past
 * them: t's memory goes on that far (its capacity, then eng_tensor.readable_past), or the
 * over-read stays within their last page; else a scratch copy with room to spare. NULL when
 * out of scratch memory. */
const void *xnnb_overread_safe(eng_op_ctx *c, const eng_tensor *t, const void *p, size_t n);

/* Output clamp for a fused activation: float bounds, or stored-value bounds in y's 8-bit
 * range. False when the quantized range collapses (XNNPACK wants min < max). */
bool xnnb_act_bounds(const eng_tensor *y, int32_t act, float *lo, float *hi, int32_t *qlo,
                     int32_t *qhi);
/* Whether a tensor's zero point is a value of its 8-bit storage (true for other types). */
bool xnnb_zero_point_fits(const eng_tensor *t);

/* The engine's own kernels as a step (composites holding one block from malloc, `extra`,
 * which the step's release frees): xnnb_own_composite() makes s such a step and counts
 * extra in the engine's footprint; xnnb_pool_flags() gives its runs pthreadpool's flags as
 * an XNNPACK operator of the step would have them (PTHREADPOOL_FLAG_YIELD_WORKERS on a
 * plan's last step). */
void xnnb_own_composite(xnnb_step *s, const xnnb_composite *composite, void *extra);
uint32_t xnnb_pool_flags(const xnnb_step *s);

/* ---- signed 8-bit operators (xnn_qs8.c) --------------------------------------------- */

/* A convolution's window and grouping as XNNPACK takes them. */
typedef struct xnnb_window {
    uint32_t pad[4]; /* top, right, bottom, left */
    uint32_t fh, fw, sh, sw, dh, dw;
    uint32_t groups, group_in, group_out;
    bool depthwise; /* filter [1, fh, fw, out]: XNN_FLAG_DEPTHWISE_CONVOLUTION */
} xnnb_window;

/* XNNPACK asserts (an abort in Debian's build) that a quantized convolution's or fully
 * connected layer's requantization scale, input * filter / output, is in [2^-32, 256),
 * for every channel of a per-channel filter: scales are the client's, so any other leaves
 * the step to the reference kernel. */
bool xnnb_requant_ok(const eng_tensor *x, const eng_tensor *f, const eng_tensor *y);
/* CONV_2D and DEPTHWISE_CONV_2D: qc8 for a TENSOR_QUANT8_SYMM_PER_CHANNEL filter (its
 * channels the output's), else qs8 (filter zero point 0). */
enum xnn_status xnnb_qs8_create_conv(const xnnb_window *wd, const eng_tensor *x,
                                     const eng_tensor *f, const eng_tensor *bias,
                                     const eng_tensor *y, int32_t qlo, int32_t qhi, xnnb_step *s);
enum xnn_status xnnb_qs8_create_fc(size_t size, size_t units, const eng_tensor *x,
                                   const eng_tensor *wt, const eng_tensor *bias,
                                   const eng_tensor *y, int32_t qlo, int32_t qhi, xnnb_step *s);

/* An 8-bit CONV_2D, DEPTHWISE_CONV_2D (wd, act: its window and fused activation) or
 * FULLY_CONNECTED (wd 1x1) as qconv.h computes it, bit-exact with the reference, when qconv
 * takes it (xnn_qconv.c): s becomes a composite step. False leaves s as it was. */
bool xnnb_qconv_claim(eng_op_ctx *c, const xnnb_window *wd, int32_t act, xnnb_step *s);

/* ---- FP16 steps (xnn_fp16.c) ------------------------------------------------------- */

/* The step's tensors as FLOAT32: FLOAT16 and TENSOR_FLOAT16 become FLOAT32 and
 * TENSOR_FLOAT32, constants converted into buffers owned by w (freed by
 * xnnb_widened_free). False when out of memory. */
typedef struct xnnb_widened {
    eng_tensor *in, *out;       /* copies */
    eng_tensor **in_p, **out_p; /* pointers to them, for the context */
    float **owned;              /* one converted buffer per input, or NULL */
    uint32_t n_in, n_out;
} xnnb_widened;
bool xnnb_widen(const eng_op_ctx *c, eng_op_ctx *wide_c, xnnb_widened *w);
/* Frees w's buffers; the ones moved into a step (set to NULL) stay. */
void xnnb_widened_free(xnnb_widened *w);

/* Element conversions, vectorized where the CPU converts halves (F16C). */
void xnnb_f16_to_f32(const void *in, float *out, size_t n);
void xnnb_f32_to_f16(const float *in, void *out, size_t n);

#endif

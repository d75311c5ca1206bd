/* xnn_step: what the pieces of the XNNPACK backend (backend.h) share. xnn.c is the
 * backend itself (process-wide state, claim dispatch, run, release); the claims of the
 * operation families live in xnn_conv.c (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and
 * the pools) and xnn_eltwise.c (ADD, MUL and the unary operations); xnn_fp16.c lets an
 * FP16 step take its FP32 operator.
 *
 * Contract of a family claim: it is given the step's context with tensors of one
 * computing type (TENSOR_FLOAT32, or TENSOR_QUANT8_ASYMM when s->q8), constants bound;
 * it sets s->kind and the setup arguments and creates s->op with s->flags (weights
 * packed), or returns a status other than success to leave the step to the reference.
 * It checks every parameter XNNPACK would assert on: the client chooses them all.
 */
#ifndef NND_XNN_STEP_H
#define NND_XNN_STEP_H

#include <pthread.h>
#include <xnnpack.h>

#include "op.h"

enum xnn_kind {
    XK_CONV,
    XK_FC,
    XK_AVG_POOL,
    XK_MAX_POOL,
    XK_ADD,
    XK_MUL,
    XK_CLAMP,
    XK_SIGMOID,
    XK_TANH,
    XK_HARD_SWISH, /* FLOAT32 only */
    XK_ELU         /* FLOAT32 only */
};

typedef struct xnn_step {
    xnn_operator_t op;
    enum xnn_kind kind;
    bool q8;        /* QUANT8_ASYMM, else FLOAT32 */
    bool f16;       /* a TENSOR_FLOAT16 step computed by the FLOAT32 operator */
    uint32_t flags; /* for every create: XNN_FLAG_YIELD_WORKERS on a plan's last step */
    /* Setup arguments: images are batch x h x w, FC batch rows, unary ops n elements. */
    size_t batch, h, w;
    size_t a_rank, b_rank, a_shape[NND_MAX_RANK], b_shape[NND_MAX_RANK];
    size_t in_elems[2], out_elems; /* elements of input 0 (and 1) read and output written */
    /* f16: inputs 0 and 1 when constant, converted to float once at claim (XNNPACK may
     * read XNN_EXTRA_BYTES past their end); NULL otherwise. */
    float *wide[2];
    nnd_op_fn reference;
    pthread_mutex_t lock;
} xnn_step;

enum xnn_status xnn_claim_conv(nnd_op_ctx *c, xnn_step *s);
enum xnn_status xnn_claim_fc(nnd_op_ctx *c, xnn_step *s);
enum xnn_status xnn_claim_pool(nnd_op_ctx *c, xnn_step *s);
enum xnn_status xnn_claim_binary(nnd_op_ctx *c, xnn_step *s);
enum xnn_status xnn_claim_unary(nnd_op_ctx *c, xnn_step *s);

/* Output clamp for a fused activation: float bounds, or stored-value bounds. False when
 * the quantized range collapses (XNNPACK wants min < max). */
bool xnn_act_bounds(const nnd_tensor *y, int32_t act, float *lo, float *hi, uint8_t *qlo,
                    uint8_t *qhi);
bool xnn_qu8_zero_point(const nnd_tensor *t);

/* ---- FP16 steps (xnn_fp16.c) ------------------------------------------------------- */

/* The step's tensors as FLOAT32: FLOAT16 and TENSOR_FLOAT16 become FLOAT32 and
 * TENSOR_FLOAT32, constants converted into buffers owned by w (freed by
 * xnn_widened_free). False when out of memory. */
typedef struct xnn_widened {
    nnd_tensor *in, *out;       /* copies */
    nnd_tensor **in_p, **out_p; /* pointers to them, for the context */
    float **owned;              /* one converted buffer per input, or NULL */
    uint32_t n_in, n_out;
} xnn_widened;
bool xnn_widen(const nnd_op_ctx *c, nnd_op_ctx *wide_c, xnn_widened *w);
/* Frees w's buffers; the ones moved into a step (set to NULL) stay. */
void xnn_widened_free(xnn_widened *w);

/* Element conversions, vectorized where the CPU converts halves (F16C). */
void xnn_f16_to_f32(const void *in, float *out, size_t n);
void xnn_f32_to_f16(const float *in, void *out, size_t n);

#endif

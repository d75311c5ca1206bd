/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_transformer.c: the XNNPACK backend's claims of the other operations a transformer
 * block spends its time in (xnn_step.h), beside BATCH_MATMUL (xnn_batch_matmul.c) and
 * the ADD, MUL, SUB and LOGISTIC of xnn_eltwise.c:
 * - SOFTMAX along the last axis: FLOAT32 with beta 1 (XNNPACK's exponential: within float
 *   rounding), TENSOR_QUANT8_ASYMM with any beta (beta folds into the input scale) when
 *   a row's sum of exponentials fits XNNPACK's 32 bits (claim_softmax).
 * - TANH on FLOAT32, which this XNNPACK has no operator for: tanh(x) = 2 sigmoid(2x) - 1,
 *   XNNPACK's sigmoid between two exact scalings. Its error is absolute (a few units in
 *   the last place of numbers near 1, about 2^-22): within the conformance tolerance,
 *   not bit-exact, and relatively coarser than tanhf near 0.
 * FLOAT16 steps of these stay on the reference kernels. */
#include <math.h>

#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/backends/xnnpack/xnn_step.h"

/* FLOAT32 along the last axis, or unsigned 8-bit. */
static enum xnn_status softmax_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                     pthreadpool_t tp) {
    (void)b;
    if (s->dt == XD_QU8) return xnn_setup_softmax_nc_qu8(s->op, s->batch, a, y, tp);
    return xnn_setup_softmax_nc_f32(s->op, s->batch, a, y, tp);
}

static const xnnb_kind softmax_kind = {.setup = softmax_setup};

static enum xnn_status claim_softmax(eng_op_ctx *c, xnnb_step *s) {
    const eng_tensor *x = c->in[0], *y = c->out[0];
    if (x->rank < 1 || !c->in[1]->data || (c->n_in > 2 && !c->in[2]->data))
        return xnn_status_unsupported_parameter;
    if (c->n_in > 2) { /* the axis: the last one only */
        int32_t axis = eng_i32(c->in[2]);
        if (axis != -1 && axis != (int32_t)x->rank - 1) return xnn_status_unsupported_parameter;
    }
    size_t channels = x->dims[x->rank - 1];
    float beta = eng_f32(c->in[1]);
    s->kind = &softmax_kind;
    s->batch = eng_elems(x) / channels;
    if (s->dt == XD_QU8) {
        /* XNNPACK sums a row's exponentials in 32 bits, each at most the table's largest
         * entry, lrint(min((2^32 - 1) / channels, 2^23 - 1)). Rounded up, a row of equal
         * values sums past 2^32 and wraps: a wrong answer, or 0 and an abort (a divisor
         * XNNPACK asserts is not 0). Such rows stay on the reference kernel. */
        uint64_t largest = (uint64_t)llrint(fmin((double)UINT32_MAX / (double)channels, 8388607.0));
        if ((uint64_t)channels * largest > UINT32_MAX) return xnn_status_unsupported_parameter;
        return xnn_create_softmax_nc_qu8(channels, channels, channels, x->scale * beta,
                                         (uint8_t)y->zero_point, y->scale, s->flags, &s->op);
    }
    if (s->dt != XD_F32 || beta != 1.f) return xnn_status_unsupported_parameter;
    return xnn_create_softmax_nc_f32(channels, channels, channels, s->flags, &s->op);
}

/* ---- FLOAT32 TANH through the sigmoid ------------------------------------------------ */

static schema_status tanh_run(eng_op_ctx *c, xnnb_step *s, pthreadpool_t tp) {
    const eng_tensor *x = c->in[0];
    eng_tensor *y = c->out[0];
    size_t n = s->in_elems[0];
    if (eng_elems(x) != n || eng_elems(y) != n || !x->data || !y->data) return s->reference(c);
    const float *xd = x->data;
    float *yd = y->data;
    /* 2x goes where the sigmoid reads it: the output, unless XNNPACK's over-read past it
     * could leave its page (then scratch). Doubling and halving are exact. */
    float *twice = (float *)xnnb_overread_safe(c, y, yd, n * sizeof *yd);
    if (!twice) return s->reference(c);
    for (size_t i = 0; i < n; i++)
        twice[i] = xd[i] + xd[i];
    pthread_mutex_lock(&s->lock);
    enum xnn_status st = xnn_setup_sigmoid_nc_f32(s->op, n, twice, yd, tp);
    if (st == xnn_status_success) st = xnn_run_operator(s->op, tp);
    pthread_mutex_unlock(&s->lock);
    if (st != xnn_status_success)
        return (eng_fail(c, "XNNPACK operator failed (status %d)", (int)st),
                SCHEMA_GENERAL_FAILURE);
    for (size_t i = 0; i < n; i++)
        yd[i] = (yd[i] + yd[i]) - 1.f;
    return SCHEMA_OK;
}

static void nothing_to_release(void *extra) {
    (void)extra;
}

static const xnnb_composite tanh_composite = {.run = tanh_run, .release = nothing_to_release};

static enum xnn_status claim_tanh_f32(xnnb_step *s) {
    if (s->f16) return xnn_status_unsupported_parameter;
    s->kind = NULL; /* the composite runs it */
    s->composite = &tanh_composite;
    /* One element per row: the setup at each run gives the count. */
    return xnn_create_sigmoid_nc_f32(1, 1, 1, s->flags, &s->op);
}

enum xnn_status xnnb_claim_transformer(eng_op_ctx *c, xnnb_step *s) {
    switch (c->def->code) {
    case SCHEMA_OP_SOFTMAX: return claim_softmax(c, s);
    case SCHEMA_OP_TANH: return s->dt == XD_F32 ? claim_tanh_f32(s) : xnn_status_invalid_parameter;
    default: return xnn_status_unsupported_parameter;
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_eltwise.c: the XNNPACK backend's claims of the element-wise operations
 * (xnn_step.h): ADD, MUL and SUB with broadcasting, and DIV on TENSOR_FLOAT32 only (IEEE
 * division, bit-exact like the others' FLOAT32 forms; FLOAT16 DIV stays on the reference),
 * RELU, RELU1, RELU6 (clamps), LOGISTIC, TANH (FLOAT32, which has no operator in this
 * version: xnn_transformer.c), HARD_SWISH and ELU (a constant alpha; FLOAT32 only), each
 * 8-bit one unsigned (qu8) or signed (qs8). */
#include <stdlib.h>

#include "engine/backends/xnnpack/qadd.h"
#include "engine/backends/xnnpack/xnn_step.h"
#include "engine/ops_common/fused_activation.h"
#include "engine/ops_common/operand.h"

/* ---- kinds of step: how each operator is set up for a run ------------------------------ */

static enum xnn_status add_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                 pthreadpool_t tp) {
    if (s->dt == XD_QS8)
        return xnn_setup_add_nd_qs8(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b, y,
                                    tp);
    if (s->dt == XD_QU8)
        return xnn_setup_add_nd_qu8(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b, y,
                                    tp);
    return xnn_setup_add_nd_f32(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b, y, tp);
}

static enum xnn_status multiply_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                      pthreadpool_t tp) {
    if (s->dt == XD_QS8)
        return xnn_setup_multiply_nd_qs8(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b,
                                         y, tp);
    if (s->dt == XD_QU8)
        return xnn_setup_multiply_nd_qu8(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b,
                                         y, tp);
    return xnn_setup_multiply_nd_f32(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b, y,
                                     tp);
}

static enum xnn_status subtract_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                      pthreadpool_t tp) {
    if (s->dt == XD_QS8)
        return xnn_setup_subtract_nd_qs8(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b,
                                         y, tp);
    if (s->dt == XD_QU8)
        return xnn_setup_subtract_nd_qu8(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b,
                                         y, tp);
    return xnn_setup_subtract_nd_f32(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b, y,
                                     tp);
}

/* FLOAT32 only. */
static enum xnn_status divide_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                    pthreadpool_t tp) {
    return xnn_setup_divide_nd_f32(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a, b, y,
                                   tp);
}

static enum xnn_status sigmoid_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                     pthreadpool_t tp) {
    (void)b;
    if (s->dt == XD_QS8) return xnn_setup_sigmoid_nc_qs8(s->op, 1, a, y, tp);
    if (s->dt == XD_QU8) return xnn_setup_sigmoid_nc_qu8(s->op, 1, a, y, tp);
    return xnn_setup_sigmoid_nc_f32(s->op, 1, a, y, tp);
}

/* 8-bit only (FLOAT32 TANH is a composite, xnn_transformer.c). */
static enum xnn_status tanh_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                  pthreadpool_t tp) {
    (void)b;
    if (s->dt == XD_QS8) return xnn_setup_tanh_nc_qs8(s->op, 1, a, y, tp);
    return xnn_setup_tanh_nc_qu8(s->op, 1, a, y, tp);
}

static enum xnn_status hard_swish_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                        pthreadpool_t tp) {
    (void)b;
    return xnn_setup_hardswish_nc_f32(s->op, 1, a, y, tp);
}

static enum xnn_status elu_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                 pthreadpool_t tp) {
    (void)b;
    return xnn_setup_elu_nc_f32(s->op, 1, a, y, tp);
}

static enum xnn_status clamp_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                   pthreadpool_t tp) {
    (void)b;
    if (s->dt == XD_QS8) return xnn_setup_clamp_nc_s8(s->op, 1, a, y, tp);
    if (s->dt == XD_QU8) return xnn_setup_clamp_nc_u8(s->op, 1, a, y, tp);
    return xnn_setup_clamp_nc_f32(s->op, 1, a, y, tp);
}

static const xnnb_kind add_kind = {.setup = add_setup, .binary = true};
static const xnnb_kind mul_kind = {.setup = multiply_setup, .binary = true};
static const xnnb_kind sub_kind = {.setup = subtract_setup, .binary = true};
static const xnnb_kind div_kind = {.setup = divide_setup, .binary = true};
static const xnnb_kind sigmoid_kind = {.setup = sigmoid_setup};
static const xnnb_kind tanh_kind = {.setup = tanh_setup};
static const xnnb_kind hard_swish_kind = {.setup = hard_swish_setup};
static const xnnb_kind elu_kind = {.setup = elu_setup};
static const xnnb_kind clamp_kind = {.setup = clamp_setup};

static void shape_of(const eng_tensor *t, size_t *rank, size_t *shape) {
    /* A rank-0 tensor broadcasts like one element. */
    *rank = t->rank ? t->rank : 1;
    shape[0] = 1;
    for (uint32_t i = 0; i < t->rank; i++)
        shape[i] = t->dims[i];
}

/* ---- 8-bit ADD and SUB of one shape: qadd.h, bit-exact ------------------------------- */

static schema_status qadd_step_run(eng_op_ctx *c, xnnb_step *s, pthreadpool_t tp) {
    const eng_tensor *a = c->in[0], *b = c->in[1];
    eng_tensor *y = c->out[0];
    size_t n = s->out_elems;
    if (eng_elems(a) != n || eng_elems(b) != n || eng_elems(y) != n || !a->data || !b->data ||
        !y->data)
        return s->reference(c);
    eng_qadd_run(s->extra, a->data, b->data, y->data, n, tp, xnnb_pool_flags(s));
    return SCHEMA_OK;
}

static const xnnb_composite qadd_composite = {.run = qadd_step_run, .release = free};

static bool same_shape(const eng_tensor *a, const eng_tensor *b) {
    if (a->rank != b->rank) return false;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* An 8-bit ADD or SUB without broadcasting as qadd computes it; false leaves s as it was. */
static bool claim_qadd(eng_op_ctx *c, xnnb_step *s) {
    const eng_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    int32_t code = c->def->code;
    if (s->dt == XD_F32 || (code != SCHEMA_OP_ADD && code != SCHEMA_OP_SUB) || !same_shape(a, b) ||
        !same_shape(a, y))
        return false;
    eng_qadd *q = malloc(sizeof *q);
    if (!q || !eng_qadd_init(q, a, b, y, eng_i32(c->in[2]), code == SCHEMA_OP_SUB))
        return free(q), false;
    xnnb_own_composite(s, &qadd_composite, q);
    return true;
}

enum xnn_status xnnb_claim_binary(eng_op_ctx *c, xnnb_step *s) {
    const eng_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    if (a->type != b->type || a->rank > XNN_MAX_TENSOR_DIMS || b->rank > XNN_MAX_TENSOR_DIMS ||
        !c->in[2]->data || !xnnb_zero_point_fits(b) || !xnnb_zero_point_fits(y))
        return xnn_status_unsupported_parameter;
    float lo, hi;
    int32_t qlo, qhi;
    if (!xnnb_act_bounds(y, eng_i32(c->in[2]), &lo, &hi, &qlo, &qhi))
        return xnn_status_unsupported_parameter;
    shape_of(a, &s->a_rank, s->a_shape);
    shape_of(b, &s->b_rank, s->b_shape);
    s->in_elems[1] = eng_elems(b);
    if (claim_qadd(c, s)) return xnn_status_success;
    /* ADD, MUL and SUB take the same arguments in each type. */
    enum xnn_status (*qs8)(int8_t, float, int8_t, float, int8_t, float, int8_t, int8_t, uint32_t,
                           xnn_operator_t *);
    enum xnn_status (*qu8)(uint8_t, float, uint8_t, float, uint8_t, float, uint8_t, uint8_t,
                           uint32_t, xnn_operator_t *);
    enum xnn_status (*f32)(float, float, uint32_t, xnn_operator_t *);
    switch (c->def->code) {
    case SCHEMA_OP_ADD:
        s->kind = &add_kind;
        qs8 = xnn_create_add_nd_qs8, qu8 = xnn_create_add_nd_qu8, f32 = xnn_create_add_nd_f32;
        break;
    case SCHEMA_OP_MUL:
        s->kind = &mul_kind;
        qs8 = xnn_create_multiply_nd_qs8, qu8 = xnn_create_multiply_nd_qu8;
        f32 = xnn_create_multiply_nd_f32;
        break;
    case SCHEMA_OP_SUB:
        s->kind = &sub_kind;
        qs8 = xnn_create_subtract_nd_qs8, qu8 = xnn_create_subtract_nd_qu8;
        f32 = xnn_create_subtract_nd_f32;
        break;
    case SCHEMA_OP_DIV: /* FLOAT32 only (NNAPI has no 8-bit DIV) */
        if (s->dt != XD_F32 || s->f16) return xnn_status_unsupported_parameter;
        s->kind = &div_kind;
        qs8 = NULL, qu8 = NULL, f32 = xnn_create_divide_nd_f32;
        break;
    default: return xnn_status_unsupported_parameter;
    }
    int32_t za = a->zero_point, zb = b->zero_point, zy = y->zero_point;
    if (s->dt == XD_QS8 && qs8)
        return qs8((int8_t)za, a->scale, (int8_t)zb, b->scale, (int8_t)zy, y->scale, (int8_t)qlo,
                   (int8_t)qhi, s->flags, &s->op);
    if (s->dt == XD_QU8 && qu8)
        return qu8((uint8_t)za, a->scale, (uint8_t)zb, b->scale, (uint8_t)zy, y->scale,
                   (uint8_t)qlo, (uint8_t)qhi, s->flags, &s->op);
    return f32(lo, hi, s->flags, &s->op);
}

enum xnn_status xnnb_claim_unary(eng_op_ctx *c, xnnb_step *s) {
    const eng_tensor *x = c->in[0], *y = c->out[0];
    size_t n = eng_elems(x);
    s->batch = n;
    int32_t zx = x->zero_point, zy = y->zero_point, act;
    bool qs8 = s->dt == XD_QS8, qu8 = s->dt == XD_QU8;
    switch (c->def->code) {
    case SCHEMA_OP_LOGISTIC:
        s->kind = &sigmoid_kind;
        if (qs8)
            return xnn_create_sigmoid_nc_qs8(n, n, n, (int8_t)zx, x->scale, (int8_t)zy, y->scale,
                                             -128, 127, s->flags, &s->op);
        if (qu8)
            return xnn_create_sigmoid_nc_qu8(n, n, n, (uint8_t)zx, x->scale, (uint8_t)zy, y->scale,
                                             0, 255, s->flags, &s->op);
        return xnn_create_sigmoid_nc_f32(n, n, n, s->flags, &s->op);
    case SCHEMA_OP_TANH:
        s->kind = &tanh_kind;
        if (qs8)
            return xnn_create_tanh_nc_qs8(n, n, n, (int8_t)zx, x->scale, (int8_t)zy, y->scale, -128,
                                          127, s->flags, &s->op);
        if (qu8)
            return xnn_create_tanh_nc_qu8(n, n, n, (uint8_t)zx, x->scale, (uint8_t)zy, y->scale, 0,
                                          255, s->flags, &s->op);
        return xnnb_claim_transformer(c, s); /* FLOAT32: a composite */
    case SCHEMA_OP_HARD_SWISH:
        s->kind = &hard_swish_kind;
        if (s->dt != XD_F32) return xnn_status_unsupported_parameter;
        return xnn_create_hardswish_nc_f32(n, n, n, s->flags, &s->op);
    case SCHEMA_OP_ELU:
        s->kind = &elu_kind;
        if (s->dt != XD_F32 || !c->in[1]->data) return xnn_status_unsupported_parameter;
        return xnn_create_elu_nc_f32(n, n, n, eng_f32(c->in[1]), s->flags, &s->op);
    case SCHEMA_OP_RELU1: act = SCHEMA_FUSED_RELU1; break;
    case SCHEMA_OP_RELU6: act = SCHEMA_FUSED_RELU6; break;
    default: act = SCHEMA_FUSED_RELU; break;
    }
    float lo, hi;
    int32_t qlo, qhi;
    if (!xnnb_act_bounds(y, act, &lo, &hi, &qlo, &qhi)) return xnn_status_unsupported_parameter;
    s->kind = &clamp_kind;
    if (qs8) return xnn_create_clamp_nc_s8(n, n, n, (int8_t)qlo, (int8_t)qhi, s->flags, &s->op);
    if (qu8) return xnn_create_clamp_nc_u8(n, n, n, (uint8_t)qlo, (uint8_t)qhi, s->flags, &s->op);
    return xnn_create_clamp_nc_f32(n, n, n, lo, hi, s->flags, &s->op);
}

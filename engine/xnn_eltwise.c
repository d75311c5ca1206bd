/* xnn_eltwise.c: the XNNPACK backend's claims of the element-wise operations
 * (xnn_step.h): ADD and MUL with broadcasting, RELU, RELU1, RELU6 (clamps), LOGISTIC, TANH
 * (QUANT8 only: no FLOAT32 operator in this version), HARD_SWISH and ELU (a constant
 * alpha; FLOAT32 only). */
#include "ops/fused_activation.h"
#include "ops/operand.h"
#include "xnn_step.h"

static void shape_of(const nnd_tensor *t, size_t *rank, size_t *shape) {
    /* A rank-0 tensor broadcasts like one element. */
    *rank = t->rank ? t->rank : 1;
    shape[0] = 1;
    for (uint32_t i = 0; i < t->rank; i++)
        shape[i] = t->dims[i];
}

enum xnn_status xnn_claim_binary(nnd_op_ctx *c, xnn_step *s) {
    const nnd_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    if (a->type != b->type || a->rank > XNN_MAX_TENSOR_DIMS || b->rank > XNN_MAX_TENSOR_DIMS ||
        !c->in[2]->data || (s->q8 && (!xnn_qu8_zero_point(b) || !xnn_qu8_zero_point(y))))
        return xnn_status_unsupported_parameter;
    float lo, hi;
    uint8_t qlo, qhi;
    if (!xnn_act_bounds(y, nnd_i32(c->in[2]), &lo, &hi, &qlo, &qhi))
        return xnn_status_unsupported_parameter;
    shape_of(a, &s->a_rank, s->a_shape);
    shape_of(b, &s->b_rank, s->b_shape);
    s->in_elems[1] = nnd_elems(b);
    bool add = c->def->code == NND_OP_ADD;
    s->kind = add ? XK_ADD : XK_MUL;
    uint8_t za = (uint8_t)a->zero_point, zb = (uint8_t)b->zero_point, zy = (uint8_t)y->zero_point;
    if (s->q8 && add)
        return xnn_create_add_nd_qu8(za, a->scale, zb, b->scale, zy, y->scale, qlo, qhi, s->flags,
                                     &s->op);
    if (s->q8)
        return xnn_create_multiply_nd_qu8(za, a->scale, zb, b->scale, zy, y->scale, qlo, qhi,
                                          s->flags, &s->op);
    return add ? xnn_create_add_nd_f32(lo, hi, s->flags, &s->op)
               : xnn_create_multiply_nd_f32(lo, hi, s->flags, &s->op);
}

enum xnn_status xnn_claim_unary(nnd_op_ctx *c, xnn_step *s) {
    const nnd_tensor *x = c->in[0], *y = c->out[0];
    size_t n = nnd_elems(x);
    s->batch = n;
    uint8_t zx = (uint8_t)x->zero_point, zy = (uint8_t)y->zero_point;
    int32_t act;
    switch (c->def->code) {
    case NND_OP_LOGISTIC:
        s->kind = XK_SIGMOID;
        if (s->q8)
            return xnn_create_sigmoid_nc_qu8(n, n, n, zx, x->scale, zy, y->scale, 0, 255, s->flags,
                                             &s->op);
        return xnn_create_sigmoid_nc_f32(n, n, n, s->flags, &s->op);
    case NND_OP_TANH:
        s->kind = XK_TANH;
        if (!s->q8) return xnn_status_unsupported_parameter;
        return xnn_create_tanh_nc_qu8(n, n, n, zx, x->scale, zy, y->scale, 0, 255, s->flags,
                                      &s->op);
    case NND_OP_HARD_SWISH:
        s->kind = XK_HARD_SWISH;
        if (s->q8) return xnn_status_unsupported_parameter;
        return xnn_create_hardswish_nc_f32(n, n, n, s->flags, &s->op);
    case NND_OP_ELU:
        s->kind = XK_ELU;
        if (s->q8 || !c->in[1]->data) return xnn_status_unsupported_parameter;
        return xnn_create_elu_nc_f32(n, n, n, nnd_f32(c->in[1]), s->flags, &s->op);
    case NND_OP_RELU1: act = NND_FUSED_RELU1; break;
    case NND_OP_RELU6: act = NND_FUSED_RELU6; break;
    default: act = NND_FUSED_RELU; break;
    }
    float lo, hi;
    uint8_t qlo, qhi;
    if (!xnn_act_bounds(y, act, &lo, &hi, &qlo, &qhi)) return xnn_status_unsupported_parameter;
    s->kind = XK_CLAMP;
    if (s->q8) return xnn_create_clamp_nc_u8(n, n, n, qlo, qhi, s->flags, &s->op);
    return xnn_create_clamp_nc_f32(n, n, n, lo, hi, s->flags, &s->op);
}

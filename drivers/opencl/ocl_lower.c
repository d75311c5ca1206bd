/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_lower.c: one operation into launches (ocl_plan.h): the dispatch by operation code,
 * and the element-wise families (ADD, SUB, MUL, DIV with broadcasting; the activations;
 * SOFTMAX). */
#include <math.h>
#include <string.h>

#include "ocl_plan.h"

/* NNAPI OperationCode values. */
enum {
    OP_ADD = 0,
    OP_AVERAGE_POOL_2D = 1,
    OP_CONCATENATION = 2,
    OP_CONV_2D = 3,
    OP_DEPTHWISE_CONV_2D = 4,
    OP_FULLY_CONNECTED = 9,
    OP_LOGISTIC = 14,
    OP_MAX_POOL_2D = 17,
    OP_MUL = 18,
    OP_RELU = 19,
    OP_RELU1 = 20,
    OP_RELU6 = 21,
    OP_RESHAPE = 22,
    OP_RESIZE_BILINEAR = 23,
    OP_SOFTMAX = 25,
    OP_TANH = 28,
    OP_DIV = 30,
    OP_MEAN = 31,
    OP_PAD = 32,
    OP_SQUEEZE = 34,
    OP_SUB = 36,
    OP_TRANSPOSE = 37,
    OP_HARD_SWISH = 99,
    OP_BATCH_MATMUL = 102,
};

/* Strides of a (rank <= 4) input broadcast against an output of rank r, as rank 4 with
 * leading 1s: 0 along every dimension the input repeats. */
static bool broadcast_strides(const nnd_driver_operand *in, const nnd_driver_operand *out,
                              int32_t s[4]) {
    uint32_t r = out->rank;
    if (in->rank > r) return false;
    int32_t stride = 1;
    for (int k = 3; k >= 0; k--) {
        int od = k - (4 - (int)r); /* out dimension, or < 0 */
        int id = od - (int)(r - in->rank);
        uint32_t odim = od >= 0 ? out->dims[od] : 1, idim = id >= 0 ? in->dims[id] : 1;
        if (idim != odim && idim != 1) return false;
        s[k] = idim == 1 && odim != 1 ? 0 : stride;
        stride *= (int32_t)idim;
    }
    return true;
}

static void dims4(const nnd_driver_operand *o, int32_t d[4]) {
    for (int k = 0; k < 4; k++) {
        int od = k - (4 - (int)o->rank);
        d[k] = od >= 0 ? (int32_t)o->dims[od] : 1;
    }
}

static bool lower_binary(ocl_plan *p, const nnd_driver_operation *op, int kind) {
    const nnd_driver_operand *a = ocl_in(p, op, 0), *b = ocl_in(p, op, 1), *y = ocl_out(p, op);
    float lo, hi;
    int32_t sa[4], sb[4], d[4];
    if (op->n_inputs != 3 || !ocl_f32_tensor(a, 1, 4) || !ocl_f32_tensor(b, 1, 4) ||
        !ocl_f32_tensor(y, 1, 4))
        return ocl_fail(p, "needs TENSOR_FLOAT32 operands of rank 1 to 4, shapes known");
    if (!ocl_act(ocl_in(p, op, 2), &lo, &hi))
        return ocl_fail(p, "the fused activation must be a constant code 0 to 3");
    if (!broadcast_strides(a, y, sa) || !broadcast_strides(b, y, sb))
        return ocl_fail(p, "the inputs do not broadcast to the output's shape");
    dims4(y, d);
    ocl_launch *l = ocl_plan_launch(p, OCL_K_BINARY, 1, ocl_elems(y), 1, 1);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[0]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[1]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->outputs[0]));
    ocl_arg_int(l, kind);
    ocl_arg_int4(l, d[0], d[1], d[2], d[3]);
    ocl_arg_int4(l, sa[0], sa[1], sa[2], sa[3]);
    ocl_arg_int4(l, sb[0], sb[1], sb[2], sb[3]);
    ocl_arg_float(l, lo);
    ocl_arg_float(l, hi);
    return true;
}

static bool same_shape(const nnd_driver_operand *a, const nnd_driver_operand *b) {
    return a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(uint32_t) * a->rank);
}

static bool lower_unary(ocl_plan *p, const nnd_driver_operation *op, int kind) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *y = ocl_out(p, op);
    if (op->n_inputs != 1 || !ocl_f32_tensor(x, 1, 4) || !ocl_f32_tensor(y, 1, 4) ||
        !same_shape(x, y))
        return ocl_fail(p, "needs a TENSOR_FLOAT32 of rank 1 to 4, shape known");
    ocl_launch *l = ocl_plan_launch(p, OCL_K_UNARY, 1, ocl_elems(y), 1, 1);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[0]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->outputs[0]));
    ocl_arg_int(l, kind);
    ocl_arg_int(l, (int32_t)ocl_elems(y));
    return true;
}

static bool lower_softmax(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *y = ocl_out(p, op);
    float beta;
    int32_t axis = -1;
    if (op->n_inputs < 2 || op->n_inputs > 3 || !ocl_f32_tensor(x, 1, 4) ||
        !ocl_f32_tensor(y, 1, 4) || !same_shape(x, y))
        return ocl_fail(p, "needs a TENSOR_FLOAT32 of rank 1 to 4, shape known");
    if (!ocl_const_f32(ocl_in(p, op, 1), &beta) || !(beta > 0.f))
        return ocl_fail(p, "beta must be a positive constant FLOAT32");
    if (op->n_inputs == 3 && !ocl_const_i32(ocl_in(p, op, 2), &axis))
        return ocl_fail(p, "the axis must be a constant INT32");
    int32_t r = (int32_t)x->rank;
    if (axis < -r || axis >= r) return ocl_fail(p, "axis %d is out of range", axis);
    if (axis < 0) axis += r;
    size_t outer = 1, inner = 1;
    for (int32_t k = 0; k < axis; k++)
        outer *= x->dims[k];
    for (int32_t k = axis + 1; k < r; k++)
        inner *= x->dims[k];
    ocl_launch *l = ocl_plan_launch(p, OCL_K_SOFTMAX, 2, inner, outer, 1);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[0]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->outputs[0]));
    ocl_arg_int(l, (int32_t)x->dims[axis]);
    ocl_arg_int(l, (int32_t)inner);
    ocl_arg_float(l, beta);
    return true;
}

static bool lower_any(ocl_plan *p, const nnd_driver_operation *op) {
    if (op->n_outputs != 1) return ocl_fail(p, "needs one output");
    switch (op->type) {
    case OP_ADD: return lower_binary(p, op, 0);
    case OP_SUB: return lower_binary(p, op, 1);
    case OP_MUL: return lower_binary(p, op, 2);
    case OP_DIV: return lower_binary(p, op, 3);
    case OP_RELU: return lower_unary(p, op, 0);
    case OP_RELU1: return lower_unary(p, op, 1);
    case OP_RELU6: return lower_unary(p, op, 2);
    case OP_LOGISTIC: return lower_unary(p, op, 3);
    case OP_TANH: return lower_unary(p, op, 4);
    case OP_HARD_SWISH: return lower_unary(p, op, 5);
    case OP_SOFTMAX: return lower_softmax(p, op);
    case OP_CONV_2D: return ocl_lower_conv(p, op, false);
    case OP_DEPTHWISE_CONV_2D: return ocl_lower_conv(p, op, true);
    case OP_AVERAGE_POOL_2D: return ocl_lower_pool(p, op, false);
    case OP_MAX_POOL_2D: return ocl_lower_pool(p, op, true);
    case OP_RESIZE_BILINEAR: return ocl_lower_resize(p, op);
    case OP_FULLY_CONNECTED: return ocl_lower_fully_connected(p, op);
    case OP_BATCH_MATMUL: return ocl_lower_matmul(p, op);
    case OP_CONCATENATION:
    case OP_RESHAPE:
    case OP_SQUEEZE:
    case OP_TRANSPOSE:
    case OP_PAD:
    case OP_MEAN: return ocl_lower_shape(p, op);
    default: return ocl_fail(p, "operation %d has no OpenCL kernel", op->type);
    }
}

bool ocl_lower(ocl_plan *p, const nnd_driver_operation *op) {
    uint32_t n = p->n_launches;
    p->err[0] = 0;
    bool ok = lower_any(p, op);
    for (uint32_t i = n; ok && i < p->n_launches; i++)
        for (uint32_t a = 0; a < p->launches[i].n_args; a++)
            if (p->launches[i].args[a].kind == OCL_ARG_BUF &&
                p->launches[i].args[a].buf == UINT32_MAX)
                ok = ocl_fail(p, "out of memory");
    if (!ok) p->n_launches = n;
    return ok;
}

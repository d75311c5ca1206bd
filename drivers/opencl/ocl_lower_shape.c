/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_lower_shape.c: the movement and reduction operations into launches (ocl_plan.h):
 * CONCATENATION (one row copy per input), RESHAPE and SQUEEZE (a copy: the bytes do not
 * change), TRANSPOSE and PAD (the gather4 kernel), MEAN. Ranks 1 to 4. */
#include <string.h>

#include "ocl_plan.h"

enum {
    OP_CONCATENATION = 2,
    OP_RESHAPE = 22,
    OP_MEAN = 31,
    OP_PAD = 32,
    OP_SQUEEZE = 34,
    OP_TRANSPOSE = 37
};

/* A constant TENSOR_INT32's values and count, or NULL. */
static const int32_t *const_ints(const nnd_driver_operand *o, size_t *n) {
    if (!o || o->type != NND_DRIVER_TENSOR_INT32 || o->lifetime != NND_DRIVER_CONSTANT ||
        o->rank != 1 || !o->data)
        return NULL;
    *n = o->dims[0];
    return o->length >= *n * sizeof(int32_t) ? o->data : NULL;
}

/* Row-major element strides of o, as rank 4 with leading 1s (d, s indexed 0..3). */
static void shape4(const nnd_driver_operand *o, int32_t d[4], int32_t s[4]) {
    int32_t stride = 1;
    for (int k = 3; k >= 0; k--) {
        int od = k - (4 - (int)o->rank);
        d[k] = od >= 0 ? (int32_t)o->dims[od] : 1;
        s[k] = stride;
        stride *= d[k];
    }
}

static bool copy_launch(ocl_plan *p, uint32_t src, uint32_t dst, size_t len, size_t outer,
                        size_t dst_len, size_t dst_off) {
    ocl_launch *l = ocl_plan_launch(p, OCL_K_COPY_ROWS, 2, len, outer, 1);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, src);
    ocl_arg_buf(l, dst);
    ocl_arg_int(l, (int32_t)len);
    ocl_arg_int(l, (int32_t)dst_len);
    ocl_arg_int(l, (int32_t)dst_off);
    return true;
}

static bool lower_concat(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *y = ocl_out(p, op);
    int32_t axis;
    uint32_t n = op->n_inputs - 1;
    if (op->n_inputs < 2 || !ocl_f32_tensor(y, 1, 4))
        return ocl_fail(p, "needs a TENSOR_FLOAT32 output of rank 1 to 4, shape known");
    if (!ocl_const_i32(ocl_in(p, op, n), &axis) || axis < 0 || axis >= (int32_t)y->rank)
        return ocl_fail(p, "the axis must be a constant INT32 from 0 to the rank - 1");
    size_t outer = 1, inner = 1, sum = 0;
    for (int32_t k = 0; k < axis; k++)
        outer *= y->dims[k];
    for (uint32_t k = (uint32_t)axis + 1; k < y->rank; k++)
        inner *= y->dims[k];
    for (uint32_t i = 0; i < n; i++) {
        const nnd_driver_operand *x = ocl_in(p, op, i);
        if (!ocl_f32_tensor(x, y->rank, y->rank))
            return ocl_fail(p, "input %u must be a TENSOR_FLOAT32 of the output's rank", i);
        for (uint32_t k = 0; k < y->rank; k++)
            if (k != (uint32_t)axis && x->dims[k] != y->dims[k])
                return ocl_fail(p, "input %u differs from the output off the axis", i);
        sum += x->dims[axis];
    }
    if (sum != y->dims[axis]) return ocl_fail(p, "the inputs do not fill the output's axis");
    size_t off = 0, row = y->dims[axis] * inner;
    for (uint32_t i = 0; i < n; i++) {
        size_t len = ocl_in(p, op, i)->dims[axis] * inner;
        if (!copy_launch(p, ocl_plan_operand(p, op->inputs[i]), ocl_plan_operand(p, op->outputs[0]),
                         len, outer, row, off))
            return false;
        off += len;
    }
    return true;
}

static bool lower_copy(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *y = ocl_out(p, op);
    if (!ocl_f32_tensor(x, 1, NND_DRIVER_MAX_RANK) || !ocl_f32_tensor(y, 1, NND_DRIVER_MAX_RANK) ||
        ocl_elems(x) != ocl_elems(y))
        return ocl_fail(p, "needs TENSOR_FLOAT32 input and output of one size, shapes known");
    if (op->type == OP_RESHAPE ? op->n_inputs != 2 : op->n_inputs < 1 || op->n_inputs > 2)
        return ocl_fail(p, "%u inputs is not a form this operation takes", op->n_inputs);
    return copy_launch(p, ocl_plan_operand(p, op->inputs[0]), ocl_plan_operand(p, op->outputs[0]),
                       ocl_elems(y), 1, ocl_elems(y), 0);
}

static bool gather_launch(ocl_plan *p, const nnd_driver_operation *op, const nnd_driver_operand *y,
                          const int32_t s[4], const int32_t off[4], const int32_t lim[4]) {
    int32_t d[4], ys[4];
    shape4(y, d, ys);
    ocl_launch *l = ocl_plan_launch(p, OCL_K_GATHER4, 1, ocl_elems(y), 1, 1);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[0]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->outputs[0]));
    ocl_arg_int4(l, d[0], d[1], d[2], d[3]);
    ocl_arg_int4(l, s[0], s[1], s[2], s[3]);
    ocl_arg_int4(l, off[0], off[1], off[2], off[3]);
    ocl_arg_int4(l, lim[0], lim[1], lim[2], lim[3]);
    ocl_arg_float(l, 0.f);
    return true;
}

static bool lower_transpose(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *y = ocl_out(p, op);
    if (op->n_inputs < 1 || op->n_inputs > 2 || !ocl_f32_tensor(x, 1, 4) ||
        !ocl_f32_tensor(y, 1, 4) || y->rank != x->rank)
        return ocl_fail(p, "needs TENSOR_FLOAT32 input and output of rank 1 to 4, shapes known");
    uint32_t r = x->rank;
    int32_t perm[4];
    const nnd_driver_operand *po = ocl_in(p, op, 1);
    if (po && po->lifetime != NND_DRIVER_OMITTED) {
        size_t n;
        const int32_t *v = const_ints(po, &n);
        if (!v || n != r) return ocl_fail(p, "the permutation must be a constant [rank] INT32");
        memcpy(perm, v, sizeof(int32_t) * r);
    } else {
        for (uint32_t k = 0; k < r; k++)
            perm[k] = (int32_t)(r - 1 - k);
    }
    int32_t xd[4], xs[4], s[4] = {0}, off[4] = {0}, lim[4] = {1, 1, 1, 1};
    shape4(x, xd, xs);
    uint32_t seen = 0;
    for (uint32_t k = 0; k < r; k++) {
        if (perm[k] < 0 || perm[k] >= (int32_t)r || (seen & (1u << perm[k])))
            return ocl_fail(p, "the permutation is not one of 0 to %u", r - 1);
        seen |= 1u << perm[k];
        uint32_t src = 4 - r + (uint32_t)perm[k], dst = 4 - r + k;
        if (y->dims[k] != x->dims[perm[k]]) return ocl_fail(p, "the output shape disagrees");
        s[dst] = xs[src], lim[dst] = xd[src];
    }
    return gather_launch(p, op, y, s, off, lim);
}

static bool lower_pad(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *y = ocl_out(p, op), *po = ocl_in(p, op, 1);
    if (op->n_inputs != 2 || !ocl_f32_tensor(x, 1, 4) || !ocl_f32_tensor(y, 1, 4) ||
        y->rank != x->rank)
        return ocl_fail(p, "needs TENSOR_FLOAT32 input and output of rank 1 to 4, shapes known");
    if (!po || po->type != NND_DRIVER_TENSOR_INT32 || po->lifetime != NND_DRIVER_CONSTANT ||
        po->rank != 2 || po->dims[0] != x->rank || po->dims[1] != 2 || !po->data ||
        po->length < 2 * x->rank * sizeof(int32_t))
        return ocl_fail(p, "the paddings must be a constant [rank, 2] INT32");
    const int32_t *pads = po->data;
    int32_t xd[4], xs[4], off[4] = {0};
    shape4(x, xd, xs);
    for (uint32_t k = 0; k < x->rank; k++) {
        int32_t before = pads[2 * k], after = pads[2 * k + 1];
        if (before < 0 || after < 0 || y->dims[k] != x->dims[k] + (uint32_t)(before + after))
            return ocl_fail(p, "the paddings and the output shape disagree");
        off[4 - x->rank + k] = before;
    }
    return gather_launch(p, op, y, xs, off, xd);
}

static bool lower_mean(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *y = ocl_out(p, op);
    size_t n = 0;
    const int32_t *axes = op->n_inputs == 3 ? const_ints(ocl_in(p, op, 1), &n) : NULL;
    int32_t keep;
    if (!ocl_f32_tensor(x, 1, 4) || !ocl_f32_tensor(y, 1, 4) || !axes ||
        !ocl_const_i32(ocl_in(p, op, 2), &keep))
        return ocl_fail(p, "needs TENSOR_FLOAT32 of rank 1 to 4, constant axes and keep_dims");
    int32_t r = (int32_t)x->rank, xd[4], xs[4], d[4], rd[4] = {1, 1, 1, 1};
    shape4(x, xd, xs);
    memcpy(d, xd, sizeof d);
    size_t count = 1;
    for (size_t i = 0; i < n; i++) {
        int32_t a = axes[i];
        if (a < -r || a >= r) return ocl_fail(p, "axis %d is out of range", a);
        if (a < 0) a += r;
        int32_t k = 4 - r + a;
        if (rd[k] == 1 && d[k] != 1) count *= (size_t)d[k];
        if (d[k] != 1) rd[k] = d[k], d[k] = 1;
    }
    size_t kept = 1;
    for (int k = 0; k < 4; k++)
        kept *= (size_t)d[k];
    if (kept != ocl_elems(y)) return ocl_fail(p, "the output shape disagrees");
    ocl_launch *l = ocl_plan_launch(p, OCL_K_MEAN, 1, kept, 1, 1);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, ocl_plan_operand(p, op->inputs[0]));
    ocl_arg_buf(l, ocl_plan_operand(p, op->outputs[0]));
    ocl_arg_int4(l, d[0], d[1], d[2], d[3]);
    ocl_arg_int4(l, rd[0], rd[1], rd[2], rd[3]);
    ocl_arg_int4(l, xs[0], xs[1], xs[2], xs[3]);
    ocl_arg_float(l, 1.f / (float)count);
    return true;
}

bool ocl_lower_shape(ocl_plan *p, const nnd_driver_operation *op) {
    switch (op->type) {
    case OP_CONCATENATION: return lower_concat(p, op);
    case OP_RESHAPE:
    case OP_SQUEEZE: return lower_copy(p, op);
    case OP_TRANSPOSE: return lower_transpose(p, op);
    case OP_PAD: return lower_pad(p, op);
    case OP_MEAN: return lower_mean(p, op);
    default: return ocl_fail(p, "operation %d has no OpenCL kernel", op->type);
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_lower_matmul.c: FULLY_CONNECTED and BATCH_MATMUL into the gemm kernel (ocl_plan.h).
 * FULLY_CONNECTED's constant weights [units, k] are re-laid [k, units] at prepare, so the
 * work-items along the units read them in a row. */
#include <math.h>
#include <stdlib.h>

#include "ocl_plan.h"

static bool gemm_launch(ocl_plan *p, uint32_t a, uint32_t b, uint32_t bias, uint32_t c,
                        const int32_t mnkb[4], const int32_t sa[3], const int32_t sb[3],
                        int32_t batch, float lo, float hi) {
    bool bn1 = sb[1] == 1; /* 8 columns a work-item */
    size_t cols = bn1 ? ((size_t)mnkb[1] + 7) / 8 : (size_t)mnkb[1];
    ocl_launch *l = ocl_plan_launch(p, bn1 ? OCL_K_GEMM_BN1 : OCL_K_GEMM, 3, cols,
                                    ((size_t)mnkb[0] + 3) / 4, (size_t)batch);
    if (!l) return ocl_fail(p, "out of memory");
    ocl_arg_buf(l, a);
    ocl_arg_buf(l, b);
    ocl_arg_buf(l, bias);
    ocl_arg_buf(l, c);
    ocl_arg_int4(l, mnkb[0], mnkb[1], mnkb[2], mnkb[3]);
    ocl_arg_int4(l, sa[0], sa[1], sa[2], 0);
    ocl_arg_int4(l, sb[0], sb[1], sb[2], 0);
    ocl_arg_float(l, lo);
    ocl_arg_float(l, hi);
    return true;
}

bool ocl_lower_fully_connected(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *x = ocl_in(p, op, 0), *w = ocl_in(p, op, 1), *b = ocl_in(p, op, 2),
                             *y = ocl_out(p, op);
    float lo, hi;
    if (op->n_inputs != 4 || !ocl_f32_tensor(x, 2, 4) || !ocl_f32_tensor(w, 2, 2) ||
        !ocl_f32_tensor(y, 2, 2))
        return ocl_fail(p, "needs TENSOR_FLOAT32 input, weights and output, shapes known");
    bool has_bias = b && b->lifetime != NND_DRIVER_OMITTED;
    if (has_bias && (!ocl_f32_tensor(b, 1, 1) || b->dims[0] != w->dims[0]))
        return ocl_fail(p, "the bias must be a TENSOR_FLOAT32 [units]");
    if (!ocl_act(ocl_in(p, op, 3), &lo, &hi))
        return ocl_fail(p, "the fused activation must be a constant code 0 to 3");
    size_t k = w->dims[1], units = w->dims[0], total = ocl_elems(x);
    if (total % k || y->dims[0] != total / k || y->dims[1] != units)
        return ocl_fail(p, "the output shape is not [input size / %zu, %zu]", k, units);
    uint32_t wbuf;
    int32_t sb[3] = {1, (int32_t)k, 0}; /* weights as given: b(k, n) at n * K + k */
    if (w->lifetime == NND_DRIVER_CONSTANT && !p->check_only) {
        float *t = malloc(k * units * sizeof(float));
        if (!t) return ocl_fail(p, "out of memory");
        const float *src = w->data;
        for (size_t n = 0; n < units; n++)
            for (size_t j = 0; j < k; j++)
                t[j * units + n] = src[n * k + j];
        wbuf = ocl_plan_owned(p, t, k * units * sizeof(float));
        sb[0] = (int32_t)units, sb[1] = 1;
    } else {
        wbuf = ocl_plan_operand(p, op->inputs[1]);
    }
    int32_t mnkb[4] = {(int32_t)(total / k), (int32_t)units, (int32_t)k, has_bias};
    int32_t sa[3] = {(int32_t)k, 1, 0};
    uint32_t bbuf = has_bias ? ocl_plan_operand(p, op->inputs[2]) : wbuf;
    return gemm_launch(p, ocl_plan_operand(p, op->inputs[0]), wbuf, bbuf,
                       ocl_plan_operand(p, op->outputs[0]), mnkb, sa, sb, 1, lo, hi);
}

bool ocl_lower_matmul(ocl_plan *p, const nnd_driver_operation *op) {
    const nnd_driver_operand *a = ocl_in(p, op, 0), *b = ocl_in(p, op, 1), *y = ocl_out(p, op);
    bool adj_a, adj_b;
    if (op->n_inputs != 4 || !ocl_f32_tensor(a, 2, 4) || !ocl_f32_tensor(b, 2, 4) ||
        !ocl_f32_tensor(y, 2, 4) || a->rank != b->rank || y->rank != a->rank)
        return ocl_fail(p, "needs TENSOR_FLOAT32 operands of one rank 2 to 4, shapes known");
    if (!ocl_const_bool(ocl_in(p, op, 2), &adj_a) || !ocl_const_bool(ocl_in(p, op, 3), &adj_b))
        return ocl_fail(p, "the adjoint flags must be constant BOOL");
    uint32_t r = a->rank;
    int32_t batch = 1;
    for (uint32_t d = 0; d + 2 < r; d++) {
        if (a->dims[d] != b->dims[d] || y->dims[d] != a->dims[d])
            return ocl_fail(p, "batch dimension %u differs (no broadcasting here)", d);
        batch *= (int32_t)a->dims[d];
    }
    int32_t ar = (int32_t)a->dims[r - 2], ac = (int32_t)a->dims[r - 1];
    int32_t br = (int32_t)b->dims[r - 2], bc = (int32_t)b->dims[r - 1];
    int32_t m = adj_a ? ac : ar, k = adj_a ? ar : ac;
    int32_t kb = adj_b ? bc : br, n = adj_b ? br : bc;
    if (k != kb || (int32_t)y->dims[r - 2] != m || (int32_t)y->dims[r - 1] != n)
        return ocl_fail(p, "the operands' inner dimensions or the output shape disagree");
    int32_t mnkb[4] = {m, n, k, 0};
    int32_t sa[3] = {adj_a ? 1 : k, adj_a ? m : 1, m * k};
    int32_t sb[3] = {adj_b ? 1 : n, adj_b ? k : 1, k * n};
    uint32_t bbuf = ocl_plan_operand(p, op->inputs[1]);
    return gemm_launch(p, ocl_plan_operand(p, op->inputs[0]), bbuf, bbuf,
                       ocl_plan_operand(p, op->outputs[0]), mnkb, sa, sb, batch, -INFINITY,
                       INFINITY);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_norm.c: the XNNPACK backend's claims of the statistics of a layer normalization
 * (xnn_step.h), MEAN, RSQRT and SQRT on TENSOR_FLOAT32:
 * - MEAN over the trailing axes (after removing repeats and wrapping negative ones), the
 *   last axis of a layer norm: the input seen as [outer, reduced] is XNNPACK's global
 *   average pooling of width `reduced` over one channel, batch `outer`; keep_dims changes
 *   only the output's shape, which is the same bytes. XNNPACK sums in its own order and
 *   multiplies by 1 / width where the reference sums in order and divides: float
 *   rounding, not bit for bit. Other axis sets (an image's spatial axes among them, which
 *   keeps the CNNs' float results as they were) and 8-bit or FLOAT16 MEAN stay on the
 *   reference kernel.
 * - RSQRT: this XNNPACK has no reciprocal square root; its square root then its division
 *   of 1 by that, each correctly rounded as the reference's 1.f / sqrtf(x) is: bit-exact
 *   for positive normal numbers. XNNPACK's square root gives other results for negative
 *   numbers (-inf where sqrtf gives NaN), so elements outside [FLT_MIN, FLT_MAX] (zero,
 *   subnormal, negative, infinite, NaN) are computed as the reference does, in one pass
 *   after. The root goes where the result goes, and the division works in place.
 * - SQRT (a layer norm written with DIV): XNNPACK's square root, and the same pass for
 *   the elements outside the positive normal range, computed by sqrtf: bit-exact. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/backends/xnnpack/xnn_step.h"

/* FLOAT32 MEAN over the trailing axes: global average pooling. */
static enum xnn_status mean_setup(const xnnb_step *s, const void *a, const void *b, void *y,
                                  pthreadpool_t tp) {
    (void)b;
    return xnn_setup_global_average_pooling_nwc_f32(s->op, s->batch, s->w, a, y, tp);
}

static const xnnb_kind mean_kind = {.setup = mean_setup};

static enum xnn_status claim_mean(eng_op_ctx *c, xnnb_step *s) {
    const eng_tensor *x = c->in[0], *axes = c->in[1];
    if (s->dt != XD_F32 || s->f16 || !axes->data || axes->type != SCHEMA_TENSOR_INT32 ||
        x->rank < 1)
        return xnn_status_unsupported_parameter;
    bool reduced[ENG_MAX_RANK] = {false};
    size_t n_axes = eng_elems(axes);
    const int32_t *a = axes->data;
    for (size_t i = 0; i < n_axes; i++) {
        int32_t k = a[i] < 0 ? a[i] + (int32_t)x->rank : a[i];
        if (k < 0 || k >= (int32_t)x->rank) return xnn_status_unsupported_parameter;
        reduced[k] = true;
    }
    /* The reduced axes must be the trailing ones, [first, rank). */
    uint32_t first = 0, last = 0;
    while (first < x->rank && !reduced[first])
        first++;
    if (first == x->rank) return xnn_status_unsupported_parameter;
    for (last = first; last + 1 < x->rank && reduced[last + 1]; last++)
        ;
    if (last + 1 != x->rank) return xnn_status_unsupported_parameter;
    size_t outer = 1, width = 1;
    for (uint32_t k = 0; k < x->rank; k++)
        *(k < first ? &outer : &width) *= x->dims[k];
    if (outer != eng_elems(c->out[0])) return xnn_status_unsupported_parameter;
    s->kind = &mean_kind;
    s->batch = outer, s->w = width;
    return xnn_create_global_average_pooling_nwc_f32(1, 1, 1, -INFINITY, INFINITY, s->flags,
                                                     &s->op);
}

/* ---- RSQRT as square root, then 1 divided by it; SQRT as the root alone ------------- */

/* RSQRT's step keeps its divide operator in s->extra; SQRT's has none. */
static schema_status root_run(eng_op_ctx *c, xnnb_step *s, pthreadpool_t tp) {
    const eng_tensor *x = c->in[0];
    eng_tensor *y = c->out[0];
    size_t n = s->in_elems[0];
    if (eng_elems(x) != n || eng_elems(y) != n || !x->data || !y->data) return s->reference(c);
    const void *xd = xnnb_overread_safe(c, x, x->data, n * sizeof(float));
    /* The division reads the root back from the output: it may over-read there too. */
    float *yd = (float *)xnnb_overread_safe(c, y, y->data, n * sizeof(float));
    if (!xd || !yd) return s->reference(c);
    static const float one = 1.f;
    size_t ones[1] = {1}, shape[1] = {n};
    xnn_operator_t divide = s->extra;
    pthread_mutex_lock(&s->lock);
    enum xnn_status st = xnn_setup_square_root_nc_f32(s->op, n, xd, yd, tp);
    if (st == xnn_status_success) st = xnn_run_operator(s->op, tp);
    if (st == xnn_status_success && divide)
        st = xnn_setup_divide_nd_f32(divide, 1, ones, 1, shape, &one, yd, yd, tp);
    if (st == xnn_status_success && divide) st = xnn_run_operator(divide, tp);
    pthread_mutex_unlock(&s->lock);
    if (st != xnn_status_success)
        return (eng_fail(c, "XNNPACK operator failed (status %d)", (int)st),
                SCHEMA_GENERAL_FAILURE);
    const float *xs = xd;
    for (size_t i = 0; i < n; i++)
        if (!(xs[i] >= FLT_MIN && xs[i] <= FLT_MAX))
            yd[i] = divide ? 1.f / sqrtf(xs[i]) : sqrtf(xs[i]);
    if (yd != y->data) memcpy(y->data, yd, n * sizeof(float));
    return SCHEMA_OK;
}

static void root_release(void *extra) {
    if (extra) xnn_delete_operator(extra);
}

static const xnnb_composite root_composite = {.run = root_run, .release = root_release};

static enum xnn_status claim_root(xnnb_step *s, bool reciprocal) {
    if (s->dt != XD_F32 || s->f16) return xnn_status_unsupported_parameter;
    xnn_operator_t divide = NULL;
    enum xnn_status st = reciprocal
                             ? xnn_create_divide_nd_f32(-INFINITY, INFINITY, s->flags, &divide)
                             : xnn_status_success;
    if (st != xnn_status_success) return st;
    s->kind = NULL; /* the composite runs it */
    s->composite = &root_composite;
    s->extra = divide;
    /* One element per row: the setup at each run gives the count. */
    return xnn_create_square_root_nc_f32(1, 1, 1, s->flags, &s->op);
}

enum xnn_status xnnb_claim_norm(eng_op_ctx *c, xnnb_step *s) {
    switch (c->def->code) {
    case SCHEMA_OP_MEAN: return claim_mean(c, s);
    case SCHEMA_OP_RSQRT: return claim_root(s, true);
    case SCHEMA_OP_SQRT: return claim_root(s, false);
    default: return xnn_status_unsupported_parameter;
    }
}

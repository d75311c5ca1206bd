/* SPDX-License-Identifier: Apache-2.0 */
/* batch_matmul.c: BATCH_MATMUL (NNAPI feature level 6) — for each batch (the leading
 * dimensions, equal in both inputs), the product of a [r_x, c_x] slice of input 0 and a
 * [r_y, c_y] slice of input 1, each transposed first when its adj flag (inputs 2 and 3,
 * BOOL) is set. Ranks 2 to 4, both inputs of one rank.
 * - FLOAT32 accumulates in float32 in depth order; FLOAT16 runs that through the type
 *   bridge; TENSOR_INT32 accumulates wrapping around.
 * - 8-bit signed: int32 sums of (x - zero point) products, requantized by input 0 scale
 *   * input 1 scale / output scale (the product in float, as the reference computes it)
 *   and saturated to the storage range.
 * The adj flags change strides only: no slice is transposed in memory. */
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"

/* One matrix product per batch: out[b][i][j] = sum_k x(b, i, k) * y(b, k, j), where each
 * operand element sits at batch * batch_step + row * row_step + col * col_step. */
typedef struct mm_geom {
    size_t batches, rows, cols, depth;
    size_t x_batch, x_row, x_depth; /* input 0: row i, depth k */
    size_t y_batch, y_depth, y_col; /* input 1: depth k, column j */
} mm_geom;

static bool adj(const eng_op_ctx *c, uint32_t i) {
    return eng_bool(c->in[i]);
}

static schema_status mm_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 4, 4, 1, 1);
    if (s) return s;
    const eng_tensor *x = c->in[0], *y = c->in[1];
    if ((s = eng_check_type(c, x, "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                            SCHEMA_TENSOR_INT32, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED)) ||
        (s = eng_check_signature(c, "TTbb", "T")) || (s = eng_check_rank(c, x, "input 0", 2, 4)) ||
        (s = eng_check_rank(c, y, "input 1", 2, 4)))
        return s;
    if ((x->known || x->rank) && (y->known || y->rank) && x->rank != y->rank)
        return eng_fail(c, "inputs 0 and 1 have ranks %u and %u, must be equal", x->rank, y->rank);
    return SCHEMA_OK;
}

/* The geometry of the product; fails when the shapes do not multiply. */
static schema_status mm_geometry(eng_op_ctx *c, mm_geom *g) {
    const eng_tensor *x = c->in[0], *y = c->in[1];
    uint32_t r = x->rank;
    if (r < 2 || r > 4 || y->rank != r)
        return eng_fail(c, "inputs must have one rank from 2 to 4, have %u and %u", r, y->rank);
    g->batches = 1;
    for (uint32_t d = 0; d + 2 < r; d++) {
        if (x->dims[d] != y->dims[d])
            return eng_fail(c, "batch dimension %u differs: %u and %u", d, x->dims[d], y->dims[d]);
        g->batches *= x->dims[d];
    }
    bool ax = adj(c, 2), ay = adj(c, 3);
    size_t xr = x->dims[r - 2], xc = x->dims[r - 1], yr = y->dims[r - 2], yc = y->dims[r - 1];
    g->rows = ax ? xc : xr;
    g->depth = ax ? xr : xc;
    g->cols = ay ? yr : yc;
    size_t y_depth = ay ? yc : yr;
    if (!xr || !xc || !yr || !yc || g->depth != y_depth)
        return eng_fail(c,
                        "cannot multiply [%zu, %zu]%s by [%zu, %zu]%s: %zu columns against %zu "
                        "rows",
                        xr, xc, ax ? " (adjoint)" : "", yr, yc, ay ? " (adjoint)" : "", g->depth,
                        y_depth);
    g->x_batch = xr * xc, g->y_batch = yr * yc;
    g->x_row = ax ? 1 : xc, g->x_depth = ax ? xc : 1;
    g->y_depth = ay ? 1 : yc, g->y_col = ay ? yc : 1;
    return SCHEMA_OK;
}

static schema_status mm_shape(eng_op_ctx *c) {
    mm_geom g;
    schema_status s = mm_geometry(c, &g);
    if (s) return s;
    const eng_tensor *x = c->in[0];
    uint32_t dims[4], r = x->rank;
    for (uint32_t d = 0; d + 2 < r; d++)
        dims[d] = x->dims[d];
    dims[r - 2] = (uint32_t)g.rows, dims[r - 1] = (uint32_t)g.cols;
    eng_set_shape(c->out[0], r, dims);
    return SCHEMA_OK;
}

/* Visits every output element: `sum` names the accumulator, `x` and `y` pointers at the
 * batch's slices, `o` the output element's index; body runs once per depth step k. */
#define MM_LOOP(g, init, body, store)                                                              \
    for (size_t b = 0; b < (g).batches; b++)                                                       \
        for (size_t i = 0; i < (g).rows; i++)                                                      \
            for (size_t j = 0; j < (g).cols; j++) {                                                \
                size_t xo = b * (g).x_batch + i * (g).x_row, yo = b * (g).y_batch + j * (g).y_col; \
                size_t o = (b * (g).rows + i) * (g).cols + j;                                      \
                init;                                                                              \
                for (size_t k = 0; k < (g).depth; k++) {                                           \
                    size_t xk = xo + k * (g).x_depth, yk = yo + k * (g).y_depth;                   \
                    body;                                                                          \
                }                                                                                  \
                store;                                                                             \
            }

static schema_status mm_f32(eng_op_ctx *c) {
    mm_geom g;
    mm_geometry(c, &g);
    const float *x = c->in[0]->data, *y = c->in[1]->data;
    float *out = c->out[0]->data;
    MM_LOOP(g, float sum = 0.f, sum += x[xk] * y[yk], out[o] = sum)
    return SCHEMA_OK;
}

static schema_status mm_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, mm_f32);
}

static schema_status mm_i32(eng_op_ctx *c) {
    mm_geom g;
    mm_geometry(c, &g);
    const int32_t *x = c->in[0]->data, *y = c->in[1]->data;
    int32_t *out = c->out[0]->data;
    /* unsigned: overflow wraps */
    MM_LOOP(g, uint32_t sum = 0, sum += (uint32_t)x[xk] * (uint32_t)y[yk], out[o] = (int32_t)sum)
    return SCHEMA_OK;
}

static schema_status mm_q8_signed(eng_op_ctx *c) {
    mm_geom g;
    mm_geometry(c, &g);
    const eng_tensor *xt = c->in[0], *yt = c->in[1], *ot = c->out[0];
    const int8_t *x = xt->data, *y = yt->data;
    int8_t *out = ot->data;
    int32_t zx = xt->zero_point, zy = yt->zero_point, zo = ot->zero_point, mult;
    int shift;
    eng_quantize_multiplier((double)(xt->scale * yt->scale) / ot->scale, &mult, &shift);
    MM_LOOP(g, uint32_t sum = 0, sum += (uint32_t)((x[xk] - zx) * (y[yk] - zy)),
            out[o] =
                (int8_t)eng_clampi(eng_mul_by_quantized((int32_t)sum, mult, shift) + zo, -128, 127))
    return SCHEMA_OK;
}

ENG_OP_DEF(BATCH_MATMUL, mm_check, mm_shape, 0, 0,
           {{SCHEMA_TENSOR_FLOAT32, mm_f32},
            {SCHEMA_TENSOR_FLOAT16, mm_f16},
            {SCHEMA_TENSOR_INT32, mm_i32},
            {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, mm_q8_signed}});

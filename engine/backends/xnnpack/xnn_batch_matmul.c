/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_batch_matmul.c: the XNNPACK backend's BATCH_MATMUL (xnn_step.h), on TENSOR_FLOAT32
 * and TENSOR_QUANT8_ASYMM_SIGNED, as one XNNPACK fully connected operator per batch: the
 * batch's slice of input 1 is the operator's weights, its slice of input 0 the operator's
 * rows.
 * - Input 1 constant: its slices are packed once, at claim. Otherwise each execution
 *   packs them (packing reads depth x columns, the product multiplies them by the rows).
 * - adj_y (input 1 transposed) is the weights layout XNNPACK takes as it is; without it
 *   the slice is [depth, columns], which XNNPACK packs with XNN_FLAG_TRANSPOSE_WEIGHTS.
 *   adj_x (input 0 transposed): each slice is transposed into scratch first, the rows
 *   XNNPACK reads being contiguous.
 * - Signed 8-bit only with input 1's zero point 0 (XNNPACK's qs8 weights are symmetric)
 *   and a requantization scale XNNPACK takes; it requantizes in float where the reference
 *   uses a fixed-point multiplier, so results agree within one step.
 * - The adj flags must be constants; FLOAT16 stays on the reference kernel.
 * Float sums are taken in XNNPACK's order (blocked, fused multiply-add where the CPU has
 * it), not the reference's depth order: they agree within float rounding, not bit for
 * bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/backends/xnnpack/xnn_step.h"

typedef struct bmm_state {
    uint32_t rank, x_dims[ENG_MAX_RANK], y_dims[ENG_MAX_RANK];
    size_t batches, rows, depth, cols, esize;
    bool adj_x, adj_y;
    /* Quantization of input 0, input 1 and the output (signed 8-bit). */
    int8_t zx, zo;
    float sx, sy, so;
    uint32_t flags;         /* for every operator created */
    xnn_operator_t *packed; /* one per batch when input 1 is constant, else NULL */
} bmm_state;

static void bmm_release(void *extra) {
    bmm_state *m = extra;
    if (!m) return;
    for (size_t b = 0; m->packed && b < m->batches; b++)
        if (m->packed[b]) xnn_delete_operator(m->packed[b]);
    free(m->packed);
    free(m);
}

/* A fully connected operator whose weights are one slice of input 1. */
static enum xnn_status create_fc(const bmm_state *m, const void *weights, xnn_operator_t *op) {
    uint32_t flags = m->flags | (m->adj_y ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS);
    if (m->esize == 1)
        return xnn_create_fully_connected_nc_qs8(m->depth, m->cols, m->depth, m->cols, m->zx, m->sx,
                                                 m->sy, weights, NULL, m->zo, m->so, -128, 127,
                                                 flags, op);
    return xnn_create_fully_connected_nc_f32(m->depth, m->cols, m->depth, m->cols, weights, NULL,
                                             -INFINITY, INFINITY, flags, op);
}

static enum xnn_status setup_fc(const bmm_state *m, xnn_operator_t op, const void *in, void *out,
                                pthreadpool_t tp) {
    return m->esize == 1 ? xnn_setup_fully_connected_nc_qs8(op, m->rows, in, out, tp)
                         : xnn_setup_fully_connected_nc_f32(op, m->rows, in, out, tp);
}

/* Transposes an [r, c] matrix of esize-byte elements into [c, r], in tiles that stay in
 * the cache. */
static void transpose(const uint8_t *in, uint8_t *out, size_t r, size_t c, size_t esize) {
    enum { TILE = 32 };
    for (size_t i0 = 0; i0 < r; i0 += TILE)
        for (size_t j0 = 0; j0 < c; j0 += TILE)
            for (size_t i = i0; i < r && i < i0 + TILE; i++)
                for (size_t j = j0; j < c && j < j0 + TILE; j++)
                    memcpy(out + (j * r + i) * esize, in + (i * c + j) * esize, esize);
}

static bool same_dims(const eng_tensor *t, uint32_t rank, const uint32_t *dims) {
    return t->rank == rank && !memcmp(t->dims, dims, rank * sizeof *dims);
}

/* One batch: its rows of input 0 (transposed into tx for adj_x) by its weights. */
static enum xnn_status one_batch(eng_op_ctx *c, const bmm_state *m, size_t b, uint8_t *tx,
                                 pthreadpool_t tp) {
    size_t es = m->esize, x_slice = m->rows * m->depth * es;
    const uint8_t *x = (const uint8_t *)c->in[0]->data + b * x_slice;
    const void *in = tx;
    if (m->adj_x)
        transpose(x, tx, m->depth, m->rows, es);
    else
        in = xnnb_overread_safe(c, c->in[0], x, x_slice);
    if (!in) return xnn_status_out_of_memory;
    uint8_t *out = (uint8_t *)c->out[0]->data + b * m->rows * m->cols * es;
    if (m->packed) {
        enum xnn_status st = setup_fc(m, m->packed[b], in, out, tp);
        return st == xnn_status_success ? xnn_run_operator(m->packed[b], tp) : st;
    }
    const uint8_t *w = (const uint8_t *)c->in[1]->data + b * m->depth * m->cols * es;
    xnn_operator_t op = NULL;
    enum xnn_status st = create_fc(m, w, &op);
    if (st == xnn_status_success) st = setup_fc(m, op, in, out, tp);
    if (st == xnn_status_success) st = xnn_run_operator(op, tp);
    if (op) xnn_delete_operator(op);
    return st;
}

static schema_status bmm_run(eng_op_ctx *c, xnnb_step *s, pthreadpool_t tp) {
    const bmm_state *m = s->extra;
    const eng_tensor *x = c->in[0], *y = c->in[1], *out = c->out[0];
    /* The shapes were fixed at prepare; anything else goes to the reference. */
    if (!same_dims(x, m->rank, m->x_dims) || !same_dims(y, m->rank, m->y_dims) ||
        eng_elems(out) != m->batches * m->rows * m->cols || !x->data || !y->data || !out->data)
        return s->reference(c);
    uint8_t *tx = NULL;
    if (m->adj_x && !(tx = eng_scratch(c, m->rows * m->depth * m->esize + XNN_EXTRA_BYTES)))
        return s->reference(c);
    enum xnn_status st = xnn_status_success;
    /* Packed operators hold their setup: one execution at a time uses them. */
    if (m->packed) pthread_mutex_lock(&s->lock);
    for (size_t b = 0; st == xnn_status_success && b < m->batches; b++)
        st = one_batch(c, m, b, tx, tp);
    if (m->packed) pthread_mutex_unlock(&s->lock);
    if (st == xnn_status_out_of_memory) return s->reference(c);
    if (st != xnn_status_success)
        return (eng_fail(c, "XNNPACK operator failed (status %d)", (int)st),
                SCHEMA_GENERAL_FAILURE);
    return SCHEMA_OK;
}

static const xnnb_composite bmm_composite = {.run = bmm_run, .release = bmm_release};

/* The product's geometry from the prepared shapes; false when XNNPACK cannot take it. */
static bool geometry(const eng_op_ctx *c, bmm_state *m) {
    const eng_tensor *x = c->in[0], *y = c->in[1];
    uint32_t r = x->rank;
    if (r < 2 || r > 4 || y->rank != r || !c->in[2]->data || !c->in[3]->data) return false;
    m->rank = r;
    memcpy(m->x_dims, x->dims, r * sizeof *x->dims);
    memcpy(m->y_dims, y->dims, r * sizeof *y->dims);
    m->batches = 1;
    for (uint32_t d = 0; d + 2 < r; d++) {
        if (x->dims[d] != y->dims[d]) return false;
        m->batches *= x->dims[d];
    }
    m->adj_x = eng_bool(c->in[2]), m->adj_y = eng_bool(c->in[3]);
    size_t xr = x->dims[r - 2], xc = x->dims[r - 1], yr = y->dims[r - 2], yc = y->dims[r - 1];
    m->rows = m->adj_x ? xc : xr;
    m->depth = m->adj_x ? xr : xc;
    m->cols = m->adj_y ? yr : yc;
    return m->batches && m->rows && m->cols && m->depth == (m->adj_y ? yc : yr);
}

/* Whether XNNPACK's qs8 operator takes the step's quantization. */
static bool qs8_ok(const eng_op_ctx *c, bmm_state *m) {
    const eng_tensor *x = c->in[0], *y = c->in[1], *out = c->out[0];
    if (y->type != SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED || y->zero_point != 0 ||
        !xnnb_zero_point_fits(out) || !xnnb_requant_ok(x, y, out))
        return false;
    m->zx = (int8_t)x->zero_point, m->zo = (int8_t)out->zero_point;
    m->sx = x->scale, m->sy = y->scale, m->so = out->scale;
    return true;
}

/* XNNPACK pads each packed slice to whole tiles of columns (up to 16) and depth (up to
 * 8), with a bias per column: narrow slices would grow many times over. Input 1 is
 * packed only while that stays within twice its size and a mebibyte. */
static bool packing_bounded(const bmm_state *m) {
    size_t cols = (m->cols + 15) / 16 * 16, depth = (m->depth + 7) / 8 * 8 + 4;
    size_t packed = m->batches * cols * depth * m->esize;
    return packed / 2 <= m->batches * m->cols * m->depth * m->esize + ((size_t)1 << 20) / 2;
}

enum xnn_status xnnb_claim_batch_matmul(eng_op_ctx *c, xnnb_step *s) {
    if (s->f16 || (s->dt != XD_F32 && s->dt != XD_QS8) || c->n_in != 4)
        return xnn_status_unsupported_parameter;
    bmm_state *m = calloc(1, sizeof *m);
    if (!m) return xnn_status_out_of_memory;
    s->kind = NULL; /* the composite runs it */
    s->composite = &bmm_composite;
    s->extra = m;
    m->esize = s->dt == XD_QS8 ? 1 : 4;
    m->flags = s->flags;
    if (!geometry(c, m) || (s->dt == XD_QS8 && !qs8_ok(c, m)) || !packing_bounded(m))
        return xnn_status_unsupported_parameter;
    const uint8_t *w = c->in[1]->data;
    if (!w) return xnn_status_success; /* packed by each execution */
    if (!(m->packed = calloc(m->batches, sizeof *m->packed))) return xnn_status_out_of_memory;
    for (size_t b = 0; b < m->batches; b++) {
        /* The workers may rest after the last batch of the plan's last step. */
        m->flags = b + 1 == m->batches ? s->flags : 0;
        enum xnn_status st = create_fc(m, w + b * m->depth * m->cols * m->esize, &m->packed[b]);
        if (st != xnn_status_success) return st;
    }
    return xnn_status_success;
}

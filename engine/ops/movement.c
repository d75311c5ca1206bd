/* SPDX-License-Identifier: Apache-2.0 */
/* movement.c: operations that only move elements — BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND,
 * PAD, PAD_V2, SQUEEZE, EXPAND_DIMS, STRIDED_SLICE, SLICE, TRANSPOSE, TILE, GATHER, SPLIT
 * and CHANNEL_SHUFFLE. Kernels treat elements as opaque bytes of the input's element size,
 * so one run function serves every tensor type; each operation is expressed as N-d strided
 * copies (eng_copy_nd) from the input into the output. */
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

#include <string.h>

/* ---- signature helpers -------------------------------------------------------------- */

/* Counts, input 0 of FLOAT32, FLOAT16, QUANT8_ASYMM, QUANT8_ASYMM_SIGNED (or also INT32
 * with ints) and rank in [min_rank, max_rank], and every output of the same type and, as
 * the HAL requires of these operations, the same scale and zero point. */
static schema_status check_data(eng_op_ctx *c, uint32_t min_in, uint32_t max_in, uint32_t n_out,
                                bool ints, uint32_t min_rank, uint32_t max_rank) {
    schema_status s = eng_check_count(c, min_in, max_in, n_out, n_out);
    if (s) return s;
    const eng_tensor *in = c->in[0];
    s = eng_check_type(c, in, "input 0", ints ? 5 : 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                       SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
                       SCHEMA_TENSOR_INT32);
    if (s) return s;
    for (uint32_t o = 0; o < c->n_out; o++)
        if ((s = eng_check_same_type(c, 0, o)) || (s = eng_check_same_quant(c, 0, o))) return s;
    return eng_check_rank(c, in, "input 0", min_rank, max_rank);
}

/* Input i is a TENSOR_INT32 of the given rank. The rank is a driver rule: the NNAPI
 * runtime does not look at it as the operation is added. */
static schema_status check_ints(eng_op_ctx *c, uint32_t i, uint32_t rank, const char *what) {
    const eng_tensor *t = c->in[i];
    if (t->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "%s (input %u) must be TENSOR_INT32, is %s", what, i,
                        schema_type_name(t->type));
    return eng_driver_rules(c) ? eng_check_rank(c, t, what, rank, rank) : SCHEMA_OK;
}

/* Optional trailing NCHW flag at input i. */
static schema_status check_layout(eng_op_ctx *c, uint32_t i) {
    return eng_has_input(c, i) ? eng_check_scalar(c, i, SCHEMA_BOOL) : SCHEMA_OK;
}

static bool layout_nchw(const eng_op_ctx *c, uint32_t i) {
    return eng_has_input(c, i) && eng_bool(c->in[i]);
}

/* Input i is a 1-D INT32 tensor of exactly n elements. */
static schema_status expect_len(eng_op_ctx *c, uint32_t i, uint32_t n, const char *what) {
    const eng_tensor *t = c->in[i];
    if (t->rank != 1 || t->dims[0] != n)
        return eng_fail(c, "%s (input %u) must have shape [%u]", what, i, n);
    return SCHEMA_OK;
}

static size_t esize_of(const eng_op_ctx *c) {
    return schema_type_size(c->in[0]->type);
}

static uint8_t *at(const eng_tensor *t, ptrdiff_t elem, size_t esize) {
    return (uint8_t *)t->data + elem * (ptrdiff_t)esize;
}

static schema_status set_dims(eng_op_ctx *c, uint32_t o, uint32_t rank, const uint64_t *dims) {
    uint32_t d32[ENG_MAX_RANK];
    if (rank > ENG_MAX_RANK) return eng_fail(c, "output %u would have rank %u", o, rank);
    for (uint32_t d = 0; d < rank; d++) {
        if (dims[d] > UINT32_MAX) return eng_fail(c, "output %u dimension %u is too large", o, d);
        d32[d] = (uint32_t)dims[d];
    }
    eng_set_shape(c->out[o], rank, d32);
    return SCHEMA_OK;
}

/* Copies all of input 0 into output 0 unchanged (the shape-only operations). */
static schema_status run_flat(eng_op_ctx *c) {
    ptrdiff_t one = 1;
    uint32_t n = (uint32_t)eng_elems(c->in[0]);
    eng_copy_nd(c->out[0]->data, &one, c->in[0]->data, &one, &n, 1, esize_of(c));
    return SCHEMA_OK;
}

/* ---- BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND ------------------------------------------ */
/* Inputs: 0 data (rank 4), 1 block sizes [2], then for SPACE_TO_BATCH_ND paddings [2, 2];
 * an optional NCHW flag last. */

static bool is_s2b(const eng_op_ctx *c) {
    return c->def->code == SCHEMA_OP_SPACE_TO_BATCH_ND;
}

static schema_status batch_space_check(eng_op_ctx *c) {
    uint32_t n_fixed = is_s2b(c) ? 3 : 2;
    schema_status s = check_data(c, n_fixed, n_fixed + 1, 1, false, 4, 4);
    if (s || (s = check_ints(c, 1, 1, "block sizes"))) return s;
    if (is_s2b(c) && (s = check_ints(c, 2, 2, "paddings"))) return s;
    return check_layout(c, n_fixed);
}

typedef struct batch_space {
    int32_t bh, bw, pad_top, pad_left;
    eng_image in; /* input 0 in its layout */
} batch_space;

/* Validates the block (and paddings) and derives the output image size. */
static schema_status batch_space_plan(eng_op_ctx *c, batch_space *p, uint32_t dims[4]) {
    const eng_tensor *in = c->in[0], *block = c->in[1];
    bool s2b = is_s2b(c), nchw = layout_nchw(c, s2b ? 3 : 2);
    if (!block->data || (s2b && !c->in[2]->data)) return ENG_DEFER;
    schema_status s = expect_len(c, 1, 2, "block sizes");
    if (s) return s;
    const int32_t *b = block->data;
    if (b[0] < 1 || b[1] < 1) return eng_fail(c, "block sizes %d, %d must be >= 1", b[0], b[1]);
    p->bh = b[0], p->bw = b[1];
    eng_image im;
    eng_image_of(in, nchw, &im);
    int64_t h = im.h, w = im.w, bb = (int64_t)p->bh * p->bw;
    p->pad_top = p->pad_left = 0;
    if (s2b) {
        const eng_tensor *pt = c->in[2];
        if (pt->rank != 2 || pt->dims[0] != 2 || pt->dims[1] != 2)
            return eng_fail(c, "paddings (input 2) must have shape [2, 2]");
        const int32_t *pad = pt->data;
        for (int i = 0; i < 4; i++)
            if (pad[i] < 0) return eng_fail(c, "padding %d is negative (%d)", i, pad[i]);
        h += (int64_t)pad[0] + pad[1];
        w += (int64_t)pad[2] + pad[3];
        p->pad_top = pad[0], p->pad_left = pad[2];
        if (h % p->bh || w % p->bw)
            return eng_fail(c, "padded size %lldx%lld is not a multiple of the block %dx%d",
                            (long long)h, (long long)w, p->bh, p->bw);
        dims[0] = (uint32_t)(im.n * bb), dims[1] = (uint32_t)(h / p->bh);
        dims[2] = (uint32_t)(w / p->bw);
    } else {
        if (im.n % bb)
            return eng_fail(c, "batch %u is not a multiple of the block %dx%d", im.n, p->bh, p->bw);
        dims[0] = (uint32_t)(im.n / bb), dims[1] = (uint32_t)(h * p->bh);
        dims[2] = (uint32_t)(w * p->bw);
    }
    if (h * p->bh > UINT32_MAX || w * p->bw > UINT32_MAX || im.n * bb > UINT32_MAX)
        return eng_fail(c, "output too large");
    dims[3] = im.c;
    p->in = im;
    return SCHEMA_OK;
}

static schema_status batch_space_shape(eng_op_ctx *c) {
    batch_space p;
    uint32_t d[4];
    schema_status s = batch_space_plan(c, &p, d);
    if (s) return s;
    eng_set_image_shape(c->out[0], layout_nchw(c, is_s2b(c) ? 3 : 2), d[0], d[1], d[2], d[3]);
    return SCHEMA_OK;
}

/* Output rows oh in [lo, hi) read input row oh * block + shift - pad, which must lie in
 * [0, size). */
static void s2b_range(uint32_t out_size, uint32_t size, int32_t block, int32_t shift, int32_t pad,
                      uint32_t *lo, uint32_t *count) {
    int64_t first = (int64_t)pad - shift, last = (int64_t)size + pad - shift; /* in units */
    int64_t l = first > 0 ? (first + block - 1) / block : 0;
    int64_t h = last > 0 ? (last + block - 1) / block : 0;
    if (h > out_size) h = out_size;
    *lo = (uint32_t)l;
    *count = h > l ? (uint32_t)(h - l) : 0;
}

static schema_status batch_space_run(eng_op_ctx *c) {
    batch_space p;
    uint32_t d[4];
    schema_status s = batch_space_plan(c, &p, d);
    if (s) return s == ENG_DEFER ? eng_fail(c, "block sizes unknown") : s;
    const eng_tensor *in = c->in[0], *out = c->out[0];
    size_t es = esize_of(c);
    if (eng_elems(out) == 0) return SCHEMA_OK;
    eng_image o;
    eng_image_of(out, layout_nchw(c, is_s2b(c) ? 3 : 2), &o);
    const eng_image *i = &p.in;
    if (!is_s2b(c)) {
        /* in[(by * bw + bx) * N + n, h, w, ch] -> out[n, h * bh + by, w * bw + bx, ch] */
        uint32_t cnt[6] = {(uint32_t)p.bh, (uint32_t)p.bw, o.n, i->h, i->w, i->c};
        ptrdiff_t ss[6] = {(ptrdiff_t)(p.bw * o.n * i->sn),
                           (ptrdiff_t)(o.n * i->sn),
                           (ptrdiff_t)i->sn,
                           (ptrdiff_t)i->sh,
                           (ptrdiff_t)i->sw,
                           (ptrdiff_t)i->sc};
        ptrdiff_t ds[6] = {(ptrdiff_t)o.sh,          (ptrdiff_t)o.sw,          (ptrdiff_t)o.sn,
                           (ptrdiff_t)(p.bh * o.sh), (ptrdiff_t)(p.bw * o.sw), (ptrdiff_t)o.sc};
        eng_copy_nd(out->data, ds, in->data, ss, cnt, 6, es);
        return SCHEMA_OK;
    }
    /* Padding is the logical zero: the zero point for QUANT8, all-zero bytes otherwise. */
    uint8_t zero[4] = {0};
    if (eng_is_quant8(out->type)) eng_q8_put(zero, 0, out->zero_point);
    eng_fill_elems(out->data, zero, eng_elems(out), es);
    if (eng_elems(in) == 0) return SCHEMA_OK;
    /* out[(by * bw + bx) * N + n, oh, ow, ch] = in[n, oh * bh + by - top, ow * bw + bx - left] */
    for (int32_t by = 0; by < p.bh; by++)
        for (int32_t bx = 0; bx < p.bw; bx++) {
            uint32_t h0, nh, w0, nw;
            s2b_range(o.h, i->h, p.bh, by, p.pad_top, &h0, &nh);
            s2b_range(o.w, i->w, p.bw, bx, p.pad_left, &w0, &nw);
            if (!nh || !nw) continue;
            uint32_t cnt[4] = {i->n, nh, nw, i->c};
            ptrdiff_t ss[4] = {(ptrdiff_t)i->sn, (ptrdiff_t)(p.bh * i->sh),
                               (ptrdiff_t)(p.bw * i->sw), (ptrdiff_t)i->sc};
            ptrdiff_t ds[4] = {(ptrdiff_t)o.sn, (ptrdiff_t)o.sh, (ptrdiff_t)o.sw, (ptrdiff_t)o.sc};
            size_t src = eng_image_at(i, 0, (uint32_t)((int64_t)h0 * p.bh + by - p.pad_top),
                                      (uint32_t)((int64_t)w0 * p.bw + bx - p.pad_left), 0);
            size_t dst = eng_image_at(&o, (uint32_t)(by * p.bw + bx) * i->n, h0, w0, 0);
            eng_copy_nd(at(out, (ptrdiff_t)dst, es), ds, at(in, (ptrdiff_t)src, es), ss, cnt, 4,
                        es);
        }
    return SCHEMA_OK;
}

/* ---- PAD / PAD_V2 ------------------------------------------------------------------- */
/* Inputs: 0 data, 1 paddings [rank, 2]; PAD_V2 adds 2 the pad value (FLOAT32, FLOAT16, or
 * for the 8-bit types an INT32 stored value, saturated to the type's range). */

static schema_status pad_check(eng_op_ctx *c) {
    bool v2 = c->def->code == SCHEMA_OP_PAD_V2;
    schema_status s = check_data(c, v2 ? 3 : 2, v2 ? 3 : 2, 1, false, 1, 4);
    if (s || (s = check_ints(c, 1, 2, "paddings"))) return s;
    if (!v2) return SCHEMA_OK;
    int32_t t = c->in[0]->type;
    return eng_check_scalar(c, 2,
                            t == SCHEMA_TENSOR_FLOAT32   ? SCHEMA_FLOAT32
                            : t == SCHEMA_TENSOR_FLOAT16 ? SCHEMA_FLOAT16
                                                         : SCHEMA_INT32);
}

static schema_status pad_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *pt = c->in[1];
    if (!pt->data) return ENG_DEFER;
    if (pt->rank != 2 || pt->dims[0] != in->rank || pt->dims[1] != 2)
        return eng_fail(c, "paddings (input 1) must have shape [%u, 2]", in->rank);
    const int32_t *pad = pt->data;
    uint64_t dims[ENG_MAX_RANK];
    for (uint32_t d = 0; d < in->rank; d++) {
        if (pad[2 * d] < 0 || pad[2 * d + 1] < 0)
            return eng_fail(c, "paddings of dimension %u are negative (%d, %d)", d, pad[2 * d],
                            pad[2 * d + 1]);
        dims[d] = (uint64_t)pad[2 * d] + in->dims[d] + (uint64_t)pad[2 * d + 1];
    }
    return set_dims(c, 0, in->rank, dims);
}

static schema_status pad_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    size_t es = esize_of(c);
    uint8_t value[4] = {0};
    if (c->def->code == SCHEMA_OP_PAD_V2) {
        const eng_tensor *v = c->in[2];
        if (eng_is_quant8(in->type))
            eng_q8_put(value, 0,
                       eng_clampi(eng_i32(v), eng_q8_min(in->type), eng_q8_max(in->type)));
        else
            memcpy(value, v->data, es);
    } else if (eng_is_quant8(in->type)) {
        eng_q8_put(value, 0, out->zero_point); /* the logical zero */
    }
    eng_fill_elems(out->data, value, eng_elems(out), es);
    if (eng_elems(in) == 0) return SCHEMA_OK;
    const int32_t *pad = c->in[1]->data;
    ptrdiff_t ss[ENG_MAX_RANK], ds[ENG_MAX_RANK], start = 0;
    eng_dense_steps(in->rank, in->dims, ss);
    eng_dense_steps(out->rank, out->dims, ds);
    for (uint32_t d = 0; d < in->rank; d++)
        start += pad[2 * d] * ds[d];
    eng_copy_nd(at(out, start, es), ds, in->data, ss, in->dims, in->rank, es);
    return SCHEMA_OK;
}

/* ---- SQUEEZE / EXPAND_DIMS ---------------------------------------------------------- */

static schema_status squeeze_check(eng_op_ctx *c) {
    schema_status s = check_data(c, 1, 2, 1, false, 1, 4);
    if (s) return s;
    return eng_has_input(c, 1) ? check_ints(c, 1, 1, "squeeze dimensions") : SCHEMA_OK;
}

static schema_status squeeze_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    bool drop[ENG_MAX_RANK] = {false};
    size_t n_axes = eng_has_input(c, 1) ? eng_elems(c->in[1]) : 0;
    if (n_axes && !c->in[1]->data) return ENG_DEFER;
    if (eng_has_input(c, 1) && c->in[1]->rank != 1)
        return eng_fail(c, "squeeze dimensions (input 1) must be 1-D");
    for (uint32_t d = 0; d < in->rank && !n_axes; d++)
        drop[d] = in->dims[d] == 1;
    for (size_t k = 0; k < n_axes; k++) {
        int32_t a = ((const int32_t *)c->in[1]->data)[k];
        uint32_t d;
        if (!eng_resolve_axis(a, in->rank, &d))
            return eng_fail(c, "squeeze dimension %d is out of range for rank %u", a, in->rank);
        if (in->dims[d] != 1)
            return eng_fail(c, "cannot squeeze dimension %u of size %u", d, in->dims[d]);
        drop[d] = true;
    }
    uint64_t dims[ENG_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t d = 0; d < in->rank; d++)
        if (!drop[d]) dims[r++] = in->dims[d];
    if (r == 0) dims[r++] = 1; /* squeezing every dimension leaves [1] */
    return set_dims(c, 0, r, dims);
}

static schema_status expand_dims_check(eng_op_ctx *c) {
    schema_status s = check_data(c, 2, 2, 1, true, 1, ENG_MAX_RANK - 1);
    if (s || (s = eng_check_scalar(c, 1, SCHEMA_INT32))) return s;
    const eng_tensor *in = c->in[0];
    uint32_t d;
    if (c->in[1]->data && in->known && !eng_resolve_axis(eng_i32(c->in[1]), in->rank + 1, &d))
        return eng_fail(c, "axis %d is out of range for rank %u", eng_i32(c->in[1]), in->rank);
    return SCHEMA_OK;
}

static schema_status expand_dims_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    uint32_t axis;
    if (!eng_resolve_axis(eng_i32(c->in[1]), in->rank + 1, &axis))
        return eng_fail(c, "axis %d is out of range for rank %u", eng_i32(c->in[1]), in->rank);
    uint64_t dims[ENG_MAX_RANK + 1];
    for (uint32_t d = 0, k = 0; d <= in->rank; d++)
        dims[d] = d == axis ? 1 : in->dims[k++];
    return set_dims(c, 0, in->rank + 1, dims);
}

/* ---- STRIDED_SLICE / SLICE ---------------------------------------------------------- */
/* Both reduce to a box: per input dimension a first index, a step and a count. */

typedef struct box {
    int64_t first[ENG_MAX_RANK];
    int32_t step[ENG_MAX_RANK];
    uint32_t count[ENG_MAX_RANK];
} box;

/* Copies the box of input 0 into output 0 (densely, in index order). */
static schema_status run_box(eng_op_ctx *c, const box *b) {
    const eng_tensor *in = c->in[0];
    size_t es = esize_of(c);
    ptrdiff_t is[ENG_MAX_RANK], ss[ENG_MAX_RANK], ds[ENG_MAX_RANK], start = 0;
    eng_dense_steps(in->rank, in->dims, is);
    eng_dense_steps(in->rank, b->count, ds);
    for (uint32_t d = 0; d < in->rank; d++) {
        if (b->count[d] == 0) return SCHEMA_OK;
        start += b->first[d] * is[d];
        ss[d] = b->step[d] * is[d];
    }
    eng_copy_nd(c->out[0]->data, ds, at(in, start, es), ss, b->count, in->rank, es);
    return SCHEMA_OK;
}

static schema_status strided_slice_check(eng_op_ctx *c) {
    schema_status s = check_data(c, 7, 7, 1, false, 1, 4);
    if (s || (s = check_ints(c, 1, 1, "begin")) || (s = check_ints(c, 2, 1, "end")) ||
        (s = check_ints(c, 3, 1, "strides")))
        return s;
    for (uint32_t i = 4; i < 7; i++)
        if ((s = eng_check_scalar(c, i, SCHEMA_INT32))) return s;
    return SCHEMA_OK;
}

/* An index clamped into a dimension of size dim > 0 the way the reference resolves begin
 * and end: negative values count from the end; a positive stride clamps to [0, dim], a
 * negative one to [-1, dim - 1]. */
static int64_t clamp_index(int64_t i, int64_t dim, bool forward) {
    if (forward) {
        if (i >= dim) return dim;
        if (i < -dim) i = -dim;
        return i < 0 ? i + dim : i;
    }
    if (i < -dim) return -1;
    if (i > dim - 1) i = dim - 1;
    return i < 0 ? i + dim : i;
}

static schema_status strided_slice_plan(eng_op_ctx *c, box *b, uint32_t *out_rank,
                                        uint64_t *out_dims) {
    const eng_tensor *in = c->in[0];
    if (!c->in[1]->data || !c->in[2]->data || !c->in[3]->data) return ENG_DEFER;
    schema_status s;
    if ((s = expect_len(c, 1, in->rank, "begin")) || (s = expect_len(c, 2, in->rank, "end")) ||
        (s = expect_len(c, 3, in->rank, "strides")))
        return s;
    const int32_t *begin = c->in[1]->data, *end = c->in[2]->data, *stride = c->in[3]->data;
    int32_t begin_mask = eng_i32(c->in[4]), end_mask = eng_i32(c->in[5]);
    int32_t shrink = eng_i32(c->in[6]);
    *out_rank = 0;
    for (uint32_t d = 0; d < in->rank; d++) {
        int64_t dim = in->dims[d], st = stride[d];
        if (st == 0) return eng_fail(c, "stride of dimension %u is 0", d);
        bool fwd = st > 0;
        int64_t lo = 0, hi = 0;
        if (dim > 0) {
            lo = begin_mask & (1 << d) ? (fwd ? 0 : dim - 1) : clamp_index(begin[d], dim, fwd);
            hi = end_mask & (1 << d) ? (fwd ? dim : -1) : clamp_index(end[d], dim, fwd);
        }
        int64_t n = fwd ? (hi - lo + st - 1) / st : (lo - hi - st - 1) / -st;
        if (n < 0) n = 0;
        b->first[d] = n ? lo : 0;
        b->step[d] = (int32_t)st;
        b->count[d] = (uint32_t)n;
        if (shrink & (1 << d)) {
            if (!fwd)
                return eng_fail(c, "dimension %u is shrunk with a negative stride %lld", d,
                                (long long)st);
            if (n != 1)
                return eng_fail(c, "shrunk dimension %u has %lld elements, not 1", d, (long long)n);
        } else {
            out_dims[(*out_rank)++] = (uint64_t)n;
        }
    }
    return SCHEMA_OK;
}

static schema_status strided_slice_shape(eng_op_ctx *c) {
    box b;
    uint32_t rank;
    uint64_t dims[ENG_MAX_RANK];
    schema_status s = strided_slice_plan(c, &b, &rank, dims);
    if (!s && rank == 0) dims[rank++] = 1; /* every dimension shrunk leaves [1] */
    return s ? s : set_dims(c, 0, rank, dims);
}

static schema_status strided_slice_run(eng_op_ctx *c) {
    box b;
    uint32_t rank;
    uint64_t dims[ENG_MAX_RANK];
    schema_status s = strided_slice_plan(c, &b, &rank, dims);
    return s ? s : run_box(c, &b);
}

static schema_status slice_check(eng_op_ctx *c) {
    schema_status s = check_data(c, 3, 3, 1, true, 1, ENG_MAX_RANK);
    if (s || (s = check_ints(c, 1, 1, "begin"))) return s;
    return check_ints(c, 2, 1, "size");
}

static schema_status slice_plan(eng_op_ctx *c, box *b) {
    const eng_tensor *in = c->in[0];
    if (!c->in[1]->data || !c->in[2]->data) return ENG_DEFER;
    schema_status s;
    if ((s = expect_len(c, 1, in->rank, "begin")) || (s = expect_len(c, 2, in->rank, "size")))
        return s;
    const int32_t *begin = c->in[1]->data, *size = c->in[2]->data;
    for (uint32_t d = 0; d < in->rank; d++) {
        int64_t dim = in->dims[d], first = begin[d], n = size[d] == -1 ? dim - first : size[d];
        if (first < 0 || n < 0 || first + n > dim)
            return eng_fail(c, "slice [%d, +%d) is outside dimension %u of size %u", begin[d],
                            size[d], d, in->dims[d]);
        b->first[d] = first;
        b->step[d] = 1;
        b->count[d] = (uint32_t)n;
    }
    return SCHEMA_OK;
}

static schema_status slice_shape(eng_op_ctx *c) {
    box b;
    schema_status s = slice_plan(c, &b);
    if (s) return s;
    eng_set_shape(c->out[0], c->in[0]->rank, b.count);
    return SCHEMA_OK;
}

static schema_status slice_run(eng_op_ctx *c) {
    box b;
    schema_status s = slice_plan(c, &b);
    return s ? s : run_box(c, &b);
}

/* ---- TRANSPOSE ---------------------------------------------------------------------- */
/* Inputs: 0 data, 1 optional permutation (default: reversed dimensions). */

static schema_status transpose_check(eng_op_ctx *c) {
    schema_status s = check_data(c, 1, 2, 1, false, 1, 4);
    if (s) return s;
    return eng_has_input(c, 1) ? check_ints(c, 1, 1, "permutation") : SCHEMA_OK;
}

static schema_status transpose_perm(eng_op_ctx *c, uint32_t *perm) {
    const eng_tensor *in = c->in[0];
    if (!eng_has_input(c, 1)) {
        for (uint32_t d = 0; d < in->rank; d++)
            perm[d] = in->rank - 1 - d;
        return SCHEMA_OK;
    }
    if (!c->in[1]->data) return ENG_DEFER;
    schema_status s = expect_len(c, 1, in->rank, "permutation");
    if (s) return s;
    const int32_t *p = c->in[1]->data;
    bool seen[ENG_MAX_RANK] = {false};
    for (uint32_t d = 0; d < in->rank; d++) {
        if (p[d] < 0 || (uint32_t)p[d] >= in->rank || seen[p[d]])
            return eng_fail(c, "permutation entry %u (%d) is invalid for rank %u", d, p[d],
                            in->rank);
        seen[p[d]] = true;
        perm[d] = (uint32_t)p[d];
    }
    return SCHEMA_OK;
}

static schema_status transpose_shape(eng_op_ctx *c) {
    uint32_t perm[ENG_MAX_RANK], dims[ENG_MAX_RANK];
    schema_status s = transpose_perm(c, perm);
    if (s) return s;
    for (uint32_t d = 0; d < c->in[0]->rank; d++)
        dims[d] = c->in[0]->dims[perm[d]];
    eng_set_shape(c->out[0], c->in[0]->rank, dims);
    return SCHEMA_OK;
}

static schema_status transpose_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    uint32_t perm[ENG_MAX_RANK];
    schema_status s = transpose_perm(c, perm);
    if (s) return s;
    ptrdiff_t is[ENG_MAX_RANK], ss[ENG_MAX_RANK], ds[ENG_MAX_RANK];
    eng_dense_steps(in->rank, in->dims, is);
    eng_dense_steps(out->rank, out->dims, ds);
    for (uint32_t d = 0; d < in->rank; d++)
        ss[d] = is[perm[d]];
    eng_copy_nd(out->data, ds, in->data, ss, out->dims, out->rank, esize_of(c));
    return SCHEMA_OK;
}

/* ---- TILE --------------------------------------------------------------------------- */

static schema_status tile_check(eng_op_ctx *c) {
    schema_status s = check_data(c, 2, 2, 1, true, 1, ENG_MAX_RANK);
    return s ? s : check_ints(c, 1, 1, "multiples");
}

static schema_status tile_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    if (!c->in[1]->data) return ENG_DEFER;
    schema_status s = expect_len(c, 1, in->rank, "multiples");
    if (s) return s;
    const int32_t *m = c->in[1]->data;
    uint64_t dims[ENG_MAX_RANK];
    for (uint32_t d = 0; d < in->rank; d++) {
        if (m[d] < 0) return eng_fail(c, "multiple %d of dimension %u is negative", m[d], d);
        dims[d] = (uint64_t)in->dims[d] * (uint64_t)m[d];
    }
    return set_dims(c, 0, in->rank, dims);
}

static schema_status tile_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    const int32_t *m = c->in[1]->data;
    /* Each input dimension d becomes two: the copy index m < multiples[d] (source step 0)
     * and the element index within the input. */
    uint32_t cnt[2 * ENG_MAX_RANK];
    ptrdiff_t is[ENG_MAX_RANK], os[ENG_MAX_RANK], ss[2 * ENG_MAX_RANK], ds[2 * ENG_MAX_RANK];
    eng_dense_steps(in->rank, in->dims, is);
    eng_dense_steps(out->rank, out->dims, os);
    for (uint32_t d = 0; d < in->rank; d++) {
        cnt[2 * d] = (uint32_t)m[d], cnt[2 * d + 1] = in->dims[d];
        ss[2 * d] = 0, ss[2 * d + 1] = is[d];
        ds[2 * d] = os[d] * (ptrdiff_t)in->dims[d], ds[2 * d + 1] = os[d];
    }
    eng_copy_nd(out->data, ds, in->data, ss, cnt, 2 * in->rank, esize_of(c));
    return SCHEMA_OK;
}

/* ---- GATHER / SPLIT / CHANNEL_SHUFFLE ---------------------------------------------------
 * All three view the input as [outer, axis, inner] around one axis. */

typedef struct axis_view {
    uint32_t axis;
    size_t outer, size, inner;
} axis_view;

static schema_status axis_view_of(eng_op_ctx *c, int32_t axis, axis_view *v) {
    const eng_tensor *in = c->in[0];
    if (!eng_resolve_axis(axis, in->rank, &v->axis))
        return eng_fail(c, "axis %d is out of range for rank %u", axis, in->rank);
    v->outer = eng_dims_product(in, 0, v->axis);
    v->size = in->dims[v->axis];
    v->inner = eng_dims_product(in, v->axis + 1, in->rank);
    return SCHEMA_OK;
}

/* Copies outer x n elements: rows of n from src (row step src_row) to dst (row step
 * dst_row). */
static void copy_rows(void *dst, size_t dst_row, const void *src, size_t src_row, size_t outer,
                      size_t n, size_t es) {
    uint32_t cnt[2] = {(uint32_t)outer, (uint32_t)n};
    ptrdiff_t ds[2] = {(ptrdiff_t)dst_row, 1}, ss[2] = {(ptrdiff_t)src_row, 1};
    eng_copy_nd(dst, ds, src, ss, cnt, 2, es);
}

/* GATHER inputs: 0 data, 1 axis, 2 indices (any rank). */
static schema_status gather_check(eng_op_ctx *c) {
    schema_status s = check_data(c, 3, 3, 1, true, 1, ENG_MAX_RANK);
    if (s || (s = eng_check_scalar(c, 1, SCHEMA_INT32))) return s;
    if (c->in[2]->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "indices (input 2) must be TENSOR_INT32, is %s",
                        schema_type_name(c->in[2]->type));
    return SCHEMA_OK;
}

static schema_status gather_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *idx = c->in[2];
    axis_view v;
    schema_status s = axis_view_of(c, eng_i32(c->in[1]), &v);
    if (s) return s;
    uint64_t dims[2 * ENG_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t d = 0; d < v.axis; d++)
        dims[r++] = in->dims[d];
    for (uint32_t d = 0; d < idx->rank; d++)
        dims[r++] = idx->dims[d];
    for (uint32_t d = v.axis + 1; d < in->rank; d++)
        dims[r++] = in->dims[d];
    return set_dims(c, 0, r, dims);
}

static schema_status gather_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *out = c->out[0];
    axis_view v;
    schema_status s = axis_view_of(c, eng_i32(c->in[1]), &v);
    if (s) return s;
    size_t n = eng_elems(c->in[2]), es = esize_of(c);
    const int32_t *idx = c->in[2]->data;
    if (eng_elems(out) == 0) return SCHEMA_OK;
    for (size_t j = 0; j < n; j++) {
        if (idx[j] < 0 || (size_t)idx[j] >= v.size)
            return eng_fail(c, "index %d is out of range for a dimension of size %zu", idx[j],
                            v.size);
        copy_rows(at(out, (ptrdiff_t)(j * v.inner), es), n * v.inner,
                  at(in, (ptrdiff_t)((size_t)idx[j] * v.inner), es), v.size * v.inner, v.outer,
                  v.inner, es);
    }
    return SCHEMA_OK;
}

/* SPLIT inputs: 0 data, 1 axis, 2 number of outputs. */
static schema_status split_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 3, 3, 1, 64);
    if (s || (s = check_data(c, 3, 3, c->n_out, true, 1, ENG_MAX_RANK))) return s;
    if ((s = eng_check_scalar(c, 1, SCHEMA_INT32)) || (s = eng_check_scalar(c, 2, SCHEMA_INT32)))
        return s;
    if (c->in[2]->data && eng_i32(c->in[2]) != (int32_t)c->n_out)
        return eng_fail(c, "number of splits %d differs from the %u outputs", eng_i32(c->in[2]),
                        c->n_out);
    return SCHEMA_OK;
}

static schema_status split_shape(eng_op_ctx *c) {
    axis_view v;
    schema_status s = axis_view_of(c, eng_i32(c->in[1]), &v);
    if (s) return s;
    if (v.size % c->n_out)
        return eng_fail(c, "dimension %u of size %zu does not split into %u", v.axis, v.size,
                        c->n_out);
    for (uint32_t o = 0; o < c->n_out; o++) {
        eng_copy_shape(c->out[o], c->in[0]);
        c->out[o]->dims[v.axis] = (uint32_t)(v.size / c->n_out);
    }
    return SCHEMA_OK;
}

static schema_status split_run(eng_op_ctx *c) {
    axis_view v;
    schema_status s = axis_view_of(c, eng_i32(c->in[1]), &v);
    if (s) return s;
    size_t part = v.size / c->n_out * v.inner, es = esize_of(c);
    if (part == 0 || v.outer == 0) return SCHEMA_OK;
    for (uint32_t o = 0; o < c->n_out; o++)
        copy_rows(c->out[o]->data, part, at(c->in[0], (ptrdiff_t)(o * part), es), v.size * v.inner,
                  v.outer, part, es);
    return SCHEMA_OK;
}

/* CHANNEL_SHUFFLE inputs: 0 data, 1 number of groups, 2 axis. */
static schema_status shuffle_check(eng_op_ctx *c) {
    schema_status s = check_data(c, 3, 3, 1, false, 1, 4);
    if (s || (s = eng_check_scalar(c, 1, SCHEMA_INT32)) ||
        (s = eng_check_scalar(c, 2, SCHEMA_INT32)))
        return s;
    if (c->in[1]->data && eng_i32(c->in[1]) <= 0)
        return eng_fail(c, "number of groups %d must be positive", eng_i32(c->in[1]));
    return SCHEMA_OK;
}

static schema_status shuffle_shape(eng_op_ctx *c) {
    axis_view v;
    schema_status s = axis_view_of(c, eng_i32(c->in[2]), &v);
    if (s) return s;
    int32_t g = eng_i32(c->in[1]);
    if (g <= 0 || v.size % (size_t)g)
        return eng_fail(c, "dimension %u of size %zu does not divide into %d groups", v.axis,
                        v.size, g);
    eng_copy_shape(c->out[0], c->in[0]);
    return SCHEMA_OK;
}

static schema_status shuffle_run(eng_op_ctx *c) {
    axis_view v;
    schema_status s = axis_view_of(c, eng_i32(c->in[2]), &v);
    if (s) return s;
    size_t g = (size_t)eng_i32(c->in[1]), gs = v.size / g;
    /* out[o, k * groups + j, i] = in[o, j * group_size + k, i] */
    uint32_t cnt[4] = {(uint32_t)v.outer, (uint32_t)gs, (uint32_t)g, (uint32_t)v.inner};
    ptrdiff_t ds[4] = {(ptrdiff_t)(v.size * v.inner), (ptrdiff_t)(g * v.inner), (ptrdiff_t)v.inner,
                       1};
    ptrdiff_t ss[4] = {(ptrdiff_t)(v.size * v.inner), (ptrdiff_t)v.inner, (ptrdiff_t)(gs * v.inner),
                       1};
    eng_copy_nd(c->out[0]->data, ds, c->in[0]->data, ss, cnt, 4, esize_of(c));
    return SCHEMA_OK;
}

/* ---- definitions -------------------------------------------------------------------- */

ENG_OP_DEF(BATCH_TO_SPACE_ND, batch_space_check, batch_space_shape, ENG_INPUT(2), 0,
           ENG_KERNELS_FQ(batch_space_run));
ENG_OP_DEF(SPACE_TO_BATCH_ND, batch_space_check, batch_space_shape, ENG_INPUT(3), 0,
           ENG_KERNELS_FQ(batch_space_run));
ENG_OP_DEF(PAD, pad_check, pad_shape, 0, 0, ENG_KERNELS_FQ(pad_run));
ENG_OP_DEF(PAD_V2, pad_check, pad_shape, 0, 0, ENG_KERNELS_FQ(pad_run));
ENG_OP_DEF(SQUEEZE, squeeze_check, squeeze_shape, ENG_INPUT(1), 0, ENG_KERNELS_FQ(run_flat));
ENG_OP_DEF(EXPAND_DIMS, expand_dims_check, expand_dims_shape, 0, 0, ENG_KERNELS_FQI(run_flat));
ENG_OP_DEF(STRIDED_SLICE, strided_slice_check, strided_slice_shape, 0, 0,
           ENG_KERNELS_FQ(strided_slice_run));
ENG_OP_DEF(SLICE, slice_check, slice_shape, 0, 0, ENG_KERNELS_FQI(slice_run));
ENG_OP_DEF(TRANSPOSE, transpose_check, transpose_shape, ENG_INPUT(1), 0,
           ENG_KERNELS_FQ(transpose_run));
ENG_OP_DEF(TILE, tile_check, tile_shape, 0, 0, ENG_KERNELS_FQI(tile_run));
ENG_OP_DEF(GATHER, gather_check, gather_shape, 0, 0, ENG_KERNELS_FQI(gather_run));
ENG_OP_DEF(SPLIT, split_check, split_shape, 0, 0, ENG_KERNELS_FQI(split_run));
ENG_OP_DEF(CHANNEL_SHUFFLE, shuffle_check, shuffle_shape, 0, 0, ENG_KERNELS_FQ(shuffle_run));

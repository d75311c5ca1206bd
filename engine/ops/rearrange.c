/* rearrange.c: RESHAPE, DEPTH_TO_SPACE, SPACE_TO_DEPTH and CONCATENATION — operations
 * that move stored elements without looking at them, so one byte-moving path serves every
 * element type (quantized values keep their scale and zero point). The exception is
 * CONCATENATION of QUANT8 inputs whose quantization differs from the output's (allowed
 * from HAL 1.2): those are requantized in float as the reference does. */
#include "affine_quant.h"
#include "clamp.h"
#include "image_geometry.h"
#include "kernel_errors.h"
#include "operand.h"
#include "signature.h"
#include "tensor_copy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static size_t esize(const nnd_tensor *t) {
    return nnd_type_size(t->type);
}

/* Types every operation here moves. */
static nnd_status check_movable(nnd_op_ctx *c, const nnd_tensor *t, const char *what) {
    return nnd_check_type(c, t, what, 5, NND_TENSOR_FLOAT32, NND_TENSOR_FLOAT16,
                          NND_TENSOR_QUANT8_ASYMM, NND_TENSOR_QUANT8_ASYMM_SIGNED,
                          NND_TENSOR_INT32);
}

/* Input 0 -> output 0 with the same type and quantization. */
static nnd_status check_passthrough(nnd_op_ctx *c, uint32_t min_rank, uint32_t max_rank) {
    nnd_status s = check_movable(c, c->in[0], "input 0");
    if (s || (s = nnd_check_same_type(c, 0, 0)) || (s = nnd_check_same_quant(c, 0, 0))) return s;
    return nnd_check_rank(c, c->in[0], "input 0", min_rank, max_rank);
}

/* ---- RESHAPE ------------------------------------------------------------------------ */

static nnd_status reshape_check(nnd_op_ctx *c) {
    nnd_status s = nnd_check_count(c, 2, 2, 1, 1);
    /* Input rank up to 4, as the NNAPI runtime's RESHAPE rules have it. */
    if (s || (s = check_passthrough(c, 0, 4))) return s;
    if (c->in[1]->type != NND_TENSOR_INT32)
        return nnd_fail(c, "input 1 (shape) must be TENSOR_INT32, is %s",
                        nnd_type_name(c->in[1]->type));
    return nnd_check_rank(c, c->in[1], "input 1 (shape)", 1, 1);
}

static nnd_status reshape_shape(nnd_op_ctx *c) {
    const nnd_tensor *in = c->in[0], *spec = c->in[1];
    if (!spec->data) return NND_DEFER;
    uint32_t rank = spec->dims[0];
    if (rank > NND_MAX_RANK) return nnd_fail(c, "input 1 asks for rank %u", rank);
    if (spec->bytes < rank * sizeof(int32_t)) return nnd_fail(c, "input 1 is too short");
    uint32_t dims[NND_MAX_RANK];
    int stretch = -1;
    uint64_t known = 1;
    for (uint32_t i = 0; i < rank; i++) {
        int32_t v;
        memcpy(&v, (const int32_t *)spec->data + i, sizeof v);
        if (v == -1) {
            if (stretch >= 0) return nnd_fail(c, "input 1 has more than one -1");
            stretch = (int)i;
            dims[i] = 0;
        } else if (v < 0) {
            return nnd_fail(c, "input 1 has dimension %d", v);
        } else {
            dims[i] = (uint32_t)v;
            known *= (uint64_t)v;
            if (known > UINT32_MAX) return nnd_fail(c, "input 1 asks for too many elements");
        }
    }
    size_t total = nnd_elems(in);
    if (stretch >= 0) {
        dims[stretch] = known ? (uint32_t)(total / known) : 0;
        known *= dims[stretch];
    }
    if (known != total)
        return nnd_fail(c, "input 0 has %zu elements, the new shape %llu", total,
                        (unsigned long long)known);
    nnd_set_shape(c->out[0], rank, dims);
    return NND_OK;
}

static nnd_status reshape_run(nnd_op_ctx *c) {
    const nnd_tensor *in = c->in[0];
    nnd_tensor *out = c->out[0];
    if (out->data != in->data) nnd_copy_elems(out->data, 1, in->data, 1, nnd_elems(in), esize(in));
    return NND_OK;
}

/* ---- DEPTH_TO_SPACE, SPACE_TO_DEPTH ------------------------------------------------- */

static bool layout_nchw(const nnd_op_ctx *c, uint32_t i) {
    return nnd_has_input(c, i) && c->in[i]->data && nnd_bool(c->in[i]);
}

static nnd_status block_check(nnd_op_ctx *c) {
    nnd_status s = nnd_check_count(c, 2, 3, 1, 1);
    if (s || (s = check_passthrough(c, 4, 4)) || (s = nnd_check_scalar(c, 1, NND_INT32))) return s;
    if (nnd_has_input(c, 2) && (s = nnd_check_scalar(c, 2, NND_BOOL))) return s;
    if (c->in[1]->data && nnd_i32(c->in[1]) < 1)
        return nnd_fail(c, "block size %d (input 1) must be at least 1", nnd_i32(c->in[1]));
    return NND_OK;
}

static nnd_status block_shape(nnd_op_ctx *c) {
    bool nchw = layout_nchw(c, 2);
    int32_t b = nnd_i32(c->in[1]);
    if (b < 1) return nnd_fail(c, "block size %d (input 1) must be at least 1", b);
    uint32_t bs = (uint32_t)b;
    uint64_t sq = (uint64_t)bs * bs; /* in 64 bits: a large block size wraps 32 */
    nnd_image im;
    nnd_image_of(c->in[0], nchw, &im);
    bool deep = c->def->code == NND_OP_DEPTH_TO_SPACE;
    if (deep ? (uint64_t)im.h * bs > UINT32_MAX || (uint64_t)im.w * bs > UINT32_MAX
             : (uint64_t)im.c * sq > UINT32_MAX)
        return nnd_fail(c, "block size %u makes an output dimension past 2^32", bs);
    if (deep) {
        if (im.c % sq)
            return nnd_fail(c, "depth %u is not a multiple of block size %u squared", im.c, bs);
        nnd_set_image_shape(c->out[0], nchw, im.n, im.h * bs, im.w * bs, (uint32_t)(im.c / sq));
    } else {
        if (im.h % bs || im.w % bs)
            return nnd_fail(c, "height %u and width %u must be multiples of block size %u", im.h,
                            im.w, bs);
        nnd_set_image_shape(c->out[0], nchw, im.n, im.h / bs, im.w / bs, (uint32_t)(im.c * sq));
    }
    return NND_OK;
}

/* Both operations pair each pixel (y, x) of the spatial tensor with channel block
 * ((y % bs) * bs + x % bs) of pixel (y / bs, x / bs) of the deep tensor; they differ in
 * which side is read. */
static nnd_status block_run(nnd_op_ctx *c) {
    bool nchw = layout_nchw(c, 2);
    uint32_t bs = (uint32_t)nnd_i32(c->in[1]);
    bool to_space = c->def->code == NND_OP_DEPTH_TO_SPACE;
    nnd_tensor *space = to_space ? c->out[0] : c->in[0];
    nnd_tensor *deep = to_space ? c->in[0] : c->out[0];
    nnd_image sp, dp;
    nnd_image_of(space, nchw, &sp);
    nnd_image_of(deep, nchw, &dp);
    size_t es = esize(space);
    uint8_t *sbase = space->data, *dbase = deep->data;
    for (uint32_t n = 0; n < sp.n; n++)
        for (uint32_t y = 0; y < sp.h; y++)
            for (uint32_t x = 0; x < sp.w; x++) {
                uint32_t block = (y % bs) * bs + x % bs;
                uint8_t *s = sbase + nnd_image_at(&sp, n, y, x, 0) * es;
                uint8_t *d = dbase + nnd_image_at(&dp, n, y / bs, x / bs, block * sp.c) * es;
                if (to_space)
                    nnd_copy_elems(s, sp.sc, d, dp.sc, sp.c, es);
                else
                    nnd_copy_elems(d, dp.sc, s, sp.sc, sp.c, es);
            }
    return NND_OK;
}

/* ---- CONCATENATION ------------------------------------------------------------------ */

static nnd_status concat_check(nnd_op_ctx *c) {
    nnd_status s = nnd_check_count(c, 2, 512, 1, 1);
    if (s) return s;
    uint32_t n = c->n_in - 1;
    const nnd_tensor *first = c->in[0];
    if ((s = check_movable(c, first, "input 0")) || (s = nnd_check_same_type(c, 0, 0)) ||
        (s = nnd_check_scalar(c, n, NND_INT32)))
        return s;
    for (uint32_t i = 0; i < n; i++) {
        const nnd_tensor *t = c->in[i];
        if (t->type != first->type)
            return nnd_fail(c, "input %u has type %s, input 0 has %s", i, nnd_type_name(t->type),
                            nnd_type_name(first->type));
        char what[24];
        snprintf(what, sizeof what, "input %u", i);
        if ((s = nnd_check_rank(c, t, what, 1, 4))) return s;
        if (t->known && first->known && t->rank != first->rank)
            return nnd_fail(c, "input %u has rank %u, input 0 has %u", i, t->rank, first->rank);
    }
    if (c->in[n]->data && first->known) {
        int32_t axis = nnd_i32(c->in[n]);
        if (axis < 0 || (uint32_t)axis >= first->rank)
            return nnd_fail(c, "axis %d (input %u) is outside 0..%u", axis, n, first->rank - 1);
    }
    return NND_OK;
}

static nnd_status concat_shape(nnd_op_ctx *c) {
    uint32_t n = c->n_in - 1;
    const nnd_tensor *first = c->in[0];
    int32_t axis = nnd_i32(c->in[n]);
    if (axis < 0 || (uint32_t)axis >= first->rank)
        return nnd_fail(c, "axis %d (input %u) is outside 0..%u", axis, n, first->rank - 1);
    uint32_t dims[NND_MAX_RANK];
    memcpy(dims, first->dims, sizeof(uint32_t) * first->rank);
    for (uint32_t i = 1; i < n; i++) {
        const nnd_tensor *t = c->in[i];
        if (t->rank != first->rank)
            return nnd_fail(c, "input %u has rank %u, input 0 has %u", i, t->rank, first->rank);
        for (uint32_t d = 0; d < t->rank; d++) {
            if (d == (uint32_t)axis)
                dims[d] += t->dims[d];
            else if (t->dims[d] != first->dims[d])
                return nnd_fail(c, "input %u has dimension %u = %u, input 0 has %u", i, d,
                                t->dims[d], first->dims[d]);
        }
    }
    nnd_set_shape(c->out[0], first->rank, dims);
    return NND_OK;
}

/* Copies n 8-bit values into the output's quantization: round(q * s + b) + zero point,
 * in float as the reference computes it. */
static void requantize_run(uint8_t *dst, const uint8_t *src, size_t n, const nnd_tensor *in,
                           const nnd_tensor *out) {
    int32_t qmin = nnd_q8_min(in->type), qmax = nnd_q8_max(in->type);
    float scale = in->scale * (1.f / out->scale);
    float bias = (float)-in->zero_point * scale;
    for (size_t i = 0; i < n; i++) {
        float v = roundf((float)nnd_q8_get(src, i, qmin) * scale + bias) + (float)out->zero_point;
        nnd_q8_put(dst, i, nnd_f2i_clamp(v, qmin, qmax));
    }
}

static nnd_status concat_run(nnd_op_ctx *c) {
    uint32_t n = c->n_in - 1;
    nnd_tensor *out = c->out[0];
    uint32_t axis = (uint32_t)nnd_i32(c->in[n]);
    size_t outer = nnd_dims_product(out, 0, axis), es = esize(out);
    uint8_t *dst = out->data;
    for (size_t o = 0; o < outer; o++)
        for (uint32_t i = 0; i < n; i++) {
            const nnd_tensor *t = c->in[i];
            size_t inner = nnd_dims_product(t, axis, t->rank);
            if (!inner) continue;
            const uint8_t *src = (const uint8_t *)t->data + o * inner * es;
            if (nnd_is_quant8(t->type) &&
                (t->scale != out->scale || t->zero_point != out->zero_point))
                requantize_run(dst, src, inner, t, out);
            else
                nnd_copy_elems(dst, 1, src, 1, inner, es);
            dst += inner * es;
        }
    return NND_OK;
}

/* Every element type moves the same way: one kernel for all of them. */
#define MOVE_OP(var, CODE, NAME, prefix, run)                                                      \
    const nnd_op_def var = {                                                                       \
        .code = CODE,                                                                              \
        .name = NAME,                                                                              \
        .check = prefix##_check,                                                                   \
        .shape = prefix##_shape,                                                                   \
        .kernels = {{NND_TENSOR_FLOAT32, run},                                                     \
                    {NND_TENSOR_FLOAT16, run},                                                     \
                    {NND_TENSOR_QUANT8_ASYMM, run},                                                \
                    {NND_TENSOR_QUANT8_ASYMM_SIGNED, run},                                         \
                    {NND_TENSOR_INT32, run}},                                                      \
    }

MOVE_OP(nnd_op_reshape, NND_OP_RESHAPE, "RESHAPE", reshape, reshape_run);
MOVE_OP(nnd_op_depth_to_space, NND_OP_DEPTH_TO_SPACE, "DEPTH_TO_SPACE", block, block_run);
MOVE_OP(nnd_op_space_to_depth, NND_OP_SPACE_TO_DEPTH, "SPACE_TO_DEPTH", block, block_run);
MOVE_OP(nnd_op_concatenation, NND_OP_CONCATENATION, "CONCATENATION", concat, concat_run);

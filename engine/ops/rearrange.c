/* SPDX-License-Identifier: Apache-2.0 */
/* rearrange.c: RESHAPE, DEPTH_TO_SPACE, SPACE_TO_DEPTH and CONCATENATION — operations
 * that move stored elements without looking at them, so one byte-moving path serves every
 * element type (quantized values keep their scale and zero point). The exception is
 * CONCATENATION of QUANT8 inputs whose quantization differs from the output's (allowed
 * from HAL 1.2): those are requantized in float as the reference does. */
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"
#include "engine/ops/op_def.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static size_t esize(const eng_tensor *t) {
    return schema_type_size(t->type);
}

/* Types every operation here moves. */
static schema_status check_movable(eng_op_ctx *c, const eng_tensor *t, const char *what) {
    return eng_check_type(c, t, what, 5, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                          SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
                          SCHEMA_TENSOR_INT32);
}

/* Input 0 -> output 0 with the same type and quantization. */
static schema_status check_passthrough(eng_op_ctx *c, uint32_t min_rank, uint32_t max_rank) {
    schema_status s = check_movable(c, c->in[0], "input 0");
    if (s || (s = eng_check_same_type(c, 0, 0)) || (s = eng_check_same_quant(c, 0, 0))) return s;
    return eng_check_rank(c, c->in[0], "input 0", min_rank, max_rank);
}

/* ---- RESHAPE ------------------------------------------------------------------------ */

static schema_status reshape_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 2, 1, 1);
    /* Input rank up to 4, as the NNAPI runtime's RESHAPE rules have it. */
    if (s || (s = check_passthrough(c, 0, 4))) return s;
    if (c->in[1]->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "input 1 (shape) must be TENSOR_INT32, is %s",
                        schema_type_name(c->in[1]->type));
    return eng_check_rank(c, c->in[1], "input 1 (shape)", 1, 1);
}

static schema_status reshape_shape(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0], *spec = c->in[1];
    if (!spec->data) return ENG_DEFER;
    uint32_t rank = spec->dims[0];
    if (rank > ENG_MAX_RANK) return eng_fail(c, "input 1 asks for rank %u", rank);
    if (spec->bytes < rank * sizeof(int32_t)) return eng_fail(c, "input 1 is too short");
    uint32_t dims[ENG_MAX_RANK];
    int stretch = -1;
    uint64_t known = 1;
    for (uint32_t i = 0; i < rank; i++) {
        int32_t v;
        memcpy(&v, (const int32_t *)spec->data + i, sizeof v);
        if (v == -1) {
            if (stretch >= 0) return eng_fail(c, "input 1 has more than one -1");
            stretch = (int)i;
            dims[i] = 0;
        } else if (v < 0) {
            return eng_fail(c, "input 1 has dimension %d", v);
        } else {
            dims[i] = (uint32_t)v;
            known *= (uint64_t)v;
            if (known > UINT32_MAX) return eng_fail(c, "input 1 asks for too many elements");
        }
    }
    size_t total = eng_elems(in);
    if (stretch >= 0) {
        dims[stretch] = known ? (uint32_t)(total / known) : 0;
        known *= dims[stretch];
    }
    if (known != total)
        return eng_fail(c, "input 0 has %zu elements, the new shape %llu", total,
                        (unsigned long long)known);
    eng_set_shape(c->out[0], rank, dims);
    return SCHEMA_OK;
}

static schema_status reshape_run(eng_op_ctx *c) {
    const eng_tensor *in = c->in[0];
    eng_tensor *out = c->out[0];
    if (out->data != in->data) eng_copy_elems(out->data, 1, in->data, 1, eng_elems(in), esize(in));
    return SCHEMA_OK;
}

/* ---- DEPTH_TO_SPACE, SPACE_TO_DEPTH ------------------------------------------------- */

static bool layout_nchw(const eng_op_ctx *c, uint32_t i) {
    return eng_has_input(c, i) && c->in[i]->data && eng_bool(c->in[i]);
}

static schema_status block_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 3, 1, 1);
    if (s || (s = check_passthrough(c, 4, 4)) || (s = eng_check_scalar(c, 1, SCHEMA_INT32)))
        return s;
    if (eng_has_input(c, 2) && (s = eng_check_scalar(c, 2, SCHEMA_BOOL))) return s;
    if (c->in[1]->data && eng_i32(c->in[1]) < 1)
        return eng_fail(c, "block size %d (input 1) must be at least 1", eng_i32(c->in[1]));
    return SCHEMA_OK;
}

static schema_status block_shape(eng_op_ctx *c) {
    bool nchw = layout_nchw(c, 2);
    int32_t b = eng_i32(c->in[1]);
    if (b < 1) return eng_fail(c, "block size %d (input 1) must be at least 1", b);
    uint32_t bs = (uint32_t)b;
    uint64_t sq = (uint64_t)bs * bs; /* in 64 bits: a large block size wraps 32 */
    eng_image im;
    eng_image_of(c->in[0], nchw, &im);
    bool deep = c->def->code == SCHEMA_OP_DEPTH_TO_SPACE;
    if (deep ? (uint64_t)im.h * bs > UINT32_MAX || (uint64_t)im.w * bs > UINT32_MAX
             : (uint64_t)im.c * sq > UINT32_MAX)
        return eng_fail(c, "block size %u makes an output dimension past 2^32", bs);
    if (deep) {
        if (im.c % sq)
            return eng_fail(c, "depth %u is not a multiple of block size %u squared", im.c, bs);
        eng_set_image_shape(c->out[0], nchw, im.n, im.h * bs, im.w * bs, (uint32_t)(im.c / sq));
    } else {
        if (im.h % bs || im.w % bs)
            return eng_fail(c, "height %u and width %u must be multiples of block size %u", im.h,
                            im.w, bs);
        eng_set_image_shape(c->out[0], nchw, im.n, im.h / bs, im.w / bs, (uint32_t)(im.c * sq));
    }
    return SCHEMA_OK;
}

/* Both operations pair each pixel (y, x) of the spatial tensor with channel block
 * ((y % bs) * bs + x % bs) of pixel (y / bs, x / bs) of the deep tensor; they differ in
 * which side is read. */
static schema_status block_run(eng_op_ctx *c) {
    bool nchw = layout_nchw(c, 2);
    uint32_t bs = (uint32_t)eng_i32(c->in[1]);
    bool to_space = c->def->code == SCHEMA_OP_DEPTH_TO_SPACE;
    eng_tensor *space = to_space ? c->out[0] : c->in[0];
    eng_tensor *deep = to_space ? c->in[0] : c->out[0];
    eng_image sp, dp;
    eng_image_of(space, nchw, &sp);
    eng_image_of(deep, nchw, &dp);
    size_t es = esize(space);
    uint8_t *sbase = space->data, *dbase = deep->data;
    for (uint32_t n = 0; n < sp.n; n++)
        for (uint32_t y = 0; y < sp.h; y++)
            for (uint32_t x = 0; x < sp.w; x++) {
                uint32_t block = (y % bs) * bs + x % bs;
                uint8_t *s = sbase + eng_image_at(&sp, n, y, x, 0) * es;
                uint8_t *d = dbase + eng_image_at(&dp, n, y / bs, x / bs, block * sp.c) * es;
                if (to_space)
                    eng_copy_elems(s, sp.sc, d, dp.sc, sp.c, es);
                else
                    eng_copy_elems(d, dp.sc, s, sp.sc, sp.c, es);
            }
    return SCHEMA_OK;
}

/* ---- CONCATENATION ------------------------------------------------------------------ */

static schema_status concat_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 512, 1, 1);
    if (s) return s;
    uint32_t n = c->n_in - 1;
    const eng_tensor *first = c->in[0];
    if ((s = check_movable(c, first, "input 0")) || (s = eng_check_same_type(c, 0, 0)) ||
        (s = eng_check_scalar(c, n, SCHEMA_INT32)))
        return s;
    for (uint32_t i = 0; i < n; i++) {
        const eng_tensor *t = c->in[i];
        if (t->type != first->type)
            return eng_fail(c, "input %u has type %s, input 0 has %s", i, schema_type_name(t->type),
                            schema_type_name(first->type));
        char what[24];
        snprintf(what, sizeof what, "input %u", i);
        if ((s = eng_check_rank(c, t, what, 1, 4))) return s;
        if (t->known && first->known && t->rank != first->rank)
            return eng_fail(c, "input %u has rank %u, input 0 has %u", i, t->rank, first->rank);
    }
    if (c->in[n]->data && first->known) {
        int32_t axis = eng_i32(c->in[n]);
        if (axis < 0 || (uint32_t)axis >= first->rank)
            return eng_fail(c, "axis %d (input %u) is outside 0..%u", axis, n, first->rank - 1);
    }
    return SCHEMA_OK;
}

static schema_status concat_shape(eng_op_ctx *c) {
    uint32_t n = c->n_in - 1;
    const eng_tensor *first = c->in[0];
    int32_t axis = eng_i32(c->in[n]);
    if (axis < 0 || (uint32_t)axis >= first->rank)
        return eng_fail(c, "axis %d (input %u) is outside 0..%u", axis, n, first->rank - 1);
    uint32_t dims[ENG_MAX_RANK];
    memcpy(dims, first->dims, sizeof(uint32_t) * first->rank);
    uint64_t along = first->dims[axis]; /* in 64 bits: a 32-bit sum could wrap to a small output */
    for (uint32_t i = 1; i < n; i++) {
        const eng_tensor *t = c->in[i];
        if (t->rank != first->rank)
            return eng_fail(c, "input %u has rank %u, input 0 has %u", i, t->rank, first->rank);
        for (uint32_t d = 0; d < t->rank; d++) {
            if (d == (uint32_t)axis)
                along += t->dims[d];
            else if (t->dims[d] != first->dims[d])
                return eng_fail(c, "input %u has dimension %u = %u, input 0 has %u", i, d,
                                t->dims[d], first->dims[d]);
        }
    }
    if (along > UINT32_MAX)
        return eng_fail(c, "the inputs' dimension %d adds up to %llu, past 2^32", axis,
                        (unsigned long long)along);
    dims[axis] = (uint32_t)along;
    eng_set_shape(c->out[0], first->rank, dims);
    return SCHEMA_OK;
}

/* Copies n 8-bit values into the output's quantization: round(q * s + b) + zero point,
 * in float as the reference computes it. */
static void requantize_run(uint8_t *dst, const uint8_t *src, size_t n, const eng_tensor *in,
                           const eng_tensor *out) {
    int32_t qmin = eng_q8_min(in->type), qmax = eng_q8_max(in->type);
    float scale = in->scale * (1.f / out->scale);
    float bias = (float)-in->zero_point * scale;
    for (size_t i = 0; i < n; i++) {
        float v = roundf((float)eng_q8_get(src, i, qmin) * scale + bias) + (float)out->zero_point;
        eng_q8_put(dst, i, eng_f2i_clamp(v, qmin, qmax));
    }
}

static schema_status concat_run(eng_op_ctx *c) {
    uint32_t n = c->n_in - 1;
    eng_tensor *out = c->out[0];
    uint32_t axis = (uint32_t)eng_i32(c->in[n]);
    size_t outer = eng_dims_product(out, 0, axis), es = esize(out);
    uint8_t *dst = out->data;
    for (size_t o = 0; o < outer; o++)
        for (uint32_t i = 0; i < n; i++) {
            const eng_tensor *t = c->in[i];
            size_t inner = eng_dims_product(t, axis, t->rank);
            if (!inner) continue;
            const uint8_t *src = (const uint8_t *)t->data + o * inner * es;
            if (eng_is_quant8(t->type) &&
                (t->scale != out->scale || t->zero_point != out->zero_point))
                requantize_run(dst, src, inner, t, out);
            else
                eng_copy_elems(dst, 1, src, 1, inner, es);
            dst += inner * es;
        }
    return SCHEMA_OK;
}

/* Every element type moves the same way: one kernel for all of them. */
#define MOVE_KERNELS(run)                                                                          \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, run}, {SCHEMA_TENSOR_FLOAT16, run},                                \
            {SCHEMA_TENSOR_QUANT8_ASYMM, run}, {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, run}, {         \
            SCHEMA_TENSOR_INT32, run                                                               \
        }                                                                                          \
    }

ENG_OP_DEF(RESHAPE, reshape_check, reshape_shape, 0, 0, MOVE_KERNELS(reshape_run));
ENG_OP_DEF(DEPTH_TO_SPACE, block_check, block_shape, ENG_INPUT(2), 0, MOVE_KERNELS(block_run));
ENG_OP_DEF(SPACE_TO_DEPTH, block_check, block_shape, ENG_INPUT(2), 0, MOVE_KERNELS(block_run));
ENG_OP_DEF(CONCATENATION, concat_check, concat_shape, 0, 0, MOVE_KERNELS(concat_run));

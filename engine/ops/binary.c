/* SPDX-License-Identifier: Apache-2.0 */
/* binary.c: ADD, MUL, SUB, DIV — broadcast elementwise arithmetic with a fused
 * activation. Float kernels share one walker; 8-bit quantized ADD/SUB and MUL (unsigned,
 * and signed from HAL 1.3) follow the NNAPI reference fixed-point pipelines on stored
 * values. TENSOR_INT32 (HAL 1.3) takes no fused activation, wraps around on overflow, and
 * DIV rounds toward negative infinity with x / 0 = 0 (the reference's choice for an
 * undefined result). */
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/broadcast.h"
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/fused_activation.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"
#include "engine/ops/op_def.h"

enum arith { ARITH_ADD, ARITH_MUL, ARITH_SUB, ARITH_DIV };

static enum arith arith_of(const eng_op_ctx *c) {
    switch (c->def->code) {
    case SCHEMA_OP_MUL: return ARITH_MUL;
    case SCHEMA_OP_SUB: return ARITH_SUB;
    case SCHEMA_OP_DIV: return ARITH_DIV;
    default: return ARITH_ADD;
    }
}

static schema_status binary_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 3, 3, 1, 1);
    if (s) return s;
    const eng_tensor *a = c->in[0];
    if (a->type != c->in[1]->type)
        return eng_fail(c, "inputs have different types (%s, %s)", schema_type_name(a->type),
                        schema_type_name(c->in[1]->type));
    if ((s = eng_check_same_type(c, 0, 0))) return s;
    if ((s = eng_check_activation(c, 2))) return s;
    if ((s = eng_check_rank(c, a, "input 0", 0, 4)) ||
        (s = eng_check_rank(c, c->in[1], "input 1", 0, 4)))
        return s;
    if (eng_is_quant8(a->type) && arith_of(c) == ARITH_DIV)
        return eng_fail(c, "DIV takes no %s", schema_type_name(a->type));
    if (a->type == SCHEMA_TENSOR_INT32 && c->in[2]->data && eng_driver_rules(c) &&
        eng_i32(c->in[2]) != SCHEMA_FUSED_NONE)
        return eng_fail(c, "TENSOR_INT32 takes no fused activation (input 2 is %d)",
                        eng_i32(c->in[2]));
    if ((s = eng_check_type(c, a, "input 0", 5, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                            SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
                            SCHEMA_TENSOR_INT32)))
        return s;
    /* As the reference validates: a quantized product must not reach the output's scale. */
    const eng_tensor *b = c->in[1], *out = c->out[0];
    if (eng_is_quant8(a->type) && arith_of(c) == ARITH_MUL && !(out->scale > a->scale * b->scale))
        return eng_fail(c, "output scale %g must exceed the product of the input scales (%g)",
                        out->scale, a->scale * b->scale);
    return SCHEMA_OK;
}

static schema_status binary_shape(eng_op_ctx *c) {
    return eng_broadcast_shape(c, c->in[0], c->in[1], c->out[0]);
}

typedef struct f32_job {
    const float *a, *b;
    float *out;
    float lo, hi;
    enum arith op;
} f32_job;

static void f32_row(void *ctx, size_t o, size_t ia, size_t sa, size_t ib, size_t sb, size_t n) {
    const f32_job *j = ctx;
    const float *a = j->a + ia, *b = j->b + ib;
    float *out = j->out + o;
    for (size_t k = 0; k < n; k++) {
        float x = a[k * sa], y = b[k * sb], r;
        switch (j->op) {
        case ARITH_ADD: r = x + y; break;
        case ARITH_MUL: r = x * y; break;
        case ARITH_SUB: r = x - y; break;
        default: r = x / y; break;
        }
        out[k] = eng_clampf(r, j->lo, j->hi);
    }
}

static schema_status binary_f32(eng_op_ctx *c) {
    f32_job j = {c->in[0]->data, c->in[1]->data, c->out[0]->data, 0, 0, arith_of(c)};
    eng_act_range_f32(eng_i32(c->in[2]), &j.lo, &j.hi);
    eng_broadcast_walk(c->in[0], c->in[1], c->out[0], f32_row, &j);
    return SCHEMA_OK;
}

static schema_status binary_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, binary_f32);
}

/* ---- TENSOR_INT32 ------------------------------------------------------------------- */

typedef struct i32_job {
    const int32_t *a, *b;
    int32_t *out;
    enum arith op;
} i32_job;

static int32_t floor_div(int32_t x, int32_t y) {
    if (y == 0) return 0;
    if (y == -1) return (int32_t)(0u - (uint32_t)x); /* INT32_MIN / -1 wraps */
    int32_t q = x / y;
    return x % y != 0 && (x < 0) != (y < 0) ? q - 1 : q;
}

static void i32_row(void *ctx, size_t o, size_t ia, size_t sa, size_t ib, size_t sb, size_t n) {
    const i32_job *j = ctx;
    for (size_t k = 0; k < n; k++) {
        int32_t x = j->a[ia + k * sa], y = j->b[ib + k * sb];
        uint32_t ux = (uint32_t)x, uy = (uint32_t)y, r; /* unsigned: overflow wraps */
        switch (j->op) {
        case ARITH_ADD: r = ux + uy; break;
        case ARITH_MUL: r = ux * uy; break;
        case ARITH_SUB: r = ux - uy; break;
        default: r = (uint32_t)floor_div(x, y); break;
        }
        j->out[o + k] = (int32_t)r;
    }
}

static schema_status binary_i32(eng_op_ctx *c) {
    if (eng_i32(c->in[2]) != SCHEMA_FUSED_NONE)
        return eng_fail(c, "TENSOR_INT32 takes no fused activation (input 2 is %d)",
                        eng_i32(c->in[2]));
    i32_job j = {c->in[0]->data, c->in[1]->data, c->out[0]->data, arith_of(c)};
    eng_broadcast_walk(c->in[0], c->in[1], c->out[0], i32_row, &j);
    return SCHEMA_OK;
}

/* ---- 8-bit quantized ----------------------------------------------------------------- */

typedef struct q8_job {
    const void *a, *b;
    void *out;
    int32_t qmin; /* of the one 8-bit type of a, b and out */
    int32_t za, zb, zo, lo, hi;
    int32_t ma, mb, mo; /* multipliers */
    int sa, sb, so;     /* their shifts */
    bool mul, negate_b;
} q8_job;

#define ADD_LEFT_SHIFT 20 /* headroom the reference adds before rescaling */

static void q8_row(void *ctx, size_t o, size_t ia, size_t sa, size_t ib, size_t sb, size_t n) {
    const q8_job *j = ctx;
    for (size_t k = 0; k < n; k++) {
        int32_t x = eng_q8_get(j->a, ia + k * sa, j->qmin) - j->za;
        int32_t y = eng_q8_get(j->b, ib + k * sb, j->qmin) - j->zb, r;
        if (j->mul) {
            r = eng_mul_by_quantized(x * y, j->mo, j->so);
        } else {
            int32_t sx = eng_mul_by_quantized(x * (1 << ADD_LEFT_SHIFT), j->ma, j->sa);
            int32_t sy = eng_mul_by_quantized(y * (1 << ADD_LEFT_SHIFT), j->mb, j->sb);
            r = eng_mul_by_quantized(j->negate_b ? sx - sy : sx + sy, j->mo, j->so);
        }
        eng_q8_put(j->out, o + k, eng_q8_offset(r, j->zo, j->lo, j->hi));
    }
}

static schema_status binary_q8(eng_op_ctx *c) {
    const eng_tensor *a = c->in[0], *b = c->in[1], *out = c->out[0];
    q8_job j = {.a = a->data,
                .b = b->data,
                .out = out->data,
                .qmin = eng_q8_min(out->type),
                .za = a->zero_point,
                .zb = b->zero_point,
                .zo = out->zero_point};
    enum arith op = arith_of(c);
    j.mul = op == ARITH_MUL;
    j.negate_b = op == ARITH_SUB;
    eng_act_range_q8(eng_i32(c->in[2]), out, &j.lo, &j.hi);
    if (j.mul) {
        /* TFLite takes this multiplier wholly in float (the add's below are in double). */
        float real = a->scale * b->scale / out->scale;
        eng_quantize_multiplier((double)real, &j.mo, &j.so);
    } else {
        double twice_max = 2.0 * (a->scale > b->scale ? a->scale : b->scale);
        eng_quantize_multiplier(a->scale / twice_max, &j.ma, &j.sa);
        eng_quantize_multiplier(b->scale / twice_max, &j.mb, &j.sb);
        eng_quantize_multiplier(twice_max / ((1 << ADD_LEFT_SHIFT) * (double)out->scale), &j.mo,
                                &j.so);
    }
    eng_broadcast_walk(a, b, out, q8_row, &j);
    return SCHEMA_OK;
}

#define BINARY_KERNELS                                                                             \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, binary_f32}, {SCHEMA_TENSOR_FLOAT16, binary_f16},                  \
            {SCHEMA_TENSOR_QUANT8_ASYMM, binary_q8},                                               \
            {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, binary_q8}, {                                      \
            SCHEMA_TENSOR_INT32, binary_i32                                                        \
        }                                                                                          \
    }

ENG_OP_DEF(ADD, binary_check, binary_shape, 0, 0, BINARY_KERNELS);
ENG_OP_DEF(MUL, binary_check, binary_shape, 0, 0, BINARY_KERNELS);
ENG_OP_DEF(SUB, binary_check, binary_shape, 0, 0, BINARY_KERNELS);
ENG_OP_DEF(DIV, binary_check, binary_shape, 0, 0, BINARY_KERNELS);

/* SPDX-License-Identifier: Apache-2.0 */
/* elementwise.c: the HAL 1.2 elementwise operations.
 * - unary: ABS, EXP, LOG, NEG, SIN, SQRT, LOGICAL_NOT, CAST, QUANTIZE (RSQRT, which has
 *   8-bit forms since feature level 7, is rsqrt.c's); ABS also on
 *   TENSOR_INT32 (HAL 1.3; |INT32_MIN| saturates to INT32_MAX); CAST from the types HAL 1.3
 *   added to it (BOOL8, the 16-bit and the other 8-bit quantized types) only to the same
 *   type, which copies the stored values whatever the quantization;
 * - broadcast binary: EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL,
 *   LOGICAL_AND, LOGICAL_OR, MAXIMUM, MINIMUM, POW, PRELU;
 * - SELECT (three inputs of one shape).
 *
 * Every operation runs the same loop: elements are gathered in chunks into "lanes" of
 * doubles (exact for every FP32, FP16, INT32, 8-bit quantized and BOOL8 value), a
 * per-operation function of one element computes the result, and the result is stored in
 * the output's type. The element functions reproduce the reference's arithmetic: float
 * math for the float operations, quantized values compared as real values in TFLite's
 * fixed point (each (q - zero point) * 2^8 times its scale as a multiplier and shift:
 * values closer than that resolution compare equal), quantized
 * MAXIMUM/MINIMUM/SELECT requantized to the output in double, and PRELU's integer
 * pipeline. The 8-bit quantized types, unsigned and signed, are one case throughout: lanes
 * hold stored values and results saturate to the output type's range. */
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/broadcast.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/float16.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"

#include <math.h>
#include <string.h>

/* How an 8-bit quantized input enters its lane. */
enum lane_load {
    LOAD_RAW,     /* stored integer (CAST, PRELU's integer pipeline) */
    LOAD_SCALED,  /* the real value in 1/256ths, in TFLite's fixed point (comparisons) */
    LOAD_REQUANT, /* requantized to the output's scale and zero point */
};

/* What the output type must be. */
enum lane_out { OUT_SAME, OUT_BOOL, OUT_QUANT8, OUT_CAST };

typedef struct elem_job elem_job;
typedef double (*lane_fn)(const elem_job *j, const double *v);

typedef struct elem_spec {
    lane_fn fn;                 /* one output element from v[0..arity) */
    lane_fn fn_q8;              /* replaces fn for 8-bit quantized inputs, when set */
    void (*setup)(elem_job *j); /* parameters fn_q8 needs, when set */
    float (*math)(float);       /* for fn == lane_math */
    uint32_t types;             /* bit mask of allowed types of the key input */
    uint8_t arity, load, out;
    bool broadcast;
} elem_spec;

struct elem_job {
    const elem_spec *spec;
    lane_fn fn;
    const eng_tensor *in[3];
    eng_tensor *out;
    /* PRELU quantized: zero points and the multipliers of both branches */
    int32_t zp_in, zp_alpha, zp_out, mul_pos, mul_neg;
    int32_t qmin, qmax; /* the output's range, for an 8-bit quantized output */
    int shift_pos, shift_neg;
    /* LOAD_SCALED: each input's scale as a multiplier and shift */
    int32_t scale_mult[2];
    int scale_shift[2];
};

#define COMPARE_LEFT_SHIFT 8 /* TFLite compares real values in 1/256ths */

#define TYPE_BIT(t) (1u << (t))
#define FLOATS      (TYPE_BIT(SCHEMA_TENSOR_FLOAT32) | TYPE_BIT(SCHEMA_TENSOR_FLOAT16))
#define QUANT8      (TYPE_BIT(SCHEMA_TENSOR_QUANT8_ASYMM) | TYPE_BIT(SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED))
#define NUMERIC     (FLOATS | TYPE_BIT(SCHEMA_TENSOR_INT32) | QUANT8)
#define BOOLS       TYPE_BIT(SCHEMA_TENSOR_BOOL8)
/* CAST converts among these; the types of CAST_IDENTITY only to themselves. */
#define CAST_CONVERTS                                                                              \
    (FLOATS | TYPE_BIT(SCHEMA_TENSOR_INT32) | TYPE_BIT(SCHEMA_TENSOR_QUANT8_ASYMM))
#define CAST_IDENTITY                                                                              \
    (BOOLS | TYPE_BIT(SCHEMA_TENSOR_QUANT16_ASYMM) | TYPE_BIT(SCHEMA_TENSOR_QUANT16_SYMM) |        \
     TYPE_BIT(SCHEMA_TENSOR_QUANT8_SYMM) | TYPE_BIT(SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED))

static bool type_in(int32_t type, uint32_t mask) {
    return type >= 0 && type < 32 && (mask & TYPE_BIT(type));
}

/* ---- element functions --------------------------------------------------------------- */

#define LANE(name, expr)                                                                           \
    static double name(const elem_job *j, const double *v) {                                       \
        (void)j;                                                                                   \
        return (expr);                                                                             \
    }

LANE(lane_math, j->spec->math((float)v[0]))
LANE(lane_neg, -v[0])
LANE(lane_abs, fabs(v[0]))
LANE(lane_not, v[0] == 0)
LANE(lane_copy, v[0])
LANE(lane_less, v[0] < v[1])
LANE(lane_less_equal, v[0] <= v[1])
LANE(lane_equal, v[0] == v[1])
LANE(lane_not_equal, v[0] != v[1])
LANE(lane_greater, v[0] > v[1])
LANE(lane_greater_equal, v[0] >= v[1])
LANE(lane_and, v[0] != 0 && v[1] != 0)
LANE(lane_or, v[0] != 0 || v[1] != 0)
/* The reference's std::max/std::min: the first operand wins unless strictly beaten. */
LANE(lane_max, v[0] < v[1] ? v[1] : v[0])
LANE(lane_min, v[1] < v[0] ? v[1] : v[0])
LANE(lane_pow, powf((float)v[0], (float)v[1]))
LANE(lane_prelu, v[0] >= 0 ? v[0] : (double)((float)v[0] * (float)v[1]))
LANE(lane_select, v[0] != 0 ? v[1] : v[2])

/* QUANTIZE: float math, clamped in the reference's order (so NaN gives qmax). */
static double lane_quantize(const elem_job *j, const double *v) {
    float q = (float)j->out->zero_point + roundf((float)v[0] / j->out->scale);
    q = q < (float)j->qmax ? q : (float)j->qmax;
    return (float)j->qmin < q ? q : (float)j->qmin;
}

/* PRELU quantized: identity branch and alpha branch each rescaled to the output. */
static double lane_prelu_q8(const elem_job *j, const double *v) {
    int32_t x = (int32_t)v[0] - j->zp_in, r;
    if (x >= 0) {
        r = eng_mul_by_quantized(x, j->mul_pos, j->shift_pos);
    } else {
        int32_t alpha = (int32_t)v[1] - j->zp_alpha;
        r = eng_mul_by_quantized(x * alpha, j->mul_neg, j->shift_neg);
    }
    return eng_q8_offset(r, j->zp_out, j->qmin, j->qmax);
}

static void prelu_q8_setup(elem_job *j) {
    const eng_tensor *in = j->in[0], *alpha = j->in[1];
    j->zp_in = in->zero_point;
    j->zp_alpha = alpha->zero_point;
    j->zp_out = j->out->zero_point;
    /* As TensorFlow Lite: both ratios are taken wholly in float. */
    float pos = in->scale / j->out->scale;
    float neg = in->scale * alpha->scale / j->out->scale;
    eng_quantize_multiplier(pos, &j->mul_pos, &j->shift_pos);
    eng_quantize_multiplier(neg, &j->mul_neg, &j->shift_neg);
}

/* ---- operation table ----------------------------------------------------------------- */

#define UNARY(f, mask)                                                                             \
    { .fn = ENG_KERNEL_ONLY(f), .types = (mask), .arity = 1 }
#define MATH(f)                                                                                    \
    { .fn = ENG_KERNEL_ONLY(lane_math), .math = ENG_KERNEL_ONLY(f), .types = FLOATS, .arity = 1 }
#define BCAST(f, mask, ld, o)                                                                      \
    {                                                                                              \
        .fn = ENG_KERNEL_ONLY(f), .types = (mask), .arity = 2, .load = (ld), .out = (o),           \
        .broadcast = true                                                                          \
    }
#define COMPARE(f) BCAST(f, NUMERIC | BOOLS, LOAD_SCALED, OUT_BOOL)

static const elem_spec specs[SCHEMA_OP_COUNT] = {
    [SCHEMA_OP_ABS] = UNARY(lane_abs, FLOATS | TYPE_BIT(SCHEMA_TENSOR_INT32)),
    [SCHEMA_OP_EXP] = MATH(expf),
    [SCHEMA_OP_LOG] = MATH(logf),
    [SCHEMA_OP_SIN] = MATH(sinf),
    [SCHEMA_OP_SQRT] = MATH(sqrtf),
    [SCHEMA_OP_NEG] = UNARY(lane_neg, FLOATS | TYPE_BIT(SCHEMA_TENSOR_INT32)),
    [SCHEMA_OP_LOGICAL_NOT] = UNARY(lane_not, BOOLS),
    [SCHEMA_OP_CAST] = {.fn = ENG_KERNEL_ONLY(lane_copy),
                        .types = CAST_CONVERTS | CAST_IDENTITY,
                        .arity = 1,
                        .out = OUT_CAST},
    [SCHEMA_OP_QUANTIZE] = {.fn = ENG_KERNEL_ONLY(lane_quantize),
                            .types = FLOATS,
                            .arity = 1,
                            .out = OUT_QUANT8},
    [SCHEMA_OP_EQUAL] = COMPARE(lane_equal),
    [SCHEMA_OP_NOT_EQUAL] = COMPARE(lane_not_equal),
    [SCHEMA_OP_GREATER] = COMPARE(lane_greater),
    [SCHEMA_OP_GREATER_EQUAL] = COMPARE(lane_greater_equal),
    [SCHEMA_OP_LESS] = COMPARE(lane_less),
    [SCHEMA_OP_LESS_EQUAL] = COMPARE(lane_less_equal),
    [SCHEMA_OP_LOGICAL_AND] = BCAST(lane_and, BOOLS, LOAD_RAW, OUT_SAME),
    [SCHEMA_OP_LOGICAL_OR] = BCAST(lane_or, BOOLS, LOAD_RAW, OUT_SAME),
    [SCHEMA_OP_MAXIMUM] = BCAST(lane_max, NUMERIC, LOAD_REQUANT, OUT_SAME),
    [SCHEMA_OP_MINIMUM] = BCAST(lane_min, NUMERIC, LOAD_REQUANT, OUT_SAME),
    [SCHEMA_OP_POW] = BCAST(lane_pow, FLOATS, LOAD_RAW, OUT_SAME),
    [SCHEMA_OP_PRELU] = {.fn = ENG_KERNEL_ONLY(lane_prelu),
                         .fn_q8 = ENG_KERNEL_ONLY(lane_prelu_q8),
                         .setup = ENG_KERNEL_ONLY(prelu_q8_setup),
                         .types = FLOATS | QUANT8,
                         .arity = 2,
                         .broadcast = true},
    /* Input 0 is the BOOL8 condition; input 1 carries the type. */
    [SCHEMA_OP_SELECT] = {.fn = ENG_KERNEL_ONLY(lane_select),
                          .types = NUMERIC,
                          .arity = 3,
                          .load = LOAD_REQUANT},
};

static const elem_spec *spec_of(const eng_op_ctx *c) {
    return &specs[c->def->code];
}

/* ---- check and shape ----------------------------------------------------------------- */

static schema_status elem_check(eng_op_ctx *c) {
    const elem_spec *sp = spec_of(c);
    schema_status s = eng_check_count(c, sp->arity, sp->arity, 1, 1);
    if (s) return s;
    uint32_t key = c->def->key_input;
    int32_t type = c->in[key]->type;
    if (!type_in(type, sp->types))
        return eng_fail(c, "input %u has type %s, which this operation does not take", key,
                        schema_type_name(type));
    for (uint32_t i = 0; i < sp->arity; i++) {
        int32_t want = i < key ? SCHEMA_TENSOR_BOOL8 : type; /* SELECT's condition */
        if (c->in[i]->type != want)
            return eng_fail(c, "input %u has type %s, expected %s", i,
                            schema_type_name(c->in[i]->type), schema_type_name(want));
    }
    int32_t out = c->out[0]->type;
    switch (sp->out) {
    case OUT_BOOL: type = SCHEMA_TENSOR_BOOL8; break;
    case OUT_QUANT8:
        if (!type_in(out, QUANT8))
            return eng_fail(c, "output 0 has type %s, expected an 8-bit quantized type",
                            schema_type_name(out));
        type = out;
        break;
    case OUT_CAST:
        if (type_in(type, CAST_IDENTITY)) break; /* to itself only */
        if (!type_in(out, CAST_CONVERTS))
            return eng_fail(c, "output has type %s, which CAST does not produce",
                            schema_type_name(out));
        type = out;
        break;
    default: break;
    }
    if (out != type)
        return eng_fail(c, "output 0 has type %s, expected %s", schema_type_name(out),
                        schema_type_name(type));
    return SCHEMA_OK;
}

static bool same_dims(const eng_tensor *a, const eng_tensor *b) {
    return a->rank == b->rank && memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

static schema_status elem_shape(eng_op_ctx *c) {
    const elem_spec *sp = spec_of(c);
    if (sp->broadcast) return eng_broadcast_shape(c, c->in[0], c->in[1], c->out[0]);
    for (uint32_t i = 1; i < sp->arity; i++)
        if (!same_dims(c->in[0], c->in[i]))
            return eng_fail(c, "input %u does not have the shape of input 0", i);
    eng_copy_shape(c->out[0], c->in[0]);
    return SCHEMA_OK;
}

/* ---- lanes --------------------------------------------------------------------------- */

#define LANE_CHUNK 256

#define GATHER(T)                                                                                  \
    do {                                                                                           \
        const T *p = (const T *)t->data + off;                                                     \
        for (size_t k = 0; k < n; k++)                                                             \
            dst[k][i] = (double)p[k * step];                                                       \
    } while (0)

/* Fills column i of dst with n elements of input i from element off, stride step. */
static void lane_load(const elem_job *j, uint32_t i, size_t off, size_t step, size_t n,
                      double (*dst)[3]) {
    const eng_tensor *t = j->in[i];
    switch (t->type) {
    case SCHEMA_TENSOR_FLOAT32: GATHER(float); return;
    case SCHEMA_TENSOR_FLOAT16: GATHER(eng_half); return;
    case SCHEMA_TENSOR_INT32: GATHER(int32_t); return;
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED: GATHER(int8_t); break;
    default: GATHER(uint8_t); break; /* QUANT8_ASYMM and BOOL8 bytes */
    }
    if (!eng_is_quant8(t->type) || j->spec->load == LOAD_RAW) return;
    const eng_tensor *o = j->out;
    for (size_t k = 0; k < n; k++) {
        if (j->spec->load == LOAD_SCALED) { /* (q - zp) * 2^8, times the scale in fixed point */
            int32_t d = (int32_t)dst[k][i] - t->zero_point;
            dst[k][i] = eng_mul_by_quantized(d * (1 << COMPARE_LEFT_SHIFT), j->scale_mult[i],
                                             j->scale_shift[i]);
            continue;
        }
        /* the real value is computed in float, as the reference does */
        double x = eng_dequantize_value((int32_t)dst[k][i], t->scale, t->zero_point);
        if (j->spec->load == LOAD_REQUANT) {
            x = x / o->scale + o->zero_point;
            x = x < j->qmin ? j->qmin : (x > j->qmax ? j->qmax : round(x));
        }
        dst[k][i] = x;
    }
}

/* Writes n results at element off of t, converting as the reference's casts do: float
 * rounding, truncation toward zero for integers, saturation, NaN as 0 (8-bit quantized:
 * the low end of the range). */
static void lane_store(eng_tensor *t, size_t off, size_t n, const double *r) {
    int32_t qmin = eng_q8_min(t->type), qmax = eng_q8_max(t->type);
    for (size_t k = 0; k < n; k++) {
        double x = r[k];
        switch (t->type) {
        case SCHEMA_TENSOR_FLOAT32: ((float *)t->data)[off + k] = (float)x; break;
        case SCHEMA_TENSOR_FLOAT16: ((eng_half *)t->data)[off + k] = (eng_half)x; break;
        case SCHEMA_TENSOR_INT32:
            x = x != x ? 0 : (x < INT32_MIN ? INT32_MIN : (x > INT32_MAX ? INT32_MAX : x));
            ((int32_t *)t->data)[off + k] = (int32_t)x;
            break;
        case SCHEMA_TENSOR_BOOL8: ((uint8_t *)t->data)[off + k] = x != 0; break;
        default: /* 8-bit quantized */
            x = x > qmin ? (x < qmax ? x : qmax) : qmin;
            eng_q8_put(t->data, off + k, (int32_t)x);
            break;
        }
    }
}

/* n output elements from off: input i starts at in_off[i] and advances by step[i]. */
static void run_span(const elem_job *j, size_t off, const size_t *in_off, const size_t *step,
                     size_t n) {
    double lanes[LANE_CHUNK][3], res[LANE_CHUNK];
    for (size_t done = 0; done < n;) {
        size_t m = n - done < LANE_CHUNK ? n - done : LANE_CHUNK;
        for (uint32_t i = 0; i < j->spec->arity; i++)
            lane_load(j, i, in_off[i] + done * step[i], step[i], m, lanes);
        for (size_t k = 0; k < m; k++)
            res[k] = j->fn(j, lanes[k]);
        lane_store(j->out, off + done, m, res);
        done += m;
    }
}

static void bcast_row(void *ctx, size_t o, size_t ia, size_t sa, size_t ib, size_t sb, size_t n) {
    size_t in_off[3] = {ia, ib, 0}, step[3] = {sa, sb, 0};
    run_span(ctx, o, in_off, step, n);
}

static schema_status elem_run(eng_op_ctx *c) {
    const elem_spec *sp = spec_of(c);
    eng_tensor *out = c->out[0];
    elem_job j = {.spec = sp,
                  .fn = sp->fn,
                  .out = out,
                  .qmin = eng_q8_min(out->type),
                  .qmax = eng_q8_max(out->type)};
    for (uint32_t i = 0; i < sp->arity; i++)
        j.in[i] = c->in[i];
    if (sp->load == LOAD_SCALED)
        for (uint32_t i = 0; i < 2; i++)
            eng_quantize_multiplier(c->in[i]->scale, &j.scale_mult[i], &j.scale_shift[i]);
    if (sp->fn_q8 && eng_is_quant8(c->in[c->def->key_input]->type)) {
        j.fn = sp->fn_q8;
        sp->setup(&j);
    }
    if (sp->broadcast) {
        eng_broadcast_walk(c->in[0], c->in[1], c->out[0], bcast_row, &j);
    } else {
        size_t in_off[3] = {0, 0, 0}, step[3] = {1, 1, 1};
        run_span(&j, 0, in_off, step, eng_elems(c->out[0]));
    }
    return SCHEMA_OK;
}

/* CAST of a type to itself (CAST_IDENTITY): the stored bytes. */
static schema_status cast_copy(eng_op_ctx *c) {
    size_t n = eng_elems(c->out[0]) * schema_type_size(c->out[0]->type);
    if (n) memcpy(c->out[0]->data, c->in[0]->data, n);
    return SCHEMA_OK;
}

#define ELEM_KERNELS                                                                               \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, elem_run}, {SCHEMA_TENSOR_FLOAT16, elem_run},                      \
            {SCHEMA_TENSOR_INT32, elem_run}, {SCHEMA_TENSOR_QUANT8_ASYMM, elem_run},               \
            {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, elem_run}, {                                       \
            SCHEMA_TENSOR_BOOL8, elem_run                                                          \
        }                                                                                          \
    }

ENG_OP_DEF(ABS, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(EXP, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(LOG, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(NEG, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(SIN, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(SQRT, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(LOGICAL_NOT, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
/* The numeric types convert; every other type check() lets through casts to itself. */
ENG_OP_DEF(CAST, elem_check, elem_shape, 0, 0,
           {{SCHEMA_TENSOR_FLOAT32, elem_run},
            {SCHEMA_TENSOR_FLOAT16, elem_run},
            {SCHEMA_TENSOR_INT32, elem_run},
            {SCHEMA_TENSOR_QUANT8_ASYMM, elem_run},
            {ENG_KERNEL_ANY_TYPE, cast_copy}});
ENG_OP_DEF(QUANTIZE, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(EQUAL, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(NOT_EQUAL, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(GREATER, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(GREATER_EQUAL, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(LESS, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(LESS_EQUAL, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(LOGICAL_AND, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(LOGICAL_OR, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(MAXIMUM, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(MINIMUM, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(POW, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(PRELU, elem_check, elem_shape, 0, 0, ELEM_KERNELS);
ENG_OP_DEF(SELECT, elem_check, elem_shape, 0, 1, ELEM_KERNELS);

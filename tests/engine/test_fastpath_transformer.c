/* SPDX-License-Identifier: Apache-2.0 */
/* test_fastpath_transformer (unit): the XNNPACK fast paths of transformer blocks against
 * the reference kernels, the oracle. Each model runs once with NND_REFERENCE_KERNELS=1
 * and once without, and every step expected on the fast path must have taken it:
 * - BATCH_MATMUL, FLOAT32 and TENSOR_QUANT8_ASYMM_SIGNED, ranks 2 to 4, every pair of
 *   adj flags, input 1 constant (packed at prepare) or a model input (packed per run);
 *   a signed input 1 with a zero point other than 0, and slices packing would swell,
 *   stay on the reference.
 * - SUB with broadcasting, FLOAT32, TENSOR_QUANT8_ASYMM and signed, fused activations;
 *   FLOAT32 DIV with the same shapes, bit for bit.
 * - SOFTMAX on the last axis: FLOAT32 (beta 1; another beta stays on the reference) and
 *   TENSOR_QUANT8_ASYMM (any beta).
 * - FLOAT32 TANH alone, in a GELU chain (MUL, ADD, TANH) and in a feed-forward block
 *   (BATCH_MATMUL, TANH, BATCH_MATMUL).
 * - FLOAT32 MEAN over the trailing axes (repeated and negative axes, keep_dims either way);
 *   other axis sets (spatial ones among them) and 8-bit MEAN stay on the reference.
 *   FLOAT32 RSQRT and SQRT bit for bit (NaN and infinity included), a layer norm of MEAN, SUB,
 *   MUL, ADD, RSQRT, and a conformer convolution module (DEPTHWISE_CONV_2D 1 x 31 along a
 *   sequence, swish, FULLY_CONNECTED), every step fast.
 * - FLOAT32 DEPTHWISE_CONV_2D with windows wider than XNNPACK's kernels (26 taps and more):
 *   batches, 2D windows, strides, dilations, uneven padding, channel tails, activations.
 * FLOAT32 agrees to 1e-4 relative over 1 for products and sums (XNNPACK adds in another
 * order), to the conformance vectors' float32 tolerance (1e-5 + 5.96e-7 |x|) for TANH and
 * SOFTMAX, bit for bit for SUB; 8-bit results within one step. And one prepared
 * BATCH_MATMUL with packed weights executed from two threads at once gives the single
 * execution's result. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/core/internal.h"
#include "engine/ops_common/image_geometry.h"

#define MAX_OPERANDS 64
#define MAX_OPS      16
#define MAX_OP_IN    14
#define VALUES       (1u << 20)

typedef struct model {
    eng_operand_desc o[MAX_OPERANDS];
    uint32_t n;
    uint8_t *values;
    size_t n_values;
    eng_operation_desc ops[MAX_OPS];
    uint32_t op_in[MAX_OPS][MAX_OP_IN], op_out[MAX_OPS], n_ops;
    uint32_t inputs[2], n_inputs, output;
    void *input_data[2];
    bool want_fast[MAX_OPS]; /* per operation: must take the fast path */
    bool loose;              /* products and sums: 1e-4 relative over 1 */
    bool exact;              /* bit for bit */
} model;

static float frnd(float lo, float hi) {
    return lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
}

static size_t elems(const eng_operand_desc *o) {
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++)
        n *= o->dims[i];
    return n;
}

static bool quantized(int32_t t) {
    return t == SCHEMA_TENSOR_QUANT8_ASYMM || t == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
}

/* Random contents: floats in [-range, range], or any stored 8-bit value. */
static void fill(void *p, int32_t type, size_t n, float range) {
    for (size_t i = 0; i < n; i++) {
        if (type == SCHEMA_TENSOR_FLOAT32)
            ((float *)p)[i] = frnd(-range, range);
        else
            ((uint8_t *)p)[i] = (uint8_t)(rand() & 0xff);
    }
}

static uint32_t tensor(model *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                       int32_t zp, uint32_t lifetime) {
    assert_true(m->n < MAX_OPERANDS);
    eng_operand_desc *o = &m->o[m->n];
    *o = (eng_operand_desc){
        .type = type, .rank = rank, .scale = scale, .zero_point = zp, .lifetime = lifetime};
    if (rank) memcpy(o->dims, dims, sizeof(uint32_t) * rank);
    return m->n++;
}

static uint32_t bytes_constant(model *m, int32_t type, uint32_t rank, const uint32_t *dims,
                               float scale, int32_t zp, const void *v, size_t bytes) {
    uint32_t i = tensor(m, type, rank, dims, scale, zp, SCHEMA_CONSTANT_COPY);
    m->n_values = (m->n_values + 7) & ~(size_t)7;
    assert_true(m->n_values + bytes <= VALUES);
    m->o[i].offset = m->n_values, m->o[i].length = bytes;
    if (v)
        memcpy(m->values + m->n_values, v, bytes);
    else
        fill(m->values + m->n_values, type, bytes / schema_type_size(type), 1.f);
    m->n_values += bytes;
    return i;
}

/* A constant tensor of random contents. */
static uint32_t constant(model *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                         int32_t zp) {
    eng_operand_desc d = {.rank = rank};
    memcpy(d.dims, dims, sizeof(uint32_t) * rank);
    return bytes_constant(m, type, rank, dims, scale, zp, NULL, elems(&d) * schema_type_size(type));
}

static uint32_t scalar_i32(model *m, int32_t v) {
    return bytes_constant(m, SCHEMA_INT32, 0, NULL, 0, 0, &v, sizeof v);
}
static uint32_t scalar_f32(model *m, float v) {
    return bytes_constant(m, SCHEMA_FLOAT32, 0, NULL, 0, 0, &v, sizeof v);
}
static uint32_t scalar_bool(model *m, bool v) {
    uint8_t b = v;
    return bytes_constant(m, SCHEMA_BOOL, 0, NULL, 0, 0, &b, 1);
}
static uint32_t f32_const(model *m, float v) {
    return bytes_constant(m, SCHEMA_TENSOR_FLOAT32, 1, (uint32_t[]){1}, 0, 0, &v, sizeof v);
}

static uint32_t input(model *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                      int32_t zp) {
    uint32_t i = tensor(m, type, rank, dims, scale, zp, SCHEMA_MODEL_INPUT);
    m->inputs[m->n_inputs++] = i;
    return i;
}

/* Appends an operation writing `out`; the last one's output is the model's. */
static uint32_t op(model *m, int32_t code, uint32_t n_in, const uint32_t *in, uint32_t out,
                   bool fast) {
    assert_true(m->n_ops < MAX_OPS && n_in <= MAX_OP_IN);
    uint32_t k = m->n_ops++;
    memcpy(m->op_in[k], in, sizeof(uint32_t) * n_in);
    m->op_out[k] = out;
    m->ops[k] = (eng_operation_desc){code, n_in, m->op_in[k], 1, &m->op_out[k]};
    m->want_fast[k] = fast;
    m->o[out].lifetime = SCHEMA_TEMPORARY;
    m->output = out;
    return out;
}

static eng_prepared *prepare(model *m, bool reference) {
    if (reference)
        setenv("NND_REFERENCE_KERNELS", "1", 1);
    else
        unsetenv("NND_REFERENCE_KERNELS");
    m->o[m->output].lifetime = SCHEMA_MODEL_OUTPUT;
    eng_model_desc d = {.n_operands = m->n,
                        .operands = m->o,
                        .n_operations = m->n_ops,
                        .operations = m->ops,
                        .n_inputs = m->n_inputs,
                        .inputs = m->inputs,
                        .n_outputs = 1,
                        .outputs = &m->output,
                        .operand_values = m->values,
                        .operand_values_len = m->n_values};
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    if (eng_prepare(&d, &p, err, sizeof err)) fail_msg("prepare: %s", err);
    return p;
}

/* Runs the model; checks which steps took the fast path when not `reference`. */
static void run(model *m, bool reference, void *output, size_t out_bytes) {
    eng_prepared *p = prepare(m, reference);
    assert_int_equal(p->n_steps, m->n_ops);
    for (uint32_t s = 0; s < p->n_steps; s++) {
        bool fast = p->steps[s].backend != NULL, want = !reference && m->want_fast[s];
        if (fast != want)
            fail_msg("step %u (%s): %s the fast path", s, schema_operation_name(m->ops[s].type),
                     fast ? "took" : "did not take");
    }
    eng_io in[2] = {{0}}, out = {.data = output, .length = out_bytes};
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        const eng_operand_desc *o = &m->o[m->inputs[i]];
        in[i].data = m->input_data[i];
        in[i].length = elems(o) * schema_type_size(o->type);
    }
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    char err[SCHEMA_ERR_LEN] = "";
    if (eng_exec_run(e, in, &out, NULL, NULL, err, sizeof err) != SCHEMA_OK)
        fail_msg("execute: %s", err);
    eng_exec_free(e);
    eng_prepared_free(p);
}

static double value(int32_t type, const void *v, size_t k) {
    switch (type) {
    case SCHEMA_TENSOR_FLOAT32: return ((const float *)v)[k];
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED: return ((const int8_t *)v)[k];
    default: return ((const uint8_t *)v)[k];
    }
}

/* Fills the inputs (floats in [-range, range]), runs both ways, compares every element. */
static void check(model *m, const char *what, float range) {
    const eng_operand_desc *o = &m->o[m->output];
    size_t n = elems(o), esize = schema_type_size(o->type);
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        const eng_operand_desc *x = &m->o[m->inputs[i]];
        m->input_data[i] = malloc(elems(x) * schema_type_size(x->type));
        assert_non_null(m->input_data[i]);
        fill(m->input_data[i], x->type, elems(x), range);
    }
    uint8_t *want = calloc(n, esize), *got = calloc(n, esize);
    assert_true(want && got);
    run(m, true, want, n * esize);
    run(m, false, got, n * esize);
    for (size_t k = 0; k < n; k++) {
        double x = value(o->type, want, k), y = value(o->type, got, k);
        double tol = quantized(o->type) ? 1
                     : m->exact         ? 0
                     : m->loose         ? 1e-4 * fmax(1, fabs(x))
                                        : 1e-5 + 5.96e-7 * fabs(x);
        if (x != y && !(fabs(x - y) <= tol) && !(m->exact && isnan(x) && isnan(y)))
            fail_msg("%s: element %zu of %zu: reference %.9g, fast %.9g", what, k, n, x, y);
    }
    for (uint32_t i = 0; i < m->n_inputs; i++)
        free(m->input_data[i]);
    free(want), free(got);
}

static model *new_model(void) {
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->values = malloc(VALUES);
    assert_non_null(m->values);
    return m;
}

static void free_model(model *m) {
    free(m->values), free(m);
}

/* ---- BATCH_MATMUL ---------------------------------------------------------------------- */

typedef struct mm_shape {
    uint32_t rank, batch[2], rows, depth, cols;
} mm_shape;

static const mm_shape mm_shapes[] = {{2, {1, 1}, 5, 7, 3},    {2, {1, 1}, 1, 1, 1},
                                     {3, {2, 1}, 9, 16, 11},  {3, {1, 1}, 64, 256, 96},
                                     {4, {2, 3}, 4, 33, 6},   {4, {1, 2}, 17, 8, 40},
                                     {3, {3, 1}, 1, 100, 19}, {2, {1, 1}, 128, 64, 128}};

/* x [.., rows, depth] (transposed for adj_x) by y [.., depth, cols] (transposed for
 * adj_y); y a constant or a second input. Signed: y's zero point is y_zp. */
static void mm_model(model *m, const mm_shape *s, int32_t t, bool ax, bool ay, bool y_const,
                     int32_t y_zp, bool fast) {
    uint32_t xd[4], yd[4], od[4], r = s->rank;
    for (uint32_t d = 0; d + 2 < r; d++)
        xd[d] = yd[d] = od[d] = s->batch[d];
    xd[r - 2] = ax ? s->depth : s->rows, xd[r - 1] = ax ? s->rows : s->depth;
    yd[r - 2] = ay ? s->cols : s->depth, yd[r - 1] = ay ? s->depth : s->cols;
    od[r - 2] = s->rows, od[r - 1] = s->cols;
    bool q = quantized(t);
    float sx = q ? 0.05f : 0, sy = q ? 0.02f : 0;
    float so = q ? sx * sy * 150.f * sqrtf((float)s->depth) : 0; /* a few dozen steps */
    uint32_t x = input(m, t, r, xd, sx, q ? (int32_t)(rand() % 40) - 20 : 0);
    uint32_t y = y_const ? constant(m, t, r, yd, sy, y_zp) : input(m, t, r, yd, sy, y_zp);
    uint32_t out = tensor(m, t, r, od, so, q ? 3 : 0, SCHEMA_TEMPORARY);
    op(m, SCHEMA_OP_BATCH_MATMUL, 4, (uint32_t[]){x, y, scalar_bool(m, ax), scalar_bool(m, ay)},
       out, fast);
    m->loose = true;
}

static void batch_matmul_agrees(void **state) {
    (void)state;
    srand(3);
    static const int32_t types[] = {SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED};
    for (size_t i = 0; i < sizeof mm_shapes / sizeof mm_shapes[0]; i++)
        for (int t = 0; t < 2; t++)
            for (int flags = 0; flags < 8; flags++) {
                bool ax = flags & 1, ay = flags & 2, y_const = flags & 4;
                model *m = new_model();
                mm_model(m, &mm_shapes[i], types[t], ax, ay, y_const, 0, true);
                char what[128];
                snprintf(what, sizeof what, "BATCH_MATMUL %s shape %zu adj_x %d adj_y %d %s",
                         schema_type_name(types[t]), i, ax, ay, y_const ? "constant" : "input");
                check(m, what, 2.f);
                free_model(m);
            }
}

/* XNNPACK's signed weights are symmetric: another zero point stays on the reference. */
static void signed_batch_matmul_with_zero_point_stays_reference(void **state) {
    (void)state;
    for (int y_const = 0; y_const < 2; y_const++) {
        model *m = new_model();
        mm_model(m, &mm_shapes[2], SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, false, true, y_const, 5,
                 false);
        check(m, "BATCH_MATMUL signed, input 1 zero point 5", 2.f);
        free_model(m);
    }
}

/* Many one-column slices would grow sixteen times over when packed: they stay on the
 * reference. */
static void narrow_batch_matmul_stays_reference(void **state) {
    (void)state;
    static const mm_shape narrow = {3, {512, 1}, 2, 64, 1};
    model *m = new_model();
    mm_model(m, &narrow, SCHEMA_TENSOR_FLOAT32, false, false, true, 0, false);
    check(m, "BATCH_MATMUL, 512 one-column slices", 2.f);
    free_model(m);
}

/* ---- SUB, SOFTMAX, TANH ------------------------------------------------------------------ */

static void sub_agrees(void **state) {
    (void)state;
    srand(5);
    static const int32_t types[] = {SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_QUANT8_ASYMM,
                                    SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED};
    static const struct {
        uint32_t ra, a[4], rb, b[4], ro, o[4];
    } shapes[] = {{4, {2, 3, 4, 5}, 2, {4, 1}, 4, {2, 3, 4, 5}},
                  {2, {1, 5}, 3, {3, 1, 5}, 3, {3, 1, 5}},
                  {3, {128, 1, 64}, 1, {64}, 3, {128, 1, 64}},
                  {1, {1}, 2, {7, 9}, 2, {7, 9}}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int t = 0; t < 3; t++)
            for (int32_t act = 0; act < 4; act++) {
                model *m = new_model();
                int32_t ty = types[t], zlo = ty == SCHEMA_TENSOR_QUANT8_ASYMM ? 0 : -128;
                bool q = quantized(ty);
                uint32_t a = input(m, ty, shapes[i].ra, shapes[i].a, q ? 0.03f : 0,
                                   q ? zlo + rand() % 256 : 0);
                uint32_t b = input(m, ty, shapes[i].rb, shapes[i].b, q ? 0.05f : 0,
                                   q ? zlo + rand() % 256 : 0);
                uint32_t o = tensor(m, ty, shapes[i].ro, shapes[i].o, q ? 0.06f : 0,
                                    q ? zlo + 128 : 0, SCHEMA_TEMPORARY);
                op(m, SCHEMA_OP_SUB, 3, (uint32_t[]){a, b, scalar_i32(m, act)}, o, true);
                m->exact = !q;
                char what[96];
                snprintf(what, sizeof what, "SUB %s shapes %zu activation %d", schema_type_name(ty),
                         i, act);
                check(m, what, 2.f);
                free_model(m);
                if (q) continue;
                /* DIV, FLOAT32 only: IEEE division, bit for bit (infinities and NaN of
                 * tiny divisors included). */
                m = new_model();
                a = input(m, ty, shapes[i].ra, shapes[i].a, 0, 0);
                b = input(m, ty, shapes[i].rb, shapes[i].b, 0, 0);
                o = tensor(m, ty, shapes[i].ro, shapes[i].o, 0, 0, SCHEMA_TEMPORARY);
                op(m, SCHEMA_OP_DIV, 3, (uint32_t[]){a, b, scalar_i32(m, act)}, o, true);
                m->exact = true;
                snprintf(what, sizeof what, "DIV shapes %zu activation %d", i, act);
                check(m, what, 2.f);
                free_model(m);
            }
}

static void softmax_agrees(void **state) {
    (void)state;
    srand(7);
    static const struct {
        int32_t type;
        uint32_t rank, dims[4];
        float beta;
        int32_t axis; /* 99: omitted */
        bool fast;
        float scale; /* the 8-bit input's; 0: 0.1 */
    } cases[] = {
        {SCHEMA_TENSOR_FLOAT32, 2, {4, 1000}, 1.f, 99, true, 0},
        {SCHEMA_TENSOR_FLOAT32, 4, {1, 8, 128, 128}, 1.f, -1, true, 0},
        {SCHEMA_TENSOR_FLOAT32, 3, {2, 3, 17}, 1.f, 2, true, 0},
        {SCHEMA_TENSOR_FLOAT32, 2, {4, 10}, 0.5f, 99, false, 0},  /* beta: reference */
        {SCHEMA_TENSOR_FLOAT32, 3, {2, 3, 17}, 1.f, 1, false, 0}, /* another axis: reference */
        {SCHEMA_TENSOR_QUANT8_ASYMM, 2, {4, 1000}, 1.f, 99, true, 0},
        {SCHEMA_TENSOR_QUANT8_ASYMM, 3, {2, 16, 64}, 0.7f, -1, true, 0},
        {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, 2, {3, 50}, 1.f, 99, false, 0}, /* no qs8 operator */
        /* Rows whose equal exponentials would wrap XNNPACK's 32-bit sum: the reference.
         * A tiny input scale makes every exponential equal (the fuzzer's abort, 2^18
         * channels); 513 channels is the first count it rounds up. */
        {SCHEMA_TENSOR_QUANT8_ASYMM, 2, {2, 1024}, 1.f, 99, false, 1e-30f},
        {SCHEMA_TENSOR_QUANT8_ASYMM, 2, {1, 262144}, 1.f, 99, false, 1.5e-38f},
        {SCHEMA_TENSOR_QUANT8_ASYMM, 2, {3, 513}, 1.f, 99, false, 0},
        {SCHEMA_TENSOR_QUANT8_ASYMM, 2, {3, 512}, 1.f, 99, true, 1e-30f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model *m = new_model();
        int32_t t = cases[i].type;
        bool q = quantized(t);
        int32_t zo = t == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED ? -128 : 0;
        float scale = cases[i].scale ? cases[i].scale : 0.1f;
        uint32_t x = input(m, t, cases[i].rank, cases[i].dims, q ? scale : 0, q ? 128 + zo : 0);
        uint32_t y =
            tensor(m, t, cases[i].rank, cases[i].dims, q ? 1.f / 256 : 0, zo, SCHEMA_TEMPORARY);
        uint32_t in[3] = {x, scalar_f32(m, cases[i].beta), 0};
        if (cases[i].axis != 99) in[2] = scalar_i32(m, cases[i].axis);
        op(m, SCHEMA_OP_SOFTMAX, cases[i].axis != 99 ? 3 : 2, in, y, cases[i].fast);
        char what[64];
        snprintf(what, sizeof what, "SOFTMAX case %zu", i);
        check(m, what, 5.f);
        free_model(m);
    }
}

static void tanh_agrees(void **state) {
    (void)state;
    srand(9);
    static const float ranges[] = {1e-3f, 1.f, 4.f, 30.f};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        model *m = new_model();
        uint32_t x = input(m, SCHEMA_TENSOR_FLOAT32, 3, (uint32_t[]){3, 33, 129}, 0, 0);
        uint32_t y =
            tensor(m, SCHEMA_TENSOR_FLOAT32, 3, (uint32_t[]){3, 33, 129}, 0, 0, SCHEMA_TEMPORARY);
        op(m, SCHEMA_OP_TANH, 1, &x, y, true);
        check(m, "TANH", ranges[i]);
        free_model(m);
    }
}

/* 0.5 x (1 + tanh(0.7978845608 (x + 0.044715 x^3))): every step on the fast path. */
static void gelu_chain_agrees(void **state) {
    (void)state;
    srand(13);
    model *m = new_model();
    uint32_t dims[2] = {16, 256};
    uint32_t x = input(m, SCHEMA_TENSOR_FLOAT32, 2, dims, 0, 0), none = scalar_i32(m, 0);
#define T() tensor(m, SCHEMA_TENSOR_FLOAT32, 2, dims, 0, 0, SCHEMA_TEMPORARY)
    uint32_t x2 = op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){x, x, none}, T(), true);
    uint32_t x3 = op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){x2, x, none}, T(), true);
    uint32_t k3 =
        op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){x3, f32_const(m, 0.044715f), none}, T(), true);
    uint32_t in = op(m, SCHEMA_OP_ADD, 3, (uint32_t[]){x, k3, none}, T(), true);
    uint32_t sc =
        op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){in, f32_const(m, 0.7978845608f), none}, T(), true);
    uint32_t th = op(m, SCHEMA_OP_TANH, 1, &sc, T(), true);
    uint32_t p1 = op(m, SCHEMA_OP_ADD, 3, (uint32_t[]){th, f32_const(m, 1.f), none}, T(), true);
    uint32_t px = op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){p1, x, none}, T(), true);
    op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){px, f32_const(m, 0.5f), none}, T(), true);
#undef T
    check(m, "GELU chain", 3.f);
    free_model(m);
}

/* A feed-forward block: [1, 32, 64] by constant [1, 64, 128], TANH, by [1, 128, 64]. */
static void feed_forward_block_agrees(void **state) {
    (void)state;
    srand(17);
    model *m = new_model();
    uint32_t f = scalar_bool(m, false);
    uint32_t x = input(m, SCHEMA_TENSOR_FLOAT32, 3, (uint32_t[]){1, 32, 64}, 0, 0);
    uint32_t w1 = constant(m, SCHEMA_TENSOR_FLOAT32, 3, (uint32_t[]){1, 64, 128}, 0, 0);
    uint32_t w2 = constant(m, SCHEMA_TENSOR_FLOAT32, 3, (uint32_t[]){1, 128, 64}, 0, 0);
    uint32_t h =
        tensor(m, SCHEMA_TENSOR_FLOAT32, 3, (uint32_t[]){1, 32, 128}, 0, 0, SCHEMA_TEMPORARY);
    uint32_t a =
        tensor(m, SCHEMA_TENSOR_FLOAT32, 3, (uint32_t[]){1, 32, 128}, 0, 0, SCHEMA_TEMPORARY);
    uint32_t y =
        tensor(m, SCHEMA_TENSOR_FLOAT32, 3, (uint32_t[]){1, 32, 64}, 0, 0, SCHEMA_TEMPORARY);
    op(m, SCHEMA_OP_BATCH_MATMUL, 4, (uint32_t[]){x, w1, f, f}, h, true);
    op(m, SCHEMA_OP_TANH, 1, &h, a, true);
    op(m, SCHEMA_OP_BATCH_MATMUL, 4, (uint32_t[]){a, w2, f, f}, y, true);
    m->loose = true;
    check(m, "feed-forward block", 1.f);
    free_model(m);
}

/* ---- layer norm statistics and the convolution module --------------------------------- */

static void mean_agrees(void **state) {
    (void)state;
    srand(23);
    static const struct {
        int32_t type;
        uint32_t rank, dims[4], n_axes;
        int32_t axes[3], keep;
        bool fast;
    } cases[] = {
        {SCHEMA_TENSOR_FLOAT32, 2, {33, 144}, 1, {1}, 1, true},
        {SCHEMA_TENSOR_FLOAT32, 2, {33, 144}, 1, {-1}, 0, true},
        {SCHEMA_TENSOR_FLOAT32, 4, {2, 5, 7, 16}, 2, {3, 2}, 1, true},
        {SCHEMA_TENSOR_FLOAT32, 4, {2, 5, 7, 16}, 3, {3, -2, 3}, 0, true},
        {SCHEMA_TENSOR_FLOAT32, 3, {4, 6, 10}, 3, {0, 1, 2}, 1, true},
        {SCHEMA_TENSOR_FLOAT32, 4, {2, 5, 7, 16}, 2, {1, 2}, 1, false}, /* spatial */
        {SCHEMA_TENSOR_FLOAT32, 3, {4, 6, 10}, 2, {0, 2}, 1, false},    /* not one run */
        {SCHEMA_TENSOR_QUANT8_ASYMM, 2, {8, 32}, 1, {1}, 1, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model *m = new_model();
        float scale = cases[i].type == SCHEMA_TENSOR_FLOAT32 ? 0.f : 0.05f;
        int32_t zp = cases[i].type == SCHEMA_TENSOR_FLOAT32 ? 0 : 128;
        uint32_t x = input(m, cases[i].type, cases[i].rank, cases[i].dims, scale, zp);
        uint32_t axes = bytes_constant(m, SCHEMA_TENSOR_INT32, 1, (uint32_t[]){cases[i].n_axes}, 0,
                                       0, cases[i].axes, sizeof(int32_t) * cases[i].n_axes);
        uint32_t dims[4], rank = 0;
        for (uint32_t k = 0; k < cases[i].rank; k++) {
            bool reduced = false;
            for (uint32_t a = 0; a < cases[i].n_axes; a++)
                reduced |= (uint32_t)((cases[i].axes[a] + (int32_t)cases[i].rank) %
                                      (int32_t)cases[i].rank) == k;
            if (!reduced || cases[i].keep) dims[rank++] = reduced ? 1 : cases[i].dims[k];
        }
        uint32_t y = tensor(m, cases[i].type, rank, dims, scale, zp, SCHEMA_TEMPORARY);
        op(m, SCHEMA_OP_MEAN, 3, (uint32_t[]){x, axes, scalar_i32(m, cases[i].keep)}, y,
           cases[i].fast);
        char what[32];
        snprintf(what, sizeof what, "MEAN case %zu", i);
        check(m, what, 1.f);
        free_model(m);
    }
}

/* RSQRT (square root then division, each correctly rounded) and SQRT: the reference's
 * bits over magnitudes from subnormal to huge, NaN for the negative inputs included. */
static void rsqrt_agrees(void **state) {
    (void)state;
    srand(29);
    uint32_t sizes[] = {1, 17, 64, 1000};
    float ranges[] = {4.f, 1e-3f, 1e30f, 1e-39f};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        model *m = new_model();
        uint32_t x = input(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){sizes[i], 1}, 0, 0);
        op(m, SCHEMA_OP_RSQRT, 1, &x,
           tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){sizes[i], 1}, 0, 0, SCHEMA_TEMPORARY),
           true);
        m->exact = true;
        check(m, "RSQRT", ranges[i]);
        free_model(m);
        m = new_model();
        x = input(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){sizes[i], 1}, 0, 0);
        op(m, SCHEMA_OP_SQRT, 1, &x,
           tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){sizes[i], 1}, 0, 0, SCHEMA_TEMPORARY),
           true);
        m->exact = true;
        check(m, "SQRT", ranges[i]);
        free_model(m);
    }
}

/* (x - mean) / sqrt(var + eps) over the last axis of [64, 144]: every step fast. */
static void layer_norm_agrees(void **state) {
    (void)state;
    srand(31);
    model *m = new_model();
    uint32_t dims[2] = {64, 144}, col[2] = {64, 1};
    uint32_t x = input(m, SCHEMA_TENSOR_FLOAT32, 2, dims, 0, 0), none = scalar_i32(m, 0);
    int32_t last = -1;
    uint32_t axes = bytes_constant(m, SCHEMA_TENSOR_INT32, 1, (uint32_t[]){1}, 0, 0, &last, 4);
    uint32_t keep = scalar_i32(m, 1);
#define T(d) tensor(m, SCHEMA_TENSOR_FLOAT32, 2, d, 0, 0, SCHEMA_TEMPORARY)
    uint32_t mean = op(m, SCHEMA_OP_MEAN, 3, (uint32_t[]){x, axes, keep}, T(col), true);
    uint32_t c = op(m, SCHEMA_OP_SUB, 3, (uint32_t[]){x, mean, none}, T(dims), true);
    uint32_t sq = op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){c, c, none}, T(dims), true);
    uint32_t var = op(m, SCHEMA_OP_MEAN, 3, (uint32_t[]){sq, axes, keep}, T(col), true);
    uint32_t ve =
        op(m, SCHEMA_OP_ADD, 3, (uint32_t[]){var, f32_const(m, 1e-5f), none}, T(col), true);
    uint32_t r = op(m, SCHEMA_OP_RSQRT, 1, &ve, T(col), true);
    op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){c, r, none}, T(dims), true);
#undef T
    m->loose = true;
    check(m, "layer norm", 2.f);
    free_model(m);
}

/* A conformer's convolution module past its GLU: DEPTHWISE_CONV_2D 1 x 31 along a sequence
 * [1, 1, 64, 144] (padding 15 each side), swish (LOGISTIC, MUL), FULLY_CONNECTED. */
static void convolution_module_agrees(void **state) {
    (void)state;
    srand(37);
    model *m = new_model();
    uint32_t seq[4] = {1, 1, 64, 144};
    uint32_t x = input(m, SCHEMA_TENSOR_FLOAT32, 4, seq, 0, 0), none = scalar_i32(m, 0);
    uint32_t filt = constant(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){1, 1, 31, 144}, 0, 0);
    uint32_t bias = constant(m, SCHEMA_TENSOR_FLOAT32, 1, (uint32_t[]){144}, 0, 0);
    uint32_t pad = scalar_i32(m, 15), zero = scalar_i32(m, 0), one = scalar_i32(m, 1);
#define T() tensor(m, SCHEMA_TENSOR_FLOAT32, 4, seq, 0, 0, SCHEMA_TEMPORARY)
    uint32_t dw =
        op(m, SCHEMA_OP_DEPTHWISE_CONV_2D, 11,
           (uint32_t[]){x, filt, bias, pad, pad, zero, zero, one, one, one, none}, T(), true);
    uint32_t g = op(m, SCHEMA_OP_LOGISTIC, 1, &dw, T(), true);
    uint32_t sw = op(m, SCHEMA_OP_MUL, 3, (uint32_t[]){dw, g, none}, T(), true);
#undef T
    uint32_t w = constant(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){144, 144}, 0, 0);
    uint32_t b = constant(m, SCHEMA_TENSOR_FLOAT32, 1, (uint32_t[]){144}, 0, 0);
    op(m, SCHEMA_OP_FULLY_CONNECTED, 4, (uint32_t[]){sw, w, b, none},
       tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){64, 144}, 0, 0, SCHEMA_TEMPORARY), true);
    m->loose = true;
    check(m, "convolution module", 1.f);
    free_model(m);
}

/* FLOAT32 depthwise windows of more taps than XNNPACK's kernels (wide_dwconv.h): batches,
 * 2D windows, strides, dilations, uneven padding, channel counts that leave tails past the
 * vector blocks, fused activations. */
static void wide_depthwise_agrees(void **state) {
    (void)state;
    static const struct {
        uint32_t n, h, w, ch, fh, fw, stride, dil, pad[4]; /* left, right, top, bottom */
        int32_t act;
    } cases[] = {
        {2, 3, 40, 13, 1, 27, 1, 1, {13, 13, 0, 0}, 3}, /* RELU6 */
        {1, 9, 9, 72, 6, 6, 2, 1, {2, 3, 2, 3}, 0},
        {1, 1, 50, 200, 1, 31, 1, 2, {30, 30, 0, 0}, 1}, /* RELU */
        {1, 20, 1, 8, 26, 1, 1, 1, {0, 0, 12, 13}, 2},   /* RELU1 */
        {3, 2, 33, 144, 1, 31, 3, 1, {0, 15, 0, 0}, 0},
    };
    srand(41);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model *m = new_model();
        uint32_t oh = eng_window_out(cases[i].h, cases[i].fh, cases[i].dil, cases[i].stride,
                                     (int32_t)cases[i].pad[2], (int32_t)cases[i].pad[3]),
                 ow = eng_window_out(cases[i].w, cases[i].fw, cases[i].dil, cases[i].stride,
                                     (int32_t)cases[i].pad[0], (int32_t)cases[i].pad[1]);
        uint32_t x = input(m, SCHEMA_TENSOR_FLOAT32, 4,
                           (uint32_t[]){cases[i].n, cases[i].h, cases[i].w, cases[i].ch}, 0, 0);
        uint32_t in[14] = {x,
                           constant(m, SCHEMA_TENSOR_FLOAT32, 4,
                                    (uint32_t[]){1, cases[i].fh, cases[i].fw, cases[i].ch}, 0, 0),
                           constant(m, SCHEMA_TENSOR_FLOAT32, 1, (uint32_t[]){cases[i].ch}, 0, 0)};
        for (int k = 0; k < 4; k++)
            in[3 + k] = scalar_i32(m, (int32_t)cases[i].pad[k]);
        in[7] = in[8] = scalar_i32(m, (int32_t)cases[i].stride);
        in[9] = scalar_i32(m, 1);
        in[10] = scalar_i32(m, cases[i].act);
        in[11] = scalar_bool(m, false);
        in[12] = in[13] = scalar_i32(m, (int32_t)cases[i].dil);
        op(m, SCHEMA_OP_DEPTHWISE_CONV_2D, 14, in,
           tensor(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){cases[i].n, oh, ow, cases[i].ch}, 0, 0,
                  SCHEMA_TEMPORARY),
           true);
        m->loose = true;
        char what[64];
        snprintf(what, sizeof what, "wide depthwise case %zu", i);
        check(m, what, 1.f);
        free_model(m);
    }
}

/* ---- one prepared model, executions from two threads ------------------------------------ */

#define SHARED_RUNS 100

typedef struct shared_run {
    eng_prepared *p;
    const model *m;
    const uint8_t *want;
    size_t bytes;
    int mismatches;
} shared_run;

static void *shared_worker(void *arg) {
    shared_run *r = arg;
    eng_exec *e = eng_exec_create(r->p);
    uint8_t *got = malloc(r->bytes);
    const eng_operand_desc *x = &r->m->o[r->m->inputs[0]];
    eng_io in = {.data = r->m->input_data[0], .length = elems(x) * sizeof(float)};
    for (int i = 0; e && got && i < SHARED_RUNS; i++) {
        eng_io out = {.data = got, .length = r->bytes};
        char err[SCHEMA_ERR_LEN];
        memset(got, 0xff, r->bytes);
        if (eng_exec_run(e, &in, &out, NULL, NULL, err, sizeof err) != SCHEMA_OK ||
            memcmp(got, r->want, r->bytes))
            r->mismatches++;
    }
    if (!e || !got) r->mismatches++;
    free(got);
    eng_exec_free(e);
    return NULL;
}

/* The packed operators of a constant input 1 hold their setup: executions of one
 * prepared model on two threads at once still give the single execution's result. */
static void concurrent_batch_matmuls_agree(void **state) {
    (void)state;
    srand(19);
    model *m = new_model();
    mm_model(m, &mm_shapes[3], SCHEMA_TENSOR_FLOAT32, false, false, true, 0, true);
    const eng_operand_desc *x = &m->o[m->inputs[0]], *o = &m->o[m->output];
    size_t bytes = elems(o) * sizeof(float);
    m->input_data[0] = malloc(elems(x) * sizeof(float));
    uint8_t *want = malloc(bytes);
    assert_true(m->input_data[0] && want);
    fill(m->input_data[0], SCHEMA_TENSOR_FLOAT32, elems(x), 2.f);
    run(m, false, want, bytes);
    eng_prepared *p = prepare(m, false);
    shared_run runs[2] = {{p, m, want, bytes, 0}, {p, m, want, bytes, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, shared_worker, &runs[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(runs[0].mismatches + runs[1].mismatches, 0);
    eng_prepared_free(p);
    free(want), free(m->input_data[0]);
    free_model(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batch_matmul_agrees),
        cmocka_unit_test(signed_batch_matmul_with_zero_point_stays_reference),
        cmocka_unit_test(narrow_batch_matmul_stays_reference),
        cmocka_unit_test(sub_agrees),
        cmocka_unit_test(softmax_agrees),
        cmocka_unit_test(tanh_agrees),
        cmocka_unit_test(gelu_chain_agrees),
        cmocka_unit_test(feed_forward_block_agrees),
        cmocka_unit_test(mean_agrees),
        cmocka_unit_test(rsqrt_agrees),
        cmocka_unit_test(layer_norm_agrees),
        cmocka_unit_test(convolution_module_agrees),
        cmocka_unit_test(wide_depthwise_agrees),
        cmocka_unit_test(concurrent_batch_matmuls_agree)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

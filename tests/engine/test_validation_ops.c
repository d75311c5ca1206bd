/* SPDX-License-Identifier: Apache-2.0 */
/* test_validation_ops: a table of malformed one-operation models of the operations and
 * operand types HAL 1.3 and NNAPI feature levels 6 and 7 added (RANK, FILL, ELU,
 * HARD_SWISH, QUANTIZED_LSTM, BATCH_MATMUL, PACK, MIRROR_PAD, REVERSE, TENSOR_INT32
 * arithmetic, CAST), each refused by eng_validate and eng_prepare with INVALID_ARGUMENT and
 * a message naming what is wrong; and models that are valid until an execution's input
 * breaks a rule, refused by that execution the same way. Every case builds its model from
 * scratch with the small builder below; a valid twin of each family is checked too, so a
 * refusal means the broken detail and not the builder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"

enum { MAX_OPERANDS = 40, MAX_VALUES = 1024 };

typedef struct net {
    eng_operand_desc o[MAX_OPERANDS];
    uint32_t n;
    uint32_t op_in[MAX_OPERANDS], n_op_in, op_out[4], n_op_out;
    uint32_t inputs[MAX_OPERANDS], n_inputs, outputs[4];
    uint8_t values[MAX_VALUES];
    size_t n_values;
    int32_t code;
} net;

typedef struct shape {
    uint32_t rank, dims[4];
} shape;
#define S(...) ((shape){sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t), {__VA_ARGS__}})
#define SCALAR ((shape){0, {0}})

static uint32_t add(net *m, int32_t type, shape s, uint32_t lifetime) {
    assert_true(m->n < MAX_OPERANDS);
    eng_operand_desc *o = &m->o[m->n];
    *o = (eng_operand_desc){.type = type, .rank = s.rank, .lifetime = lifetime};
    memcpy(o->dims, s.dims, sizeof s.dims);
    return m->n++;
}

/* An operation input that is a model input. */
static uint32_t in(net *m, int32_t type, shape s) {
    uint32_t i = add(m, type, s, SCHEMA_MODEL_INPUT);
    m->inputs[m->n_inputs++] = i;
    m->op_in[m->n_op_in++] = i;
    return i;
}

/* An operation input that is a constant holding len bytes of value. */
static uint32_t konst(net *m, int32_t type, shape s, const void *value, size_t len) {
    uint32_t i = add(m, type, s, SCHEMA_CONSTANT_COPY);
    m->n_values = (m->n_values + 7) & ~(size_t)7;
    assert_true(m->n_values + len <= MAX_VALUES);
    memcpy(m->values + m->n_values, value, len);
    m->o[i].offset = m->n_values, m->o[i].length = len;
    m->n_values += len;
    m->op_in[m->n_op_in++] = i;
    return i;
}
static uint32_t k_i32(net *m, int32_t v) {
    return konst(m, SCHEMA_INT32, SCALAR, &v, 4);
}
static uint32_t k_f32(net *m, float v) {
    return konst(m, SCHEMA_FLOAT32, SCALAR, &v, 4);
}
static uint32_t k_bool(net *m, bool v) {
    uint8_t b = v;
    return konst(m, SCHEMA_BOOL, SCALAR, &b, 1);
}
static uint32_t k_ints(net *m, shape s, const int32_t *v) {
    size_t n = 1;
    for (uint32_t d = 0; d < s.rank; d++)
        n *= s.dims[d];
    return konst(m, SCHEMA_TENSOR_INT32, s, v, n * 4);
}
/* An omitted optional input (a quantized one still carries a valid scale). */
static uint32_t omitted(net *m, int32_t type) {
    uint32_t i = add(m, type, SCALAR, SCHEMA_NO_VALUE);
    if (type == SCHEMA_TENSOR_QUANT8_SYMM || type == SCHEMA_TENSOR_QUANT16_SYMM)
        m->o[i].scale = 1.f;
    m->op_in[m->n_op_in++] = i;
    return i;
}
static uint32_t out(net *m, int32_t type, shape s) {
    uint32_t i = add(m, type, s, SCHEMA_MODEL_OUTPUT);
    m->outputs[m->n_op_out] = i;
    m->op_out[m->n_op_out++] = i;
    return i;
}
static void quant(net *m, uint32_t i, float scale, int32_t zero_point) {
    m->o[i].scale = scale, m->o[i].zero_point = zero_point;
}

static eng_model_desc desc(net *m, eng_operation_desc *op) {
    *op = (eng_operation_desc){m->code, m->n_op_in, m->op_in, m->n_op_out, m->op_out};
    return (eng_model_desc){.n_operands = m->n,
                            .operands = m->o,
                            .n_operations = 1,
                            .operations = op,
                            .n_inputs = m->n_inputs,
                            .inputs = m->inputs,
                            .n_outputs = m->n_op_out,
                            .outputs = m->outputs,
                            .operand_values = m->values,
                            .operand_values_len = MAX_VALUES};
}

/* ---- the families, each with the one detail `bad` breaks ---------------------------- */

static void fill(net *m, int bad) {
    static const int32_t dims[2] = {2, 3}, negative[2] = {2, -2};
    m->code = SCHEMA_OP_FILL;
    if (bad == 1) /* a shape tensor of rank 2 */
        in(m, SCHEMA_TENSOR_INT32, S(1, 2));
    else
        k_ints(m, S(2), bad == 2 ? negative : dims);
    in(m, bad == 3 ? SCHEMA_INT32 : SCHEMA_FLOAT32, SCALAR); /* INT32 is wrong for a float output */
    out(m, SCHEMA_TENSOR_FLOAT32, S(2, 3));
}

static void rank(net *m, int bad) {
    m->code = SCHEMA_OP_RANK;
    if (bad == 1)
        in(m, SCHEMA_INT32, SCALAR); /* a scalar has no rank to report */
    else
        in(m, SCHEMA_TENSOR_FLOAT32, S(2, 3));
    out(m, bad == 2 ? SCHEMA_FLOAT32 : SCHEMA_INT32, SCALAR);
}

static void pack(net *m, int bad) {
    m->code = SCHEMA_OP_PACK;
    k_i32(m, bad == 2 ? 3 : 1); /* axis: [0, rank] */
    in(m, SCHEMA_TENSOR_FLOAT32, S(2, 3));
    in(m, SCHEMA_TENSOR_FLOAT32, bad == 1 ? S(3, 2) : S(2, 3));
    out(m, SCHEMA_TENSOR_FLOAT32, S(2, 2, 3));
}

static void mirror_pad(net *m, int bad) {
    /* REFLECT pads at most dimension - 1 per side: 2 on a dimension of 2 is too many. */
    static const int32_t fine[4] = {1, 1, 0, 1}, too_wide[4] = {2, 0, 0, 1};
    m->code = SCHEMA_OP_MIRROR_PAD;
    in(m, SCHEMA_TENSOR_FLOAT32, S(2, 3));
    k_ints(m, S(2, 2), bad == 1 ? too_wide : fine);
    k_i32(m, bad == 2 ? 2 : 0);
    out(m, SCHEMA_TENSOR_FLOAT32, S(4, 4));
}

static void batch_matmul(net *m, int bad) {
    m->code = SCHEMA_OP_BATCH_MATMUL;
    in(m, SCHEMA_TENSOR_FLOAT32, S(2, 2, 3));
    in(m, SCHEMA_TENSOR_FLOAT32, bad == 2 ? S(3, 3, 4) : S(2, 3, 4));
    k_bool(m, bad == 1); /* adj_x: [3, 2] by [3, 4] does not multiply */
    k_bool(m, false);
    out(m, SCHEMA_TENSOR_FLOAT32, S(2, 2, 4));
}

static void reverse(net *m, int bad) {
    static const int32_t axis[2] = {1, 0}, far[1] = {2};
    m->code = SCHEMA_OP_REVERSE;
    in(m, SCHEMA_TENSOR_FLOAT32, S(2, 3));
    if (bad == 2)
        k_ints(m, S(2), axis);
    else
        k_ints(m, S(1), bad == 1 ? far : axis);
    out(m, SCHEMA_TENSOR_FLOAT32, S(2, 3));
}

static void elu(net *m, int bad) {
    m->code = SCHEMA_OP_ELU;
    in(m, SCHEMA_TENSOR_FLOAT32, S(4));
    if (bad == 1)
        k_i32(m, 1); /* alpha must be FLOAT32 for a FLOAT32 tensor */
    else
        k_f32(m, 1.f);
    out(m, SCHEMA_TENSOR_FLOAT32, S(4));
}

static void hard_swish(net *m, int bad) {
    m->code = SCHEMA_OP_HARD_SWISH;
    quant(m, in(m, SCHEMA_TENSOR_QUANT8_ASYMM, S(4)), 1.f, 128);
    /* the output scale cannot be below input scale / 128 */
    quant(m, out(m, SCHEMA_TENSOR_QUANT8_ASYMM, S(4)), bad == 1 ? 1.f / 256 : 1.f / 64, 128);
}

static void int32_add(net *m, int bad) {
    m->code = SCHEMA_OP_ADD;
    in(m, SCHEMA_TENSOR_INT32, S(4));
    in(m, SCHEMA_TENSOR_INT32, S(4));
    k_i32(m, bad == 1 ? 1 : 0); /* TENSOR_INT32 takes no fused activation */
    out(m, SCHEMA_TENSOR_INT32, S(4));
}

static void cast(net *m, int bad) {
    m->code = SCHEMA_OP_CAST;
    quant(m, in(m, SCHEMA_TENSOR_QUANT16_SYMM, S(4)), 1.f, 0);
    /* QUANT16_SYMM only casts to itself */
    uint32_t o = out(m, bad == 1 ? SCHEMA_TENSOR_FLOAT32 : SCHEMA_TENSOR_QUANT16_SYMM, S(4));
    if (bad != 1) quant(m, o, 1.f, 0);
}

/* QUANTIZED_LSTM: batch 2, input 5, 4 units, no projection, CIFG and layer normalization
 * as the vectors have them. */
static void quantized_lstm(net *m, int bad) {
    enum { BATCH = 2, INPUT = 5, UNITS = 4 };
    m->code = SCHEMA_OP_QUANTIZED_LSTM;
    quant(m, in(m, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, S(BATCH, INPUT)), 1.f / 128, 0);
    for (int k = 1; k <= 8; k++) { /* input-to-*, recurrent-to-* weights */
        bool cifg = k == 1 || k == 5, drop = bad == 1 && k == 2;
        if (cifg || drop) {
            omitted(m, SCHEMA_TENSOR_QUANT8_SYMM);
            continue;
        }
        quant(m, in(m, SCHEMA_TENSOR_QUANT8_SYMM, k <= 4 ? S(UNITS, INPUT) : S(UNITS, UNITS)),
              1.f / 128, 0);
    }
    for (int k = 9; k <= 11; k++) /* no peephole */
        omitted(m, SCHEMA_TENSOR_QUANT16_SYMM);
    omitted(m, SCHEMA_TENSOR_INT32); /* no input gate bias with CIFG */
    for (int k = 13; k <= 15; k++)
        in(m, SCHEMA_TENSOR_INT32, S(UNITS));
    omitted(m, SCHEMA_TENSOR_QUANT8_SYMM); /* no projection */
    omitted(m, SCHEMA_TENSOR_INT32);
    quant(m, in(m, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, S(BATCH, UNITS)), 1.f / 32768, 0);
    float cell_scale = bad == 2 ? 3e-5f : 1.f / 32768; /* must be a power of two */
    quant(m, in(m, SCHEMA_TENSOR_QUANT16_SYMM, S(BATCH, UNITS)), cell_scale, 0);
    omitted(m, SCHEMA_TENSOR_QUANT16_SYMM); /* no input layer normalization with CIFG */
    for (int k = 21; k <= 23; k++)
        quant(m, in(m, SCHEMA_TENSOR_QUANT16_SYMM, S(UNITS)), 1.f / 32768, 0);
    k_f32(m, 0.f), k_f32(m, 0.f); /* no clipping */
    for (int k = 26; k <= 29; k++)
        k_f32(m, 0.007f);
    k_i32(m, 0), k_f32(m, 0.007f);
    quant(m, out(m, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, S(BATCH, UNITS)), 1.f / 32768, 0);
    quant(m, out(m, SCHEMA_TENSOR_QUANT16_SYMM, S(BATCH, UNITS)), 1.f / 32768, 0);
    quant(m, out(m, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, S(BATCH, UNITS)), 1.f / 32768, 0);
}

/* MEAN over every axis without keep_dims: shape [1], not a scalar. */
static void mean_all(net *m, int bad) {
    static const int32_t axes[2] = {0, 1};
    m->code = SCHEMA_OP_MEAN;
    in(m, SCHEMA_TENSOR_FLOAT32, S(2, 2));
    k_ints(m, S(2), axes);
    k_i32(m, 0);
    out(m, SCHEMA_TENSOR_FLOAT32, bad == 1 ? S(1, 1) : S(1));
}

static void argmax_1d(net *m, int bad) {
    (void)bad;
    m->code = SCHEMA_OP_ARGMAX;
    in(m, SCHEMA_TENSOR_FLOAT32, S(3));
    k_i32(m, 0);
    out(m, SCHEMA_TENSOR_INT32, S(1));
}

static void squeeze_all(net *m, int bad) {
    (void)bad;
    m->code = SCHEMA_OP_SQUEEZE;
    in(m, SCHEMA_TENSOR_FLOAT32, S(1, 1));
    omitted(m, SCHEMA_TENSOR_INT32);
    out(m, SCHEMA_TENSOR_FLOAT32, S(1));
}

/* Shrinking the only axis leaves [1]; shrinking with a negative stride is refused. */
static void strided_slice(net *m, int bad) {
    static const int32_t one[1] = {1}, two[1] = {2}, back[1] = {-1};
    m->code = SCHEMA_OP_STRIDED_SLICE;
    in(m, SCHEMA_TENSOR_FLOAT32, S(4));
    k_ints(m, S(1), bad == 1 ? two : one);
    k_ints(m, S(1), bad == 1 ? one : two);
    k_ints(m, S(1), bad == 1 ? back : one);
    k_i32(m, 0), k_i32(m, 0), k_i32(m, 1);
    out(m, SCHEMA_TENSOR_FLOAT32, S(1));
}

/* A depthwise filter is [1, height, width, channels]. */
static void depthwise(net *m, int bad) {
    m->code = SCHEMA_OP_DEPTHWISE_CONV_2D;
    in(m, SCHEMA_TENSOR_FLOAT32, S(1, 3, 3, 2));
    in(m, SCHEMA_TENSOR_FLOAT32, bad == 1 ? S(2, 2, 2, 2) : S(1, 2, 2, 2));
    in(m, SCHEMA_TENSOR_FLOAT32, S(2));
    for (int k = 0; k < 6; k++) /* no padding, strides 1 */
        k_i32(m, k < 4 ? 0 : 1);
    k_i32(m, 1), k_i32(m, 0); /* depth multiplier, no activation */
    out(m, SCHEMA_TENSOR_FLOAT32, S(1, 2, 2, 2));
}

typedef struct bad_case {
    const char *name;
    void (*build)(net *m, int bad);
    int bad;
    const char *message; /* a fragment the error must contain */
} bad_case;

static const bad_case cases[] = {
    {"FILL shape tensor of rank 2", fill, 1, "must have rank 1, has 2"},
    {"FILL negative dimension", fill, 2, "dimension 1 = -2"},
    {"FILL value of the wrong type", fill, 3, "input 1 must be FLOAT32"},
    {"RANK of a scalar", rank, 1, "must be a tensor"},
    {"RANK output not INT32", rank, 2, "output 0 must be INT32"},
    {"PACK inputs of different shapes", pack, 1, "does not have the shape of input 1"},
    {"PACK axis out of range", pack, 2, "axis 3 is out of range"},
    {"MIRROR_PAD padding wider than REFLECT allows", mirror_pad, 1, "must be in [0, 1]"},
    {"MIRROR_PAD unknown mode", mirror_pad, 2, "mode 2"},
    {"BATCH_MATMUL adjoint on mismatched dimensions", batch_matmul, 1, "cannot multiply"},
    {"BATCH_MATMUL batch sizes differ", batch_matmul, 2, "batch dimension 0 differs"},
    {"REVERSE axis out of range", reverse, 1, "axis 2 is out of range for rank 2"},
    {"REVERSE axis tensor of two elements", reverse, 2, "must have shape [1]"},
    {"ELU alpha of the wrong type", elu, 1, "input 1 must be FLOAT32"},
    {"HARD_SWISH output scale too small", hard_swish, 1, "below input scale / 128"},
    {"TENSOR_INT32 ADD with a fused activation", int32_add, 1, "takes no fused activation"},
    {"CAST of QUANT16_SYMM to another type", cast, 1, "output 0 has type"},
    {"QUANTIZED_LSTM without input-to-forget weights", quantized_lstm, 1,
     "input 2 is omitted, and it is not optional"},
    {"QUANTIZED_LSTM cell scale not a power of two", quantized_lstm, 2, "power of two"},
    {"MEAN over every axis declared [1, 1]", mean_all, 1, "declared with other dimensions"},
    {"STRIDED_SLICE shrinking with a negative stride", strided_slice, 1, "negative stride"},
    {"DEPTHWISE_CONV_2D filter with first dimension 2", depthwise, 1,
     "first dimension 2, must be 1"},
};

static void (*const families[])(net *, int) = {
    fill,      rank,        pack,          mirror_pad, batch_matmul,   reverse,
    elu,       hard_swish,  int32_add,     cast,       quantized_lstm, mean_all,
    argmax_1d, squeeze_all, strided_slice, depthwise,
};

static schema_status prepare_family(void (*build)(net *, int), int bad, char *err, size_t errlen) {
    net m;
    memset(&m, 0, sizeof m);
    build(&m, bad);
    eng_operation_desc op;
    eng_model_desc d = desc(&m, &op);
    eng_prepared *p = NULL;
    schema_status v = eng_validate(&d, err, errlen);
    schema_status s = eng_prepare(&d, &p, err, errlen);
    eng_prepared_free(p);
    return v == s ? s : SCHEMA_GENERAL_FAILURE; /* they must agree */
}

static void test_valid_twins(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        char err[SCHEMA_ERR_LEN] = "";
        if (prepare_family(families[i], 0, err, sizeof err) != SCHEMA_OK)
            fail_msg("valid model %zu refused: %s", i, err);
    }
}

static void test_malformed_models(void **state) {
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[SCHEMA_ERR_LEN] = "";
        schema_status s = prepare_family(cases[i].build, cases[i].bad, err, sizeof err);
        if (s != SCHEMA_INVALID_ARGUMENT || !strstr(err, cases[i].message)) {
            print_error("case \"%s\": %s, message \"%s\" (want \"%s\")\n", cases[i].name,
                        schema_engine_status_name(s), err, cases[i].message);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    assert_true(sizeof cases / sizeof cases[0] >= 10);
}

/* ---- refused at execution ------------------------------------------------------------ */

/* FILL, REVERSE and MIRROR_PAD with the tensor that fixes the output shape (input 1 of
 * each, input 0 of FILL) given by the request: the model is valid; an execution whose
 * values break the rules is refused, the next good one runs. */
static void dynamic(net *m, int32_t code) {
    m->code = code;
    if (code == SCHEMA_OP_FILL) {
        in(m, SCHEMA_TENSOR_INT32, S(2));
        k_f32(m, 1.f);
        out(m, SCHEMA_TENSOR_FLOAT32, S(0, 0));
        return;
    }
    in(m, SCHEMA_TENSOR_FLOAT32, S(2, 3));
    in(m, SCHEMA_TENSOR_INT32, code == SCHEMA_OP_REVERSE ? S(1) : S(2, 2));
    if (code == SCHEMA_OP_MIRROR_PAD) k_i32(m, 1); /* SYMMETRIC: at most the dimension */
    out(m, SCHEMA_TENSOR_FLOAT32, S(0, 0));
}

static schema_status execute(eng_exec *e, int32_t code, const int32_t *ints, size_t n_ints,
                             char *err) {
    float x[6] = {1, 2, 3, 4, 5, 6}, y[64];
    eng_io ins[2] = {{0}}, outs[1] = {{.data = y, .length = sizeof y}};
    eng_io *shape_in = &ins[code == SCHEMA_OP_FILL ? 0 : 1];
    ins[0] = (eng_io){.data = x, .length = sizeof x};
    *shape_in = (eng_io){.data = (void *)ints, .length = n_ints * 4};
    eng_output_shape shapes[1];
    return eng_exec_run(e, ins, outs, shapes, NULL, err, SCHEMA_ERR_LEN);
}

static void test_refused_at_execution(void **state) {
    (void)state;
    static const struct {
        int32_t code;
        int32_t good[4], bad[4];
        size_t n;
        const char *message;
    } runs[] = {
        {SCHEMA_OP_FILL, {2, 3}, {2, -1}, 2, "dimension 1 = -1"},
        {SCHEMA_OP_REVERSE, {1}, {5}, 1, "axis 5 is out of range"},
        {SCHEMA_OP_MIRROR_PAD, {1, 2, 0, 3}, {1, 2, 4, 0}, 4, "must be in [0, 3]"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        net m;
        memset(&m, 0, sizeof m);
        dynamic(&m, runs[i].code);
        eng_operation_desc op;
        eng_model_desc d = desc(&m, &op);
        char err[SCHEMA_ERR_LEN] = "";
        eng_prepared *p = NULL;
        assert_int_equal(eng_prepare(&d, &p, err, sizeof err), SCHEMA_OK);
        eng_exec *e = eng_exec_create(p);
        assert_non_null(e);
        assert_int_equal(execute(e, runs[i].code, runs[i].bad, runs[i].n, err),
                         SCHEMA_INVALID_ARGUMENT);
        if (!strstr(err, runs[i].message))
            fail_msg("%s: \"%s\" lacks \"%s\"", schema_operation_name(runs[i].code), err,
                     runs[i].message);
        assert_int_equal(execute(e, runs[i].code, runs[i].good, runs[i].n, err), SCHEMA_OK);
        eng_exec_free(e);
        eng_prepared_free(p);
    }
}

/* ---- results of the newer runtime's rules ---------------------------------------------- */

/* Prepares m and runs it once on the four floats x, into y; the output's shape in *shape. */
static void run_four(net *m, const float x[4], float y[4], eng_output_shape *shape) {
    eng_operation_desc op;
    eng_model_desc d = desc(m, &op);
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    if (eng_prepare(&d, &p, err, sizeof err) != SCHEMA_OK) fail_msg("prepare: %s", err);
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    eng_io ins[1] = {{.data = (void *)x, .length = 4 * sizeof *x}},
           outs[1] = {{.data = y, .length = 4 * sizeof *y}};
    if (eng_exec_run(e, ins, outs, shape, NULL, err, sizeof err) != SCHEMA_OK)
        fail_msg("execute: %s", err);
    eng_exec_free(e);
    eng_prepared_free(p);
}

/* MEAN over every axis of a model whose output dimension is unknown reports [1]. */
static void test_all_axes_removed_report_one(void **state) {
    (void)state;
    net m;
    memset(&m, 0, sizeof m);
    mean_all(&m, 0);
    m.o[m.outputs[0]].dims[0] = 0; /* unknown: the execution says */
    const float x[4] = {1, 2, 3, 6};
    float y[4] = {0};
    eng_output_shape shape;
    run_four(&m, x, y, &shape);
    assert_int_equal(shape.rank, 1);
    assert_int_equal(shape.dims[0], 1);
    assert_true(y[0] == 3.f);
}

/* One channel of 1, 2, 3, 4: mean 2.5, variance 1.25, so (x - 2.5) / sqrt(1.25 + 0.01). The
 * mean of the squares (7.5) would give values less than half as large. */
static void test_instance_normalization_variance(void **state) {
    (void)state;
    net m;
    memset(&m, 0, sizeof m);
    m.code = SCHEMA_OP_INSTANCE_NORMALIZATION;
    in(&m, SCHEMA_TENSOR_FLOAT32, S(1, 2, 2, 1));
    k_f32(&m, 1.f), k_f32(&m, 0.f), k_f32(&m, 0.01f), k_bool(&m, false);
    out(&m, SCHEMA_TENSOR_FLOAT32, S(1, 2, 2, 1));
    const float x[4] = {1, 2, 3, 4};
    float y[4] = {0};
    eng_output_shape shape;
    run_four(&m, x, y, &shape);
    const float want[4] = {-1.33630621f, -0.44543540f, 0.44543540f, 1.33630621f};
    for (int k = 0; k < 4; k++)
        assert_float_equal(y[k], want[k], 1e-5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_twins),
        cmocka_unit_test(test_malformed_models),
        cmocka_unit_test(test_refused_at_execution),
        cmocka_unit_test(test_all_axes_removed_report_one),
        cmocka_unit_test(test_instance_normalization_variance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

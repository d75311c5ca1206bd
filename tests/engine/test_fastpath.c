/* SPDX-License-Identifier: Apache-2.0 */
/* test_fastpath (unit): the XNNPACK fast paths against the reference kernels, the
 * oracle. Thousands of one-operation models with random shapes, windows, strides,
 * dilations, paddings, broadcasts, activations and quantization, in TENSOR_FLOAT32,
 * TENSOR_QUANT8_ASYMM, TENSOR_FLOAT16 and TENSOR_QUANT8_ASYMM_SIGNED (per-tensor and
 * per-channel filters), run once with NND_REFERENCE_KERNELS=1 and once without; FLOAT32
 * results agree to 1e-4 (relative, over 1; HARD_SWISH and ELU to the conformance
 * vectors' own float32 tolerance), 8-bit results within one step (per operation and
 * 8-bit type the largest difference is printed, and it must be 0 for the fast paths
 * docs/numerics.md calls bit-exact), FLOAT16 results within the vectors' FP16 tolerance. Most cases
 * of each type must actually take the fast path. FP16 regions: the temporaries between fast FP16
 * steps become float, the ones a reference step reads or writes stay FP16, and the chain agrees
 * with the reference. Inputs end right at an inaccessible page, so an over-read past an input would
 * crash. Each fast case also runs with every operator on the calling thread alone (as on a
 * crowded machine, engine/backends/xnnpack/cpu_crowd.h) and must give the pool's bits. And one
 * prepared model executed from two threads at once gives the same results. Also
 * LOCAL_RESPONSE_NORMALIZATION's sliding sum for wide windows (the reference kernel's one path that
 * no conformance vector reaches) against sums taken afresh here. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/backends/xnnpack/cpu_crowd.h"
#include "engine/core/internal.h"
#include "engine/ops_common/float16.h"

#define MAX_OPERANDS 24
#define CASES        4000 /* a quarter of each type */
#define MAX_OPS      6

typedef struct builder {
    eng_operand_desc operands[MAX_OPERANDS];
    uint32_t n_operands;
    uint8_t values[1 << 16];
    size_t n_values;
    uint32_t op_in[MAX_OPERANDS], n_op_in, out;
    /* Operations of a chain (finish_op()); the one being built is code, op_in and out. */
    eng_operation_desc ops[MAX_OPS];
    uint32_t ops_in[MAX_OPS][MAX_OPERANDS], ops_out[MAX_OPS], n_ops;
    uint32_t inputs[2], n_inputs;
    float channel_scales[32]; /* of the filter, when per_channel */
    bool per_channel;
    void *input_data[2];
    int32_t code;
} builder;

static uint32_t rnd(uint32_t lo, uint32_t hi) { /* inclusive */
    return lo + (uint32_t)(rand() % (int)(hi - lo + 1));
}
static float frnd(float lo, float hi) {
    return lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
}

static size_t elems(const eng_operand_desc *o) {
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++)
        n *= o->dims[i];
    return n;
}

static uint32_t operand(builder *b, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                        int32_t zp, uint32_t lifetime) {
    eng_operand_desc *o = &b->operands[b->n_operands];
    *o = (eng_operand_desc){
        .type = type, .rank = rank, .scale = scale, .zero_point = zp, .lifetime = lifetime};
    if (rank) memcpy(o->dims, dims, sizeof(uint32_t) * rank);
    return b->n_operands++;
}

/* Random contents for a tensor of the given type: floats in [-2, 2] (FLOAT32, FLOAT16),
 * bytes, or int32 biases in [-2000, 2000]. */
static void fill(void *p, int32_t type, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (type == SCHEMA_TENSOR_FLOAT32)
            ((float *)p)[i] = frnd(-2.f, 2.f);
        else if (type == SCHEMA_TENSOR_FLOAT16)
            ((eng_half *)p)[i] = (eng_half)frnd(-2.f, 2.f);
        else if (type == SCHEMA_TENSOR_INT32)
            ((int32_t *)p)[i] = (int32_t)rnd(0, 4000) - 2000;
        else
            ((uint8_t *)p)[i] = (uint8_t)rnd(0, 255);
    }
}

static uint32_t constant(builder *b, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                         int32_t zp) {
    uint32_t i = operand(b, type, rank, dims, scale, zp, SCHEMA_CONSTANT_COPY);
    eng_operand_desc *o = &b->operands[i];
    size_t bytes = elems(o) * schema_type_size(type);
    b->n_values = (b->n_values + 7) & ~(size_t)7;
    assert_true(b->n_values + bytes <= sizeof b->values);
    o->offset = b->n_values;
    o->length = bytes;
    fill(b->values + b->n_values, type, elems(o));
    b->n_values += bytes;
    return i;
}

/* A constant scalar of the given type. */
static uint32_t scalar(builder *b, int32_t type, const void *v) {
    uint32_t i = operand(b, type, 0, NULL, 0, 0, SCHEMA_CONSTANT_COPY);
    size_t size = schema_type_size(type);
    b->n_values = (b->n_values + 7) & ~(size_t)7;
    b->operands[i].offset = b->n_values;
    b->operands[i].length = size;
    memcpy(b->values + b->n_values, v, size);
    b->n_values += size;
    return i;
}
static uint32_t scalar_i32(builder *b, int32_t v) {
    return scalar(b, SCHEMA_INT32, &v);
}
/* A float scalar of the kind a tensor of type t takes (FLOAT16 for TENSOR_FLOAT16). */
static uint32_t scalar_float(builder *b, int32_t t, float v) {
    eng_half h = (eng_half)v;
    return t == SCHEMA_TENSOR_FLOAT16 ? scalar(b, SCHEMA_FLOAT16, &h)
                                      : scalar(b, SCHEMA_FLOAT32, &v);
}

static uint32_t input(builder *b, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                      int32_t zp) {
    uint32_t i = operand(b, type, rank, dims, scale, zp, SCHEMA_MODEL_INPUT);
    b->inputs[b->n_inputs++] = i;
    return i;
}

static void use(builder *b, uint32_t i) {
    b->op_in[b->n_op_in++] = i;
}

/* Ends the operation being built, whose output becomes a temporary of the chain. */
static void finish_op(builder *b) {
    assert_true(b->n_ops < MAX_OPS);
    uint32_t k = b->n_ops++;
    memcpy(b->ops_in[k], b->op_in, sizeof(uint32_t) * b->n_op_in);
    b->ops_out[k] = b->out;
    b->ops[k] = (eng_operation_desc){b->code, b->n_op_in, b->ops_in[k], 1, &b->ops_out[k]};
    b->operands[b->out].lifetime = SCHEMA_TEMPORARY;
    b->n_op_in = 0;
}

static float qscale(void) {
    return frnd(0.01f, 0.2f);
}

static bool quantized(int32_t t) {
    return t == SCHEMA_TENSOR_QUANT8_ASYMM || t == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
}
/* The lowest stored value of an 8-bit quantized type. */
static int32_t qmin(int32_t t) {
    return t == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED ? -128 : 0;
}
/* A random zero point for type t (0 for the float types). */
static int32_t qzp(int32_t t) {
    return quantized(t) ? (int32_t)rnd(0, 255) + qmin(t) : 0;
}

/* A zero point for the weights of type t: mostly 0 for signed types, whose fast paths
 * take no other, and sometimes another to see those stay on the reference. */
static int32_t weight_zp(int32_t t) {
    return t == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED && rnd(0, 3) ? 0 : qzp(t);
}

/* A convolution filter of dims for inputs of type t: for signed inputs half the time
 * TENSOR_QUANT8_SYMM_PER_CHANNEL along dimension channel_dim (b->per_channel). */
static uint32_t filter(builder *b, int32_t t, const uint32_t *dims, uint32_t channel_dim,
                       float scale) {
    b->per_channel = t == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED && rnd(0, 1);
    if (!b->per_channel) return constant(b, t, 4, dims, scale, weight_zp(t));
    uint32_t f = constant(b, SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL, 4, dims, 0, 0);
    uint32_t n = dims[channel_dim];
    assert_true(n <= sizeof b->channel_scales / sizeof b->channel_scales[0]);
    for (uint32_t i = 0; i < n; i++)
        b->channel_scales[i] = qscale();
    b->operands[f].channel_quant =
        (eng_channel_quant){.scales = b->channel_scales, .n_scales = n, .channel_dim = channel_dim};
    return f;
}

/* ---- one random model per operation family ---------------------------------------- */

static void conv_model(builder *b, int32_t t, bool depthwise) {
    bool q8 = quantized(t);
    uint32_t n = rnd(1, 2), h = rnd(1, 12), w = rnd(1, 12), in_c = rnd(1, 8);
    uint32_t mult = rnd(1, 3), out_c = depthwise ? in_c * mult : rnd(1, 9);
    uint32_t fh = rnd(1, 4), fw = rnd(1, 4), sh = rnd(1, 3), sw = rnd(1, 3);
    uint32_t dh = rnd(1, 2), dw = rnd(1, 2);
    uint32_t eff_h = (fh - 1) * dh + 1, eff_w = (fw - 1) * dw + 1;
    if (eff_h > h + 2 || eff_w > w + 2) dh = dw = 1, eff_h = fh, eff_w = fw;
    float s_in = q8 ? qscale() : 0, s_f = q8 ? qscale() : 0, s_out = q8 ? qscale() * 4 : 0;
    uint32_t x = input(b, t, 4, (uint32_t[]){n, h, w, in_c}, s_in, qzp(t));
    uint32_t fdims[4] = {depthwise ? 1 : out_c, fh, fw, depthwise ? out_c : in_c};
    uint32_t f = filter(b, t, fdims, depthwise ? 3 : 0, s_f);
    uint32_t bias = constant(b, q8 ? SCHEMA_TENSOR_INT32 : t, 1, (uint32_t[]){out_c},
                             b->per_channel ? 0 : s_in * s_f, 0);
    use(b, x), use(b, f), use(b, bias);
    bool explicit_pad = rnd(0, 1);
    int32_t pl = 0, pr = 0, pt = 0, pb = 0;
    uint32_t oh, ow;
    if (explicit_pad) {
        pl = (int32_t)rnd(0, eff_w - 1), pr = (int32_t)rnd(0, eff_w - 1);
        pt = (int32_t)rnd(0, eff_h - 1), pb = (int32_t)rnd(0, eff_h - 1);
        use(b, scalar_i32(b, pl)), use(b, scalar_i32(b, pr));
        use(b, scalar_i32(b, pt)), use(b, scalar_i32(b, pb));
        oh = (h + pt + pb >= eff_h) ? (h + pt + pb - eff_h) / sh + 1 : 0;
        ow = (w + pl + pr >= eff_w) ? (w + pl + pr - eff_w) / sw + 1 : 0;
    } else {
        int32_t scheme = (int32_t)rnd(1, 2); /* SAME or VALID */
        use(b, scalar_i32(b, scheme));
        oh = scheme == 1 ? (h + sh - 1) / sh : (h >= eff_h ? (h - eff_h + sh) / sh : 0);
        ow = scheme == 1 ? (w + sw - 1) / sw : (w >= eff_w ? (w - eff_w + sw) / sw : 0);
    }
    use(b, scalar_i32(b, (int32_t)sw)), use(b, scalar_i32(b, (int32_t)sh));
    if (depthwise) use(b, scalar_i32(b, (int32_t)mult));
    use(b, scalar_i32(b, (int32_t)rnd(0, 3)));
    if (dh != 1 || dw != 1) {
        uint32_t layout = operand(b, SCHEMA_BOOL, 0, NULL, 0, 0, SCHEMA_CONSTANT_COPY);
        b->operands[layout].offset = b->n_values;
        b->operands[layout].length = 1;
        b->values[b->n_values++] = 0;
        use(b, layout), use(b, scalar_i32(b, (int32_t)dw)), use(b, scalar_i32(b, (int32_t)dh));
    }
    b->out = operand(b, t, 4, (uint32_t[]){n, oh, ow, out_c}, s_out, qzp(t), SCHEMA_MODEL_OUTPUT);
    b->code = depthwise ? SCHEMA_OP_DEPTHWISE_CONV_2D : SCHEMA_OP_CONV_2D;
}

static void fc_model(builder *b, int32_t t) {
    bool q8 = quantized(t);
    uint32_t batch = rnd(1, 4), size = rnd(1, 40), units = rnd(1, 20);
    float s_in = q8 ? qscale() : 0, s_w = q8 ? qscale() : 0, s_out = q8 ? qscale() * 8 : 0;
    use(b, input(b, t, 2, (uint32_t[]){batch, size}, s_in, qzp(t)));
    use(b, constant(b, t, 2, (uint32_t[]){units, size}, s_w, weight_zp(t)));
    use(b, constant(b, q8 ? SCHEMA_TENSOR_INT32 : t, 1, (uint32_t[]){units}, s_in * s_w, 0));
    use(b, scalar_i32(b, (int32_t)rnd(0, 3)));
    b->out = operand(b, t, 2, (uint32_t[]){batch, units}, s_out, qzp(t), SCHEMA_MODEL_OUTPUT);
    b->code = SCHEMA_OP_FULLY_CONNECTED;
}

static void pool_model(builder *b, int32_t t, bool max) {
    bool q8 = quantized(t);
    uint32_t n = rnd(1, 2), h = rnd(1, 10), w = rnd(1, 10), c = rnd(1, 20);
    uint32_t fh = rnd(1, 4), fw = rnd(1, 4), sh = rnd(1, 3), sw = rnd(1, 3);
    if (rnd(0, 2) == 0) fh = h, fw = w; /* the whole image, as networks end */
    float s = q8 ? qscale() : 0;
    int32_t zp = qzp(t);
    use(b, input(b, t, 4, (uint32_t[]){n, h, w, c}, s, zp));
    uint32_t oh, ow;
    if (rnd(0, 1)) {
        int32_t pl = (int32_t)rnd(0, fw - 1), pr = (int32_t)rnd(0, fw - 1);
        int32_t pt = (int32_t)rnd(0, fh - 1), pb = (int32_t)rnd(0, fh - 1);
        if (rnd(0, 1)) pl = pr = pt = pb = 0;
        use(b, scalar_i32(b, pl)), use(b, scalar_i32(b, pr));
        use(b, scalar_i32(b, pt)), use(b, scalar_i32(b, pb));
        oh = h + pt + pb >= fh ? (h + pt + pb - fh) / sh + 1 : 0;
        ow = w + pl + pr >= fw ? (w + pl + pr - fw) / sw + 1 : 0;
    } else {
        int32_t scheme = (int32_t)rnd(1, 2);
        use(b, scalar_i32(b, scheme));
        oh = scheme == 1 ? (h + sh - 1) / sh : (h >= fh ? (h - fh + sh) / sh : 0);
        ow = scheme == 1 ? (w + sw - 1) / sw : (w >= fw ? (w - fw + sw) / sw : 0);
    }
    use(b, scalar_i32(b, (int32_t)sw)), use(b, scalar_i32(b, (int32_t)sh));
    use(b, scalar_i32(b, (int32_t)fw)), use(b, scalar_i32(b, (int32_t)fh));
    use(b, scalar_i32(b, (int32_t)rnd(0, 3)));
    b->out = operand(b, t, 4, (uint32_t[]){n, oh, ow, c}, s, zp, SCHEMA_MODEL_OUTPUT);
    b->code = max ? SCHEMA_OP_MAX_POOL_2D : SCHEMA_OP_AVERAGE_POOL_2D;
}

static void binary_model(builder *b, int32_t t, bool mul) {
    bool q8 = quantized(t);
    uint32_t rank = rnd(1, 4), full[4] = {0}, da[4] = {0}, db[4] = {0}, ra = rank,
             rb = rnd(1, rank);
    for (uint32_t i = 0; i < rank; i++)
        full[i] = rnd(1, 6);
    for (uint32_t i = 0; i < ra; i++)
        da[i] = rnd(0, 3) ? full[i] : 1;
    for (uint32_t i = 0; i < rb; i++)
        db[i] = rnd(0, 3) ? full[rank - rb + i] : 1;
    if (rnd(0, 1)) { /* either side may be the broadcast one */
        uint32_t tmp[4], r = ra;
        memcpy(tmp, da, sizeof tmp), memcpy(da, db, sizeof da), memcpy(db, tmp, sizeof db);
        ra = rb, rb = r;
    }
    uint32_t out[4];
    for (uint32_t i = 0; i < rank; i++) {
        uint32_t a = i + ra >= rank ? da[i + ra - rank] : 1,
                 c = i + rb >= rank ? db[i + rb - rank] : 1;
        out[i] = a > c ? a : c;
    }
    float sa = q8 ? qscale() : 0, sb = q8 ? qscale() : 0;
    float so = q8 ? (mul ? sa * sb * frnd(2.f, 20.f) : qscale() * 2) : 0;
    use(b, input(b, t, ra, da, sa, qzp(t)));
    use(b, input(b, t, rb, db, sb, qzp(t)));
    use(b, scalar_i32(b, (int32_t)rnd(0, 3)));
    b->out = operand(b, t, rank, out, so, qzp(t), SCHEMA_MODEL_OUTPUT);
    b->code = mul ? SCHEMA_OP_MUL : SCHEMA_OP_ADD;
}

static void unary_model(builder *b, int32_t t, int32_t code) {
    bool q8 = quantized(t);
    uint32_t rank = rnd(1, 4), dims[4];
    for (uint32_t i = 0; i < rank; i++)
        dims[i] = rnd(1, 9);
    float s = q8 ? frnd(0.01f, 0.1f) : 0;
    int32_t zp = qzp(t);
    use(b, input(b, t, rank, dims, s, zp));
    if (code == SCHEMA_OP_ELU) use(b, scalar_float(b, t, frnd(0.1f, 2.f))); /* alpha */
    float so = s;
    int32_t zo = zp;
    if (q8 && code == SCHEMA_OP_LOGISTIC) so = 1.f / 256, zo = qmin(t);
    if (q8 && code == SCHEMA_OP_TANH) so = 1.f / 128, zo = qmin(t) + 128;
    b->out = operand(b, t, rank, dims, so, zo, SCHEMA_MODEL_OUTPUT);
    b->code = code;
}

static const int32_t case_types[] = {SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_QUANT8_ASYMM,
                                     SCHEMA_TENSOR_FLOAT16, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED};
#define N_TYPES (sizeof case_types / sizeof case_types[0])

/* A model of family f (of 9) of the ones the fast paths claim, with tensors of type t. */
static void random_model(builder *b, int f, int32_t t) {
    memset(b, 0, sizeof *b);
    /* The last two have float fast paths only. */
    static const int32_t unary[] = {SCHEMA_OP_RELU,     SCHEMA_OP_RELU1, SCHEMA_OP_RELU6,
                                    SCHEMA_OP_LOGISTIC, SCHEMA_OP_TANH,  SCHEMA_OP_HARD_SWISH,
                                    SCHEMA_OP_ELU};
    switch (f % 9) {
    case 0: conv_model(b, t, false); break;
    case 1: conv_model(b, t, true); break;
    case 2: fc_model(b, t); break;
    case 3: pool_model(b, t, false); break;
    case 4: pool_model(b, t, true); break;
    case 5: binary_model(b, t, false); break;
    case 6: binary_model(b, t, true); break;
    default: unary_model(b, t, unary[rand() % (quantized(t) ? 5 : 7)]); break;
    }
}

/* ---- running a model both ways ------------------------------------------------------------ */

/* Memory whose end is followed by an inaccessible page. */
typedef struct fenced {
    uint8_t *map;
    size_t map_len;
} fenced;

static void *fenced_alloc(fenced *f, size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), body = (bytes + page - 1) / page * page;
    f->map_len = body + page;
    f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(f->map != MAP_FAILED);
    assert_int_equal(mprotect(f->map + body, page, PROT_NONE), 0);
    return f->map + body - bytes;
}

static eng_prepared *prepare(builder *b, bool reference) {
    if (reference)
        setenv("NND_REFERENCE_KERNELS", "1", 1);
    else
        unsetenv("NND_REFERENCE_KERNELS");
    eng_operation_desc ops[MAX_OPS + 1];
    memcpy(ops, b->ops, sizeof(eng_operation_desc) * b->n_ops);
    ops[b->n_ops] = (eng_operation_desc){b->code, b->n_op_in, b->op_in, 1, &b->out};
    uint32_t outputs[1] = {b->out};
    eng_model_desc d = {.n_operands = b->n_operands,
                        .operands = b->operands,
                        .n_operations = b->n_ops + 1,
                        .operations = ops,
                        .n_inputs = b->n_inputs,
                        .inputs = b->inputs,
                        .n_outputs = 1,
                        .outputs = outputs,
                        .operand_values = b->values,
                        .operand_values_len = b->n_values};
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    if (eng_prepare(&d, &p, err, sizeof err))
        fail_msg("%s: prepare: %s", schema_operation_name(b->code), err);
    return p;
}

/* One execution on e; false on failure (no cmocka calls: also used from threads). */
static bool execute(eng_exec *e, const builder *b, void *output, size_t out_bytes) {
    eng_io in[2] = {{0}}, out = {.data = output, .length = out_bytes};
    for (uint32_t i = 0; i < b->n_inputs; i++) {
        const eng_operand_desc *o = &b->operands[b->inputs[i]];
        in[i].data = b->input_data[i];
        in[i].length = elems(o) * schema_type_size(o->type);
    }
    char err[SCHEMA_ERR_LEN] = "";
    return eng_exec_run(e, in, &out, NULL, NULL, err, sizeof err) == SCHEMA_OK;
}

/* Runs the model once; returns whether its one step took the fast path. */
static bool run(builder *b, bool reference, void *output, size_t out_bytes) {
    eng_prepared *p = prepare(b, reference);
    bool fast = p->steps[0].backend != NULL;
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    if (!execute(e, b, output, out_bytes))
        fail_msg("%s: execute failed", schema_operation_name(b->code));
    eng_exec_free(e);
    eng_prepared_free(p);
    return fast;
}

static double value(int32_t type, const void *v, size_t k) {
    switch (type) {
    case SCHEMA_TENSOR_FLOAT32: return ((const float *)v)[k];
    case SCHEMA_TENSOR_FLOAT16: return (double)((const eng_half *)v)[k];
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED: return ((const int8_t *)v)[k];
    default: return ((const uint8_t *)v)[k];
    }
}

/* Element k of the fast result agrees with the reference's: FLOAT32 to 1e-4 (relative,
 * over 1; HARD_SWISH and ELU to the vectors' float32 tolerance), FLOAT16 to the vectors'
 * FP16 tolerance, quantized within one step. */
static bool agree(int32_t code, int32_t type, const void *want, const void *got, size_t k) {
    double x = value(type, want, k), y = value(type, got, k);
    if (type == SCHEMA_TENSOR_FLOAT16) return fabs(x - y) <= 0.0048828125 * (1 + fabs(x));
    if (type != SCHEMA_TENSOR_FLOAT32) return fabs(x - y) <= 1;
    float xf = (float)x, yf = (float)y;
    bool vector_tolerance = code == SCHEMA_OP_HARD_SWISH || code == SCHEMA_OP_ELU;
    float tol = vector_tolerance ? 1e-5f + 5.96e-7f * fabsf(xf) : 1e-4f * fmaxf(1.f, fabsf(xf));
    return fabsf(xf - yf) <= tol;
}

/* Per 8-bit type and operation, over the cases that took the fast path: the largest
 * difference from the reference in steps, elements that differ, and elements compared. */
typedef struct q8_diffs {
    int max[2][SCHEMA_OP_COUNT];
    size_t differ[2][SCHEMA_OP_COUNT], compared[2][SCHEMA_OP_COUNT];
} q8_diffs;

static int signed_index(int32_t t) {
    return t == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
}

static void q8_diffs_add(q8_diffs *d, int32_t code, int32_t type, const void *want, const void *got,
                         size_t n) {
    int s = signed_index(type);
    for (size_t k = 0; k < n; k++) {
        int diff = (int)fabs(value(type, want, k) - value(type, got, k));
        if (diff > d->max[s][code]) d->max[s][code] = diff;
        d->differ[s][code] += diff != 0;
    }
    d->compared[s][code] += n;
}

/* The fast paths docs/numerics.md calls bit-exact: they move or clamp stored values. */
static bool claimed_exact(int32_t code) {
    return code == SCHEMA_OP_MAX_POOL_2D || code == SCHEMA_OP_RELU || code == SCHEMA_OP_RELU1 ||
           code == SCHEMA_OP_RELU6;
}

static void q8_diffs_check(const q8_diffs *d) {
    for (int s = 0; s < 2; s++)
        for (int32_t code = 0; code < SCHEMA_OP_COUNT; code++) {
            if (!d->compared[s][code]) continue;
            print_message("%s %s: max %d step, %zu of %zu elements differ\n", s ? "int8" : "uint8",
                          schema_operation_name(code), d->max[s][code], d->differ[s][code],
                          d->compared[s][code]);
            assert_true(d->max[s][code] <= (claimed_exact(code) ? 0 : 1));
        }
}

static void fast_paths_agree_with_reference(void **state) {
    (void)state;
    srand(11);
    int fast[N_TYPES] = {0}, tried[N_TYPES] = {0}, fast_by_code[N_TYPES][SCHEMA_OP_COUNT] = {{0}};
    int per_channel_fast = 0;
    static q8_diffs diffs;
    for (int i = 0; i < CASES; i++) {
        builder *b = malloc(sizeof *b);
        assert_non_null(b);
        random_model(b, i / (int)N_TYPES, case_types[i % N_TYPES]);
        const eng_operand_desc *o = &b->operands[b->out];
        size_t n = elems(o), esize = schema_type_size(o->type);
        if (n == 0) { /* an empty window: the shapes say so, nothing to compare */
            free(b);
            continue;
        }
        fenced fin[2] = {{0}};
        for (uint32_t k = 0; k < b->n_inputs; k++) {
            const eng_operand_desc *x = &b->operands[b->inputs[k]];
            b->input_data[k] = fenced_alloc(&fin[k], elems(x) * schema_type_size(x->type));
            fill(b->input_data[k], x->type, elems(x));
        }
        uint8_t *want = calloc(n, esize), *got = calloc(n, esize), *alone = calloc(n, esize);
        assert_true(want && got && alone);
        run(b, true, want, n * esize);
        eng_cpus_crowd_mode(ENG_CPU_CROWD_NEVER);
        bool took = run(b, false, got, n * esize);
        /* On a crowded machine each operator runs on the calling thread: the same bits. */
        eng_cpus_crowd_mode(ENG_CPU_CROWD_ALWAYS);
        run(b, false, alone, n * esize);
        eng_cpus_crowd_mode(ENG_CPU_CROWD_AUTO);
        if (memcmp(got, alone, n * esize))
            fail_msg("case %d %s %s: one thread computed other bits than the pool", i,
                     schema_operation_name(b->code), schema_type_name(o->type));
        size_t ti = (size_t)i % N_TYPES;
        fast[ti] += took, tried[ti]++;
        per_channel_fast += took && b->per_channel;
        fast_by_code[ti][b->code] += took;
        if (took && quantized(o->type)) q8_diffs_add(&diffs, b->code, o->type, want, got, n);
        for (size_t k = 0; k < n; k++)
            if (!agree(b->code, o->type, want, got, k))
                fail_msg("case %d %s %s: element %zu: reference %g, fast %g", i,
                         schema_operation_name(b->code), schema_type_name(o->type), k,
                         value(o->type, want, k), value(o->type, got, k));
        for (uint32_t k = 0; k < b->n_inputs; k++)
            munmap(fin[k].map, fin[k].map_len);
        free(want), free(got), free(alone), free(b);
    }
    for (size_t t = 0; t < N_TYPES; t++) {
        print_message("%s: %d of %d cases took the fast path\n", schema_type_name(case_types[t]),
                      fast[t], tried[t]);
        assert_true(fast[t] * 10 >= tried[t] * 7);
    }
    /* The float-only unary fast paths, in FLOAT32 and FLOAT16. */
    for (size_t t = 0; t < N_TYPES; t++)
        if (!quantized(case_types[t]))
            assert_true(fast_by_code[t][SCHEMA_OP_HARD_SWISH] > 0 &&
                        fast_by_code[t][SCHEMA_OP_ELU] > 0);
    /* Signed 8-bit: every family on its qs8 operator, convolutions on qc8 too. */
    static const int32_t families[] = {SCHEMA_OP_CONV_2D,
                                       SCHEMA_OP_DEPTHWISE_CONV_2D,
                                       SCHEMA_OP_FULLY_CONNECTED,
                                       SCHEMA_OP_MAX_POOL_2D,
                                       SCHEMA_OP_ADD,
                                       SCHEMA_OP_MUL,
                                       SCHEMA_OP_RELU,
                                       SCHEMA_OP_LOGISTIC,
                                       SCHEMA_OP_TANH};
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        if (!fast_by_code[N_TYPES - 1][families[f]])
            fail_msg("no signed 8-bit %s took the fast path", schema_operation_name(families[f]));
    print_message("%d per-channel convolutions took the fast path\n", per_channel_fast);
    assert_true(per_channel_fast >= 10);
    q8_diffs_check(&diffs);
}

/* ---- one prepared model, executions from several threads --------------------------- */

#define SHARED_RUNS 500

typedef struct shared_run {
    eng_prepared *p;
    const builder *b;
    const uint8_t *want;
    size_t bytes;
    int mismatches;
} shared_run;

static void *shared_worker(void *arg) {
    shared_run *r = arg;
    eng_exec *e = eng_exec_create(r->p);
    uint8_t *got = malloc(r->bytes);
    for (int i = 0; e && got && i < SHARED_RUNS; i++) {
        memset(got, 0xff, r->bytes); /* a run that wrote elsewhere shows */
        if (!execute(e, r->b, got, r->bytes) || memcmp(got, r->want, r->bytes)) r->mismatches++;
    }
    if (!e || !got) r->mismatches++;
    free(got);
    eng_exec_free(e);
    return NULL;
}

/* A prepared model is shared: executions of it on two threads at once (each with its own
 * eng_exec, as the daemon's scheduler runs them) give the single execution's result. */
static void concurrent_executions_agree(void **state) {
    (void)state;
    srand(5);
    builder *b = malloc(sizeof *b);
    assert_non_null(b);
    do {
        memset(b, 0, sizeof *b);
        conv_model(b, SCHEMA_TENSOR_FLOAT32, false);
    } while (elems(&b->operands[b->out]) < 64);
    const eng_operand_desc *x = &b->operands[b->inputs[0]], *o = &b->operands[b->out];
    b->input_data[0] = malloc(elems(x) * sizeof(float));
    assert_non_null(b->input_data[0]);
    fill(b->input_data[0], x->type, elems(x));
    size_t bytes = elems(o) * sizeof(float);
    uint8_t *want = malloc(bytes);
    assert_non_null(want);
    eng_prepared *p = prepare(b, false);
    assert_non_null(p->steps[0].backend);
    eng_exec *e = eng_exec_create(p);
    assert_true(e && execute(e, b, want, bytes));
    eng_exec_free(e);
    shared_run runs[2] = {{p, b, want, bytes, 0}, {p, b, want, bytes, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, shared_worker, &runs[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(runs[0].mismatches + runs[1].mismatches, 0);
    eng_prepared_free(p);
    free(want), free(b->input_data[0]), free(b);
}

/* ---- FP16 regions ------------------------------------------------------------------ */

/* CONV_2D -> DEPTHWISE_CONV_2D -> ADD (a constant) -> TANH (reference: no float operator)
 * -> MAX_POOL_2D, all TENSOR_FLOAT16: the two temporaries between fast steps become
 * float, the two a reference step reads or writes stay FP16, and the chain agrees with
 * the reference within the FP16 tolerance. */
static void fp16_region_stays_float_inside(void **state) {
    (void)state;
    srand(17);
    const int32_t t = SCHEMA_TENSOR_FLOAT16;
    builder *b = calloc(1, sizeof *b);
    assert_non_null(b);
    uint32_t d_in[4] = {1, 9, 9, 3}, d[4] = {1, 9, 9, 8}, d_pool[4] = {1, 4, 4, 8};
    use(b, input(b, t, 4, d_in, 0, 0));
    use(b, constant(b, t, 4, (uint32_t[]){8, 3, 3, 3}, 0, 0));
    use(b, constant(b, t, 1, (uint32_t[]){8}, 0, 0));
    uint32_t same = scalar_i32(b, 1), one = scalar_i32(b, 1), relu = scalar_i32(b, 1);
    use(b, same), use(b, one), use(b, one), use(b, relu);
    b->out = operand(b, t, 4, d, 0, 0, SCHEMA_TEMPORARY);
    b->code = SCHEMA_OP_CONV_2D;
    uint32_t conv_out = b->out;
    finish_op(b);
    use(b, conv_out), use(b, constant(b, t, 4, (uint32_t[]){1, 3, 3, 8}, 0, 0));
    use(b, constant(b, t, 1, (uint32_t[]){8}, 0, 0));
    use(b, same), use(b, one), use(b, one), use(b, one), use(b, scalar_i32(b, 0));
    b->out = operand(b, t, 4, d, 0, 0, SCHEMA_TEMPORARY);
    b->code = SCHEMA_OP_DEPTHWISE_CONV_2D;
    uint32_t dw_out = b->out;
    finish_op(b);
    use(b, dw_out), use(b, constant(b, t, 1, (uint32_t[]){8}, 0, 0)), use(b, scalar_i32(b, 0));
    b->out = operand(b, t, 4, d, 0, 0, SCHEMA_TEMPORARY);
    b->code = SCHEMA_OP_ADD;
    uint32_t add_out = b->out;
    finish_op(b);
    use(b, add_out);
    b->out = operand(b, t, 4, d, 0, 0, SCHEMA_TEMPORARY);
    b->code = SCHEMA_OP_TANH;
    uint32_t tanh_out = b->out;
    finish_op(b);
    use(b, tanh_out), use(b, scalar_i32(b, 2)); /* VALID */
    for (int k = 0; k < 4; k++)
        use(b, scalar_i32(b, 2)); /* strides and filter 2x2 */
    use(b, scalar_i32(b, 0));
    b->out = operand(b, t, 4, d_pool, 0, 0, SCHEMA_MODEL_OUTPUT);
    b->code = SCHEMA_OP_MAX_POOL_2D;
    size_t n_in = 9 * 9 * 3, n_out = 4 * 4 * 8;
    b->input_data[0] = malloc(n_in * sizeof(eng_half));
    assert_non_null(b->input_data[0]);
    fill(b->input_data[0], t, n_in);
    eng_half want[4 * 4 * 8], got[4 * 4 * 8];
    run(b, true, want, sizeof want);
    eng_prepared *p = prepare(b, false);
    uint32_t fast_steps = 0;
    for (uint32_t k = 0; k < p->n_steps; k++)
        fast_steps += p->steps[k].backend != NULL;
    assert_int_equal(fast_steps, 4); /* all but TANH */
    assert_int_equal(p->tensors[conv_out].type, SCHEMA_TENSOR_FLOAT32);
    assert_int_equal(p->tensors[dw_out].type, SCHEMA_TENSOR_FLOAT32);
    assert_int_equal(p->tensors[add_out].type, SCHEMA_TENSOR_FLOAT16);
    assert_int_equal(p->tensors[tanh_out].type, SCHEMA_TENSOR_FLOAT16);
    assert_int_equal(p->tensors[b->out].type, SCHEMA_TENSOR_FLOAT16);
    eng_exec *e = eng_exec_create(p);
    assert_true(e && execute(e, b, got, sizeof got));
    for (size_t k = 0; k < n_out; k++)
        if (!agree(SCHEMA_OP_MAX_POOL_2D, t, want, got, k))
            fail_msg("element %zu: reference %g, fast %g", k, (double)want[k], (double)got[k]);
    eng_exec_free(e);
    eng_prepared_free(p);
    free(b->input_data[0]), free(b);
}

static void lrn_wide_windows_match_direct_sums(void **state) {
    (void)state;
    static const int32_t radii[] = {31, 32, 40, 200, 100000, 2147483647};
    enum { DEPTH = 300, ROWS = 3 };
    static float x[ROWS * DEPTH], y[ROWS * DEPTH];
    for (size_t r = 0; r < sizeof radii / sizeof radii[0]; r++) {
        builder b;
        memset(&b, 0, sizeof b);
        uint32_t dims[2] = {ROWS, DEPTH};
        use(&b, input(&b, SCHEMA_TENSOR_FLOAT32, 2, dims, 0, 0));
        use(&b, scalar_i32(&b, radii[r]));
        use(&b, scalar_float(&b, SCHEMA_TENSOR_FLOAT32, 1.0f));
        use(&b, scalar_float(&b, SCHEMA_TENSOR_FLOAT32, 0.5f));
        use(&b, scalar_float(&b, SCHEMA_TENSOR_FLOAT32, 0.75f));
        b.out = operand(&b, SCHEMA_TENSOR_FLOAT32, 2, dims, 0, 0, SCHEMA_MODEL_OUTPUT);
        b.code = SCHEMA_OP_LOCAL_RESPONSE_NORMALIZATION;
        fill(x, SCHEMA_TENSOR_FLOAT32, ROWS * DEPTH);
        x[5] = 1e6f; /* a large value entering and leaving the window */
        b.input_data[0] = x;
        run(&b, true, y, sizeof y);
        for (int row = 0; row < ROWS; row++) {
            const float *xr = x + row * DEPTH;
            for (int k = 0; k < DEPTH; k++) {
                int64_t lo = k - (int64_t)radii[r], hi = k + (int64_t)radii[r] + 1;
                double sum = 0;
                for (int64_t d = lo < 0 ? 0 : lo; d < (hi > DEPTH ? DEPTH : hi); d++)
                    sum += (double)xr[d] * xr[d];
                double want = xr[k] * pow(1.0 + 0.5 * sum, -0.75);
                double got = y[row * DEPTH + k];
                if (fabs(got - want) > 1e-5 * fmax(1.0, fabs(want)))
                    fail_msg("radius %d, row %d, element %d: %g, wanted %g", radii[r], row, k, got,
                             want);
            }
        }
    }
}

/* ---- tiny steps ---------------------------------------------------------------------- */

/* Three ADDs of a constant one over [n] floats: with n = 4 the first two stay on the
 * reference kernel (an operator costs more than the loop) and the last keeps its operator
 * (its run rests the pool's workers); with n = 16 all three take the fast path. */
static void tiny_steps_stay_on_reference(void **state) {
    (void)state;
    const uint32_t sizes[2] = {4, 16};
    for (int k = 0; k < 2; k++) {
        uint32_t n = sizes[k];
        builder *b = calloc(1, sizeof *b);
        assert_non_null(b);
        int32_t none = 0;
        uint32_t x = operand(b, SCHEMA_TENSOR_FLOAT32, 1, &n, 0, 0, SCHEMA_MODEL_INPUT);
        uint32_t one = constant(b, SCHEMA_TENSOR_FLOAT32, 1, &n, 0, 0);
        for (uint32_t i = 0; i < n; i++)
            ((float *)(b->values + b->operands[one].offset))[i] = 1.f;
        uint32_t act = scalar(b, SCHEMA_INT32, &none);
        uint32_t t[3], ins[3][3];
        eng_operation_desc ops[3];
        for (uint32_t j = 0; j < 3; j++) {
            t[j] = operand(b, SCHEMA_TENSOR_FLOAT32, 1, &n, 0, 0,
                           j == 2 ? SCHEMA_MODEL_OUTPUT : SCHEMA_TEMPORARY);
            ins[j][0] = j ? t[j - 1] : x, ins[j][1] = one, ins[j][2] = act;
            ops[j] = (eng_operation_desc){SCHEMA_OP_ADD, 3, ins[j], 1, &t[j]};
        }
        eng_model_desc d = {.n_operands = b->n_operands,
                            .operands = b->operands,
                            .n_operations = 3,
                            .operations = ops,
                            .n_inputs = 1,
                            .inputs = &x,
                            .n_outputs = 1,
                            .outputs = &t[2],
                            .operand_values = b->values,
                            .operand_values_len = b->n_values};
        unsetenv("NND_REFERENCE_KERNELS");
        char err[SCHEMA_ERR_LEN] = "";
        eng_prepared *p = NULL;
        if (eng_prepare(&d, &p, err, sizeof err)) fail_msg("prepare: %s", err);
        assert_int_equal(p->n_steps, 3);
        for (uint32_t j = 0; j < 3; j++)
            if ((p->steps[j].backend != NULL) != (n >= 16 || j == 2))
                fail_msg("[%u] ADD %u: %s", n, j, p->steps[j].backend ? "fast" : "reference");
        float in[16], out[16];
        for (uint32_t i = 0; i < n; i++)
            in[i] = (float)i;
        eng_exec *e = eng_exec_create(p);
        assert_non_null(e);
        eng_io io_in = {.data = in, .length = n * sizeof(float)};
        eng_io io_out = {.data = out, .length = n * sizeof(float)};
        assert_int_equal(eng_exec_run(e, &io_in, &io_out, NULL, NULL, err, sizeof err), SCHEMA_OK);
        for (uint32_t i = 0; i < n; i++)
            assert_true(out[i] == (float)i + 3.f);
        eng_exec_free(e);
        eng_prepared_free(p);
        free(b);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(fast_paths_agree_with_reference),
                                       cmocka_unit_test(concurrent_executions_agree),
                                       cmocka_unit_test(fp16_region_stays_float_inside),
                                       cmocka_unit_test(lrn_wide_windows_match_direct_sums),
                                       cmocka_unit_test(tiny_steps_stay_on_reference)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

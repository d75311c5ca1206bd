/* SPDX-License-Identifier: Apache-2.0 */
/* qlstm.c: QUANTIZED_LSTM (HAL 1.3) — one step of an LSTM cell on 8-bit signed activations
 * with 8-bit symmetric weights, a 16-bit cell state and optional CIFG, peephole, layer
 * normalization, projection and clipping, in the reference's integer pipeline
 * (qlstm_math.h): each gate is a sum of rescaled 8-bit products in 16 bits (scales: the
 * intermediate scales, inputs 26 to 29), layer-normalized (the only place the gate biases
 * enter, as in the reference), then sigmoid (tanh for the cell gate) in Q0.15; the cell
 * state, of scale 2^cell_shift, is forget * state + input * cell gate; the hidden state is
 * output gate * tanh(state) in 8 bits (inputs 30, 31), projected when there are projection
 * weights. Outputs: output state, cell state, output (equal to the output state).
 *
 * Where the reference is silent or reads what it should not, this file chooses:
 * - the input and forget gates' peephole terms read the previous cell state (the
 *   reference reads the output buffer before writing it), over all cells;
 * - projection weights without a projection bias get a zero bias (the reference
 *   dereferences a missing one);
 * - a cell state scale must be a power of two from 2^-15 to 2^-9 (the reference fails
 *   execution above 2^-9 and computes nothing below 2^-15): refused at validation. */
#include <math.h>
#include <string.h>

#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/qlstm_math.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

enum {
    IN_X = 0,
    IN_WX = 1,   /* 1..4: input-to-{input, forget, cell, output} weights [units, input] */
    IN_WH = 5,   /* 5..8: recurrent-to-* weights [units, output] */
    IN_PEEP = 9, /* 9..11: cell-to-{input, forget, output} weights [units] */
    IN_BIAS = 12,
    IN_PROJ_W = 16,
    IN_PROJ_B = 17,
    IN_H = 18,
    IN_C = 19,
    IN_LN = 20, /* 20..23: layer normalization weights [units] */
    IN_CELL_CLIP = 24,
    IN_PROJ_CLIP = 25,
    IN_SCALE = 26, /* 26..29: intermediate scales of the four gates */
    IN_HIDDEN_ZERO = 30,
    IN_HIDDEN_SCALE = 31,
    N_IN = 32,
    OUT_H = 0,
    OUT_C = 1,
    OUT_Y = 2
};
enum { G_I, G_F, G_C, G_O, N_GATES };

/* Operand types: input i is kinds[i] (q: QUANT8_ASYMM_SIGNED, w: QUANT8_SYMM, s:
 * QUANT16_SYMM, b: TENSOR_INT32, f: FLOAT32, i: INT32), of rank ranks[i] ('0': scalar). */
static const char KINDS[N_IN + 1] = "qwwwwwwwwsssbbbbwbqsssssffffffif";
static const char RANKS[N_IN + 1] = "22222222211111112122111100000000";

static int32_t kind_type(char k) {
    switch (k) {
    case 'q': return SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
    case 'w': return SCHEMA_TENSOR_QUANT8_SYMM;
    case 's': return SCHEMA_TENSOR_QUANT16_SYMM;
    case 'b': return SCHEMA_TENSOR_INT32;
    case 'f': return SCHEMA_FLOAT32;
    default: return SCHEMA_INT32;
    }
}

static bool has(const eng_op_ctx *c, uint32_t i) {
    return eng_has_input(c, i);
}

/* log2 of the cell state's scale, as the reference derives it; false unless a whole
 * power of two. */
static bool cell_shift_of(const eng_tensor *cell, int *shift) {
    float l = logf(cell->scale) * (1.f / logf(2.f)), r = roundf(l);
    *shift = (int)r;
    return fabsf(l - r) < 1e-3f;
}

static schema_status qlstm_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, N_IN, N_IN, 3, 3);
    if (s) return s;
    for (uint32_t i = 0; i < N_IN; i++) {
        int32_t want = kind_type(KINDS[i]);
        if (c->in[i]->type != want)
            return eng_fail(c, "input %u must be %s, is %s", i, schema_type_name(want),
                            schema_type_name(c->in[i]->type));
    }
    static const int32_t outs[3] = {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, SCHEMA_TENSOR_QUANT16_SYMM,
                                    SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED};
    for (uint32_t o = 0; o < 3; o++)
        if (c->out[o]->type != outs[o])
            return eng_fail(c, "output %u must be %s, is %s", o, schema_type_name(outs[o]),
                            schema_type_name(c->out[o]->type));
    /* Ranks and the cell state's scale are driver rules: the NNAPI runtime checks types
     * only as the operation is added. */
    if (!eng_driver_rules(c)) return SCHEMA_OK;
    if ((s = eng_check_input_ranks(c, RANKS))) return s;
    int shift;
    if (!cell_shift_of(c->in[IN_C], &shift) || shift < -15 || shift > -9)
        return eng_fail(c,
                        "the cell state (input 19) must have a power of two scale from 2^-15 to "
                        "2^-9, has %g",
                        c->in[IN_C]->scale);
    return SCHEMA_OK;
}

/* ---- shapes -------------------------------------------------------------------------- */

/* Input i, when given, has the shape [d0] (rank 1) or [d0, d1]. */
static schema_status dims_if(eng_op_ctx *c, uint32_t i, const char *what, uint32_t rank,
                             uint32_t d0, uint32_t d1) {
    if (!has(c, i)) return SCHEMA_OK;
    return eng_expect_dims(c, i, what, rank, (const uint32_t[]){d0, d1});
}

/* Given inputs among idx[0..n): all or none. */
static bool all_or_none(const eng_op_ctx *c, const uint32_t *idx, int n) {
    int given = 0;
    for (int k = 0; k < n; k++)
        given += has(c, idx[k]);
    return given == 0 || given == n;
}

static schema_status qlstm_shape(eng_op_ctx *c) {
    static const uint32_t optional[] = {1, 5, 9, 10, 11, 12, 16, 17, 20, 21, 22, 23};
    for (size_t k = 0; k < sizeof optional / sizeof *optional; k++)
        if (eng_input_pending(c, optional[k])) return ENG_DEFER;
    const eng_tensor *x = c->in[IN_X];
    uint32_t batch = x->dims[0], n_input = x->dims[1];
    uint32_t units = c->in[IN_WX + G_O]->dims[0], n_output = c->in[IN_WH + G_O]->dims[1];
    schema_status s;
    for (uint32_t g = 0; g < N_GATES; g++)
        if ((s = dims_if(c, IN_WX + g, "input weights", 2, units, n_input)) ||
            (s = dims_if(c, IN_WH + g, "recurrent weights", 2, units, n_output)) ||
            (s = dims_if(c, IN_BIAS + g, "gate bias", 1, units, 0)) ||
            (s = dims_if(c, IN_LN + g, "layer normalization weights", 1, units, 0)))
            return s;
    for (uint32_t k = 0; k < 3; k++)
        if ((s = dims_if(c, IN_PEEP + k, "peephole weights", 1, units, 0))) return s;
    bool cifg = !has(c, IN_WX + G_I);
    if (cifg != !has(c, IN_WH + G_I))
        return eng_fail(c, "input-to-input and recurrent-to-input weights (inputs 1 and 5) must "
                           "be given together or omitted together (CIFG)");
    bool peep_all = (has(c, IN_PEEP) || cifg) && has(c, IN_PEEP + 1) && has(c, IN_PEEP + 2);
    if (!peep_all && !all_or_none(c, (const uint32_t[]){9, 10, 11}, 3))
        return eng_fail(c, "peephole weights (inputs 9 to 11) must be all given or all omitted");
    if (cifg == has(c, IN_BIAS + G_I))
        return eng_fail(c, "the input gate bias (input 12) must be given exactly without CIFG");
    if (cifg && has(c, IN_LN + G_I))
        return eng_fail(c, "the input layer normalization weights (input 20) must be omitted "
                           "with CIFG");
    if (!all_or_none(c, (const uint32_t[]){20, 21, 22, 23} + cifg, 4 - cifg))
        return eng_fail(c, "layer normalization weights must be all given or all omitted");
    if ((s = dims_if(c, IN_PROJ_W, "projection weights", 2, n_output, units)) ||
        (s = dims_if(c, IN_PROJ_B, "projection bias", 1, n_output, 0)))
        return s;
    if (!has(c, IN_PROJ_W) && n_output != units)
        return eng_fail(c, "output size %u differs from %u units without a projection", n_output,
                        units);
    if ((s = eng_expect_dims(c, IN_H, "previous output", 2, (const uint32_t[]){batch, n_output})) ||
        (s = eng_expect_dims(c, IN_C, "previous cell state", 2, (const uint32_t[]){batch, units})))
        return s;
    eng_copy_shape(c->out[OUT_H], c->in[IN_H]);
    eng_copy_shape(c->out[OUT_C], c->in[IN_C]);
    eng_copy_shape(c->out[OUT_Y], c->in[IN_H]);
    return SCHEMA_OK;
}

/* ---- execution ----------------------------------------------------------------------- */

/* One gate's weights and the multipliers that bring each term to its intermediate scale. */
typedef struct gate_plan {
    const int8_t *wx, *wh;
    const int16_t *peep, *ln;
    const int32_t *bias;
    int32_t *bias_x, *bias_h; /* the input and output zero points folded into biases */
    int32_t mx, mh, mp, mln, variance_limit;
    int sx, sh, sp, sln;
} gate_plan;

typedef struct qlstm_run_ctx {
    const int8_t *x, *h;
    const int16_t *c_prev;
    uint32_t batch, n_input, n_output, units;
    int cell_shift;
} qlstm_run_ctx;

static void multiplier(double m, int32_t *mult, int *shift) {
    eng_quantize_multiplier(m, mult, shift);
}

/* Input i's data, aligned for its element type (constants may sit at any offset); NULL
 * when omitted. *oom is set when an aligned copy could not be made. */
static const void *data_of(eng_op_ctx *c, uint32_t i, bool *oom) {
    if (!has(c, i)) return NULL;
    const void *p = eng_aligned_data(c, c->in[i]);
    if (!p) *oom = true;
    return p;
}

static bool plan_gate(eng_op_ctx *c, const qlstm_run_ctx *r, int g, gate_plan *p) {
    static const int peep_of[N_GATES] = {0, 1, -1, 2};
    const eng_tensor *x = c->in[IN_X], *h = c->in[IN_H], *wx = c->in[IN_WX + g],
                     *wh = c->in[IN_WH + g], *ln = c->in[IN_LN + g];
    float inter = eng_f32(c->in[IN_SCALE + g]);
    bool oom = false;
    memset(p, 0, sizeof *p);
    p->wx = wx->data, p->wh = wh->data;
    p->bias = data_of(c, IN_BIAS + g, &oom);
    p->ln = data_of(c, IN_LN + g, &oom);
    multiplier(wx->scale * x->scale / inter, &p->mx, &p->sx);
    multiplier(wh->scale * h->scale / inter, &p->mh, &p->sh);
    if (peep_of[g] >= 0 && (p->peep = data_of(c, IN_PEEP + (uint32_t)peep_of[g], &oom))) {
        double scale = pow(2, r->cell_shift) * c->in[IN_PEEP + (uint32_t)peep_of[g]]->scale / inter;
        multiplier((float)scale, &p->mp, &p->sp);
    }
    if (p->ln) multiplier(ln->scale, &p->mln, &p->sln);
    /* Keeps the variance from overflowing; a scale past an int's range (a client's to
     * choose) must not reach the conversion. */
    double limit = 10000.0 * ln->scale;
    p->variance_limit = limit >= 1 ? 1 : limit > INT32_MIN ? (int32_t)limit : INT32_MIN;
    p->bias_x = eng_scratch(c, r->units * sizeof(int32_t));
    p->bias_h = eng_scratch(c, r->units * sizeof(int32_t));
    if (oom || !p->bias_x || !p->bias_h) return false;
    eng_qlstm_fold_bias(-x->zero_point, p->wx, r->units, r->n_input, NULL, p->bias_x);
    eng_qlstm_fold_bias(-h->zero_point, p->wh, r->units, r->n_output, NULL, p->bias_h);
    return true;
}

/* A gate's value before its nonlinearity: the two products, the peephole term on cell
 * state `cs`, the layer normalization. */
static void gate_value(const qlstm_run_ctx *r, const gate_plan *p, const int16_t *cs, int16_t *v) {
    size_t n = (size_t)r->batch * r->units;
    memset(v, 0, n * sizeof *v);
    eng_qlstm_matmul_acc(r->x, p->bias_x, p->wx, p->mx, p->sx, r->batch, r->n_input, r->units, 0,
                         INT16_MIN, INT16_MAX, v);
    eng_qlstm_matmul_acc(r->h, p->bias_h, p->wh, p->mh, p->sh, r->batch, r->n_output, r->units, 0,
                         INT16_MIN, INT16_MAX, v);
    if (p->peep) eng_qlstm_peephole_acc(p->peep, cs, r->batch, r->units, p->mp, p->sp, v);
    if (p->ln)
        eng_qlstm_layer_norm(v, p->ln, p->bias, p->mln, p->sln, p->variance_limit, r->batch,
                             r->units);
}

/* The 8-bit hidden state hidden [batch, units] projected into y [batch, n_output]. */
static bool project(eng_op_ctx *c, const qlstm_run_ctx *r, const int8_t *hidden, int8_t *y) {
    const eng_tensor *pw = c->in[IN_PROJ_W];
    size_t m = (size_t)r->batch * r->n_output;
    bool oom = false;
    const int32_t *pb = data_of(c, IN_PROJ_B, &oom);
    int32_t *bias = eng_scratch(c, r->n_output * sizeof(int32_t));
    int16_t *acc = eng_scratch(c, m * sizeof(int16_t));
    if (oom || !bias || !acc) return false;
    float hidden_scale = eng_f32(c->in[IN_HIDDEN_SCALE]);
    int32_t mult;
    int shift;
    multiplier(pw->scale * hidden_scale / c->in[IN_H]->scale, &mult, &shift);
    eng_qlstm_fold_bias(eng_i32(c->in[IN_HIDDEN_ZERO]), pw->data, r->n_output, r->units, pb, bias);
    memset(acc, 0, m * sizeof *acc);
    eng_qlstm_matmul_acc(hidden, bias, pw->data, mult, shift, r->batch, r->units, r->n_output,
                         c->in[IN_H]->zero_point, -128, 127, acc);
    for (size_t i = 0; i < m; i++)
        y[i] = (int8_t)acc[i];
    float clip = eng_f32(c->in[IN_PROJ_CLIP]);
    if (clip > 0.f) {
        int8_t q = (int8_t)(int32_t)fminf(fmaxf(clip / pw->scale, -128.f), 127.f);
        if (q > 0) eng_qlstm_clip8(y, m, q);
    }
    return true;
}

static schema_status qlstm_run(eng_op_ctx *c) {
    const eng_tensor *cell_in = c->in[IN_C];
    bool oom = false, cifg = !has(c, IN_WX + G_I);
    qlstm_run_ctx r = {.x = c->in[IN_X]->data,
                       .h = c->in[IN_H]->data,
                       .c_prev = data_of(c, IN_C, &oom),
                       .batch = c->in[IN_X]->dims[0],
                       .n_input = c->in[IN_X]->dims[1],
                       .n_output = c->in[IN_H]->dims[1],
                       .units = cell_in->dims[1]};
    cell_shift_of(cell_in, &r.cell_shift);
    size_t n = (size_t)r.batch * r.units;
    int16_t *gate[N_GATES];
    for (int g = 0; g < N_GATES; g++)
        gate[g] = eng_scratch(c, n * sizeof(int16_t));
    int8_t *hidden = eng_scratch(c, n);
    gate_plan plan[N_GATES];
    bool ok = !oom && gate[G_I] && gate[G_F] && gate[G_C] && gate[G_O] && hidden;
    for (int g = 0; ok && g < N_GATES; g++)
        ok = (g == G_I && cifg) || plan_gate(c, &r, g, &plan[g]);
    if (!ok) return eng_fail(c, "out of scratch memory");
    gate_value(&r, &plan[G_F], r.c_prev, gate[G_F]);
    eng_qlstm_sigmoid(gate[G_F], n);
    gate_value(&r, &plan[G_C], r.c_prev, gate[G_C]);
    eng_qlstm_tanh(gate[G_C], n, 3, gate[G_C]);
    if (cifg) {
        for (size_t i = 0; i < n; i++)
            gate[G_I][i] = (int16_t)(INT16_MAX - gate[G_F][i]);
    } else {
        gate_value(&r, &plan[G_I], r.c_prev, gate[G_I]);
        eng_qlstm_sigmoid(gate[G_I], n);
    }
    /* The new cell state: forget * state (Q0.15 * 2^shift) + input * cell gate (Q0.15 *
     * Q0.15 brought to 2^shift), clipped. */
    int16_t *cs = c->out[OUT_C]->data;
    eng_qlstm_mul(gate[G_F], r.c_prev, n, 15, gate[G_F]);
    eng_qlstm_mul(gate[G_I], gate[G_C], n, 30 + r.cell_shift, gate[G_C]);
    eng_qlstm_add(gate[G_F], gate[G_C], n, cs);
    float cell_clip = eng_f32(c->in[IN_CELL_CLIP]);
    if (cell_clip > 0.f) {
        int16_t q = (int16_t)(int32_t)fminf(fmaxf(cell_clip / cell_in->scale, -32768.f), 32767.f);
        if (q > 0) eng_qlstm_clip16(cs, n, q);
    }
    gate_value(&r, &plan[G_O], cs, gate[G_O]); /* the peephole sees the new state */
    eng_qlstm_sigmoid(gate[G_O], n);
    /* Hidden state: output gate * tanh(state), at the hidden scale and zero point. */
    eng_qlstm_tanh(cs, n, r.cell_shift + 15, gate[G_I]);
    int32_t mult;
    int shift;
    multiplier((float)(pow(2, -15) / eng_f32(c->in[IN_HIDDEN_SCALE]) * pow(2, -15)), &mult, &shift);
    eng_qlstm_mul_to_q8(gate[G_O], gate[G_I], n, mult, shift, eng_i32(c->in[IN_HIDDEN_ZERO]),
                        hidden);
    int8_t *y = c->out[OUT_Y]->data;
    if (has(c, IN_PROJ_W)) {
        if (!project(c, &r, hidden, y)) return eng_fail(c, "out of scratch memory");
    } else {
        memcpy(y, hidden, n); /* n_output == units */
    }
    memcpy(c->out[OUT_H]->data, y, (size_t)r.batch * r.n_output);
    return SCHEMA_OK;
}

/* CIFG, peephole, input bias, projection and layer normalization inputs may be omitted. */
ENG_OP_DEF(QUANTIZED_LSTM, qlstm_check, qlstm_shape,
           ENG_INPUT(1) | ENG_INPUT(5) | ENG_INPUT(9) | ENG_INPUT(10) | ENG_INPUT(11) |
               ENG_INPUT(12) | ENG_INPUT(16) | ENG_INPUT(17) | ENG_INPUT(20) | ENG_INPUT(21) |
               ENG_INPUT(22) | ENG_INPUT(23),
           0, {{SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, qlstm_run}});

/* SPDX-License-Identifier: Apache-2.0 */
/* lstm.c: LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM.
 *
 * One float32 cell (CIFG, peephole, layer normalization, cell and projection clipping,
 * projection, auxiliary input) is stepped through time by all three operations: LSTM is a
 * sequence of one step. FLOAT16 runs through the float32 bridge, as the reference also
 * computes in float32. Batch-major sequences are read and written through strides rather
 * than transposed copies. Since HAL 1.3 the sequence operations may also output their
 * final output and cell states (two more outputs per direction), and
 * BIDIRECTIONAL_SEQUENCE_LSTM takes an auxiliary input without auxiliary weights as the
 * backward direction's input ("parallel linking"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/ops_common/clamp.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/recurrent.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"
#include "engine/ops/op_def.h"

enum { GATE_I, GATE_F, GATE_C, GATE_O };
static const char *const GATE[4] = {"input", "forget", "cell", "output"};

#define LAYER_NORM_EPSILON 1e-8f

/* Where one cell's tensors sit in an operation's inputs; -1: the operation has none. */
typedef struct cell_layout {
    int wx[4];   /* input-to-gate weights [n_cell, n_input]; wx[GATE_I] optional (CIFG) */
    int wh[4];   /* recurrent-to-gate weights [n_cell, n_output]; wh[GATE_I] optional */
    int peep[3]; /* cell-to-{input, forget, output} weights [n_cell], optional */
    int bias[4]; /* gate biases [n_cell]; bias[GATE_I] absent with CIFG */
    int proj_w, proj_b;
    int h0, c0; /* output state and cell state in */
    int ln[4];  /* layer normalization weights [n_cell], optional */
    int wa[4];  /* auxiliary-input-to-gate weights [n_cell, n_aux], optional */
    int act, cell_clip, proj_clip;
} cell_layout;

/* LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and the forward cell of BIDIRECTIONAL_SEQUENCE_LSTM
 * share the positions of their weights and biases. */
#define FIRST_CELL                                                                                 \
    .wx = {1, 2, 3, 4}, .wh = {5, 6, 7, 8}, .peep = {9, 10, 11}, .bias = {12, 13, 14, 15},         \
    .proj_w = 16, .proj_b = 17
#define NONE                                                                                       \
    { -1, -1, -1, -1 }
// clang-format off
static const cell_layout LSTM_V10 = {FIRST_CELL, .h0 = 18, .c0 = 19, .ln = NONE, .wa = NONE,
                                     .act = 20, .cell_clip = 21, .proj_clip = 22};
static const cell_layout LSTM_V12 = {FIRST_CELL, .h0 = 18, .c0 = 19, .ln = {23, 24, 25, 26},
                                     .wa = NONE, .act = 20, .cell_clip = 21, .proj_clip = 22};
static const cell_layout UNI = {FIRST_CELL, .h0 = 18, .c0 = 19, .ln = {24, 25, 26, 27},
                                .wa = NONE, .act = 20, .cell_clip = 21, .proj_clip = 22};
static const cell_layout BIDI_FW = {FIRST_CELL, .h0 = 35, .c0 = 36, .ln = {53, 54, 55, 56},
                                    .wa = {40, 41, 42, 43}, .act = 48, .cell_clip = 49,
                                    .proj_clip = 50};
static const cell_layout BIDI_BW = {.wx = {18, 19, 20, 21}, .wh = {22, 23, 24, 25},
                                    .peep = {26, 27, 28}, .bias = {29, 30, 31, 32},
                                    .proj_w = 33, .proj_b = 34, .h0 = 37, .c0 = 38,
                                    .ln = {57, 58, 59, 60}, .wa = {44, 45, 46, 47}, .act = 48,
                                    .cell_clip = 49, .proj_clip = 50};
// clang-format on
#undef NONE
#undef FIRST_CELL

enum { UNI_TIME_MAJOR = 23 };
enum { BIDI_AUX_INPUT = 39, BIDI_MERGE = 51, BIDI_TIME_MAJOR = 52 };

static bool has(const eng_op_ctx *c, int i) {
    return i >= 0 && eng_has_input(c, (uint32_t)i);
}

static const float *opt(const eng_op_ctx *c, int i) {
    return has(c, i) ? c->in[i]->data : NULL;
}

/* Whether an optional model input is omitted is only known at execution: the checks (and
 * LSTM's scratch shape) must wait until then. */
static bool pending(const eng_op_ctx *c, int i) {
    return i >= 0 && eng_input_pending(c, (uint32_t)i);
}

static bool layout_pending(const eng_op_ctx *c, const cell_layout *l) {
    const int opt_inputs[] = {l->wx[GATE_I], l->wh[GATE_I],   l->peep[0], l->peep[1],
                              l->peep[2],    l->bias[GATE_I], l->proj_w,  l->proj_b,
                              l->ln[0],      l->ln[1],        l->ln[2],   l->ln[3],
                              l->wa[0],      l->wa[1],        l->wa[2],   l->wa[3]};
    for (size_t k = 0; k < sizeof opt_inputs / sizeof opt_inputs[0]; k++)
        if (pending(c, opt_inputs[k])) return true;
    return false;
}

/* ---- the cell ------------------------------------------------------------------------ */

typedef struct lstm_cell {
    const float *wx[4], *wh[4], *wa[4], *peep[3], *bias[4], *ln[4], *proj_w, *proj_b;
    uint32_t n_input, n_aux, n_cell, n_output;
    int32_t act;
    float cell_clip, proj_clip;
    bool cifg, peephole, layer_norm;
} lstm_cell;

static void cell_bind(const eng_op_ctx *c, const cell_layout *l, const eng_seq_io *io,
                      lstm_cell *p) {
    memset(p, 0, sizeof *p);
    for (int g = 0; g < 4; g++) {
        p->wx[g] = opt(c, l->wx[g]);
        p->wh[g] = opt(c, l->wh[g]);
        p->bias[g] = opt(c, l->bias[g]);
        p->ln[g] = opt(c, l->ln[g]);
        p->wa[g] = io->aux ? opt(c, l->wa[g]) : NULL;
    }
    for (int k = 0; k < 3; k++)
        p->peep[k] = opt(c, l->peep[k]);
    p->proj_w = opt(c, l->proj_w);
    p->proj_b = p->proj_w ? opt(c, l->proj_b) : NULL;
    p->n_input = io->n_input;
    p->n_aux = io->n_aux;
    p->n_cell = c->in[l->wx[GATE_O]]->dims[0];
    p->n_output = c->in[l->wh[GATE_O]]->dims[1];
    p->act = eng_i32(c->in[l->act]);
    p->cell_clip = eng_f32(c->in[l->cell_clip]);
    p->proj_clip = eng_f32(c->in[l->proj_clip]);
    p->cifg = !p->wx[GATE_I];
    p->peephole = p->peep[2] != NULL;
    p->layer_norm = p->ln[GATE_O] != NULL;
}

/* Rows of v: (v - mean) / stddev, with epsilon standing in for a zero variance. */
static void normalize_rows(float *v, uint32_t n_batch, uint32_t n) {
    if (n == 0) return;
    for (uint32_t b = 0; b < n_batch; b++, v += n) {
        float sum = 0.f, sq = 0.f;
        for (uint32_t i = 0; i < n; i++)
            sum += v[i];
        float mean = sum / (float)n;
        for (uint32_t i = 0; i < n; i++)
            sq += (v[i] - mean) * (v[i] - mean);
        float var = sq / (float)n;
        float inv = 1.f / sqrtf(var == 0.f ? LAYER_NORM_EPSILON : var);
        for (uint32_t i = 0; i < n; i++)
            v[i] = (v[i] - mean) * inv;
    }
}

/* Peephole from the cell state cs, layer normalization (which adds the bias late), and
 * the gate's nonlinearity: sigmoid, or the cell activation for the cell gate. */
static void gate_finish(const lstm_cell *p, int gate, float *v, const float *cs, uint32_t n_batch) {
    size_t nc = p->n_cell, n = (size_t)n_batch * nc;
    const float *peep = gate == GATE_C ? NULL : p->peep[gate == GATE_O ? 2 : gate];
    if (p->peephole && peep)
        for (size_t i = 0; i < n; i++)
            v[i] += peep[i % nc] * cs[i];
    if (p->layer_norm) {
        normalize_rows(v, n_batch, p->n_cell);
        for (size_t i = 0; i < n; i++)
            v[i] = v[i] * p->ln[gate][i % nc] + p->bias[gate][i % nc];
    }
    eng_recurrent_act_vec(gate == GATE_C ? p->act : ENG_ACT_SIGMOID, v, n);
}

/* One time step for n_batch rows. x rows are x_b elements apart (aux likewise); h
 * [n_batch, n_output] and cs [n_batch, n_cell] hold the state in and receive the state
 * out. gates holds 3 (CIFG) or 4 blocks of n_batch * n_cell, laid out as the reference's
 * scratch buffer. */
static void lstm_step(const lstm_cell *p, uint32_t n_batch, const float *x, size_t x_b,
                      const float *aux, size_t aux_b, float *h, float *cs, float *gates) {
    size_t nc = p->n_cell, n = (size_t)n_batch * nc;
    float *g[4];
    if (p->cifg) {
        g[GATE_I] = NULL, g[GATE_C] = gates, g[GATE_F] = gates + n, g[GATE_O] = gates + 2 * n;
    } else {
        g[GATE_I] = gates, g[GATE_C] = gates + n, g[GATE_F] = gates + 2 * n;
        g[GATE_O] = gates + 3 * n;
    }
    /* Pre-activations; all reads of the previous output state h happen here. */
    for (int k = 0; k < 4; k++) {
        float *v = g[k];
        if (!v) continue;
        for (size_t i = 0; i < n; i++)
            v[i] = p->layer_norm ? 0.f : p->bias[k][i % nc];
        eng_matvec_acc(p->wx[k], p->n_cell, p->n_input, x, x_b, n_batch, v, nc, 1);
        if (aux && p->wa[k])
            eng_matvec_acc(p->wa[k], p->n_cell, p->n_aux, aux, aux_b, n_batch, v, nc, 1);
        eng_matvec_acc(p->wh[k], p->n_cell, p->n_output, h, p->n_output, n_batch, v, nc, 1);
    }
    if (!p->cifg) gate_finish(p, GATE_I, g[GATE_I], cs, n_batch);
    gate_finish(p, GATE_F, g[GATE_F], cs, n_batch);
    gate_finish(p, GATE_C, g[GATE_C], cs, n_batch);
    /* New cell state; with CIFG the input gate is 1 - forget gate. */
    for (size_t i = 0; i < n; i++) {
        float in_gate = p->cifg ? 1.f - g[GATE_F][i] : g[GATE_I][i];
        cs[i] = g[GATE_F][i] * cs[i] + g[GATE_C][i] * in_gate;
        if (p->cifg) g[GATE_F][i] = in_gate;
        if (p->cell_clip > 0.f) cs[i] = eng_clampf(cs[i], -p->cell_clip, p->cell_clip);
    }
    gate_finish(p, GATE_O, g[GATE_O], cs, n_batch); /* peephole sees the new cell state */
    for (size_t i = 0; i < n; i++) {
        g[GATE_C][i] = eng_recurrent_act(p->act, cs[i]);
        g[GATE_O][i] *= g[GATE_C][i];
    }
    if (!p->proj_w) {
        memcpy(h, g[GATE_O], n * sizeof(float)); /* n_output == n_cell without projection */
        return;
    }
    size_t no = p->n_output, m = (size_t)n_batch * no;
    for (size_t i = 0; i < m; i++)
        h[i] = p->proj_b ? p->proj_b[i % no] : 0.f;
    eng_matvec_acc(p->proj_w, p->n_output, p->n_cell, g[GATE_O], nc, n_batch, h, no, 1);
    if (p->proj_clip > 0.f)
        for (size_t i = 0; i < m; i++)
            h[i] = eng_clampf(h[i], -p->proj_clip, p->proj_clip);
}

/* Runs the cell over the sequence (backwards when reverse) from states h0, c0; h and cs
 * receive the final states, each step's output state goes to io->out. */
static void cell_sequence(const lstm_cell *p, const eng_seq_io *io, bool reverse, const float *h0,
                          const float *c0, float *h, float *cs, float *gates) {
    memmove(h, h0, (size_t)io->n_batch * p->n_output * sizeof(float));
    memmove(cs, c0, (size_t)io->n_batch * p->n_cell * sizeof(float));
    for (uint32_t k = 0; k < io->n_time; k++) {
        uint32_t t = reverse ? io->n_time - 1 - k : k;
        lstm_step(p, io->n_batch, io->x + t * io->x_t, io->x_b,
                  io->aux ? io->aux + t * io->aux_t : NULL, io->aux_b, h, cs, gates);
        eng_seq_store(io, t, h, p->n_output);
    }
}

/* Runs one direction; the final states go to h and cs, or to scratch where NULL. */
static schema_status run_direction(eng_op_ctx *c, const cell_layout *l, const eng_seq_io *io,
                                   bool reverse, float *h, float *cs) {
    lstm_cell p;
    cell_bind(c, l, io, &p);
    size_t n = (size_t)io->n_batch * p.n_cell;
    if (!h) h = eng_scratch(c, (size_t)io->n_batch * p.n_output * sizeof(float));
    if (!cs) cs = eng_scratch(c, n * sizeof(float));
    float *gates = eng_scratch(c, 4 * n * sizeof(float));
    if (!h || !cs || !gates) return eng_fail(c, "out of scratch memory");
    cell_sequence(&p, io, reverse, c->in[l->h0]->data, c->in[l->c0]->data, h, cs, gates);
    return SCHEMA_OK;
}

/* ---- validation ---------------------------------------------------------------------- */

static schema_status need(eng_op_ctx *c, int i, const char *dir, const char *what) {
    if (has(c, i)) return SCHEMA_OK;
    return eng_fail(c, "%s%s (input %d) is required", dir, what, i);
}

static schema_status dims_if_present(eng_op_ctx *c, int i, const char *what, uint32_t rank,
                                     uint32_t d0, uint32_t d1) {
    if (!has(c, i)) return SCHEMA_OK;
    return eng_expect_dims(c, (uint32_t)i, what, rank, (const uint32_t[]){d0, d1});
}

/* All of the listed optional inputs are given, or none. */
static bool all_or_none(const eng_op_ctx *c, const int *idx, int n) {
    int given = 0;
    for (int k = 0; k < n; k++)
        given += has(c, idx[k]);
    return given == 0 || given == n;
}

/* Checks one cell's tensors against the reference's rules; n_aux == 0: no aux input. */
static schema_status cell_check(eng_op_ctx *c, const cell_layout *l, const char *dir,
                                uint32_t n_batch, uint32_t n_input, uint32_t n_aux,
                                uint32_t *n_cell_out, uint32_t *n_output_out) {
    char what[96];
    schema_status s;
    for (int g = GATE_F; g <= GATE_O; g++) {
        snprintf(what, sizeof what, "input-to-%s weights", GATE[g]);
        if ((s = need(c, l->wx[g], dir, what))) return s;
        snprintf(what, sizeof what, "recurrent-to-%s weights", GATE[g]);
        if ((s = need(c, l->wh[g], dir, what))) return s;
        snprintf(what, sizeof what, "%s gate bias", GATE[g]);
        if ((s = need(c, l->bias[g], dir, what))) return s;
    }
    if ((s = need(c, l->h0, dir, "output state")) || (s = need(c, l->c0, dir, "cell state")))
        return s;
    const eng_tensor *xo = c->in[l->wx[GATE_O]], *ho = c->in[l->wh[GATE_O]];
    if (xo->rank != 2 || ho->rank != 2)
        return eng_fail(c, "%sinput-to-output and recurrent-to-output weights must be 2-D", dir);
    uint32_t n_cell = xo->dims[0], n_output = ho->dims[1];
    bool cifg = !has(c, l->wx[GATE_I]);
    if (has(c, l->wx[GATE_I]) != has(c, l->wh[GATE_I]))
        return eng_fail(c,
                        "%sinput-to-input and recurrent-to-input weights must be given "
                        "together or omitted together (CIFG)",
                        dir);
    for (int g = 0; g < 4; g++) {
        snprintf(what, sizeof what, "%sinput-to-%s weights", dir, GATE[g]);
        if ((s = dims_if_present(c, l->wx[g], what, 2, n_cell, n_input))) return s;
        snprintf(what, sizeof what, "%srecurrent-to-%s weights", dir, GATE[g]);
        if ((s = dims_if_present(c, l->wh[g], what, 2, n_cell, n_output))) return s;
        snprintf(what, sizeof what, "%s%s gate bias", dir, GATE[g]);
        if ((s = dims_if_present(c, l->bias[g], what, 1, n_cell, 0))) return s;
        snprintf(what, sizeof what, "%s%s layer normalization weights", dir, GATE[g]);
        if ((s = dims_if_present(c, l->ln[g], what, 1, n_cell, 0))) return s;
    }
    for (int k = 0; k < 3; k++) {
        snprintf(what, sizeof what, "%scell-to-%s weights", dir, GATE[k == 2 ? GATE_O : k]);
        if ((s = dims_if_present(c, l->peep[k], what, 1, n_cell, 0))) return s;
    }
    bool peep_all = (has(c, l->peep[0]) || cifg) && has(c, l->peep[1]) && has(c, l->peep[2]);
    if (!peep_all && !all_or_none(c, l->peep, 3))
        return eng_fail(c, "%speephole weights must be all given or all omitted", dir);
    if (cifg && has(c, l->bias[GATE_I]))
        return eng_fail(c, "%sinput gate bias (input %d) must be omitted with CIFG", dir,
                        l->bias[GATE_I]);
    if (!cifg && (s = need(c, l->bias[GATE_I], dir, "input gate bias"))) return s;
    snprintf(what, sizeof what, "%sprojection weights", dir);
    if ((s = dims_if_present(c, l->proj_w, what, 2, n_output, n_cell))) return s;
    snprintf(what, sizeof what, "%sprojection bias", dir);
    if ((s = dims_if_present(c, l->proj_b, what, 1, n_output, 0))) return s;
    if (has(c, l->proj_b) && !has(c, l->proj_w))
        return eng_fail(c, "%sprojection bias given without projection weights", dir);
    if (!has(c, l->proj_w) && n_output != n_cell)
        return eng_fail(c, "%soutput size %u differs from %u cells without a projection", dir,
                        n_output, n_cell);
    if (cifg && has(c, l->ln[GATE_I]))
        return eng_fail(c, "%sinput layer normalization weights must be omitted with CIFG", dir);
    if (!all_or_none(c, l->ln + (cifg ? 1 : 0), cifg ? 3 : 4))
        return eng_fail(c, "%slayer normalization weights must be all given or all omitted", dir);
    snprintf(what, sizeof what, "%soutput state", dir);
    if ((s = eng_expect_dims(c, (uint32_t)l->h0, what, 2, (const uint32_t[]){n_batch, n_output})))
        return s;
    snprintf(what, sizeof what, "%scell state", dir);
    if ((s = eng_expect_dims(c, (uint32_t)l->c0, what, 2, (const uint32_t[]){n_batch, n_cell})))
        return s;
    for (int g = 0; g < 4; g++) {
        snprintf(what, sizeof what, "%sauxiliary input-to-%s weights", dir, GATE[g]);
        if (n_aux == 0 && has(c, l->wa[g]))
            return eng_fail(c, "%s (input %d) given without an auxiliary input", what, l->wa[g]);
        if (n_aux && !(g == GATE_I && cifg) && (s = need(c, l->wa[g], "", what))) return s;
        if ((s = dims_if_present(c, l->wa[g], what, 2, n_cell, n_aux))) return s;
    }
    *n_cell_out = n_cell;
    *n_output_out = n_output;
    return SCHEMA_OK;
}

/* Activation code and clipping thresholds. */
static schema_status check_params(eng_op_ctx *c, const cell_layout *l) {
    if (c->in[l->act]->data) {
        int32_t a = eng_i32(c->in[l->act]);
        if (a < 0 || a > ENG_ACT_SIGMOID)
            return eng_fail(c, "activation %d (input %d) is not a valid code", a, l->act);
    }
    const int clips[2] = {l->cell_clip, l->proj_clip};
    for (int k = 0; k < 2; k++)
        if (c->in[clips[k]]->data && eng_f32(c->in[clips[k]]) < 0.f)
            return eng_fail(c, "clipping threshold (input %d) is negative", clips[k]);
    return SCHEMA_OK;
}

/* Kind string: n tensors, then the scalars, then m tensors. */
static const char *kinds(char *buf, int n, const char *scalars, int m) {
    int at = 0;
    while (at < n)
        buf[at++] = 'T';
    for (const char *k = scalars; *k; k++)
        buf[at++] = *k;
    for (int j = 0; j < m; j++)
        buf[at++] = 'T';
    buf[at] = 0;
    return buf;
}

/* Counts, types (n_head tensors of input 0's type, the scalars, n_tail tensors) and the
 * values of constant parameters. */
static schema_status check_op(eng_op_ctx *c, uint32_t n_in, uint32_t min_out, uint32_t max_out,
                              int n_head, const char *scalars, int n_tail, const char *outs,
                              const cell_layout *l) {
    char k[80];
    schema_status s = eng_check_count(c, n_in, n_in, min_out, max_out);
    if (!s) s = eng_check_float_signature(c, kinds(k, n_head, scalars, n_tail), outs);
    return s ? s : check_params(c, l);
}

/* ---- LSTM ---------------------------------------------------------------------------- */

static const cell_layout *lstm_layout(const eng_op_ctx *c) {
    return c->n_in == 27 ? &LSTM_V12 : &LSTM_V10;
}

static schema_status lstm_check(eng_op_ctx *c) {
    if (c->n_in != 23 && c->n_in != 27)
        return eng_fail(c, "takes 23 or 27 inputs, got %u", c->n_in);
    return check_op(c, c->n_in, 4, 4, 20, "iff", (int)c->n_in - 23, "TTTT", lstm_layout(c));
}

static schema_status lstm_shape(eng_op_ctx *c) {
    const cell_layout *l = lstm_layout(c);
    if (layout_pending(c, l)) return ENG_DEFER;
    const eng_tensor *x = c->in[0];
    if (x->rank != 2) return eng_fail(c, "input 0 must be 2-D, has rank %u", x->rank);
    uint32_t n_batch = x->dims[0], n_cell, n_output;
    schema_status s = check_params(c, l);
    if (!s) s = cell_check(c, l, "", n_batch, x->dims[1], 0, &n_cell, &n_output);
    if (s) return s;
    uint32_t gates = has(c, l->wx[GATE_I]) ? 4 : 3;
    if ((uint64_t)n_cell * gates > UINT32_MAX) /* the scratch row must not wrap 32 bits */
        return eng_fail(c, "%u cells times %u gates is past 2^32", n_cell, gates);
    eng_set_shape(c->out[0], 2, (const uint32_t[]){n_batch, n_cell * gates});
    eng_set_shape(c->out[1], 2, (const uint32_t[]){n_batch, n_output});
    eng_set_shape(c->out[2], 2, (const uint32_t[]){n_batch, n_cell});
    eng_set_shape(c->out[3], 2, (const uint32_t[]){n_batch, n_output});
    return SCHEMA_OK;
}

static schema_status lstm_f32(eng_op_ctx *c) {
    const cell_layout *l = lstm_layout(c);
    eng_seq_io io;
    eng_seq_io_init(&io, true, c->in[0], NULL, c->out[3]->data, c->out[3]->dims[1]);
    lstm_cell p;
    cell_bind(c, l, &io, &p);
    cell_sequence(&p, &io, false, c->in[l->h0]->data, c->in[l->c0]->data, c->out[1]->data,
                  c->out[2]->data, c->out[0]->data);
    return SCHEMA_OK;
}

/* The inputs a cell may go without, as the kernels take them: CIFG (no input gate),
 * no peephole, no projection; layer normalization (HAL 1.2) is optional after them. */
#define CELL_OPTIONAL                                                                              \
    (ENG_INPUT(1) | ENG_INPUT(5) | ENG_INPUT(9) | ENG_INPUT(10) | ENG_INPUT(11) | ENG_INPUT(12) |  \
     ENG_INPUT(16) | ENG_INPUT(17))
ENG_FLOAT_OP(LSTM, lstm_check, lstm_shape,
             CELL_OPTIONAL | ENG_INPUT(23) | ENG_INPUT(24) | ENG_INPUT(25) | ENG_INPUT(26),
             lstm_f32);

/* ---- UNIDIRECTIONAL_SEQUENCE_LSTM ----------------------------------------------------- */

static schema_status uni_check(eng_op_ctx *c) {
    if (c->n_out == 2) return eng_fail(c, "has 1 output, or 3 with the final states; got 2");
    return check_op(c, 28, 1, 3, 20, "iffb", 4, "TTT", &UNI);
}

static schema_status uni_shape(eng_op_ctx *c) {
    if (layout_pending(c, &UNI)) return ENG_DEFER;
    const eng_tensor *x = c->in[0];
    uint32_t n_time = 0, n_batch = 0, n_cell, n_output;
    schema_status s = eng_seq_dims(c, eng_bool(c->in[UNI_TIME_MAJOR]), &n_time, &n_batch);
    if (!s) s = check_params(c, &UNI);
    if (!s) s = cell_check(c, &UNI, "", n_batch, x->dims[2], 0, &n_cell, &n_output);
    if (s) return s;
    eng_set_shape(c->out[0], 3, (const uint32_t[]){x->dims[0], x->dims[1], n_output});
    if (c->n_out == 3) {
        eng_set_shape(c->out[1], 2, (const uint32_t[]){n_batch, n_output});
        eng_set_shape(c->out[2], 2, (const uint32_t[]){n_batch, n_cell});
    }
    return SCHEMA_OK;
}

static schema_status uni_f32(eng_op_ctx *c) {
    eng_seq_io io;
    eng_seq_io_init(&io, eng_bool(c->in[UNI_TIME_MAJOR]), c->in[0], NULL, c->out[0]->data,
                    c->out[0]->dims[2]);
    bool states = c->n_out == 3;
    return run_direction(c, &UNI, &io, false, states ? c->out[1]->data : NULL,
                         states ? c->out[2]->data : NULL);
}

ENG_FLOAT_OP(UNIDIRECTIONAL_SEQUENCE_LSTM, uni_check, uni_shape,
             CELL_OPTIONAL | ENG_INPUT(24) | ENG_INPUT(25) | ENG_INPUT(26) | ENG_INPUT(27),
             uni_f32);

/* ---- BIDIRECTIONAL_SEQUENCE_LSTM ------------------------------------------------------ */

static schema_status bidi_check(eng_op_ctx *c) {
    return check_op(c, 61, 1, 6, 48, "iffbb", 8, "TTTTTT", &BIDI_FW);
}

/* An auxiliary input without any auxiliary weights feeds the backward direction. */
static bool parallel_linking(const eng_op_ctx *c) {
    if (!has(c, BIDI_AUX_INPUT)) return false;
    for (int g = 0; g < 4; g++)
        if (has(c, BIDI_FW.wa[g]) || has(c, BIDI_BW.wa[g])) return false;
    return true;
}

/* Final-state output k (forward output and cell state, then backward's), or NULL. */
static float *bidi_state(const eng_op_ctx *c, uint32_t k) {
    eng_tensor *t = eng_seq_bidi_state(c, eng_bool(c->in[BIDI_MERGE]), k);
    return t ? t->data : NULL;
}

static schema_status bidi_shape(eng_op_ctx *c) {
    if (layout_pending(c, &BIDI_FW) || layout_pending(c, &BIDI_BW) || pending(c, BIDI_AUX_INPUT))
        return ENG_DEFER;
    bool merge = eng_bool(c->in[BIDI_MERGE]), parallel = parallel_linking(c);
    uint32_t n_input = c->in[0]->dims[2], n_batch = 0, n_aux = 0, fw_cell, fw, bw_cell, bw;
    schema_status s = eng_seq_bidi_check(c, merge, eng_bool(c->in[BIDI_TIME_MAJOR]), BIDI_AUX_INPUT,
                                         4, &n_batch, &n_aux);
    uint32_t bw_input = parallel ? n_aux : n_input, cross_aux = parallel ? 0 : n_aux;
    if (!s) s = check_params(c, &BIDI_FW);
    if (!s) s = cell_check(c, &BIDI_FW, "forward ", n_batch, n_input, cross_aux, &fw_cell, &fw);
    if (!s) s = cell_check(c, &BIDI_BW, "backward ", n_batch, bw_input, cross_aux, &bw_cell, &bw);
    if (s) return s;
    eng_seq_bidi_set_shapes(c, merge, fw, bw);
    const uint32_t widths[4] = {fw, fw_cell, bw, bw_cell};
    for (uint32_t k = 0; k < 4; k++) {
        eng_tensor *state = eng_seq_bidi_state(c, merge, k);
        if (state) eng_set_shape(state, 2, (const uint32_t[]){n_batch, widths[k]});
    }
    return SCHEMA_OK;
}

static schema_status bidi_f32(eng_op_ctx *c) {
    eng_seq_io fw, bw;
    eng_seq_bidi_io(c, eng_bool(c->in[BIDI_MERGE]), eng_bool(c->in[BIDI_TIME_MAJOR]),
                    BIDI_AUX_INPUT, parallel_linking(c), c->in[BIDI_FW.wh[GATE_O]]->dims[1], &fw,
                    &bw);
    schema_status s = run_direction(c, &BIDI_FW, &fw, false, bidi_state(c, 0), bidi_state(c, 1));
    return s ? s : run_direction(c, &BIDI_BW, &bw, true, bidi_state(c, 2), bidi_state(c, 3));
}

/* Each direction's cell (the backward one 17 inputs later), the auxiliary input and its
 * weights (39 to 47), layer normalization (53 to 60). */
#define BIDI_OPTIONAL                                                                              \
    (CELL_OPTIONAL | CELL_OPTIONAL << 17 | ENG_INPUT_RANGE(39, 47) | ENG_INPUT_RANGE(53, 60))
ENG_FLOAT_OP(BIDIRECTIONAL_SEQUENCE_LSTM, bidi_check, bidi_shape, BIDI_OPTIONAL, bidi_f32);

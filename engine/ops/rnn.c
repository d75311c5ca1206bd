/* SPDX-License-Identifier: Apache-2.0 */
/* rnn.c: RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN.
 *
 * One float32 cell, state = act(W x + W_aux aux + R state + b), is stepped through time by
 * all three operations (RNN is a sequence of one step). FLOAT16 runs through the float32
 * bridge. Batch-major sequences are read and written through strides. Since HAL 1.3 the
 * sequence operations may also output their final hidden states (one more output per
 * direction), and BIDIRECTIONAL_SEQUENCE_RNN takes an auxiliary input without auxiliary
 * weights as the backward direction's input ("parallel linking"). */
#include <stdio.h>
#include <string.h>

#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/recurrent.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"
#include "engine/ops/op_def.h"

/* Where one cell's tensors sit in an operation's inputs; -1: none. */
typedef struct rnn_layout {
    int w, r, bias, h0, wa;
} rnn_layout;

static const rnn_layout RNN_CELL = {1, 2, 3, 4, -1};
static const rnn_layout BIDI_FW = {1, 2, 3, 4, 10};
static const rnn_layout BIDI_BW = {5, 6, 7, 8, 11};

enum { RNN_ACT = 5, UNI_ACT = 5, UNI_TIME_MAJOR = 6 };
enum { BIDI_AUX_INPUT = 9, BIDI_ACT = 12, BIDI_TIME_MAJOR = 13, BIDI_MERGE = 14 };

typedef struct rnn_cell {
    const float *w, *r, *bias, *wa;
    uint32_t n_input, n_aux, n_units;
    int32_t act;
} rnn_cell;

static bool has(const eng_op_ctx *c, int i) {
    return i >= 0 && eng_has_input(c, (uint32_t)i);
}

/* One step for n_batch rows: out rows (out_b apart) = act(bias + W x + W_aux aux + R h),
 * then h [n_batch, n_units] takes them as the new state. */
static void rnn_step(const rnn_cell *p, uint32_t n_batch, const float *x, size_t x_b,
                     const float *aux, size_t aux_b, float *h, float *out, size_t out_b) {
    uint32_t nu = p->n_units;
    for (uint32_t b = 0; b < n_batch; b++)
        memcpy(out + b * out_b, p->bias, nu * sizeof(float));
    eng_matvec_acc(p->w, nu, p->n_input, x, x_b, n_batch, out, out_b, 1);
    if (p->wa && aux) eng_matvec_acc(p->wa, nu, p->n_aux, aux, aux_b, n_batch, out, out_b, 1);
    eng_matvec_acc(p->r, nu, nu, h, nu, n_batch, out, out_b, 1);
    for (uint32_t b = 0; b < n_batch; b++) {
        float *row = out + b * out_b;
        eng_recurrent_act_vec(p->act, row, nu);
        memcpy(h + (size_t)b * nu, row, nu * sizeof(float));
    }
}

/* Runs the cell of layout l with activation input act_i over the sequence (backwards when
 * reverse); h (NULL: scratch) starts as the layout's hidden state and ends as the final
 * state. */
static schema_status run_direction(eng_op_ctx *c, const rnn_layout *l, int act_i,
                                   const eng_seq_io *io, bool reverse, float *h) {
    rnn_cell p = {.w = c->in[l->w]->data,
                  .r = c->in[l->r]->data,
                  .bias = c->in[l->bias]->data,
                  .n_input = io->n_input,
                  .n_units = c->in[l->w]->dims[0],
                  .act = eng_i32(c->in[act_i])};
    if (io->aux && has(c, l->wa)) p.wa = c->in[l->wa]->data, p.n_aux = io->n_aux;
    size_t state = (size_t)io->n_batch * p.n_units * sizeof(float);
    if (!h && !(h = eng_scratch(c, state))) return eng_fail(c, "out of scratch memory");
    memmove(h, c->in[l->h0]->data, state);
    for (uint32_t k = 0; k < io->n_time; k++) {
        uint32_t t = reverse ? io->n_time - 1 - k : k;
        rnn_step(&p, io->n_batch, io->x + t * io->x_t, io->x_b,
                 io->aux ? io->aux + t * io->aux_t : NULL, io->aux_b, h, io->out + t * io->out_t,
                 io->out_b);
    }
    return SCHEMA_OK;
}

/* ---- validation ---------------------------------------------------------------------- */

/* Checks one cell's tensors; n_aux == 0: no auxiliary input. */
static schema_status cell_check(eng_op_ctx *c, const rnn_layout *l, const char *dir,
                                uint32_t n_batch, uint32_t n_input, uint32_t n_aux,
                                uint32_t *n_units_out) {
    const int required[4] = {l->w, l->r, l->bias, l->h0};
    for (int k = 0; k < 4; k++)
        if (!has(c, required[k])) return eng_fail(c, "%sinput %d is required", dir, required[k]);
    const eng_tensor *w = c->in[l->w];
    if (w->rank != 2) return eng_fail(c, "%sweights (input %d) must be 2-D", dir, l->w);
    uint32_t nu = w->dims[0];
    char what[64];
    schema_status s;
    snprintf(what, sizeof what, "%sweights", dir);
    if ((s = eng_expect_dims(c, (uint32_t)l->w, what, 2, (const uint32_t[]){nu, n_input})))
        return s;
    snprintf(what, sizeof what, "%srecurrent weights", dir);
    if ((s = eng_expect_dims(c, (uint32_t)l->r, what, 2, (const uint32_t[]){nu, nu}))) return s;
    snprintf(what, sizeof what, "%sbias", dir);
    if ((s = eng_expect_dims(c, (uint32_t)l->bias, what, 1, &nu))) return s;
    snprintf(what, sizeof what, "%shidden state", dir);
    if ((s = eng_expect_dims(c, (uint32_t)l->h0, what, 2, (const uint32_t[]){n_batch, nu})))
        return s;
    if (has(c, l->wa) != (n_aux > 0))
        return eng_fail(c,
                        "auxiliary input and %sauxiliary weights (input %d) must be given "
                        "together",
                        dir, l->wa);
    snprintf(what, sizeof what, "%sauxiliary weights", dir);
    if (n_aux && (s = eng_expect_dims(c, (uint32_t)l->wa, what, 2, (const uint32_t[]){nu, n_aux})))
        return s;
    *n_units_out = nu;
    return SCHEMA_OK;
}

/* Counts, types and the fused activation (input act_i). */
static schema_status check_op(eng_op_ctx *c, uint32_t n_in, uint32_t min_out, uint32_t max_out,
                              const char *ins, const char *outs, uint32_t act_i) {
    schema_status s = eng_check_count(c, n_in, n_in, min_out, max_out);
    if (!s) s = eng_check_float_signature(c, ins, outs);
    return s ? s : eng_check_activation(c, act_i);
}

/* ---- RNN ----------------------------------------------------------------------------- */

static schema_status rnn_check(eng_op_ctx *c) {
    return check_op(c, 6, 2, 2, "TTTTTi", "TT", RNN_ACT);
}

static schema_status rnn_shape(eng_op_ctx *c) {
    const eng_tensor *x = c->in[0];
    if (x->rank != 2) return eng_fail(c, "input 0 must be 2-D, has rank %u", x->rank);
    uint32_t nu;
    schema_status s = cell_check(c, &RNN_CELL, "", x->dims[0], x->dims[1], 0, &nu);
    if (s) return s;
    eng_set_shape(c->out[0], 2, (const uint32_t[]){x->dims[0], nu});
    eng_set_shape(c->out[1], 2, (const uint32_t[]){x->dims[0], nu});
    return SCHEMA_OK;
}

static schema_status rnn_f32(eng_op_ctx *c) {
    eng_seq_io io;
    eng_seq_io_init(&io, true, c->in[0], NULL, c->out[1]->data, c->out[1]->dims[1]);
    return run_direction(c, &RNN_CELL, RNN_ACT, &io, false, c->out[0]->data);
}

ENG_FLOAT_OP(RNN, rnn_check, rnn_shape, 0, rnn_f32);

/* ---- UNIDIRECTIONAL_SEQUENCE_RNN ------------------------------------------------------ */

static schema_status time_major_check(eng_op_ctx *c) {
    const eng_tensor *t = c->in[UNI_TIME_MAJOR];
    if (t->data && eng_i32(t) != 0 && eng_i32(t) != 1)
        return eng_fail(c, "time major flag (input %d) must be 0 or 1, is %d", UNI_TIME_MAJOR,
                        eng_i32(t));
    return SCHEMA_OK;
}

static schema_status uni_check(eng_op_ctx *c) {
    schema_status s = check_op(c, 7, 1, 2, "TTTTTii", "TT", UNI_ACT);
    return s ? s : time_major_check(c);
}

static schema_status uni_shape(eng_op_ctx *c) {
    const eng_tensor *x = c->in[0];
    uint32_t n_time = 0, n_batch = 0, nu;
    schema_status s = time_major_check(c);
    if (!s) s = eng_seq_dims(c, eng_i32(c->in[UNI_TIME_MAJOR]), &n_time, &n_batch);
    if (!s) s = cell_check(c, &RNN_CELL, "", n_batch, x->dims[2], 0, &nu);
    if (s) return s;
    eng_set_shape(c->out[0], 3, (const uint32_t[]){x->dims[0], x->dims[1], nu});
    if (c->n_out == 2) eng_set_shape(c->out[1], 2, (const uint32_t[]){n_batch, nu});
    return SCHEMA_OK;
}

static schema_status uni_f32(eng_op_ctx *c) {
    eng_seq_io io;
    eng_seq_io_init(&io, eng_i32(c->in[UNI_TIME_MAJOR]) != 0, c->in[0], NULL, c->out[0]->data,
                    c->out[0]->dims[2]);
    return run_direction(c, &RNN_CELL, UNI_ACT, &io, false, c->n_out == 2 ? c->out[1]->data : NULL);
}

ENG_FLOAT_OP(UNIDIRECTIONAL_SEQUENCE_RNN, uni_check, uni_shape, 0, uni_f32);

/* ---- BIDIRECTIONAL_SEQUENCE_RNN ------------------------------------------------------- */

static schema_status bidi_check(eng_op_ctx *c) {
    return check_op(c, 15, 1, 4, "TTTTTTTTTTTTibb", "TTTT", BIDI_ACT);
}

/* An auxiliary input without auxiliary weights feeds the backward direction. */
static bool parallel_linking(const eng_op_ctx *c) {
    return has(c, BIDI_AUX_INPUT) && !has(c, BIDI_FW.wa) && !has(c, BIDI_BW.wa);
}

/* The final hidden state of one direction (0 forward, 1 backward): its output, or NULL. */
static float *bidi_state(const eng_op_ctx *c, uint32_t dir) {
    eng_tensor *t = eng_seq_bidi_state(c, eng_bool(c->in[BIDI_MERGE]), dir);
    return t ? t->data : NULL;
}

static schema_status bidi_shape(eng_op_ctx *c) {
    for (uint32_t i = BIDI_AUX_INPUT; i <= BIDI_AUX_INPUT + 2; i++)
        if (eng_input_pending(c, i)) return ENG_DEFER;
    bool merge = eng_bool(c->in[BIDI_MERGE]), parallel = parallel_linking(c);
    uint32_t n_input = c->in[0]->dims[2], n_batch = 0, n_aux = 0, fw, bw;
    schema_status s = eng_seq_bidi_check(c, merge, eng_bool(c->in[BIDI_TIME_MAJOR]), BIDI_AUX_INPUT,
                                         2, &n_batch, &n_aux);
    uint32_t bw_input = parallel ? n_aux : n_input, cross_aux = parallel ? 0 : n_aux;
    if (!s) s = cell_check(c, &BIDI_FW, "forward ", n_batch, n_input, cross_aux, &fw);
    if (!s) s = cell_check(c, &BIDI_BW, "backward ", n_batch, bw_input, cross_aux, &bw);
    if (s) return s;
    eng_seq_bidi_set_shapes(c, merge, fw, bw);
    const uint32_t units[2] = {fw, bw};
    for (uint32_t k = 0; k < 2; k++) {
        eng_tensor *state = eng_seq_bidi_state(c, merge, k);
        if (state) eng_set_shape(state, 2, (const uint32_t[]){n_batch, units[k]});
    }
    return SCHEMA_OK;
}

static schema_status bidi_f32(eng_op_ctx *c) {
    eng_seq_io fw, bw;
    eng_seq_bidi_io(c, eng_bool(c->in[BIDI_MERGE]), eng_bool(c->in[BIDI_TIME_MAJOR]),
                    BIDI_AUX_INPUT, parallel_linking(c), c->in[BIDI_FW.w]->dims[0], &fw, &bw);
    schema_status s = run_direction(c, &BIDI_FW, BIDI_ACT, &fw, false, bidi_state(c, 0));
    return s ? s : run_direction(c, &BIDI_BW, BIDI_ACT, &bw, true, bidi_state(c, 1));
}

ENG_FLOAT_OP(BIDIRECTIONAL_SEQUENCE_RNN, bidi_check, bidi_shape,
             ENG_INPUT(9) | ENG_INPUT(10) | ENG_INPUT(11), bidi_f32);

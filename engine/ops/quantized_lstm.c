/* SPDX-License-Identifier: Apache-2.0 */
/* quantized_lstm.c: QUANTIZED_16BIT_LSTM, one step of an LSTM cell (no peephole, no
 * projection) in the reference's integer pipeline: an 8-bit fully connected layer whose
 * int32 sums are rescaled to Q3.12 gate inputs, then 16-bit gemmlowp fixed point for the
 * gates (Q0.15) and a Q4.11 cell state. */
#include "engine/ops_common/clamp.h"
#include "engine/ops_common/fixedpoint.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"

#include <math.h>
#include <string.h>

enum {
    IN_X = 0,       /* [batches, input_size], scale 1/128, zero point 128 */
    IN_W_INPUT = 1, /* 1..4: input-to-{input, forget, cell, output} [output_size, input_size] */
    IN_R_INPUT = 5, /* 5..8: recurrent-to-{...} [output_size, output_size] */
    IN_BIAS = 9,    /* 9..12: {input, forget, cell, output} gate biases [output_size] */
    IN_CELL = 13,   /* previous cell state, QUANT16_SYMM Q4.11 */
    IN_H = 14,      /* previous output, like input 0 */
    N_IN = 15,
    OUT_CELL = 0,
    OUT_H = 1
};

/* Gate order of the operand lists (input, forget, cell, output). */
enum { GATE_INPUT, GATE_FORGET, GATE_CELL, GATE_OUTPUT, N_GATES };

static schema_status expect_quant(eng_op_ctx *c, uint32_t i, const char *what, double scale,
                                  int32_t zero_point) {
    const eng_tensor *t = c->in[i];
    if (!eng_driver_rules(c)) return SCHEMA_OK;
    if ((double)t->scale != scale || t->zero_point != zero_point)
        return eng_fail(c, "%s (input %u) must have scale %g and zero point %d, has (%g, %d)", what,
                        i, scale, zero_point, t->scale, t->zero_point);
    return SCHEMA_OK;
}

static schema_status qlstm_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, N_IN, N_IN, 2, 2);
    if (s || (s = eng_check_type(c, c->in[IN_X], "input 0", 1, SCHEMA_TENSOR_QUANT8_ASYMM)))
        return s;
    /* Q: QUANT8_ASYMM, I: TENSOR_INT32, S: QUANT16_SYMM; ranks alongside. */
    static const char kinds[N_IN + 1] = "QQQQQQQQQIIIISQ", ranks[N_IN + 1] = "222222222111122";
    for (uint32_t i = 0; i < N_IN; i++) {
        int32_t want = kinds[i] == 'Q'   ? SCHEMA_TENSOR_QUANT8_ASYMM
                       : kinds[i] == 'I' ? SCHEMA_TENSOR_INT32
                                         : SCHEMA_TENSOR_QUANT16_SYMM;
        if (c->in[i]->type != want)
            return eng_fail(c, "input %u must be %s, is %s", i, schema_type_name(want),
                            schema_type_name(c->in[i]->type));
    }
    if ((s = eng_check_input_ranks(c, ranks))) return s;
    if (c->out[OUT_CELL]->type != SCHEMA_TENSOR_QUANT16_SYMM ||
        c->out[OUT_H]->type != SCHEMA_TENSOR_QUANT8_ASYMM)
        return eng_fail(c, "outputs must be TENSOR_QUANT16_SYMM and TENSOR_QUANT8_ASYMM");
    if ((s = expect_quant(c, IN_X, "input", 1.0 / 128, 128)) ||
        (s = expect_quant(c, IN_H, "previous output", 1.0 / 128, 128)))
        return s;
    const eng_tensor *w = c->in[IN_W_INPUT];
    if (!eng_driver_rules(c)) return SCHEMA_OK;
    if (w->scale == 0.f) return eng_fail(c, "weights (input 1) have scale 0");
    for (uint32_t i = IN_W_INPUT + 1; i < IN_BIAS; i++)
        if ((s = expect_quant(c, i, "weights", w->scale, w->zero_point))) return s;
    for (uint32_t i = IN_BIAS; i < IN_CELL; i++)
        if ((s = expect_quant(c, i, "bias", w->scale / 128.0, 0))) return s;
    /* The cell state is Q4.11: scale 2^-11 (the only state format the reference has). */
    const eng_tensor *cell = c->in[IN_CELL];
    float log2_scale = logf(cell->scale) * (1.f / logf(2.f));
    if (cell->zero_point != 0 || !(fabsf(log2_scale - roundf(log2_scale)) < 1e-3f) ||
        roundf(log2_scale) != -11.f)
        return eng_fail(
            c, "cell state (input 13) must have scale 2^-11 and zero point 0, has (%g, %d)",
            cell->scale, cell->zero_point);
    return SCHEMA_OK;
}

static schema_status qlstm_shape(eng_op_ctx *c) {
    const eng_tensor *x = c->in[IN_X], *h = c->in[IN_H];
    uint32_t batches = x->dims[0], in_size = x->dims[1], out_size = h->dims[1];
    schema_status s =
        eng_expect_dims(c, IN_H, "previous output", 2, (uint32_t[]){batches, out_size});
    if (s || (s = eng_expect_dims(c, IN_CELL, "cell state", 2, (uint32_t[]){batches, out_size})))
        return s;
    for (uint32_t g = 0; g < N_GATES; g++) {
        if ((s = eng_expect_dims(c, IN_W_INPUT + g, "input weights", 2,
                                 (uint32_t[]){out_size, in_size})) ||
            (s = eng_expect_dims(c, IN_R_INPUT + g, "recurrent weights", 2,
                                 (uint32_t[]){out_size, out_size})) ||
            (s = eng_expect_dims(c, IN_BIAS + g, "bias", 1, (uint32_t[]){out_size})))
            return s;
    }
    eng_copy_shape(c->out[OUT_CELL], c->in[IN_CELL]);
    eng_copy_shape(c->out[OUT_H], h);
    return SCHEMA_OK;
}

/* <row of weights, x> over n stored values, both without their zero points. */
static int64_t dot_q8(const uint8_t *w, int32_t w_zero, const int16_t *x, uint32_t n) {
    int64_t acc = 0;
    for (uint32_t k = 0; k < n; k++)
        acc += ((int32_t)w[k] - w_zero) * x[k];
    return acc;
}

static schema_status qlstm_run(eng_op_ctx *c) {
    const eng_tensor *x = c->in[IN_X], *h = c->in[IN_H];
    uint32_t batches = x->dims[0], in_size = x->dims[1], out_size = h->dims[1];
    int32_t w_zero = c->in[IN_W_INPUT]->zero_point;
    /* Gate inputs are Q3.12: the accumulator (scale input * weights = bias scale) times
     * bias scale * 2^12. */
    int32_t mult;
    int shift;
    eng_quantize_multiplier(4096.0 * c->in[IN_BIAS]->scale, &mult, &shift);
    const int32_t *bias[N_GATES];
    for (uint32_t g = 0; g < N_GATES; g++)
        if (!(bias[g] = eng_aligned_data(c, c->in[IN_BIAS + g]))) return SCHEMA_GENERAL_FAILURE;
    const int16_t *cell = eng_aligned_data(c, c->in[IN_CELL]);
    int16_t *xs = eng_scratch(c, sizeof(int16_t) * ((size_t)in_size + out_size));
    int16_t *gate = eng_scratch(c, sizeof(int16_t) * N_GATES * (size_t)out_size);
    if (!cell || !xs || !gate) return SCHEMA_GENERAL_FAILURE;
    int16_t *cell_out = c->out[OUT_CELL]->data;
    uint8_t *h_out = c->out[OUT_H]->data;
    for (uint32_t b = 0; b < batches; b++) {
        /* Input and previous output, as real values * 128, concatenated in that order. The
         * reference lays each gate's weight row out the other way round (recurrent weights,
         * then input weights) and takes the dot product of the two as they stand, so the
         * first output_size values meet the recurrent weights; the expected results
         * follow it. */
        const uint8_t *xb = (const uint8_t *)x->data + (size_t)b * in_size;
        const uint8_t *hb = (const uint8_t *)h->data + (size_t)b * out_size;
        for (uint32_t k = 0; k < in_size; k++)
            xs[k] = (int16_t)(xb[k] - 128);
        for (uint32_t k = 0; k < out_size; k++)
            xs[in_size + k] = (int16_t)(hb[k] - 128);
        for (uint32_t g = 0; g < N_GATES; g++) {
            const uint8_t *wi = c->in[IN_W_INPUT + g]->data, *wr = c->in[IN_R_INPUT + g]->data;
            for (uint32_t r = 0; r < out_size; r++) {
                /* In 64 bits, saturated to 32: a client's bias and sizes may overflow 32. */
                int64_t sum = (int64_t)bias[g][r] +
                              dot_q8(wr + (size_t)r * out_size, w_zero, xs, out_size) +
                              dot_q8(wi + (size_t)r * in_size, w_zero, xs + out_size, in_size);
                int32_t acc = sum > INT32_MAX   ? INT32_MAX
                              : sum < INT32_MIN ? INT32_MIN
                                                : (int32_t)sum;
                acc = eng_mul_by_quantized(acc, mult, shift);
                gate[g * out_size + r] = (int16_t)eng_clampi(acc, INT16_MIN, INT16_MAX);
            }
        }
        for (uint32_t r = 0; r < out_size; r++) {
            int16_t in_gate = eng_fx16_logistic(gate[GATE_INPUT * out_size + r], 3);
            int16_t forget = eng_fx16_logistic(gate[GATE_FORGET * out_size + r], 3);
            int16_t modulation = eng_fx16_tanh(gate[GATE_CELL * out_size + r], 3);
            int16_t out_gate = eng_fx16_logistic(gate[GATE_OUTPUT * out_size + r], 3);
            size_t at = (size_t)b * out_size + r;
            /* Q0.15 * Q0.15 -> Q0.15, rescaled to Q4.11; Q0.15 * Q4.11 -> Q4.11. */
            int16_t from_input = eng_fx16_mul_pot(eng_fx16_srdhm(in_gate, modulation), -4);
            int16_t kept = eng_fx16_srdhm(forget, cell[at]);
            int16_t state = (int16_t)eng_clampi(from_input + kept, INT16_MIN, INT16_MAX);
            cell_out[at] = state;
            /* tanh reads the state as Q3.12 (saturating), the output goes to 8 bits. */
            int16_t act = eng_fx16_srdhm(out_gate, eng_fx16_tanh(eng_fx16_mul_pot(state, 1), 3));
            int32_t q = eng_clampi(eng_rounding_shift_right(act, 8), -128, 127);
            h_out[at] = (uint8_t)(128 + q);
        }
    }
    return SCHEMA_OK;
}

ENG_OP_DEF(QUANTIZED_16BIT_LSTM, qlstm_check, qlstm_shape, 0, 0,
           {{SCHEMA_TENSOR_QUANT8_ASYMM, qlstm_run}});

/* SPDX-License-Identifier: Apache-2.0 */
/* recurrent: what RNN, LSTM, SVDF and their sequence and bidirectional forms share: their
 * activations, the matrix-vector product they accumulate, and the walk over a sequence's
 * time steps and batch rows.
 *
 * Contract: float32 only (FLOAT16 reaches these kernels through type_bridge.h). A
 * sequence is time major [time, batch, input] or batch major [batch, time, input]; a
 * single step is [batch, input]. eng_seq_io describes one direction with element strides,
 * so that the cell code is the same for every layout and for merged or separate
 * bidirectional outputs. The checks fail through kernel_errors.h naming the operand.
 */
#ifndef ENG_OPS_COMMON_RECURRENT_H
#define ENG_OPS_COMMON_RECURRENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

/* Activation codes of the recurrent layers: the fused codes 0..3, then tanh, sign bit
 * (1 for negative inputs, else 0) and logistic sigmoid. */
enum { ENG_ACT_TANH = 4, ENG_ACT_SIGN_BIT = 5, ENG_ACT_SIGMOID = 6 };
float eng_recurrent_act(int32_t act, float x);
void eng_recurrent_act_vec(int32_t act, float *x, size_t n);
/* out[b * out_bstride + r * out_rstride] += <row r of w, x + b * x_stride> for b < batch,
 * r < rows; w is a row-major [rows, cols] matrix. */
void eng_matvec_acc(const float *w, uint32_t rows, uint32_t cols, const float *x, size_t x_stride,
                    uint32_t batch, float *out, size_t out_bstride, size_t out_rstride);

/* One direction of a recurrent layer over a sequence: its input, optional auxiliary input
 * (aux NULL: none) and output, with element strides per time step (_t) and per batch row
 * (_b). */
typedef struct eng_seq_io {
    const float *x, *aux;
    float *out;
    uint32_t n_time, n_batch, n_input, n_aux;
    size_t x_t, x_b, aux_t, aux_b, out_t, out_b;
} eng_seq_io;
/* x is [batch, input] (a single step) or a 3-D [time, batch, input] (time major) or
 * [batch, time, input] sequence; aux (may be NULL) has x's layout; out has x's layout with
 * rows of out_width elements (wider than the cell's output when two directions share a
 * merged output). */
void eng_seq_io_init(eng_seq_io *io, bool time_major, const eng_tensor *x, const eng_tensor *aux,
                     float *out, size_t out_width);
/* Copies n_batch contiguous state rows of `width` elements into the output at step t. */
void eng_seq_store(const eng_seq_io *io, uint32_t t, const float *rows, size_t width);
/* Time steps and batch rows of the 3-D sequence input 0. */
schema_status eng_seq_dims(eng_op_ctx *c, bool time_major, uint32_t *n_time, uint32_t *n_batch);
/* BIDIRECTIONAL_SEQUENCE_*: checks the output count against merge (1 output when merging,
 * else 2; since HAL 1.3 optionally followed by n_state final-state outputs), the 3-D input
 * 0, and the optional auxiliary input aux_i (the input's first two dimensions); *n_aux
 * receives its feature size, 0 when omitted. */
schema_status eng_seq_bidi_check(eng_op_ctx *c, bool merge, bool time_major, uint32_t aux_i,
                                 uint32_t n_state, uint32_t *n_batch, uint32_t *n_aux);
/* Final-state output k of a bidirectional operation (after its sequence outputs), or NULL
 * when the operation has none. */
eng_tensor *eng_seq_bidi_state(const eng_op_ctx *c, bool merge, uint32_t k);
/* Sets the output shapes: [d0, d1, fw + bw] when merging, else [d0, d1, fw] and
 * [d0, d1, bw], d0 and d1 being input 0's. */
void eng_seq_bidi_set_shapes(eng_op_ctx *c, bool merge, uint32_t fw_width, uint32_t bw_width);
/* The two directions' views: input 0, the auxiliary input aux_i, and output 0 (shared,
 * the backward rows starting fw_width elements in) when merging, else outputs 0 and 1.
 * parallel (HAL 1.3 "parallel linking": an auxiliary input without auxiliary weights):
 * the backward direction reads the auxiliary input as its input, and neither direction
 * has an auxiliary input. */
void eng_seq_bidi_io(const eng_op_ctx *c, bool merge, bool time_major, uint32_t aux_i,
                     bool parallel, uint32_t fw_width, eng_seq_io *fw, eng_seq_io *bw);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* recurrent.c: shared parts of the recurrent layers. See recurrent.h. */
#include "engine/ops_common/recurrent.h"

#include <math.h>
#include <string.h>

#include "engine/ops_common/clamp.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"

float eng_recurrent_act(int32_t act, float x) {
    switch (act) {
    case SCHEMA_FUSED_RELU: return x > 0.f ? x : 0.f;
    case SCHEMA_FUSED_RELU1: return eng_clampf(x, -1.f, 1.f);
    case SCHEMA_FUSED_RELU6: return eng_clampf(x, 0.f, 6.f);
    case ENG_ACT_TANH: return tanhf(x);
    case ENG_ACT_SIGN_BIT: return signbit(x) ? 1.f : 0.f;
    case ENG_ACT_SIGMOID: return 1.f / (1.f + expf(-x));
    default: return x;
    }
}

void eng_recurrent_act_vec(int32_t act, float *x, size_t n) {
    if (act == SCHEMA_FUSED_NONE) return;
    for (size_t i = 0; i < n; i++)
        x[i] = eng_recurrent_act(act, x[i]);
}

void eng_matvec_acc(const float *w, uint32_t rows, uint32_t cols, const float *x, size_t x_stride,
                    uint32_t batch, float *out, size_t out_bstride, size_t out_rstride) {
    for (uint32_t b = 0; b < batch; b++) {
        const float *xb = x + b * x_stride;
        for (uint32_t r = 0; r < rows; r++) {
            const float *wr = w + (size_t)r * cols;
            float dot = 0.f;
            for (uint32_t k = 0; k < cols; k++)
                dot += wr[k] * xb[k];
            out[b * out_bstride + r * out_rstride] += dot;
        }
    }
}

void eng_seq_io_init(eng_seq_io *io, bool time_major, const eng_tensor *x, const eng_tensor *aux,
                     float *out, size_t out_width) {
    bool seq = x->rank == 3;
    if (!seq) time_major = true; /* one step: [batch, input] */
    io->n_time = seq ? x->dims[time_major ? 0 : 1] : 1;
    io->n_batch = seq ? x->dims[time_major ? 1 : 0] : x->dims[0];
    io->n_input = x->dims[x->rank - 1];
    io->n_aux = aux ? aux->dims[aux->rank - 1] : 0;
    io->x = x->data, io->aux = aux ? aux->data : NULL, io->out = out;
    /* time major: row (t, b) is at (t * n_batch + b) * width; else (b * n_time + t) * width */
    size_t per_t = time_major ? io->n_batch : 1, per_b = time_major ? 1 : io->n_time;
    io->x_t = per_t * io->n_input, io->x_b = per_b * io->n_input;
    io->aux_t = per_t * io->n_aux, io->aux_b = per_b * io->n_aux;
    io->out_t = per_t * out_width, io->out_b = per_b * out_width;
}

void eng_seq_store(const eng_seq_io *io, uint32_t t, const float *rows, size_t width) {
    float *o = io->out + t * io->out_t;
    for (uint32_t b = 0; b < io->n_batch; b++)
        memmove(o + b * io->out_b, rows + b * width, width * sizeof(float));
}

schema_status eng_seq_dims(eng_op_ctx *c, bool time_major, uint32_t *n_time, uint32_t *n_batch) {
    const eng_tensor *x = c->in[0];
    if (x->rank != 3) return eng_fail(c, "input 0 must be 3-D, has rank %u", x->rank);
    *n_time = x->dims[time_major ? 0 : 1];
    *n_batch = x->dims[time_major ? 1 : 0];
    return SCHEMA_OK;
}

schema_status eng_seq_bidi_check(eng_op_ctx *c, bool merge, bool time_major, uint32_t aux_i,
                                 uint32_t n_state, uint32_t *n_batch, uint32_t *n_aux) {
    uint32_t base = merge ? 1 : 2;
    if (c->n_out != base && c->n_out != base + n_state)
        return eng_fail(c, "has %u outputs; %s outputs need %u, or %u with the final states",
                        c->n_out, merge ? "merged" : "separate", base, base + n_state);
    uint32_t n_time;
    schema_status s = eng_seq_dims(c, time_major, &n_time, n_batch);
    if (s) return s;
    *n_aux = 0;
    if (!eng_has_input(c, aux_i)) return SCHEMA_OK;
    const eng_tensor *x = c->in[0], *a = c->in[aux_i];
    if (a->rank != 3 || a->dims[0] != x->dims[0] || a->dims[1] != x->dims[1] || !a->dims[2])
        return eng_fail(c,
                        "auxiliary input (input %u) must be 3-D with the input's first two "
                        "dimensions",
                        aux_i);
    *n_aux = a->dims[2];
    return SCHEMA_OK;
}

eng_tensor *eng_seq_bidi_state(const eng_op_ctx *c, bool merge, uint32_t k) {
    uint32_t at = (merge ? 1 : 2) + k;
    return at < c->n_out ? c->out[at] : NULL;
}

void eng_seq_bidi_set_shapes(eng_op_ctx *c, bool merge, uint32_t fw_width, uint32_t bw_width) {
    const eng_tensor *x = c->in[0];
    uint32_t d[3] = {x->dims[0], x->dims[1], merge ? fw_width + bw_width : fw_width};
    eng_set_shape(c->out[0], 3, d);
    d[2] = bw_width;
    if (!merge) eng_set_shape(c->out[1], 3, d);
}

void eng_seq_bidi_io(const eng_op_ctx *c, bool merge, bool time_major, uint32_t aux_i,
                     bool parallel, uint32_t fw_width, eng_seq_io *fw, eng_seq_io *bw) {
    const eng_tensor *aux = eng_has_input(c, aux_i) ? c->in[aux_i] : NULL;
    const eng_tensor *out_fw = c->out[0], *out_bw = c->out[merge ? 0 : 1];
    float *bw_base = (float *)out_bw->data + (merge ? fw_width : 0);
    const eng_tensor *bw_x = parallel ? aux : c->in[0];
    if (parallel) aux = NULL;
    eng_seq_io_init(fw, time_major, c->in[0], aux, out_fw->data, out_fw->dims[2]);
    eng_seq_io_init(bw, time_major, bw_x, aux, bw_base, out_bw->dims[2]);
}

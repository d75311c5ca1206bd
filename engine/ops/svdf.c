/* SPDX-License-Identifier: Apache-2.0 */
/* svdf.c: SVDF, a rank-constrained dense layer over a memory of past feature activations.
 *
 * Per batch row and filter f (num_filters = num_units * rank) the state holds memory_size
 * activations, oldest first. A step writes the newest feature activation
 * <weights_feature[f], input> into the last slot, takes <weights_time[f], memory>, sums the
 * rank filters of each unit with the bias, applies the activation, then shifts the memory
 * one slot left (dropping the oldest). The state tensors are [batch, memory_size *
 * num_filters], as the reference lays them out. FLOAT16 runs through the float32 bridge. */
#include <string.h>

#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/recurrent.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"
#include "engine/ops/op_def.h"

enum { IN_X, IN_FEATURE, IN_TIME, IN_BIAS, IN_STATE, IN_RANK, IN_ACT };
enum { OUT_STATE, OUT_Y };

static schema_status svdf_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 7, 7, 2, 2);
    if (!s) s = eng_check_float_signature(c, "TTTTTii", "TT");
    if (!s) s = eng_check_activation(c, IN_ACT);
    if (!s && c->in[IN_RANK]->data && eng_i32(c->in[IN_RANK]) <= 0)
        return eng_fail(c, "rank (input %d) must be positive, is %d", IN_RANK,
                        eng_i32(c->in[IN_RANK]));
    return s;
}

static schema_status svdf_shape(eng_op_ctx *c) {
    const eng_tensor *x = c->in[IN_X], *wf = c->in[IN_FEATURE], *wt = c->in[IN_TIME];
    int32_t rank = eng_i32(c->in[IN_RANK]);
    if (rank <= 0) return eng_fail(c, "rank (input %d) must be positive, is %d", IN_RANK, rank);
    if (x->rank != 2) return eng_fail(c, "input 0 must be 2-D, has rank %u", x->rank);
    if (wf->rank != 2 || wt->rank != 2)
        return eng_fail(c, "weights_feature and weights_time must be 2-D");
    uint32_t batch = x->dims[0], filters = wf->dims[0], memory = wt->dims[1];
    if (filters % (uint32_t)rank)
        return eng_fail(c, "%u filters are not a multiple of rank %d", filters, rank);
    uint32_t units = filters / (uint32_t)rank;
    if (memory == 0) return eng_fail(c, "weights_time (input %d) has no memory", IN_TIME);
    if ((uint64_t)memory * filters > UINT32_MAX) /* the state's row: must not wrap 32 bits */
        return eng_fail(c, "memory %u times %u filters is past 2^32", memory, filters);
    schema_status s = eng_expect_dims(c, IN_FEATURE, "weights_feature", 2,
                                      (const uint32_t[]){filters, x->dims[1]});
    if (!s) s = eng_expect_dims(c, IN_TIME, "weights_time", 2, (const uint32_t[]){filters, memory});
    if (!s && eng_has_input(c, IN_BIAS)) s = eng_expect_dims(c, IN_BIAS, "bias", 1, &units);
    if (!s)
        s = eng_expect_dims(c, IN_STATE, "state", 2, (const uint32_t[]){batch, memory * filters});
    if (s) return s;
    eng_set_shape(c->out[OUT_STATE], 2, (const uint32_t[]){batch, memory * filters});
    eng_set_shape(c->out[OUT_Y], 2, (const uint32_t[]){batch, units});
    return SCHEMA_OK;
}

static schema_status svdf_f32(eng_op_ctx *c) {
    const eng_tensor *x = c->in[IN_X];
    const float *wf = c->in[IN_FEATURE]->data, *wt = c->in[IN_TIME]->data;
    const float *bias = eng_has_input(c, IN_BIAS) ? c->in[IN_BIAS]->data : NULL;
    uint32_t batch = x->dims[0], n_input = x->dims[1];
    uint32_t filters = c->in[IN_FEATURE]->dims[0], memory = c->in[IN_TIME]->dims[1];
    uint32_t rank = (uint32_t)eng_i32(c->in[IN_RANK]), units = filters / rank;
    int32_t act = eng_i32(c->in[IN_ACT]);
    float *state = c->out[OUT_STATE]->data, *y = c->out[OUT_Y]->data;
    size_t row = (size_t)memory * filters;
    memmove(state, c->in[IN_STATE]->data, batch * row * sizeof(float));

    /* The newest activation of each filter goes into its memory's last slot. */
    for (size_t k = memory - 1; k < batch * row; k += memory)
        state[k] = 0.f;
    eng_matvec_acc(wf, filters, n_input, x->data, n_input, batch, state + memory - 1, row, memory);

    for (uint32_t b = 0; b < batch; b++) {
        float *mem = state + b * row, *yb = y + (size_t)b * units;
        for (uint32_t u = 0; u < units; u++)
            yb[u] = bias ? bias[u] : 0.f;
        for (uint32_t f = 0; f < filters; f++) {
            const float *w = wt + (size_t)f * memory, *m = mem + (size_t)f * memory;
            float dot = 0.f;
            for (uint32_t k = 0; k < memory; k++)
                dot += w[k] * m[k];
            yb[f / rank] += dot;
        }
        eng_recurrent_act_vec(act, yb, units);
        for (uint32_t f = 0; f < filters; f++) {
            float *m = mem + (size_t)f * memory;
            memmove(m, m + 1, (memory - 1) * sizeof(float));
            m[memory - 1] = 0.f;
        }
    }
    return SCHEMA_OK;
}

ENG_FLOAT_OP(SVDF, svdf_check, svdf_shape, ENG_INPUT(3), svdf_f32);

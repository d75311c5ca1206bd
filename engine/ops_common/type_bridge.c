/* SPDX-License-Identifier: Apache-2.0 */
/* type_bridge.c: float32 kernels for FLOAT16 operands. See type_bridge.h. */
#include "engine/ops_common/type_bridge.h"

#include "engine/ops_common/float16.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"

typedef struct bridge {
    eng_tensor in[64], out[16];
    eng_tensor *inp[64], *outp[16];
    eng_op_ctx ctx;
} bridge;

static bool bridge_open(eng_op_ctx *c, bridge *b) {
    if (c->n_in > 64 || c->n_out > 16) return false;
    b->ctx = *c;
    b->ctx.in = b->inp;
    b->ctx.out = b->outp;
    for (uint32_t i = 0; i < c->n_in; i++)
        b->in[i] = *c->in[i], b->inp[i] = &b->in[i];
    for (uint32_t i = 0; i < c->n_out; i++)
        b->out[i] = *c->out[i], b->outp[i] = &b->out[i];
    return true;
}

/* Gives t a float32 copy of its elements in scratch, filled from its FLOAT16 data when fill. */
static bool to_f32(eng_op_ctx *c, eng_tensor *t, bool fill) {
    size_t n = eng_elems(t);
    float *f = eng_scratch(c, n * sizeof(float) + 1);
    if (!f) return false;
    if (fill && t->data) {
        const eng_half *h = t->data;
        for (size_t i = 0; i < n; i++)
            f[i] = (float)h[i];
    }
    t->type = t->type == SCHEMA_FLOAT16 ? SCHEMA_FLOAT32 : SCHEMA_TENSOR_FLOAT32;
    t->data = t->data || !fill ? f : NULL;
    t->bytes = n * sizeof(float);
    return true;
}

/* Whether the bridge presents t as float32: FLOAT16 tensors and scalars. */
static bool bridged(int32_t type) {
    return type == SCHEMA_TENSOR_FLOAT16 || type == SCHEMA_FLOAT16;
}

schema_status eng_run_f16_as_f32(eng_op_ctx *c, eng_op_fn f32) {
    bridge *b = eng_scratch(c, sizeof *b);
    if (!b || !bridge_open(c, b)) return eng_fail(c, "too many operands for a type bridge");
    for (uint32_t i = 0; i < c->n_in; i++) {
        eng_tensor *t = &b->in[i];
        if (bridged(t->type) && eng_present(t) && !to_f32(c, t, true))
            return SCHEMA_GENERAL_FAILURE;
    }
    for (uint32_t i = 0; i < c->n_out; i++) {
        eng_tensor *t = &b->out[i];
        if (bridged(t->type) && t->type != SCHEMA_FLOAT16 && !to_f32(c, t, false))
            return SCHEMA_GENERAL_FAILURE;
    }
    schema_status s = f32(&b->ctx);
    if (s) return s;
    for (uint32_t i = 0; i < c->n_out; i++) {
        eng_tensor *o = c->out[i];
        if (!bridged(o->type) || o->type == SCHEMA_FLOAT16) continue;
        const float *f = b->out[i].data;
        eng_half *h = o->data;
        for (size_t k = 0, n = eng_elems(o); k < n; k++)
            h[k] = (eng_half)f[k];
    }
    return SCHEMA_OK;
}

/* type_bridge.c: float32 kernels for FLOAT16 operands. See type_bridge.h. */
#include "type_bridge.h"

#include "float16.h"
#include "kernel_errors.h"
#include "operand.h"

typedef struct bridge {
    nnd_tensor in[64], out[16];
    nnd_tensor *inp[64], *outp[16];
    nnd_op_ctx ctx;
} bridge;

static bool bridge_open(nnd_op_ctx *c, bridge *b) {
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
static bool to_f32(nnd_op_ctx *c, nnd_tensor *t, bool fill) {
    size_t n = nnd_elems(t);
    float *f = nnd_scratch(c, n * sizeof(float) + 1);
    if (!f) return false;
    if (fill && t->data) {
        const nnd_half *h = t->data;
        for (size_t i = 0; i < n; i++)
            f[i] = (float)h[i];
    }
    t->type = t->type == NND_FLOAT16 ? NND_FLOAT32 : NND_TENSOR_FLOAT32;
    t->data = t->data || !fill ? f : NULL;
    t->bytes = n * sizeof(float);
    return true;
}

/* Whether the bridge presents t as float32: FLOAT16 tensors and scalars. */
static bool bridged(int32_t type) {
    return type == NND_TENSOR_FLOAT16 || type == NND_FLOAT16;
}

nnd_status nnd_run_f16_as_f32(nnd_op_ctx *c, nnd_op_fn f32) {
    bridge *b = nnd_scratch(c, sizeof *b);
    if (!b || !bridge_open(c, b)) return nnd_fail(c, "too many operands for a type bridge");
    for (uint32_t i = 0; i < c->n_in; i++) {
        nnd_tensor *t = &b->in[i];
        if (bridged(t->type) && nnd_present(t) && !to_f32(c, t, true)) return NND_GENERAL_FAILURE;
    }
    for (uint32_t i = 0; i < c->n_out; i++) {
        nnd_tensor *t = &b->out[i];
        if (bridged(t->type) && t->type != NND_FLOAT16 && !to_f32(c, t, false))
            return NND_GENERAL_FAILURE;
    }
    nnd_status s = f32(&b->ctx);
    if (s) return s;
    for (uint32_t i = 0; i < c->n_out; i++) {
        nnd_tensor *o = c->out[i];
        if (!bridged(o->type) || o->type == NND_FLOAT16) continue;
        const float *f = b->out[i].data;
        nnd_half *h = o->data;
        for (size_t k = 0, n = nnd_elems(o); k < n; k++)
            h[k] = (nnd_half)f[k];
    }
    return NND_OK;
}

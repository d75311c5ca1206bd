/* SPDX-License-Identifier: Apache-2.0 */
/* conv.c: CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D and FULLY_CONNECTED. Each only
 * describes its operands as a grouped convolution (eng_conv_geom); the window walk, the
 * float and quantized (per-tensor or per-channel) arithmetic live once in conv_walk.c. */
#include "engine/ops_common/conv_walk.h"
#include "engine/ops_common/image_geometry.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"
#include "engine/ops/op_def.h"

static bool is_depthwise(const eng_op_ctx *c) {
    return c->def->code == SCHEMA_OP_DEPTHWISE_CONV_2D;
}
static bool is_grouped(const eng_op_ctx *c) {
    return c->def->code == SCHEMA_OP_GROUPED_CONV_2D;
}

/* ---- CONV_2D, DEPTHWISE_CONV_2D and GROUPED_CONV_2D --------------------------------- */

/* Depthwise takes a depth multiplier and grouped a group count after the strides; only
 * grouped requires the layout flag and has no dilation. */
static schema_status windowed_check(eng_op_ctx *c) {
    bool dw = is_depthwise(c), grouped = is_grouped(c);
    unsigned flags = grouped ? ENG_CONV_LAYOUT_REQUIRED : ENG_CONV_DILATION;
    schema_status s = eng_conv_check_params(c, dw || grouped ? 1 : 0, flags);
    if (s || (s = eng_conv_check_tensors(c, dw ? 3 : 0))) return s;
    if ((s = eng_check_rank(c, c->in[0], "input 0", 4, 4)) ||
        (s = eng_check_rank(c, c->in[1], "filter (input 1)", 4, 4)) ||
        (s = eng_check_rank(c, c->in[2], "bias (input 2)", 1, 1)))
        return s;
    return SCHEMA_OK;
}

/* Conv filter: [out_c, fh, fw, in_c]; grouped: [out_c, fh, fw, in_c / groups], each
 * group of out_c / groups outputs reading its slice of the input channels. Depthwise
 * filter: [1, fh, fw, in_c * multiplier], one group per input channel. */
static schema_status windowed_geom(eng_op_ctx *c, eng_conv_params *p, eng_conv_geom *g) {
    bool dw = is_depthwise(c);
    schema_status s = eng_conv_read_params(c, dw || is_grouped(c) ? 1 : 0, p);
    if (s) return s;
    const eng_tensor *in = c->in[0], *f = c->in[1], *b = c->in[2];
    if (in->rank != 4 || f->rank != 4 || b->rank != 1)
        return eng_fail(c, "input, filter and bias need ranks 4, 4 and 1, have %u, %u and %u",
                        in->rank, f->rank, b->rank);
    /* check() judged only constant scalars; these divide below. */
    if (p->stride_w <= 0 || p->stride_h <= 0 || p->dil_w <= 0 || p->dil_h <= 0)
        return eng_fail(c, "strides (%d, %d) and dilation (%d, %d) must be positive", p->stride_w,
                        p->stride_h, p->dil_w, p->dil_h);
    if ((s = eng_conv_geometry(c, p, in, f->dims[1], f->dims[2], g))) return s;
    if (dw) {
        if (f->dims[0] != 1)
            return eng_fail(c, "depthwise filter (input 1) has first dimension %u, must be 1",
                            f->dims[0]);
        g->out_c = f->dims[3];
        g->groups = g->in_c;
        if ((int64_t)p->extra * g->in_c != g->out_c)
            return eng_fail(c, "depth multiplier %d times %u input channels is not the filter's %u",
                            p->extra, g->in_c, g->out_c);
        g->filter_oc_stride = 1;
        g->filter_tap_stride = g->out_c;
    } else {
        g->out_c = f->dims[0];
        if (is_grouped(c) && p->extra <= 0)
            return eng_fail(c, "group count (input %u) is %d, must be positive", c->n_in - 3,
                            p->extra);
        g->groups = is_grouped(c) ? (uint32_t)p->extra : 1;
        if ((uint64_t)f->dims[3] * g->groups != g->in_c)
            return eng_fail(c,
                            "filter (input 1) has depth %u, input 0 has %u channels in %u groups",
                            f->dims[3], g->in_c, g->groups);
        if (g->out_c % g->groups)
            return eng_fail(c,
                            "filter (input 1) has %u output channels, not a multiple of %u groups",
                            g->out_c, g->groups);
        g->filter_tap_stride = f->dims[3];
        g->filter_oc_stride = (size_t)f->dims[1] * f->dims[2] * f->dims[3];
    }
    if (!g->out_c) return eng_fail(c, "filter (input 1) has no output channels");
    if (f->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL && f->channel_quant->n_scales != g->out_c)
        return eng_fail(c, "filter (input 1) has %u channel scales for %u output channels",
                        f->channel_quant->n_scales, g->out_c);
    if (b->dims[0] != g->out_c)
        return eng_fail(c, "bias (input 2) has %u elements for %u output channels", b->dims[0],
                        g->out_c);
    return SCHEMA_OK;
}

/* ---- FULLY_CONNECTED: a 1x1 convolution of [batch, input_size] pixels ----------------- */

static schema_status fc_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 4, 4, 1, 1);
    if (s || (s = eng_conv_check_tensors(c, -1)) || (s = eng_check_activation(c, 3))) return s;
    if ((s = eng_check_rank(c, c->in[0], "input 0", 2, 4)) ||
        (s = eng_check_rank(c, c->in[1], "weights (input 1)", 2, 2)) ||
        (s = eng_check_rank(c, c->in[2], "bias (input 2)", 1, 1)))
        return s;
    return SCHEMA_OK;
}

static schema_status fc_geom(eng_op_ctx *c, eng_conv_geom *g) {
    const eng_tensor *in = c->in[0], *w = c->in[1], *b = c->in[2];
    if (in->rank < 2 || w->rank != 2 || b->rank != 1)
        return eng_fail(c, "input, weights and bias need ranks >= 2, 2 and 1, have %u, %u and %u",
                        in->rank, w->rank, b->rank);
    uint32_t units = w->dims[0], size = w->dims[1];
    if (!units || !size) return eng_fail(c, "weights (input 1) are empty (%u x %u)", units, size);
    size_t n = eng_elems(in);
    if (n % size)
        return eng_fail(c, "input 0 has %zu elements, not a multiple of the input size %u", n,
                        size);
    if (b->dims[0] != units)
        return eng_fail(c, "bias (input 2) has %u elements for %u units", b->dims[0], units);
    if (n / size > UINT32_MAX) return eng_fail(c, "input 0 has too many rows");
    *g = (eng_conv_geom){.batches = (uint32_t)(n / size),
                         .in_h = 1,
                         .in_w = 1,
                         .in_c = size,
                         .out_h = 1,
                         .out_w = 1,
                         .out_c = units,
                         .filter_h = 1,
                         .filter_w = 1,
                         .groups = 1,
                         .stride_h = 1,
                         .stride_w = 1,
                         .dil_h = 1,
                         .dil_w = 1,
                         .filter_oc_stride = size,
                         .filter_tap_stride = size};
    return SCHEMA_OK;
}

/* ---- the four operations on the shared engine ---------------------------------------- */

static schema_status op_geom(eng_op_ctx *c, eng_conv_geom *g, int32_t *act) {
    if (c->def->code == SCHEMA_OP_FULLY_CONNECTED) {
        *act = c->in[3]->data ? eng_i32(c->in[3]) : SCHEMA_FUSED_NONE;
        return fc_geom(c, g);
    }
    eng_conv_params p = {0};
    schema_status s = windowed_geom(c, &p, g);
    *act = p.act;
    return s;
}

/* Shape (run == false) or compute the output. */
static schema_status conv_op(eng_op_ctx *c, bool run) {
    eng_conv_geom g;
    int32_t act;
    schema_status s = op_geom(c, &g, &act);
    if (s || run) return s ? s : eng_conv_run(c, &g, c->in[0], c->in[1], c->in[2], c->out[0], act);
    if (c->def->code == SCHEMA_OP_FULLY_CONNECTED)
        eng_set_shape(c->out[0], 2, (uint32_t[]){g.batches, g.out_c});
    else
        eng_set_image_shape(c->out[0], g.nchw, g.batches, g.out_h, g.out_w, g.out_c);
    return SCHEMA_OK;
}

static schema_status conv_shape(eng_op_ctx *c) {
    return conv_op(c, false);
}
static schema_status conv_run(eng_op_ctx *c) {
    return conv_op(c, true);
}
static schema_status conv_f16(eng_op_ctx *c) {
    return eng_run_f16_as_f32(c, conv_run);
}

#define CONV_KERNELS                                                                               \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, conv_run}, {SCHEMA_TENSOR_FLOAT16, conv_f16},                      \
            {SCHEMA_TENSOR_QUANT8_ASYMM, conv_run}, {                                              \
            SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, conv_run                                            \
        }                                                                                          \
    }

ENG_OP_DEF(CONV_2D, windowed_check, conv_shape, 0, 0, CONV_KERNELS);
ENG_OP_DEF(DEPTHWISE_CONV_2D, windowed_check, conv_shape, 0, 0, CONV_KERNELS);
ENG_OP_DEF(GROUPED_CONV_2D, windowed_check, conv_shape, 0, 0, CONV_KERNELS);
ENG_OP_DEF(FULLY_CONNECTED, fc_check, conv_shape, 0, 0, CONV_KERNELS);

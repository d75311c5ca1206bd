/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_qconv.c: the XNNPACK backend's 8-bit CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
 * steps that qconv.h computes bit for bit as the reference kernels do, in place of
 * XNNPACK's operators (which requantize with one rounding: a step off now and then, and
 * those steps grow across a network). A step qconv does not take keeps XNNPACK's operator. */
#include <stdlib.h>

#include "engine/ops_common/conv_walk.h"
#include "engine/ops_common/fused_activation.h"
#include "engine/ops_common/operand.h"
#include "engine/backends/xnnpack/qconv.h"
#include "engine/backends/xnnpack/xnn_step.h"

static schema_status qconv_step_run(eng_op_ctx *c, xnnb_step *s, pthreadpool_t tp) {
    const eng_tensor *x = c->in[0];
    eng_tensor *y = c->out[0];
    const eng_qconv *q = s->extra;
    if (eng_elems(x) != s->in_elems[0] || eng_elems(y) != s->out_elems || !x->data || !y->data)
        return s->reference(c);
    size_t scratch_bytes = eng_qconv_scratch_bytes(q);
    void *scratch = scratch_bytes ? eng_scratch(c, scratch_bytes) : NULL;
    if (scratch_bytes && !scratch) return s->reference(c);
    eng_qconv_run(q, x->data, y->data, scratch, tp, xnnb_pool_flags(s));
    return SCHEMA_OK;
}

static void qconv_step_release(void *extra) {
    eng_qconv_free(extra);
}

static const xnnb_composite qconv_composite = {.run = qconv_step_run,
                                               .release = qconv_step_release};

bool xnnb_qconv_claim(eng_op_ctx *c, const xnnb_window *wd, int32_t act, xnnb_step *s) {
    const eng_tensor *x = c->in[0], *f = c->in[1], *bias = c->in[2], *y = c->out[0];
    bool fc = c->def->code == SCHEMA_OP_FULLY_CONNECTED;
    uint32_t out_c = fc ? f->dims[0] : y->dims[3];
    if (wd->depthwise && wd->group_out != 1) return false;
    int32_t *mult = malloc(sizeof(int32_t) * out_c);
    int *shift = malloc(sizeof(int) * out_c);
    if (!mult || !shift) return free(mult), free(shift), false;
    eng_conv_requant(c->def->code, x, f, y, out_c, mult, shift);
    eng_qconv_desc d = {.is_signed = x->type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED,
                        .depthwise = wd->depthwise,
                        .filter = f->data,
                        .filter_zero =
                            f->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL ? 0 : f->zero_point,
                        .bias = bias->data,
                        .mult = mult,
                        .shift = shift,
                        .in_zero = x->zero_point,
                        .out_zero = y->zero_point};
    eng_act_range_q8(act, y, &d.qlo, &d.qhi);
    if (fc) {
        d.batch = (uint32_t)s->batch, d.in_h = d.in_w = d.out_h = d.out_w = 1;
        d.in_c = f->dims[1], d.out_c = out_c;
        d.fh = d.fw = d.sh = d.sw = d.dh = d.dw = 1;
    } else {
        d.batch = x->dims[0], d.in_h = x->dims[1], d.in_w = x->dims[2], d.in_c = x->dims[3];
        d.out_h = y->dims[1], d.out_w = y->dims[2], d.out_c = out_c;
        d.fh = wd->fh, d.fw = wd->fw, d.sh = wd->sh, d.sw = wd->sw, d.dh = wd->dh, d.dw = wd->dw;
        d.pad_top = wd->pad[0], d.pad_left = wd->pad[3];
    }
    eng_qconv *q = eng_qconv_create(&d);
    free(mult), free(shift);
    if (!q) return false;
    xnnb_own_composite(s, &qconv_composite, q);
    return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_qs8.c: the XNNPACK backend's signed 8-bit operators (xnn_step.h): convolutions on
 * qs8 (filter zero point 0) or qc8 (per-channel filters), FULLY_CONNECTED on qs8, and the
 * setup of every signed step. XNNPACK requantizes in float (round to nearest even) where
 * the reference uses gemmlowp fixed point: results agree within one step, as on qu8. */
#include "engine/ops_common/operand.h"
#include "engine/backends/xnnpack/xnn_step.h"

static bool requant_scale_ok(float r) {
    return r >= 0x1.0p-32f && r < 256.0f;
}

bool xnnb_requant_ok(const eng_tensor *x, const eng_tensor *f, const eng_tensor *y) {
    const eng_channel_quant *cq =
        f->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL ? f->channel_quant : NULL;
    if (!cq) return requant_scale_ok(x->scale * f->scale / y->scale); /* in float, as XNNPACK */
    for (uint32_t i = 0; i < cq->n_scales; i++)
        if (!requant_scale_ok(x->scale * cq->scales[i] / y->scale)) return false;
    return cq->n_scales > 0;
}

enum xnn_status xnnb_qs8_create_conv(const xnnb_window *wd, const eng_tensor *x,
                                     const eng_tensor *f, const eng_tensor *bias,
                                     const eng_tensor *y, int32_t qlo, int32_t qhi, xnnb_step *s) {
    uint32_t in_c = wd->groups * wd->group_in, out_c = wd->groups * wd->group_out;
    const eng_channel_quant *cq = f->channel_quant;
    s->per_channel = f->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL;
    bool dw = wd->depthwise;
    uint32_t flags = s->flags | (dw ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0);
    if (s->per_channel && (!cq || cq->n_scales != out_c || cq->channel_dim != (dw ? 3u : 0u)))
        return xnn_status_unsupported_parameter;
    if (!s->per_channel && f->zero_point != 0) return xnn_status_unsupported_parameter;
    if (s->per_channel)
        return xnn_create_convolution2d_nhwc_qc8(
            wd->pad[0], wd->pad[1], wd->pad[2], wd->pad[3], wd->fh, wd->fw, wd->sh, wd->sw, wd->dh,
            wd->dw, wd->groups, wd->group_in, wd->group_out, in_c, out_c, (int8_t)x->zero_point,
            x->scale, cq->scales, f->data, bias->data, (int8_t)y->zero_point, y->scale, (int8_t)qlo,
            (int8_t)qhi, flags, &s->op);
    return xnn_create_convolution2d_nhwc_qs8(
        wd->pad[0], wd->pad[1], wd->pad[2], wd->pad[3], wd->fh, wd->fw, wd->sh, wd->sw, wd->dh,
        wd->dw, wd->groups, wd->group_in, wd->group_out, in_c, out_c, (int8_t)x->zero_point,
        x->scale, f->scale, f->data, bias->data, (int8_t)y->zero_point, y->scale, (int8_t)qlo,
        (int8_t)qhi, flags, &s->op);
}

enum xnn_status xnnb_qs8_create_fc(size_t size, size_t units, const eng_tensor *x,
                                   const eng_tensor *wt, const eng_tensor *bias,
                                   const eng_tensor *y, int32_t qlo, int32_t qhi, xnnb_step *s) {
    if (wt->type != SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED || wt->zero_point != 0)
        return xnn_status_unsupported_parameter;
    return xnn_create_fully_connected_nc_qs8(
        size, units, size, units, (int8_t)x->zero_point, x->scale, wt->scale, wt->data, bias->data,
        (int8_t)y->zero_point, y->scale, (int8_t)qlo, (int8_t)qhi, s->flags, &s->op);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* boxes.c: axis-aligned boxes. See boxes.h. */
#include "engine/ops_common/boxes.h"

#include <math.h>
#include <stdio.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/signature.h"

void eng_box_from_center(float cx, float cy, float w, float h, float *box) {
    box[0] = cx - w / 2;
    box[1] = cy - h / 2;
    box[2] = cx + w / 2;
    box[3] = cy + h / 2;
}

void eng_box_apply_delta(const float *box, const float *delta, float *out) {
    float w = box[2] - box[0], h = box[3] - box[1];
    float cx = (box[0] + box[2]) / 2, cy = (box[1] + box[3]) / 2;
    eng_box_from_center(cx + delta[0] * w, cy + delta[1] * h, expf(delta[2]) * w,
                        expf(delta[3]) * h, out);
}

void eng_box_clip(float *box, float height, float width) {
    for (int k = 0; k < 4; k++)
        box[k] = fminf(fmaxf(box[k], 0.f), k % 2 ? height : width);
}

float eng_box_iou(const float *a, const float *b) {
    float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    float w = fmaxf(fminf(a[2], b[2]) - fmaxf(a[0], b[0]), 0.f);
    float h = fmaxf(fminf(a[3], b[3]) - fmaxf(a[1], b[1]), 0.f);
    float inter = w * h;
    return inter / (area_a + area_b - inter);
}

schema_status eng_check_box_quant(eng_op_ctx *c, const eng_tensor *t, const char *what) {
    if (!eng_driver_rules(c)) return SCHEMA_OK;
    if (t->type == SCHEMA_TENSOR_QUANT16_ASYMM && (t->scale != 0.125f || t->zero_point != 0))
        return eng_fail(c, "%s must have scale 0.125 and zero point 0, has (%g, %d)", what,
                        t->scale, t->zero_point);
    return SCHEMA_OK;
}

static schema_status check_box_operand(eng_op_ctx *c, const eng_tensor *t, bool input, uint32_t i) {
    bool quant = eng_is_quant8(c->in[0]->type);
    int32_t want = quant ? SCHEMA_TENSOR_QUANT16_ASYMM : c->in[0]->type;
    char what[16];
    snprintf(what, sizeof what, "%s %u", input ? "input" : "output", i);
    if (t->type != want)
        return eng_fail(c, "%s must be %s, is %s", what, schema_type_name(want),
                        schema_type_name(t->type));
    return eng_check_box_quant(c, t, what);
}

schema_status eng_check_box_signature(eng_op_ctx *c, const char *in_kinds, const char *out_kinds) {
    schema_status s =
        eng_check_type(c, c->in[0], "input 0", 4, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16,
                       SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    if (s || (s = eng_check_signature(c, in_kinds, out_kinds))) return s;
    for (uint32_t i = 0; i < c->n_in && in_kinds[i]; i++)
        if (in_kinds[i] == 'B' && (s = check_box_operand(c, c->in[i], true, i))) return s;
    for (uint32_t i = 0; i < c->n_out && out_kinds[i]; i++)
        if (out_kinds[i] == 'B' && (s = check_box_operand(c, c->out[i], false, i))) return s;
    return SCHEMA_OK;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* boxes: axis-aligned boxes of the detection and region operations (box regression,
 * clipping, intersection over union) and the signature rules of box operands.
 *
 * Contract: a box is four floats [x1, y1, x2, y2] with x1 <= x2, y1 <= y2; the same math
 * serves [y1, x1, y2, x2] boxes. Quantized box operands are QUANT16_ASYMM with scale
 * 0.125 and zero point 0, as the HAL requires; the checks fail through kernel_errors.h
 * naming the operand.
 */
#ifndef ENG_OPS_COMMON_BOXES_H
#define ENG_OPS_COMMON_BOXES_H

#include <stdbool.h>

#include "engine/op.h"

/* Corners of the box with the given center and size. */
void eng_box_from_center(float cx, float cy, float w, float h, float *box);
/* Applies a regression delta [dx, dy, dw, dh]: the center moves by (dx * width, dy *
 * height), the size scales by (exp(dw), exp(dh)). */
void eng_box_apply_delta(const float *box, const float *delta, float *out);
/* Clamps x coordinates to [0, width] and y coordinates to [0, height]. */
void eng_box_clip(float *box, float height, float width);
/* Intersection over union of two boxes. */
float eng_box_iou(const float *a, const float *b);
static inline bool eng_box_valid(const float *box) {
    return box[0] <= box[2] && box[1] <= box[3];
}

/* Quantized box tensors (QUANT16_ASYMM) must have scale 0.125 and zero point 0; other
 * types pass. `what` names the operand. */
schema_status eng_check_box_quant(eng_op_ctx *c, const eng_tensor *t, const char *what);
/* Signature of the detection and region operations: input 0 is FLOAT32, FLOAT16,
 * QUANT8_ASYMM or QUANT8_ASYMM_SIGNED (else unsupported), operands match the kinds of
 * eng_check_signature, and each 'B' (box) operand has input 0's float type, or is
 * QUANT16_ASYMM with scale 0.125 and zero point 0 when input 0 is quantized. */
schema_status eng_check_box_signature(eng_op_ctx *c, const char *in_kinds, const char *out_kinds);

#endif

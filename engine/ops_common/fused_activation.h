/* SPDX-License-Identifier: Apache-2.0 */
/* fused_activation: the output bounds of the fused activations NONE, RELU, RELU1 and
 * RELU6 (codes 0..3) that many operations apply to their result.
 *
 * Contract: the bounds are what the result is clamped to (eng_clampf, eng_clampi in
 * clamp.h). An unknown code gives the unbounded range; codes are checked by
 * eng_check_activation (signature.h). Quantized bounds are the real bounds quantized as
 * the reference does, for the output's scale, zero point and storage range.
 */
#ifndef ENG_OPS_COMMON_FUSED_ACTIVATION_H
#define ENG_OPS_COMMON_FUSED_ACTIVATION_H

#include <stdint.h>

#include "engine/op.h"

void eng_act_range_f32(int32_t act, float *lo, float *hi);
/* Quantized clamp bounds for an activation on an output of the given scale/zero point and
 * representable range [qmin, qmax]. */
void eng_act_range_quant(int32_t act, float scale, int32_t zero_point, int32_t qmin, int32_t qmax,
                         int32_t *lo, int32_t *hi);
/* The same for an 8-bit quantized output (QUANT8_ASYMM or QUANT8_ASYMM_SIGNED): its scale,
 * zero point and its storage type's range. */
void eng_act_range_q8(int32_t act, const eng_tensor *out, int32_t *lo, int32_t *hi);

#endif

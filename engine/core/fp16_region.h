/* SPDX-License-Identifier: Apache-2.0 */
/* fp16_region: FP16 regions of a prepared plan. Steps of TENSOR_FLOAT16 operands that a
 * fast backend computes in float (backend.h, float32_operand()) form regions through the
 * temporaries they pass each other; such a temporary is given TENSOR_FLOAT32 storage, so
 * that values cross a region's boundary (model inputs and outputs, constants, and steps on
 * the reference kernels, all FP16) converted once, and stay float inside it.
 *
 * Contract: only temporaries change type, and only when every step writing or reading
 * them accepts float there; the operand descriptions (the model's view) keep FP16. Not
 * for plans with dynamic shapes, whose checks and shape functions run again at execution
 * on the declared types. Returns how many temporaries changed: the arena must then be
 * laid out again (their sizes doubled).
 */
#ifndef NND_FP16_REGION_H
#define NND_FP16_REGION_H

#include "engine/core/internal.h"

uint32_t eng_plan_fp16_regions(eng_prepared *p);

#endif

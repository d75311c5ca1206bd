/* SPDX-License-Identifier: Apache-2.0 */
/* realvalue: element i of a numeric tensor of any type as a float, and back, for the
 * operations whose reference computes in float whatever the stored type.
 *
 * Contract: one switch on the tensor type per element, so these are for the operations
 * where that cost does not matter (detection, region and random operations), not for hot
 * loops. Reading dequantizes with the tensor's scale and zero point; writing quantizes as
 * round(x / scale + zero point), half away from zero, saturated to the type's range (NaN
 * to its low end). A storage type not listed reads and writes as FLOAT32.
 */
#ifndef ENG_OPS_COMMON_REALVALUE_H
#define ENG_OPS_COMMON_REALVALUE_H

#include <stddef.h>

#include "engine/op.h"

/* Element i of a FLOAT32, FLOAT16, INT32, QUANT8_ASYMM(_SIGNED), QUANT16_ASYMM or
 * QUANT16_SYMM tensor as a real number (quantized values are dequantized with the tensor's
 * scale/zero point). */
float eng_real_at(const eng_tensor *t, size_t i);
/* Stores x at element i of a FLOAT32, FLOAT16, QUANT8_ASYMM(_SIGNED), QUANT16_ASYMM or
 * QUANT16_SYMM tensor: quantized as round(x / scale + zero point) (half away from zero) saturated
 * to the type's range, as the reference does. */
void eng_set_real_at(eng_tensor *t, size_t i, float x);

#endif

/* affine_quant: quantized tensor values, real = scale * (q - zero_point), with q held in
 * the tensor's storage type.
 *
 * Contract: a quantized operand is a storage type (element width and signedness, hence
 * its representable range [qmin, qmax]) plus a scale and a zero point (the stored value
 * of real 0). Quantization rounds half away from zero and saturates to the range, as the
 * reference does. The integer arithmetic a requantization turns into is fixedpoint.h's.
 *
 * Storage types: the quantized kernels compute on TENSOR_QUANT8_ASYMM (uint8, [0, 255]);
 * the 16-bit types are read and written through realvalue.h. nnd_is_quant8 already counts
 * TENSOR_QUANT8_ASYMM_SIGNED (int8, [-128, 127]), which no kernel accepts yet: its range
 * and element access belong here when it comes.
 */
#ifndef NND_OPS_AFFINE_QUANT_H
#define NND_OPS_AFFINE_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"

static inline bool nnd_is_quant8(int32_t type) {
    return type == NND_TENSOR_QUANT8_ASYMM || type == NND_TENSOR_QUANT8_ASYMM_SIGNED;
}

/* round-half-away-from-zero quantization of a real value, clamped to [qmin, qmax]. */
int32_t nnd_quantize_value(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax);
static inline float nnd_dequantize_value(int32_t q, float scale, int32_t zero_point) {
    return scale * (float)(q - zero_point);
}
/* The NNAPI 1.0 convolution multiplier: in_scale * filter_scale / out_scale, checked < 1
 * by the caller where required. */
double nnd_conv_multiplier(float in_scale, float filter_scale, float out_scale);

/* For quantized types: fails unless output o has input i's scale and zero point (the
 * operations that move stored values without requantizing). */
nnd_status nnd_check_same_quant(nnd_op_ctx *c, uint32_t i, uint32_t o);

#endif

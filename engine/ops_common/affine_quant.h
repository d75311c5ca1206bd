/* SPDX-License-Identifier: Apache-2.0 */
/* affine_quant: quantized tensor values, real = scale * (q - zero_point), with q held in
 * the tensor's storage type.
 *
 * Contract: a quantized operand is a storage type (element width and signedness, hence
 * its representable range [qmin, qmax]) plus a scale and a zero point (the stored value
 * of real 0). Quantization rounds half away from zero and saturates to the range, as the
 * reference does. The integer arithmetic a requantization turns into is fixedpoint.h's.
 *
 * 8-bit storage: TENSOR_QUANT8_ASYMM holds [0, 255] (uint8), TENSOR_QUANT8_ASYMM_SIGNED
 * [-128, 127] (int8). Both are one byte per element and the same affine arithmetic; the
 * only difference is where the range starts. So every 8-bit kernel is written once on
 * stored values: it reads a byte with eng_q8_get(), computes with the tensor's zero
 * point, clamps to eng_q8_min()/eng_q8_max() of the output's type and stores the byte
 * with eng_q8_put(). The reference computes the signed forms natively or as the unsigned
 * form shifted by 128, which on stored values is the same arithmetic; where a rounding
 * depends on the sign (averages, means), kernels round as the signed reference does,
 * which for the non-negative values of the unsigned type is its rounding too. The 16-bit
 * types are read and written through realvalue.h.
 */
#ifndef ENG_OPS_COMMON_AFFINE_QUANT_H
#define ENG_OPS_COMMON_AFFINE_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

static inline bool eng_is_quant8(int32_t type) {
    return type == SCHEMA_TENSOR_QUANT8_ASYMM || type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
}

/* ---- 8-bit storage ---------------------------------------------------------------------- */
/* The range of stored values of an 8-bit quantized type: qmin is 0 or -128, qmax is
 * qmin + 255. Zero points lie in the same range (model.c checks them). */
static inline int32_t eng_q8_min(int32_t type) {
    return type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED ? INT8_MIN : 0;
}
static inline int32_t eng_q8_max(int32_t type) {
    return eng_q8_min(type) + UINT8_MAX;
}
/* The stored value in byte b of a type whose range starts at qmin: b for uint8, b as
 * two's complement for int8. Flipping the top bit and adding qmin does both without a
 * branch. */
static inline int32_t eng_q8_value(uint8_t b, int32_t qmin) {
    return (int32_t)(uint8_t)(b ^ (uint8_t)qmin) + qmin;
}
/* Element i of an 8-bit tensor's data as a stored value. */
static inline int32_t eng_q8_get(const void *data, size_t i, int32_t qmin) {
    return eng_q8_value(((const uint8_t *)data)[i], qmin);
}
/* Stores value v (already in the type's range) at element i. */
static inline void eng_q8_put(void *data, size_t i, int32_t v) {
    ((uint8_t *)data)[i] = (uint8_t)v;
}
/* A requantized integer result plus the output zero point, saturated to [lo, hi]: the
 * result may itself have saturated to the int32 range, so the sum is taken wider. */
static inline int32_t eng_q8_offset(int32_t v, int32_t zero_point, int32_t lo, int32_t hi) {
    int64_t r = (int64_t)v + zero_point;
    return r < lo ? lo : r > hi ? hi : (int32_t)r;
}

/* round-half-away-from-zero quantization of a real value, clamped to [qmin, qmax]. */
int32_t eng_quantize_value(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax);
static inline float eng_dequantize_value(int32_t q, float scale, int32_t zero_point) {
    return scale * (float)(q - zero_point);
}
/* The real multiplier in_scale * filter_scale / out_scale of a convolution, fully connected
 * layer or matrix product, as TensorFlow Lite derives it before quantizing it: the product
 * of the two input scales is taken in float when float_product (8-bit unsigned
 * convolutions, every FULLY_CONNECTED) and in double otherwise (signed convolutions, per
 * channel or not); the quotient is always taken in double. The float product keeps 24
 * bits, so the two quantized multipliers are usually some units of 2^-31 apart, which
 * now and then moves a result by one step. */
double eng_product_multiplier(float in_scale, float filter_scale, float out_scale,
                              bool float_product);

/* For quantized types: fails unless output o has input i's scale and zero point (the
 * operations that move stored values without requantizing). eng_check_same_quant() is a
 * driver rule, judged from prepare on (eng_driver_rules()); eng_require_same_quant() is
 * judged as the operation is added too, where the NNAPI runtime checks it (PACK,
 * MIRROR_PAD, REVERSE). */
schema_status eng_check_same_quant(eng_op_ctx *c, uint32_t i, uint32_t o);
schema_status eng_require_same_quant(eng_op_ctx *c, uint32_t i, uint32_t o);

/* The output quantization the HAL fixes for an 8-bit result in [0, 1) (LOGISTIC, SOFTMAX:
 * scale 1/256, zero point at the bottom of the range, qmin) or in [-1, 1] (TANH,
 * L2_NORMALIZATION: scale 1/128, zero point qmin + 128) for the given 8-bit type. */
enum eng_fixed_range { ENG_FIXED_UNIT, ENG_FIXED_SYMMETRIC };
/* Fails unless 8-bit output o has that fixed quantization (a driver rule). */
schema_status eng_check_fixed_quant(eng_op_ctx *c, uint32_t o, enum eng_fixed_range r);

#endif

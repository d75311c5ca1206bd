/* SPDX-License-Identifier: Apache-2.0 */
/* rewrites: the passes of preparation that change a prepared plan's operands after its
 * steps are claimed, without changing what the model computes. One header, two passes:
 *
 * 1. eng_fold_requantize(): one requantization a converter split in two, computed again as one.
 *
 * TensorFlow Lite's MEAN may give its 8-bit output another scale or zero point than its
 * input; NNAPI's MEAN may not. TensorFlow Lite's NNAPI delegate therefore hands such a
 * MEAN over as a MEAN into a temporary with the input's quantization, then an ADD of a
 * one-element constant 0 (activation NONE) into the real output. Done literally, the mean
 * is rounded twice (to the temporary's step, then to the output's) where TensorFlow Lite
 * rounds once, and the result can be a step off (docs/numerics.md).
 *
 * Contract: eng_fold_requantize() looks in a prepared plan whose shapes are all known for
 * a MEAN on 8-bit data whose output is a temporary read by one step only, an ADD of that
 * temporary and a constant tensor whose every element is its zero point, with activation
 * NONE, into an output of the same type and shape. For each, the temporary takes the
 * ADD's output quantization, so that the MEAN rounds straight into the output's step and
 * the ADD passes the values through unchanged (a sum with real 0 at the same scale).
 * Nothing else changes: steps, operands and shapes stay as the model gave them. Returns
 * the number of MEANs so folded. Not for plans with dynamic shapes, whose execution
 * checks operations again (a MEAN must keep its input's quantization there).
 *
 * 2. eng_plan_fp16_regions(): FP16 regions of a prepared plan. Steps of TENSOR_FLOAT16 operands
 * that a fast backend computes in float (backend.h, float32_operand()) form regions through the
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
#ifndef ENG_CORE_REWRITES_H
#define ENG_CORE_REWRITES_H

#include <stdint.h>

struct eng_prepared;
uint32_t eng_fold_requantize(struct eng_prepared *p);
uint32_t eng_plan_fp16_regions(struct eng_prepared *p);

#endif

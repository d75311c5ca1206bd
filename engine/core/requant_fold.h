/* SPDX-License-Identifier: Apache-2.0 */
/* requant_fold: one requantization a converter split in two, computed again as one.
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
 * checks operations again (a MEAN must keep its input's quantization there). */
#ifndef NND_ENGINE_REQUANT_FOLD_H
#define NND_ENGINE_REQUANT_FOLD_H

#include <stdint.h>

struct eng_prepared;
uint32_t eng_fold_requantize(struct eng_prepared *p);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* op_def: shorthands for a kernel file's eng_op_def (op.h), the value its row in
 * registry.c points at.
 *
 * Contract: macros only; they expand to a plain designated initializer, so a definition
 * written with them is the same as one written out. NND_FLOAT_OP, which adds a FLOAT16
 * kernel through the type bridge, is in type_bridge.h.
 */
#ifndef NND_OPS_OP_DEF_H
#define NND_OPS_OP_DEF_H

#include "engine/op.h"

/* Defines `const eng_op_def eng_op_<id>` for the HAL operation OP (code and name from
 * its spelling) with the given check, shape and kernel rows ({{type, run}, ...}). */
// clang-format off
#define NND_OP_DEF(id, OP, check_fn, shape_fn, ...) \
    const eng_op_def eng_op_##id = {.code = NND_OP_##OP, .name = #OP, .check = check_fn, \
        .shape = shape_fn, .kernels = __VA_ARGS__}
// clang-format on

/* Kernel rows running one type-agnostic function for FLOAT32, FLOAT16 and the 8-bit
 * quantized inputs, unsigned and signed (FQ), and also TENSOR_INT32 (FQI). Which of
 * these an operation accepts is its check()'s to say. */
// clang-format off
#define NND_KERNELS_FQ(run) \
    {{NND_TENSOR_FLOAT32, run}, {NND_TENSOR_FLOAT16, run}, {NND_TENSOR_QUANT8_ASYMM, run}, \
     {NND_TENSOR_QUANT8_ASYMM_SIGNED, run}}
#define NND_KERNELS_FQI(run) \
    {{NND_TENSOR_FLOAT32, run}, {NND_TENSOR_FLOAT16, run}, {NND_TENSOR_QUANT8_ASYMM, run}, \
     {NND_TENSOR_QUANT8_ASYMM_SIGNED, run}, {NND_TENSOR_INT32, run}}
/* The types eng_check_moved() (signature.h) accepts: those of FQI. */
#define NND_KERNELS_MOVED(run) NND_KERNELS_FQI(run)
// clang-format on

#endif

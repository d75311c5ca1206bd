/* SPDX-License-Identifier: Apache-2.0 */
/* type_bridge: runs a FLOAT32 kernel for FLOAT16 operands, for operations whose reference
 * semantics are float math followed by rounding to the stored type.
 *
 * Contract: the bridge presents the kernel with FLOAT32 copies (in scratch) of every FLOAT16
 * operand, inputs converted and outputs converted back by casts after a successful run.
 * Other operands pass through untouched. It fails when an operation has more than 64 inputs
 * or 16 outputs or scratch runs out; the kernel's own failure is returned as is.
 */
#ifndef ENG_OPS_COMMON_TYPE_BRIDGE_H
#define ENG_OPS_COMMON_TYPE_BRIDGE_H

#include "engine/op.h"

/* Runs f32 with every FLOAT16 tensor/scalar (inputs and outputs) presented as FLOAT32. */
schema_status eng_run_f16_as_f32(eng_op_ctx *c, eng_op_fn f32);

#endif

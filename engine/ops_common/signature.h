/* SPDX-License-Identifier: Apache-2.0 */
/* signature: the checks an operation's check() and shape() make on operand counts, types,
 * ranks, constant scalars and dimensions.
 *
 * Contract: each returns SCHEMA_OK, or fails through kernel_errors.h with a message naming
 * the operand and what it should have been: SCHEMA_INVALID_ARGUMENT for a wrong signature,
 * a type included (an operation's types are the NNAPI runtime's for it: a type it does not
 * take is invalid, not unsupported). A rank that is not known yet (prepare with unknown
 * shapes) passes the rank checks; it is judged again at execution. eng_check_activation
 * judges a constant's value only with the driver's rules (eng_driver_rules()).
 */
#ifndef ENG_OPS_COMMON_SIGNATURE_H
#define ENG_OPS_COMMON_SIGNATURE_H

#include <stdint.h>

#include "engine/op.h"

schema_status eng_check_count(eng_op_ctx *c, uint32_t min_in, uint32_t max_in, uint32_t min_out,
                              uint32_t max_out);
/* Fails unless t->type is one of the n listed types; `what` names the operand. */
schema_status eng_check_type(eng_op_ctx *c, const eng_tensor *t, const char *what, int n, ...);
/* Fails unless the rank (when known) is within [min, max]. */
schema_status eng_check_rank(eng_op_ctx *c, const eng_tensor *t, const char *what, uint32_t min,
                             uint32_t max);
/* Input i is a scalar of the given type (INT32, FLOAT32, FLOAT16, BOOL). */
schema_status eng_check_scalar(eng_op_ctx *c, uint32_t i, int32_t type);
/* Input i, when constant, is a fused activation code 0..3. */
schema_status eng_check_activation(eng_op_ctx *c, uint32_t i);
/* Output o has the same type as input i (and, for quantized types, no checks on scale). */
schema_status eng_check_same_type(eng_op_ctx *c, uint32_t i, uint32_t o);

/* Input i holds data the operation only moves (the movement operations of HAL 1.3 and
 * later): TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32, TENSOR_QUANT8_ASYMM or
 * TENSOR_QUANT8_ASYMM_SIGNED (else invalid), and output o has its type, scale and zero
 * point (a model rule, as the runtime's PACK, MIRROR_PAD and REVERSE rules). */
schema_status eng_check_moved(eng_op_ctx *c, uint32_t i, uint32_t o);

/* Checks input and output types against kind strings, one letter per operand relative to
 * the type of input 0: 'T' that tensor type, 'f' the float scalar that goes with it
 * (FLOAT16 for TENSOR_FLOAT16, else FLOAT32), 'i' INT32, 'b' BOOL, 'I' TENSOR_INT32,
 * '*' any. Operands beyond a string's end are not checked. */
schema_status eng_check_signature(eng_op_ctx *c, const char *in_kinds, const char *out_kinds);
/* Input 0 is TENSOR_FLOAT32 or TENSOR_FLOAT16 (else invalid), then as above. */
schema_status eng_check_float_signature(eng_op_ctx *c, const char *in_kinds, const char *out_kinds);
/* Each input i whose ranks[i] is a digit must have that rank (when known); other
 * characters skip the input. */
schema_status eng_check_input_ranks(eng_op_ctx *c, const char *ranks);
/* Fails unless input i has exactly the given rank and dimensions; `what` names it. */
schema_status eng_expect_dims(eng_op_ctx *c, uint32_t i, const char *what, uint32_t rank,
                              const uint32_t *dims);

#endif

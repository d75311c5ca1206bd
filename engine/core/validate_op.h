/* SPDX-License-Identifier: Apache-2.0 */
/* validate_op: the engine's view of a declared operand, and eng_validate_operation()
 * (engine.h), the check libnnd runs as an operation is added.
 *
 * Contract: validate_op.c, flow_check.c and the operations' rows (ops/) are all that
 * eng_validate_operation() reaches; libnnd links them compiled without kernels
 * (nnd_engine_rules, engine/CMakeLists.txt), so nothing here may call into preparation or
 * execution. Internal to engine/.
 */
#ifndef ENG_CORE_VALIDATE_OP_H
#define ENG_CORE_VALIDATE_OP_H

#include <stdbool.h>

#include "engine/engine.h"
#include "engine/op.h"

/* Whether every dimension of a tensor operand is declared (true for a scalar). */
bool eng_operand_dims_known(const eng_operand_desc *o);
/* Fills t with o's type, dimensions and quantization, no data; a per-channel filter's
 * quantization is copied into *cq, which t then points at. */
void eng_operand_tensor(const eng_operand_desc *o, eng_tensor *t, eng_channel_quant *cq);

#endif

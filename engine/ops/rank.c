/* SPDX-License-Identifier: Apache-2.0 */
/* rank.c: RANK (HAL 1.3) — the number of dimensions of a tensor of any tensor type, as an
 * INT32 scalar. Only the input's shape is read, never its values. */
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"

static schema_status rank_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 1, 1, 1, 1);
    if (s) return s;
    int32_t t = c->in[0]->type;
    /* Every HAL tensor type; OEM and extension tensors are not the reference's to rank. */
    if (!schema_type_is_tensor(t) || t == SCHEMA_TENSOR_OEM_BYTE ||
        t > SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED)
        return eng_fail(c, "input 0 must be a tensor of a HAL tensor type, is %s",
                        schema_type_name(t));
    if (c->out[0]->type != SCHEMA_INT32)
        return eng_fail(c, "output 0 must be INT32, is %s", schema_type_name(c->out[0]->type));
    return SCHEMA_OK;
}

static schema_status rank_shape(eng_op_ctx *c) {
    eng_set_shape(c->out[0], 0, NULL);
    return SCHEMA_OK;
}

static schema_status rank_run(eng_op_ctx *c) {
    *(int32_t *)c->out[0]->data = (int32_t)c->in[0]->rank;
    return SCHEMA_OK;
}

/* Any input type check() accepts. */
ENG_OP_DEF(RANK, rank_check, rank_shape, 0, 0, {{ENG_KERNEL_ANY_TYPE, rank_run}});

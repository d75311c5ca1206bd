/* SPDX-License-Identifier: Apache-2.0 */
/* quant_table.c: 8-bit lookup-table kernels. See quant_table.h. */
#include "engine/ops_common/quant_table.h"

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/operand.h"

schema_status eng_q8_table_run(eng_op_ctx *c, eng_q8_table_fn build) {
    int32_t type = c->in[0]->type, qmin = eng_q8_min(type);
    uint8_t table[256];
    build(c, qmin, eng_q8_max(type), table);
    const void *x = c->in[0]->data;
    uint8_t *y = c->out[0]->data;
    size_t n = eng_elems(c->out[0]);
    for (size_t i = 0; i < n; i++)
        y[i] = table[eng_q8_get(x, i, qmin) - qmin];
    return SCHEMA_OK;
}

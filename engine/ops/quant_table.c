/* quant_table.c: 8-bit lookup-table kernels. See quant_table.h. */
#include "quant_table.h"

#include "affine_quant.h"
#include "operand.h"

nnd_status nnd_q8_table_run(nnd_op_ctx *c, nnd_q8_table_fn build) {
    int32_t type = c->in[0]->type, qmin = nnd_q8_min(type);
    uint8_t table[256];
    build(c, qmin, nnd_q8_max(type), table);
    const void *x = c->in[0]->data;
    uint8_t *y = c->out[0]->data;
    size_t n = nnd_elems(c->out[0]);
    for (size_t i = 0; i < n; i++)
        y[i] = table[nnd_q8_get(x, i, qmin) - qmin];
    return NND_OK;
}

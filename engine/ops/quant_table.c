/* quant_table.c: 8-bit lookup-table kernels. See quant_table.h. */
#include "quant_table.h"

#include <stdbool.h>

#include "operand.h"

nnd_status nnd_q8_table_run(nnd_op_ctx *c, nnd_q8_table_fn build) {
    bool is_signed = c->in[0]->type == NND_TENSOR_QUANT8_ASYMM_SIGNED;
    int32_t qmin = is_signed ? -128 : 0, qmax = is_signed ? 127 : 255;
    uint8_t table[256];
    build(c, qmin, qmax, table);
    /* Signed bytes index the table offset by 128: flipping the top bit does that. */
    uint8_t flip = is_signed ? 0x80 : 0;
    const uint8_t *x = c->in[0]->data;
    uint8_t *y = c->out[0]->data;
    size_t n = nnd_elems(c->out[0]);
    for (size_t i = 0; i < n; i++)
        y[i] = table[(uint8_t)(x[i] ^ flip)];
    return NND_OK;
}

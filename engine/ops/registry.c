/* registry.c: the operation table. Adding an operation is one kernel file defining its
 * nnd_op_def and one row here. */
#include "op.h"

extern const nnd_op_def nnd_op_add, nnd_op_mul, nnd_op_sub, nnd_op_div;

static const nnd_op_def *const table[NND_OP_COUNT] = {
    [NND_OP_ADD] = &nnd_op_add,
    [NND_OP_MUL] = &nnd_op_mul,
    [NND_OP_SUB] = &nnd_op_sub,
    [NND_OP_DIV] = &nnd_op_div,
};

const nnd_op_def *nnd_op_lookup(int32_t code) {
    return code >= 0 && code < NND_OP_COUNT ? table[code] : NULL;
}

nnd_op_fn nnd_op_kernel(const nnd_op_def *def, int32_t type) {
    for (int i = 0; i < NND_MAX_KERNELS && def->kernels[i].run; i++)
        if (def->kernels[i].type == type) return def->kernels[i].run;
    return NULL;
}

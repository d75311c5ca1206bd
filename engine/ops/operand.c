/* operand.c: operand readers and shapes. See operand.h. */
#include "operand.h"

#include <string.h>

#include "float16.h"

int32_t nnd_i32(const nnd_tensor *t) {
    int32_t v;
    memcpy(&v, t->data, sizeof v);
    return v;
}

float nnd_f32(const nnd_tensor *t) {
    if (t->type == NND_FLOAT16 || t->type == NND_TENSOR_FLOAT16) {
        nnd_half h;
        memcpy(&h, t->data, sizeof h);
        return (float)h;
    }
    float v;
    memcpy(&v, t->data, sizeof v);
    return v;
}

bool nnd_bool(const nnd_tensor *t) {
    return *(const uint8_t *)t->data != 0;
}

size_t nnd_elems(const nnd_tensor *t) {
    return nnd_dims_product(t, 0, t->rank);
}

size_t nnd_dims_product(const nnd_tensor *t, uint32_t from, uint32_t to) {
    size_t n = 1;
    for (uint32_t i = from; i < to && i < t->rank; i++)
        n *= t->dims[i];
    return n;
}

void nnd_set_shape(nnd_tensor *t, uint32_t rank, const uint32_t *dims) {
    t->rank = rank;
    for (uint32_t i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    t->known = true;
}

nnd_status nnd_shape_of_input0(nnd_op_ctx *c) {
    nnd_copy_shape(c->out[0], c->in[0]);
    return NND_OK;
}

bool nnd_resolve_axis(int32_t axis, uint32_t rank, uint32_t *out) {
    int64_t a = axis, r = rank;
    if (a < -r || a >= r) return false;
    *out = (uint32_t)(a < 0 ? a + r : a);
    return true;
}

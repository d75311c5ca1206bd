/* SPDX-License-Identifier: Apache-2.0 */
/* operand.c: operand readers and shapes. See operand.h. */
#include "engine/ops_common/operand.h"

#include <string.h>

#include "engine/ops_common/float16.h"
#include "schema/operand_type.h"

int32_t eng_i32(const eng_tensor *t) {
    int32_t v;
    memcpy(&v, t->data, sizeof v);
    return v;
}

float eng_f32(const eng_tensor *t) {
    if (t->type == SCHEMA_FLOAT16 || t->type == SCHEMA_TENSOR_FLOAT16) {
        eng_half h;
        memcpy(&h, t->data, sizeof h);
        return (float)h;
    }
    float v;
    memcpy(&v, t->data, sizeof v);
    return v;
}

bool eng_bool(const eng_tensor *t) {
    return *(const uint8_t *)t->data != 0;
}

size_t eng_elems(const eng_tensor *t) {
    return eng_dims_product(t, 0, t->rank);
}

size_t eng_dims_product(const eng_tensor *t, uint32_t from, uint32_t to) {
    size_t n = 1;
    for (uint32_t i = from; i < to && i < t->rank; i++)
        n *= t->dims[i];
    return n;
}

void eng_set_shape(eng_tensor *t, uint32_t rank, const uint32_t *dims) {
    t->rank = rank;
    for (uint32_t i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    t->known = true;
}

schema_status eng_shape_of_input0(eng_op_ctx *c) {
    eng_copy_shape(c->out[0], c->in[0]);
    return SCHEMA_OK;
}

bool eng_resolve_axis(int32_t axis, uint32_t rank, uint32_t *out) {
    int64_t a = axis, r = rank;
    if (a < -r || a >= r) return false;
    *out = (uint32_t)(a < 0 ? a + r : a);
    return true;
}

size_t eng_tensor_bytes(const eng_tensor *t) {
    uint64_t n = schema_shape_bytes(t->type, t->rank, t->dims);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

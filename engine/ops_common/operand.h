/* SPDX-License-Identifier: Apache-2.0 */
/* operand: reading a kernel's operands and setting output shapes.
 *
 * Contract: the readers take a tensor whose data is present (a constant, or any operand
 * at execution) and of the type named; they do not check, the operation's check() has.
 * Shapes are plain dims; eng_set_shape() marks the shape known. Nothing here allocates
 * or fails.
 */
#ifndef ENG_OPS_COMMON_OPERAND_H
#define ENG_OPS_COMMON_OPERAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

/* ---- presence and type classes -------------------------------------------------------- */
static inline bool eng_present(const eng_tensor *t) {
    return t->lifetime != SCHEMA_NO_VALUE;
}
static inline bool eng_has_input(const eng_op_ctx *c, uint32_t i) {
    return i < c->n_in && eng_present(c->in[i]);
}
/* An optional input that is a model input: at prepare it has no data yet, and whether the
 * request will omit it is only known at execution (shape() may want ENG_DEFER). */
static inline bool eng_input_pending(const eng_op_ctx *c, uint32_t i) {
    return eng_has_input(c, i) && c->in[i]->lifetime == SCHEMA_MODEL_INPUT && !c->in[i]->data;
}
static inline bool eng_is_float(int32_t type) {
    return type == SCHEMA_TENSOR_FLOAT32 || type == SCHEMA_TENSOR_FLOAT16;
}

/* ---- scalars -------------------------------------------------------------------------- */
int32_t eng_i32(const eng_tensor *t); /* INT32 scalar, or element 0 of an INT32 tensor */
float eng_f32(const eng_tensor *t);   /* FLOAT32 or FLOAT16 scalar */
bool eng_bool(const eng_tensor *t);   /* BOOL scalar */

/* ---- shapes and axes ------------------------------------------------------------------ */
size_t eng_elems(const eng_tensor *t); /* product of dims (1 for rank 0) */
/* Product of dims[from..to). */
size_t eng_dims_product(const eng_tensor *t, uint32_t from, uint32_t to);
void eng_set_shape(eng_tensor *t, uint32_t rank, const uint32_t *dims);
static inline void eng_copy_shape(eng_tensor *dst, const eng_tensor *src) {
    eng_set_shape(dst, src->rank, src->dims);
}
/* A shape() (op.h) for the operations whose output 0 has input 0's shape. */
schema_status eng_shape_of_input0(eng_op_ctx *c);
/* Bytes of a tensor of its type and shape; SIZE_MAX when too large to exist. */
size_t eng_tensor_bytes(const eng_tensor *t);
/* Resolves an axis in [-rank, rank) to [0, rank); false when out of range. */
bool eng_resolve_axis(int32_t axis, uint32_t rank, uint32_t *out);

#endif

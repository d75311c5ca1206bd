/* SPDX-License-Identifier: Apache-2.0 */
/* broadcast: NumPy-style broadcasting of two operands for elementwise operations.
 *
 * Contract: dimensions are aligned from the innermost; each pair must be equal or have a
 * 1, which repeats. eng_broadcast_shape() sets the output shape or fails naming the
 * dimension; eng_broadcast_walk() then visits the output in row-major order, one innermost
 * run at a time, without allocating.
 */
#ifndef ENG_OPS_COMMON_BROADCAST_H
#define ENG_OPS_COMMON_BROADCAST_H

#include <stddef.h>

#include "engine/op.h"

/* Sets out's shape to the NumPy-style broadcast of a and b, or fails naming both shapes. */
schema_status eng_broadcast_shape(eng_op_ctx *c, const eng_tensor *a, const eng_tensor *b,
                                  eng_tensor *out);
/* Calls row(ctx, out_off, a_off, a_step, b_off, b_step, n) for each innermost run of the
 * output; steps are 0 (broadcast) or 1. Offsets are in elements. */
typedef void (*eng_bcast_row_fn)(void *ctx, size_t out_off, size_t a_off, size_t a_step,
                                 size_t b_off, size_t b_step, size_t n);
void eng_broadcast_walk(const eng_tensor *a, const eng_tensor *b, const eng_tensor *out,
                        eng_bcast_row_fn row, void *ctx);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* tensor_copy: moving stored elements without looking at their values, for the
 * operations that rearrange data (concatenation, slicing, padding, transposition, ...).
 *
 * Contract: elements are opaque blocks of esize bytes; steps are in elements. The copies
 * never allocate and never check bounds: the caller keeps every address inside its
 * buffers. eng_aligned_data() is the one exception that uses scratch, and only when a
 * constant sits misaligned in the operand values.
 */
#ifndef ENG_OPS_COMMON_TENSOR_COPY_H
#define ENG_OPS_COMMON_TENSOR_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

/* Copies n elements of esize bytes, reading every src_step-th and writing every
 * dst_step-th element (steps in elements). */
void eng_copy_elems(void *dst, size_t dst_step, const void *src, size_t src_step, size_t n,
                    size_t esize);
/* N-d strided copy: for every index vector i < count[0..rank), the element at
 * sum(i[d] * src_step[d]) from src goes to sum(i[d] * dst_step[d]) from dst. Steps are in
 * elements and may be zero or negative; the caller keeps every address in bounds. Nothing
 * is touched when some count is 0. Up to ENG_COPY_MAX_RANK dimensions. */
#define ENG_COPY_MAX_RANK (2 * ENG_MAX_RANK)
void eng_copy_nd(void *dst, const ptrdiff_t *dst_step, const void *src, const ptrdiff_t *src_step,
                 const uint32_t *count, uint32_t rank, size_t esize);
/* Row-major element steps of a shape (steps[rank - 1] == 1). */
void eng_dense_steps(uint32_t rank, const uint32_t *dims, ptrdiff_t *steps);
/* Sets n elements of esize bytes at dst to copies of the element at value. */
void eng_fill_elems(void *dst, const void *value, size_t n, size_t esize);
/* t's data, or an aligned scratch copy when it is not aligned for its element type
 * (constants can sit at any offset of the operand values); NULL when out of memory. */
const void *eng_aligned_data(eng_op_ctx *c, const eng_tensor *t);

#endif

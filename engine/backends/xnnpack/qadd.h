/* SPDX-License-Identifier: Apache-2.0 */
/* qadd: 8-bit ADD and SUB of two tensors of one shape bit for bit as the reference kernel
 * computes them (TensorFlow Lite's: each side (x - z) * 2^20 times its scale over twice
 * the larger one, summed, times that over the output scale, each product with the two
 * roundings of MultiplyByQuantizedMultiplier), vectorized on AVX-512. XNNPACK's 8-bit
 * ADD rounds its own way and parts from it by a step now and then.
 *
 * Contract: eng_qadd_init() derives the multipliers as the reference does for inputs a
 * and b and output y of one 8-bit type and returns false when qadd does not take them: no
 * AVX-512 on this CPU, or a final multiplier of 1 or more (a left shift). eng_qadd_run()
 * then writes n outputs from n elements of each input, the reference kernel's bytes; it
 * allocates nothing and runs on tp (NULL: the calling thread). */
#ifndef ENG_BACKENDS_XNNPACK_QADD_H
#define ENG_BACKENDS_XNNPACK_QADD_H

#include <pthreadpool.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

typedef struct eng_qadd {
    bool is_signed, subtract;
    int32_t za, zb, zo, lo, hi;
    int32_t ma, mb, mo; /* multipliers, and their right shifts */
    int ra, rb, ro;
} eng_qadd;

bool eng_qadd_init(eng_qadd *q, const eng_tensor *a, const eng_tensor *b, const eng_tensor *y,
                   int32_t act, bool subtract);
void eng_qadd_run(const eng_qadd *q, const void *a, const void *b, void *y, size_t n,
                  pthreadpool_t tp, uint32_t flags);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* footprint: what a prepared model holds in the daemon's memory, for the quotas that
 * count memory (the daemon's quota.*.prepared_bytes and the content cache's limit).
 *
 * Contract:
 * - eng_prepared_bytes() (engine.h) is the sum of what the plan allocated for itself (its
 *   operand, tensor, step and list arrays, its own copies of constants: CONSTANT_COPY
 *   values and misaligned CONSTANT_REFERENCE ones, extension data, the referenced
 *   subgraphs' plans) and of what its backends allocated while claiming its steps,
 *   counted where it was allocated: between eng_footprint_begin() and
 *   eng_footprint_end() on one thread, every block XNNPACK's allocator (xnn_alloc.h) hands
 *   out adds its size to the account and every block freed there takes it back; a
 *   backend's own state adds itself through eng_footprint_add(). The client's pools, used
 *   in place, are not counted (they are the client's memory, mapped: quota.app.mappings).
 * - A driver's own allocations happen in its library and are not seen: a driver step
 *   counts its claim and the bytes of its constant inputs (what a driver copies at
 *   prepare), an estimate.
 * - The account is per thread (preparations run on the loop and on workers at once);
 *   outside a begin/end pair the calls count nothing.
 */
#ifndef ENG_BASE_FOOTPRINT_H
#define ENG_BASE_FOOTPRINT_H

#include <stddef.h>
#include <sys/types.h>

/* From now on this thread's counted allocations go to *account (not reset). */
void eng_footprint_begin(size_t *account);
void eng_footprint_end(void);
/* Adds bytes (negative: gives back, never below zero) to this thread's account, if any. */
void eng_footprint_add(ssize_t bytes);
/* Adds what malloc gave p (malloc_usable_size), if p is not NULL. */
void eng_footprint_add_block(void *p);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* scratch: an execution's scratch pool, the memory eng_scratch() (op.h) hands a kernel for
 * one run() call. Contract:
 * - eng_scratch() gives 64-byte aligned bytes from the pool's base; past its capacity a
 *   chunk of its own for this run; NULL when out of memory or over the allocation limit.
 * - eng_scratch_reset() after each step's run: the pool is empty again, and a run that
 *   overflowed grows the base to what it needed, so the next run takes no chunk.
 * - eng_scratch_free() gives everything back; the pool is zeroed.
 * - eng_alloc_over_limit(): whether one allocation of an execution (a temporary sized at
 *   execution, or scratch) is over the limit: such sizes follow shapes a request's data
 *   chooses, and memory that is granted gets written. NND_EXEC_ALLOC_LIMIT_MB overrides
 *   the default of 4 GiB.
 * - One pool per execution, used by one thread at a time. */
#ifndef ENG_BASE_SCRATCH_H
#define ENG_BASE_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

struct eng_scratch_pool {
    uint8_t *base;
    size_t cap, used;
    void **extra; /* overflow chunks of this run, merged into base afterwards */
    size_t n_extra, extra_bytes;
};

void eng_scratch_reset(eng_scratch_pool *s);
void eng_scratch_free(eng_scratch_pool *s);
bool eng_alloc_over_limit(size_t bytes);

#endif

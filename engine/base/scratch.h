/* SPDX-License-Identifier: Apache-2.0 */
/* scratch: the memory a kernel or a shape rule borrows for one call (eng_scratch(), op.h),
 * from a pool an execution owns, and the limit on one allocation of an execution.
 *
 * Contract: eng_scratch() hands out 64-byte aligned blocks from the pool of c->scratch
 * (NULL without one, when out of memory, or past the limit); they stay valid until
 * eng_scratch_reset(), which also grows the pool's base to what the last run needed, so a
 * steady run allocates nothing. eng_scratch_free() releases the pool. The operations' rows
 * reach this file, so libnnd links it (nnd_engine_rules); it knows nothing of plans.
 */
#ifndef NND_ENGINE_BASE_SCRATCH_H
#define NND_ENGINE_BASE_SCRATCH_H

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
/* Whether one allocation of an execution (a temporary sized at execution, or scratch) is
 * over the limit: such sizes follow shapes a request's data chooses, and memory that is
 * granted gets written. NND_EXEC_ALLOC_LIMIT_MB overrides the default of 4 GiB. */
bool eng_alloc_over_limit(size_t bytes);

#endif

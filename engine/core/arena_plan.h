/* SPDX-License-Identifier: Apache-2.0 */
/* arena_plan: one block of memory for a plan's temporaries, laid out by liveness.
 *
 * Contract: eng_plan_arena() gives every temporary of known shape of p an offset in
 * p->slot (ENG_NO_SLOT for the other operands) and sets p->arena_size, so that two
 * temporaries share bytes only when no step of p reads or writes both (a temporary lives
 * from the step that writes it to the last step that reads it). Greedy by size, largest
 * first, each at the lowest offset free during its life; O(n log n) in the operations and
 * operands for graphs whose temporaries live briefly, and never worse than linear in the
 * overlaps it examines (past a budget of 64 per temporary the rest are laid out one after
 * another). INVALID_ARGUMENT when the temporaries together would pass
 * SCHEMA_MAX_TENSOR_BYTES; out of memory is INVALID_ARGUMENT too, with a message saying so.
 * Safe on several threads at once for different plans. */
#ifndef ENG_CORE_ARENA_PLAN_H
#define ENG_CORE_ARENA_PLAN_H

#include <stddef.h>

#include "schema/status.h"

struct eng_prepared;

schema_status eng_plan_arena(struct eng_prepared *p, char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* sighting: which large models the content cache has seen before, told by a cheap
 * signature instead of a full hash of their weights, so that a model prepared once is not
 * copied and hashed for nothing.
 *
 * Contract:
 * - srv_sighting_of() makes a model's signature from its graph (operand and operation
 *   counts; every operand's type, shape, quantization, lifetime and length; every
 *   operation's type and operand lists; inputs, outputs, relaxed, referenced subgraphs)
 *   and a sample of its constants: each constant's bytes when at most 48, else 16 bytes
 *   at its start, middle and end. Reading the sample costs a few pages per constant, not
 *   the model's size. Constants outside their pool (a model validation will refuse) are
 *   not sampled. Two models with one signature may still differ: a signature decides only
 *   whether to hash, never what a prepared model is (the full hash, cache.h, keys that).
 * - srv_sightings_seen() records a signature and tells whether it was recorded before.
 *   It remembers the last SRV_SIGHTINGS_MAX signatures or so (each one replaces the
 *   least recently seen of a few slots): a forgotten model counts as new once more.
 * - Loop thread only (no locks). */
#ifndef SRV_CACHE_SIGHTING_H
#define SRV_CACHE_SIGHTING_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

#define SRV_SIGHTING_LEN  16
#define SRV_SIGHTINGS_MAX 4096

typedef struct srv_sightings {
    struct srv_sighting {
        uint8_t sig[SRV_SIGHTING_LEN];
        uint64_t seen; /* the clock below at the last sighting; 0: an empty slot */
    } slots[SRV_SIGHTINGS_MAX];
    uint64_t clock;
} srv_sightings;

void srv_sighting_of(const eng_model_desc *m, uint8_t out[SRV_SIGHTING_LEN]);
bool srv_sightings_seen(srv_sightings *s, const uint8_t sig[SRV_SIGHTING_LEN]);

#endif

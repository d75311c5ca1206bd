/* SPDX-License-Identifier: Apache-2.0 */
/* serialize: a prepared model as two byte strings, the model cache (the plan: operands,
 * operations, input and output lists of the main graph and of every referenced subgraph,
 * flags, preference, driver build id) and the data cache (every constant value of every
 * graph). Loading re-runs eng_prepare() on the decoded description,
 * so the engine validates it exactly as it validates a model from the wire.
 *
 * Contract:
 * - store_ser_encode() reads a model description (already validated by the caller, but its
 *   constant locations are checked again here, since they point into client memory) and
 *   writes both caches into fresh buffers. Constants are packed into the data payload,
 *   each 64-byte aligned (8 for values under 64 bytes), and become CONSTANT_REFERENCE
 *   operands of pool 0; constants that nothing references are dropped.
 * - store_ser_decode() treats both caches as hostile: magic, version, every count, length
 *   and index is checked against the bytes actually present before anything is
 *   allocated from it, and every byte must be accounted for. It copies the plan into the
 *   decoded description; pool 0 is a view of the data payload, borrowed from `data`
 *   (release NULL: the caller attaches ownership before eng_prepare()).
 * - Little-endian, fixed-width fields. STORE_SER_VERSION changes with the layout; a cache of
 *   another version is refused (and then rebuilt by the client's fallback).
 */
#ifndef STORE_SERIALIZE_H
#define STORE_SERIALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "storage/hash.h"

#define STORE_SER_VERSION      3  /* 2: rank 16; 3: referenced subgraphs */
#define STORE_SER_BUILD_ID_MAX 64 /* bytes of driver build id kept in the model cache */
#define STORE_SER_DATA_HEADER  64 /* the data payload starts here, so it stays aligned */

typedef struct store_ser_model {
    eng_model_desc desc; /* pools = &pool; operand_values unused */
    eng_memory_view pool;
    uint32_t preference;
    char build_id[STORE_SER_BUILD_ID_MAX + 1];
    /* owned storage behind desc */
    eng_operand_desc *operands;
    eng_operation_desc *operations;
    uint32_t *lists; /* operation input/output lists, then model inputs and outputs */
    float *scales;
    uint8_t *extension;
    eng_subgraph_desc *referenced;
} store_ser_model;

schema_status store_ser_encode(const eng_model_desc *m, uint32_t preference, const char *build_id,
                               store_buf *model, store_buf *data, char *err, size_t errlen);
/* The bytes store_ser_encode() would write (model + data), without copying anything; 0 when
 * a constant lies outside its memory. */
uint64_t store_ser_size(const eng_model_desc *m);

/* On success *out must be cleared with store_ser_model_clear(). Returns SCHEMA_OK or
 * SCHEMA_GENERAL_FAILURE (err says which field was bad). */
schema_status store_ser_decode(const uint8_t *model, size_t model_len, const uint8_t *data,
                               size_t data_len, store_ser_model *out, char *err, size_t errlen);
void store_ser_model_clear(store_ser_model *m);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* arena: a protobuf-c allocator that hands out memory from one reusable block.
 *
 * Contract:
 * - Unpacking a request with protobuf-c makes a dozen or more small allocations, and
 *   freeing it walks every field again. Through an arena, allocation is a pointer bump
 *   and proto_arena_reset() frees everything at once, without a walk: the request path
 *   does no malloc in steady state.
 * - Requests that do not fit the block get their memory from malloc, released at the
 *   next reset; the block itself is allocated once, at init.
 * - pb.free is a no-op: memory lives until proto_arena_reset(). One user at a time, and
 *   nothing unpacked into an arena may be kept past the reset.
 */
#ifndef PROTO_ARENA_H
#define PROTO_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

typedef struct proto_arena_spill proto_arena_spill;

typedef struct proto_arena {
    ProtobufCAllocator pb; /* pass &arena->pb to protobuf-c */
    uint8_t *block;
    size_t cap, used;
    proto_arena_spill *spills; /* malloc'd chunks beyond the block */
} proto_arena;

/* Returns 0, or -1 when the block cannot be allocated. */
int proto_arena_init(proto_arena *a, size_t cap);
void proto_arena_reset(proto_arena *a);
void proto_arena_free(proto_arena *a);

#endif

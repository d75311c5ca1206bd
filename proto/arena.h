/* arena: a protobuf-c allocator that hands out memory from one reusable block.
 *
 * Contract:
 * - Unpacking a request with protobuf-c makes a dozen or more small allocations, and
 *   freeing it walks every field again. Through an arena, allocation is a pointer bump
 *   and nnd_arena_reset() frees everything at once, without a walk: the request path
 *   does no malloc in steady state.
 * - Requests that do not fit the block get their memory from malloc, released at the
 *   next reset; the block itself is allocated once, at init.
 * - pb.free is a no-op: memory lives until nnd_arena_reset(). One user at a time, and
 *   nothing unpacked into an arena may be kept past the reset.
 */
#ifndef NND_ARENA_H
#define NND_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

typedef struct nnd_arena_spill nnd_arena_spill;

typedef struct nnd_arena {
    ProtobufCAllocator pb; /* pass &arena->pb to protobuf-c */
    uint8_t *block;
    size_t cap, used;
    nnd_arena_spill *spills; /* malloc'd chunks beyond the block */
} nnd_arena;

/* Returns 0, or -1 when the block cannot be allocated. */
int nnd_arena_init(nnd_arena *a, size_t cap);
void nnd_arena_reset(nnd_arena *a);
void nnd_arena_free(nnd_arena *a);

#endif

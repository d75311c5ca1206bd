/* pool: client memory pools mapped into the daemon, once per request or prepared model.
 *
 * Contract:
 * - nnd_pools_map() maps every MemoryPool of a message from the fds that came with it
 *   (taking them from the frame), all or nothing. Tensor bytes are never copied: the
 *   engine reads and writes the client's pages in place.
 * - Kinds: POOL_MEMFD and POOL_MMAP_FD map fd[fd_index] at offset (any alignment) for
 *   size bytes; the fd must be at least offset + size long. Each fd index serves one pool.
 * - Execution pools map read-write and shared; an fd opened read-only, or sealed against
 *   writes, maps read-only and is marked !writable (outputs must not point into it).
 *   Model pools (readonly = true) always map read-only.
 * - The fd is closed as soon as it is mapped; view.release unmaps. Errors name the pool
 *   index and what was wrong.
 * - With a cache (one per connection), a pool whose file, page-aligned range and access
 *   match a recent one reuses that mapping instead of mapping afresh: clients send the
 *   same memfd request after request, and a new mapping each time costs page faults and
 *   TLB shootdowns that dwarf the socket round trip. The cache holds at most
 *   NND_POOL_CACHE_SLOTS mappings (least recently used evicted); a cached mapping keeps
 *   its file alive until eviction or nnd_pool_cache_free().
 * - A client may shrink its file after we map it; touching the lost pages would raise
 *   SIGBUS. nnd_pool_guard_install() installs a handler that replaces such pages (in our
 *   mappings only) with zero pages and counts the fault, so the work in progress can fail
 *   with GENERAL_FAILURE instead of the daemon dying. Compare nnd_pool_faults() before
 *   and after touching pool memory.
 */
#ifndef NND_POOL_H
#define NND_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "frame.h"

typedef struct nnd_pool {
    nnd_memory_view view; /* base and size of the pool itself; release() unmaps */
    bool writable;
} nnd_pool;

#define NND_POOL_CACHE_SLOTS 16
typedef struct nnd_pool_cache nnd_pool_cache;
nnd_pool_cache *nnd_pool_cache_create(void);
/* Drops every cached mapping; those still in use are unmapped when released. */
void nnd_pool_cache_free(nnd_pool_cache *cache);

/* cache may be NULL (always map afresh). */
nnd_status nnd_pool_map(const Nnd__MemoryPool *mp, uint32_t index, nnd_frame_in *in, bool readonly,
                        nnd_pool_cache *cache, nnd_pool *out, char *err, size_t errlen);
/* Maps n pools into out[0..n); on failure nothing stays mapped. */
nnd_status nnd_pools_map(Nnd__MemoryPool *const *mps, size_t n, nnd_frame_in *in, bool readonly,
                         nnd_pool_cache *cache, nnd_pool *out, char *err, size_t errlen);
void nnd_pool_release(nnd_pool *p);
void nnd_pools_release(nnd_pool *p, size_t n);

/* Installs the SIGBUS guard (once, at startup). Returns 0 or -errno. */
int nnd_pool_guard_install(void);
/* SIGBUS faults absorbed on the calling thread so far. */
uint64_t nnd_pool_faults(void);

#endif

/* memreg: memories registered with a connection, mapped once and named by a token.
 *
 * Contract:
 * - nnd_memreg_register() maps a memfd or mmap_fd pool of a RegisterMemory (its fd taken
 *   from the frame, pool.h's checks: size, range, access, seals) as a mapping of its own,
 *   outside the connection's LRU cache, and stores it in the session's handle table as an
 *   NND_OBJ_MEMORY object: the token is the object's handle (random, unguessable, never 0,
 *   looked up only in its own session). Other kinds are INVALID_ARGUMENT (a dma-buf
 *   brackets each use with CPU access syncs; a driver buffer has its own token).
 * - Counting: the mapping counts against quota.app.mappings and the daemon's mapping
 *   budget (pool.h, the app's account); the registration counts one of quota.app.descriptors
 *   (it keeps the file open as an fd would) and one object of the handle table, checked
 *   before anything is mapped. RESOURCE_EXHAUSTED_TRANSIENT past any of them.
 * - nnd_memreg_resolve() turns a POOL_REGISTERED pool into a view of the registered
 *   mapping (nnd_pool_share: the caller releases it). offset and size select a part
 *   (size 0: from offset to the end). Refusals name the pool and the token: unknown to this
 *   connection (never registered here, unregistered, or another connection's) is
 *   INVALID_ARGUMENT; a memory that shrank under an earlier execution is GENERAL_FAILURE
 *   until it is registered again.
 * - nnd_memreg_unregister() drops the registration at once; an execution that holds a view
 *   keeps the mapping until it ends. The session's clear (disconnect) drops every
 *   registration the same way, giving back what it counted.
 * - Loop thread only.
 */
#ifndef NND_MEMREG_H
#define NND_MEMREG_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "pool.h"
#include "session.h"

nnd_status nnd_memreg_register(nnd_session *s, const Nnd__MemoryPool *mp, nnd_frame_in *in,
                               uint64_t *token, char *err, size_t errlen);
nnd_status nnd_memreg_unregister(nnd_session *s, uint64_t token, char *err, size_t errlen);
/* Daemon-wide: memories registered now, registrations since startup, pools resolved by
 * token since startup (admin status registered_memory.*). */
typedef struct nnd_memreg_stats {
    uint64_t live, registrations, uses;
} nnd_memreg_stats;
void nnd_memreg_stats_get(nnd_memreg_stats *out);

nnd_status nnd_memreg_resolve(nnd_session *s, const Nnd__MemoryPool *mp, uint32_t index,
                              nnd_pool *out, char *err, size_t errlen);

#endif

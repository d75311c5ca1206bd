/* SPDX-License-Identifier: Apache-2.0 */
/* memreg: memories registered with a connection, mapped once and named by a token.
 *
 * Contract:
 * - srv_memreg_register() maps a memfd or mmap_fd pool of a RegisterMemory (its fd taken
 *   from the frame, pool.h's checks: size, range, access, seals) as a mapping of its own,
 *   outside the connection's LRU cache, and stores it in the session's handle table as an
 *   SRV_OBJ_MEMORY object: the token is the object's handle (random, unguessable, never 0,
 *   looked up only in its own session). Other kinds are INVALID_ARGUMENT (a dma-buf
 *   brackets each use with CPU access syncs; a driver buffer has its own token).
 * - Counting: the mapping counts against quota.app.mappings and the daemon's mapping
 *   budget (pool.h, the app's account); the registration counts one of quota.app.descriptors
 *   (it keeps the file open as an fd would) and one object of the handle table, checked
 *   before anything is mapped. RESOURCE_EXHAUSTED_TRANSIENT past any of them.
 * - srv_memreg_resolve() turns a POOL_REGISTERED pool into a view of the registered
 *   mapping (srv_pool_share: the caller releases it). offset and size select a part
 *   (size 0: from offset to the end). Refusals name the pool and the token: unknown to this
 *   connection (never registered here, unregistered, or another connection's) is
 *   INVALID_ARGUMENT; a memory that shrank under an earlier execution is GENERAL_FAILURE
 *   until it is registered again.
 * - srv_memreg_unregister() drops the registration at once; an execution that holds a view
 *   keeps the mapping until it ends. The session's clear (disconnect) drops every
 *   registration the same way, giving back what it counted.
 * - Loop thread only.
 */
#ifndef SRV_BINDING_MEMREG_H
#define SRV_BINDING_MEMREG_H

#include <stddef.h>
#include <stdint.h>

#include "proto/frame.h"
#include "daemon/clients/pool.h"
#include "daemon/clients/session.h"

schema_status srv_memreg_register(srv_session *s, const Nnd__MemoryPool *mp, proto_frame_in *in,
                                  uint64_t *token, char *err, size_t errlen);
schema_status srv_memreg_unregister(srv_session *s, uint64_t token, char *err, size_t errlen);
/* Daemon-wide: memories registered now, registrations since startup, pools resolved by
 * token since startup (admin status registered_memory.*). */
typedef struct srv_memreg_stats {
    uint64_t live, registrations, uses;
} srv_memreg_stats;
void srv_memreg_stats_get(srv_memreg_stats *out);

schema_status srv_memreg_resolve(srv_session *s, const Nnd__MemoryPool *mp, uint32_t index,
                                 srv_pool *out, char *err, size_t errlen);

#endif

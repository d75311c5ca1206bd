/* SPDX-License-Identifier: Apache-2.0 */
/* burst: ConfigureBurst's objects and the memory slots they cache for BurstExecute.
 *
 * Contract:
 * - A burst is a session object (SRV_OBJ_BURST) tied by handle to one prepared model of
 *   the same session. It does not keep the model alive: once the model is released, the
 *   burst's executions are refused (dispatch.c).
 * - Slots are client-numbered (non-zero) mappings of client memory kept across
 *   executions, so that later executions name them (POOL_BURST_SLOT) instead of passing
 *   fds that the daemon maps again. srv_burst_map_pools() resolves a BurstExecute's pools
 *   into out[] (views the caller releases; slots keep their own):
 *     POOL_BURST_SLOT, slot N    the mapping cached as N. N not cached (or 0):
 *                                INVALID_ARGUMENT.
 *                                Its memory shrank under an earlier execution (the
 *                                mapping is damaged, pool.h): GENERAL_FAILURE until N is
 *                                forgotten or its memory sent again.
 *     memfd or mmap_fd, slot N   mapped once (pool.h, outside the connection's LRU cache)
 *                                and cached as N. If N is cached already, the same file
 *                                range (device, inode, offset, size) reuses that mapping
 *                                and another memory is refused (INVALID_ARGUMENT: forget
 *                                N first), unless N is damaged: the new memory replaces it.
 *     POOL_REGISTERED            the connection's registered memory (memreg.h); no slot.
 *     any pool with slot 0       mapped as Execute maps it, for this execution only.
 *     other kinds with slot N    INVALID_ARGUMENT (a dma-buf brackets each use with CPU
 *                                access syncs; a driver buffer is named by its token).
 *   A burst caches at most SRV_BURST_MAX_SLOTS slots and a connection at most
 *   SRV_SESSION_MAX_BURST_SLOTS over all its bursts: RESOURCE_EXHAUSTED_TRANSIENT beyond.
 * - All or nothing: the slots a request cached stay when srv_burst_commit() follows, and
 *   srv_burst_rollback() drops them (the request was refused before it ran). On failure
 *   srv_burst_map_pools() itself rolls back and holds no view.
 * - srv_burst_forget() drops the named slots and ignores unknown ones, so that a client
 *   may forget slots it is not sure were cached. srv_burst_free() (the session's free
 *   function) drops every slot. A dropped slot's mapping lives on while an execution
 *   using it runs, then is unmapped.
 * - A burst may own one attachment (its shared-memory channel, burst_channel.h), which it
 *   closes through the function given with it when it is freed: the burst calls down into
 *   nothing that is built on it.
 * - Loop thread only.
 */
#ifndef SRV_BINDING_BURST_H
#define SRV_BINDING_BURST_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "proto/frame.h"
#include "daemon/clients/pool.h"
#include "daemon/clients/session.h"

#define SRV_BURST_MAX_SLOTS         64
#define SRV_SESSION_MAX_BURST_SLOTS 1024

typedef struct srv_burst_obj srv_burst_obj;

/* A burst of session s for the prepared model named `model`; NULL when out of memory. */
srv_burst_obj *srv_burst_new(srv_session *s, uint64_t model);
void srv_burst_free(void *burst);
/* The burst owns attachment from now on: close(attachment) when the burst is freed. */
void srv_burst_attach(srv_burst_obj *b, void *attachment, void (*close)(void *attachment));
/* The handle of the prepared model the burst runs. */
uint64_t srv_burst_model(const srv_burst_obj *b);

schema_status srv_burst_map_pools(srv_burst_obj *b, const Nnd__ExecutionRequest *r,
                                  proto_frame_in *in, srv_pool *out, char *err, size_t errlen);
void srv_burst_commit(srv_burst_obj *b);
void srv_burst_rollback(srv_burst_obj *b);
/* Returns how many of the n slots were cached (and are dropped now). */
size_t srv_burst_forget(srv_burst_obj *b, const uint64_t *slots, size_t n);

/* Daemon-wide: bursts and slots live now, slots mapped and slot uses resolved from the
 * cache since startup. */
typedef struct srv_burst_stats {
    uint64_t bursts, slots, slot_maps, slot_hits;
} srv_burst_stats;
void srv_burst_stats_get(srv_burst_stats *out);

#endif

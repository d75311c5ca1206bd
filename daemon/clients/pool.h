/* SPDX-License-Identifier: Apache-2.0 */
/* pool: client memory pools mapped into the daemon, once per request or prepared model.
 *
 * Contract:
 * - srv_pools_map() maps every MemoryPool of a message from the fds that came with it
 *   (taking them from the frame), all or nothing. Tensor bytes are never copied: the
 *   engine reads and writes the client's pages in place.
 * - Kinds: POOL_MEMFD and POOL_MMAP_FD map fd[fd_index] (a memfd or regular file, e.g. a
 *   weights file opened read-only) at offset (any alignment) for size bytes; POOL_DMABUF
 *   the same for a dma-buf, only where /dev/dma_heap/system exists (probed once, at
 *   srv_pool_guard_install(); srv_pool_dmabuf_supported() tells), with its CPU access
 *   bracketed by DMA_BUF_IOCTL_SYNC from map to release and never cached. Each fd index
 *   serves one pool. POOL_DRIVER_BUFFER gives an empty, writable view marked
 *   driver_buffer (buffer.h binds the arguments naming it); model pools refuse it.
 * - Checked at every use: the fd's size (fstat, or a dma-buf's lseek) against offset +
 *   size, and its access mode. Execution pools map read-write and shared; an fd opened
 *   read-only, or a memfd sealed with F_SEAL_WRITE or F_SEAL_FUTURE_WRITE, maps read-only
 *   and is marked !writable (outputs must not point into it). Model pools (readonly =
 *   true) always map read-only.
 * - Statuses: a malformed pool (kind, size, range, fd index, not a dma-buf) is
 *   INVALID_ARGUMENT; an fd the daemon cannot map (a pipe, a socket, mmap refusing) is
 *   GENERAL_FAILURE, as the HAL asks. Errors name the pool index and what was wrong.
 * - The fd is closed as soon as it is mapped (a dma-buf's when unmapped); view.release
 *   unmaps.
 * - With a cache (one per connection), a pool whose file, page-aligned range and access
 *   match a recent one reuses that mapping instead of mapping afresh: clients send the
 *   same memfd request after request, and a new mapping each time costs page faults and
 *   TLB shootdowns that dwarf the socket round trip. The cache holds at most
 *   SRV_POOL_CACHE_SLOTS mappings (least recently used evicted); a cached mapping keeps
 *   its file alive until eviction or srv_pool_cache_free(). Seals are read when a
 *   mapping is made: a cached writable mapping outlives a later F_SEAL_FUTURE_WRITE, as
 *   the kernel lets every mapping made before that seal do.
 * - A client may shrink its file after we map it; touching the lost pages would raise
 *   SIGBUS. srv_pool_guard_install() installs a handler that replaces such pages (in our
 *   mappings only) with zero pages and counts the fault, so the work in progress can fail
 *   with GENERAL_FAILURE instead of the daemon dying. Compare srv_pool_faults() before
 *   and after touching pool memory. Such a mapping is damaged for good (its zero pages
 *   are not the file's): srv_pool_damaged() tells, and the cache maps afresh instead; a
 *   view's `lost` tells the engine, which refuses every later execution of a prepared
 *   model whose constants it held.
 * - POOL_BURST_SLOT and POOL_REGISTERED are INVALID_ARGUMENT here: only burst.h resolves
 *   slots, and memreg.h registered memories (in executions only).
 * - srv_pool_share() hands out another view of the same mapping (released on its own),
 *   for holders that outlive one request: a burst slot and the executions using it.
 * - Budgets: every mapping made counts against the daemon-wide budget (set by
 *   srv_pool_guard_install(): half of vm.max_map_count, read then, and at most the guard
 *   table's 65536; the other half is for the daemon's own heap, stacks and libraries)
 *   and against the account current on the loop thread (srv_pool_set_account(): the app
 *   whose request is being handled). Past either, an idle mapping of the connection's
 *   cache is given up first; if there is none the pool is refused with
 *   RESOURCE_EXHAUSTED_TRANSIENT and a message naming the limit (the account's refusal
 *   callback words and counts it). A mapping keeps its account alive until it is unmapped.
 * - A page lost to the file shrinking is replaced together with the whole mapping by zero
 *   pages, so a damaged mapping stays one mapping in the kernel's count instead of being
 *   split at every lost page.
 */
#ifndef SRV_CLIENTS_POOL_H
#define SRV_CLIENTS_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "proto/frame.h"

typedef struct srv_pool {
    eng_memory_view view; /* base and size of the pool itself; release() unmaps */
    bool writable;
    bool driver_buffer; /* POOL_DRIVER_BUFFER: no bytes here, see buffer.h */
    uint64_t dev, ino;  /* the file mapped (st_dev, st_ino); 0 for a driver buffer */
} srv_pool;

#define SRV_POOL_CACHE_SLOTS 16
typedef struct srv_pool_cache srv_pool_cache;
srv_pool_cache *srv_pool_cache_create(void);
/* Drops every cached mapping; those still in use are unmapped when released. */
void srv_pool_cache_free(srv_pool_cache *cache);

/* cache may be NULL (always map afresh). */
schema_status srv_pool_map(const Nnd__MemoryPool *mp, uint32_t index, proto_frame_in *in,
                           bool readonly, srv_pool_cache *cache, srv_pool *out, char *err,
                           size_t errlen);
/* Maps n pools into out[0..n); on failure nothing stays mapped. */
schema_status srv_pools_map(Nnd__MemoryPool *const *mps, size_t n, proto_frame_in *in,
                            bool readonly, srv_pool_cache *cache, srv_pool *out, char *err,
                            size_t errlen);
void srv_pool_release(srv_pool *p);
/* *out: another view of p's mapping, which lives until every view is released. */
void srv_pool_share(const srv_pool *p, srv_pool *out);
/* Whether a page of p's mapping was lost to the file shrinking (see the guard below). */
bool srv_pool_damaged(const srv_pool *p);
void srv_pools_release(srv_pool *p, size_t n);

/* ---- mapping budgets ---- */
typedef struct srv_map_account srv_map_account;
/* Fills err with the refusal of one more mapping for owner, counts it, returns the status. */
typedef schema_status (*srv_map_refuse_fn)(void *owner, uint64_t limit, uint64_t held, char *err,
                                           size_t errlen);
/* An account of at most limit mappings (0: unlimited); NULL when out of memory. */
srv_map_account *srv_map_account_new(uint64_t limit, srv_map_refuse_fn refuse, void *owner);
/* The owner is gone: no more refusals through it; the account lives while mappings do. */
void srv_map_account_detach(srv_map_account *a);
uint64_t srv_map_account_mapped(const srv_map_account *a);
/* A new limit (a reload), seen by the next mapping counted. */
void srv_map_account_set_limit(srv_map_account *a, uint64_t limit);
/* Who pays for the mappings the calling thread makes from now on (NULL: nobody). */
void srv_pool_set_account(srv_map_account *a);
/* Mappings made by this module now, and the daemon-wide budget. */
uint64_t srv_pool_mapped(void);
uint64_t srv_pool_map_budget(void);

/* Whether POOL_DMABUF pools are usable here (a system dma-buf heap exists). */
bool srv_pool_dmabuf_supported(void);

/* Installs the SIGBUS guard and probes dma-buf support (once, at startup). Returns 0 or
 * -errno. */
int srv_pool_guard_install(void);
/* SIGBUS faults absorbed on the calling thread so far. */
uint64_t srv_pool_faults(void);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_request: an execution's arguments (ndk_arg) and the wire ExecutionRequest built from
 * them.
 *
 * Contract: ndk_request_build() lays out the request for n_in inputs and n_out outputs:
 * pool 0 is the staging memfd st (whole) when st->fd >= 0, and each memory argument's
 * memory is one further pool, once however many arguments use it. A memory registered
 * with s's connection (ndk_memory_token; the staging memfd by st->token) is a
 * POOL_REGISTERED pool without fd. A pointer argument
 * points into the staging memfd at its stage_off; an omitted one has no value. fds and
 * keys list the pools' fds (daemon buffers have none) with the memory key behind each,
 * for bursts. The request borrows the arguments' dimensions and the fds; it is valid
 * while they are, and ndk_request_free() frees what it allocated (also after a failed
 * build). Returns NO_ERROR or OUT_OF_MEMORY. */
#ifndef CLI_NDK_REQUEST_H
#define CLI_NDK_REQUEST_H

#include "client/ndk_shared.h"

/* How an argument was given: not yet, as a pointer, as a memory, or omitted. */
enum { ARG_UNSPECIFIED, ARG_POINTER, ARG_MEMORY, ARG_NO_VALUE };

/* One input or output of an execution, as its setters left it. */
typedef struct ndk_arg {
    int state;
    void *ptr; /* ARG_POINTER */
    size_t length;
    ANeuralNetworksMemory *mem; /* ARG_MEMORY, one reference */
    size_t offset;
    bool has_dims; /* the caller gave a type with dimensions */
    uint32_t rank; /* as far as known: the caller's type, else the model's */
    uint32_t *dims;
    size_t stage_off;  /* where a pointer argument sits in the staging memfd */
    uint32_t out_rank; /* outputs after the computation */
    uint32_t *out_dims;
    bool sufficient;
} ndk_arg;

/* One request under construction: its pools (staging first, then each memory once). */
typedef struct ndk_request {
    Nnd__ExecutionRequest req;
    Nnd__RequestArgument *args;
    Nnd__RequestArgument **in_p, **out_p;
    Nnd__DataLocation *locs;
    Nnd__MemoryPool *pools;
    Nnd__MemoryPool **pool_p;
    int *fds;       /* the pools' fds, in fd_index order (daemon buffers have none) */
    uint64_t *keys; /* the memory behind each fd, for bursts */
    size_t n_fds;
    const ANeuralNetworksMemory **mems; /* the memory behind each pool (NULL: staging) */
    size_t n_pools;
} ndk_request;

NDK_HIDDEN int ndk_request_build(const ndk_arg *in, uint32_t n_in, const ndk_arg *out,
                                 uint32_t n_out, const ndk_staging *st, ndk_session *s,
                                 ndk_request *r);
NDK_HIDDEN void ndk_request_free(ndk_request *r);

#endif

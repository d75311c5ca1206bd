/* SPDX-License-Identifier: Apache-2.0 */
/* srv_buffer.c: libnnd's memory-domain calls: Allocate, BufferCopyTo, BufferCopyFrom.
 * See include/nnd/nnd_wire.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "engine/engine.h"
#include "nnd/nnd_wire.h"

_Static_assert(NND_BUFFER_MAX_RANK == ENG_MAX_RANK, "a buffer takes any rank the engine takes");

int nnd_client_allocate(nnd_client *c, const uint32_t *dims, size_t rank,
                        const uint64_t *prepared_models, size_t n_models,
                        const nnd_buffer_role *input_roles, size_t n_input_roles,
                        const nnd_buffer_role *output_roles, size_t n_output_roles,
                        uint64_t *buffer, uint64_t *token, char *err, size_t errlen) {
    *buffer = *token = 0;
    size_t n = n_input_roles + n_output_roles;
    Nnd__BufferRole *roles = calloc(n + 1, sizeof *roles);
    Nnd__BufferRole **ptrs = calloc(n + 1, sizeof *ptrs);
    if (!roles || !ptrs) {
        free(roles);
        free(ptrs);
        cli_set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const nnd_buffer_role *r =
            i < n_input_roles ? &input_roles[i] : &output_roles[i - n_input_roles];
        nnd__buffer_role__init(&roles[i]);
        roles[i].model_index = r->model_index;
        roles[i].io_index = r->io_index;
        roles[i].probability = r->probability;
        ptrs[i] = &roles[i];
    }
    Nnd__BufferDesc desc = NND__BUFFER_DESC__INIT;
    desc.n_dimensions = rank;
    desc.dimensions = (uint32_t *)dims; /* packing only reads */
    Nnd__Allocate a = NND__ALLOCATE__INIT;
    a.desc = &desc;
    a.n_prepared_models = n_models;
    a.prepared_models = (uint64_t *)prepared_models;
    a.n_input_roles = n_input_roles;
    a.input_roles = ptrs;
    a.n_output_roles = n_output_roles;
    a.output_roles = ptrs + n_input_roles;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_ALLOCATE;
    req.allocate = &a;
    Nnd__Reply *r;
    int st = cli_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_ALLOCATED, &r, err, errlen);
    free(roles);
    free(ptrs);
    if (st != 0) return st;
    *buffer = r->allocated->buffer;
    *token = r->allocated->token;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

static void memory_pool(Nnd__MemoryPool *mp, int kind, uint64_t offset, uint64_t size) {
    nnd__memory_pool__init(mp);
    mp->kind = (Nnd__PoolKind)kind;
    mp->fd_index = 0;
    mp->offset = offset;
    mp->size = size;
}

int nnd_client_buffer_copy_to(nnd_client *c, uint64_t buffer, int kind, int fd, uint64_t offset,
                              uint64_t size, const uint32_t *dims, size_t rank, char *err,
                              size_t errlen) {
    Nnd__MemoryPool src;
    memory_pool(&src, kind, offset, size);
    Nnd__BufferCopyTo x = NND__BUFFER_COPY_TO__INIT;
    x.buffer = buffer;
    x.src = &src;
    x.n_dimensions = rank;
    x.dimensions = (uint32_t *)dims;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_BUFFER_COPY_TO;
    req.buffer_copy_to = &x;
    Nnd__Reply *r;
    int st = cli_simple_call(c, &req, &fd, 1, NND__REPLY__RESULT_DONE, &r, err, errlen);
    if (st == 0) nnd__reply__free_unpacked(r, NULL);
    return st;
}

int nnd_client_buffer_copy_from(nnd_client *c, uint64_t buffer, int kind, int fd, uint64_t offset,
                                uint64_t size, uint32_t *dims_out, size_t dims_cap,
                                size_t *rank_out, char *err, size_t errlen) {
    if (rank_out) *rank_out = 0;
    Nnd__MemoryPool dst;
    memory_pool(&dst, kind, offset, size);
    Nnd__BufferCopyFrom x = NND__BUFFER_COPY_FROM__INIT;
    x.buffer = buffer;
    x.dst = &dst;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_BUFFER_COPY_FROM;
    req.buffer_copy_from = &x;
    Nnd__Reply *r;
    int st = cli_simple_call(c, &req, &fd, 1, NND__REPLY__RESULT_BUFFER_COPIED, &r, err, errlen);
    if (st != 0) return st;
    size_t rank = r->buffer_copied->n_dimensions;
    if (dims_out && rank > dims_cap) { /* the bytes were copied; only the shape cannot go */
        cli_set_err(err, errlen,
                    "buffer %llu holds a tensor of rank %zu, more than the %zu dimensions the "
                    "caller can take",
                    (unsigned long long)buffer, rank, dims_cap);
        nnd__reply__free_unpacked(r, NULL);
        return -EBADMSG;
    }
    if (dims_out && rank) memcpy(dims_out, r->buffer_copied->dimensions, rank * sizeof *dims_out);
    if (rank_out) *rank_out = rank;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_request.c: the wire request of an execution, built from its arguments. See
 * ndk_request.h. */
#include "client/ndk_request.h"

#include <stdlib.h>
#include <string.h>

#include "client/ndk_memory.h"

void ndk_request_free(ndk_request *r) {
    free(r->args); /* the block every array is carved from (ndk_request_build) */
}

static size_t round16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

static uint32_t pool_of(ndk_request *r, const ANeuralNetworksMemory *m, ndk_session *s) {
    for (size_t i = 0; i < r->n_pools; i++)
        if (r->mems[i] == m) return (uint32_t)i;
    Nnd__MemoryPool *p = &r->pools[r->n_pools];
    nnd__memory_pool__init(p);
    uint64_t token = m->driver ? 0 : ndk_memory_token(m, s);
    if (m->driver) {
        p->kind = NND__POOL_KIND__POOL_DRIVER_BUFFER;
        p->token = m->token;
    } else if (token) {
        p->kind = NND__POOL_KIND__POOL_REGISTERED; /* the whole memory, no fd */
        p->token = token;
    } else {
        p->kind = m->memfd ? NND__POOL_KIND__POOL_MEMFD : NND__POOL_KIND__POOL_MMAP_FD;
        p->fd_index = (uint32_t)r->n_fds;
        p->offset = m->offset;
        p->size = m->size;
        r->keys[r->n_fds] = m->key;
        r->fds[r->n_fds++] = m->fd;
    }
    r->pool_p[r->n_pools] = p;
    r->mems[r->n_pools] = m;
    return (uint32_t)r->n_pools++;
}

int ndk_request_build(const ndk_arg *in, uint32_t n_in, const ndk_arg *out, uint32_t n_out,
                      const ndk_staging *st, ndk_session *s, ndk_request *r) {
    size_t n = (size_t)n_in + n_out;
    memset(r, 0, sizeof *r);
    /* Every array in one zeroed block: one allocation per execution, not nine. */
    size_t at_in = round16((n + 1) * sizeof *r->args);
    size_t at_out = at_in + round16((n_in + 1) * sizeof *r->in_p);
    size_t at_locs = at_out + round16((n_out + 1) * sizeof *r->out_p);
    size_t at_pools = at_locs + round16((n + 1) * sizeof *r->locs);
    size_t at_pool_p = at_pools + round16((n + 2) * sizeof *r->pools);
    size_t at_fds = at_pool_p + round16((n + 2) * sizeof *r->pool_p);
    size_t at_keys = at_fds + round16((n + 2) * sizeof *r->fds);
    size_t at_mems = at_keys + round16((n + 2) * sizeof *r->keys);
    char *b = calloc(1, at_mems + (n + 2) * sizeof *r->mems);
    if (!b) return ANEURALNETWORKS_OUT_OF_MEMORY;
    r->args = (Nnd__RequestArgument *)b;
    r->in_p = (Nnd__RequestArgument **)(b + at_in);
    r->out_p = (Nnd__RequestArgument **)(b + at_out);
    r->locs = (Nnd__DataLocation *)(b + at_locs);
    r->pools = (Nnd__MemoryPool *)(b + at_pools);
    r->pool_p = (Nnd__MemoryPool **)(b + at_pool_p);
    r->fds = (int *)(b + at_fds);
    r->keys = (uint64_t *)(b + at_keys);
    r->mems = (const ANeuralNetworksMemory **)(b + at_mems);
    if (st->fd >= 0) { /* pool 0: the staging memfd, whole, so the daemon's mapping cache hits */
        nnd__memory_pool__init(&r->pools[0]);
        r->pool_p[0] = &r->pools[0];
        r->n_pools = 1;
        if (st->token) {
            r->pools[0].kind = NND__POOL_KIND__POOL_REGISTERED;
            r->pools[0].token = st->token;
        } else {
            r->pools[0].kind = NND__POOL_KIND__POOL_MEMFD;
            r->pools[0].size = st->size;
            r->fds[0] = st->fd;
            r->keys[0] = st->key;
            r->n_fds = 1;
        }
    }
    nnd__execution_request__init(&r->req);
    for (size_t k = 0; k < n; k++) {
        bool output = k >= n_in;
        const ndk_arg *a = output ? &out[k - n_in] : &in[k];
        Nnd__RequestArgument *x = &r->args[k];
        nnd__request_argument__init(x);
        (output ? r->out_p : r->in_p)[output ? k - n_in : k] = x;
        if (a->state == ARG_NO_VALUE) {
            x->has_no_value = true;
            continue;
        }
        Nnd__DataLocation *l = x->location = &r->locs[k];
        nnd__data_location__init(l);
        l->length = a->length;
        if (a->state == ARG_POINTER) {
            l->offset = a->stage_off;
        } else {
            l->pool_index = pool_of(r, a->mem, s);
            l->offset = a->offset;
        }
        if (a->has_dims) {
            x->n_dimensions = a->rank;
            x->dimensions = a->dims;
        } else if (!output && a->state == ARG_MEMORY && a->mem->from_desc && a->mem->rank) {
            /* An input from a descriptor memory has the shape last written into it. */
            x->n_dimensions = a->mem->rank;
            x->dimensions = a->mem->dims;
        }
    }
    r->req.n_inputs = n_in;
    r->req.inputs = r->in_p;
    r->req.n_outputs = n_out;
    r->req.outputs = r->out_p;
    r->req.n_pools = r->n_pools;
    r->req.pools = r->pool_p;
    return ANEURALNETWORKS_NO_ERROR;
}

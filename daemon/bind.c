/* bind.c: a request's pools, arguments and driver buffers bound in one step. See bind.h. */
#include "bind.h"

#include <stdio.h>

#include "burst.h"
#include "convert.h"
#include "memreg.h"

/* The pools of an execution without a burst: registered memories by token (no fd, no
 * system call), others mapped through the session's cache. All or nothing. */
static nnd_status map_pools(nnd_session *s, nnd_frame_in *in, const Nnd__ExecutionRequest *r,
                            nnd_pool *out, char *err, size_t errlen) {
    for (size_t i = 0; i < r->n_pools; i++) {
        const Nnd__MemoryPool *mp = r->pools[i];
        nnd_status st;
        if (!mp) {
            st = nnd_failf(err, errlen, NND_INVALID_ARGUMENT, "pool %zu is empty", i);
        } else if (mp->kind == NND__POOL_KIND__POOL_REGISTERED) {
            st = nnd_memreg_resolve(s, mp, (uint32_t)i, &out[i], err, errlen);
        } else {
            if (!s->pool_cache) s->pool_cache = nnd_pool_cache_create();
            st = nnd_pool_map(mp, (uint32_t)i, in, false, s->pool_cache, &out[i], err, errlen);
        }
        if (st != NND_OK) {
            nnd_pools_release(out, i);
            return st;
        }
    }
    return NND_OK;
}

/* Outputs must land in memory mapped writable. */
static nnd_status check_outputs_writable(const Nnd__ExecutionRequest *r, const nnd_pool *pools,
                                         char *err, size_t errlen) {
    for (size_t i = 0; i < r->n_outputs; i++) {
        const Nnd__RequestArgument *a = r->outputs[i];
        if (a->has_no_value || !a->location || a->location->pool_index >= r->n_pools) continue;
        if (!pools[a->location->pool_index].writable) {
            snprintf(err, errlen, "output %zu points into pool %u, which is read-only", i,
                     a->location->pool_index);
            return NND_INVALID_ARGUMENT;
        }
    }
    return NND_OK;
}

nnd_status nnd_bind(nnd_binding *bd, nnd_session *s, nnd_frame_in *in, nnd_burst_obj *b,
                    uint64_t model_handle, const nnd_prepared *p, const Nnd__ExecutionRequest *r,
                    char *err, size_t errlen) {
    nnd_status st;
    bd->n_pools = 0;
    bd->buffers = NULL;
    if (b) {
        st = nnd_burst_map_pools(b, r, in, bd->pools, err, errlen);
    } else {
        st = map_pools(s, in, r, bd->pools, err, errlen);
    }
    if (st == NND_OK) bd->n_pools = r->n_pools;
    bool buffers = false; /* most requests name none: buffer.h is not asked */
    for (size_t i = 0; i < bd->n_pools; i++) {
        bd->views[i] = bd->pools[i].view;
        buffers |= bd->pools[i].driver_buffer;
    }
    if (st == NND_OK) st = check_outputs_writable(r, bd->pools, err, errlen);
    if (st == NND_OK)
        st = nnd_request_from_proto(r, p, bd->views, bd->n_pools, bd->inputs, bd->outputs, err,
                                    errlen);
    if (st == NND_OK && buffers)
        st = nnd_buffers_bind(s, model_handle, p, r, bd->inputs, bd->outputs, &bd->buffers, err,
                              errlen);
    if (st != NND_OK) {
        nnd_binding_release(bd);
        if (b) nnd_burst_rollback(b); /* after the release: the request's views went first */
        return st;
    }
    if (b) nnd_burst_commit(b);
    return NND_OK;
}

bool nnd_binding_regrow(nnd_binding *bd, const nnd_output_shape *shapes) {
    return bd->buffers && nnd_buffers_regrow(bd->buffers, shapes, bd->outputs);
}

void nnd_binding_finish(nnd_binding *bd, bool ran, nnd_status *st, const nnd_output_shape *shapes,
                        char *err, size_t errlen) {
    if (!bd->buffers) return;
    nnd_buffers_finish(bd->buffers, ran, st, shapes, err, errlen);
    bd->buffers = NULL;
}

void nnd_binding_release(nnd_binding *bd) {
    nnd_status unchanged = NND_OK; /* a run that never happened changes no status */
    nnd_binding_finish(bd, false, &unchanged, NULL, NULL, 0);
    nnd_pools_release(bd->pools, bd->n_pools);
    bd->n_pools = 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* bind.c: a request's pools, arguments and driver buffers bound in one step. See bind.h. */
#include "daemon/binding/bind.h"

#include <stdio.h>

#include "daemon/binding/burst.h"
#include "daemon/wire/convert.h"
#include "daemon/binding/memreg.h"

/* The pools of an execution without a burst: registered memories by token (no fd, no
 * system call), others mapped through the session's cache. All or nothing. */
static schema_status map_pools(srv_session *s, proto_frame_in *in, const Nnd__ExecutionRequest *r,
                               srv_pool *out, char *err, size_t errlen) {
    for (size_t i = 0; i < r->n_pools; i++) {
        const Nnd__MemoryPool *mp = r->pools[i];
        schema_status st;
        if (!mp) {
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "pool %zu is empty", i);
        } else if (mp->kind == NND__POOL_KIND__POOL_REGISTERED) {
            st = srv_memreg_resolve(s, mp, (uint32_t)i, &out[i], err, errlen);
        } else {
            if (!s->pool_cache) s->pool_cache = srv_pool_cache_create();
            st = srv_pool_map(mp, (uint32_t)i, in, false, s->pool_cache, &out[i], err, errlen);
        }
        if (st != SCHEMA_OK) {
            srv_pools_release(out, i);
            return st;
        }
    }
    return SCHEMA_OK;
}

/* Outputs must land in memory mapped writable. */
static schema_status check_outputs_writable(const Nnd__ExecutionRequest *r, const srv_pool *pools,
                                            char *err, size_t errlen) {
    for (size_t i = 0; i < r->n_outputs; i++) {
        const Nnd__RequestArgument *a = r->outputs[i];
        if (a->has_no_value || !a->location || a->location->pool_index >= r->n_pools) continue;
        if (!pools[a->location->pool_index].writable) {
            snprintf(err, errlen, "output %zu points into pool %u, which is read-only", i,
                     a->location->pool_index);
            return SCHEMA_INVALID_ARGUMENT;
        }
    }
    return SCHEMA_OK;
}

schema_status srv_bind(srv_binding *bd, srv_session *s, proto_frame_in *in, srv_burst_obj *b,
                       uint64_t model_handle, const eng_prepared *p, const Nnd__ExecutionRequest *r,
                       char *err, size_t errlen) {
    schema_status st;
    bd->n_pools = 0;
    bd->buffers = NULL;
    if (b) {
        st = srv_burst_map_pools(b, r, in, bd->pools, err, errlen);
    } else {
        st = map_pools(s, in, r, bd->pools, err, errlen);
    }
    if (st == SCHEMA_OK) bd->n_pools = r->n_pools;
    bool buffers = false; /* most requests name none: buffer.h is not asked */
    for (size_t i = 0; i < bd->n_pools; i++) {
        bd->views[i] = bd->pools[i].view;
        buffers |= bd->pools[i].driver_buffer;
    }
    if (st == SCHEMA_OK) st = check_outputs_writable(r, bd->pools, err, errlen);
    if (st == SCHEMA_OK)
        st = srv_request_from_proto(r, p, bd->views, bd->n_pools, bd->inputs, bd->outputs, err,
                                    errlen);
    if (st == SCHEMA_OK && buffers)
        st = srv_buffers_bind(s, model_handle, p, r, bd->inputs, bd->outputs, &bd->buffers, err,
                              errlen);
    if (st != SCHEMA_OK) {
        srv_binding_release(bd);
        if (b) srv_burst_rollback(b); /* after the release: the request's views went first */
        return st;
    }
    if (b) srv_burst_commit(b);
    return SCHEMA_OK;
}

bool srv_binding_regrow(srv_binding *bd, const eng_output_shape *shapes) {
    return bd->buffers && srv_buffers_regrow(bd->buffers, shapes, bd->outputs);
}

void srv_binding_finish(srv_binding *bd, bool ran, schema_status *st,
                        const eng_output_shape *shapes, char *err, size_t errlen) {
    if (!bd->buffers) return;
    srv_buffers_finish(bd->buffers, ran, st, shapes, err, errlen);
    bd->buffers = NULL;
}

void srv_binding_release(srv_binding *bd) {
    schema_status unchanged = SCHEMA_OK; /* a run that never happened changes no status */
    srv_binding_finish(bd, false, &unchanged, NULL, NULL, 0);
    srv_pools_release(bd->pools, bd->n_pools);
    bd->n_pools = 0;
}

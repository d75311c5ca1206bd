/* SPDX-License-Identifier: Apache-2.0 */
/* memreg.c: memories registered with a connection. See memreg.h. */
#include "daemon/binding/memreg.h"

#include <stdlib.h>

typedef struct registered {
    srv_pool pool; /* the registration's own view of its mapping */
} registered;

static srv_memreg_stats stats; /* loop thread only */

void srv_memreg_stats_get(srv_memreg_stats *out) {
    *out = stats;
}

static void registered_free(void *obj) {
    registered *r = obj;
    stats.live--;
    srv_pool_release(&r->pool);
    free(r);
}

schema_status srv_memreg_register(srv_session *s, const Nnd__MemoryPool *mp, proto_frame_in *in,
                                  uint64_t *token, char *err, size_t errlen) {
    *token = 0;
    if (!mp)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "RegisterMemory names no memory");
    if (mp->kind != NND__POOL_KIND__POOL_MEMFD && mp->kind != NND__POOL_KIND__POOL_MMAP_FD)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "only memfd and mmap_fd memory can be registered (kind %d)",
                            (int)mp->kind);
    schema_status st = srv_session_check_quota(s, SRV_OBJ_MEMORY, err, errlen);
    if (st != SCHEMA_OK) return st;
    registered *r = calloc(1, sizeof *r);
    if (!r)
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "out of memory registering memory");
    st = srv_pool_map(mp, 0, in, false, NULL, &r->pool, err, errlen);
    if (st != SCHEMA_OK) {
        free(r);
        return st;
    }
    stats.live++;
    if (srv_session_add(s, SRV_OBJ_MEMORY, r, registered_free, token) < 0) {
        registered_free(r);
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "out of memory storing the memory");
    }
    stats.registrations++;
    return SCHEMA_OK;
}

schema_status srv_memreg_unregister(srv_session *s, uint64_t token, char *err, size_t errlen) {
    if (!srv_session_find(s, token, SRV_OBJ_MEMORY))
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "memory token 0x%016llx is not registered on this connection",
                            (unsigned long long)token);
    srv_session_release(s, token);
    return SCHEMA_OK;
}

schema_status srv_memreg_resolve(srv_session *s, const Nnd__MemoryPool *mp, uint32_t index,
                                 srv_pool *out, char *err, size_t errlen) {
    registered *r = srv_session_find(s, mp->token, SRV_OBJ_MEMORY);
    if (!r)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "pool %u names memory token 0x%016llx, which is not registered on this "
                            "connection (unknown, unregistered, or another connection's)",
                            index, (unsigned long long)mp->token);
    size_t whole = r->pool.view.size;
    if (mp->offset > whole || mp->size > whole - mp->offset)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "pool %u: offset %llu + size %llu runs past the end of memory token "
                            "0x%016llx (%zu bytes)",
                            index, (unsigned long long)mp->offset, (unsigned long long)mp->size,
                            (unsigned long long)mp->token, whole);
    if (srv_pool_damaged(&r->pool))
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "pool %u: the memory of token 0x%016llx shrank under an earlier "
                            "execution; unregister it and register it again",
                            index, (unsigned long long)mp->token);
    srv_pool_share(&r->pool, out);
    stats.uses++;
    out->view.base += mp->offset;
    out->view.size = mp->size ? (size_t)mp->size : whole - (size_t)mp->offset;
    return SCHEMA_OK;
}

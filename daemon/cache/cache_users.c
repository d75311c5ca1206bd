/* SPDX-License-Identifier: Apache-2.0 */
/* cache_users.c: per-uid references to content-cache entries. See cache_users.h. */
#include "daemon/cache/cache_users.h"

#include <stdlib.h>

static srv_cache_user *find(srv_cache_users *u, uint32_t uid) {
    for (uint32_t i = 0; i < u->n; i++)
        if (u->v[i].uid == uid) return &u->v[i];
    return NULL;
}

int srv_cache_users_add(srv_cache_users *u, const srv_session *s, uint64_t bytes) {
    srv_cache_user *e = find(u, (uint32_t)s->uid);
    if (e) {
        e->refs++;
        return 0;
    }
    if (u->n == u->cap) {
        uint32_t cap = u->cap ? 2 * u->cap : 4;
        srv_cache_user *v = realloc(u->v, cap * sizeof *v);
        if (!v) return -1;
        u->v = v;
        u->cap = cap;
    }
    u->v[u->n++] = (srv_cache_user){.uid = (uint32_t)s->uid, .refs = 1};
    srv_quota_app_charge(&s->quota, SRV_QUOTA_CACHE_BYTES, bytes);
    return 0;
}

void srv_cache_users_drop(srv_cache_users *u, srv_quota *q, uint32_t uid, uint64_t bytes) {
    srv_cache_user *e = find(u, uid);
    if (!e || --e->refs) return;
    *e = u->v[--u->n];
    srv_quota_app_give(q, uid, SRV_QUOTA_CACHE_BYTES, bytes);
}

void srv_cache_users_free(srv_cache_users *u) {
    free(u->v);
    *u = (srv_cache_users){0};
}

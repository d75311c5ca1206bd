/* SPDX-License-Identifier: Apache-2.0 */
/* cache_users: which apps (uids) use a content-cache entry, and what it costs them.
 *
 * Contract:
 * - The content cache holds each model once, keyed by the digest of its bytes (cache.h),
 *   however many connections and apps use it. Its bytes are charged, against
 *   quota.app.cache_bytes, once to every app (uid) holding at least one reference to it:
 *   the uid's first reference takes the charge and its last gives it back, so each app
 *   pays for the copies it makes the daemon keep, and nobody pays twice for one copy.
 * - Charging never refuses: the cache checks the quota before it copies a model
 *   (srv_quota_app_check()) and prepares a model that does not fit in place instead.
 * - Giving back looks the app up by uid: an app that has left (its last connection
 *   closed while an execution still held the model) is not charged any more.
 * - Loop thread only.
 */
#ifndef SRV_CACHE_CACHE_USERS_H
#define SRV_CACHE_CACHE_USERS_H

#include <stdint.h>

#include "daemon/clients/quota.h"
#include "daemon/clients/session.h"

typedef struct srv_cache_user {
    uint32_t uid;
    uint32_t refs;
} srv_cache_user;

typedef struct srv_cache_users {
    srv_cache_user *v;
    uint32_t n, cap;
} srv_cache_users;

/* s takes a reference to an entry of `bytes`; charged to its app if its uid's first.
 * Returns 0, or -1 when out of memory (nothing taken). */
int srv_cache_users_add(srv_cache_users *u, const srv_session *s, uint64_t bytes);
/* uid gives a reference back; its app is refunded at its last. */
void srv_cache_users_drop(srv_cache_users *u, srv_quota *q, uint32_t uid, uint64_t bytes);
void srv_cache_users_free(srv_cache_users *u);

#endif

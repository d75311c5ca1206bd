/* SPDX-License-Identifier: Apache-2.0 */
/* quota: limits on what each app (a uid) and each connection may hold at once.
 *
 * Contract:
 * - Resources: connections (per app only), prepared models (by count, and by the memory
 *   the daemon holds for those prepared in place: prepared_bytes, see prepare.h), driver
 *   buffers (by count and by bytes), executions in flight (waiting on fences, queued or running),
 * and per app only: mappings of client memory (counted by pool.c in the app's map account, which
 *   outlives the app while its mappings do), descriptors held for it, the content-cache
 *   memory of the models it uses, and its token-index rows (pruned, least recently used
 *   first, rather than refused). A limit of 0 means unlimited.
 * - srv_quota_new() lowers quota.app.descriptors to a quarter of the daemon's descriptor
 *   limit (RLIMIT_NOFILE) when set higher, so that no app can take the daemon's last
 *   descriptors, and quota.app.prepared_bytes (and quota.connection.prepared_bytes) to a
 *   quarter of the machine's memory, so that no app can take more of it (both logged).
 * - Daemon-wide budgets, all apps together, set at srv_quota_new(): driver buffer bytes
 *   half of the machine's memory, prepared bytes half, content-cache bytes a quarter, descriptors
 *   RLIMIT_NOFILE less 256 (mappings have theirs in pool.h). Past one, a request is
 *   refused with RESOURCE_EXHAUSTED_TRANSIENT naming the budget and the uid holding the
 *   most, so that several apps at their quotas still leave the machine its memory and
 *   the daemon its descriptors. Status shows them under limits.daemon.
 * - The daemon owns one table of apps keyed by uid, touched only on the loop thread. A
 *   connection joins its app at accept (srv_quota_connect), which is refused when the
 *   app already has quota.app.connections; it leaves after its session is cleared
 *   (srv_quota_disconnect), and an app with no connection left is forgotten.
 * - Usage is counted twice, on the session and on its app, and only through
 *   srv_quota_take() (srv_quota_check, then count) and srv_quota_add() (count; negative
 *   to give back). The session does it by itself for the objects it stores (session.h); the
 *   executions (execution.h) and the buffers' bytes (buffer.h) do it through these calls.
 * - A refusal is RESOURCE_EXHAUSTED_TRANSIENT with a message naming the quota, its limit
 *   and the uid ("quota.app.prepared_models (4) reached for uid 1000"); it takes nothing,
 *   is counted per app and in total, and is published as a "quota_refused" event.
 * - A session that never joined an app (unit tests) has no limits.
 */
#ifndef SRV_CLIENTS_QUOTA_H
#define SRV_CLIENTS_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "schema/codes.h"

typedef enum srv_quota_res {
    SRV_QUOTA_CONNECTIONS = 0,
    SRV_QUOTA_PREPARED_MODELS,
    SRV_QUOTA_BUFFERS,
    SRV_QUOTA_BUFFER_BYTES,
    SRV_QUOTA_QUEUED_EXECUTIONS,
    SRV_QUOTA_PREPARED_BYTES, /* memory of the prepared models held (eng_prepared_bytes) */
    /* Per app only (srv_quota_app_only()): */
    SRV_QUOTA_MAPPINGS,     /* client memory mapped into the daemon (pool.h accounts) */
    SRV_QUOTA_DESCRIPTORS,  /* descriptors the daemon holds for it */
    SRV_QUOTA_CACHE_BYTES,  /* content-cache memory of the models it uses (cache_charge.h) */
    SRV_QUOTA_CACHE_TOKENS, /* its rows in the token index on disk (pruned, not refused) */
    SRV_QUOTA_RES
} srv_quota_res;

/* "connections", "prepared_models", "buffers", "buffer_bytes", "queued_executions",
 * "prepared_bytes", "mappings", "descriptors", "cache_bytes", "cache_tokens". */
const char *srv_quota_res_name(srv_quota_res r);
/* Whether r is counted per app only (no quota.connection.* key). */
bool srv_quota_app_only(srv_quota_res r);

typedef struct srv_quota_limits {
    uint64_t app[SRV_QUOTA_RES];  /* per uid; 0: unlimited */
    uint64_t conn[SRV_QUOTA_RES]; /* per connection; conn[SRV_QUOTA_CONNECTIONS] unused */
} srv_quota_limits;

/* The defaults: far above what a normal app holds (docs/configuration.md, "Quotas"). */
void srv_quota_limits_default(srv_quota_limits *l);

struct srv_daemon;
struct srv_session;
typedef struct srv_quota srv_quota;

struct srv_map_account;

/* One app: what its connections hold together. */
typedef struct srv_quota_app {
    srv_quota *q;
    uid_t uid;
    struct srv_map_account *maps; /* its mappings, counted by pool.c (atomically) */
    uint64_t used[SRV_QUOTA_RES]; /* used[SRV_QUOTA_CONNECTIONS]: its connections */
    uint64_t refused[SRV_QUOTA_RES];
    struct srv_quota_app *next; /* by uid */
} srv_quota_app;

/* A connection's share, kept in its session (session.h: srv_session.quota, whose
 * identity srv_session_init() sets) and passed by the caller: who it is (for the app it
 * joins and for messages), the app it joined, and what it holds. Quotas need nothing else of a
 * session and never call it. */
typedef struct srv_quota_conn {
    uid_t uid;
    pid_t pid;
    uint64_t serial;
    srv_quota_app *app;           /* NULL: outside any app, no limits */
    uint64_t used[SRV_QUOTA_RES]; /* its share of app->used */
} srv_quota_conn;

/* d: where refusals are published (d->bus, looked up at each refusal); may be NULL. */
srv_quota *srv_quota_new(const srv_quota_limits *l, struct srv_daemon *d);
void srv_quota_free(srv_quota *q);
const srv_quota_limits *srv_quota_get_limits(const srv_quota *q);
/* New limits (a reload): every app and connection is held to them from its next request
 * on; what one holds already stays, even above a lowered limit. */
void srv_quota_set_limits(srv_quota *q, const srv_quota_limits *l);

/* Joins connection s to the app of its uid. SCHEMA_OK, or RESOURCE_EXHAUSTED_TRANSIENT (err
 * says why; s stays outside any app), or GENERAL_FAILURE when out of memory. */
schema_status srv_quota_connect(srv_quota *q, srv_quota_conn *s, char *err, size_t errlen);
/* After srv_session_clear(): leaves the app. Nothing if s never joined. */
void srv_quota_disconnect(srv_quota_conn *s);

/* Whether s may take n more of r: SCHEMA_OK, or the refusal (counted and published). */
schema_status srv_quota_check(const srv_quota_conn *s, srv_quota_res r, uint64_t n, char *err,
                              size_t errlen);
/* srv_quota_check(), then counts them on s and its app. */
schema_status srv_quota_take(srv_quota_conn *s, srv_quota_res r, uint64_t n, char *err,
                             size_t errlen);
/* Counts delta (negative: given back) on s and its app, without any check. */
void srv_quota_add(srv_quota_conn *s, srv_quota_res r, int64_t delta);

/* App-only counts (cache bytes): whether s's app may take n more of r (a refusal is
 * counted and published as by srv_quota_check()); counting them unchecked; giving back
 * (never below zero: an app may have come and gone since). */
schema_status srv_quota_app_check(const srv_quota_conn *s, srv_quota_res r, uint64_t n, char *err,
                                  size_t errlen);
void srv_quota_app_charge(const srv_quota_conn *s, srv_quota_res r, uint64_t n);
void srv_quota_app_give(srv_quota *q, uid_t uid, srv_quota_res r, uint64_t n);
/* The app holding the most of r, or NULL: named when a daemon-wide budget runs out. */
const srv_quota_app *srv_quota_top_app(const srv_quota *q, srv_quota_res r);
/* What app a holds of r now (mappings read from its account). */
uint64_t srv_quota_app_used(const srv_quota_app *a, srv_quota_res r);

/* The "quotas" object of admin status: limits, usage and refusals per app, totals. */
cJSON *srv_quota_status(const srv_quota *q);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* quota.c: the app table and the checks. See quota.h. */
#include "daemon/clients/quota.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon/base/bus.h"
#include "daemon/base/daemon.h"
#include "daemon/base/log.h"
#include "daemon/clients/pool.h"

struct srv_quota {
    srv_quota_limits limits;
    uint64_t budget[SRV_QUOTA_RES]; /* daemon-wide, all apps together; 0: none */
    srv_daemon *d;
    srv_quota_app *apps;                   /* sorted by uid */
    uint64_t refused_total[SRV_QUOTA_RES]; /* since startup, apps forgotten or not */
};

static const char *const res_names[SRV_QUOTA_RES] = {
    "connections",    "prepared_models", "buffers",     "buffer_bytes", "queued_executions",
    "prepared_bytes", "mappings",        "descriptors", "cache_bytes",  "cache_tokens"};

const char *srv_quota_res_name(srv_quota_res r) {
    return (unsigned)r < SRV_QUOTA_RES ? res_names[r] : "?";
}

bool srv_quota_app_only(srv_quota_res r) {
    return r == SRV_QUOTA_CONNECTIONS || r >= SRV_QUOTA_MAPPINGS;
}

static bool is_bytes(srv_quota_res r) {
    return r == SRV_QUOTA_BUFFER_BYTES || r == SRV_QUOTA_CACHE_BYTES ||
           r == SRV_QUOTA_PREPARED_BYTES;
}

void srv_quota_limits_default(srv_quota_limits *l) {
    static const srv_quota_limits dflt = {
        .app = {[SRV_QUOTA_CONNECTIONS] = 256,
                [SRV_QUOTA_PREPARED_MODELS] = 4096,
                [SRV_QUOTA_BUFFERS] = 4096,
                [SRV_QUOTA_BUFFER_BYTES] = 8ull << 30,
                [SRV_QUOTA_QUEUED_EXECUTIONS] = 1024,
                [SRV_QUOTA_PREPARED_BYTES] = 1ull << 30,
                [SRV_QUOTA_MAPPINGS] = 4096,
                [SRV_QUOTA_DESCRIPTORS] = 4096,
                [SRV_QUOTA_CACHE_BYTES] = 512ull << 20,
                [SRV_QUOTA_CACHE_TOKENS] = 1024},
        .conn = {[SRV_QUOTA_PREPARED_MODELS] = 1024,
                 [SRV_QUOTA_BUFFERS] = 1024,
                 [SRV_QUOTA_BUFFER_BYTES] = 4ull << 30,
                 [SRV_QUOTA_QUEUED_EXECUTIONS] = 256,
                 [SRV_QUOTA_PREPARED_BYTES] = 512ull << 20},
    };
    *l = dflt;
}

/* Takes l, with no app allowed more than a quarter of the daemon's descriptors. */
static void set_limits(srv_quota *q, const srv_quota_limits *l) {
    q->limits = *l;
    struct rlimit rl;
    uint64_t *fds = &q->limits.app[SRV_QUOTA_DESCRIPTORS];
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (!*fds || *fds > rl.rlim_cur / 4)) {
        srv_log_warn("quota.app.descriptors lowered from %llu to %llu, a quarter of the "
                     "descriptor limit (%llu)",
                     (unsigned long long)*fds, (unsigned long long)(rl.rlim_cur / 4),
                     (unsigned long long)rl.rlim_cur);
        *fds = rl.rlim_cur / 4;
    }
}

void srv_quota_set_limits(srv_quota *q, const srv_quota_limits *l) {
    set_limits(q, l);
    for (srv_quota_app *a = q->apps; a; a = a->next)
        srv_map_account_set_limit(a->maps, q->limits.app[SRV_QUOTA_MAPPINGS]);
}

srv_quota *srv_quota_new(const srv_quota_limits *l, srv_daemon *d) {
    srv_quota *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->d = d;
    set_limits(q, l);
    struct rlimit rl;
    /* Daemon-wide budgets below what the machine and the kernel allow, whatever the apps:
     * driver buffers half of the memory, prepared models half, content-cache copies a
     * quarter, descriptors all but 256 kept for the daemon's own files and the fds of
     * requests being read. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    /* Nor may one app's prepared models take more than a quarter of the memory. */
    for (int scope = 0; scope < 2 && mem; scope++) {
        uint64_t *b = scope ? &q->limits.conn[SRV_QUOTA_PREPARED_BYTES]
                            : &q->limits.app[SRV_QUOTA_PREPARED_BYTES];
        if (*b && *b <= mem / 4) continue;
        srv_log_warn("quota.%s.prepared_bytes lowered from %llu to %llu, a quarter of the "
                     "machine's memory (%llu)",
                     scope ? "connection" : "app", (unsigned long long)*b,
                     (unsigned long long)(mem / 4), (unsigned long long)mem);
        *b = mem / 4;
    }
    q->budget[SRV_QUOTA_BUFFER_BYTES] = mem / 2;
    q->budget[SRV_QUOTA_PREPARED_BYTES] = mem / 2;
    q->budget[SRV_QUOTA_CACHE_BYTES] = mem / 4;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 512)
        q->budget[SRV_QUOTA_DESCRIPTORS] = rl.rlim_cur - 256;
    return q;
}

void srv_quota_free(srv_quota *q) {
    if (!q) return;
    for (srv_quota_app *a = q->apps, *next; a; a = next) {
        next = a->next;
        srv_map_account_detach(a->maps);
        free(a);
    }
    free(q);
}

const srv_quota_limits *srv_quota_get_limits(const srv_quota *q) {
    return &q->limits;
}

/* Counts a refusal, tells the bus, and words it into err. */
static schema_status refuse(srv_quota_app *a, const srv_quota_conn *s, srv_quota_res r,
                            bool per_conn, uint64_t limit, uint64_t held, uint64_t asked, char *err,
                            size_t errlen) {
    srv_quota *q = a->q;
    a->refused[r]++;
    q->refused_total[r]++;
    const char *scope = per_conn ? "connection" : "app";
    int n;
    if (per_conn)
        n = snprintf(err, errlen, "quota.connection.%s (%llu) reached on this connection (uid %u)",
                     res_names[r], (unsigned long long)limit, (unsigned)a->uid);
    else
        n = snprintf(err, errlen, "quota.app.%s (%llu) reached for uid %u", res_names[r],
                     (unsigned long long)limit, (unsigned)a->uid);
    if (is_bytes(r) && n > 0 && (size_t)n < errlen)
        snprintf(err + n, errlen - (size_t)n, ": %llu bytes held, %llu more asked",
                 (unsigned long long)held, (unsigned long long)asked);
    /* The first refusal of each quota an app meets is a warning; the rest, which an app
     * hammering at its limit makes by the thousand, are debug lines (status counts them). */
    int level = a->refused[r] == 1 ? SRV_LOG_WARN : SRV_LOG_DEBUG;
    if (s)
        srv_log(level, "client %llu (pid %d): %s", (unsigned long long)s->serial, (int)s->pid, err);
    else
        srv_log(level, "%s", err);
    cJSON *ev = srv_bus_event(q->d ? q->d->bus : NULL, "quota_refused");
    if (ev) {
        if (s)
            srv_json_add_client(ev, s->serial, s->pid, a->uid);
        else
            cJSON_AddNumberToObject(ev, "uid", a->uid);
        cJSON_AddStringToObject(ev, "scope", scope);
        cJSON_AddStringToObject(ev, "quota", res_names[r]);
        srv_json_add_u64(ev, "limit", limit);
        srv_json_add_u64(ev, "held", held);
        srv_json_add_u64(ev, "asked", asked);
    }
    srv_bus_publish(q->d ? q->d->bus : NULL, ev);
    return SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT;
}

/* Whether held + asked stays within limit (0: unlimited), without overflowing. */
static bool within(uint64_t limit, uint64_t held, uint64_t asked) {
    return !limit || (held <= limit && asked <= limit - held);
}

/* Whether n more of r fit the daemon-wide budget; else the refusal, naming the app that
 * holds the most (counted against a, which asked). */
static schema_status check_budget(srv_quota_app *a, const srv_quota_conn *s, srv_quota_res r,
                                  uint64_t n, char *err, size_t errlen) {
    srv_quota *q = a->q;
    uint64_t total = 0;
    for (const srv_quota_app *x = q->apps; x; x = x->next)
        total += x->used[r];
    if (within(q->budget[r], total, n)) return SCHEMA_OK;
    const srv_quota_app *top = srv_quota_top_app(q, r);
    a->refused[r]++;
    q->refused_total[r]++;
    snprintf(err, errlen,
             "the daemon's budget of %s (%llu, for all apps) is used up: %llu held, %llu more "
             "asked; uid %u holds the most (%llu)",
             res_names[r], (unsigned long long)q->budget[r], (unsigned long long)total,
             (unsigned long long)n, top ? (unsigned)top->uid : 0u,
             top ? (unsigned long long)top->used[r] : 0ull);
    srv_log_warn("uid %u (pid %d): %s", (unsigned)a->uid, s ? (int)s->pid : 0, err);
    return SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT;
}

/* The map account's refusal (pool.h): the app's quota message, counted and published. */
static schema_status refuse_mapping(void *owner, uint64_t limit, uint64_t held, char *err,
                                    size_t errlen) {
    return refuse(owner, NULL, SRV_QUOTA_MAPPINGS, false, limit, held, 1, err, errlen);
}

schema_status srv_quota_connect(srv_quota *q, srv_quota_conn *s, char *err, size_t errlen) {
    srv_quota_app **at = &q->apps;
    while (*at && (*at)->uid < s->uid)
        at = &(*at)->next;
    srv_quota_app *a = *at;
    if (!a || a->uid != s->uid) {
        a = calloc(1, sizeof *a);
        if (!a) {
            snprintf(err, errlen, "out of memory");
            return SCHEMA_GENERAL_FAILURE;
        }
        a->q = q;
        a->uid = s->uid;
        a->maps = srv_map_account_new(q->limits.app[SRV_QUOTA_MAPPINGS], refuse_mapping, a);
        if (!a->maps) {
            free(a);
            snprintf(err, errlen, "out of memory");
            return SCHEMA_GENERAL_FAILURE;
        }
        a->next = *at;
        *at = a;
    }
    /* A connection is also a descriptor the daemon holds for the app. */
    static const srv_quota_res each[] = {SRV_QUOTA_CONNECTIONS, SRV_QUOTA_DESCRIPTORS};
    for (size_t i = 0; i < sizeof each / sizeof *each; i++) {
        srv_quota_res r = each[i];
        uint64_t limit = q->limits.app[r];
        if (!within(limit, a->used[r], 1))
            return refuse(a, s, r, false, limit, a->used[r], 1, err, errlen);
        schema_status st = check_budget(a, s, r, 1, err, errlen);
        if (st != SCHEMA_OK) return st;
    }
    s->app = a;
    srv_quota_add(s, SRV_QUOTA_CONNECTIONS, 1);
    srv_quota_add(s, SRV_QUOTA_DESCRIPTORS, 1);
    return SCHEMA_OK;
}

void srv_quota_disconnect(srv_quota_conn *s) {
    srv_quota_app *a = s->app;
    if (!a) return;
    srv_quota_add(s, SRV_QUOTA_CONNECTIONS, -1);
    srv_quota_add(s, SRV_QUOTA_DESCRIPTORS, -1);
    s->app = NULL;
    if (a->used[SRV_QUOTA_CONNECTIONS]) return;
    /* Its last connection is gone, and with it the app's record. What is still in use
     * (a model an execution or a cache write still holds) is freed when that work ends;
     * its count goes with the record. */
    for (int r = 0; r < SRV_QUOTA_RES; r++)
        if (a->used[r] && r != SRV_QUOTA_CACHE_TOKENS)
            srv_log_info("uid %u: last connection closed with %llu %s still in use by work "
                         "not yet ended; freed when it ends, no longer counted for the uid",
                         (unsigned)a->uid, (unsigned long long)a->used[r], res_names[r]);
    srv_quota_app **at = &a->q->apps;
    while (*at != a)
        at = &(*at)->next;
    *at = a->next;
    srv_map_account_detach(a->maps);
    free(a);
}

schema_status srv_quota_check(const srv_quota_conn *s, srv_quota_res r, uint64_t n, char *err,
                              size_t errlen) {
    srv_quota_app *a = s->app;
    if (!a) return SCHEMA_OK;
    const srv_quota_limits *l = &a->q->limits;
    if (!srv_quota_app_only(r) && !within(l->conn[r], s->used[r], n))
        return refuse(a, s, r, true, l->conn[r], s->used[r], n, err, errlen);
    if (!within(l->app[r], a->used[r], n))
        return refuse(a, s, r, false, l->app[r], a->used[r], n, err, errlen);
    return check_budget(a, s, r, n, err, errlen);
}

schema_status srv_quota_take(srv_quota_conn *s, srv_quota_res r, uint64_t n, char *err,
                             size_t errlen) {
    schema_status st = srv_quota_check(s, r, n, err, errlen);
    if (st == SCHEMA_OK) srv_quota_add(s, r, (int64_t)n);
    return st;
}

void srv_quota_add(srv_quota_conn *s, srv_quota_res r, int64_t delta) {
    s->used[r] += (uint64_t)delta;
    if (s->app) s->app->used[r] += (uint64_t)delta;
}

/* The app of uid, or NULL when it has no connection. */
static srv_quota_app *srv_quota_app_find(srv_quota *q, uid_t uid) {
    for (srv_quota_app *a = q ? q->apps : NULL; a && a->uid <= uid; a = a->next)
        if (a->uid == uid) return a;
    return NULL;
}

schema_status srv_quota_app_check(const srv_quota_conn *s, srv_quota_res r, uint64_t n, char *err,
                                  size_t errlen) {
    srv_quota_app *a = s->app;
    if (!a) return SCHEMA_OK;
    uint64_t limit = a->q->limits.app[r];
    if (!within(limit, a->used[r], n))
        return refuse(a, s, r, false, limit, a->used[r], n, err, errlen);
    return check_budget(a, s, r, n, err, errlen);
}

void srv_quota_app_charge(const srv_quota_conn *s, srv_quota_res r, uint64_t n) {
    srv_quota_app *a = s->app;
    if (a) a->used[r] += n;
}

void srv_quota_app_give(srv_quota *q, uid_t uid, srv_quota_res r, uint64_t n) {
    srv_quota_app *a = srv_quota_app_find(q, uid);
    if (a) a->used[r] -= n < a->used[r] ? n : a->used[r];
}

uint64_t srv_quota_app_used(const srv_quota_app *a, srv_quota_res r) {
    return r == SRV_QUOTA_MAPPINGS ? srv_map_account_mapped(a->maps) : a->used[r];
}

const srv_quota_app *srv_quota_top_app(const srv_quota *q, srv_quota_res r) {
    const srv_quota_app *top = NULL;
    for (const srv_quota_app *a = q ? q->apps : NULL; a; a = a->next)
        if (!top || srv_quota_app_used(a, r) > srv_quota_app_used(top, r)) top = a;
    return top;
}

/* ---- status ------------------------------------------------------------------------------ */

static void add_counts(cJSON *o, const uint64_t *v, bool per_app) {
    for (int r = 0; r < SRV_QUOTA_RES; r++)
        if (per_app || !srv_quota_app_only((srv_quota_res)r))
            srv_json_add_u64(o, res_names[r], v[r]);
}

cJSON *srv_quota_status(const srv_quota *q) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !q) return o;
    cJSON *lim = cJSON_AddObjectToObject(o, "limits");
    add_counts(cJSON_AddObjectToObject(lim, "app"), q->limits.app, true);
    add_counts(cJSON_AddObjectToObject(lim, "connection"), q->limits.conn, false);
    uint64_t total[SRV_QUOTA_RES] = {0};
    cJSON *apps = cJSON_AddArrayToObject(o, "apps");
    for (const srv_quota_app *a = q->apps; a; a = a->next) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddNumberToObject(e, "uid", a->uid);
        uint64_t used[SRV_QUOTA_RES];
        for (int r = 0; r < SRV_QUOTA_RES; r++)
            total[r] += used[r] = srv_quota_app_used(a, (srv_quota_res)r);
        add_counts(e, used, true);
        add_counts(cJSON_AddObjectToObject(e, "refused"), a->refused, true);
        cJSON_AddItemToArray(apps, e);
    }
    add_counts(cJSON_AddObjectToObject(lim, "daemon"), q->budget, true);
    cJSON *t = cJSON_AddObjectToObject(o, "totals");
    srv_json_add_u64(t, "daemon_mappings", srv_pool_mapped());
    srv_json_add_u64(t, "daemon_mapping_budget", srv_pool_map_budget());
    add_counts(t, total, true);
    add_counts(cJSON_AddObjectToObject(t, "refused"), q->refused_total, true);
    return o;
}

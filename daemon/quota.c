/* quota.c: the app table and the checks. See quota.h. */
#include "quota.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bus.h"
#include "daemon.h"
#include "log.h"
#include "pool.h"

struct nnd_quota {
    nnd_quota_limits limits;
    uint64_t budget[NND_QUOTA_RES]; /* daemon-wide, all apps together; 0: none */
    nnd_daemon *d;
    nnd_quota_app *apps;                   /* sorted by uid */
    uint64_t refused_total[NND_QUOTA_RES]; /* since startup, apps forgotten or not */
};

static const char *const res_names[NND_QUOTA_RES] = {
    "connections", "prepared_models", "buffers",     "buffer_bytes", "queued_executions",
    "mappings",    "descriptors",     "cache_bytes", "cache_tokens"};

const char *nnd_quota_res_name(nnd_quota_res r) {
    return (unsigned)r < NND_QUOTA_RES ? res_names[r] : "?";
}

bool nnd_quota_app_only(nnd_quota_res r) {
    return r == NND_QUOTA_CONNECTIONS || r >= NND_QUOTA_MAPPINGS;
}

static bool is_bytes(nnd_quota_res r) {
    return r == NND_QUOTA_BUFFER_BYTES || r == NND_QUOTA_CACHE_BYTES;
}

void nnd_quota_limits_default(nnd_quota_limits *l) {
    static const nnd_quota_limits dflt = {
        .app = {[NND_QUOTA_CONNECTIONS] = 256,
                [NND_QUOTA_PREPARED_MODELS] = 4096,
                [NND_QUOTA_BUFFERS] = 4096,
                [NND_QUOTA_BUFFER_BYTES] = 8ull << 30,
                [NND_QUOTA_QUEUED_EXECUTIONS] = 1024,
                [NND_QUOTA_MAPPINGS] = 4096,
                [NND_QUOTA_DESCRIPTORS] = 4096,
                [NND_QUOTA_CACHE_BYTES] = 512ull << 20,
                [NND_QUOTA_CACHE_TOKENS] = 1024},
        .conn = {[NND_QUOTA_PREPARED_MODELS] = 1024,
                 [NND_QUOTA_BUFFERS] = 1024,
                 [NND_QUOTA_BUFFER_BYTES] = 4ull << 30,
                 [NND_QUOTA_QUEUED_EXECUTIONS] = 256},
    };
    *l = dflt;
}

nnd_quota *nnd_quota_new(const nnd_quota_limits *l, nnd_daemon *d) {
    nnd_quota *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->limits = *l;
    q->d = d;
    /* No app may hold more than a quarter of the daemon's descriptors. */
    struct rlimit rl;
    uint64_t *fds = &q->limits.app[NND_QUOTA_DESCRIPTORS];
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (!*fds || *fds > rl.rlim_cur / 4)) {
        nnd_log_warn("quota.app.descriptors lowered from %llu to %llu, a quarter of the "
                     "descriptor limit (%llu)",
                     (unsigned long long)*fds, (unsigned long long)(rl.rlim_cur / 4),
                     (unsigned long long)rl.rlim_cur);
        *fds = rl.rlim_cur / 4;
    }
    /* Daemon-wide budgets below what the machine and the kernel allow, whatever the apps:
     * driver buffers half of the memory, content-cache copies a quarter, descriptors all
     * but 256 kept for the daemon's own files and the fds of requests being read. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    q->budget[NND_QUOTA_BUFFER_BYTES] = mem / 2;
    q->budget[NND_QUOTA_CACHE_BYTES] = mem / 4;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 512)
        q->budget[NND_QUOTA_DESCRIPTORS] = rl.rlim_cur - 256;
    return q;
}

void nnd_quota_free(nnd_quota *q) {
    if (!q) return;
    for (nnd_quota_app *a = q->apps, *next; a; a = next) {
        next = a->next;
        nnd_map_account_detach(a->maps);
        free(a);
    }
    free(q);
}

const nnd_quota_limits *nnd_quota_get_limits(const nnd_quota *q) {
    return &q->limits;
}

/* Counts a refusal, tells the bus, and words it into err. */
static nnd_status refuse(nnd_quota_app *a, const nnd_quota_conn *s, nnd_quota_res r, bool per_conn,
                         uint64_t limit, uint64_t held, uint64_t asked, char *err, size_t errlen) {
    nnd_quota *q = a->q;
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
    int level = a->refused[r] == 1 ? NND_LOG_WARN : NND_LOG_DEBUG;
    if (s)
        nnd_log(level, "client %llu (pid %d): %s", (unsigned long long)s->serial, (int)s->pid, err);
    else
        nnd_log(level, "%s", err);
    cJSON *ev = nnd_bus_event(q->d ? q->d->bus : NULL, "quota_refused");
    if (ev) {
        if (s)
            nnd_json_add_client(ev, s->serial, s->pid, a->uid);
        else
            cJSON_AddNumberToObject(ev, "uid", a->uid);
        cJSON_AddStringToObject(ev, "scope", scope);
        cJSON_AddStringToObject(ev, "quota", res_names[r]);
        nnd_json_add_u64(ev, "limit", limit);
        nnd_json_add_u64(ev, "held", held);
        nnd_json_add_u64(ev, "asked", asked);
    }
    nnd_bus_publish(q->d ? q->d->bus : NULL, ev);
    return NND_RESOURCE_EXHAUSTED_TRANSIENT;
}

/* Whether held + asked stays within limit (0: unlimited), without overflowing. */
static bool within(uint64_t limit, uint64_t held, uint64_t asked) {
    return !limit || (held <= limit && asked <= limit - held);
}

/* Whether n more of r fit the daemon-wide budget; else the refusal, naming the app that
 * holds the most (counted against a, which asked). */
static nnd_status check_budget(nnd_quota_app *a, const nnd_quota_conn *s, nnd_quota_res r,
                               uint64_t n, char *err, size_t errlen) {
    nnd_quota *q = a->q;
    uint64_t total = 0;
    for (const nnd_quota_app *x = q->apps; x; x = x->next)
        total += x->used[r];
    if (within(q->budget[r], total, n)) return NND_OK;
    const nnd_quota_app *top = nnd_quota_top_app(q, r);
    a->refused[r]++;
    q->refused_total[r]++;
    snprintf(err, errlen,
             "the daemon's budget of %s (%llu, for all apps) is used up: %llu held, %llu more "
             "asked; uid %u holds the most (%llu)",
             res_names[r], (unsigned long long)q->budget[r], (unsigned long long)total,
             (unsigned long long)n, top ? (unsigned)top->uid : 0u,
             top ? (unsigned long long)top->used[r] : 0ull);
    nnd_log_warn("uid %u (pid %d): %s", (unsigned)a->uid, s ? (int)s->pid : 0, err);
    return NND_RESOURCE_EXHAUSTED_TRANSIENT;
}

/* The map account's refusal (pool.h): the app's quota message, counted and published. */
static nnd_status refuse_mapping(void *owner, uint64_t limit, uint64_t held, char *err,
                                 size_t errlen) {
    return refuse(owner, NULL, NND_QUOTA_MAPPINGS, false, limit, held, 1, err, errlen);
}

nnd_status nnd_quota_connect(nnd_quota *q, struct nnd_session *session, char *err, size_t errlen) {
    nnd_quota_conn conn = nnd_session_quota_conn(session), *s = &conn;
    nnd_quota_app **at = &q->apps;
    while (*at && (*at)->uid < s->uid)
        at = &(*at)->next;
    nnd_quota_app *a = *at;
    if (!a || a->uid != s->uid) {
        a = calloc(1, sizeof *a);
        if (!a) {
            snprintf(err, errlen, "out of memory");
            return NND_GENERAL_FAILURE;
        }
        a->q = q;
        a->uid = s->uid;
        a->maps = nnd_map_account_new(q->limits.app[NND_QUOTA_MAPPINGS], refuse_mapping, a);
        if (!a->maps) {
            free(a);
            snprintf(err, errlen, "out of memory");
            return NND_GENERAL_FAILURE;
        }
        a->next = *at;
        *at = a;
    }
    /* A connection is also a descriptor the daemon holds for the app. */
    static const nnd_quota_res each[] = {NND_QUOTA_CONNECTIONS, NND_QUOTA_DESCRIPTORS};
    for (size_t i = 0; i < sizeof each / sizeof *each; i++) {
        nnd_quota_res r = each[i];
        uint64_t limit = q->limits.app[r];
        if (!within(limit, a->used[r], 1))
            return refuse(a, s, r, false, limit, a->used[r], 1, err, errlen);
        nnd_status st = check_budget(a, s, r, 1, err, errlen);
        if (st != NND_OK) return st;
    }
    *s->app = a;
    nnd_quota_add(session, NND_QUOTA_CONNECTIONS, 1);
    nnd_quota_add(session, NND_QUOTA_DESCRIPTORS, 1);
    return NND_OK;
}

void nnd_quota_disconnect(struct nnd_session *session) {
    nnd_quota_conn s = nnd_session_quota_conn(session);
    nnd_quota_app *a = *s.app;
    if (!a) return;
    nnd_quota_add(session, NND_QUOTA_CONNECTIONS, -1);
    nnd_quota_add(session, NND_QUOTA_DESCRIPTORS, -1);
    *s.app = NULL;
    if (a->used[NND_QUOTA_CONNECTIONS]) return;
    /* Its last connection is gone, and with it everything the app held. */
    for (int r = 0; r < NND_QUOTA_RES; r++)
        if (a->used[r] && r != NND_QUOTA_CACHE_TOKENS)
            nnd_log_warn("uid %u left with %llu %s still counted", (unsigned)a->uid,
                         (unsigned long long)a->used[r], res_names[r]);
    nnd_quota_app **at = &a->q->apps;
    while (*at != a)
        at = &(*at)->next;
    *at = a->next;
    nnd_map_account_detach(a->maps);
    free(a);
}

nnd_status nnd_quota_check(struct nnd_session *session, nnd_quota_res r, uint64_t n, char *err,
                           size_t errlen) {
    nnd_quota_conn conn = nnd_session_quota_conn(session), *s = &conn;
    nnd_quota_app *a = *s->app;
    if (!a) return NND_OK;
    const nnd_quota_limits *l = &a->q->limits;
    if (!nnd_quota_app_only(r) && !within(l->conn[r], s->used[r], n))
        return refuse(a, s, r, true, l->conn[r], s->used[r], n, err, errlen);
    if (!within(l->app[r], a->used[r], n))
        return refuse(a, s, r, false, l->app[r], a->used[r], n, err, errlen);
    return check_budget(a, s, r, n, err, errlen);
}

nnd_status nnd_quota_take(struct nnd_session *s, nnd_quota_res r, uint64_t n, char *err,
                          size_t errlen) {
    nnd_status st = nnd_quota_check(s, r, n, err, errlen);
    if (st == NND_OK) nnd_quota_add(s, r, (int64_t)n);
    return st;
}

void nnd_quota_add(struct nnd_session *session, nnd_quota_res r, int64_t delta) {
    nnd_quota_conn s = nnd_session_quota_conn(session);
    s.used[r] += (uint64_t)delta;
    if (*s.app) (*s.app)->used[r] += (uint64_t)delta;
}

nnd_quota_app *nnd_quota_app_find(nnd_quota *q, uid_t uid) {
    for (nnd_quota_app *a = q ? q->apps : NULL; a && a->uid <= uid; a = a->next)
        if (a->uid == uid) return a;
    return NULL;
}

nnd_status nnd_quota_app_check(const struct nnd_session *session, nnd_quota_res r, uint64_t n,
                               char *err, size_t errlen) {
    nnd_quota_conn conn = nnd_session_quota_conn(session), *s = &conn;
    nnd_quota_app *a = *s->app;
    if (!a) return NND_OK;
    uint64_t limit = a->q->limits.app[r];
    if (!within(limit, a->used[r], n))
        return refuse(a, s, r, false, limit, a->used[r], n, err, errlen);
    return check_budget(a, s, r, n, err, errlen);
}

void nnd_quota_app_charge(const struct nnd_session *session, nnd_quota_res r, uint64_t n) {
    nnd_quota_app *a = *nnd_session_quota_conn(session).app;
    if (a) a->used[r] += n;
}

void nnd_quota_app_give(nnd_quota *q, uid_t uid, nnd_quota_res r, uint64_t n) {
    nnd_quota_app *a = nnd_quota_app_find(q, uid);
    if (a) a->used[r] -= n < a->used[r] ? n : a->used[r];
}

uint64_t nnd_quota_app_used(const nnd_quota_app *a, nnd_quota_res r) {
    return r == NND_QUOTA_MAPPINGS ? nnd_map_account_mapped(a->maps) : a->used[r];
}

const nnd_quota_app *nnd_quota_top_app(const nnd_quota *q, nnd_quota_res r) {
    const nnd_quota_app *top = NULL;
    for (const nnd_quota_app *a = q ? q->apps : NULL; a; a = a->next)
        if (!top || nnd_quota_app_used(a, r) > nnd_quota_app_used(top, r)) top = a;
    return top;
}

/* ---- status ------------------------------------------------------------------------------ */

static void add_counts(cJSON *o, const uint64_t *v, bool per_app) {
    for (int r = 0; r < NND_QUOTA_RES; r++)
        if (per_app || !nnd_quota_app_only((nnd_quota_res)r))
            nnd_json_add_u64(o, res_names[r], v[r]);
}

cJSON *nnd_quota_status(const nnd_quota *q) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !q) return o;
    cJSON *lim = cJSON_AddObjectToObject(o, "limits");
    add_counts(cJSON_AddObjectToObject(lim, "app"), q->limits.app, true);
    add_counts(cJSON_AddObjectToObject(lim, "connection"), q->limits.conn, false);
    uint64_t total[NND_QUOTA_RES] = {0};
    cJSON *apps = cJSON_AddArrayToObject(o, "apps");
    for (const nnd_quota_app *a = q->apps; a; a = a->next) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddNumberToObject(e, "uid", a->uid);
        uint64_t used[NND_QUOTA_RES];
        for (int r = 0; r < NND_QUOTA_RES; r++)
            total[r] += used[r] = nnd_quota_app_used(a, (nnd_quota_res)r);
        add_counts(e, used, true);
        add_counts(cJSON_AddObjectToObject(e, "refused"), a->refused, true);
        cJSON_AddItemToArray(apps, e);
    }
    add_counts(cJSON_AddObjectToObject(lim, "daemon"), q->budget, true);
    cJSON *t = cJSON_AddObjectToObject(o, "totals");
    nnd_json_add_u64(t, "daemon_mappings", nnd_pool_mapped());
    nnd_json_add_u64(t, "daemon_mapping_budget", nnd_pool_map_budget());
    add_counts(t, total, true);
    add_counts(cJSON_AddObjectToObject(t, "refused"), q->refused_total, true);
    return o;
}

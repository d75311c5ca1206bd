/* SPDX-License-Identifier: Apache-2.0 */
/* cache.c: client cache files and the content cache. See cache.h. */
#include "daemon/cache/cache.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "daemon/base/bus.h"
#include "daemon/cache/cache_internal.h"
#include "storage/cachefile.h"
#include "storage/hash.h"
#include "storage/index.h"
#include "daemon/base/log.h"
#include "daemon/clients/pool.h"
#include "daemon/clients/rate.h"
#include "storage/serialize.h"
#include "daemon/cache/cache_devices.h"

#define SRV_CACHE_TOUCH_NS (10ll * 1000000000) /* store rows record use at most this often */

static int64_t realtime_ns(void) {
    return (int64_t)srv_clock_ns(CLOCK_REALTIME);
}

/* ---- events ---------------------------------------------------------------------------- */

static cJSON *event(const srv_cache *c, const char *name, const srv_session *s,
                    const uint8_t *key) {
    cJSON *ev = srv_bus_event(c->d->bus, name);
    if (!ev) return NULL;
    if (s) srv_json_add_client(ev, s->serial, s->pid, s->uid);
    if (key) {
        char hex[2 * STORE_HASH_LEN + 1];
        store_hex(key, STORE_HASH_LEN, hex);
        cJSON_AddStringToObject(ev, "hash", hex);
    }
    return ev;
}

static void publish(srv_cache *c, cJSON *ev) {
    srv_bus_publish(c->d->bus, ev);
}

/* A write to the state directory failed (full, read-only, gone): one warning, one event,
 * and no more writes there, so that a full disk costs the cache and not every prepare. */
static void disk_failed(srv_cache *c, const char *why) {
    if (c->disk_off) return;
    c->disk_off = true;
    snprintf(c->disk_off_reason, sizeof c->disk_off_reason, "%s", why);
    srv_log_warn("compilation cache: writing to the state directory %s failed (%s); caching on "
                 "disk is off until restart, serving goes on",
                 c->d->state_dir, why);
    cJSON *ev = event(c, "cache_disabled", NULL, NULL);
    if (ev) cJSON_AddStringToObject(ev, "reason", why);
    publish(c, ev);
}

/* ---- the table and LRU ----------------------------------------------------------------- */

static size_t bucket_of(const uint8_t key[STORE_HASH_LEN]) {
    size_t b;
    memcpy(&b, key, sizeof b);
    return b % SRV_CACHE_BUCKETS;
}

static void lru_unlink(srv_cache *c, srv_cache_ref *e) {
    if (e->lru_prev)
        e->lru_prev->lru_next = e->lru_next;
    else
        c->lru_head = e->lru_next;
    if (e->lru_next)
        e->lru_next->lru_prev = e->lru_prev;
    else
        c->lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(srv_cache *c, srv_cache_ref *e) {
    e->lru_prev = NULL;
    e->lru_next = c->lru_head;
    if (c->lru_head) c->lru_head->lru_prev = e;
    c->lru_head = e;
    if (!c->lru_tail) c->lru_tail = e;
}

static void touch(srv_cache *c, srv_cache_ref *e) {
    if (!e->listed) return;
    lru_unlink(c, e);
    lru_push_front(c, e);
}

static void unlist(srv_cache *c, srv_cache_ref *e) {
    if (!e->listed) return;
    srv_cache_ref **pp = &c->buckets[bucket_of(e->key)];
    while (*pp != e)
        pp = &(*pp)->next_in_bucket;
    *pp = e->next_in_bucket;
    lru_unlink(c, e);
    e->listed = false;
    c->memory_bytes -= e->bytes;
    c->memory_models--;
}

srv_cache_ref *srv_cache_lookup(srv_cache *c, const uint8_t key[STORE_HASH_LEN]) {
    for (srv_cache_ref *e = c->buckets[bucket_of(key)]; e; e = e->next_in_bucket) {
        if (memcmp(e->key, key, STORE_HASH_LEN)) continue;
        /* A disabled driver is out of every device set, this cache's too: a compilation
         * with steps on one leaves the table (its users keep it until they release it),
         * and the caller prepares the model again, for the devices left. */
        if (srv_device_runs_disabled(e->prepared)) {
            unlist(c, e);
            if (e->refs == 0) srv_cache_entry_free(e);
            return NULL;
        }
        return e;
    }
    return NULL;
}

/* Frees idle models, least recently used first, until the cap holds. */
static void evict_memory(srv_cache *c) {
    srv_cache_ref *e = c->lru_tail;
    while (e && c->memory_bytes > c->max_bytes) {
        srv_cache_ref *prev = e->lru_prev;
        if (e->refs == 0) {
            cJSON *ev = event(c, "cache_evicted", NULL, e->key);
            if (ev) {
                cJSON_AddStringToObject(ev, "tier", "memory");
                srv_json_add_u64(ev, "bytes", e->bytes);
            }
            publish(c, ev);
            c->n.evicted++;
            unlist(c, e);
            srv_cache_entry_free(e);
        }
        e = prev;
    }
}

const eng_prepared *srv_cache_ref_prepared(const srv_cache_ref *r) {
    return r->prepared;
}

void srv_cache_unref(srv_cache_ref *e, uint32_t uid) {
    if (!e) return;
    if (uid != SRV_CACHE_NO_USER)
        srv_cache_users_drop(&e->users, e->cache->d->quota, uid, e->bytes);
    if (--e->refs > 0) return;
    if (!e->listed)
        srv_cache_entry_free(e);
    else
        evict_memory(e->cache);
}

/* ---- the store (content cache on disk) ------------------------------------------------- */

typedef struct store_job {
    uv_work_t req;
    srv_cache_ref *e;
    int rc;
    char err[256];
} store_job;

static void store_work(uv_work_t *req) {
    store_job *j = req->data;
    srv_cache_ref *e = j->e;
    j->rc = store_write(e->cache->store_dir, e->key, e->model.p, e->model.len, e->data->p,
                        e->data->len, j->err, sizeof j->err);
}

typedef struct victims {
    int64_t excess;
    size_t n, cap;
    store_content_row *rows;
} victims;

static int pick_victim(const store_content_row *row, void *ctx) {
    victims *v = ctx;
    if (v->excess <= 0) return 1;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        store_content_row *rows = realloc(v->rows, cap * sizeof *rows);
        if (!rows) return 1;
        v->rows = rows, v->cap = cap;
    }
    v->rows[v->n++] = *row;
    v->excess -= (int64_t)(row->model_size + row->data_size);
    return 0;
}

/* Deletes least recently used store entries until the store fits its cap. */
static void evict_store(srv_cache *c) {
    int64_t rows, bytes;
    if (c->disk_off || store_index_content_totals(c->index, &rows, &bytes) < 0) return;
    victims v = {.excess = bytes - (int64_t)c->max_bytes};
    char err[256];
    if (v.excess > 0) store_index_content_foreach(c->index, pick_victim, &v, err, sizeof err);
    for (size_t i = 0; i < v.n; i++) {
        if (store_index_content_delete(c->index, v.rows[i].hash, err, sizeof err) < 0) {
            disk_failed(c, err);
            break;
        }
        store_remove(c->store_dir, v.rows[i].hash);
        cJSON *ev = event(c, "cache_evicted", NULL, v.rows[i].hash);
        if (ev) {
            cJSON_AddStringToObject(ev, "tier", "store");
            srv_json_add_u64(ev, "bytes", v.rows[i].model_size + v.rows[i].data_size);
        }
        publish(c, ev);
        c->n.evicted++;
    }
    free(v.rows);
}

static void store_done(uv_work_t *req, int status) {
    store_job *j = req->data;
    srv_cache_ref *e = j->e;
    srv_cache *c = e->cache;
    char err[256];
    if (!e->listed || c->disk_off) {
        /* Purged or evicted while it was being written, or the disk side went off. */
        if (status == 0 && j->rc == 0) store_remove(c->store_dir, e->key);
    } else if (status == 0 && j->rc == 0) {
        int64_t now = realtime_ns();
        store_content_row row = {.preference = e->preference,
                                 .model_size = e->model.len,
                                 .data_size = e->data->len,
                                 .created_ns = now,
                                 .last_used_ns = now};
        memcpy(row.hash, e->key, STORE_HASH_LEN);
        if (store_index_content_put(c->index, &row, err, sizeof err) < 0) {
            disk_failed(c, err);
            store_remove(c->store_dir, e->key);
        } else {
            evict_store(c);
        }
    } else {
        if (status) snprintf(err, sizeof err, "content store: %s", uv_strerror(status));
        disk_failed(c, status ? err : j->err);
    }
    e->storing = false;
    free(j);
    srv_cache_unref(e, SRV_CACHE_NO_USER);
}

/* Records a use of e in the store: a new row (written off the loop thread) or a touch. */
static void store_use(srv_cache *c, srv_cache_ref *e) {
    if (!c->max_bytes || e->storing || c->disk_off) return;
    char err[256];
    store_content_row row;
    int have = store_index_content_get(c->index, e->key, &row, err, sizeof err);
    if (have > 0) {
        /* Each touch is an fsync'd transaction: LRU order needs no finer grain. */
        int64_t now = realtime_ns();
        if (now - row.last_used_ns >= SRV_CACHE_TOUCH_NS &&
            store_index_content_touch(c->index, e->key, now, err, sizeof err) < 0)
            disk_failed(c, err);
        return;
    }
    if (have < 0 || e->model.len + e->data->len > c->max_bytes) return;
    store_job *j = calloc(1, sizeof *j);
    if (!j) return;
    j->req.data = j;
    j->e = e;
    e->refs++;
    e->storing = true;
    if (uv_queue_work(c->d->loop, &j->req, store_work, store_done) != 0) {
        e->storing = false;
        e->refs--;
        free(j);
    }
}

/* ---- preparing from serialized bytes --------------------------------------------------- */

/* Lists a new entry in the content cache (when on) and the store. */
static void adopt(srv_cache *c, srv_cache_ref *e) {
    if (!c->max_bytes) return;
    e->next_in_bucket = c->buckets[bucket_of(e->key)];
    c->buckets[bucket_of(e->key)] = e;
    lru_push_front(c, e);
    e->listed = true;
    c->memory_bytes += e->bytes;
    c->memory_models++;
    store_use(c, e);
    evict_memory(c);
}

static void content_event(srv_cache *c, const srv_session *s, const srv_cache_ref *e, bool hit,
                          const char *tier) {
    if (!c->max_bytes) return;
    if (hit)
        c->n.content_hits++;
    else
        c->n.content_misses++;
    cJSON *ev = event(c, hit ? "cache_hit" : "cache_miss", s, e->key);
    if (ev) {
        cJSON_AddStringToObject(ev, "source", "content");
        if (tier) cJSON_AddStringToObject(ev, "tier", tier);
        srv_json_add_u64(ev, "bytes", e->bytes);
    }
    publish(c, ev);
}

/* ---- save ------------------------------------------------------------------------------ */

/* Index row first, then the files: a crash between the two leaves files that do not match
 * the row, which the next load refuses. */
static void save_client_cache(srv_cache *c, const srv_session *s, const uint8_t *token,
                              const uint8_t key[STORE_HASH_LEN], const store_buf *model,
                              const store_buf *data, int model_fd, int data_fd) {
    char err[512] = "";
    store_token_row row = {
        .model_size = model->len, .data_size = data->len, .created_ns = realtime_ns()};
    memcpy(row.hash, key, STORE_HASH_LEN);
    int fds[2] = {model_fd, data_fd}, written = 0, rc;
    uint64_t size;
    if (c->disk_off) {
        c->n.saves_skipped++; /* said once, when the disk side went off */
        return;
    }
    if (store_cachefile_size(model_fd, &size) < 0 || store_cachefile_size(data_fd, &size) < 0) {
        schema_errf(err, sizeof err, "cache fds must be regular files");
        goto fail;
    }
    /* Each new row is an fsync on the loop: no app may keep it at that (rate.h). Files
     * rewritten under a row that stays as it was cost no write. */
    store_token_row old;
    bool same =
        store_index_token_get(c->index, (uint32_t)s->uid, token, &old, err, sizeof err) == 1 &&
        !memcmp(old.hash, row.hash, STORE_HASH_LEN) && old.model_size == row.model_size &&
        old.data_size == row.data_size;
    if (!same && !srv_rate_take(s->uid, SRV_RATE_INDEX_WRITE, 1, srv_now_ns())) {
        c->n.rate_skipped++;
        return;
    }
    /* Each uid keeps at most quota.app.cache_tokens rows: its least recently used go. */
    int64_t pruned = 0;
    const srv_quota_limits *l = c->d->quota ? srv_quota_get_limits(c->d->quota) : NULL;
    rc = store_index_token_put(c->index, (uint32_t)s->uid, token, &row,
                               l ? l->app[SRV_QUOTA_CACHE_TOKENS] : 0, &written, &pruned, err,
                               sizeof err);
    if (rc < 0) { /* the state directory's fault, not the client's */
        c->n.store_errors++;
        disk_failed(c, err);
        return;
    }
    if (pruned) {
        c->n.tokens_pruned += (uint64_t)pruned;
        srv_log_debug("client %llu: %lld least recently used cache tokens of uid %u pruned "
                      "(quota.app.cache_tokens)",
                      (unsigned long long)s->serial, (long long)pruned, (unsigned)s->uid);
    }
    rc = store_cachefile_lock(fds, 2, true, SRV_CACHE_LOCK_TIMEOUT_MS);
    if (rc < 0) {
        schema_errf(err, sizeof err, "cache files are locked by someone else: %s", strerror(-rc));
        goto fail;
    }
    rc = store_cachefile_write(model_fd, model->p, model->len, 0, err, sizeof err);
    if (rc == 0)
        rc = store_cachefile_write(data_fd, data->p, data->len, c->stall_at, err, sizeof err);
    store_cachefile_unlock(fds, 2);
    if (rc < 0) goto fail;
    c->n.stored++;
    return;
fail:
    c->n.store_errors++;
    srv_log_client(SRV_LOG_WARN, "client %llu: cache not saved: %s", (unsigned long long)s->serial,
                   err);
}

/* The reference just taken on e becomes s's, charged to its app. */
static schema_status add_user(srv_cache_ref *e, const srv_session *s, srv_cache_ref **out,
                              char *err, size_t errlen) {
    if (srv_cache_users_add(&e->users, s, e->bytes) < 0) {
        srv_cache_unref(e, SRV_CACHE_NO_USER);
        schema_errf(err, errlen, "out of memory");
        return SCHEMA_GENERAL_FAILURE;
    }
    *out = e;
    return SCHEMA_OK;
}

schema_status srv_cache_encode(const srv_cache *c, const eng_model_desc *m, uint32_t preference,
                               srv_cache_encoded *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    uint64_t faults = srv_pool_faults(); /* this thread's: the copy reads client pages here */
    schema_status st =
        store_ser_encode(m, preference, c->build_id, &out->model, &out->data, err, errlen);
    if (st != SCHEMA_OK) return st;
    if (srv_pool_faults() != faults) {
        srv_cache_encoded_free(out);
        schema_errf(err, errlen, "a model pool shrank while the model was prepared");
        return SCHEMA_GENERAL_FAILURE;
    }
    uint8_t digest[2][STORE_HASH_LEN];
    const uint8_t *p[2] = {out->model.p, out->data.p};
    size_t len[2] = {out->model.len, out->data.len};
    if (store_hash_bufs(p, len, 2, digest) < 0) {
        srv_cache_encoded_free(out);
        schema_errf(err, errlen, "out of memory hashing the model");
        return SCHEMA_GENERAL_FAILURE;
    }
    store_hash_combine(digest[0], digest[1], out->key);
    memcpy(out->data_digest, digest[1], STORE_HASH_LEN);
    if (m->n_drivers) memcpy(out->dev.drivers, m->drivers, sizeof(*m->drivers) * m->n_drivers);
    out->dev.n_drivers = m->n_drivers;
    out->dev.drivers_only = m->drivers_only;
    out->dev.cpu_last = m->cpu_last;
    srv_cache_devices_fold(m, out->key);
    return SCHEMA_OK;
}

void srv_cache_encoded_free(srv_cache_encoded *x) {
    store_buf_free(&x->model);
    store_buf_free(&x->data);
}

/* Answers from e, the listed entry of x's key: x is freed. */
static void use_listed(srv_cache *c, const srv_session *s, srv_cache_ref *e, srv_cache_encoded *x,
                       const uint8_t *token, int model_fd, int data_fd) {
    e->refs++;
    touch(c, e);
    store_use(c, e);
    content_event(c, s, e, true, "memory");
    if (token && !e->no_files)
        save_client_cache(c, s, token, e->file_key, &e->model, e->data, model_fd, data_fd);
    srv_cache_encoded_free(x);
}

/* The client-cache miss counted, then s's reference on e. */
static schema_status answer_entry(srv_cache *c, const srv_session *s, srv_cache_ref *e,
                                  const uint8_t *key, const uint8_t *token, srv_cache_ref **out,
                                  char *err, size_t errlen) {
    if (token) {
        c->n.misses++;
        cJSON *ev = event(c, "cache_miss", s, key);
        if (ev) cJSON_AddStringToObject(ev, "source", "client");
        publish(c, ev);
    }
    return add_user(e, s, out, err, errlen);
}

bool srv_cache_encoded_hit(srv_cache *c, const srv_session *s, srv_cache_encoded *x,
                           eng_prepared *plan, const uint8_t *token, int model_fd, int data_fd,
                           srv_cache_ref **out, schema_status *st, char *err, size_t errlen) {
    *out = NULL;
    c->n.hashed_bytes += x->model.len + x->data.len;
    srv_cache_ref *e = srv_cache_lookup(c, x->key);
    if (!e) return false;
    eng_prepared_free(plan); /* the entry is the same model, prepared already */
    use_listed(c, s, e, x, token, model_fd, data_fd);
    *st = answer_entry(c, s, e, x->key, token, out, err, errlen);
    return true;
}

schema_status srv_cache_entry_make(srv_cache *c, srv_cache_encoded *x, eng_prepared *plan,
                                   srv_cache_ref **made, char *err, size_t errlen) {
    return srv_cache_make_entry(c, x, &x->model, &x->data, plan, made, err, errlen);
}

void srv_cache_made_free(srv_cache_ref *made) {
    if (made) srv_cache_entry_free(made);
}

schema_status srv_cache_entry_adopt(srv_cache *c, const srv_session *s, srv_cache_encoded *x,
                                    srv_cache_ref *made, const uint8_t *token, int model_fd,
                                    int data_fd, srv_cache_ref **out, char *err, size_t errlen) {
    *out = NULL;
    srv_cache_ref *e = srv_cache_lookup(c, x->key);
    if (e) { /* another preparation of the same model listed it meanwhile */
        srv_cache_entry_free(made);
        use_listed(c, s, e, x, token, model_fd, data_fd);
    } else {
        e = made;
        if (token && !e->no_files)
            save_client_cache(c, s, token, e->file_key, &e->model, e->data, model_fd, data_fd);
        content_event(c, s, e, false, NULL);
        adopt(c, e);
    }
    return answer_entry(c, s, e, x->key, token, out, err, errlen);
}

schema_status srv_cache_prepare_encoded(srv_cache *c, const srv_session *s, srv_cache_encoded *x,
                                        eng_prepared *plan, const uint8_t *token, int model_fd,
                                        int data_fd, srv_cache_ref **out, char *err,
                                        size_t errlen) {
    schema_status st;
    if (srv_cache_encoded_hit(c, s, x, plan, token, model_fd, data_fd, out, &st, err, errlen))
        return st;
    srv_cache_ref *made;
    st = srv_cache_entry_make(c, x, plan, &made, err, errlen);
    if (st != SCHEMA_OK) return st;
    return srv_cache_entry_adopt(c, s, x, made, token, model_fd, data_fd, out, err, errlen);
}

schema_status srv_cache_prepare(srv_cache *c, const srv_session *s, const eng_model_desc *m,
                                uint32_t preference, const uint8_t *token, int model_fd,
                                int data_fd, srv_cache_ref **out, char *err, size_t errlen) {
    *out = NULL;
    eng_prepared *plan = NULL;
    schema_status st = eng_plan(m, &plan, err, errlen);
    if (st != SCHEMA_OK) return st;
    srv_cache_encoded x;
    st = srv_cache_encode(c, m, preference, &x, err, errlen);
    if (st != SCHEMA_OK) {
        eng_prepared_free(plan);
        return st;
    }
    return srv_cache_prepare_encoded(c, s, &x, plan, token, model_fd, data_fd, out, err, errlen);
}

/* ---- load ------------------------------------------------------------------------------ */

static schema_status reject(srv_cache *c, const srv_session *s, const char *client_reason,
                            const char *reason, char *err, size_t errlen) {
    c->n.rejected++;
    schema_errf(err, errlen, "cache rejected: %s", client_reason);
    srv_log_client(SRV_LOG_INFO, "client %llu: cache rejected: %s", (unsigned long long)s->serial,
                   reason);
    cJSON *ev = event(c, "cache_rejected", s, NULL);
    if (ev) cJSON_AddStringToObject(ev, "reason", reason);
    publish(c, ev);
    return SCHEMA_GENERAL_FAILURE;
}

/* Names what is wrong with the files' sizes, or returns false when they are right. */
static bool wrong_sizes(const store_token_row *row, uint64_t msize, uint64_t dsize, char *why,
                        size_t len) {
    if (msize == row->model_size && dsize == row->data_size) return false;
    if (msize == row->data_size && dsize == row->model_size)
        snprintf(why, len, "the model and data cache files are swapped");
    else if (msize != row->model_size)
        snprintf(why, len, "model cache is %llu bytes, %s; %llu were written",
                 (unsigned long long)msize, msize < row->model_size ? "truncated" : "extended",
                 (unsigned long long)row->model_size);
    else
        snprintf(why, len, "data cache is %llu bytes, %s; %llu were written",
                 (unsigned long long)dsize, dsize < row->data_size ? "truncated" : "extended",
                 (unsigned long long)row->data_size);
    return true;
}

schema_status srv_cache_prepare_from_cache(srv_cache *c, const srv_session *s,
                                           const uint8_t token[SRV_CACHE_TOKEN_LEN], int model_fd,
                                           int data_fd, srv_cache_ref **out, char *err,
                                           size_t errlen) {
    *out = NULL;
    char why[512];
    store_token_row row;
    int found = store_index_token_get(c->index, (uint32_t)s->uid, token, &row, why, sizeof why);
    if (found < 0) return reject(c, s, "the cache index failed", why, err, errlen);
    if (!found) {
        bool foreign =
            store_index_token_elsewhere(c->index, (uint32_t)s->uid, token, why, sizeof why) > 0;
        return reject(c, s, "unknown token",
                      foreign ? "token belongs to another uid" : "unknown token", err, errlen);
    }
    uint64_t msize, dsize;
    if (store_cachefile_size(model_fd, &msize) < 0 || store_cachefile_size(data_fd, &dsize) < 0)
        return reject(c, s, "cache fds must be regular files", "not regular files", err, errlen);
    if (wrong_sizes(&row, msize, dsize, why, sizeof why))
        return reject(c, s, why, why, err, errlen);

    /* Loads keep a token recently used (coalesced as store touches are). */
    int64_t now = realtime_ns();
    if (!c->disk_off && now - row.last_used_ns >= SRV_CACHE_TOUCH_NS &&
        store_index_token_touch(c->index, (uint32_t)s->uid, token, now, why, sizeof why) < 0)
        disk_failed(c, why);
    /* Reading them makes a copy in daemon memory, which the app pays for. */
    if (srv_quota_app_check(&s->quota, SRV_QUOTA_CACHE_BYTES, msize + dsize, why, sizeof why) !=
        SCHEMA_OK)
        return reject(c, s, why, "cache_bytes quota", err, errlen);
    int fds[2] = {model_fd, data_fd};
    int rc = store_cachefile_lock(fds, 2, false, SRV_CACHE_LOCK_TIMEOUT_MS);
    if (rc < 0) return reject(c, s, "cache files are busy", "cache files locked", err, errlen);
    store_buf bufs[2];
    uint8_t digest[2][STORE_HASH_LEN], key[STORE_HASH_LEN];
    size_t sizes[2] = {(size_t)msize, (size_t)dsize};
    /* A model the content cache holds needs its files verified only; any other is decoded
     * and prepared while they are hashed, and kept only if the digest matches. */
    srv_cache_ref *held = srv_cache_lookup(c, row.hash), *e = held;
    rc = held ? store_hash_read(fds, sizes, 2, bufs, digest, why, sizeof why)
              : store_buf_read(fds, sizes, 2, bufs, why, sizeof why);
    store_cachefile_unlock(fds, 2);
    if (rc < 0) return reject(c, s, why, why, err, errlen);
    schema_status made = SCHEMA_OK;
    if (held) {
        store_buf_free(&bufs[0]), store_buf_free(&bufs[1]);
        store_hash_combine(digest[0], digest[1], key);
    } else if (srv_cache_prepare_while_hashing(c, bufs, row.hash, key, &e, &made, why, sizeof why) <
               0) {
        return reject(c, s, why, why, err, errlen);
    }
    if (memcmp(key, row.hash, STORE_HASH_LEN) != 0) {
        if (!held && e) srv_cache_entry_free(e);
        return reject(c, s, "cache files do not match what was saved", "hash mismatch", err,
                      errlen);
    }
    if (made != SCHEMA_OK)
        return reject(c, s, "cache files are not a valid model", why, err, errlen);
    if (held) {
        e->refs++;
        touch(c, e);
        store_use(c, e);
        content_event(c, s, e, true, "memory");
    } else {
        adopt(c, e);
    }
    c->n.hits++;
    cJSON *ev = event(c, "cache_hit", s, key);
    if (ev) {
        cJSON_AddStringToObject(ev, "source", "client");
        srv_json_add_u64(ev, "bytes", msize + dsize);
    }
    publish(c, ev);
    return add_user(e, s, out, err, errlen);
}

/* ---- open and close -------------------------------------------------------------------- */

static bool in_index(const uint8_t hash[STORE_HASH_LEN], void *ctx) {
    srv_cache *c = ctx;
    store_content_row row;
    char err[256];
    return store_index_content_get(c->index, hash, &row, err, sizeof err) != 0;
}

srv_cache *srv_cache_open(srv_daemon *d, const char *build_id, uint64_t max_bytes, char *err,
                          size_t errlen) {
    srv_cache *c = calloc(1, sizeof *c);
    if (!c) {
        schema_errf(err, errlen, "out of memory");
        return NULL;
    }
    c->d = d;
    c->max_bytes = max_bytes;
    if (strlen(build_id) > STORE_SER_BUILD_ID_MAX) {
        schema_errf(err, errlen, "driver build id longer than %d bytes", STORE_SER_BUILD_ID_MAX);
        free(c);
        return NULL;
    }
    snprintf(c->build_id, sizeof c->build_id, "%s", build_id);
    const char *stall = getenv("NND_TEST_CACHE_WRITE_STALL");
    if (stall && *stall) c->stall_at = (size_t)strtoull(stall, NULL, 10);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/cache.db", d->state_dir) >= (int)sizeof path ||
        snprintf(c->store_dir, sizeof c->store_dir, "%s/content", d->state_dir) >=
            (int)sizeof c->store_dir) {
        schema_errf(err, errlen, "state directory path too long");
        free(c);
        return NULL;
    }
    if (mkdir(c->store_dir, 0700) < 0 && errno != EEXIST) {
        schema_errf(err, errlen, "cannot create %s: %s", c->store_dir, strerror(errno));
        free(c);
        return NULL;
    }
    c->index = store_index_open(path, c->build_id, &c->n.invalidated_at_start, err, errlen);
    if (!c->index) {
        free(c);
        return NULL;
    }
    /* Store files without a row: crash leftovers, or entries of an older build. */
    int swept = store_sweep(c->store_dir, in_index, c);
    if (c->n.invalidated_at_start || swept)
        srv_log_info("cache: driver build %s; %llu index entries of other builds dropped, %d "
                     "stale store files removed",
                     c->build_id, (unsigned long long)c->n.invalidated_at_start, swept);
    return c;
}

void srv_cache_set_save_max(srv_cache *c, uint64_t bytes) {
    if (c) c->save_max_bytes = bytes;
}

uint64_t srv_cache_save_max(const srv_cache *c) {
    return c ? c->save_max_bytes : 0;
}

void srv_cache_close(srv_cache *c) {
    if (!c) return;
    while (c->lru_head) {
        srv_cache_ref *e = c->lru_head;
        unlist(c, e);
        if (e->refs == 0) srv_cache_entry_free(e);
        /* A model still referenced frees itself at its last unref. */
    }
    store_index_close(c->index);
    free(c);
}

/* ---- admin ----------------------------------------------------------------------------- */

static bool keep_none(const uint8_t hash[STORE_HASH_LEN], void *ctx) {
    (void)hash, (void)ctx;
    return false;
}

cJSON *srv_cache_purge(srv_cache *c) {
    cJSON *reply = cJSON_CreateObject();
    if (!reply) return NULL;
    if (!c) {
        cJSON_AddBoolToObject(reply, "ok", 0);
        cJSON_AddStringToObject(reply, "error", "caching is off");
        return reply;
    }
    int64_t tokens = 0, rows = 0;
    char err[256];
    if (store_index_purge(c->index, &tokens, &rows, err, sizeof err) < 0) {
        cJSON_AddBoolToObject(reply, "ok", 0);
        cJSON_AddStringToObject(reply, "error", err);
        return reply;
    }
    /* Store writes still under way finish into a folder we sweep again at start. */
    int files = store_sweep(c->store_dir, keep_none, NULL);
    size_t models = 0;
    while (c->lru_head) {
        srv_cache_ref *e = c->lru_head;
        unlist(c, e);
        models++;
        if (e->refs == 0) srv_cache_entry_free(e);
    }
    c->n.evicted += models;
    cJSON *ev = event(c, "cache_evicted", NULL, NULL);
    if (ev) {
        cJSON_AddStringToObject(ev, "tier", "all");
        cJSON_AddStringToObject(ev, "reason", "purge");
        srv_json_add_u64(ev, "models", models);
    }
    publish(c, ev);
    cJSON_AddBoolToObject(reply, "ok", 1);
    srv_json_add_u64(reply, "tokens", (uint64_t)tokens);
    srv_json_add_u64(reply, "store_entries", (uint64_t)rows);
    srv_json_add_u64(reply, "store_files", (uint64_t)files);
    srv_json_add_u64(reply, "memory_models", models);
    return reply;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* cache_admin.c: the compilation cache as the admin bus shows it (status, `nndctl cache
 * list`). See cache.h. */
#include <stdio.h>

#include "daemon/base/bus.h"
#include "daemon/cache/cache.h"
#include "daemon/cache/cache_internal.h"

void srv_cache_status(srv_cache *c, const char *off_reason, cJSON *reply) {
    cJSON *o = cJSON_AddObjectToObject(reply, "cache");
    if (!o) return;
    cJSON_AddBoolToObject(o, "enabled", c != NULL);
    cJSON_AddBoolToObject(o, "disk", c && !c->disk_off);
    if (!c || c->disk_off) {
        const char *why = c ? c->disk_off_reason : off_reason;
        cJSON_AddStringToObject(o, "disabled_reason", why ? why : "");
    }
    if (!c) return;
    cJSON_AddStringToObject(o, "build_id", c->build_id);
    srv_json_add_u64(o, "hits", c->n.hits);
    srv_json_add_u64(o, "misses", c->n.misses);
    srv_json_add_u64(o, "rejected", c->n.rejected);
    srv_json_add_u64(o, "content_hits", c->n.content_hits);
    srv_json_add_u64(o, "content_misses", c->n.content_misses);
    srv_json_add_u64(o, "evicted", c->n.evicted);
    srv_json_add_u64(o, "stored", c->n.stored);
    srv_json_add_u64(o, "store_errors", c->n.store_errors);
    srv_json_add_u64(o, "saves_skipped", c->n.saves_skipped);
    srv_json_add_u64(o, "saves_over_limit", c->n.saves_over_limit);
    srv_json_add_u64(o, "save_max_bytes", c->save_max_bytes);
    srv_json_add_u64(o, "quota_skipped", c->n.quota_skipped);
    srv_json_add_u64(o, "tokens_pruned", c->n.tokens_pruned);
    srv_json_add_u64(o, "rate_skipped", c->n.rate_skipped);
    srv_json_add_u64(o, "first_sightings", c->n.first_sightings);
    srv_json_add_u64(o, "hashed_bytes", c->n.hashed_bytes);
    srv_json_add_u64(o, "invalidated_at_start", c->n.invalidated_at_start);
    int64_t tokens = store_index_token_count(c->index), rows = 0, bytes = 0;
    store_index_content_totals(c->index, &rows, &bytes);
    srv_json_add_u64(o, "tokens", tokens > 0 ? (uint64_t)tokens : 0);
    srv_json_add_u64(o, "max_bytes", c->max_bytes);
    srv_json_add_u64(o, "store_entries", rows > 0 ? (uint64_t)rows : 0);
    srv_json_add_u64(o, "store_bytes", bytes > 0 ? (uint64_t)bytes : 0);
    srv_json_add_u64(o, "memory_models", c->memory_models);
    srv_json_add_u64(o, "memory_bytes", c->memory_bytes);
}

static void add_entry_json(cJSON *a, const uint8_t *hash, uint32_t preference, uint64_t msize,
                           uint64_t dsize, const store_content_row *row, const srv_cache_ref *e) {
    cJSON *j = cJSON_CreateObject();
    if (!j) return;
    char hex[2 * STORE_HASH_LEN + 1];
    store_hex(hash, STORE_HASH_LEN, hex);
    cJSON_AddStringToObject(j, "hash", hex);
    cJSON_AddNumberToObject(j, "preference", preference);
    srv_json_add_u64(j, "model_bytes", msize);
    srv_json_add_u64(j, "data_bytes", dsize);
    cJSON_AddBoolToObject(j, "stored", row != NULL);
    if (row) {
        srv_json_add_u64(j, "created_ns", (uint64_t)row->created_ns);
        srv_json_add_u64(j, "last_used_ns", (uint64_t)row->last_used_ns);
        srv_json_add_u64(j, "hits", row->hits);
    }
    cJSON_AddBoolToObject(j, "in_memory", e != NULL);
    cJSON_AddNumberToObject(j, "users", e ? (double)e->refs - (e->storing ? 1 : 0) : 0);
    cJSON_AddItemToArray(a, j);
}

typedef struct list_ctx {
    srv_cache *c;
    cJSON *entries;
} list_ctx;

static int list_row(const store_content_row *row, void *ctx) {
    list_ctx *l = ctx;
    add_entry_json(l->entries, row->hash, row->preference, row->model_size, row->data_size, row,
                   srv_cache_lookup(l->c, row->hash));
    return 0;
}

cJSON *srv_cache_list(srv_cache *c) {
    cJSON *reply = cJSON_CreateObject();
    if (!reply) return NULL;
    cJSON *entries = cJSON_CreateArray();
    list_ctx l = {.c = c, .entries = entries};
    char err[256];
    if (c && entries && store_index_content_foreach(c->index, list_row, &l, err, sizeof err) < 0) {
        cJSON_Delete(entries);
        cJSON_AddBoolToObject(reply, "ok", 0);
        cJSON_AddStringToObject(reply, "error", err);
        return reply;
    }
    /* Models in memory that the store does not hold (yet, or too big for it). */
    for (srv_cache_ref *e = c ? c->lru_head : NULL; e && entries; e = e->lru_next) {
        store_content_row row;
        if (store_index_content_get(c->index, e->key, &row, err, sizeof err) == 0)
            add_entry_json(entries, e->key, e->preference, e->model.len, e->data->len, NULL, e);
    }
    cJSON_AddBoolToObject(reply, "ok", 1);
    cJSON_AddItemToObject(reply, "entries", entries);
    return reply;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* cache_internal: the compilation cache's state, shared by cache.c (preparing, the store,
 * client caches), cache_entry.c (entries from serialized bytes) and cache_admin.c (status
 * and listing) only. Loop thread only. */
#ifndef SRV_CACHE_CACHE_INTERNAL_H
#define SRV_CACHE_CACHE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/cache/cache_encoded.h"
#include "daemon/cache/cache_users.h"
#include "daemon/base/daemon.h"
#include "engine/engine.h"
#include "storage/hash.h"
#include "storage/index.h"
#include "storage/serialize.h"
#include "daemon/cache/sighting.h"

#define SRV_CACHE_BUCKETS 1024

/* cache.h's types, named here without including it: cache.c, which includes this header,
 * is cache.h's own unit. */
typedef struct srv_cache srv_cache;
typedef struct srv_cache_ref srv_cache_ref;

/* A prepared model made from serialized bytes, keyed by their digest. */
struct srv_cache_ref {
    srv_cache *cache;
    uint8_t key[STORE_HASH_LEN];
    /* The digest client cache files of this entry have (model bytes with the device
     * section, data); the key itself for models without drivers. */
    uint8_t file_key[STORE_HASH_LEN];
    bool no_files; /* a driver gave no blob: not written to client cache files */
    eng_prepared *prepared;
    store_buf model;       /* the model cache bytes, kept for the store write */
    const store_buf *data; /* the data cache bytes, owned by prepared (its pool 0) */
    uint32_t preference;
    uint64_t bytes;        /* in memory: model + data + the prepared model (cache_entry.c) */
    uint32_t refs;         /* users plus a pending store write */
    srv_cache_users users; /* the uids among the users, each charged its bytes once */
    bool listed;           /* in the table and the LRU list */
    bool storing;          /* a store write is under way */
    struct srv_cache_ref *next_in_bucket;
    struct srv_cache_ref *lru_prev, *lru_next; /* most recently used at the head */
};

typedef struct counters {
    uint64_t hits, misses, rejected;        /* client caches */
    uint64_t content_hits, content_misses;  /* the content cache */
    uint64_t evicted, stored, store_errors; /* stored: client cache files written */
    uint64_t saves_skipped;                 /* client cache saves skipped: disk off */
    uint64_t saves_over_limit; /* client cache saves skipped: constants over save_max_bytes */
    uint64_t quota_skipped;    /* models prepared in place: their app's cache_bytes was full */
    uint64_t tokens_pruned;    /* token rows deleted past quota.app.cache_tokens */
    uint64_t rate_skipped;     /* copies and saves not made: their uid over its rate (rate.h) */
    uint64_t first_sightings;  /* large models prepared in place, unhashed: seen first */
    uint64_t hashed_bytes;     /* bytes copied from clients and hashed (content cache, saves) */
    uint64_t invalidated_at_start;
} counters;

struct srv_cache {
    srv_daemon *d;
    store_index *index;
    char build_id[STORE_SER_BUILD_ID_MAX + 1];
    char store_dir[4096];
    uint64_t max_bytes;
    uint64_t save_max_bytes; /* see srv_cache_save_pays() */
    size_t stall_at;         /* test hook, see cache.h */
    srv_cache_ref *buckets[SRV_CACHE_BUCKETS];
    srv_cache_ref *lru_head, *lru_tail;
    uint64_t memory_bytes; /* of listed entries */
    size_t memory_models;
    counters n;
    srv_sightings sightings; /* large models seen before (sighting.h) */
    bool disk_off;           /* a write to the state directory failed: write nothing more there */
    char disk_off_reason[300];
};

/* The entry of key in memory, or NULL. */
srv_cache_ref *srv_cache_lookup(srv_cache *c, const uint8_t key[STORE_HASH_LEN]);

/* cache_entry.c: entries made from serialized bytes (the model cache and the data cache).
 * srv_cache_make_entry() decodes (as hostile input) and prepares, finishing plan (the
 * model's plan from its validation, engine.h eng_plan) when not NULL; it takes *model,
 * *data and plan whatever happens, and returns an unlisted entry with one reference.
 * make_entry takes its key, data digest and driver devices from x (the section with the
 * blobs is appended to the entry's model bytes once prepared).
 * srv_cache_prepare_while_hashing() does the same for bytes read from client cache files
 * while another thread hashes them (this engine cannot take packed weights back, so a load
 * prepares anyway, and the two overlap): the digest lands in key, for the caller to decide
 * whether the entry is kept; the entry in *out with *made SCHEMA_OK, or *made and why say
 * why not. Bytes with a device section are hashed first and prepared only when the digest
 * is `expect` (cache_devices.h); -1 (why set, nothing made) when the hash could not run. It takes
 * bufs. srv_cache_entry_free() frees an entry, listed no more and without references. */
schema_status srv_cache_make_entry(srv_cache *c, const srv_cache_encoded *x, store_buf *model,
                                   store_buf *data, eng_prepared *plan, srv_cache_ref **out,
                                   char *err, size_t errlen);
int srv_cache_prepare_while_hashing(srv_cache *c, store_buf bufs[2],
                                    const uint8_t expect[STORE_HASH_LEN],
                                    uint8_t key[STORE_HASH_LEN], srv_cache_ref **out,
                                    schema_status *made, char *why, size_t whylen);
void srv_cache_entry_free(srv_cache_ref *e);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* index: the compilation cache's SQLite database in the state directory.
 *
 * Contract:
 * - Two tables: `tokens`, the clients' caches, keyed by (uid, token) and holding the
 *   digest of the cache files the daemon wrote, the driver build id, their sizes and
 *   times; and `content`, the daemon's own store of prepared models, keyed by digest,
 *   with sizes, preference, build id, hits and last use (for least-recently-used
 *   eviction).
 * - The database runs in WAL mode with synchronous=FULL; every change is one
 *   transaction, so after a crash a row is either wholly there or not at all.
 * - A `schema_version` table records the layout. store_index_open() migrates older layouts
 *   step by step inside one transaction; a database of a newer layout, or one SQLite
 *   cannot read, is moved aside (renamed with a ".bad" suffix) and a fresh one is made:
 *   a cache can always be rebuilt.
 * - store_index_open() deletes every row recorded under another driver build id and
 *   reports how many it deleted; lookups also match the build id.
 * - Functions return 0 (or a count), 1 for "found" where they say so, and -1 with err set
 *   when SQLite fails. Everything runs on the caller's thread; one handle, one thread.
 */
#ifndef STORE_INDEX_H
#define STORE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "storage/hash.h"

#define STORE_INDEX_SCHEMA_VERSION 3
#define STORE_TOKEN_LEN            32

typedef struct store_index store_index;

typedef struct store_token_row {
    uint8_t hash[STORE_HASH_LEN];
    uint64_t model_size, data_size;
    int64_t created_ns;   /* CLOCK_REALTIME */
    int64_t last_used_ns; /* written or loaded; the put sets it to created_ns */
} store_token_row;

typedef struct store_content_row {
    uint8_t hash[STORE_HASH_LEN];
    uint32_t preference;
    uint64_t model_size, data_size;
    int64_t created_ns, last_used_ns; /* CLOCK_REALTIME */
    uint64_t hits;                    /* touches (the daemon coalesces them: cache.c) */
} store_content_row;

store_index *store_index_open(const char *path, const char *build_id, uint64_t *invalidated,
                              char *err, size_t errlen);
void store_index_close(store_index *ix);

/* Inserts or replaces the row of (uid, token), and in the same transaction deletes the
 * uid's least recently used rows past max_rows (0: no limit), counted in *pruned, so that
 * no uid grows the index without bound. *written is 0 when an identical row was already
 * there (nothing written, no fsync, nothing pruned). */
int store_index_token_put(store_index *ix, uint32_t uid, const uint8_t token[STORE_TOKEN_LEN],
                          const store_token_row *row, uint64_t max_rows, int *written,
                          int64_t *pruned, char *err, size_t errlen);
/* Records a use of (uid, token) at now_ns (least-recently-used order for pruning). */
int store_index_token_touch(store_index *ix, uint32_t uid, const uint8_t token[STORE_TOKEN_LEN],
                            int64_t now_ns, char *err, size_t errlen);
/* 1 with *row filled, 0 when (uid, token) has no row of this build. */
int store_index_token_get(store_index *ix, uint32_t uid, const uint8_t token[STORE_TOKEN_LEN],
                          store_token_row *row, char *err, size_t errlen);
/* 1 when some other uid has a row for this token. */
int store_index_token_elsewhere(store_index *ix, uint32_t uid, const uint8_t token[STORE_TOKEN_LEN],
                                char *err, size_t errlen);
int64_t store_index_token_count(store_index *ix);

int store_index_content_put(store_index *ix, const store_content_row *row, char *err,
                            size_t errlen);
int store_index_content_get(store_index *ix, const uint8_t hash[STORE_HASH_LEN],
                            store_content_row *row, char *err, size_t errlen);
/* Sets last use to now_ns and counts a hit. */
int store_index_content_touch(store_index *ix, const uint8_t hash[STORE_HASH_LEN], int64_t now_ns,
                              char *err, size_t errlen);
int store_index_content_delete(store_index *ix, const uint8_t hash[STORE_HASH_LEN], char *err,
                               size_t errlen);
/* Calls fn for every content row, least recently used first, until fn returns non-zero. */
int store_index_content_foreach(store_index *ix, int (*fn)(const store_content_row *, void *),
                                void *ctx, char *err, size_t errlen);
/* Rows and bytes (model + data) of the content store. */
int store_index_content_totals(store_index *ix, int64_t *rows, int64_t *bytes);

/* Deletes every row of both tables in one transaction. */
int store_index_purge(store_index *ix, int64_t *tokens, int64_t *content, char *err, size_t errlen);

#endif

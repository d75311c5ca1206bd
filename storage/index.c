/* SPDX-License-Identifier: Apache-2.0 */
/* index.c: the cache index in SQLite. See index.h. */
#include "storage/index.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    ST_TOKEN_GET,
    ST_TOKEN_PUT,
    ST_TOKEN_ELSEWHERE,
    ST_CONTENT_GET,
    ST_CONTENT_PUT,
    ST_CONTENT_TOUCH,
    ST_CONTENT_DELETE,
    ST_TOKEN_PRUNE,
    ST_TOKEN_TOUCH,
    ST_COUNT
};

static const char *const SQL[ST_COUNT] = {
    [ST_TOKEN_GET] = "SELECT hash, model_size, data_size, created_ns, last_used_ns FROM tokens "
                     "WHERE uid = ?1 AND token = ?2 AND build_id = ?3",
    [ST_TOKEN_PUT] = "INSERT OR REPLACE INTO tokens "
                     "(uid, token, hash, build_id, model_size, data_size, created_ns, "
                     "last_used_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
    [ST_TOKEN_ELSEWHERE] = "SELECT 1 FROM tokens WHERE token = ?2 AND uid != ?1 LIMIT 1",
    [ST_CONTENT_GET] = "SELECT preference, model_size, data_size, created_ns, last_used_ns, hits "
                       "FROM content WHERE hash = ?1 AND build_id = ?2",
    [ST_CONTENT_PUT] = "INSERT OR REPLACE INTO content (hash, build_id, preference, model_size, "
                       "data_size, created_ns, last_used_ns, hits) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [ST_CONTENT_TOUCH] = "UPDATE content SET last_used_ns = ?2, hits = hits + 1 WHERE hash = ?1",
    [ST_CONTENT_DELETE] = "DELETE FROM content WHERE hash = ?1",
    /* A uid's rows past the ?2 most recently used. */
    [ST_TOKEN_PRUNE] = "DELETE FROM tokens WHERE uid = ?1 AND token IN (SELECT token FROM tokens "
                       "WHERE uid = ?1 ORDER BY last_used_ns DESC, created_ns DESC "
                       "LIMIT -1 OFFSET ?2)",
    [ST_TOKEN_TOUCH] = "UPDATE tokens SET last_used_ns = ?3 WHERE uid = ?1 AND token = ?2",
};

/* Layout steps: MIGRATIONS[v] takes a database from version v to v + 1. */
static const char *const MIGRATIONS[STORE_INDEX_SCHEMA_VERSION] = {
    /* 0 -> 1: the clients' token index. */
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE tokens (uid INTEGER NOT NULL, token BLOB NOT NULL, hash BLOB NOT NULL,"
    " build_id TEXT NOT NULL, model_size INTEGER NOT NULL, data_size INTEGER NOT NULL,"
    " created_ns INTEGER NOT NULL, PRIMARY KEY (uid, token)) WITHOUT ROWID;",
    /* 1 -> 2: the daemon's content store, and token lookups across uids. */
    "CREATE TABLE content (hash BLOB PRIMARY KEY, build_id TEXT NOT NULL,"
    " preference INTEGER NOT NULL, model_size INTEGER NOT NULL, data_size INTEGER NOT NULL,"
    " created_ns INTEGER NOT NULL, last_used_ns INTEGER NOT NULL, hits INTEGER NOT NULL"
    " DEFAULT 0) WITHOUT ROWID;"
    "CREATE INDEX content_lru ON content (last_used_ns);"
    "CREATE INDEX tokens_by_token ON tokens (token);",
    /* 2 -> 3: each uid's rows in least-recently-used order, for pruning. */
    "ALTER TABLE tokens ADD COLUMN last_used_ns INTEGER NOT NULL DEFAULT 0;"
    "UPDATE tokens SET last_used_ns = created_ns;"
    "CREATE INDEX tokens_lru ON tokens (uid, last_used_ns);",
};

struct store_index {
    sqlite3 *db;
    char build_id[128];
    sqlite3_stmt *st[ST_COUNT];
};

static int db_fail(store_index *ix, sqlite3 *db, const char *what, char *err, size_t errlen) {
    (void)ix;
    snprintf(err, errlen, "cache index: %s: %s", what, db ? sqlite3_errmsg(db) : "no database");
    return -1;
}

static sqlite3_stmt *stmt(store_index *ix, int which, char *err, size_t errlen) {
    if (!ix->st[which] &&
        sqlite3_prepare_v2(ix->db, SQL[which], -1, &ix->st[which], NULL) != SQLITE_OK) {
        db_fail(ix, ix->db, "prepare", err, errlen);
        return NULL;
    }
    sqlite3_reset(ix->st[which]);
    sqlite3_clear_bindings(ix->st[which]);
    return ix->st[which];
}

static int exec(sqlite3 *db, const char *sql, char *err, size_t errlen) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "cache index: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Runs a statement that returns no rows. */
static int step_done(store_index *ix, sqlite3_stmt *s, char *err, size_t errlen) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return db_fail(ix, ix->db, "write", err, errlen);
    return 0;
}

/* Reads the layout version: 0 for a database without one. */
static int read_version(sqlite3 *db, int *version) {
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT version FROM schema_version", -1, &s, NULL);
    if (rc != SQLITE_OK) {
        /* No table yet: a fresh database, unless the file is not a database at all. */
        *version = 0;
        return strstr(sqlite3_errmsg(db), "no such table") ? 0 : -1;
    }
    rc = sqlite3_step(s);
    *version = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* Opens, configures and migrates. Returns 0, -1 on an error, -2 when the file should be
 * moved aside (not a database, or a layout from the future). */
static int open_db(store_index *ix, const char *path, char *err, size_t errlen) {
    /* The file is made, or re-moded, through a descriptor that never follows a symbolic
     * link, and SQLite opens no link either: a link planted in the state directory would
     * otherwise have the daemon write or chmod whatever it points at. */
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        fchmod(fd, 0600) < 0) {
        snprintf(err, errlen, "cache index: %s is %s", path,
                 fd < 0 && errno == ELOOP ? "a symbolic link"
                 : fd < 0                 ? strerror(errno)
                                          : "not a regular file of the daemon's own");
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    if (sqlite3_open_v2(path, &ix->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
                        NULL) != SQLITE_OK)
        return db_fail(ix, ix->db, "open", err, errlen);
    sqlite3_busy_timeout(ix->db, 2000);
    sqlite3_stmt *s = NULL;
    bool wal = false;
    if (sqlite3_prepare_v2(ix->db, "PRAGMA journal_mode=WAL", -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
        const unsigned char *mode = sqlite3_column_text(s, 0);
        wal = mode && strcmp((const char *)mode, "wal") == 0;
    }
    sqlite3_finalize(s);
    if (!wal) {
        db_fail(ix, ix->db, "cannot switch to WAL (not a database?)", err, errlen);
        return -2;
    }
    if (exec(ix->db, "PRAGMA synchronous=FULL", err, errlen) < 0) return -1;
    if (exec(ix->db, "BEGIN IMMEDIATE", err, errlen) < 0) return -2;
    int version;
    if (read_version(ix->db, &version) < 0) {
        db_fail(ix, ix->db, "reading the layout version", err, errlen);
        exec(ix->db, "ROLLBACK", NULL, 0);
        return -2;
    }
    if (version > STORE_INDEX_SCHEMA_VERSION || version < 0) {
        snprintf(err, errlen, "cache index: layout version %d is newer than this daemon's %d",
                 version, STORE_INDEX_SCHEMA_VERSION);
        exec(ix->db, "ROLLBACK", NULL, 0);
        return -2;
    }
    int rc = 0;
    if (version == 0)
        rc = exec(ix->db,
                  "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);"
                  "DELETE FROM schema_version; INSERT INTO schema_version VALUES (0);",
                  err, errlen);
    for (int v = version; rc == 0 && v < STORE_INDEX_SCHEMA_VERSION; v++) {
        char bump[64];
        snprintf(bump, sizeof bump, "UPDATE schema_version SET version = %d", v + 1);
        rc = exec(ix->db, MIGRATIONS[v], err, errlen);
        if (rc == 0) rc = exec(ix->db, bump, err, errlen);
    }
    if (rc == 0) rc = exec(ix->db, "COMMIT", err, errlen);
    if (rc < 0) exec(ix->db, "ROLLBACK", NULL, 0);
    return rc;
}

/* Drops every row of another build, then records this build. */
static int invalidate(store_index *ix, uint64_t *invalidated, char *err, size_t errlen) {
    *invalidated = 0;
    if (exec(ix->db, "BEGIN IMMEDIATE", err, errlen) < 0) return -1;
    const char *sql[] = {"DELETE FROM tokens WHERE build_id != ?1",
                         "DELETE FROM content WHERE build_id != ?1",
                         "INSERT OR REPLACE INTO meta (key, value) VALUES ('build_id', ?1)"};
    for (size_t i = 0; i < 3; i++) {
        sqlite3_stmt *s = NULL;
        int rc = sqlite3_prepare_v2(ix->db, sql[i], -1, &s, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_bind_text(s, 1, ix->build_id, -1, SQLITE_STATIC);
            rc = sqlite3_step(s);
        }
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE) {
            db_fail(ix, ix->db, "invalidating old entries", err, errlen);
            exec(ix->db, "ROLLBACK", NULL, 0);
            return -1;
        }
        if (i < 2) *invalidated += (uint64_t)sqlite3_changes(ix->db);
    }
    return exec(ix->db, "COMMIT", err, errlen);
}

static void close_db(store_index *ix) {
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(ix->st[i]);
        ix->st[i] = NULL;
    }
    sqlite3_close(ix->db);
    ix->db = NULL;
}

static void move_aside(const char *path) {
    const char *suffix[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        char from[4096], to[4200];
        snprintf(from, sizeof from, "%s%s", path, suffix[i]);
        snprintf(to, sizeof to, "%s.bad%s", path, suffix[i]);
        rename(from, to); /* a missing -wal or -shm is fine */
    }
}

store_index *store_index_open(const char *path, const char *build_id, uint64_t *invalidated,
                              char *err, size_t errlen) {
    store_index *ix = calloc(1, sizeof *ix);
    if (!ix) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(ix->build_id, sizeof ix->build_id, "%s", build_id);
    int rc = open_db(ix, path, err, errlen);
    if (rc == -2) {
        /* A cache can always be rebuilt: keep the odd file for a human, start afresh. */
        close_db(ix);
        move_aside(path);
        rc = open_db(ix, path, err, errlen);
    }
    if (rc == 0) rc = invalidate(ix, invalidated, err, errlen);
    if (rc != 0) {
        close_db(ix);
        free(ix);
        return NULL;
    }
    return ix;
}

void store_index_close(store_index *ix) {
    if (!ix) return;
    close_db(ix);
    free(ix);
}

/* ---- tokens ---------------------------------------------------------------------------- */

int store_index_token_get(store_index *ix, uint32_t uid, const uint8_t token[STORE_TOKEN_LEN],
                          store_token_row *row, char *err, size_t errlen) {
    sqlite3_stmt *s = stmt(ix, ST_TOKEN_GET, err, errlen);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, uid);
    sqlite3_bind_blob(s, 2, token, STORE_TOKEN_LEN, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, ix->build_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s), found = 0;
    if (rc == SQLITE_ROW) {
        const void *h = sqlite3_column_blob(s, 0);
        int n = sqlite3_column_bytes(s, 0);
        int64_t ms = sqlite3_column_int64(s, 1), ds = sqlite3_column_int64(s, 2);
        /* A row we did not write (wrong widths) counts as absent. */
        if (h && n == STORE_HASH_LEN && ms >= 0 && ds >= 0) {
            memcpy(row->hash, h, STORE_HASH_LEN);
            row->model_size = (uint64_t)ms;
            row->data_size = (uint64_t)ds;
            row->created_ns = sqlite3_column_int64(s, 3);
            row->last_used_ns = sqlite3_column_int64(s, 4);
            found = 1;
        }
    } else if (rc != SQLITE_DONE) {
        found = db_fail(ix, ix->db, "token lookup", err, errlen);
    }
    sqlite3_reset(s);
    return found;
}

int store_index_token_put(store_index *ix, uint32_t uid, const uint8_t token[STORE_TOKEN_LEN],
                          const store_token_row *row, uint64_t max_rows, int *written,
                          int64_t *pruned, char *err, size_t errlen) {
    *written = 0;
    *pruned = 0;
    store_token_row old;
    int have = store_index_token_get(ix, uid, token, &old, err, errlen);
    if (have < 0) return -1;
    /* Rewriting damaged files for the same content needs no new row (nor an fsync). */
    if (have && !memcmp(old.hash, row->hash, STORE_HASH_LEN) && old.model_size == row->model_size &&
        old.data_size == row->data_size)
        return 0;
    sqlite3_stmt *s = stmt(ix, ST_TOKEN_PUT, err, errlen);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, uid);
    sqlite3_bind_blob(s, 2, token, STORE_TOKEN_LEN, SQLITE_STATIC);
    sqlite3_bind_blob(s, 3, row->hash, STORE_HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, ix->build_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, (int64_t)row->model_size);
    sqlite3_bind_int64(s, 6, (int64_t)row->data_size);
    sqlite3_bind_int64(s, 7, row->created_ns);
    /* The row and the pruning of the uid's oldest rows: one transaction. */
    if (exec(ix->db, "BEGIN IMMEDIATE", err, errlen) < 0) return -1;
    int rc = step_done(ix, s, err, errlen);
    if (rc == 0 && max_rows) {
        sqlite3_stmt *p = stmt(ix, ST_TOKEN_PRUNE, err, errlen);
        if (!p) {
            rc = -1;
        } else {
            sqlite3_bind_int64(p, 1, uid);
            sqlite3_bind_int64(p, 2, max_rows > INT64_MAX ? INT64_MAX : (int64_t)max_rows);
            rc = step_done(ix, p, err, errlen);
            if (rc == 0) *pruned = sqlite3_changes(ix->db);
        }
    }
    if (rc == 0 && exec(ix->db, "COMMIT", err, errlen) == 0) {
        *written = 1;
        return 0;
    }
    char ignored[64];
    exec(ix->db, "ROLLBACK", ignored, sizeof ignored);
    *pruned = 0;
    return -1;
}

int store_index_token_touch(store_index *ix, uint32_t uid, const uint8_t token[STORE_TOKEN_LEN],
                            int64_t now_ns, char *err, size_t errlen) {
    sqlite3_stmt *s = stmt(ix, ST_TOKEN_TOUCH, err, errlen);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, uid);
    sqlite3_bind_blob(s, 2, token, STORE_TOKEN_LEN, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, now_ns);
    return step_done(ix, s, err, errlen);
}

int store_index_token_elsewhere(store_index *ix, uint32_t uid, const uint8_t token[STORE_TOKEN_LEN],
                                char *err, size_t errlen) {
    sqlite3_stmt *s = stmt(ix, ST_TOKEN_ELSEWHERE, err, errlen);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, uid);
    sqlite3_bind_blob(s, 2, token, STORE_TOKEN_LEN, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : db_fail(ix, ix->db, "token lookup", err, errlen);
}

static int64_t count(store_index *ix, const char *sql) {
    sqlite3_stmt *s = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(ix->db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

int64_t store_index_token_count(store_index *ix) {
    return count(ix, "SELECT count(*) FROM tokens");
}

/* ---- content --------------------------------------------------------------------------- */

int store_index_content_put(store_index *ix, const store_content_row *row, char *err,
                            size_t errlen) {
    sqlite3_stmt *s = stmt(ix, ST_CONTENT_PUT, err, errlen);
    if (!s) return -1;
    sqlite3_bind_blob(s, 1, row->hash, STORE_HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, ix->build_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, row->preference);
    sqlite3_bind_int64(s, 4, (int64_t)row->model_size);
    sqlite3_bind_int64(s, 5, (int64_t)row->data_size);
    sqlite3_bind_int64(s, 6, row->created_ns);
    sqlite3_bind_int64(s, 7, row->last_used_ns);
    sqlite3_bind_int64(s, 8, (int64_t)row->hits);
    return step_done(ix, s, err, errlen);
}

static void read_content(sqlite3_stmt *s, int first, store_content_row *row) {
    row->preference = (uint32_t)sqlite3_column_int64(s, first);
    row->model_size = (uint64_t)sqlite3_column_int64(s, first + 1);
    row->data_size = (uint64_t)sqlite3_column_int64(s, first + 2);
    row->created_ns = sqlite3_column_int64(s, first + 3);
    row->last_used_ns = sqlite3_column_int64(s, first + 4);
    row->hits = (uint64_t)sqlite3_column_int64(s, first + 5);
}

int store_index_content_get(store_index *ix, const uint8_t hash[STORE_HASH_LEN],
                            store_content_row *row, char *err, size_t errlen) {
    sqlite3_stmt *s = stmt(ix, ST_CONTENT_GET, err, errlen);
    if (!s) return -1;
    sqlite3_bind_blob(s, 1, hash, STORE_HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, ix->build_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s), found = 0;
    if (rc == SQLITE_ROW) {
        memcpy(row->hash, hash, STORE_HASH_LEN);
        read_content(s, 0, row);
        found = 1;
    } else if (rc != SQLITE_DONE) {
        found = db_fail(ix, ix->db, "content lookup", err, errlen);
    }
    sqlite3_reset(s);
    return found;
}

int store_index_content_touch(store_index *ix, const uint8_t hash[STORE_HASH_LEN], int64_t now_ns,
                              char *err, size_t errlen) {
    sqlite3_stmt *s = stmt(ix, ST_CONTENT_TOUCH, err, errlen);
    if (!s) return -1;
    sqlite3_bind_blob(s, 1, hash, STORE_HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now_ns);
    return step_done(ix, s, err, errlen);
}

int store_index_content_delete(store_index *ix, const uint8_t hash[STORE_HASH_LEN], char *err,
                               size_t errlen) {
    sqlite3_stmt *s = stmt(ix, ST_CONTENT_DELETE, err, errlen);
    if (!s) return -1;
    sqlite3_bind_blob(s, 1, hash, STORE_HASH_LEN, SQLITE_STATIC);
    return step_done(ix, s, err, errlen);
}

int store_index_content_foreach(store_index *ix, int (*fn)(const store_content_row *, void *),
                                void *ctx, char *err, size_t errlen) {
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(ix->db,
                           "SELECT hash, preference, model_size, data_size, created_ns, "
                           "last_used_ns, hits FROM content ORDER BY last_used_ns, hash",
                           -1, &s, NULL) != SQLITE_OK)
        return db_fail(ix, ix->db, "listing", err, errlen);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_content_row row;
        const void *h = sqlite3_column_blob(s, 0);
        if (!h || sqlite3_column_bytes(s, 0) != STORE_HASH_LEN) continue;
        memcpy(row.hash, h, STORE_HASH_LEN);
        read_content(s, 1, &row);
        if (fn(&row, ctx)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : db_fail(ix, ix->db, "listing", err, errlen);
}

int store_index_content_totals(store_index *ix, int64_t *rows, int64_t *bytes) {
    *rows = count(ix, "SELECT count(*) FROM content");
    *bytes = count(ix, "SELECT coalesce(sum(model_size + data_size), 0) FROM content");
    return *rows < 0 || *bytes < 0 ? -1 : 0;
}

int store_index_purge(store_index *ix, int64_t *tokens, int64_t *content, char *err,
                      size_t errlen) {
    *tokens = *content = 0;
    if (exec(ix->db, "BEGIN IMMEDIATE", err, errlen) < 0) return -1;
    if (exec(ix->db, "DELETE FROM tokens", err, errlen) < 0) goto fail;
    *tokens = sqlite3_changes(ix->db);
    if (exec(ix->db, "DELETE FROM content", err, errlen) < 0) goto fail;
    *content = sqlite3_changes(ix->db);
    return exec(ix->db, "COMMIT", err, errlen);
fail:
    exec(ix->db, "ROLLBACK", NULL, 0);
    return -1;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* storage_test (unit): tree hashing, serialization against hostile bytes, the SQLite
 * index (migration, build invalidation, a damaged database) and the store folder. */
#include <blake2.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "storage/cachefile.h"
#include "engine/engine.h"
#include "storage/hash.h"
#include "storage/index.h"
#include "storage/serialize.h"

static char tmpdir[256];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/nnd-storage-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* ---- hash ------------------------------------------------------------------------------ */

/* The digest as hash.h defines it, computed the slow, obvious way. */
static void reference_digest(const uint8_t *p, size_t len, uint8_t out[STORE_HASH_LEN]) {
    uint8_t head[28] = "nnd-tree-v1";
    for (int i = 0; i < 8; i++)
        head[16 + i] = (uint8_t)((uint64_t)len >> (8 * i));
    for (int i = 0; i < 4; i++)
        head[24 + i] = (uint8_t)((uint32_t)STORE_HASH_LEAF >> (8 * i));
    size_t n_leaves = (len + STORE_HASH_LEAF - 1) / STORE_HASH_LEAF;
    uint8_t *all = malloc(sizeof head + n_leaves * STORE_HASH_LEN);
    memcpy(all, head, sizeof head);
    for (size_t i = 0; i < n_leaves; i++) {
        size_t off = i * STORE_HASH_LEAF,
               k = len - off < STORE_HASH_LEAF ? len - off : STORE_HASH_LEAF;
        blake2b(all + sizeof head + i * STORE_HASH_LEN, p + off, NULL, STORE_HASH_LEN, k, 0);
    }
    blake2b(out, all, NULL, STORE_HASH_LEN, sizeof head + n_leaves * STORE_HASH_LEN, 0);
    free(all);
}

static void test_hash_tree(void **state) {
    (void)state;
    size_t sizes[] = {
        0, 1, 4096, STORE_HASH_LEAF, STORE_HASH_LEAF + 1, 5 * STORE_HASH_LEAF + 12345};
    uint8_t *big = malloc(sizes[5]);
    for (size_t i = 0; i < sizes[5]; i++)
        big[i] = (uint8_t)(i * 131 + (i >> 11));
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint8_t want[STORE_HASH_LEN], got[2][STORE_HASH_LEN];
        reference_digest(big, sizes[k], want);
        const uint8_t *p[2] = {big, big};
        size_t len[2] = {sizes[k], 3};
        assert_int_equal(store_hash_bufs(p, len, 2, got), 0);
        assert_memory_equal(got[0], want, STORE_HASH_LEN);
        reference_digest(big, 3, want);
        assert_memory_equal(got[1], want, STORE_HASH_LEN);

        /* Reading through an fd gives the same bytes and digest. */
        int fd = memfd_create("h", MFD_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, big, sizes[k]), (ssize_t)sizes[k]);
        store_buf b[1];
        uint8_t d[1][STORE_HASH_LEN];
        char err[256];
        assert_int_equal(store_hash_read(&fd, &sizes[k], 1, b, d, err, sizeof err), 0);
        assert_memory_equal(d[0], got[0], STORE_HASH_LEN);
        assert_memory_equal(b[0].p, big, sizes[k]);
        store_buf_free(&b[0]);
        /* Asking for more than the file holds is an error, and frees everything. */
        size_t more = sizes[k] + 1;
        assert_int_equal(store_hash_read(&fd, &more, 1, b, d, err, sizeof err), -EIO);
        close(fd);
    }
    free(big);
}

/* ---- serialize ------------------------------------------------------------------------- */

/* out[4] = in0 + c1 (CONSTANT_COPY [4] floats) + c2 (CONSTANT_REFERENCE, pool 0) via two ADDs,
 * with an unused per-channel operand to carry scales. */
typedef struct test_model {
    eng_operand_desc operands[8];
    eng_operation_desc ops[2];
    uint32_t add0_in[3], add0_out[1], add1_in[3], add1_out[1], inputs[1], outputs[1];
    uint8_t values[64];
    uint8_t pool_bytes[256];
    eng_memory_view pool;
    float scales[3];
    eng_model_desc desc;
} test_model;

static void test_model_init(test_model *t) {
    memset(t, 0, sizeof *t);
    for (int i = 0; i < 4; i++) {
        eng_operand_desc *o = &t->operands[i == 3 ? 4 : i];
        o->type = SCHEMA_TENSOR_FLOAT32;
        o->rank = 1;
        o->dims[0] = 4;
    }
    t->operands[0].lifetime = SCHEMA_MODEL_INPUT;
    t->operands[1].lifetime = SCHEMA_CONSTANT_COPY;
    t->operands[1].offset = 8;
    t->operands[1].length = 16;
    float c1[4] = {1, 2, 3, 4}, c2[4] = {10, 20, 30, 40};
    memcpy(t->values + 8, c1, 16);
    t->operands[2].lifetime = SCHEMA_CONSTANT_REFERENCE;
    t->operands[2].pool = 0;
    t->operands[2].offset = 100;
    t->operands[2].length = 16;
    memcpy(t->pool_bytes + 100, c2, 16);
    t->operands[3].type = SCHEMA_INT32;
    t->operands[3].lifetime = SCHEMA_CONSTANT_COPY;
    t->operands[3].offset = 0;
    t->operands[3].length = 4;
    t->operands[4].lifetime = SCHEMA_TEMPORARY;
    t->operands[5] = t->operands[4];
    t->operands[5].lifetime = SCHEMA_MODEL_OUTPUT;
    t->operands[6].type = SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL;
    t->operands[6].rank = 2;
    t->operands[6].dims[0] = 3;
    t->operands[6].dims[1] = 1;
    t->operands[6].lifetime = SCHEMA_CONSTANT_REFERENCE;
    t->operands[6].offset = 200;
    t->operands[6].length = 3;
    t->scales[0] = 0.5f, t->scales[1] = 0.25f, t->scales[2] = 1.0f;
    t->operands[6].channel_quant = (eng_channel_quant){.scales = t->scales, .n_scales = 3};
    t->operands[7] = t->operands[3]; /* an unused scalar constant */
    t->add0_in[0] = 0, t->add0_in[1] = 1, t->add0_in[2] = 3, t->add0_out[0] = 4;
    t->add1_in[0] = 4, t->add1_in[1] = 2, t->add1_in[2] = 3, t->add1_out[0] = 5;
    t->ops[0] = (eng_operation_desc){SCHEMA_OP_ADD, 3, t->add0_in, 1, t->add0_out};
    t->ops[1] = (eng_operation_desc){SCHEMA_OP_ADD, 3, t->add1_in, 1, t->add1_out};
    t->inputs[0] = 0, t->outputs[0] = 5;
    t->pool = (eng_memory_view){.base = t->pool_bytes, .size = sizeof t->pool_bytes};
    t->desc = (eng_model_desc){.n_operands = 8,
                               .operands = t->operands,
                               .n_operations = 2,
                               .operations = t->ops,
                               .n_inputs = 1,
                               .inputs = t->inputs,
                               .n_outputs = 1,
                               .outputs = t->outputs,
                               .operand_values = t->values,
                               .operand_values_len = sizeof t->values,
                               .n_pools = 1,
                               .pools = &t->pool};
}

static void run_prepared(eng_prepared *p, float out[4]) {
    char err[SCHEMA_ERR_LEN];
    eng_exec *e = eng_exec_create(p);
    float in[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    eng_io i = {.data = in, .length = sizeof in}, o = {.data = out, .length = 16};
    assert_int_equal(eng_exec_run(e, &i, &o, NULL, NULL, err, sizeof err), SCHEMA_OK);
    eng_exec_free(e);
    eng_prepared_free(p);
}

static void run_model(const eng_model_desc *d, float out[4]) {
    eng_prepared *p = NULL;
    char err[SCHEMA_ERR_LEN];
    schema_status st = eng_prepare(d, &p, err, sizeof err);
    if (st) fail_msg("prepare: %s", err);
    run_prepared(p, out);
}

/* The daemon's cache validates and plans a model once (engine.h, eng_plan): the plan made
 * from the client's description is finished on the decoded copy, and the prepared model
 * then reads its constants from that copy alone, never from the client's memory. */
static void test_plan_moves_onto_copy(void **state) {
    (void)state;
    test_model t;
    test_model_init(&t);
    char err[SCHEMA_ERR_LEN];
    float want[4], got[4];
    run_model(&t.desc, want);
    eng_prepared *plan = NULL;
    if (eng_plan(&t.desc, &plan, err, sizeof err)) fail_msg("plan: %s", err);
    store_buf m, d;
    assert_int_equal(store_ser_encode(&t.desc, 0, "b", &m, &d, err, sizeof err), SCHEMA_OK);
    store_ser_model sm;
    assert_int_equal(store_ser_decode(m.p, m.len, d.p, d.len, &sm, err, sizeof err), SCHEMA_OK);
    eng_prepared *p = NULL;
    if (eng_prepare_planned(plan, &sm.desc, &p, err, sizeof err)) fail_msg("finish: %s", err);
    store_ser_model_clear(&sm);
    memset(t.values, 0xff, sizeof t.values); /* the client's constants: NaN from here on */
    memset(t.pool_bytes, 0xff, sizeof t.pool_bytes);
    run_prepared(p, got);
    assert_memory_equal(want, got, sizeof want);

    /* A plan is finished only on the model it was made from (it is freed otherwise). */
    test_model_init(&t);
    assert_int_equal(eng_plan(&t.desc, &plan, err, sizeof err), SCHEMA_OK);
    assert_int_equal(store_ser_decode(m.p, m.len, d.p, d.len, &sm, err, sizeof err), SCHEMA_OK);
    sm.desc.n_operands--;
    assert_int_equal(eng_prepare_planned(plan, &sm.desc, &p, err, sizeof err),
                     SCHEMA_GENERAL_FAILURE);
    assert_non_null(strstr(err, "changed"));
    sm.desc.n_operands++;
    store_ser_model_clear(&sm);
    store_buf_free(&m), store_buf_free(&d);
}

static void test_serialize_round_trip(void **state) {
    (void)state;
    test_model t;
    test_model_init(&t);
    char err[SCHEMA_ERR_LEN];
    if (eng_validate(&t.desc, err, sizeof err)) fail_msg("test model invalid: %s", err);
    store_buf m1, d1, m2, d2;
    assert_int_equal(store_ser_encode(&t.desc, 2, "build-A", &m1, &d1, err, sizeof err), SCHEMA_OK);
    assert_int_equal(store_ser_encode(&t.desc, 2, "build-A", &m2, &d2, err, sizeof err), SCHEMA_OK);
    /* Deterministic bytes: equal models hash equal. */
    assert_int_equal(m1.len, m2.len);
    assert_int_equal(d1.len, d2.len);
    assert_memory_equal(m1.p, m2.p, m1.len);
    assert_memory_equal(d1.p, d2.p, d1.len);
    store_ser_model sm;
    assert_int_equal(store_ser_decode(m1.p, m1.len, d1.p, d1.len, &sm, err, sizeof err), SCHEMA_OK);
    assert_int_equal(sm.preference, 2);
    assert_string_equal(sm.build_id, "build-A");
    assert_int_equal(sm.desc.n_operands, 8);
    assert_int_equal(sm.desc.operands[6].channel_quant.n_scales, 3);
    assert_true(sm.desc.operands[6].channel_quant.scales[1] == 0.25f);
    for (uint32_t i = 0; i < 8; i++)
        if (sm.desc.operands[i].lifetime == SCHEMA_CONSTANT_REFERENCE)
            assert_int_equal((uintptr_t)(sm.desc.pools[0].base + sm.desc.operands[i].offset) %
                                 (sm.desc.operands[i].length >= 64 ? 64 : 8),
                             0);
    float want[4], got[4];
    run_model(&t.desc, want);
    run_model(&sm.desc, got);
    assert_memory_equal(want, got, sizeof want);
    assert_true(got[0] == 0.5f + 1 + 10);
    assert_false(sm.desc.reference_only);
    store_ser_model_clear(&sm);

    /* The device travels with the model: a reference-only compilation stays one. */
    store_buf mr, dr;
    t.desc.reference_only = true;
    assert_int_equal(store_ser_encode(&t.desc, 2, "build-A", &mr, &dr, err, sizeof err), SCHEMA_OK);
    t.desc.reference_only = false;
    assert_int_equal(store_ser_decode(mr.p, mr.len, dr.p, dr.len, &sm, err, sizeof err), SCHEMA_OK);
    assert_true(sm.desc.reference_only);
    eng_prepared *rp = NULL;
    assert_int_equal(eng_prepare(&sm.desc, &rp, err, sizeof err), SCHEMA_OK);
    assert_true(eng_prepared_reference_only(rp));
    eng_prepared_free(rp);
    store_ser_model_clear(&sm);
    store_buf_free(&mr);
    store_buf_free(&dr);

    /* Hostile bytes: every truncation and every single-byte flip either decodes to
     * something eng_prepare judges for itself, or is refused; nothing reads out of bounds. */
    for (size_t n = 0; n < m1.len; n++)
        assert_int_equal(store_ser_decode(m1.p, n, d1.p, d1.len, &sm, err, sizeof err),
                         SCHEMA_GENERAL_FAILURE);
    for (size_t n = 0; n < d1.len; n++)
        assert_int_equal(store_ser_decode(m1.p, m1.len, d1.p, n, &sm, err, sizeof err),
                         SCHEMA_GENERAL_FAILURE);
    uint8_t *copy = malloc(m1.len);
    for (size_t i = 0; i < m1.len; i++)
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(copy, m1.p, m1.len);
            copy[i] ^= (uint8_t)(1u << bit);
            if (store_ser_decode(copy, m1.len, d1.p, d1.len, &sm, err, sizeof err) == SCHEMA_OK) {
                eng_prepared *p = NULL;
                if (eng_prepare(&sm.desc, &p, err, sizeof err) == SCHEMA_OK) eng_prepared_free(p);
                store_ser_model_clear(&sm);
            }
        }
    free(copy);
    /* Counts that claim more than the bytes hold are refused before any allocation: the
     * main graph's operand count, right after the header. */
    memcpy(m1.p + 8 + 16 + STORE_SER_BUILD_ID_MAX + 4 + 8, "\xff\xff\x0f\x00", 4);
    assert_int_equal(store_ser_decode(m1.p, m1.len, d1.p, d1.len, &sm, err, sizeof err),
                     SCHEMA_GENERAL_FAILURE);
    assert_non_null(strstr(err, "operands do not fit"));
    store_buf_free(&m1), store_buf_free(&d1), store_buf_free(&m2), store_buf_free(&d2);

    /* A constant outside its memory is refused at encode. */
    t.operands[2].offset = 250;
    assert_int_equal(store_ser_encode(&t.desc, 0, "b", &m1, &d1, err, sizeof err),
                     SCHEMA_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "operand 2"));
}

/* ---- index ----------------------------------------------------------------------------- */

static void path_in_tmp(char *out, size_t len, const char *name) {
    snprintf(out, len, "%s/%s", tmpdir, name);
}

/* A uid's rows past its limit go, least recently used first, and only that uid's. */
static void test_index_prunes_per_uid(void **state) {
    (void)state;
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "prune.db");
    uint64_t inval;
    store_index *ix = store_index_open(path, "build-1", &inval, err, sizeof err);
    if (!ix) fail_msg("%s", err);
    uint8_t token[5][32] = {{1}, {2}, {3}, {4}, {5}};
    store_token_row row = {.model_size = 1, .data_size = 1};
    int written;
    int64_t pruned;
    assert_int_equal(
        store_index_token_put(ix, 7, token[0], &row, 0, &written, &pruned, err, sizeof err), 0);
    for (int i = 0; i < 3; i++) {
        row.created_ns = 10 + i;
        assert_int_equal(
            store_index_token_put(ix, 1000, token[i], &row, 3, &written, &pruned, err, sizeof err),
            0);
        assert_int_equal(pruned, 0);
    }
    /* Token 0 is used again: token 1 is now the least recently used. */
    assert_int_equal(store_index_token_touch(ix, 1000, token[0], 100, err, sizeof err), 0);
    row.created_ns = 50;
    assert_int_equal(
        store_index_token_put(ix, 1000, token[3], &row, 3, &written, &pruned, err, sizeof err), 0);
    assert_int_equal(pruned, 1);
    store_token_row got;
    assert_int_equal(store_index_token_get(ix, 1000, token[1], &got, err, sizeof err), 0);
    assert_int_equal(store_index_token_get(ix, 1000, token[0], &got, err, sizeof err), 1);
    assert_int_equal(got.last_used_ns, 100);
    assert_int_equal(store_index_token_get(ix, 1000, token[2], &got, err, sizeof err), 1);
    assert_int_equal(store_index_token_get(ix, 1000, token[3], &got, err, sizeof err), 1);
    assert_int_equal(store_index_token_get(ix, 7, token[0], &got, err, sizeof err), 1);
    assert_int_equal(store_index_token_count(ix), 4);
    store_index_close(ix);
}

static void test_index_tokens_and_builds(void **state) {
    (void)state;
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "a.db");
    uint64_t inval = 99;
    store_index *ix = store_index_open(path, "build-1", &inval, err, sizeof err);
    if (!ix) fail_msg("%s", err);
    assert_int_equal(inval, 0);
    uint8_t token[32] = {1, 2, 3}, other[32] = {9};
    store_token_row row = {.model_size = 10, .data_size = 20, .created_ns = 5};
    memset(row.hash, 0xab, sizeof row.hash);
    int written;
    int64_t pruned;
    assert_int_equal(
        store_index_token_put(ix, 1000, token, &row, 0, &written, &pruned, err, sizeof err), 0);
    assert_int_equal(written, 1);
    assert_int_equal(
        store_index_token_put(ix, 1000, token, &row, 0, &written, &pruned, err, sizeof err), 0);
    assert_int_equal(written, 0); /* identical: nothing written */
    store_token_row got;
    assert_int_equal(store_index_token_get(ix, 1000, token, &got, err, sizeof err), 1);
    assert_memory_equal(got.hash, row.hash, STORE_HASH_LEN);
    assert_int_equal(got.data_size, 20);
    assert_int_equal(store_index_token_get(ix, 1001, token, &got, err, sizeof err), 0);
    assert_int_equal(store_index_token_get(ix, 1000, other, &got, err, sizeof err), 0);
    assert_int_equal(store_index_token_elsewhere(ix, 1001, token, err, sizeof err), 1);
    assert_int_equal(store_index_token_elsewhere(ix, 1000, token, err, sizeof err), 0);
    store_content_row c = {.preference = 1, .model_size = 3, .data_size = 4, .last_used_ns = 7};
    memset(c.hash, 0xcd, sizeof c.hash);
    assert_int_equal(store_index_content_put(ix, &c, err, sizeof err), 0);
    store_index_close(ix);

    /* Same build: everything is still there. */
    ix = store_index_open(path, "build-1", &inval, err, sizeof err);
    assert_non_null(ix);
    assert_int_equal(inval, 0);
    assert_int_equal(store_index_token_get(ix, 1000, token, &got, err, sizeof err), 1);
    store_index_close(ix);

    /* A new build drops the old rows. */
    ix = store_index_open(path, "build-2", &inval, err, sizeof err);
    assert_non_null(ix);
    assert_int_equal(inval, 2);
    assert_int_equal(store_index_token_get(ix, 1000, token, &got, err, sizeof err), 0);
    int64_t rows, bytes;
    assert_int_equal(store_index_content_totals(ix, &rows, &bytes), 0);
    assert_int_equal(rows, 0);
    store_index_close(ix);
}

static void test_index_migrates_v1(void **state) {
    (void)state;
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "v1.db");
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    const char *v1 = "CREATE TABLE schema_version (version INTEGER NOT NULL);"
                     "INSERT INTO schema_version VALUES (1);"
                     "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "INSERT INTO meta VALUES ('build_id', 'b');"
                     "CREATE TABLE tokens (uid INTEGER NOT NULL, token BLOB NOT NULL, hash BLOB "
                     "NOT NULL, build_id TEXT NOT NULL, model_size INTEGER NOT NULL, data_size "
                     "INTEGER NOT NULL, created_ns INTEGER NOT NULL, PRIMARY KEY (uid, token)) "
                     "WITHOUT ROWID;"
                     "INSERT INTO tokens VALUES (7, zeroblob(32), zeroblob(32), 'b', 1, 2, 3);";
    assert_int_equal(sqlite3_exec(db, v1, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    uint64_t inval;
    store_index *ix = store_index_open(path, "b", &inval, err, sizeof err);
    if (!ix) fail_msg("%s", err);
    uint8_t token[32] = {0};
    store_token_row got;
    assert_int_equal(store_index_token_get(ix, 7, token, &got, err, sizeof err), 1);
    assert_int_equal(got.model_size, 1);
    /* The v2 table exists now. */
    store_content_row c = {.model_size = 1};
    assert_int_equal(store_index_content_put(ix, &c, err, sizeof err), 0);
    store_index_close(ix);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT version FROM schema_version", -1, &s, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(s, 0), STORE_INDEX_SCHEMA_VERSION);
    sqlite3_finalize(s);
    /* A layout from the future is moved aside, not trusted. */
    assert_int_equal(sqlite3_exec(db, "UPDATE schema_version SET version = 99", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    ix = store_index_open(path, "b", &inval, err, sizeof err);
    if (!ix) fail_msg("%s", err);
    assert_int_equal(store_index_token_get(ix, 7, token, &got, err, sizeof err), 0);
    store_index_close(ix);
    char bad[600];
    snprintf(bad, sizeof bad, "%s.bad", path);
    assert_int_equal(access(bad, F_OK), 0);
}

static void test_index_garbage_file(void **state) {
    (void)state;
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "junk.db");
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 1000; i++)
        fputs("this is not a database ", f);
    fclose(f);
    uint64_t inval;
    store_index *ix = store_index_open(path, "b", &inval, err, sizeof err);
    if (!ix) fail_msg("%s", err);
    assert_int_equal(store_index_token_count(ix), 0);
    store_index_close(ix);
}

/* ---- store ----------------------------------------------------------------------------- */

static bool keep_first(const uint8_t hash[STORE_HASH_LEN], void *ctx) {
    return hash[0] == *(const uint8_t *)ctx;
}

static void test_store_sweep(void **state) {
    (void)state;
    char dir[512], err[256], path[700];
    path_in_tmp(dir, sizeof dir, "store");
    assert_int_equal(mkdir(dir, 0700), 0);
    uint8_t a[STORE_HASH_LEN] = {1}, b[STORE_HASH_LEN] = {2};
    assert_int_equal(
        store_write(dir, a, (const uint8_t *)"m", 1, (const uint8_t *)"dd", 2, err, sizeof err), 0);
    assert_int_equal(
        store_write(dir, b, (const uint8_t *)"m", 1, (const uint8_t *)"dd", 2, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/leftover.data.tmp", dir);
    close(open(path, O_CREAT | O_WRONLY, 0600));
    uint8_t keep = 1;
    assert_int_equal(store_sweep(dir, keep_first, &keep), 3);
    char hex[2 * STORE_HASH_LEN + 1];
    store_hex(a, STORE_HASH_LEN, hex);
    snprintf(path, sizeof path, "%s/%s.data", dir, hex);
    assert_int_equal(access(path, F_OK), 0);
    store_remove(dir, a);
    assert_int_equal(access(path, F_OK), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_tree),
        cmocka_unit_test(test_serialize_round_trip),
        cmocka_unit_test(test_plan_moves_onto_copy),
        cmocka_unit_test(test_index_tokens_and_builds),
        cmocka_unit_test(test_index_prunes_per_uid),
        cmocka_unit_test(test_index_migrates_v1),
        cmocka_unit_test(test_index_garbage_file),
        cmocka_unit_test(test_store_sweep),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* test_cache (integration): compilation caching through a real daemon. Client caches
 * (cold save, warm load, every damage refused with a correct fallback, uid scoping, restart,
 * build id, a crash in the middle of a write) and the daemon's content cache (sharing,
 * LRU eviction, persistence, list and purge). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <nanomsg/nn.h>
#include <nanomsg/pubsub.h>
#include <nanomsg/reqrep.h>
#include <sqlite3.h>

#include "tests/support/cache_model.h"
#include "tests/support/harness.h"
#include "proto/paths.h"

#define N 256 /* floats of weights: 1 KiB, so flipping every byte stays quick */

static tst_daemon dmn;
static char work[256]; /* cache dirs and state dirs of extra daemons */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static int group_setup(void **state) {
    (void)state;
    snprintf(work, sizeof work, "/tmp/nnd-cache-test-XXXXXX");
    if (!mkdtemp(work)) return -1;
    chmod(work, 0755);
    return tst_daemon_start(&dmn, NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state) {
    (void)state;
    if (dmn.pid > 0) tst_daemon_stop(&dmn);
    nftw(work, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static void make_dir(char *out, size_t len, const char *name) {
    snprintf(out, len, "%s/%s", work, name);
    assert_true(mkdir(out, 0755) == 0 || errno == EEXIST);
}

static void token_of(uint8_t token[NND_CACHE_TOKEN_BYTES], uint8_t v) {
    for (int i = 0; i < NND_CACHE_TOKEN_BYTES; i++)
        token[i] = (uint8_t)(v + i);
}

/* ---- bus helpers ----------------------------------------------------------------------- */

static cJSON *admin(const tst_daemon *d, const char *cmd) {
    cJSON *j = tst_admin(d->state_dir, cmd);
    assert_non_null(j);
    return j;
}

static double counter(const tst_daemon *d, const char *name) {
    cJSON *j = admin(d, "status");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cache");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, name);
    if (!cJSON_IsNumber(v)) fail_msg("status has no cache.%s", name);
    double x = v->valuedouble;
    cJSON_Delete(j);
    return x;
}

/* A subscriber that has seen at least one event, so none after this is lost. */
static int subscribe(const tst_daemon *d) {
    char url[600];
    assert_non_null(proto_events_url(d->state_dir, url, sizeof url));
    int sub = nn_socket(AF_SP, NN_SUB);
    nn_setsockopt(sub, NN_SUB, NN_SUB_SUBSCRIBE, "", 0);
    int timeout = 100;
    nn_setsockopt(sub, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout, sizeof timeout);
    assert_true(nn_connect(sub, url) >= 0);
    for (int i = 0; i < 100; i++) {
        close(tst_connect_raw(d));
        char *buf = NULL;
        if (nn_recv(sub, &buf, NN_MSG, 0) >= 0) {
            nn_freemsg(buf);
            return sub;
        }
    }
    fail_msg("no events arrived");
    return -1;
}

static void drain(int sub) {
    char *buf;
    while (nn_recv(sub, &buf, NN_MSG, 0) >= 0)
        nn_freemsg(buf);
}

/* Waits up to 5 s for an event `name` whose string field `key` is `value` (key NULL: any). */
static cJSON *expect_event(int sub, const char *name, const char *key, const char *value) {
    time_t end = time(NULL) + 5;
    while (time(NULL) <= end) {
        char *buf = NULL;
        int n = nn_recv(sub, &buf, NN_MSG, 0);
        if (n < 0) continue;
        cJSON *j = cJSON_ParseWithLength(buf, (size_t)n);
        nn_freemsg(buf);
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "event");
        const cJSON *f = key ? cJSON_GetObjectItemCaseSensitive(j, key) : NULL;
        if (cJSON_IsString(ev) && !strcmp(ev->valuestring, name) &&
            (!key || (cJSON_IsString(f) && !strcmp(f->valuestring, value))))
            return j;
        cJSON_Delete(j);
    }
    fail_msg("no %s event with %s=%s", name, key ? key : "-", value ? value : "-");
    return NULL;
}

/* ---- client helpers -------------------------------------------------------------------- */

static nnd_client *connect_to(const tst_daemon *d) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "test_cache", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

/* Prepares m with caching in dir under token, checks its outputs, releases it; returns
 * whether it came from the cache. out (n floats, may be NULL) receives the outputs. */
static bool prep_run(nnd_client *c, const cache_model *m, const char *dir, const uint8_t *token,
                     float *out) {
    uint64_t h = 0;
    bool from_cache = false;
    char err[512];
    int st = nnd_client_prepare_cached(c, &m->add.model, &m->pool_fd, 1, 0, 0, 0, dir, token, &h,
                                       &from_cache, err, sizeof err);
    if (st != 0) fail_msg("prepare_cached: %s", err);
    assert_int_equal(cache_model_run(c, m, h, out), 0);
    assert_int_equal(nnd_client_release(c, h), 0);
    return from_cache;
}

static void paths_of(const char *dir, const uint8_t *token, char *model, char *data) {
    assert_int_equal(nnd_cache_paths(dir, token, model, data, 512), 0);
}

static off_t size_of(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ---- client caches --------------------------------------------------------------------- */

static void test_cold_then_warm(void **state) {
    (void)state;
    char dir[512], mpath[512], dpath[512];
    make_dir(dir, sizeof dir, "warm");
    uint8_t token[32];
    token_of(token, 1);
    paths_of(dir, token, mpath, dpath);
    nnd_client *c = connect_to(&dmn);
    int sub = subscribe(&dmn);
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, 0.5f), 0);
    double misses = counter(&dmn, "misses"), hits = counter(&dmn, "hits");
    float cold[N], warm[N];

    assert_false(prep_run(c, &m, dir, token, cold));
    assert_true(size_of(mpath) > 0 && size_of(dpath) > N * 4); /* the cold compile wrote both */
    assert_int_equal(counter(&dmn, "misses"), misses + 1);
    assert_int_equal(counter(&dmn, "stored"), 1);
    cJSON_Delete(expect_event(sub, "cache_miss", "source", "client"));

    assert_true(prep_run(c, &m, dir, token, warm));
    assert_int_equal(counter(&dmn, "hits"), hits + 1);
    cJSON_Delete(expect_event(sub, "cache_hit", "source", "client"));
    assert_memory_equal(cold, warm, sizeof cold);

    /* Another connection, same uid: the same files load. */
    nnd_client *c2 = connect_to(&dmn);
    assert_true(prep_run(c2, &m, dir, token, warm));
    assert_memory_equal(cold, warm, sizeof cold);
    nnd_client_close(c2);
    nn_close(sub);
    cache_model_clear(&m);
    nnd_client_close(c);
}

typedef struct flip_ctx {
    nnd_client *c;
    const cache_model *m;
    const char *dir;
    const uint8_t *token;
} flip_ctx;

static void refused_after_flip(void *ctx, int file, size_t at) {
    flip_ctx *f = ctx;
    if (prep_run(f->c, f->m, f->dir, f->token, NULL))
        fail_msg("%s byte %zu flipped was accepted", file ? "data" : "model", at);
}

/* Every single-byte change of either file is refused, and the fallback (which rewrites the
 * files) gives the right outputs. */
static void flip_every_byte(const tst_daemon *d, const char *name, uint8_t t, float seed) {
    char dir[512], mpath[512], dpath[512];
    make_dir(dir, sizeof dir, name);
    uint8_t token[32];
    token_of(token, t);
    paths_of(dir, token, mpath, dpath);
    nnd_client *c = connect_to(d);
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, seed), 0);
    assert_false(prep_run(c, &m, dir, token, NULL));
    size_t mlen;
    uint8_t *good_m = tst_read_file(mpath, &mlen);
    assert_non_null(good_m);
    double rejected = counter(d, "rejected");
    flip_ctx fc = {c, &m, dir, token};
    size_t lens[2];
    long flips = tst_flip_each_byte(mpath, dpath, refused_after_flip, &fc, lens);
    assert_true(flips > 0);
    assert_int_equal(counter(d, "rejected"), rejected + (double)flips);
    /* The fallbacks rewrote the files as they were, and they load again. */
    size_t l2;
    uint8_t *now = tst_read_file(mpath, &l2);
    assert_non_null(now);
    assert_int_equal(l2, mlen);
    assert_memory_equal(now, good_m, mlen);
    free(now);
    assert_true(prep_run(c, &m, dir, token, NULL));
    printf("# %s: %ld single-byte flips (%zu model, %zu data bytes) all refused\n", name, flips,
           lens[0], lens[1]);
    free(good_m);
    cache_model_clear(&m);
    nnd_client_close(c);
}

/* With the model in the content cache, a load only verifies the files; without (here: the
 * content cache off), it prepares them while they are hashed, and keeps nothing of a
 * mismatch. */
static void test_every_byte_flip(void **state) {
    (void)state;
    flip_every_byte(&dmn, "flip", 2, 1.5f);
    tst_daemon d;
    const char *args[] = {"--cache-max-bytes", "0", NULL};
    assert_int_equal(tst_daemon_start(&d, args), 0);
    flip_every_byte(&d, "flip-uncached", 12, 1.75f);
    assert_int_equal(counter(&d, "memory_models"), 0);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

static void test_truncate_extend_swap(void **state) {
    (void)state;
    char dir[512], mpath[512], dpath[512], tmp[600];
    make_dir(dir, sizeof dir, "shape");
    uint8_t token[32];
    token_of(token, 3);
    paths_of(dir, token, mpath, dpath);
    nnd_client *c = connect_to(&dmn);
    int sub = subscribe(&dmn);
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, 2.5f), 0);
    assert_false(prep_run(c, &m, dir, token, NULL));
    off_t ms = size_of(mpath), ds = size_of(dpath);
    const char *paths[2] = {mpath, dpath};
    off_t sizes[2] = {ms, ds};
    for (int f = 0; f < 2; f++) {
        assert_int_equal(truncate(paths[f], sizes[f] - 1), 0);
        drain(sub);
        assert_false(prep_run(c, &m, dir, token, NULL));
        cJSON_Delete(expect_event(sub, "cache_rejected", NULL, NULL));
        assert_true(prep_run(c, &m, dir, token, NULL)); /* rewritten whole */

        assert_int_equal(truncate(paths[f], sizes[f] + 1), 0);
        assert_false(prep_run(c, &m, dir, token, NULL));
        assert_true(prep_run(c, &m, dir, token, NULL));

        /* Same length, last byte changed by the extension's zero: still refused. */
        assert_int_equal(truncate(paths[f], sizes[f] / 2), 0);
        assert_int_equal(truncate(paths[f], sizes[f]), 0);
        assert_false(prep_run(c, &m, dir, token, NULL));
        assert_true(prep_run(c, &m, dir, token, NULL));
    }
    /* Swap the two files. */
    snprintf(tmp, sizeof tmp, "%s.tmp", mpath);
    assert_int_equal(rename(mpath, tmp), 0);
    assert_int_equal(rename(dpath, mpath), 0);
    assert_int_equal(rename(tmp, dpath), 0);
    drain(sub);
    assert_false(prep_run(c, &m, dir, token, NULL));
    cJSON *ev = expect_event(sub, "cache_rejected", NULL, NULL);
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(ev, "reason");
    assert_non_null(strstr(reason->valuestring, "swapped"));
    cJSON_Delete(ev);
    assert_true(prep_run(c, &m, dir, token, NULL));
    nn_close(sub);
    cache_model_clear(&m);
    nnd_client_close(c);
}

/* An app that keeps its token while its model changes gets a miss, not the old model. */
static void test_changed_model_same_token(void **state) {
    (void)state;
    char dir[512];
    make_dir(dir, sizeof dir, "changed");
    uint8_t token[32];
    token_of(token, 4);
    nnd_client *c = connect_to(&dmn);
    cache_model a, b;
    assert_int_equal(cache_model_init(&a, N, 3.0f), 0);
    assert_int_equal(cache_model_init(&b, N, 4.0f), 0);
    assert_false(prep_run(c, &a, dir, token, NULL));
    assert_true(prep_run(c, &a, dir, token, NULL));
    assert_false(prep_run(c, &b, dir, token, NULL)); /* outputs checked against b's weights */
    assert_true(prep_run(c, &b, dir, token, NULL));
    assert_false(prep_run(c, &a, dir, token, NULL)); /* the files hold b now */
    cache_model_clear(&a);
    cache_model_clear(&b);
    nnd_client_close(c);
}

static void test_bad_from_cache_requests(void **state) {
    (void)state;
    nnd_client *c = connect_to(&dmn);
    uint8_t token[32];
    token_of(token, 5);
    int p[2];
    assert_int_equal(pipe(p), 0);
    uint32_t mi = 0, di = 1;
    Nnd__PrepareModelFromCache fc = NND__PREPARE_MODEL_FROM_CACHE__INIT;
    fc.n_model_cache_fds = 1, fc.model_cache_fds = &mi;
    fc.n_data_cache_fds = 1, fc.data_cache_fds = &di;
    fc.token.data = token;
    fc.token.len = 31;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL_FROM_CACHE;
    req.prepare_model_from_cache = &fc;
    Nnd__Reply *r;
    char err[256];
    assert_int_equal(nnd_client_call(c, &req, p, 2, &r, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(r->status, NND__ERROR_STATUS__INVALID_ARGUMENT);
    nnd__reply__free_unpacked(r, NULL);
    fc.token.len = 32; /* an unknown token */
    assert_int_equal(nnd_client_call(c, &req, p, 2, &r, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(r->status, NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_non_null(strstr(r->message, "unknown token"));
    nnd__reply__free_unpacked(r, NULL);
    close(p[0]);
    close(p[1]);
    uint32_t nm, nd;
    assert_int_equal(nnd_client_cache_files_needed(c, &nm, &nd, err, sizeof err), 0);
    assert_int_equal(nm, 1);
    assert_int_equal(nd, 1);
    nnd_client_close(c);
}

/* The same token and byte-identical files, from another uid, are refused. */
static void test_foreign_uid_refused(void **state) {
    (void)state;
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) skip();
    char mine[512], theirs[512], mpath[512], dpath[512], tm[512], td[512], cmd[4096];
    make_dir(mine, sizeof mine, "uid-root");
    make_dir(theirs, sizeof theirs, "uid-nobody");
    assert_int_equal(chown(theirs, 65534, 65534), 0);
    assert_int_equal(chmod(dmn.dir, 0755), 0); /* let the other uid reach the socket */
    uint8_t token[32];
    token_of(token, 6);
    nnd_client *c = connect_to(&dmn);
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, 5.0f), 0);
    assert_false(prep_run(c, &m, mine, token, NULL));
    assert_true(prep_run(c, &m, mine, token, NULL));
    paths_of(mine, token, mpath, dpath);
    paths_of(theirs, token, tm, td);
    snprintf(cmd, sizeof cmd, "cp %s %s && cp %s %s && chown 65534:65534 %s %s", mpath, tm, dpath,
             td, tm, td);
    assert_int_equal(system(cmd), 0);
    int sub = subscribe(&dmn);
    double rejected = counter(&dmn, "rejected");
    char hex[65];
    for (int i = 0; i < 32; i++)
        sprintf(hex + 2 * i, "%02x", token[i]);
    snprintf(cmd, sizeof cmd,
             "setpriv --reuid=65534 --regid=65534 --clear-groups %s %s %s %s %d 5.0",
             CACHE_CLIENT_PATH, dmn.socket_path, theirs, hex, N);
    for (int round = 0; round < 2; round++) {
        FILE *f = popen(cmd, "r");
        assert_non_null(f);
        char line[64] = "";
        assert_non_null(fgets(line, sizeof line, f));
        assert_int_equal(pclose(f), 0); /* outputs right either way */
        /* First refused (another uid's token); then its own save loads. */
        assert_string_equal(line, round == 0 ? "from_cache=0\n" : "from_cache=1\n");
        if (round == 0) {
            cJSON *ev =
                expect_event(sub, "cache_rejected", "reason", "token belongs to another uid");
            assert_int_equal(cJSON_GetObjectItemCaseSensitive(ev, "uid")->valueint, 65534);
            cJSON_Delete(ev);
            assert_int_equal(counter(&dmn, "rejected"), rejected + 1);
        }
    }
    /* And root's own cache still loads. */
    assert_true(prep_run(c, &m, mine, token, NULL));
    nn_close(sub);
    cache_model_clear(&m);
    nnd_client_close(c);
}

/* A daemon on a state directory that outlives it. */
static void start_on(tst_daemon *d, const char *state, const char *build) {
    const char *args[] = {"--state-dir", state, "--driver-build-id", build, NULL};
    assert_int_equal(tst_daemon_start(d, args), 0);
    snprintf(d->state_dir, sizeof d->state_dir, "%.280s", state); /* for the bus helpers */
}

static void test_restart_and_build_id(void **state) {
    (void)state;
    char st[512], dir[512];
    make_dir(st, sizeof st, "state-restart");
    make_dir(dir, sizeof dir, "restart");
    uint8_t token[32];
    token_of(token, 7);
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, 6.0f), 0);
    tst_daemon d;

    start_on(&d, st, "build-one");
    nnd_client *c = connect_to(&d);
    assert_false(prep_run(c, &m, dir, token, NULL));
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);

    start_on(&d, st, "build-one"); /* the index holds across a restart */
    c = connect_to(&d);
    assert_true(prep_run(c, &m, dir, token, NULL));
    assert_int_equal(counter(&d, "invalidated_at_start"), 0);
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);

    start_on(&d, st, "build-two"); /* a new build drops every older entry */
    assert_true(counter(&d, "invalidated_at_start") >= 1);
    int sub = subscribe(&d);
    c = connect_to(&d);
    assert_false(prep_run(c, &m, dir, token, NULL));
    cJSON_Delete(expect_event(sub, "cache_rejected", "reason", "unknown token"));
    assert_true(prep_run(c, &m, dir, token, NULL)); /* saved anew under build-two */
    nnd_client_close(c);
    nn_close(sub);
    assert_int_equal(tst_daemon_stop(&d), 0);
    cache_model_clear(&m);
}

typedef struct bg_prepare {
    const tst_daemon *d;
    const cache_model *m;
    const char *dir;
    const uint8_t *token;
    int status;
} bg_prepare;

static void *bg_prepare_run(void *arg) {
    bg_prepare *b = arg;
    char err[256];
    nnd_client *c = nnd_client_connect(b->d->socket_path, "test_cache-bg", err, sizeof err);
    if (!c) {
        b->status = -1;
        return NULL;
    }
    uint64_t h;
    bool from_cache;
    b->status = nnd_client_prepare_cached(c, &b->m->add.model, &b->m->pool_fd, 1, 0, 0, 0, b->dir,
                                          b->token, &h, &from_cache, err, sizeof err);
    nnd_client_close(c);
    return NULL;
}

/* The index after a crash: SQLite finds it intact, and its one token row records the whole
 * data file (so the half-written one is shorter than recorded). */
static void check_index_after_crash(const char *state, off_t partial) {
    char db_path[600];
    snprintf(db_path, sizeof db_path, "%s/cache.db", state);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT count(*), max(data_size) FROM tokens", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1);
    assert_true(sqlite3_column_int64(st, 1) > partial);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* Content store files as a crash leaves them: a temporary cut short, and a pair whose index
 * row was never committed. Start must remove them all. */
static void plant_store_leftovers(const char *state, char paths[3][700]) {
    const char *names[3] = {".data.tmp", ".model", ".data"};
    for (int i = 0; i < 3; i++) {
        snprintf(paths[i], 700, "%s/content/%s%s", state,
                 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", names[i]);
        FILE *f = fopen(paths[i], "w");
        assert_non_null(f);
        fputs("cut short", f);
        fclose(f);
    }
}

/* SIGKILL while the daemon writes a cache: the index row is committed, the data file half
 * written. The index stays intact, nothing partial is accepted (the next load refuses the
 * half-written file, start sweeps the store's leftovers), the fallback is right, and then
 * the cache loads. */
static void test_kill_mid_write(void **state) {
    (void)state;
    char st[512], dir[512], mpath[512], dpath[512];
    make_dir(st, sizeof st, "state-kill");
    make_dir(dir, sizeof dir, "kill");
    uint8_t token[32];
    token_of(token, 8);
    paths_of(dir, token, mpath, dpath);
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, 7.0f), 0);
    tst_daemon d;
    setenv("NND_TEST_CACHE_WRITE_STALL", "600", 1);
    start_on(&d, st, "build-k");
    unsetenv("NND_TEST_CACHE_WRITE_STALL");
    bg_prepare b = {.d = &d, .m = &m, .dir = dir, .token = token};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, bg_prepare_run, &b), 0);
    bool stalled = false;
    for (int i = 0; i < 1000 && !stalled; i++) {
        stalled = size_of(dpath) == 600;
        if (!stalled) usleep(10000);
    }
    assert_true(stalled);
    assert_int_equal(kill(d.pid, SIGKILL), 0);
    assert_int_equal(waitpid(d.pid, NULL, 0), d.pid);
    d.pid = 0;
    pthread_join(t, NULL);
    assert_true(b.status < 0); /* the daemon died under the call */
    assert_int_equal(size_of(dpath), 600);
    tst_daemon_stop(&d); /* removes its socket dir; the state dir is ours */
    check_index_after_crash(st, 600);
    char leftovers[3][700];
    plant_store_leftovers(st, leftovers);

    start_on(&d, st, "build-k");
    for (int i = 0; i < 3; i++)
        assert_int_equal(access(leftovers[i], F_OK), -1);
    int sub = subscribe(&d);
    nnd_client *c = connect_to(&d);
    assert_false(prep_run(c, &m, dir, token, NULL)); /* the half-written cache is refused */
    cJSON *ev = expect_event(sub, "cache_rejected", NULL, NULL);
    assert_non_null(
        strstr(cJSON_GetObjectItemCaseSensitive(ev, "reason")->valuestring, "truncated"));
    cJSON_Delete(ev);
    assert_true(prep_run(c, &m, dir, token, NULL)); /* the fallback saved it whole */
    /* A half-written file padded to full length is refused too. */
    off_t full = size_of(dpath);
    assert_int_equal(truncate(dpath, 600), 0);
    assert_int_equal(truncate(dpath, full), 0);
    assert_false(prep_run(c, &m, dir, token, NULL));
    cJSON_Delete(expect_event(sub, "cache_rejected", "reason", "hash mismatch"));
    nnd_client_close(c);
    nn_close(sub);
    assert_int_equal(tst_daemon_stop(&d), 0);
    cache_model_clear(&m);
}

/* ---- the content cache ----------------------------------------------------------------- */

static uint64_t plain_prepare(nnd_client *c, const cache_model *m) {
    uint64_t h = 0;
    char err[256];
    if (nnd_client_prepare(c, &m->add.model, &m->pool_fd, 1, 0, 0, 0, &h, err, sizeof err) != 0)
        fail_msg("prepare: %s", err);
    return h;
}

static const cJSON *find_entry(const cJSON *list, const char *hash) {
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(list, "entries")) {
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(e, "hash");
        if (cJSON_IsString(h) && !strcmp(h->valuestring, hash)) return e;
    }
    return NULL;
}

static void test_content_cache_shared(void **state) {
    (void)state;
    nnd_client *a = connect_to(&dmn), *b = connect_to(&dmn);
    int sub = subscribe(&dmn);
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, 8.0f), 0);
    double hits = counter(&dmn, "content_hits");
    uint64_t ha = plain_prepare(a, &m);
    cJSON *ev = expect_event(sub, "cache_miss", "source", "content");
    char hash[65];
    snprintf(hash, sizeof hash, "%s", cJSON_GetObjectItemCaseSensitive(ev, "hash")->valuestring);
    cJSON_Delete(ev);
    uint64_t hb = plain_prepare(b, &m); /* another client, same model: shared */
    cJSON_Delete(expect_event(sub, "cache_hit", "source", "content"));
    assert_int_equal(counter(&dmn, "content_hits"), hits + 1);
    assert_int_equal(cache_model_run(a, &m, ha, NULL), 0);
    assert_int_equal(cache_model_run(b, &m, hb, NULL), 0);

    /* Listed with two users; written to the store off the loop thread. */
    const cJSON *e = NULL;
    cJSON *list = NULL;
    for (int i = 0; i < 200; i++) {
        cJSON_Delete(list);
        list = admin(&dmn, "cache list");
        e = find_entry(list, hash);
        if (e && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "stored"))) break;
        usleep(10000);
    }
    assert_non_null(e);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "stored")));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(e, "users")->valueint, 2);
    cJSON_Delete(list);

    /* nndctl shows it. */
    char cmd[1024], line[256];
    snprintf(cmd, sizeof cmd, "%s --state-dir %s cache list", NNDCTL_PATH, dmn.state_dir);
    FILE *f = popen(cmd, "r");
    bool seen = false;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, hash, 16)) seen = true;
    assert_int_equal(pclose(f), 0);
    assert_true(seen);

    /* Purge: the store and the index empty; models in use keep working. */
    snprintf(cmd, sizeof cmd, "%s --state-dir %s cache purge", NNDCTL_PATH, dmn.state_dir);
    assert_int_equal(system(cmd), 0);
    list = admin(&dmn, "cache list");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(list, "entries")), 0);
    cJSON_Delete(list);
    assert_int_equal(counter(&dmn, "tokens"), 0);
    assert_int_equal(cache_model_run(a, &m, ha, NULL), 0);
    nnd_client_release(a, ha);
    nnd_client_release(b, hb);
    assert_int_equal(cache_model_run(b, &m, plain_prepare(b, &m), NULL), 0);
    nn_close(sub);
    cache_model_clear(&m);
    nnd_client_close(a);
    nnd_client_close(b);
}

static void test_content_lru_and_restart(void **state) {
    (void)state;
    char st[512];
    make_dir(st, sizeof st, "state-lru");
    tst_daemon d;
    const char *args[] = {"--state-dir", st, "--cache-max-bytes", "8K", NULL};
    assert_int_equal(tst_daemon_start(&d, args), 0);
    snprintf(d.state_dir, sizeof d.state_dir, "%.280s", st);
    int sub = subscribe(&d);
    nnd_client *c = connect_to(&d);
    /* Five models of about 1.6 KB each, then five more: the cap holds about five. */
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 5; i++) {
            cache_model m;
            assert_int_equal(cache_model_init(&m, N, 100.0f + (float)(round * 5 + i)), 0);
            uint64_t h = plain_prepare(c, &m);
            assert_int_equal(cache_model_run(c, &m, h, NULL), 0);
            nnd_client_release(c, h);
            cache_model_clear(&m);
        }
    cJSON_Delete(expect_event(sub, "cache_evicted", NULL, NULL));
    double stored = 0;
    for (int i = 0; i < 200 && stored < 1; i++) {
        stored = counter(&d, "store_entries");
        usleep(10000);
    }
    assert_true(counter(&d, "evicted") >= 1);
    assert_true(counter(&d, "memory_bytes") <= 8192);
    assert_true(counter(&d, "store_bytes") <= 8192);
    assert_true(stored >= 1);
    cJSON *before = admin(&d, "cache list");
    int n_before = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(before, "entries"));
    nnd_client_close(c);
    nn_close(sub);
    assert_int_equal(tst_daemon_stop(&d), 0);

    /* The store outlives the daemon. */
    assert_int_equal(tst_daemon_start(&d, args), 0);
    snprintf(d.state_dir, sizeof d.state_dir, "%.280s", st);
    cJSON *after = admin(&d, "cache list");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(after, "entries"), *e;
    int stored_after = 0;
    cJSON_ArrayForEach(e, entries) {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "stored"))) stored_after++;
        assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "in_memory")));
    }
    assert_true(stored_after >= 1 && stored_after <= n_before);
    cJSON_Delete(before);
    cJSON_Delete(after);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* Last: a clean stop (under ASan, also no leaks). */
static void test_clean_stop(void **state) {
    (void)state;
    assert_int_equal(tst_daemon_stop(&dmn), 0);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cold_then_warm),
        cmocka_unit_test(test_every_byte_flip),
        cmocka_unit_test(test_truncate_extend_swap),
        cmocka_unit_test(test_changed_model_same_token),
        cmocka_unit_test(test_bad_from_cache_requests),
        cmocka_unit_test(test_foreign_uid_refused),
        cmocka_unit_test(test_restart_and_build_id),
        cmocka_unit_test(test_kill_mid_write),
        cmocka_unit_test(test_content_cache_shared),
        cmocka_unit_test(test_content_lru_and_restart),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

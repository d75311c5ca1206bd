/* SPDX-License-Identifier: Apache-2.0 */
/* test_cache_save_limit (integration): client cache files are saved only for models of at
 * most --cache-save-max-bytes of constants, through a real daemon started with a 64 KiB
 * limit. A small model is saved and loads from its files; a larger one, compiled through
 * libnnd with a cache directory, is a plain compile: right outputs, never from a cache, no
 * file created, nothing sent for the daemon to skip. A PrepareModel sent with cache files
 * and a token for the larger model (a client that ignores the limit) is prepared, answered
 * cache_save_skipped, counted in cache.saves_over_limit, and its files stay empty; the
 * small model's answer does not say skipped. GetNumberOfCacheFilesNeeded still answers 1
 * and 1. */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/cache_model.h"
#include "tests/support/harness.h"
#include "tests/support/observe.h"

#define LIMIT "64K"
#define SMALL 256u        /* floats: 1 KiB, under the limit */
#define LARGE (32u << 10) /* floats: 128 KiB, over it */

static tst_daemon dmn;
static char dir[400]; /* the cache directory */

static int setup(void **state) {
    (void)state;
    const char *args[] = {"--cache-save-max-bytes", LIMIT, NULL};
    if (tst_daemon_start(&dmn, args) != 0) return -1;
    snprintf(dir, sizeof dir, "%s/app-cache", dmn.dir);
    return mkdir(dir, 0700);
}

static int teardown(void **state) {
    (void)state;
    return tst_daemon_stop(&dmn) == 0 ? 0 : -1;
}

static double cache_num(const char *name) {
    char path[64];
    snprintf(path, sizeof path, "cache.%s", name);
    double v = obs_status_num(dmn.state_dir, path);
    if (isnan(v)) fail_msg("status has no %s", path);
    return v;
}

/* Compiles m with the cache directory under token {seed}; returns from_cache. */
static bool compile_cached(nnd_client *c, const cache_model *m, uint8_t seed) {
    uint8_t token[NND_CACHE_TOKEN_BYTES];
    memset(token, seed, sizeof token);
    uint64_t h = 0;
    bool from_cache = true;
    char err[256];
    if (nnd_client_prepare_cached(c, &m->add.model, &m->pool_fd, 1, 0, 0, 0, dir, token, &h,
                                  &from_cache, err, sizeof err) != 0)
        fail_msg("prepare with a cache directory: %s", err);
    assert_int_equal(cache_model_run(c, m, h, NULL), 0);
    nnd_client_release(c, h);
    return from_cache;
}

static bool files_exist(uint8_t seed) {
    uint8_t token[NND_CACHE_TOKEN_BYTES];
    memset(token, seed, sizeof token);
    char mpath[512], dpath[512];
    struct stat st;
    assert_int_equal(nnd_cache_paths(dir, token, mpath, dpath, sizeof mpath), 0);
    return stat(mpath, &st) == 0 || stat(dpath, &st) == 0;
}

static void test_libnnd_saves_small_only(void **state) {
    (void)state;
    char err[256];
    nnd_client *c = nnd_client_connect(dmn.socket_path, "test_cache_save_limit", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    uint32_t nm = 0, nd = 0;
    assert_int_equal(nnd_client_cache_files_needed(c, &nm, &nd, err, sizeof err), 0);
    assert_true(nm == 1 && nd == 1);
    assert_true(cache_num("save_max_bytes") == 64 * 1024);

    cache_model small, large;
    assert_int_equal(cache_model_init(&small, SMALL, 1.0f), 0);
    assert_int_equal(cache_model_init(&large, LARGE, 2.0f), 0);
    assert_false(compile_cached(c, &small, 1));
    assert_true(files_exist(1));
    assert_true(compile_cached(c, &small, 1));

    double over = cache_num("saves_over_limit"), stored = cache_num("stored");
    assert_false(compile_cached(c, &large, 2));
    assert_false(compile_cached(c, &large, 2));
    assert_false(files_exist(2));
    /* libnnd knew the limit: the daemon was never asked to save. */
    assert_true(cache_num("saves_over_limit") == over);
    assert_true(cache_num("stored") == stored);
    cache_model_clear(&small);
    cache_model_clear(&large);
    nnd_client_close(c);
}

/* PrepareModel with cache files and a token on a raw connection; returns whether the
 * answer says the save was skipped, and the files' sizes after it. */
static bool raw_prepare_saving(int sock, const cache_model *m, off_t *msize, off_t *dsize) {
    char mpath[512], dpath[512];
    snprintf(mpath, sizeof mpath, "%s/raw.model", dir);
    snprintf(dpath, sizeof dpath, "%s/raw.data", dir);
    int fds[3] = {m->pool_fd, open(mpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600),
                  open(dpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)};
    assert_true(fds[1] >= 0 && fds[2] >= 0);
    uint8_t token[32];
    memset(token, 9, sizeof token);
    uint32_t mi = 1, di = 2;
    Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
    pm.model = (Nnd__Model *)&m->add.model;
    pm.token.data = token, pm.token.len = sizeof token;
    pm.n_model_cache_fds = 1, pm.model_cache_fds = &mi;
    pm.n_data_cache_fds = 1, pm.data_cache_fds = &di;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 2000;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &pm;
    Nnd__Reply *r = wire_call(sock, &req, fds, 3);
    assert_non_null(r);
    if (r->status != NND__ERROR_STATUS__NONE) fail_msg("PrepareModel: %s", r->message);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_PREPARED);
    bool skipped = r->prepared->cache_save_skipped;
    wire_free(r);
    struct stat ms, ds;
    assert_int_equal(fstat(fds[1], &ms), 0);
    assert_int_equal(fstat(fds[2], &ds), 0);
    *msize = ms.st_size, *dsize = ds.st_size;
    close(fds[1]), close(fds[2]);
    return skipped;
}

static void test_daemon_skips_and_says_so(void **state) {
    (void)state;
    int sock = tst_connect_raw(&dmn);
    assert_true(sock >= 0);
    assert_int_equal(wire_hello(sock, 1), 0);
    cache_model small, large;
    assert_int_equal(cache_model_init(&small, SMALL, 3.0f), 0);
    assert_int_equal(cache_model_init(&large, LARGE, 4.0f), 0);
    off_t msize, dsize;
    double over = cache_num("saves_over_limit");
    assert_true(raw_prepare_saving(sock, &large, &msize, &dsize));
    assert_true(msize == 0 && dsize == 0);
    assert_true(cache_num("saves_over_limit") == over + 1);
    assert_false(raw_prepare_saving(sock, &small, &msize, &dsize));
    assert_true(msize > 0 && dsize > 0);
    assert_true(cache_num("saves_over_limit") == over + 1);
    cache_model_clear(&small);
    cache_model_clear(&large);
    close(sock);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libnnd_saves_small_only),
        cmocka_unit_test(test_daemon_skips_and_says_so),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

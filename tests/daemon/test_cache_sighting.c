/* SPDX-License-Identifier: Apache-2.0 */
/* test_cache_sighting (integration): the content cache copies and hashes a large model
 * (SRV_CACHE_SIGHTING_BYTES or more) only from its second sighting on, through a real
 * daemon: the first plain prepare of a model is made in place and hashes nothing
 * (cache.first_sightings, cache.hashed_bytes in status), the second copies and hashes it
 * into the cache, the third is a hit found by the full hash; a model whose signature
 * matches another's but whose bytes differ is hashed and prepared from its own bytes; a
 * save to client cache files records the sighting. Every prepared model computes with its
 * own weights. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/cache_model.h"
#include "tests/support/harness.h"
#include "tests/support/observe.h"

#define N (300u << 10) /* floats of weights: 1.2 MB, over the sighting threshold */

static tst_daemon *const dmn = &tst_group_daemon;

typedef struct counts {
    double first, hashed, misses, hits;
} counts;

static double cache_num(const char *name) {
    char path[64];
    snprintf(path, sizeof path, "cache.%s", name);
    double v = obs_status_num(dmn->state_dir, path);
    if (isnan(v)) fail_msg("status has no %s", path);
    return v;
}

static counts now(void) {
    counts c = {cache_num("first_sightings"), cache_num("hashed_bytes"),
                cache_num("content_misses"), cache_num("content_hits")};
    return c;
}

static nnd_client *connect_to(void) {
    char err[256];
    nnd_client *c = nnd_client_connect(dmn->socket_path, "test_cache_sighting", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

static uint64_t prepare(nnd_client *c, const cache_model *m) {
    uint64_t h = 0;
    char err[256];
    if (nnd_client_prepare(c, &m->add.model, &m->pool_fd, 1, 0, 0, 0, &h, err, sizeof err) != 0)
        fail_msg("prepare: %s", err);
    return h;
}

/* First: in place, nothing hashed. Second: copied and hashed, a miss. Third: a hit. */
static void test_hashed_from_second_sighting(void **state) {
    (void)state;
    nnd_client *a = connect_to(), *b = connect_to();
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, 11.0f), 0);
    counts c0 = now();
    uint64_t h1 = prepare(a, &m);
    counts c1 = now();
    assert_true(c1.first == c0.first + 1);
    assert_true(c1.hashed == c0.hashed);
    assert_true(c1.misses == c0.misses && c1.hits == c0.hits);
    assert_int_equal(cache_model_run(a, &m, h1, NULL), 0);

    uint64_t h2 = prepare(a, &m);
    counts c2 = now();
    assert_true(c2.first == c1.first);
    assert_true(c2.hashed >= c1.hashed + (double)N * sizeof(float));
    assert_true(c2.misses == c1.misses + 1 && c2.hits == c1.hits);
    assert_int_equal(cache_model_run(a, &m, h2, NULL), 0);

    uint64_t h3 = prepare(b, &m); /* another client: served by the cache, hashed to find it */
    counts c3 = now();
    assert_true(c3.first == c2.first);
    assert_true(c3.hashed - c2.hashed == c2.hashed - c1.hashed);
    assert_true(c3.misses == c2.misses && c3.hits == c2.hits + 1);
    assert_int_equal(cache_model_run(b, &m, h3, NULL), 0);
    assert_int_equal(cache_model_run(a, &m, h1, NULL), 0);
    nnd_client_close(a);
    nnd_client_close(b);
    cache_model_clear(&m);
}

/* The same shapes with other weights: another model, seen for the first time. */
static void test_other_weights_first_sighting(void **state) {
    (void)state;
    nnd_client *c = connect_to();
    cache_model m, other;
    assert_int_equal(cache_model_init(&m, N, 21.0f), 0);
    assert_int_equal(cache_model_init(&other, N, 22.0f), 0);
    prepare(c, &m);
    uint64_t h = prepare(c, &m); /* cached now */
    counts c0 = now();
    uint64_t ho = prepare(c, &other);
    counts c1 = now();
    assert_true(c1.first == c0.first + 1 && c1.hashed == c0.hashed);
    assert_int_equal(cache_model_run(c, &other, ho, NULL), 0);
    assert_int_equal(cache_model_run(c, &m, h, NULL), 0);
    nnd_client_close(c);
    cache_model_clear(&m);
    cache_model_clear(&other);
}

/* A weight outside the signature's sample changed: the signature is seen, but the full
 * hash tells the models apart, and the new one computes with its own weights. */
static void test_same_signature_other_bytes(void **state) {
    (void)state;
    nnd_client *c = connect_to();
    cache_model m, near;
    assert_int_equal(cache_model_init(&m, N, 31.0f), 0);
    assert_int_equal(cache_model_init(&near, N, 31.0f), 0);
    float *w =
        mmap(NULL, (size_t)N * sizeof(float), PROT_READ | PROT_WRITE, MAP_SHARED, near.pool_fd, 0);
    assert_true(w != MAP_FAILED);
    w[N / 4] += 1000.0f; /* neither the start, the middle nor the end */
    munmap(w, (size_t)N * sizeof(float));
    prepare(c, &m);
    uint64_t h = prepare(c, &m); /* cached now */
    counts c0 = now();
    uint64_t hn = prepare(c, &near);
    counts c1 = now();
    assert_true(c1.first == c0.first);       /* its signature was seen */
    assert_true(c1.hashed > c0.hashed);      /* so it was hashed */
    assert_true(c1.misses == c0.misses + 1); /* and the hash found no such model */
    assert_true(c1.hits == c0.hits);
    float *out = malloc((size_t)N * sizeof(float));
    assert_non_null(out);
    assert_int_equal(cache_model_run_raw(c, &near, hn, out), 0);
    assert_true(out[N / 4] == (1.0f + (float)(N / 4)) + (31.0f + (float)(N / 4) / 4 + 1000.0f));
    assert_true(out[N / 4 + 1] == (1.0f + (float)(N / 4 + 1)) + (31.0f + (float)(N / 4 + 1) / 4));
    free(out);
    assert_int_equal(cache_model_run(c, &m, h, NULL), 0);
    nnd_client_close(c);
    cache_model_clear(&m);
    cache_model_clear(&near);
}

/* A save to client cache files hashes at once and records the sighting: a plain prepare
 * of the same model afterwards is a hit. */
static void test_save_records_sighting(void **state) {
    (void)state;
    char dir[] = "/tmp/nnd-sighting-XXXXXX";
    assert_non_null(mkdtemp(dir));
    nnd_client *c = connect_to();
    cache_model m;
    assert_int_equal(cache_model_init(&m, N, 41.0f), 0);
    uint8_t token[NND_CACHE_TOKEN_BYTES];
    memset(token, 41, sizeof token);
    counts c0 = now();
    uint64_t h = 0;
    bool hit = true;
    char err[256];
    assert_int_equal(nnd_client_prepare_cached(c, &m.add.model, &m.pool_fd, 1, 0, 0, 0, dir, token,
                                               &h, &hit, err, sizeof err),
                     0);
    assert_false(hit);
    counts c1 = now();
    assert_true(c1.first == c0.first && c1.hashed > c0.hashed);
    uint64_t hp = prepare(c, &m);
    counts c2 = now();
    assert_true(c2.first == c1.first && c2.hits == c1.hits + 1);
    assert_int_equal(cache_model_run(c, &m, hp, NULL), 0);
    assert_int_equal(cache_model_run(c, &m, h, NULL), 0);
    nnd_client_close(c);
    cache_model_clear(&m);
    char mpath[600], dpath[600];
    assert_int_equal(nnd_cache_paths(dir, token, mpath, dpath, sizeof mpath), 0);
    unlink(mpath);
    unlink(dpath);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hashed_from_second_sighting),
        cmocka_unit_test(test_other_weights_first_sighting),
        cmocka_unit_test(test_same_signature_other_bytes),
        cmocka_unit_test(test_save_records_sighting),
    };
    return cmocka_run_group_tests(tests, tst_group_setup, tst_group_teardown);
}

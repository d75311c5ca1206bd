/* SPDX-License-Identifier: Apache-2.0 */
/* cache.c: the compilation-cache rows of `make bench`. See cache.h. */
#include "bench/cache.h"

#include <blake2.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/cache_model.h"
#include "tests/support/harness.h"
#include "storage/hash.h"
#include "tests/support/timing.h"

#define WEIGHTS (10u << 20) /* bytes of constants */
#define TRIALS  15

/* PrepareModelFromCache on already open files; returns the handle or 0. */
static uint64_t from_cache(nnd_client *c, const uint8_t *token, int mfd, int dfd) {
    char err[256];
    uint64_t h = 0;
    if (nnd_client_prepare_from_cache(c, token, mfd, dfd, 0, 0, &h, err, sizeof err) != 0) {
        fprintf(stderr, "bench: PrepareModelFromCache: %s\n", err);
        return 0;
    }
    return h;
}
int bench_read_and_hash(int mfd, int dfd, size_t msize, size_t dsize) {
    int fds[2] = {mfd, dfd};
    size_t sizes[2] = {msize, dsize};
    store_buf bufs[2];
    uint8_t digest[2][STORE_HASH_LEN];
    char err[256];
    if (store_hash_read(fds, sizes, 2, bufs, digest, err, sizeof err) < 0) {
        fprintf(stderr, "bench: %s\n", err);
        return -1;
    }
    store_buf_free(&bufs[0]);
    store_buf_free(&bufs[1]);
    return 0;
}

static int plain_read_and_hash(int fd, size_t size) {
    uint8_t *p = malloc(size + 1), out[32];
    if (!p || pread(fd, p, size, 0) != (ssize_t)size) {
        free(p);
        return -1;
    }
    blake2b(out, p, NULL, sizeof out, size, 0);
    free(p);
    return 0;
}

/* Plain prepares on a daemon with the content cache on: the first fills it, the rest hit. */
static int content_prepares(const cache_model *m, double *median_ns) {
    tst_daemon d;
    if (tst_daemon_start(&d, NULL) != 0) return -1;
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "nnd-bench-content", err, sizeof err);
    static uint64_t t[TRIALS + 1];
    int rc = c ? 0 : -1;
    for (int i = 0; rc == 0 && i <= TRIALS; i++) {
        uint64_t h, t0 = bench_now_ns();
        if (nnd_client_prepare(c, &m->add.model, &m->pool_fd, 1, 0, 0, 0, &h, err, sizeof err) != 0)
            rc = -1;
        t[i] = bench_now_ns() - t0;
        if (rc == 0 && i == TRIALS && cache_model_run(c, m, h, NULL) < 0) rc = -1;
        if (rc == 0) nnd_client_release(c, h);
    }
    if (rc < 0)
        fprintf(stderr, "bench: content cache: %s\n", err);
    else
        *median_ns = bench_median_u64(t + 1, TRIALS);
    nnd_client_close(c);
    tst_daemon_stop(&d);
    return rc;
}

int bench_cache_rows(bench_cache *out) {
    memset(out, 0, sizeof *out);
    tst_daemon d;
    /* The loads themselves are measured: saved whatever the model's size. */
    const char *args[] = {"--cache-max-bytes", "0", "--cache-save-max-bytes", "0", NULL};
    if (tst_daemon_start(&d, args) != 0) return -1;
    char dir[400], mpath[512], dpath[512], err[256];
    snprintf(dir, sizeof dir, "%s/cache", d.dir);
    mkdir(dir, 0700);
    int rc = -1, mfd = -1, dfd = -1;
    static uint64_t load[TRIALS], floor_t[TRIALS], plain[TRIALS], cold[TRIALS], client[TRIALS];
    uint8_t app_token[NND_CACHE_TOKEN_BYTES] = {42}, token[NND_CACHE_TOKEN_BYTES];
    cache_model m;
    nnd_client *c = nnd_client_connect(d.socket_path, "nnd-bench-cache", err, sizeof err);
    if (!c || cache_model_init(&m, WEIGHTS / sizeof(float), 0.5f) < 0) {
        fprintf(stderr, "bench: cache: %s\n", c ? "cannot build the model" : err);
        if (c) nnd_client_close(c);
        tst_daemon_stop(&d);
        return -1;
    }
    uint64_t h;
    bool hit;
    uint64_t t0 = bench_now_ns();
    if (nnd_client_prepare_cached(c, &m.add.model, &m.pool_fd, 1, 0, 0, 0, dir, app_token, &h, &hit,
                                  err, sizeof err) != 0 ||
        hit) {
        fprintf(stderr, "bench: cache: first compile: %s\n", hit ? "came from a cache" : err);
        goto out;
    }
    out->save_ns = (double)(bench_now_ns() - t0);
    if (cache_model_run(c, &m, h, NULL) < 0) goto out;
    nnd_client_release(c, h);
    if (nnd_cache_paths(dir, app_token, mpath, dpath, sizeof mpath) < 0 ||
        nnd_cache_token(&m.add.model, &m.pool_fd, 1, 0, 0, app_token, token) < 0)
        goto out;
    mfd = open(mpath, O_RDONLY | O_CLOEXEC);
    dfd = open(dpath, O_RDONLY | O_CLOEXEC);
    struct stat ms, ds;
    if (mfd < 0 || dfd < 0 || fstat(mfd, &ms) < 0 || fstat(dfd, &ds) < 0) goto out;
    out->bytes = (double)(ms.st_size + ds.st_size);

    for (int i = 0; i < TRIALS; i++) {
        /* The load and its floor back to back, in alternating order. */
        for (int k = 0; k < 2; k++) {
            if ((k == 0) == (i % 2 == 0)) {
                t0 = bench_now_ns();
                if (!(h = from_cache(c, token, mfd, dfd))) goto out;
                load[i] = bench_now_ns() - t0;
                if (i == 0 && cache_model_run(c, &m, h, NULL) < 0) goto out;
                nnd_client_release(c, h);
            } else {
                t0 = bench_now_ns();
                if (bench_read_and_hash(mfd, dfd, (size_t)ms.st_size, (size_t)ds.st_size) < 0)
                    goto out;
                floor_t[i] = bench_now_ns() - t0;
            }
        }

        t0 = bench_now_ns();
        if (plain_read_and_hash(mfd, (size_t)ms.st_size) < 0 ||
            plain_read_and_hash(dfd, (size_t)ds.st_size) < 0)
            goto out;
        plain[i] = bench_now_ns() - t0;

        t0 = bench_now_ns();
        if (nnd_client_prepare(c, &m.add.model, &m.pool_fd, 1, 0, 0, 0, &h, err, sizeof err) != 0) {
            fprintf(stderr, "bench: cache: cold prepare: %s\n", err);
            goto out;
        }
        cold[i] = bench_now_ns() - t0;
        nnd_client_release(c, h);

        t0 = bench_now_ns();
        if (nnd_client_prepare_cached(c, &m.add.model, &m.pool_fd, 1, 0, 0, 0, dir, app_token, &h,
                                      &hit, err, sizeof err) != 0 ||
            !hit) {
            fprintf(stderr, "bench: cache: reload: %s\n", hit ? err : "missed the cache");
            goto out;
        }
        client[i] = bench_now_ns() - t0;
        nnd_client_release(c, h);
    }
    out->load_ns = bench_median_u64(load, TRIALS);
    out->floor_ns = bench_median_u64(floor_t, TRIALS);
    out->plain_floor_ns = bench_median_u64(plain, TRIALS);
    out->cold_ns = bench_median_u64(cold, TRIALS);
    out->client_ns = bench_median_u64(client, TRIALS);
    rc = content_prepares(&m, &out->content_ns);
out:
    if (mfd >= 0) close(mfd);
    if (dfd >= 0) close(dfd);
    cache_model_clear(&m);
    nnd_client_close(c);
    tst_daemon_stop(&d);
    return rc;
}

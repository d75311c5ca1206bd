/* prepare_rows.c: see prepare_rows.h. */
#include "prepare_rows.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "codes.h"
#include "harness.h"
#include "mobilenet.h"
#include "mobilenet_nnapi.h"
#include "mobilenet_xnn.h"
#include "nnd/NeuralNetworks.h"
#include "nnd/nnd.h"
#include "timing.h"

#define ROUNDS    12
#define PER_ROUND 2

/* The net every side uses; cold compiles change its weights before each trial. */
typedef struct side {
    bench_net net;
    ANeuralNetworksModel *cached; /* the one model the hits load */
    char dir[400];                /* its cache directory */
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN];
    int mfd, dfd;
    size_t msize, dsize;
} side;

/* Scales every weight by 1 + 2^-20: a model whose bytes no daemon has seen (most values
 * change in their low bits), as a retrained network's would. */
static void retrain(bench_net *net) {
    for (size_t i = 0; i < net->n_layers; i++) {
        float *w = net->layers[i].weights;
        for (size_t k = 0; w && k < net->layers[i].weight_bytes / sizeof *w; k++)
            w[k] *= 1.f + 0x1p-20f;
    }
}

/* A cold compile: a new model built (not timed), then compiled. */
static double cold_run(void *ctx) {
    side *s = ctx;
    retrain(&s->net);
    ANeuralNetworksModel *m = bench_nnapi_model(&s->net);
    double t = m ? bench_nnapi_compile_ns(m, NULL, NULL) : -1;
    ANeuralNetworksModel_free(m);
    return t;
}

static double hit_run(void *ctx) {
    side *s = ctx;
    return bench_nnapi_compile_ns(s->cached, s->dir, s->token);
}

static double xnn_run(void *ctx) {
    return bench_xnn_create_ns(&((side *)ctx)->net);
}

static double read_hash_run(void *ctx) {
    side *s = ctx;
    uint64_t t0 = bench_now_ns();
    if (bench_read_and_hash(s->mfd, s->dfd, s->msize, s->dsize) < 0) return -1;
    return (double)(bench_now_ns() - t0);
}

/* Saves the cached model's files in a directory of the daemon's and opens them. */
static int save_cached(side *s, const nnd_test_daemon *d) {
    snprintf(s->dir, sizeof s->dir, "%s/ndk-cache", d->dir);
    mkdir(s->dir, 0700);
    memset(s->token, 7, sizeof s->token);
    if (!(s->cached = bench_nnapi_model(&s->net))) return -1;
    if (bench_nnapi_compile_ns(s->cached, s->dir, s->token) < 0) return -1;
    char mpath[512], dpath[512];
    struct stat ms, ds;
    if (nnd_cache_paths(s->dir, s->token, mpath, dpath, sizeof mpath) < 0) return -1;
    s->mfd = open(mpath, O_RDONLY | O_CLOEXEC);
    s->dfd = open(dpath, O_RDONLY | O_CLOEXEC);
    if (s->mfd < 0 || s->dfd < 0 || fstat(s->mfd, &ms) < 0 || fstat(s->dfd, &ds) < 0 ||
        ms.st_size == 0 || ds.st_size == 0) {
        fprintf(stderr, "bench: prepare: the compilation cache files were not written\n");
        return -1;
    }
    s->msize = (size_t)ms.st_size, s->dsize = (size_t)ds.st_size;
    return 0;
}

/* Hits, cold compiles, XNNPACK creation and the files' read and hash, in turns. */
static int hit_rounds(side *s, bench_prepare *out) {
    bench_run_fn run[4] = {hit_run, cold_run, xnn_run, read_hash_run};
    size_t n = ROUNDS * PER_ROUND;
    double *t = malloc(4 * n * sizeof *t);
    int rc = t ? 0 : -1;
    for (int k = 0; rc == 0 && k < 4; k++) /* warm-up */
        rc = run[k](s) < 0 ? -1 : 0;
    for (size_t r = 0; rc == 0 && r < ROUNDS; r++)
        for (int k = 0; rc == 0 && k < 4; k++)
            for (size_t i = 0; rc == 0 && i < PER_ROUND; i++)
                if ((t[k * n + r * PER_ROUND + i] = run[k](s)) < 0) rc = -1;
    if (rc == 0) {
        out->hit_xnn.a_ns = bench_median(t, n);
        out->hit_cold_ns = bench_median(t + n, n);
        out->hit_xnn.b_ns = bench_median(t + 2 * n, n);
        out->read_hash_ns = bench_median(t + 3 * n, n);
    }
    free(t);
    return rc;
}

int bench_prepare_rows(bench_prepare *out) {
    memset(out, 0, sizeof *out);
    side s = {.mfd = -1, .dfd = -1};
    if (bench_net_init(&s.net, NND_TENSOR_FLOAT32)) {
        fprintf(stderr, "bench: prepare: out of memory building the MobileNet\n");
        return -1;
    }
    nnd_test_daemon d;
    int rc = nnd_test_daemon_start(&d, NULL);
    if (rc == 0) {
        /* libnnd's NNAPI layer reaches the daemon that $NND_SOCKET names. */
        setenv("NND_SOCKET", d.socket_path, 1);
        rc = bench_alternate(cold_run, &s, xnn_run, &s, NULL, ROUNDS, PER_ROUND, &out->cold_xnn);
        nnd_test_daemon_stop(&d);
    }
    const char *no_content_cache[] = {"--cache-max-bytes", "0", NULL};
    if (rc == 0 && (rc = nnd_test_daemon_start(&d, no_content_cache)) == 0) {
        setenv("NND_SOCKET", d.socket_path, 1);
        rc = save_cached(&s, &d);
        if (rc == 0) rc = hit_rounds(&s, out);
        out->file_bytes = (double)(s.msize + s.dsize);
        nnd_test_daemon_stop(&d);
    }
    out->cold_xnn.shape = out->hit_xnn.shape = "MobileNet v1 1.0 224x224 FLOAT32 through NNAPI";
    if (s.mfd >= 0) close(s.mfd);
    if (s.dfd >= 0) close(s.dfd);
    ANeuralNetworksModel_free(s.cached);
    bench_net_free(&s.net);
    return rc;
}

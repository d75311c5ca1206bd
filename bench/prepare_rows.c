/* SPDX-License-Identifier: Apache-2.0 */
/* prepare_rows.c: see prepare_rows.h. */
#include "bench/prepare_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "schema/codes.h"
#include "tests/support/harness.h"
#include "tests/support/mobilenet.h"
#include "tests/support/mobilenet_nnapi.h"
#include "bench/mobilenet_xnn.h"
#include "nnd/NeuralNetworks.h"
#include "nnd/nnd_wire.h"
#include "tests/support/timing.h"

#define ROUNDS    12
#define PER_ROUND 2

/* The nets the sides use: cold compiles change net's weights before each trial; the
 * compiles with the cache directory use fixed, whose weights never change. */
typedef struct side {
    bench_net net, fixed;
    char dir[400]; /* its cache directory */
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN];
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

/* An app's next run: the same model built anew (not timed), as a cold compile's is, then
 * compiled with its cache directory and token. */
static double hit_run(void *ctx) {
    side *s = ctx;
    ANeuralNetworksModel *m = bench_nnapi_model(&s->fixed);
    double t = m ? bench_nnapi_compile_ns(m, s->dir, s->token) : -1;
    ANeuralNetworksModel_free(m);
    return t;
}

static double xnn_run(void *ctx) {
    return bench_xnn_create_ns(&((side *)ctx)->net);
}

/* Compiles the fixed model once with its cache directory, as an app's first run does;
 * then notes whether the daemon saved cache files for it. */
static int save_cached(side *s, const tst_daemon *d, bench_prepare *out) {
    snprintf(s->dir, sizeof s->dir, "%s/ndk-cache", d->dir);
    mkdir(s->dir, 0700);
    memset(s->token, 7, sizeof s->token);
    if (hit_run(s) < 0) return -1;
    /* The files are named by the app's token (the folded one is inside them). */
    char mpath[512], dpath[512];
    struct stat ms, ds;
    if (nnd_cache_paths(s->dir, s->token, mpath, dpath, sizeof mpath) < 0) return -1;
    out->files_saved =
        stat(mpath, &ms) == 0 && stat(dpath, &ds) == 0 && ms.st_size > 0 && ds.st_size > 0;
    out->file_bytes = out->files_saved ? (double)(ms.st_size + ds.st_size) : 0;
    return 0;
}

/* Compiles with the cache directory, cold compiles and XNNPACK creation, in turns; the
 * first two swap places every other round, so that each follows XNNPACK's creation (whose
 * threads may still spin) equally often. */
static int hit_rounds(side *s, bench_prepare *out) {
    bench_run_fn run[3] = {hit_run, cold_run, xnn_run};
    size_t n = ROUNDS * PER_ROUND;
    double *t = malloc(3 * n * sizeof *t);
    int rc = t ? 0 : -1;
    for (int k = 0; rc == 0 && k < 3; k++) /* warm-up */
        rc = run[k](s) < 0 ? -1 : 0;
    for (size_t r = 0; rc == 0 && r < ROUNDS; r++)
        for (int j = 0; rc == 0 && j < 3; j++) {
            int k = j < 2 && r % 2 ? 1 - j : j;
            for (size_t i = 0; rc == 0 && i < PER_ROUND; i++)
                if ((t[k * n + r * PER_ROUND + i] = run[k](s)) < 0) rc = -1;
        }
    if (rc == 0) {
        out->hit_xnn.a_ns = bench_median(t, n);
        out->hit_cold_ns = bench_median(t + n, n);
        out->hit_xnn.b_ns = bench_median(t + 2 * n, n);
    }
    free(t);
    return rc;
}

int bench_prepare_rows(bench_prepare *out) {
    memset(out, 0, sizeof *out);
    side s = {0};
    if (bench_net_init(&s.net, SCHEMA_TENSOR_FLOAT32) ||
        bench_net_init(&s.fixed, SCHEMA_TENSOR_FLOAT32)) {
        fprintf(stderr, "bench: prepare: out of memory building the MobileNet\n");
        return -1;
    }
    tst_daemon d;
    int rc = tst_daemon_start(&d, NULL);
    if (rc == 0) {
        /* libnnd's NNAPI layer reaches the daemon that $NND_SOCKET names. */
        setenv("NND_SOCKET", d.socket_path, 1);
        rc = bench_alternate(cold_run, &s, xnn_run, &s, NULL, ROUNDS, PER_ROUND, &out->cold_xnn);
        tst_daemon_stop(&d);
    }
    const char *no_content_cache[] = {"--cache-max-bytes", "0", NULL};
    if (rc == 0 && (rc = tst_daemon_start(&d, no_content_cache)) == 0) {
        setenv("NND_SOCKET", d.socket_path, 1);
        rc = save_cached(&s, &d, out);
        if (rc == 0) rc = hit_rounds(&s, out);
        tst_daemon_stop(&d);
    }
    out->cold_xnn.shape = out->hit_xnn.shape = "MobileNet v1 1.0 224x224 FLOAT32 through NNAPI";
    bench_net_free(&s.net);
    bench_net_free(&s.fixed);
    return rc;
}

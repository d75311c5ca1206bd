/* SPDX-License-Identifier: Apache-2.0 */
/* transformer.c: see transformer.h. */
#include "bench/transformer.h"

#include <math.h>
#include <pthreadpool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xnnpack.h>

#include "nnd/NeuralNetworks.h"
#include "nnd/nnd_wire.h"
#include "tests/support/timing.h"

#define ROUNDS    40
#define PER_ROUND 2 /* 40 rounds of two: about 10 s on a loaded two-CPU machine */

enum { ROWS = 128, MODEL = 512, HIDDEN = 2048 };

/* The block's data: input [ROWS, MODEL], w1 [MODEL, HIDDEN], w2 [HIDDEN, MODEL]. */
typedef struct block {
    float *x, *w1, *w2;
} block;

static float *uniform(size_t n, float limit, unsigned seed) {
    float *v = malloc(n * sizeof *v + XNN_EXTRA_BYTES);
    for (size_t i = 0; v && i < n; i++)
        v[i] = limit * (2.f * (float)rand_r(&seed) / (float)RAND_MAX - 1.f);
    return v;
}

static int block_init(block *b) {
    /* Weights scaled by fan-in, so the hidden layer is in tanh's curved range. */
    b->x = uniform((size_t)ROWS * MODEL, 1.f, 1);
    b->w1 = uniform((size_t)MODEL * HIDDEN, sqrtf(3.f / MODEL), 2);
    b->w2 = uniform((size_t)HIDDEN * MODEL, sqrtf(3.f / HIDDEN), 3);
    return b->x && b->w1 && b->w2 ? 0 : -1;
}

static void block_free(block *b) {
    free(b->x), free(b->w1), free(b->w2);
}

/* ---- through the daemon, by NNAPI names ------------------------------------------------ */

typedef struct nnapi_side {
    ANeuralNetworksModel *model;
    ANeuralNetworksCompilation *compilation;
    ANeuralNetworksMemory *memory;
    int fd;
    uint8_t *map;
    size_t in_bytes, out_at, out_bytes, size;
} nnapi_side;

static int build(ANeuralNetworksModel *m, const block *b) {
    const ANeuralNetworksOperandType x_t = {ANEURALNETWORKS_TENSOR_FLOAT32, 3,
                                            (uint32_t[]){1, ROWS, MODEL}, 0, 0},
                                     h_t = {ANEURALNETWORKS_TENSOR_FLOAT32, 3,
                                            (uint32_t[]){1, ROWS, HIDDEN}, 0, 0},
                                     w1_t = {ANEURALNETWORKS_TENSOR_FLOAT32, 3,
                                             (uint32_t[]){1, MODEL, HIDDEN}, 0, 0},
                                     w2_t = {ANEURALNETWORKS_TENSOR_FLOAT32, 3,
                                             (uint32_t[]){1, HIDDEN, MODEL}, 0, 0},
                                     bool_t = {ANEURALNETWORKS_BOOL, 0, NULL, 0, 0};
    /* Operands: 0 x, 1 w1, 2 adj (false), 3 h, 4 tanh(h), 5 w2, 6 y. */
    const ANeuralNetworksOperandType *types[] = {&x_t, &w1_t, &bool_t, &h_t, &h_t, &w2_t, &x_t};
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof types / sizeof types[0]; i++)
        rc = ANeuralNetworksModel_addOperand(m, types[i]);
    bool no = false;
    if (!rc) rc = ANeuralNetworksModel_setOperandValue(m, 1, b->w1, sizeof(float) * MODEL * HIDDEN);
    if (!rc) rc = ANeuralNetworksModel_setOperandValue(m, 5, b->w2, sizeof(float) * HIDDEN * MODEL);
    if (!rc) rc = ANeuralNetworksModel_setOperandValue(m, 2, &no, sizeof no);
    if (!rc)
        rc = ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_BATCH_MATMUL, 4,
                                               (uint32_t[]){0, 1, 2, 2}, 1, (uint32_t[]){3});
    if (!rc)
        rc = ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_TANH, 1, (uint32_t[]){3}, 1,
                                               (uint32_t[]){4});
    if (!rc)
        rc = ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_BATCH_MATMUL, 4,
                                               (uint32_t[]){4, 5, 2, 2}, 1, (uint32_t[]){6});
    if (!rc)
        rc = ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, (uint32_t[]){0}, 1,
                                                           (uint32_t[]){6});
    return rc ? rc : ANeuralNetworksModel_finish(m);
}

static int nnapi_open(nnapi_side *s, const block *b) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->in_bytes = s->out_bytes = sizeof(float) * ROWS * MODEL;
    s->out_at = (s->in_bytes + 4095) & ~(size_t)4095;
    s->size = s->out_at + ((s->out_bytes + 4095) & ~(size_t)4095);
    void *map = NULL;
    int rc = ANeuralNetworksModel_create(&s->model);
    if (!rc) rc = build(s->model, b);
    if (!rc && (s->fd = nnd_memfd_create("bench-transformer", s->size, &map)) < 0) rc = -1;
    if (!rc) {
        s->map = map;
        memcpy(s->map, b->x, s->in_bytes);
        rc = ANeuralNetworksMemory_createFromFd(s->size, PROT_READ | PROT_WRITE, s->fd, 0,
                                                &s->memory);
    }
    if (!rc) rc = ANeuralNetworksCompilation_create(s->model, &s->compilation);
    if (!rc)
        rc = ANeuralNetworksCompilation_setPreference(s->compilation,
                                                      ANEURALNETWORKS_PREFER_SUSTAINED_SPEED);
    if (!rc) rc = ANeuralNetworksCompilation_finish(s->compilation);
    if (rc) fprintf(stderr, "bench: compiling the transformer block: result code %d\n", rc);
    return rc ? -1 : 0;
}

static double nnapi_run(void *ctx) {
    nnapi_side *s = ctx;
    ANeuralNetworksExecution *e = NULL;
    uint64_t t0 = bench_now_ns();
    int rc = ANeuralNetworksExecution_create(s->compilation, &e);
    if (!rc)
        rc = ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, s->memory, 0, s->in_bytes);
    if (!rc)
        rc = ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, s->memory, s->out_at,
                                                          s->out_bytes);
    if (!rc) rc = ANeuralNetworksExecution_compute(e);
    ANeuralNetworksExecution_free(e);
    double t = (double)(bench_now_ns() - t0);
    if (rc) fprintf(stderr, "bench: transformer execution through NNAPI: result code %d\n", rc);
    return rc ? -1 : t;
}

static void nnapi_close(nnapi_side *s) {
    ANeuralNetworksCompilation_free(s->compilation);
    ANeuralNetworksModel_free(s->model);
    ANeuralNetworksMemory_free(s->memory);
    if (s->map) munmap(s->map, s->size);
    if (s->fd >= 0) close(s->fd);
}

/* ---- XNNPACK in process ---------------------------------------------------------------- */

typedef struct xnn_side {
    xnn_operator_t fc1, sigmoid, fc2;
    pthreadpool_t pool;
    float *h, *y; /* [ROWS, HIDDEN] (h, then tanh(h) in place), [ROWS, MODEL] */
} xnn_side;

static int xnn_open(xnn_side *s, const block *b) {
    memset(s, 0, sizeof *s);
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    s->pool = cpus > 1 ? pthreadpool_create((size_t)cpus) : NULL;
    s->h = malloc(sizeof(float) * ROWS * HIDDEN + XNN_EXTRA_BYTES);
    s->y = malloc(sizeof(float) * ROWS * MODEL);
    size_t n = (size_t)ROWS * HIDDEN;
    /* The weights are [in, out]: XNNPACK packs them transposed, once. */
    if (!s->h || !s->y || xnn_initialize(NULL) != xnn_status_success ||
        xnn_create_fully_connected_nc_f32(MODEL, HIDDEN, MODEL, HIDDEN, b->w1, NULL, -INFINITY,
                                          INFINITY, XNN_FLAG_TRANSPOSE_WEIGHTS,
                                          &s->fc1) != xnn_status_success ||
        xnn_create_sigmoid_nc_f32(1, 1, 1, 0, &s->sigmoid) != xnn_status_success ||
        xnn_create_fully_connected_nc_f32(
            HIDDEN, MODEL, HIDDEN, MODEL, b->w2, NULL, -INFINITY, INFINITY,
            XNN_FLAG_TRANSPOSE_WEIGHTS | XNN_FLAG_YIELD_WORKERS, &s->fc2) != xnn_status_success ||
        xnn_setup_fully_connected_nc_f32(s->fc1, ROWS, b->x, s->h, s->pool) != xnn_status_success ||
        xnn_setup_sigmoid_nc_f32(s->sigmoid, n, s->h, s->h, s->pool) != xnn_status_success ||
        xnn_setup_fully_connected_nc_f32(s->fc2, ROWS, s->h, s->y, s->pool) != xnn_status_success) {
        fprintf(stderr, "bench: creating the transformer block's XNNPACK operators\n");
        return -1;
    }
    return 0;
}

static double xnn_run(void *ctx) {
    xnn_side *s = ctx;
    size_t n = (size_t)ROWS * HIDDEN;
    uint64_t t0 = bench_now_ns();
    enum xnn_status st = xnn_run_operator(s->fc1, s->pool);
    for (size_t i = 0; i < n; i++) /* tanh(h) = 2 sigmoid(2h) - 1 */
        s->h[i] += s->h[i];
    if (st == xnn_status_success) st = xnn_run_operator(s->sigmoid, s->pool);
    for (size_t i = 0; i < n; i++)
        s->h[i] = (s->h[i] + s->h[i]) - 1.f;
    if (st == xnn_status_success) st = xnn_run_operator(s->fc2, s->pool);
    double t = (double)(bench_now_ns() - t0);
    if (st != xnn_status_success) fprintf(stderr, "bench: XNNPACK transformer block: %d\n", st);
    return st == xnn_status_success ? t : -1;
}

static void rest_task(void *ctx, size_t i) {
    (void)ctx, (void)i;
}

static void xnn_rest(void *ctx) {
    xnn_side *s = ctx;
    if (s->pool)
        pthreadpool_parallelize_1d(s->pool, rest_task, NULL, pthreadpool_get_threads_count(s->pool),
                                   PTHREADPOOL_FLAG_YIELD_WORKERS);
}

static void xnn_close(xnn_side *s) {
    xnn_operator_t ops[3] = {s->fc1, s->sigmoid, s->fc2};
    for (int i = 0; i < 3; i++)
        if (ops[i]) xnn_delete_operator(ops[i]);
    if (s->pool) pthreadpool_destroy(s->pool);
    free(s->h), free(s->y);
}

int bench_transformer_rows(const tst_daemon *d, bench_transformer *out) {
    setenv("NND_SOCKET", d->socket_path, 1); /* libnnd's NNAPI layer reaches this daemon */
    block b = {0};
    nnapi_side n = {.fd = -1};
    xnn_side x = {0};
    int rc = block_init(&b);
    if (!rc) rc = nnapi_open(&n, &b);
    if (!rc) rc = xnn_open(&x, &b);
    if (!rc)
        rc = bench_alternate(nnapi_run, &n, xnn_run, &x, xnn_rest, ROUNDS, PER_ROUND, &out->xnn);
    out->diff = 0;
    const float *mine = (const float *)(n.map + n.out_at);
    for (size_t i = 0; !rc && i < (size_t)ROWS * MODEL; i++)
        out->diff = fmax(out->diff, fabs((double)mine[i] - x.y[i]));
    out->xnn.flops = 2.0 * 2 * ROWS * MODEL * HIDDEN;
    out->xnn.shape = "[1, 128, 512] x [512, 2048], TANH, x [2048, 512] FLOAT32";
    nnapi_close(&n), xnn_close(&x), block_free(&b);
    return rc;
}

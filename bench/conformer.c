/* SPDX-License-Identifier: Apache-2.0 */
/* conformer.c: see conformer.h. */
#include "bench/conformer.h"

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
#include "nnd/nnd.h"
#include "tests/support/timing.h"

#define ROUNDS    30
#define PER_ROUND 4

enum { T = 64, D = 144, FF = 576, K = 31, AT = 64, AD = 256, MAX_XOPS = 64 };

/* ---- weights ----------------------------------------------------------------------------- */

/* A FULLY_CONNECTED layer: weights [out, in] (NNAPI's layout, and XNNPACK's), bias [out]. */
typedef struct fc_w {
    float *w, *b;
    uint32_t in, out;
} fc_w;

typedef struct weights {
    fc_w ff1, ff2, q, k, v, o, ga, gb, pw; /* the conformer block's */
    fc_w a1, a2;                           /* attention_fc's */
    float *dw_f, *dw_b;                    /* depthwise [1, 1, K, D], [D] */
    float *x, *ax;                         /* the inputs [T, D], [AT, AD] */
} weights;

static float *uniform(size_t n, float limit, unsigned seed) {
    float *v = malloc(n * sizeof *v + XNN_EXTRA_BYTES);
    for (size_t i = 0; v && i < n; i++)
        v[i] = limit * (2.f * (float)rand_r(&seed) / (float)RAND_MAX - 1.f);
    return v;
}

/* Scaled by fan-in so activations stay in the curved range of the sigmoids. */
static bool fc_init(fc_w *f, uint32_t in, uint32_t out, unsigned seed, float extra) {
    f->in = in, f->out = out;
    f->w = uniform((size_t)in * out, extra * sqrtf(3.f / (float)in), seed);
    f->b = uniform(out, 0.1f, seed + 1000);
    return f->w && f->b;
}

static int weights_init(weights *w) {
    /* q carries attention's 1 / sqrt(D), so SOFTMAX keeps beta 1. */
    bool ok = fc_init(&w->ff1, D, FF, 1, 1.f) && fc_init(&w->ff2, FF, D, 2, 1.f) &&
              fc_init(&w->q, D, D, 3, 1.f / sqrtf((float)D)) && fc_init(&w->k, D, D, 4, 1.f) &&
              fc_init(&w->v, D, D, 5, 1.f) && fc_init(&w->o, D, D, 6, 1.f) &&
              fc_init(&w->ga, D, D, 7, 1.f) && fc_init(&w->gb, D, D, 8, 1.f) &&
              fc_init(&w->pw, D, D, 9, 1.f) && fc_init(&w->a1, AD, AD, 10, 1.f) &&
              fc_init(&w->a2, AD, AD, 11, 1.f);
    w->dw_f = uniform((size_t)K * D, sqrtf(3.f / K), 12);
    w->dw_b = uniform(D, 0.1f, 13);
    w->x = uniform((size_t)T * D, 1.f, 14);
    w->ax = uniform((size_t)AT * AD, 1.f, 15);
    return ok && w->dw_f && w->dw_b && w->x && w->ax ? 0 : -1;
}

static void weights_free(weights *w) {
    fc_w *fs[] = {&w->ff1, &w->ff2, &w->q,  &w->k,  &w->v, &w->o,
                  &w->ga,  &w->gb,  &w->pw, &w->a1, &w->a2};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]->w), free(fs[i]->b);
    free(w->dw_f), free(w->dw_b), free(w->x), free(w->ax);
}

/* ---- the blocks through NNAPI ------------------------------------------------------------ */

typedef struct nb {
    ANeuralNetworksModel *m;
    uint32_t n;
    int rc;
    uint32_t none, axes, keep, eps; /* shared scalars and constants */
} nb;

static uint32_t nb_operand(nb *b, int32_t type, uint32_t rank, const uint32_t *dims) {
    ANeuralNetworksOperandType t = {type, rank, dims, 0.f, 0};
    if (!b->rc) b->rc = ANeuralNetworksModel_addOperand(b->m, &t);
    return b->n++;
}

static uint32_t nb_tensor(nb *b, uint32_t rows, uint32_t cols) {
    return nb_operand(b, ANEURALNETWORKS_TENSOR_FLOAT32, 2, (uint32_t[]){rows, cols});
}

static uint32_t nb_const(nb *b, int32_t type, uint32_t rank, const uint32_t *dims, const void *v,
                         size_t bytes) {
    uint32_t i = nb_operand(b, type, rank, dims);
    if (!b->rc) b->rc = ANeuralNetworksModel_setOperandValue(b->m, (int32_t)i, v, bytes);
    return i;
}

static uint32_t nb_i32(nb *b, int32_t v) {
    return nb_const(b, ANEURALNETWORKS_INT32, 0, NULL, &v, sizeof v);
}

static void nb_op(nb *b, int32_t code, uint32_t n, const uint32_t *in, uint32_t out) {
    if (!b->rc) b->rc = ANeuralNetworksModel_addOperation(b->m, code, n, in, 1, &out);
}

static uint32_t nb_binary(nb *b, int32_t code, uint32_t x, uint32_t y, uint32_t rows,
                          uint32_t cols) {
    uint32_t out = nb_tensor(b, rows, cols);
    nb_op(b, code, 3, (uint32_t[]){x, y, b->none}, out);
    return out;
}

static uint32_t nb_fc(nb *b, uint32_t x, uint32_t rows, const fc_w *f) {
    uint32_t w = nb_const(b, ANEURALNETWORKS_TENSOR_FLOAT32, 2, (uint32_t[]){f->out, f->in}, f->w,
                          sizeof(float) * f->out * f->in);
    uint32_t bias = nb_const(b, ANEURALNETWORKS_TENSOR_FLOAT32, 1, (uint32_t[]){f->out}, f->b,
                             sizeof(float) * f->out);
    uint32_t out = nb_tensor(b, rows, f->out);
    nb_op(b, ANEURALNETWORKS_FULLY_CONNECTED, 4, (uint32_t[]){x, w, bias, b->none}, out);
    return out;
}

static uint32_t nb_unary(nb *b, int32_t code, uint32_t x, uint32_t rows, uint32_t cols) {
    uint32_t out = nb_tensor(b, rows, cols);
    nb_op(b, code, 1, &x, out);
    return out;
}

static uint32_t nb_swish(nb *b, uint32_t x, uint32_t rows, uint32_t cols) {
    uint32_t s = nb_unary(b, ANEURALNETWORKS_LOGISTIC, x, rows, cols);
    return nb_binary(b, ANEURALNETWORKS_MUL, x, s, rows, cols);
}

/* (x - mean) / sqrt(variance + eps) along each row. */
static uint32_t nb_norm(nb *b, uint32_t x) {
    uint32_t mean = nb_tensor(b, T, 1);
    nb_op(b, ANEURALNETWORKS_MEAN, 3, (uint32_t[]){x, b->axes, b->keep}, mean);
    uint32_t c = nb_binary(b, ANEURALNETWORKS_SUB, x, mean, T, D);
    uint32_t sq = nb_binary(b, ANEURALNETWORKS_MUL, c, c, T, D);
    uint32_t var = nb_tensor(b, T, 1);
    nb_op(b, ANEURALNETWORKS_MEAN, 3, (uint32_t[]){sq, b->axes, b->keep}, var);
    uint32_t ve = nb_binary(b, ANEURALNETWORKS_ADD, var, b->eps, T, 1);
    uint32_t r = nb_unary(b, ANEURALNETWORKS_RSQRT, ve, T, 1);
    return nb_binary(b, ANEURALNETWORKS_MUL, c, r, T, D);
}

static uint32_t nb_reshape(nb *b, uint32_t x, uint32_t rank, const uint32_t *dims) {
    int32_t shape[4];
    for (uint32_t i = 0; i < rank; i++)
        shape[i] = (int32_t)dims[i];
    uint32_t s = nb_const(b, ANEURALNETWORKS_TENSOR_INT32, 1, (uint32_t[]){rank}, shape,
                          sizeof(int32_t) * rank);
    uint32_t out = nb_operand(b, ANEURALNETWORKS_TENSOR_FLOAT32, rank, dims);
    nb_op(b, ANEURALNETWORKS_RESHAPE, 2, (uint32_t[]){x, s}, out);
    return out;
}

static void build_conformer(nb *b, const weights *w) {
    static const float eps = 1e-5f;
    static const int32_t last_axis = 1;
    uint32_t x = nb_tensor(b, T, D);
    b->none = nb_i32(b, ANEURALNETWORKS_FUSED_NONE);
    b->axes = nb_const(b, ANEURALNETWORKS_TENSOR_INT32, 1, (uint32_t[]){1}, &last_axis, 4);
    b->keep = nb_i32(b, 1);
    b->eps = nb_const(b, ANEURALNETWORKS_TENSOR_FLOAT32, 1, (uint32_t[]){1}, &eps, 4);
    /* Feed-forward half. */
    uint32_t h = nb_swish(b, nb_fc(b, nb_norm(b, x), T, &w->ff1), T, FF);
    uint32_t x1 = nb_binary(b, ANEURALNETWORKS_ADD, x, nb_fc(b, h, T, &w->ff2), T, D);
    /* Single-head self-attention. */
    uint32_t n1 = nb_norm(b, x1);
    uint32_t q = nb_fc(b, n1, T, &w->q), k = nb_fc(b, n1, T, &w->k), v = nb_fc(b, n1, T, &w->v);
    bool no = false, yes = true;
    uint32_t f = nb_const(b, ANEURALNETWORKS_BOOL, 0, NULL, &no, 1);
    uint32_t t = nb_const(b, ANEURALNETWORKS_BOOL, 0, NULL, &yes, 1);
    uint32_t s = nb_tensor(b, T, T);
    nb_op(b, ANEURALNETWORKS_BATCH_MATMUL, 4, (uint32_t[]){q, k, f, t}, s);
    static const float one = 1.f;
    uint32_t beta = nb_const(b, ANEURALNETWORKS_FLOAT32, 0, NULL, &one, 4);
    uint32_t p = nb_tensor(b, T, T);
    nb_op(b, ANEURALNETWORKS_SOFTMAX, 2, (uint32_t[]){s, beta}, p);
    uint32_t att = nb_tensor(b, T, D);
    nb_op(b, ANEURALNETWORKS_BATCH_MATMUL, 4, (uint32_t[]){p, v, f, f}, att);
    uint32_t x2 = nb_binary(b, ANEURALNETWORKS_ADD, x1, nb_fc(b, att, T, &w->o), T, D);
    /* Convolution module. */
    uint32_t n2 = nb_norm(b, x2);
    uint32_t gate = nb_unary(b, ANEURALNETWORKS_LOGISTIC, nb_fc(b, n2, T, &w->gb), T, D);
    uint32_t glu = nb_binary(b, ANEURALNETWORKS_MUL, nb_fc(b, n2, T, &w->ga), gate, T, D);
    const uint32_t seq[4] = {1, 1, T, D};
    uint32_t r4 = nb_reshape(b, glu, 4, seq);
    uint32_t filt = nb_const(b, ANEURALNETWORKS_TENSOR_FLOAT32, 4, (uint32_t[]){1, 1, K, D},
                             w->dw_f, sizeof(float) * K * D);
    uint32_t bias =
        nb_const(b, ANEURALNETWORKS_TENSOR_FLOAT32, 1, (uint32_t[]){D}, w->dw_b, sizeof(float) * D);
    uint32_t half = nb_i32(b, K / 2), zero = nb_i32(b, 0), one_i = nb_i32(b, 1);
    uint32_t dw = nb_operand(b, ANEURALNETWORKS_TENSOR_FLOAT32, 4, seq);
    nb_op(b, ANEURALNETWORKS_DEPTHWISE_CONV_2D, 11,
          (uint32_t[]){r4, filt, bias, half, half, zero, zero, one_i, one_i, one_i, b->none}, dw);
    uint32_t r2 = nb_reshape(b, dw, 2, (uint32_t[]){T, D});
    uint32_t pc = nb_fc(b, nb_swish(b, r2, T, D), T, &w->pw);
    uint32_t y = nb_binary(b, ANEURALNETWORKS_ADD, x2, pc, T, D);
    if (!b->rc) b->rc = ANeuralNetworksModel_identifyInputsAndOutputs(b->m, 1, &x, 1, &y);
}

static void build_attention(nb *b, const weights *w) {
    uint32_t x = nb_tensor(b, AT, AD);
    b->none = nb_i32(b, ANEURALNETWORKS_FUSED_NONE);
    uint32_t y = nb_fc(b, nb_fc(b, x, AT, &w->a1), AT, &w->a2);
    if (!b->rc) b->rc = ANeuralNetworksModel_identifyInputsAndOutputs(b->m, 1, &x, 1, &y);
}

#define MAX_TIMINGS (ROUNDS * PER_ROUND + 8)

typedef struct nnapi_side {
    ANeuralNetworksModel *model;
    ANeuralNetworksCompilation *compilation;
    ANeuralNetworksMemory *memory;
    int fd;
    uint8_t *map;
    size_t bytes, out_at, size; /* input and output of `bytes` each */
    /* The daemon's own timing of each execution (MEASURE_TIMING): in the engine, and in
     * the daemon from the request's arrival to the reply. */
    double hw[MAX_TIMINGS], drv[MAX_TIMINGS];
    size_t n_timed;
} nnapi_side;

static int nnapi_open(nnapi_side *s, const weights *w, bool conformer) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->bytes = sizeof(float) * (conformer ? T * D : AT * AD);
    s->out_at = (s->bytes + 4095) & ~(size_t)4095;
    s->size = 2 * s->out_at;
    nb b = {0};
    b.rc = ANeuralNetworksModel_create(&b.m);
    s->model = b.m;
    if (conformer)
        build_conformer(&b, w);
    else
        build_attention(&b, w);
    int rc = b.rc ? b.rc : ANeuralNetworksModel_finish(s->model);
    void *map = NULL;
    if (!rc && (s->fd = nnd_memfd_create("bench-conformer", s->size, &map)) < 0) rc = -1;
    if (!rc) {
        s->map = map;
        memcpy(s->map, conformer ? w->x : w->ax, s->bytes);
        rc = ANeuralNetworksMemory_createFromFd(s->size, PROT_READ | PROT_WRITE, s->fd, 0,
                                                &s->memory);
    }
    /* On nnd-cpu named, so that executions may measure their timing. */
    ANeuralNetworksDevice *dev = NULL;
    if (!rc) rc = ANeuralNetworks_getDevice(0, &dev);
    if (!rc)
        rc = ANeuralNetworksCompilation_createForDevices(
            s->model, (const ANeuralNetworksDevice *const[]){dev}, 1, &s->compilation);
    if (!rc)
        rc = ANeuralNetworksCompilation_setPreference(s->compilation,
                                                      ANEURALNETWORKS_PREFER_SUSTAINED_SPEED);
    if (!rc) rc = ANeuralNetworksCompilation_finish(s->compilation);
    if (rc)
        fprintf(stderr, "bench: compiling the %s block: result code %d\n",
                conformer ? "conformer" : "attention", rc);
    return rc ? -1 : 0;
}

static double nnapi_run(void *ctx) {
    nnapi_side *s = ctx;
    ANeuralNetworksExecution *e = NULL;
    uint64_t t0 = bench_now_ns();
    int rc = ANeuralNetworksExecution_create(s->compilation, &e);
    if (!rc) rc = ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, s->memory, 0, s->bytes);
    if (!rc)
        rc = ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, s->memory, s->out_at,
                                                          s->bytes);
    if (!rc) rc = ANeuralNetworksExecution_setMeasureTiming(e, true);
    if (!rc) rc = ANeuralNetworksExecution_compute(e);
    double t = (double)(bench_now_ns() - t0);
    uint64_t hw = 0, drv = 0;
    if (!rc && s->n_timed < MAX_TIMINGS &&
        !ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_DURATION_ON_HARDWARE, &hw) &&
        !ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_DURATION_IN_DRIVER, &drv)) {
        s->hw[s->n_timed] = (double)hw, s->drv[s->n_timed++] = (double)drv;
    }
    ANeuralNetworksExecution_free(e);
    if (rc) fprintf(stderr, "bench: conformer row execution through NNAPI: result code %d\n", rc);
    return rc ? -1 : t;
}

static void nnapi_close(nnapi_side *s) {
    ANeuralNetworksCompilation_free(s->compilation);
    ANeuralNetworksModel_free(s->model);
    ANeuralNetworksMemory_free(s->memory);
    if (s->map) munmap(s->map, s->size);
    if (s->fd >= 0) close(s->fd);
}

/* ---- the blocks on XNNPACK in process -------------------------------------------------- */

/* Operators in execution order, each set up once on fixed buffers; the two products by
 * activations (q k^T, p v) pack their weights at every run, as such a product must. */
typedef struct xnn_side {
    xnn_operator_t ops[MAX_XOPS];
    int dynamic[MAX_XOPS]; /* 1: q k^T here, 2: p v here (ops[i] NULL) */
    uint32_t n;
    enum xnn_status st;
    pthreadpool_t pool;
    float *bufs[MAX_XOPS];
    uint32_t n_bufs;
    float *q, *k, *v, *s, *p, *att; /* the attention's operands */
    float *y;
} xnn_side;

static float *xbuf(xnn_side *s, size_t n) {
    float *p = calloc(n + XNN_EXTRA_BYTES / sizeof(float), sizeof(float));
    if (!p || s->n_bufs == MAX_XOPS) s->st = xnn_status_out_of_memory;
    if (p && s->n_bufs < MAX_XOPS) s->bufs[s->n_bufs++] = p;
    return p;
}

static void xpush(xnn_side *s, enum xnn_status create, xnn_operator_t op) {
    if (s->st == xnn_status_success) s->st = create;
    if (s->n < MAX_XOPS)
        s->ops[s->n++] = op;
    else if (op)
        xnn_delete_operator(op), s->st = xnn_status_out_of_memory;
}

static float *x_fc(xnn_side *s, const float *x, size_t rows, const fc_w *f) {
    float *y = xbuf(s, rows * f->out);
    xnn_operator_t op = NULL;
    enum xnn_status st = xnn_create_fully_connected_nc_f32(f->in, f->out, f->in, f->out, f->w, f->b,
                                                           -INFINITY, INFINITY, 0, &op);
    if (st == xnn_status_success) st = xnn_setup_fully_connected_nc_f32(op, rows, x, y, s->pool);
    xpush(s, st, op);
    return y;
}

enum xkind { X_ADD, X_SUB, X_MUL, X_DIV };

static float *x_binary(xnn_side *s, enum xkind kind, const float *a, size_t a_cols, const float *b,
                       size_t b_rows, size_t b_cols, float *into) {
    size_t as[2] = {T, a_cols}, bs[2] = {b_rows, b_cols};
    float *y = into ? into : xbuf(s, (size_t)T * (a_cols > b_cols ? a_cols : b_cols));
    xnn_operator_t op = NULL;
    enum xnn_status st;
    switch (kind) {
    case X_ADD:
        st = xnn_create_add_nd_f32(-INFINITY, INFINITY, 0, &op);
        if (!st) st = xnn_setup_add_nd_f32(op, 2, as, 2, bs, a, b, y, s->pool);
        break;
    case X_SUB:
        st = xnn_create_subtract_nd_f32(-INFINITY, INFINITY, 0, &op);
        if (!st) st = xnn_setup_subtract_nd_f32(op, 2, as, 2, bs, a, b, y, s->pool);
        break;
    case X_MUL:
        st = xnn_create_multiply_nd_f32(-INFINITY, INFINITY, 0, &op);
        if (!st) st = xnn_setup_multiply_nd_f32(op, 2, as, 2, bs, a, b, y, s->pool);
        break;
    default:
        st = xnn_create_divide_nd_f32(-INFINITY, INFINITY, 0, &op);
        if (!st) st = xnn_setup_divide_nd_f32(op, 2, as, 2, bs, a, b, y, s->pool);
        break;
    }
    xpush(s, st, op);
    return y;
}

static float *x_sigmoid(xnn_side *s, const float *x, size_t n) {
    float *y = xbuf(s, n);
    xnn_operator_t op = NULL;
    enum xnn_status st = xnn_create_sigmoid_nc_f32(1, 1, 1, 0, &op);
    if (!st) st = xnn_setup_sigmoid_nc_f32(op, n, x, y, s->pool);
    xpush(s, st, op);
    return y;
}

static float *x_swish(xnn_side *s, const float *x, size_t cols) {
    return x_binary(s, X_MUL, x, cols, x_sigmoid(s, x, (size_t)T * cols), T, cols, NULL);
}

/* The mean of each row: global average pooling of width D, one channel. */
static float *x_mean(xnn_side *s, const float *x) {
    float *y = xbuf(s, T);
    xnn_operator_t op = NULL;
    enum xnn_status st =
        xnn_create_global_average_pooling_nwc_f32(1, 1, 1, -INFINITY, INFINITY, 0, &op);
    if (!st) st = xnn_setup_global_average_pooling_nwc_f32(op, T, D, x, y, s->pool);
    xpush(s, st, op);
    return y;
}

static float *x_norm(xnn_side *s, const float *x) {
    static const float eps = 1e-5f, one = 1.f;
    float *c = x_binary(s, X_SUB, x, D, x_mean(s, x), T, 1, NULL);
    float *var = x_mean(s, x_binary(s, X_MUL, c, D, c, T, D, NULL));
    float *ve = x_binary(s, X_ADD, var, 1, &eps, 1, 1, NULL);
    float *root = xbuf(s, T);
    xnn_operator_t op = NULL;
    enum xnn_status st = xnn_create_square_root_nc_f32(1, 1, 1, 0, &op);
    if (!st) st = xnn_setup_square_root_nc_f32(op, T, ve, root, s->pool);
    xpush(s, st, op);
    /* 1 / sqrt: divide's shape is [T, 1] by [1, 1]; the ones go first. */
    size_t os[2] = {1, 1}, rs[2] = {T, 1};
    float *r = xbuf(s, T);
    op = NULL;
    st = xnn_create_divide_nd_f32(-INFINITY, INFINITY, 0, &op);
    if (!st) st = xnn_setup_divide_nd_f32(op, 2, os, 2, rs, &one, root, r, s->pool);
    xpush(s, st, op);
    return x_binary(s, X_MUL, c, D, r, T, 1, NULL);
}

static float *x_dwconv(xnn_side *s, const float *x, const weights *w) {
    float *y = xbuf(s, (size_t)T * D);
    xnn_operator_t op = NULL;
    enum xnn_status st = xnn_create_convolution2d_nhwc_f32(
        0, K / 2, 0, K / 2, 1, K, 1, 1, 1, 1, D, 1, 1, D, D, w->dw_f, w->dw_b, -INFINITY, INFINITY,
        XNN_FLAG_DEPTHWISE_CONVOLUTION, &op);
    if (!st) st = xnn_setup_convolution2d_nhwc_f32(op, 1, 1, T, x, y, s->pool);
    xpush(s, st, op);
    return y;
}

static void xnn_build_conformer(xnn_side *s, const weights *w) {
    const float *x = w->x;
    float *h = x_swish(s, x_fc(s, x_norm(s, x), T, &w->ff1), FF);
    float *x1 = x_binary(s, X_ADD, x, D, x_fc(s, h, T, &w->ff2), T, D, NULL);
    float *n1 = x_norm(s, x1);
    s->q = x_fc(s, n1, T, &w->q), s->k = x_fc(s, n1, T, &w->k), s->v = x_fc(s, n1, T, &w->v);
    s->s = xbuf(s, (size_t)T * T), s->p = xbuf(s, (size_t)T * T), s->att = xbuf(s, (size_t)T * D);
    xpush(s, xnn_status_success, NULL), s->dynamic[s->n - 1] = 1;
    xnn_operator_t op = NULL;
    enum xnn_status st = xnn_create_softmax_nc_f32(T, T, T, 0, &op);
    if (!st) st = xnn_setup_softmax_nc_f32(op, T, s->s, s->p, s->pool);
    xpush(s, st, op);
    xpush(s, xnn_status_success, NULL), s->dynamic[s->n - 1] = 2;
    float *x2 = x_binary(s, X_ADD, x1, D, x_fc(s, s->att, T, &w->o), T, D, NULL);
    float *n2 = x_norm(s, x2);
    float *gate = x_sigmoid(s, x_fc(s, n2, T, &w->gb), (size_t)T * D);
    float *glu = x_binary(s, X_MUL, x_fc(s, n2, T, &w->ga), D, gate, T, D, NULL);
    float *pc = x_fc(s, x_swish(s, x_dwconv(s, glu, w), D), T, &w->pw);
    s->y = x_binary(s, X_ADD, x2, D, pc, T, D, NULL);
}

static int xnn_open(xnn_side *s, const weights *w, bool conformer) {
    memset(s, 0, sizeof *s);
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    s->pool = cpus > 1 ? pthreadpool_create((size_t)cpus) : NULL;
    s->st = xnn_initialize(NULL);
    if (conformer)
        xnn_build_conformer(s, w);
    else
        s->y = x_fc(s, x_fc(s, w->ax, AT, &w->a1), AT, &w->a2);
    if (s->st != xnn_status_success)
        fprintf(stderr, "bench: creating the %s block's XNNPACK operators: %d\n",
                conformer ? "conformer" : "attention", (int)s->st);
    return s->st == xnn_status_success ? 0 : -1;
}

/* A product by an activation: XNNPACK packs it as the weights, then multiplies. */
static enum xnn_status x_product(xnn_side *s, const float *rows, const float *weights, size_t depth,
                                 size_t cols, uint32_t flags, float *out) {
    xnn_operator_t op = NULL;
    enum xnn_status st = xnn_create_fully_connected_nc_f32(depth, cols, depth, cols, weights, NULL,
                                                           -INFINITY, INFINITY, flags, &op);
    if (!st) st = xnn_setup_fully_connected_nc_f32(op, T, rows, out, s->pool);
    if (!st) st = xnn_run_operator(op, s->pool);
    if (op) xnn_delete_operator(op);
    return st;
}

static double xnn_run(void *ctx) {
    xnn_side *s = ctx;
    uint64_t t0 = bench_now_ns();
    enum xnn_status st = xnn_status_success;
    for (uint32_t i = 0; st == xnn_status_success && i < s->n; i++) {
        if (s->dynamic[i] == 1) /* q k^T: k [T, D] is already [columns, depth] */
            st = x_product(s, s->q, s->k, D, T, 0, s->s);
        else if (s->dynamic[i] == 2) /* p v: v [T, D] is [depth, columns] */
            st = x_product(s, s->p, s->v, T, D, XNN_FLAG_TRANSPOSE_WEIGHTS, s->att);
        else
            st = xnn_run_operator(s->ops[i], s->pool);
    }
    double t = (double)(bench_now_ns() - t0);
    if (st != xnn_status_success) fprintf(stderr, "bench: XNNPACK conformer row: %d\n", st);
    return st == xnn_status_success ? t : -1;
}

static void rest_task(void *ctx, size_t i) {
    (void)ctx, (void)i;
}

/* Lets the pool's threads sleep between rounds, as the daemon's do after an execution. */
static void xnn_rest(void *ctx) {
    xnn_side *s = ctx;
    if (s->pool)
        pthreadpool_parallelize_1d(s->pool, rest_task, NULL, pthreadpool_get_threads_count(s->pool),
                                   PTHREADPOOL_FLAG_YIELD_WORKERS);
}

static void xnn_close(xnn_side *s) {
    for (uint32_t i = 0; i < s->n; i++)
        if (s->ops[i]) xnn_delete_operator(s->ops[i]);
    for (uint32_t i = 0; i < s->n_bufs; i++)
        free(s->bufs[i]);
    if (s->pool) pthreadpool_destroy(s->pool);
}

/* ---- the rows ---------------------------------------------------------------------------- */

static int one_row(const weights *w, bool conformer, bench_conformer_row *out, double *diff) {
    nnapi_side n = {.fd = -1};
    xnn_side x = {0};
    int rc = nnapi_open(&n, w, conformer);
    if (!rc) rc = xnn_open(&x, w, conformer);
    if (!rc)
        rc = bench_alternate(nnapi_run, &n, xnn_run, &x, xnn_rest, ROUNDS, PER_ROUND, &out->pair);
    out->in_engine_ns = n.n_timed ? bench_median(n.hw, n.n_timed) : NAN;
    out->in_daemon_ns = n.n_timed ? bench_median(n.drv, n.n_timed) : NAN;
    *diff = 0;
    const float *mine = (const float *)(n.map + n.out_at);
    for (size_t i = 0; !rc && i < n.bytes / sizeof(float); i++)
        *diff = fmax(*diff, fabs((double)mine[i] - x.y[i]));
    if (conformer) {
        out->pair.flops = 2.0 * T * D * (2.0 * FF + 7.0 * D + 2.0 * T + K);
        out->pair.shape = "conformer-style block, x [64, 144], FF 576, depthwise 1 x 31, FLOAT32";
    } else {
        out->pair.flops = 2.0 * 2 * AT * AD * AD;
        out->pair.shape = "x [64, 256] x [256, 256] x [256, 256] FLOAT32";
    }
    nnapi_close(&n), xnn_close(&x);
    return rc;
}

int bench_conformer_rows(const tst_daemon *d, bool block, bool attention, bench_conformer *out) {
    setenv("NND_SOCKET", d->socket_path, 1); /* libnnd's NNAPI layer reaches this daemon */
    weights w = {0};
    int rc = weights_init(&w);
    if (!rc && block) rc = one_row(&w, true, &out->block, &out->block_diff);
    if (!rc && attention) rc = one_row(&w, false, &out->attention, &out->attention_diff);
    weights_free(&w);
    return rc;
}

void bench_conformer_note(const char *name, const bench_conformer_row *r, double diff) {
    printf("# %s: %s; daemon %.3f ms (its engine %.3f ms, request to reply %.3f ms), XNNPACK "
           "in process %.3f ms (%.1f GFLOP/s); outputs differ by %.2g at most\n",
           name, r->pair.shape, r->pair.a_ns / 1e6, r->in_engine_ns / 1e6, r->in_daemon_ns / 1e6,
           r->pair.b_ns / 1e6, r->pair.flops / r->pair.b_ns, diff);
}

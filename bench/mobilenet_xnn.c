/* SPDX-License-Identifier: Apache-2.0 */
/* mobilenet_xnn.c: see mobilenet_xnn.h. */
#include "bench/mobilenet_xnn.h"

#include <math.h>
#include <pthreadpool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "schema/codes.h"
#include "tests/support/timing.h"

struct bench_xnn {
    xnn_runtime_t runtime;
    xnn_operator_t softmax; /* QUANT8 only */
    pthreadpool_t pool;
    uint8_t *out, *logits;
    float *scales[BENCH_NET_MAX_LAYERS]; /* per-channel bias scales, alive with the runtime */
};

typedef struct graph {
    xnn_subgraph_t g;
    const bench_net *net;
    enum xnn_datatype act; /* activations */
    enum xnn_status st;
} graph;

static void rest_task(void *ctx, size_t i) {
    (void)ctx, (void)i;
}

/* An activation value of the net's type; ext: an external id or XNN_INVALID_VALUE_ID. */
static uint32_t activation(graph *gr, uint32_t rank, const size_t *dims, float scale, int32_t zero,
                           uint32_t ext, uint32_t flags) {
    uint32_t id = XNN_INVALID_VALUE_ID;
    if (gr->st != xnn_status_success) return id;
    gr->st = gr->act == xnn_datatype_fp32
                 ? xnn_define_tensor_value(gr->g, gr->act, rank, dims, NULL, ext, flags, &id)
                 : xnn_define_quantized_tensor_value(gr->g, gr->act, zero, scale, rank, dims, NULL,
                                                     ext, flags, &id);
    return id;
}

/* Weights and bias of layer l whose input has scale in_scale. */
static void weights(graph *gr, bench_xnn *x, size_t li, float in_scale, uint32_t *w_id,
                    uint32_t *b_id) {
    const bench_layer *l = &gr->net->layers[li];
    bool dw = l->kind == BL_DEPTHWISE, fc = l->kind == BL_FC;
    size_t wd[4] = {dw ? 1 : l->out_c, l->k, l->k, dw ? l->out_c : l->in_c}, bd[1] = {l->out_c};
    if (fc) wd[1] = l->in_c;
    size_t rank = fc ? 2 : 4;
    *w_id = *b_id = XNN_INVALID_VALUE_ID;
    if (gr->st != xnn_status_success) return;
    xnn_subgraph_t g = gr->g;
    const uint32_t none = XNN_INVALID_VALUE_ID;
    if (gr->act == xnn_datatype_fp32) {
        gr->st = xnn_define_tensor_value(g, gr->act, rank, wd, l->weights, none, 0, w_id);
        if (!gr->st) gr->st = xnn_define_tensor_value(g, gr->act, 1, bd, l->bias, none, 0, b_id);
        return;
    }
    if (l->channel_scales) {
        float *bs = x->scales[li] = malloc(sizeof(float) * l->out_c);
        if (!bs) return (void)(gr->st = xnn_status_out_of_memory);
        for (uint32_t c = 0; c < l->out_c; c++)
            bs[c] = in_scale * l->channel_scales[c];
        gr->st = xnn_define_channelwise_quantized_tensor_value(g, xnn_datatype_qcint8,
                                                               l->channel_scales, rank, dw ? 3 : 0,
                                                               wd, l->weights, none, 0, w_id);
        if (!gr->st)
            gr->st = xnn_define_channelwise_quantized_tensor_value(g, xnn_datatype_qcint32, bs, 1,
                                                                   0, bd, l->bias, none, 0, b_id);
        return;
    }
    gr->st = xnn_define_quantized_tensor_value(g, gr->act, l->w_zero, l->w_scale, rank, wd,
                                               l->weights, none, 0, w_id);
    if (!gr->st)
        gr->st = xnn_define_quantized_tensor_value(g, xnn_datatype_qint32, 0, in_scale * l->w_scale,
                                                   1, bd, l->bias, none, 0, b_id);
}

static uint32_t layer(graph *gr, bench_xnn *x, size_t li, uint32_t in, float in_scale, bool last) {
    const bench_layer *l = &gr->net->layers[li];
    size_t dims[4] = {1, l->out_h, l->out_w, l->out_c}, rank = 4;
    if (l->kind == BL_FC) dims[1] = l->out_c, rank = 2;
    uint32_t out =
        activation(gr, (uint32_t)rank, dims, l->out_scale, l->out_zero,
                   last ? 1 : XNN_INVALID_VALUE_ID, last ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : 0);
    uint32_t w, b;
    const uint32_t same = XNN_FLAG_TENSORFLOW_SAME_PADDING;
    if (l->kind == BL_CONV || l->kind == BL_DEPTHWISE || l->kind == BL_FC)
        weights(gr, x, li, in_scale, &w, &b);
    if (gr->st != xnn_status_success) return out;
    switch (l->kind) {
    case BL_CONV:
        gr->st = xnn_define_convolution_2d(gr->g, 0, 0, 0, 0, l->k, l->k, l->stride, l->stride, 1,
                                           1, 1, l->in_c, l->out_c, 0.f, 6.f, in, w, b, out, same);
        break;
    case BL_DEPTHWISE:
        gr->st =
            xnn_define_depthwise_convolution_2d(gr->g, 0, 0, 0, 0, l->k, l->k, l->stride, l->stride,
                                                1, 1, 1, l->in_c, 0.f, 6.f, in, w, b, out, same);
        break;
    case BL_AVG_POOL:
        gr->st = xnn_define_average_pooling_2d(gr->g, 0, 0, 0, 0, l->k, l->k, l->stride, l->stride,
                                               -INFINITY, INFINITY, in, out, 0);
        /* This version's subgraph pools quantized values only globally. */
        if (gr->st == xnn_status_invalid_parameter || gr->st == xnn_status_unsupported_parameter)
            gr->st = xnn_define_global_average_pooling_2d(gr->g, -INFINITY, INFINITY, in, out, 0);
        break;
    case BL_FC:
        gr->st = xnn_define_fully_connected(gr->g, -INFINITY, INFINITY, in, w, b, out,
                                            XNN_FLAG_TENSORFLOW_RESHAPE_2D);
        break;
    case BL_SOFTMAX: gr->st = xnn_define_softmax(gr->g, in, out, 0); break;
    case BL_ADD: gr->st = xnn_status_unsupported_parameter; break; /* v2: not built here */
    }
    return out;
}

static bench_xnn *fail(bench_xnn *x, const char *what, enum xnn_status st) {
    fprintf(stderr, "bench: XNNPACK subgraph: %s: status %d\n", what, (int)st);
    bench_xnn_close(x);
    return NULL;
}

/* Defines net on a new subgraph in gr (gr->net set); the caller deletes gr->g. */
static void define_net(graph *gr, bench_xnn *x) {
    const bench_net *net = gr->net;
    gr->st = xnn_status_success;
    gr->act = net->type == SCHEMA_TENSOR_FLOAT32        ? xnn_datatype_fp32
              : net->type == SCHEMA_TENSOR_QUANT8_ASYMM ? xnn_datatype_quint8
                                                        : xnn_datatype_qint8;
    if (net->type == SCHEMA_TENSOR_FLOAT16) {
        gr->st = xnn_status_unsupported_parameter; /* no FLOAT16 side */
        return;
    }
    /* The quantized subgraph stops before SOFTMAX (see the header). */
    size_t n_layers = net->n_layers - (gr->act == xnn_datatype_fp32 ? 0 : 1);
    gr->st = xnn_create_subgraph(2, 0, &gr->g);
    if (gr->st) return;
    uint32_t v = activation(gr, 4, (size_t[]){1, 224, 224, 3}, net->in_scale, net->in_zero, 0,
                            XNN_VALUE_FLAG_EXTERNAL_INPUT);
    float scale = net->in_scale;
    for (size_t i = 0; i < n_layers; i++) {
        v = layer(gr, x, i, v, scale, i + 1 == n_layers);
        scale = net->layers[i].out_scale;
    }
}

static void free_scales(bench_xnn *x) {
    for (size_t i = 0; i < BENCH_NET_MAX_LAYERS; i++) {
        free(x->scales[i]);
        x->scales[i] = NULL;
    }
}

bench_xnn *bench_xnn_open(const bench_net *net, const void *input) {
    bench_xnn *x = calloc(1, sizeof *x);
    if (!x || xnn_initialize(NULL) != xnn_status_success) return free(x), NULL;
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    x->pool = cpus > 1 ? pthreadpool_create((size_t)cpus) : NULL;
    graph gr = {.net = net};
    define_net(&gr, x);
    size_t out_bytes = net->out_elems * net->elem_size + XNN_EXTRA_BYTES;
    x->out = malloc(out_bytes), x->logits = malloc(out_bytes);
    if (!gr.st && (!x->out || !x->logits)) gr.st = xnn_status_out_of_memory;
    if (!gr.st) gr.st = xnn_create_runtime_v2(gr.g, x->pool, 0, &x->runtime);
    if (gr.g) xnn_delete_subgraph(gr.g);
    if (gr.st) return fail(x, "define", gr.st);
    bool qsoftmax = gr.act == xnn_datatype_quint8;
    const bench_layer *fc = &net->layers[net->n_layers - 2], *sm = fc + 1;
    struct xnn_external_value io[2] = {{0, (void *)input}, {1, qsoftmax ? x->logits : x->out}};
    enum xnn_status st = xnn_setup_runtime(x->runtime, 2, io);
    if (!st && qsoftmax)
        st = xnn_create_softmax_nc_qu8(1000, 1000, 1000, fc->out_scale, (uint8_t)sm->out_zero,
                                       sm->out_scale, 0, &x->softmax);
    if (!st && qsoftmax) st = xnn_setup_softmax_nc_qu8(x->softmax, 1, x->logits, x->out, x->pool);
    if (st) return fail(x, "setup", st);
    return x;
}

double bench_xnn_create_ns(void *ctx) {
    const bench_net *net = ctx;
    bench_xnn x = {0};
    if (xnn_initialize(NULL) != xnn_status_success) return -1;
    graph gr = {.net = net};
    uint64_t t0 = bench_now_ns();
    define_net(&gr, &x);
    if (!gr.st) gr.st = xnn_create_runtime_v2(gr.g, NULL, 0, &x.runtime);
    double t = (double)(bench_now_ns() - t0);
    if (gr.g) xnn_delete_subgraph(gr.g);
    if (x.runtime) xnn_delete_runtime(x.runtime);
    free_scales(&x);
    if (gr.st) fprintf(stderr, "bench: XNNPACK subgraph: create: status %d\n", (int)gr.st);
    return gr.st ? -1 : t;
}

double bench_xnn_run(void *ctx) {
    bench_xnn *x = ctx;
    uint64_t t0 = bench_now_ns();
    enum xnn_status st = xnn_invoke_runtime(x->runtime);
    if (!st && x->softmax) st = xnn_run_operator(x->softmax, x->pool);
    double t = (double)(bench_now_ns() - t0);
    if (st) fprintf(stderr, "bench: XNNPACK subgraph: invoke: status %d\n", (int)st);
    return st ? -1 : t;
}

void bench_xnn_rest(void *ctx) {
    bench_xnn *x = ctx;
    if (x->pool)
        pthreadpool_parallelize_1d(x->pool, rest_task, NULL, pthreadpool_get_threads_count(x->pool),
                                   PTHREADPOOL_FLAG_YIELD_WORKERS);
}

const void *bench_xnn_output(const bench_xnn *x) {
    return x->out;
}

void bench_xnn_close(bench_xnn *x) {
    if (!x) return;
    if (x->runtime) xnn_delete_runtime(x->runtime);
    if (x->softmax) xnn_delete_operator(x->softmax);
    if (x->pool) pthreadpool_destroy(x->pool);
    free_scales(x);
    free(x->out), free(x->logits), free(x);
}

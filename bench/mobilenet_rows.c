/* SPDX-License-Identifier: Apache-2.0 */
/* mobilenet_rows.c: see mobilenet_rows.h. */
#include "bench/mobilenet_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "schema/codes.h"
#include "tests/support/mobilenet.h"
#include "tests/support/mobilenet_nnapi.h"
#include "bench/mobilenet_xnn.h"

/* Short rounds, many of them: load from elsewhere on the machine falls on both sides. */
#define ROUNDS    40
#define PER_ROUND 2

/* One type's net, its input and its compiled NNAPI model in the daemon. */
typedef struct side {
    bench_net net;
    void *input;
    bench_nnapi nnapi;
} side;

static int side_open(side *s, int32_t type) {
    s->input = NULL;
    s->nnapi.fd = -1;
    if (bench_net_init(&s->net, type)) {
        fprintf(stderr, "bench: out of memory building the %s MobileNet\n",
                bench_net_type_name(type));
        return -1;
    }
    s->input = bench_net_input(&s->net);
    return s->input ? bench_nnapi_open(&s->nnapi, &s->net, s->input) : -1;
}

static void side_close(side *s) {
    bench_nnapi_close(&s->nnapi);
    bench_net_free(&s->net);
    free(s->input);
}

/* The largest difference between two outputs of n elements read as reals. */
static double max_diff(const bench_net *na, const void *a, const bench_net *nb, const void *b) {
    double d = 0;
    for (size_t i = 0; i < na->out_elems; i++)
        d = fmax(d, fabs(bench_net_output(na, a, i) - bench_net_output(nb, b, i)));
    return d;
}

/* The largest difference between the daemon's INT8 probabilities and the SOFTMAX (in
 * double) of XNNPACK's INT8 logits. */
static double logits_diff(const bench_net *net, const void *probs, const int8_t *logits) {
    const bench_layer *fc = &net->layers[net->n_layers - 2];
    double max = -INFINITY, sum = 0, d = 0;
    for (size_t i = 0; i < net->out_elems; i++)
        max = fmax(max, fc->out_scale * (logits[i] - fc->out_zero));
    for (size_t i = 0; i < net->out_elems; i++)
        sum += exp(fc->out_scale * (logits[i] - fc->out_zero) - max);
    for (size_t i = 0; i < net->out_elems; i++) {
        double p = exp(fc->out_scale * (logits[i] - fc->out_zero) - max) / sum;
        d = fmax(d, fabs(bench_net_output(net, probs, i) - p));
    }
    return d;
}

/* The daemon's side of s against XNNPACK's subgraph runtime on the same net. */
static int versus_xnn(side *s, bench_pair *pair, double *diff) {
    bench_xnn *x = bench_xnn_open(&s->net, s->input);
    int rc = x ? bench_alternate(bench_nnapi_run, &s->nnapi, bench_xnn_run, x, bench_xnn_rest,
                                 ROUNDS, PER_ROUND, pair)
               : -1;
    const void *mine = bench_nnapi_output(&s->nnapi);
    if (rc == 0 && s->net.type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED)
        *diff = logits_diff(&s->net, mine, bench_xnn_output(x));
    else if (rc == 0)
        *diff = max_diff(&s->net, mine, &s->net, bench_xnn_output(x));
    bench_xnn_close(x);
    return rc;
}

int bench_mobilenet_rows(const tst_daemon *d, bench_mobilenet *out) {
    /* libnnd's NNAPI layer reaches the daemon that $NND_SOCKET names. */
    setenv("NND_SOCKET", d->socket_path, 1);
    side f32, q8, f16, s8;
    int rc = side_open(&f32, SCHEMA_TENSOR_FLOAT32);
    rc |= side_open(&q8, SCHEMA_TENSOR_QUANT8_ASYMM);
    rc |= side_open(&f16, SCHEMA_TENSOR_FLOAT16);
    rc |= side_open(&s8, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    if (!rc) rc = versus_xnn(&f32, &out->f32_xnn, &out->f32_diff);
    if (!rc) rc = versus_xnn(&q8, &out->q8_xnn, &out->q8_diff);
    if (!rc)
        rc = bench_alternate(bench_nnapi_run, &f16.nnapi, bench_nnapi_run, &f32.nnapi, NULL, ROUNDS,
                             PER_ROUND, &out->f16_f32);
    if (!rc)
        out->f16_diff = max_diff(&f16.net, bench_nnapi_output(&f16.nnapi), &f32.net,
                                 bench_nnapi_output(&f32.nnapi));
    if (!rc)
        rc = bench_alternate(bench_nnapi_run, &s8.nnapi, bench_nnapi_run, &q8.nnapi, NULL, ROUNDS,
                             PER_ROUND, &out->s8_q8);
    if (!rc) rc = versus_xnn(&s8, &out->s8_xnn, &out->s8_diff);
    const char *shape = "MobileNet v1 1.0 224x224 through NNAPI (30 operations)";
    out->f32_xnn.shape = out->q8_xnn.shape = out->f16_f32.shape = shape;
    out->s8_q8.shape = out->s8_xnn.shape = shape;
    side_close(&f32), side_close(&q8), side_close(&f16), side_close(&s8);
    return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* mobilenet_nnapi.c: see mobilenet_nnapi.h. */
#include "tests/support/mobilenet_nnapi.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "schema/codes.h"
#include "nnd/NeuralNetworks.h"
#include "nnd/nnd.h"
#include "engine/ops_common/float16.h"
#include "tests/support/timing.h"

typedef struct builder {
    ANeuralNetworksModel *m;
    uint32_t next; /* operand index */
    int rc;
} builder;

static uint32_t operand(builder *b, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                        int32_t zero) {
    ANeuralNetworksOperandType t = {type, rank, dims, scale, zero};
    if (!b->rc) b->rc = ANeuralNetworksModel_addOperand(b->m, &t);
    return b->next++;
}

static uint32_t constant(builder *b, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                         int32_t zero, const void *data, size_t len) {
    uint32_t i = operand(b, type, rank, dims, scale, zero);
    if (!b->rc) b->rc = ANeuralNetworksModel_setOperandValue(b->m, (int32_t)i, data, len);
    return i;
}

static uint32_t int_scalar(builder *b, int32_t v) {
    return constant(b, ANEURALNETWORKS_INT32, 0, NULL, 0, 0, &v, sizeof v);
}

/* The weights operand of a layer: per-channel int8 convolutions name their scales. */
static uint32_t weights(builder *b, const bench_net *net, const bench_layer *l, uint32_t rank,
                        const uint32_t *dims) {
    bool per_channel = l->channel_scales != NULL;
    int32_t type = per_channel ? ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL : net->type;
    uint32_t i = operand(b, type, rank, dims, per_channel ? 0 : l->w_scale, l->w_zero);
    if (per_channel && !b->rc) {
        ANeuralNetworksSymmPerChannelQuantParams q = {l->kind == BL_DEPTHWISE ? 3 : 0, l->out_c,
                                                      l->channel_scales};
        b->rc = ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(b->m, (int32_t)i, &q);
    }
    if (!b->rc)
        b->rc = ANeuralNetworksModel_setOperandValue(b->m, (int32_t)i, l->weights, l->weight_bytes);
    return i;
}

static uint32_t bias(builder *b, const bench_net *net, const bench_layer *l, float in_scale) {
    bool floating = net->type == SCHEMA_TENSOR_FLOAT32 || net->type == SCHEMA_TENSOR_FLOAT16;
    float scale = floating || l->channel_scales ? 0 : in_scale * l->w_scale;
    return constant(b, floating ? net->type : ANEURALNETWORKS_TENSOR_INT32, 1, &l->out_c, scale, 0,
                    l->bias, l->bias_bytes);
}

static uint32_t layer(builder *b, const bench_net *net, const bench_layer *l, uint32_t x,
                      float in_scale, uint32_t skipped) {
    uint32_t in[12], n = 0, code;
    uint32_t out_dims[4] = {1, l->out_h, l->out_w, l->out_c}, out_rank = 4;
    in[n++] = x;
    switch (l->kind) {
    case BL_CONV:
    case BL_DEPTHWISE: {
        bool dw = l->kind == BL_DEPTHWISE;
        uint32_t wd[4] = {dw ? 1 : l->out_c, l->k, l->k, dw ? l->out_c : l->in_c};
        in[n++] = weights(b, net, l, 4, wd);
        in[n++] = bias(b, net, l, in_scale);
        in[n++] = int_scalar(b, ANEURALNETWORKS_PADDING_SAME);
        in[n++] = int_scalar(b, (int32_t)l->stride), in[n++] = int_scalar(b, (int32_t)l->stride);
        if (dw) in[n++] = int_scalar(b, 1);
        in[n++] =
            int_scalar(b, l->linear ? ANEURALNETWORKS_FUSED_NONE : ANEURALNETWORKS_FUSED_RELU6);
        code = dw ? ANEURALNETWORKS_DEPTHWISE_CONV_2D : ANEURALNETWORKS_CONV_2D;
        break;
    }
    case BL_ADD:
        in[n++] = skipped;
        in[n++] = int_scalar(b, ANEURALNETWORKS_FUSED_NONE);
        code = ANEURALNETWORKS_ADD;
        break;
    case BL_AVG_POOL:
        in[n++] = int_scalar(b, ANEURALNETWORKS_PADDING_VALID);
        in[n++] = int_scalar(b, (int32_t)l->stride), in[n++] = int_scalar(b, (int32_t)l->stride);
        in[n++] = int_scalar(b, (int32_t)l->k), in[n++] = int_scalar(b, (int32_t)l->k);
        in[n++] = int_scalar(b, ANEURALNETWORKS_FUSED_NONE);
        code = ANEURALNETWORKS_AVERAGE_POOL_2D;
        break;
    case BL_FC:
        in[n++] = weights(b, net, l, 2, (uint32_t[]){l->out_c, l->in_c});
        in[n++] = bias(b, net, l, in_scale);
        in[n++] = int_scalar(b, ANEURALNETWORKS_FUSED_NONE);
        out_dims[1] = l->out_c, out_rank = 2;
        code = ANEURALNETWORKS_FULLY_CONNECTED;
        break;
    default: {
        float beta = 1.f;
        eng_half half = 1;
        in[n++] = net->type == SCHEMA_TENSOR_FLOAT16
                      ? constant(b, ANEURALNETWORKS_FLOAT16, 0, NULL, 0, 0, &half, sizeof half)
                      : constant(b, ANEURALNETWORKS_FLOAT32, 0, NULL, 0, 0, &beta, sizeof beta);
        out_dims[1] = l->out_c, out_rank = 2;
        code = ANEURALNETWORKS_SOFTMAX;
    }
    }
    uint32_t y = operand(b, net->type, out_rank, out_dims, l->out_scale, l->out_zero);
    if (!b->rc) b->rc = ANeuralNetworksModel_addOperation(b->m, (int32_t)code, n, in, 1, &y);
    return y;
}

ANeuralNetworksModel *bench_nnapi_model(const bench_net *net) {
    builder b = {0};
    if (ANeuralNetworksModel_create(&b.m) != ANEURALNETWORKS_NO_ERROR) return NULL;
    uint32_t x =
        operand(&b, net->type, 4, (uint32_t[]){1, 224, 224, 3}, net->in_scale, net->in_zero);
    uint32_t input = x, outs[BENCH_NET_MAX_LAYERS];
    float scale = net->in_scale;
    for (size_t i = 0; i < net->n_layers; i++) {
        const bench_layer *l = &net->layers[i];
        x = outs[i] = layer(&b, net, l, x, scale, l->kind == BL_ADD ? outs[l->skip] : 0);
        scale = l->out_scale;
    }
    if (!b.rc) b.rc = ANeuralNetworksModel_identifyInputsAndOutputs(b.m, 1, &input, 1, &x);
    if (!b.rc) b.rc = ANeuralNetworksModel_finish(b.m);
    if (b.rc) {
        fprintf(stderr, "bench: building the %s MobileNet through NNAPI: result code %d\n",
                bench_net_type_name(net->type), b.rc);
        ANeuralNetworksModel_free(b.m);
        return NULL;
    }
    return b.m;
}

int bench_nnapi_open(bench_nnapi *r, const bench_net *net, const void *input) {
    return bench_nnapi_open_at(r, net, input, ANEURALNETWORKS_PRIORITY_DEFAULT);
}

int bench_nnapi_open_at(bench_nnapi *r, const bench_net *net, const void *input, int priority) {
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->in_bytes = net->in_elems * net->elem_size;
    r->out_bytes = net->out_elems * net->elem_size;
    r->out_at = (r->in_bytes + 4095) & ~(size_t)4095;
    size_t size = r->out_at + ((r->out_bytes + 4095) & ~(size_t)4095);
    void *map = NULL;
    int rc = -1;
    if (!(r->model = bench_nnapi_model(net))) return -1;
    if ((r->fd = nnd_memfd_create("bench-mobilenet", size, &map)) < 0) goto out;
    r->map = map;
    memcpy(r->map, input, r->in_bytes);
    rc = ANeuralNetworksMemory_createFromFd(size, PROT_READ | PROT_WRITE, r->fd, 0, &r->memory);
    if (!rc) rc = ANeuralNetworksCompilation_create(r->model, &r->compilation);
    if (!rc)
        rc = ANeuralNetworksCompilation_setPreference(r->compilation,
                                                      ANEURALNETWORKS_PREFER_SUSTAINED_SPEED);
    if (!rc) rc = ANeuralNetworksCompilation_setPriority(r->compilation, priority);
    if (!rc) rc = ANeuralNetworksCompilation_finish(r->compilation);
out:
    if (rc)
        fprintf(stderr, "bench: compiling the %s MobileNet: result code %d\n",
                bench_net_type_name(net->type), rc);
    return rc ? -1 : 0;
}

double bench_nnapi_compile_ns(ANeuralNetworksModel *m, const char *cache_dir,
                              const uint8_t *token) {
    ANeuralNetworksCompilation *c = NULL;
    uint64_t t0 = bench_now_ns();
    int rc = ANeuralNetworksCompilation_create(m, &c);
    if (!rc)
        rc = ANeuralNetworksCompilation_setPreference(c, ANEURALNETWORKS_PREFER_SUSTAINED_SPEED);
    if (!rc && cache_dir) rc = ANeuralNetworksCompilation_setCaching(c, cache_dir, token);
    if (!rc) rc = ANeuralNetworksCompilation_finish(c);
    double t = (double)(bench_now_ns() - t0);
    ANeuralNetworksCompilation_free(c);
    if (rc) fprintf(stderr, "bench: compiling a MobileNet through NNAPI: result code %d\n", rc);
    return rc ? -1 : t;
}

double bench_nnapi_execute(ANeuralNetworksCompilation *c, ANeuralNetworksMemory *memory,
                           size_t in_bytes, size_t out_at, size_t out_bytes, const char *what) {
    ANeuralNetworksExecution *e = NULL;
    uint64_t t0 = bench_now_ns();
    int rc = ANeuralNetworksExecution_create(c, &e);
    if (!rc) rc = ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, memory, 0, in_bytes);
    if (!rc)
        rc = ANeuralNetworksExecution_setOutputFromMemory(e, 0, NULL, memory, out_at, out_bytes);
    if (!rc) rc = ANeuralNetworksExecution_compute(e);
    ANeuralNetworksExecution_free(e);
    double t = (double)(bench_now_ns() - t0);
    if (rc) fprintf(stderr, "bench: %s through NNAPI: result code %d\n", what, rc);
    return rc ? -1 : t;
}

double bench_nnapi_run(void *ctx) {
    bench_nnapi *r = ctx;
    return bench_nnapi_execute(r->compilation, r->memory, r->in_bytes, r->out_at, r->out_bytes,
                               "MobileNet execution");
}

const void *bench_nnapi_output(const bench_nnapi *r) {
    return r->map + r->out_at;
}

void bench_nnapi_close(bench_nnapi *r) {
    ANeuralNetworksCompilation_free(r->compilation);
    ANeuralNetworksModel_free(r->model);
    ANeuralNetworksMemory_free(r->memory);
    if (r->map) munmap(r->map, r->out_at + ((r->out_bytes + 4095) & ~(size_t)4095));
    if (r->fd >= 0) close(r->fd);
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

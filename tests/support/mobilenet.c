/* SPDX-License-Identifier: Apache-2.0 */
/* mobilenet.c: see mobilenet.h. */
#include "tests/support/mobilenet.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "schema/codes.h"
#include "engine/ops_common/float16.h"

const struct bench_block bench_net_blocks[BENCH_NET_BLOCKS] = {
    {64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
    {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};

/* RELU6 outputs span [0, 6]: 8-bit steps of 6/255 from the storage minimum. */
#define RELU6_SCALE (6.f / 255.f)

static bool quantized(int32_t type) {
    return type == SCHEMA_TENSOR_QUANT8_ASYMM || type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
}

static int32_t storage_min(int32_t type) {
    return type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED ? -128 : 0;
}

static float uniform(unsigned *seed, float limit) {
    return limit * (2.f * (float)rand_r(seed) / (float)RAND_MAX - 1.f);
}

static int32_t round_clamp(float v, int32_t lo, int32_t hi) {
    long r = lrintf(v);
    return r < lo ? lo : r > hi ? hi : (int32_t)r;
}

/* Stores n reals as the net's weights: float, half, or 8-bit with the layer's scale(s)
 * chosen here (per channel of `channels` contiguous runs when per_channel). */
static void *store_weights(const bench_net *net, bench_layer *l, const float *w, size_t n,
                           uint32_t channels, bool channel_last, bool per_channel) {
    int32_t t = net->type;
    size_t esize = t == SCHEMA_TENSOR_FLOAT32 ? 4 : t == SCHEMA_TENSOR_FLOAT16 ? 2 : 1;
    uint8_t *out = malloc(n * esize + 64);
    if (!out) return NULL;
    l->weight_bytes = n * esize;
    if (t == SCHEMA_TENSOR_FLOAT32) return memcpy(out, w, n * sizeof *w);
    if (t == SCHEMA_TENSOR_FLOAT16) {
        for (size_t i = 0; i < n; i++)
            ((eng_half *)out)[i] = (eng_half)w[i];
        return out;
    }
    float max = 0;
    for (size_t i = 0; i < n; i++)
        max = fmaxf(max, fabsf(w[i]));
    l->w_scale = max / 127.f;
    l->w_zero = t == SCHEMA_TENSOR_QUANT8_ASYMM ? 128 : 0;
    if (per_channel) {
        l->channel_scales = calloc(channels, sizeof(float));
        if (!l->channel_scales) return free(out), NULL;
        for (size_t i = 0; i < n; i++) {
            size_t c = channel_last ? i % channels : i / (n / channels);
            l->channel_scales[c] = fmaxf(l->channel_scales[c], fabsf(w[i]) / 127.f);
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t c = channel_last ? i % channels : i / (n / channels);
        float scale = per_channel ? l->channel_scales[c] : l->w_scale;
        int32_t q = round_clamp(scale > 0 ? w[i] / scale : 0, -127, 127) + l->w_zero;
        out[i] = (uint8_t)q; /* signed values keep their two's complement byte */
    }
    return out;
}

/* Bias reals as float, half, or int32 at input scale x weight scale (per channel). */
static void *store_bias(const bench_net *net, bench_layer *l, const float *b, float in_scale) {
    int32_t t = net->type;
    size_t n = l->out_c;
    l->bias_bytes = n * (t == SCHEMA_TENSOR_FLOAT16 ? 2 : 4);
    void *out = malloc(l->bias_bytes + 64);
    for (size_t i = 0; out && i < n; i++) {
        if (t == SCHEMA_TENSOR_FLOAT32)
            ((float *)out)[i] = b[i];
        else if (t == SCHEMA_TENSOR_FLOAT16)
            ((eng_half *)out)[i] = (eng_half)b[i];
        else {
            float ws = l->channel_scales ? l->channel_scales[i] : l->w_scale;
            ((int32_t *)out)[i] = (int32_t)lrintf(b[i] / (in_scale * ws));
        }
    }
    return out;
}

/* A weighted layer: weights uniform in +-sqrt(6 / fan_in) (activations keep their size
 * through RELU6), eight times that for the logits (so that SOFTMAX picks some classes out
 * and the two sides of a row can be compared on its output), biases in +-0.1. */
static int weighted(bench_net *net, bench_layer *l, unsigned *seed, float in_scale) {
    bool dw = l->kind == BL_DEPTHWISE, fc = l->kind == BL_FC;
    uint32_t fan_in = fc ? l->in_c : dw ? l->k * l->k : l->k * l->k * l->in_c;
    size_t n =
        fc ? (size_t)l->out_c * l->in_c : (size_t)l->out_c * l->k * l->k * (dw ? 1 : l->in_c);
    float *w = malloc(n * sizeof *w), *b = malloc(l->out_c * sizeof *b);
    if (!w || !b) return free(w), free(b), -1;
    float limit = sqrtf(6.f / (float)fan_in) * (fc ? 8.f : 1.f);
    for (size_t i = 0; i < n; i++)
        w[i] = uniform(seed, limit);
    for (uint32_t i = 0; i < l->out_c; i++)
        b[i] = uniform(seed, 0.1f);
    bool per_channel = net->type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED && !fc;
    l->weights = store_weights(net, l, w, n, l->out_c, dw, per_channel);
    l->bias = l->weights ? store_bias(net, l, b, in_scale) : NULL;
    free(w), free(b);
    return l->bias ? 0 : -1;
}

static bench_layer *add_layer(bench_net *net, enum bench_layer_kind kind, uint32_t out_c,
                              uint32_t k, uint32_t stride) {
    bench_layer *l = &net->layers[net->n_layers];
    const bench_layer *prev = net->n_layers ? l - 1 : NULL;
    *l = (bench_layer){.kind = kind, .k = k, .stride = stride};
    l->in_h = prev ? prev->out_h : 224, l->in_w = prev ? prev->out_w : 224;
    l->in_c = prev ? prev->out_c : 3;
    l->out_h = (l->in_h + stride - 1) / stride, l->out_w = (l->in_w + stride - 1) / stride;
    l->out_c = out_c;
    /* Quantization: RELU6 range after convolutions, the input's through the pool, logits
     * in +-32, and the probabilities SOFTMAX must produce (scale 1/256). */
    int32_t lo = storage_min(net->type);
    float in_scale = prev ? prev->out_scale : net->in_scale;
    int32_t in_zero = prev ? prev->out_zero : net->in_zero;
    switch (kind) {
    case BL_CONV:
    case BL_DEPTHWISE: l->out_scale = RELU6_SCALE, l->out_zero = lo; break;
    case BL_AVG_POOL: l->out_scale = in_scale, l->out_zero = in_zero; break;
    case BL_FC: l->out_scale = 0.25f, l->out_zero = lo + 128; break;
    case BL_SOFTMAX: l->out_scale = 1.f / 256, l->out_zero = lo; break;
    case BL_ADD: l->out_scale = 0.09f, l->out_zero = lo + 128; break;
    }
    if (!quantized(net->type)) l->out_scale = 0, l->out_zero = 0;
    net->n_layers++;
    return l;
}

int bench_net_init(bench_net *net, int32_t type) {
    memset(net, 0, sizeof *net);
    if (type != SCHEMA_TENSOR_FLOAT32 && type != SCHEMA_TENSOR_FLOAT16 && !quantized(type))
        return -1;
    net->type = type;
    net->elem_size = type == SCHEMA_TENSOR_FLOAT32 ? 4 : type == SCHEMA_TENSOR_FLOAT16 ? 2 : 1;
    if (quantized(type)) net->in_scale = 1.f / 128, net->in_zero = storage_min(type) + 128;
    unsigned seed = 11;
    int rc = 0;
    bench_layer *l = add_layer(net, BL_CONV, 32, 3, 2);
    rc |= weighted(net, l, &seed, net->in_scale);
    for (size_t i = 0; i < BENCH_NET_BLOCKS && !rc; i++) {
        l = add_layer(net, BL_DEPTHWISE, l->out_c, 3, bench_net_blocks[i].stride);
        rc |= weighted(net, l, &seed, (l - 1)->out_scale);
        l = add_layer(net, BL_CONV, bench_net_blocks[i].out_c, 1, 1);
        rc |= weighted(net, l, &seed, (l - 1)->out_scale);
    }
    if (rc) return bench_net_free(net), -1;
    l = add_layer(net, BL_AVG_POOL, l->out_c, l->out_h, l->out_h);
    l = add_layer(net, BL_FC, 1000, 1, 1);
    if (weighted(net, l, &seed, (l - 1)->out_scale)) return bench_net_free(net), -1;
    add_layer(net, BL_SOFTMAX, 1000, 1, 1);
    net->in_elems = 224 * 224 * 3;
    net->out_elems = 1000;
    return 0;
}

/* MobileNet v2's inverted residual blocks: expansion, output channels, repeats, stride. */
static const struct {
    uint32_t t, c, n, s;
} v2_blocks[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                 {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};

/* A linear 1x1 projection: outputs around zero, in +-8. */
static bench_layer *projection(bench_net *net, uint32_t out_c, unsigned *seed, int *rc) {
    bench_layer *l = add_layer(net, BL_CONV, out_c, 1, 1);
    l->linear = true;
    if (net->type == SCHEMA_TENSOR_QUANT8_ASYMM || net->type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED)
        l->out_scale = 1.f / 16, l->out_zero = storage_min(net->type) + 128;
    *rc |= weighted(net, l, seed, (l - 1)->out_scale);
    return l;
}

int bench_net_init_v2(bench_net *net, int32_t type) {
    memset(net, 0, sizeof *net);
    if (type != SCHEMA_TENSOR_FLOAT32 && type != SCHEMA_TENSOR_FLOAT16 && !quantized(type))
        return -1;
    net->type = type;
    net->elem_size = type == SCHEMA_TENSOR_FLOAT32 ? 4 : type == SCHEMA_TENSOR_FLOAT16 ? 2 : 1;
    if (quantized(type)) net->in_scale = 1.f / 128, net->in_zero = storage_min(type) + 128;
    unsigned seed = 13;
    int rc = 0;
    bench_layer *l = add_layer(net, BL_CONV, 32, 3, 2);
    rc |= weighted(net, l, &seed, net->in_scale);
    for (size_t b = 0; b < sizeof v2_blocks / sizeof v2_blocks[0] && !rc; b++)
        for (uint32_t r = 0; r < v2_blocks[b].n && !rc; r++) {
            uint32_t in_at = (uint32_t)net->n_layers - 1, in_c = l->out_c;
            uint32_t stride = r ? 1 : v2_blocks[b].s;
            if (v2_blocks[b].t != 1) {
                l = add_layer(net, BL_CONV, in_c * v2_blocks[b].t, 1, 1);
                rc |= weighted(net, l, &seed, (l - 1)->out_scale);
            }
            l = add_layer(net, BL_DEPTHWISE, l->out_c, 3, stride);
            rc |= weighted(net, l, &seed, (l - 1)->out_scale);
            l = projection(net, v2_blocks[b].c, &seed, &rc);
            if (stride == 1 && in_c == v2_blocks[b].c) {
                l = add_layer(net, BL_ADD, l->out_c, 1, 1);
                l->skip = in_at;
            }
        }
    if (!rc) {
        l = add_layer(net, BL_CONV, 1280, 1, 1);
        rc |= weighted(net, l, &seed, (l - 1)->out_scale);
    }
    if (rc) return bench_net_free(net), -1;
    l = add_layer(net, BL_AVG_POOL, l->out_c, l->out_h, l->out_h);
    l = add_layer(net, BL_FC, 1000, 1, 1);
    if (weighted(net, l, &seed, (l - 1)->out_scale)) return bench_net_free(net), -1;
    add_layer(net, BL_SOFTMAX, 1000, 1, 1);
    net->in_elems = 224 * 224 * 3;
    net->out_elems = 1000;
    return 0;
}

void bench_net_free(bench_net *net) {
    for (size_t i = 0; i < net->n_layers; i++) {
        free(net->layers[i].weights), free(net->layers[i].bias);
        free(net->layers[i].channel_scales);
    }
    memset(net, 0, sizeof *net);
}

void *bench_net_input(const bench_net *net) {
    uint8_t *in = malloc(net->in_elems * net->elem_size + 64);
    unsigned seed = 7;
    for (size_t i = 0; in && i < net->in_elems; i++) {
        float v = uniform(&seed, 1.f);
        if (net->type == SCHEMA_TENSOR_FLOAT32)
            ((float *)in)[i] = v;
        else if (net->type == SCHEMA_TENSOR_FLOAT16)
            ((eng_half *)in)[i] = (eng_half)v;
        else
            in[i] = (uint8_t)round_clamp(v / net->in_scale + (float)net->in_zero,
                                         storage_min(net->type), storage_min(net->type) + 255);
    }
    return in;
}

double bench_net_output(const bench_net *net, const void *out, size_t i) {
    const bench_layer *l = &net->layers[net->n_layers - 1];
    switch (net->type) {
    case SCHEMA_TENSOR_FLOAT32: return ((const float *)out)[i];
    case SCHEMA_TENSOR_FLOAT16: return (double)((const eng_half *)out)[i];
    case SCHEMA_TENSOR_QUANT8_ASYMM:
        return l->out_scale * (((const uint8_t *)out)[i] - l->out_zero);
    default: return l->out_scale * (((const int8_t *)out)[i] - l->out_zero);
    }
}

const char *bench_net_type_name(int32_t type) {
    switch (type) {
    case SCHEMA_TENSOR_FLOAT32: return "FLOAT32";
    case SCHEMA_TENSOR_FLOAT16: return "FLOAT16";
    case SCHEMA_TENSOR_QUANT8_ASYMM: return "QUANT8";
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED: return "INT8";
    default: return "?";
    }
}

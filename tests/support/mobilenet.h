/* SPDX-License-Identifier: Apache-2.0 */
/* mobilenet: the one MobileNet v1 (width 1.0, 224x224) of the bench, built once per
 * element type from one layer plan: a 3x3 stride-2 CONV_2D, 13 depthwise-separable
 * blocks (3x3 DEPTHWISE_CONV_2D, 1x1 CONV_2D, each with a fused RELU6), a 7x7
 * AVERAGE_POOL_2D, a 1000-way FULLY_CONNECTED and SOFTMAX. And a MobileNet v2 (width 1.0,
 * 224x224; bench_net_init_v2): a 3x3 stride-2 CONV_2D, 17 inverted residual blocks (1x1
 * expansion CONV_2D with RELU6 but for the first, 3x3 DEPTHWISE_CONV_2D with RELU6, a
 * linear 1x1 projection CONV_2D, and an ADD of the block's input where the shape allows),
 * a 1x1 CONV_2D to 1280 channels, then the same pool, FULLY_CONNECTED and SOFTMAX.
 *
 * Contract: bench_net_init() makes the network's weights (fixed random, scaled by fan-in)
 * in the given activation type: TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM (8-bit
 * weights per tensor) or TENSOR_QUANT8_ASYMM_SIGNED (convolution weights
 * TENSOR_QUANT8_SYMM_PER_CHANNEL, FULLY_CONNECTED weights per tensor), with the layouts
 * the NNAPI operands take. The same net feeds both sides of a row: the NNAPI model
 * (mobilenet_nnapi.h) and XNNPACK's subgraph runtime (mobilenet_xnn.h). The blocks table
 * is the plan, shared with the wire-built FLOAT32 MobileNet of the inproc row. */
#ifndef TST_SUPPORT_MOBILENET_H
#define TST_SUPPORT_MOBILENET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_NET_BLOCKS 13
/* Output channels and stride of each depthwise-separable block. */
extern const struct bench_block { uint32_t out_c, stride; } bench_net_blocks[BENCH_NET_BLOCKS];

enum bench_layer_kind { BL_CONV, BL_DEPTHWISE, BL_AVG_POOL, BL_FC, BL_SOFTMAX, BL_ADD };

typedef struct bench_layer {
    enum bench_layer_kind kind;
    uint32_t in_h, in_w, in_c, out_h, out_w, out_c, k, stride; /* SAME padding */
    /* Weights and bias in the net's storage types (NULL for pools and SOFTMAX): conv
     * [out_c, k, k, in_c], depthwise [1, k, k, out_c], FULLY_CONNECTED [out_c, in_c]. */
    void *weights, *bias;
    size_t weight_bytes, bias_bytes;
    float w_scale;         /* per-tensor weight scale (quantized) */
    int32_t w_zero;        /* per-tensor weight zero point */
    float *channel_scales; /* per output channel (signed convolutions), else NULL */
    float out_scale;       /* the output's quantization (quantized types) */
    int32_t out_zero;
    bool linear;   /* convolutions: no fused RELU6 (v2's projections) */
    uint32_t skip; /* BL_ADD: the layer whose output the previous one's is added to */
} bench_layer;

#define BENCH_NET_MAX_LAYERS 72

typedef struct bench_net {
    int32_t type; /* the activations' NNAPI operand type */
    float in_scale;
    int32_t in_zero;
    bench_layer layers[BENCH_NET_MAX_LAYERS];
    size_t n_layers;
    size_t in_elems, out_elems, elem_size;
} bench_net;

/* 0, or -1 when out of memory or for another type. */
int bench_net_init(bench_net *net, int32_t type);
/* MobileNet v2 in the same form (BL_ADD layers; XNNPACK's side of the bench builds v1
 * only). */
int bench_net_init_v2(bench_net *net, int32_t type);
void bench_net_free(bench_net *net);
/* A fixed random image in [-1, 1], in the net's input type; NULL when out of memory. */
void *bench_net_input(const bench_net *net);
/* "FLOAT32", "FLOAT16", "QUANT8" or "INT8", for messages and rows. */
const char *bench_net_type_name(int32_t type);
/* Element i of an output in the net's type, as a real number. */
double bench_net_output(const bench_net *net, const void *out, size_t i);

#endif

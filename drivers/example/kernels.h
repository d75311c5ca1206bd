/* SPDX-License-Identifier: Apache-2.0 */
/* kernels: the example driver's own float32 kernels, NHWC. Each reads its inputs and
 * writes its outputs through plain pointers; shapes come from the caller. Nothing here
 * knows nnd. */
#ifndef EXAMPLE_KERNELS_H
#define EXAMPLE_KERNELS_H

#include <stdint.h>

enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU1 = 2, ACT_RELU6 = 3 };

typedef struct ex_shape {
    uint32_t rank;
    uint32_t dims[8];
} ex_shape;

typedef struct ex_window {
    uint32_t pad_left, pad_top; /* the right and bottom pads follow from the output size */
    uint32_t stride_w, stride_h;
    uint32_t kw, kh;
    int32_t act;
} ex_window;

float ex_activate(float v, int32_t act);
/* out = a (op) b with NNAPI broadcasting (shapes aligned at their last dimension). */
void ex_binary(int mul, const float *a, const ex_shape *sa, const float *b, const ex_shape *sb,
               float *out, const ex_shape *so, int32_t act);
void ex_clamp(const float *in, float *out, uint64_t n, float lo, float hi);
/* in [N,H,W,C], filter [O,KH,KW,C], bias [O] -> out [N,OH,OW,O]. */
void ex_conv2d(const float *in, const uint32_t in_dims[4], const float *filter, const float *bias,
               uint32_t out_c, float *out, const uint32_t out_dims[4], const ex_window *w);
/* max (is_max) or average (over the window's part inside the input). */
void ex_pool2d(int is_max, const float *in, const uint32_t in_dims[4], float *out,
               const uint32_t out_dims[4], const ex_window *w);
/* in [batch, size] (flattened), weights [units, size], bias [units] -> out [batch, units]. */
void ex_fully_connected(const float *in, uint32_t batch, uint32_t size, const float *weights,
                        const float *bias, uint32_t units, float *out, int32_t act);
/* Over the last axis of rows x depth. */
void ex_softmax(const float *in, uint64_t rows, uint32_t depth, float beta, float *out);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* conv_walk: one convolution engine for CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D,
 * FULLY_CONNECTED and TRANSPOSE_CONV_2D, from the scalars of their signature to the walk
 * over output pixels.
 *
 * Contract: every operation is a grouped convolution where in_c / groups input channels
 * feed out_c / groups outputs. Depthwise is groups == in_c (out_c / groups = depth
 * multiplier); FC is a 1x1 conv. A windowed operation checks (eng_conv_check_params,
 * eng_conv_check_tensors), reads its scalars (eng_conv_read_params), resolves the
 * geometry (eng_conv_geometry), sets out_c, groups and the filter strides and the output
 * shape, and runs (eng_conv_run, or eng_conv_transpose_run). The run computes
 * FLOAT32 with one float total per output, its products added in TensorFlow Lite's
 * reference order (window rows, columns, input channels; a transposed convolution's input
 * pixels in row order), bias last, and the 8-bit quantized types, QUANT8_ASYMM and
 * QUANT8_ASYMM_SIGNED (filter of the input's type or QUANT8_SYMM_PER_CHANNEL), with int32
 * accumulation on stored values and the reference's requantization;
 * it allocates only scratch and fails only when scratch runs out or the type has no
 * kernel.
 *
 * Operand order of the windowed operations: 0 input, 1 filter, 2 bias, then either
 * explicit padding (left, right, top, bottom) or an implicit scheme, stride w, stride h,
 * `n_extra` operation-specific INT32 scalars (depth multiplier, groups), the fused
 * activation, an optional NCHW flag and optional dilation factors (w, h).
 */
#ifndef ENG_OPS_COMMON_CONV_WALK_H
#define ENG_OPS_COMMON_CONV_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

typedef struct eng_conv_params {
    int32_t scheme; /* SCHEMA_PADDING_SAME/VALID, or 0 for explicit padding */
    int32_t pad_left, pad_right, pad_top, pad_bottom;
    int32_t stride_w, stride_h, dil_w, dil_h;
    int32_t extra; /* the first operation-specific scalar, 0 if none */
    int32_t act;
    bool nchw;
} eng_conv_params;

enum {
    ENG_CONV_DILATION = 1,       /* dilation factors may follow the layout flag */
    ENG_CONV_LAYOUT_REQUIRED = 2 /* the layout flag is not optional */
};
/* Signature of the scalars: count, types, and values of the constant ones. */
schema_status eng_conv_check_params(eng_op_ctx *c, uint32_t n_extra, unsigned flags);
/* Reads the scalars; ENG_DEFER when one is not known yet. Padding stays as given. */
schema_status eng_conv_read_params(const eng_op_ctx *c, uint32_t n_extra, eng_conv_params *p);
/* Types of input 0, filter (input 1), bias (input 2) and output 0: FLOAT32, FLOAT16,
 * QUANT8_ASYMM or QUANT8_ASYMM_SIGNED throughout, with a TENSOR_INT32 bias for the
 * quantized types (scale input * filter), whose filter may instead be
 * QUANT8_SYMM_PER_CHANNEL along channel_dim (< 0: not accepted). */
schema_status eng_conv_check_tensors(eng_op_ctx *c, int channel_dim);

typedef struct eng_conv_geom {
    uint32_t batches, in_h, in_w, in_c;
    uint32_t out_h, out_w, out_c;
    uint32_t filter_h, filter_w, groups;
    int32_t pad_top, pad_left, stride_h, stride_w, dil_h, dil_w;
    /* Filter element (oc, ky, kx, k) with k < in_c / groups is at
     * oc * filter_oc_stride + (ky * filter_w + kx) * filter_tap_stride + k. */
    size_t filter_oc_stride, filter_tap_stride;
    bool nchw; /* layout of input and output */
} eng_conv_geom;

/* Fills the input sizes (per layout), padding (resolving an implicit scheme), strides,
 * dilation and output size for a filter_h x filter_w window; fails when a padding is
 * not smaller than the dilated filter. The caller sets out_c, groups, filter strides. */
schema_status eng_conv_geometry(eng_op_ctx *c, const eng_conv_params *p, const eng_tensor *in,
                                uint32_t filter_h, uint32_t filter_w, eng_conv_geom *g);
/* Output multipliers for n output channels: in * filter[channel] / out, per channel for
 * a QUANT8_SYMM_PER_CHANNEL filter, else the same for all; for op (an operation code) as
 * TensorFlow Lite computes them (eng_product_multiplier). */
void eng_conv_requant(int32_t op, const eng_tensor *in, const eng_tensor *filter,
                      const eng_tensor *out, uint32_t n, int32_t *mult, int *shift);
/* [*lo, *hi): the taps k of a window at origin whose origin + k * dilation lies in
 * [0, size), at most filter of them (an empty range when none). Padding contributes
 * nothing, so a walk simply skips the taps outside. */
void eng_conv_tap_span(int64_t origin, int32_t dilation, uint32_t filter, uint32_t size,
                       uint32_t *lo, uint32_t *hi);

/* Computes out (dims already set) for a FLOAT32 or 8-bit quantized input. */
schema_status eng_conv_run(eng_op_ctx *c, const eng_conv_geom *g, const eng_tensor *in,
                           const eng_tensor *filter, const eng_tensor *bias, eng_tensor *out,
                           int32_t act);
/* The transposed convolution (groups == 1, no dilation) of the same operands: input pixel
 * i spreads over output pixels i * stride - pad + k; pad_top and pad_left must not be
 * negative. g->in_* are the input's sizes, g->out_* the output's. */
schema_status eng_conv_transpose_run(eng_op_ctx *c, const eng_conv_geom *g, const eng_tensor *in,
                                     const eng_tensor *filter, const eng_tensor *bias,
                                     eng_tensor *out, int32_t act);

#endif

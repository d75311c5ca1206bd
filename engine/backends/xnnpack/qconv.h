/* SPDX-License-Identifier: Apache-2.0 */
/* qconv: 8-bit CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED bit for bit as the reference
 * kernels compute them, at fast-path speed.
 *
 * XNNPACK's 8-bit convolutions requantize their int32 accumulators with one rounding;
 * TensorFlow Lite's reference (and nnd's) rounds twice (SaturatingRoundingDoublingHighMul,
 * then RoundingDivideByPOT), and the two part by a step on about one output in 2^r (r the
 * right shift; docs/numerics.md). No multiplier or bias handed to XNNPACK can move that,
 * and this XNNPACK keeps its accumulators to itself, so these kernels compute the int32
 * sums of (x - zx) * (w - zw) plus bias themselves (AVX-512 VNNI dot products, the
 * depthwise taps in int32 lanes) and requantize them with the reference's two roundings,
 * vectorized (int64 products, one arithmetic shift).
 *
 * Contract: eng_qconv_create() packs the filter once for a convolution described by d
 * (NHWC; stored values, zero points and per-channel multipliers as eng_conv_requant gives
 * them) and returns NULL when these kernels do not take it: no AVX-512 VNNI on this CPU, a
 * multiplier of 1 or more (a left shift), a depth multiplier other than 1, groups, or a
 * window too large for the per-thread buffers. eng_qconv_run() then computes the whole
 * output from the input's stored values; sums wrap in int32 as the reference's do, so the
 * output equals the reference kernel's byte for byte. It reads only the input tensor's
 * bytes and writes only the output's and the scratch it is given, allocates nothing and runs on tp
 * (NULL: the calling thread). A created convolution is read-only: runs may overlap. */
#ifndef ENG_BACKENDS_XNNPACK_QCONV_H
#define ENG_BACKENDS_XNNPACK_QCONV_H

#include <pthreadpool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/backends/xnnpack/qconv_desc.h"

typedef struct eng_qconv eng_qconv;

/* One block from malloc (eng_footprint_add_block counts it); eng_qconv_free() frees it. */
eng_qconv *eng_qconv_create(const eng_qconv_desc *d);
/* Scratch a run needs: the im2col rows of a window that is not a plain 1x1 (0 for one). */
size_t eng_qconv_scratch_bytes(const eng_qconv *q);
/* flags: pthreadpool's (PTHREADPOOL_FLAG_YIELD_WORKERS on a plan's last step). */
void eng_qconv_run(const eng_qconv *q, const void *x, void *y, void *scratch, pthreadpool_t tp,
                   uint32_t flags);
void eng_qconv_free(eng_qconv *q);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_cases: random one-operation models (and a few chains) of every FLOAT32 operation
 * nnd-opencl runs, in every form the driver claims: both layouts, explicit padding and
 * padding schemes, strides, dilations, depth multipliers, fused activations,
 * broadcasting, negative axes, omitted optional inputs. Each is a valid NNAPI model
 * (the reference kernels must accept it). */
#ifndef TST_DRIVERS_OPENCL_CASES_H
#define TST_DRIVERS_OPENCL_CASES_H

#include "tests/drivers/opencl_models.h"

typedef struct oc_family {
    const char *name;
    void (*build)(om_model *m);
} oc_family;

extern const oc_family oc_families[];
extern const size_t oc_n_families;

/* A chain as one partition: CONV_2D, RELU, MAX_POOL_2D, RESHAPE, FULLY_CONNECTED,
 * TANH and SOFTMAX, with temporaries between. */
void oc_chain(om_model *m);
/* A transformer feed-forward block: FULLY_CONNECTED, HARD_SWISH, BATCH_MATMUL, ADD, MEAN,
 * SUB, MUL, TRANSPOSE. */
void oc_feed_forward(om_model *m);

#endif

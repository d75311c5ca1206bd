/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_models: models for the nnd-opencl tests, built once and run two ways: by the
 * engine's reference kernels in process (the oracle) and by the driver plugin through the
 * driver ABI (dlopen'd), as one partition.
 *
 * Contract: om_* build a model (operands, constants, operations; inputs get random values
 * in [-2, 2] from a fixed seed); om_reference() runs it on nnd-reference; om_driver_model()
 * describes it as the ABI does (constants' data point into the model, valid while it lives);
 * om_compare() returns the largest difference between two float outputs relative to
 * max(1, |reference|). */
#ifndef TST_DRIVERS_OPENCL_MODELS_H
#define TST_DRIVERS_OPENCL_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "nnd/driver.h"
#include "tests/support/mobilenet.h"

#define OM_MAX_OPERANDS 1024
#define OM_MAX_OPS      128
#define OM_MAX_OP_IN    16
#define OM_MAX_IO       8

typedef struct om_model {
    eng_operand_desc operands[OM_MAX_OPERANDS];
    uint32_t n_operands;
    uint8_t *values;
    size_t n_values, cap_values;
    eng_operation_desc ops[OM_MAX_OPS];
    uint32_t op_in[OM_MAX_OPS][OM_MAX_OP_IN], op_out[OM_MAX_OPS];
    uint32_t n_ops;
    uint32_t inputs[OM_MAX_IO], n_inputs, outputs[OM_MAX_IO], n_outputs;
    float *input_data[OM_MAX_IO];
    /* The ABI's view (om_driver_model). */
    nnd_driver_operand d_operands[OM_MAX_OPERANDS];
    nnd_driver_operation d_ops[OM_MAX_OPS];
    unsigned seed;
} om_model;

void om_init(om_model *m, unsigned seed);
void om_free(om_model *m);
uint32_t om_rand(om_model *m, uint32_t lo, uint32_t hi); /* inclusive */
size_t om_elems(const om_model *m, uint32_t operand);
/* A TENSOR_FLOAT32 input with random values. */
uint32_t om_input(om_model *m, uint32_t rank, const uint32_t *dims);
/* A tensor operand the model makes (a temporary; om_output() marks one an output). */
uint32_t om_tensor(om_model *m, int32_t type, uint32_t rank, const uint32_t *dims);
void om_output(om_model *m, uint32_t operand);
/* Constants: a float tensor (values given, or random in [-lim, lim] when data is NULL), an
 * INT32 tensor, scalars, and an omitted optional input. */
uint32_t om_const_f32(om_model *m, uint32_t rank, const uint32_t *dims, const float *data,
                      float lim);
uint32_t om_const_i32s(om_model *m, uint32_t rank, const uint32_t *dims, const int32_t *data);
uint32_t om_i32(om_model *m, int32_t v);
uint32_t om_f32(om_model *m, float v);
uint32_t om_bool(om_model *m, bool v);
uint32_t om_omitted(om_model *m, int32_t type);
void om_op(om_model *m, int32_t code, uint32_t n_in, const uint32_t *in, uint32_t out);

/* Runs m on the reference kernels into outs[i] (om_elems floats each); false on failure,
 * with err set. */
bool om_reference(om_model *m, float **outs, char *err, size_t errlen);
void om_driver_model(om_model *m, nnd_driver_model *d);
double om_compare(const float *got, const float *want, size_t n);
/* The bench's MobileNet (mobilenet.h) as a model of ours, each layer one operation, the
 * net's input image as the model's input. */
void om_mobilenet(om_model *m, const bench_net *net);

#endif

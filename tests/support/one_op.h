/* SPDX-License-Identifier: Apache-2.0 */
/* one_op: an engine model of one operation, built operand by operand, prepared and run in
 * this process (tests of single kernels: test_int8, test_float_order, test_kernel_bounds).
 *
 * Contract:
 * - one_op_start() clears m for operation `code`. Operands go in the operation's input
 *   order: one_op_in() a model input with its data (kept by pointer), one_op_constant()
 *   and its shorthands a CONSTANT_COPY value (copied), one_op_out() an output. A model too
 *   big for the fixed tables fails the test.
 * - one_op_run() prepares and runs the model with the engine as configured (set
 *   NND_REFERENCE_KERNELS first for the reference kernels) and copies output 0 into out
 *   (out_bytes, at least the output's size; other outputs go to scratch of 4096 bytes
 *   each); a failure to prepare or run fails the test, naming the operation and the
 *   engine's message.
 * - one_op_supported() asks the engine whether it supports the operation as built. */
#ifndef TESTS_SUPPORT_ONE_OP_H
#define TESTS_SUPPORT_ONE_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#define ONE_OP_MAX_OPERANDS 24
#define ONE_OP_MAX_INPUTS   8
#define ONE_OP_MAX_OUTPUTS  4
#define ONE_OP_MAX_VALUES   16384

typedef struct one_op {
    eng_operand_desc operands[ONE_OP_MAX_OPERANDS];
    uint32_t n_operands;
    uint8_t values[ONE_OP_MAX_VALUES];
    size_t n_values;
    uint32_t op_in[ONE_OP_MAX_OPERANDS], n_op_in, op_out[ONE_OP_MAX_OUTPUTS], n_op_out;
    uint32_t inputs[ONE_OP_MAX_INPUTS], n_inputs;
    const void *input_data[ONE_OP_MAX_INPUTS];
    int32_t code;
} one_op;

void one_op_start(one_op *m, int32_t code);
void one_op_in(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
               int32_t zero_point, const void *data);
void one_op_constant(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, const void *data,
                     size_t bytes);
void one_op_i32(one_op *m, int32_t v);
void one_op_f32(one_op *m, float v);
void one_op_bool(one_op *m, bool v);
void one_op_ints(one_op *m, uint32_t n, const int32_t *v);
/* An optional input left out (lifetime NO_VALUE). */
void one_op_omitted(one_op *m, int32_t type);
void one_op_out(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                int32_t zero_point);
void one_op_run(one_op *m, void *out, size_t out_bytes);
/* The model as the engine takes it, for a caller that prepares it itself; op is its one
 * operation and must live as long as the description. */
eng_model_desc one_op_desc(one_op *m, eng_operation_desc *op);
/* Whether the engine supports the operation as built (eng_supported_operations). */
bool one_op_supported(one_op *m);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* quant_table: 8-bit quantized elementwise functions of one input as lookup tables. Every
 * stored input value maps to one output value, so a kernel computes its function once
 * per possible input (256 values) and then maps each element through the table.
 *
 * Contract: the input's storage type fixes the stored range [qmin, qmax]: [0, 255] for
 * TENSOR_QUANT8_ASYMM, [-128, 127] for TENSOR_QUANT8_ASYMM_SIGNED; the builder fills
 * table[q - qmin] for every q in that range with the output's stored bits (a signed value
 * as its two's complement byte). eng_q8_table_run() runs on input 0 and output 0 of one
 * storage type; it never allocates or fails.
 */
#ifndef ENG_OPS_COMMON_QUANT_TABLE_H
#define ENG_OPS_COMMON_QUANT_TABLE_H

#include <stdint.h>

#include "engine/op.h"

typedef void (*eng_q8_table_fn)(const eng_op_ctx *c, int32_t qmin, int32_t qmax, uint8_t *table);

/* Builds the table with build() and maps every element of input 0 into output 0. */
schema_status eng_q8_table_run(eng_op_ctx *c, eng_q8_table_fn build);

#endif

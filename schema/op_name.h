/* SPDX-License-Identifier: Apache-2.0 */
/* op_name: operation names, for messages, logs and metrics.
 *
 * Contract: schema_operation_name() names a HAL operation code as NeuralNetworks.h spells it
 * (codes.h), OEM_OPERATION as "OEM_OPERATION", and an extension operation code (id << 16 |
 * code) by the row its plugin's loader installed ("com.example.fibonacci:FIBONACCI");
 * "UNKNOWN_OPERATION" otherwise. The extension loader installs a plugin's rows with
 * schema_op_names_install() when it publishes the plugin and removes them (rows NULL) before
 * freeing it; lookups read the rows alone, lock-free, and never call the loader. */
#ifndef SCHEMA_OP_NAME_H
#define SCHEMA_OP_NAME_H

#include <stdint.h>

#include "schema/operand_type.h"

const char *schema_operation_name(int32_t type);
/* The code of a base operation from its NeuralNetworks.h spelling ("CONV_2D"), -1 when none
 * is spelled so. */
int32_t schema_operation_code(const char *name);

/* One plugin's operation names: code is the full extension code. */
typedef struct schema_op_name_row {
    int32_t code;
    const char *name;
} schema_op_name_row;
typedef struct schema_op_name_rows {
    uint32_t n;
    const schema_op_name_row *rows;
} schema_op_name_rows;
void schema_op_names_install(uint16_t id, const schema_op_name_rows *rows);

#endif

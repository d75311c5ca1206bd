/* op_name: operation names, for messages, logs and metrics.
 *
 * Contract: nnd_operation_name() names a HAL operation code as NeuralNetworks.h spells it
 * (codes.h), OEM_OPERATION as "OEM_OPERATION", and an extension operation code (id << 16 |
 * code) by the row its plugin's loader installed ("com.example.fibonacci:FIBONACCI");
 * "UNKNOWN_OPERATION" otherwise. The extension loader installs a plugin's rows with
 * nnd_op_names_install() when it publishes the plugin and removes them (rows NULL) before
 * freeing it; lookups read the rows alone, lock-free, and never call the loader. */
#ifndef NND_OP_NAME_H
#define NND_OP_NAME_H

#include <stdint.h>

#include "operand_type.h"

const char *nnd_operation_name(int32_t type);

/* One plugin's operation names: code is the full extension code. */
typedef struct nnd_op_name_row {
    int32_t code;
    const char *name;
} nnd_op_name_row;
typedef struct nnd_op_name_rows {
    uint32_t n;
    const nnd_op_name_row *rows;
} nnd_op_name_rows;
void nnd_op_names_install(uint16_t id, const nnd_op_name_rows *rows);

#endif

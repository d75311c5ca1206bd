/* SPDX-License-Identifier: Apache-2.0 */
/* hal_names.c: the HAL names of operations (op_name.c's) and operand types. See
 * hal_names.h. */
#include "schema/hal_names.h"

#include <string.h>

#include "schema/codes.h"
#include "schema/op_name.h"

static const struct {
    const char *name;
    int32_t code;
    size_t size;
} operand_types[] = {
    {"FLOAT32", SCHEMA_FLOAT32, 4},
    {"INT32", SCHEMA_INT32, 4},
    {"UINT32", SCHEMA_UINT32, 4},
    {"TENSOR_FLOAT32", SCHEMA_TENSOR_FLOAT32, 4},
    {"TENSOR_INT32", SCHEMA_TENSOR_INT32, 4},
    {"TENSOR_QUANT8_ASYMM", SCHEMA_TENSOR_QUANT8_ASYMM, 1},
    {"BOOL", SCHEMA_BOOL, 1},
    {"TENSOR_QUANT16_SYMM", SCHEMA_TENSOR_QUANT16_SYMM, 2},
    {"TENSOR_FLOAT16", SCHEMA_TENSOR_FLOAT16, 2},
    {"TENSOR_BOOL8", SCHEMA_TENSOR_BOOL8, 1},
    {"FLOAT16", SCHEMA_FLOAT16, 2},
    {"TENSOR_QUANT8_SYMM_PER_CHANNEL", SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL, 1},
    {"TENSOR_QUANT16_ASYMM", SCHEMA_TENSOR_QUANT16_ASYMM, 2},
    {"TENSOR_QUANT8_SYMM", SCHEMA_TENSOR_QUANT8_SYMM, 1},
    {"TENSOR_QUANT8_ASYMM_SIGNED", SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, 1},
    {"SUBGRAPH", SCHEMA_SUBGRAPH_TYPE, 0},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Operations are named by op_name.c's table, itself generated from the codes; only the
 * base operations have a HAL spelling here. */
const char *schema_hal_operation_name(int32_t code) {
    return code >= 0 && code < SCHEMA_OP_COUNT ? schema_operation_name(code) : NULL;
}

int32_t schema_hal_operation_code(const char *name) {
    return schema_operation_code(name);
}

const char *schema_hal_type_name(int32_t code) {
    for (size_t i = 0; i < COUNT(operand_types); i++)
        if (operand_types[i].code == code) return operand_types[i].name;
    return NULL;
}

int32_t schema_hal_type_code(const char *name) {
    for (size_t i = 0; i < COUNT(operand_types); i++)
        if (!strcmp(operand_types[i].name, name)) return operand_types[i].code;
    return -1;
}

size_t schema_hal_element_size(int32_t type) {
    for (size_t i = 0; i < COUNT(operand_types); i++)
        if (operand_types[i].code == type) return operand_types[i].size;
    return 0;
}

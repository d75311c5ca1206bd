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
    {"FLOAT32", NND_FLOAT32, 4},
    {"INT32", NND_INT32, 4},
    {"UINT32", NND_UINT32, 4},
    {"TENSOR_FLOAT32", NND_TENSOR_FLOAT32, 4},
    {"TENSOR_INT32", NND_TENSOR_INT32, 4},
    {"TENSOR_QUANT8_ASYMM", NND_TENSOR_QUANT8_ASYMM, 1},
    {"BOOL", NND_BOOL, 1},
    {"TENSOR_QUANT16_SYMM", NND_TENSOR_QUANT16_SYMM, 2},
    {"TENSOR_FLOAT16", NND_TENSOR_FLOAT16, 2},
    {"TENSOR_BOOL8", NND_TENSOR_BOOL8, 1},
    {"FLOAT16", NND_FLOAT16, 2},
    {"TENSOR_QUANT8_SYMM_PER_CHANNEL", NND_TENSOR_QUANT8_SYMM_PER_CHANNEL, 1},
    {"TENSOR_QUANT16_ASYMM", NND_TENSOR_QUANT16_ASYMM, 2},
    {"TENSOR_QUANT8_SYMM", NND_TENSOR_QUANT8_SYMM, 1},
    {"TENSOR_QUANT8_ASYMM_SIGNED", NND_TENSOR_QUANT8_ASYMM_SIGNED, 1},
    {"SUBGRAPH", NND_SUBGRAPH_TYPE, 0},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Operations are named by op_name.c's table, itself generated from the codes; only the
 * base operations have a HAL spelling here. */
const char *schema_hal_operation_name(int32_t code) {
    return code >= 0 && code < NND_OP_COUNT ? schema_operation_name(code) : NULL;
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

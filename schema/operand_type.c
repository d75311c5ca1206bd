/* SPDX-License-Identifier: Apache-2.0 */
/* operand_type.c: the operand type table and plugins' installed types. See
 * operand_type.h. */
#include "schema/operand_type.h"

#include <stdatomic.h>

typedef struct type_info {
    const char *name;
    size_t size;
    bool tensor;
} type_info;

/* Plugins' operand types by plugin id, installed by the extension loader. */
static _Atomic(const schema_type_rows *) ext_types[SCHEMA_EXT_MAX_ID + 1];

void schema_types_install(uint16_t id, const schema_type_rows *rows) {
    if (id && id <= SCHEMA_EXT_MAX_ID) atomic_store(&ext_types[id], rows);
}

/* The installed row of an extension type code, or NULL. */
static const schema_type_row *ext_type(int32_t type) {
    uint32_t id = (uint32_t)type >> 16;
    const schema_type_rows *r = id && id <= SCHEMA_EXT_MAX_ID ? atomic_load(&ext_types[id]) : NULL;
    for (uint32_t i = 0; r && i < r->n; i++)
        if (r->rows[i].code == (uint16_t)type) return &r->rows[i];
    return NULL;
}

static const type_info types[] = {
    [SCHEMA_FLOAT32] = {"FLOAT32", 4, false},
    [SCHEMA_INT32] = {"INT32", 4, false},
    [SCHEMA_UINT32] = {"UINT32", 4, false},
    [SCHEMA_TENSOR_FLOAT32] = {"TENSOR_FLOAT32", 4, true},
    [SCHEMA_TENSOR_INT32] = {"TENSOR_INT32", 4, true},
    [SCHEMA_TENSOR_QUANT8_ASYMM] = {"TENSOR_QUANT8_ASYMM", 1, true},
    [SCHEMA_BOOL] = {"BOOL", 1, false},
    [SCHEMA_TENSOR_QUANT16_SYMM] = {"TENSOR_QUANT16_SYMM", 2, true},
    [SCHEMA_TENSOR_FLOAT16] = {"TENSOR_FLOAT16", 2, true},
    [SCHEMA_TENSOR_BOOL8] = {"TENSOR_BOOL8", 1, true},
    [SCHEMA_FLOAT16] = {"FLOAT16", 2, false},
    [SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL] = {"TENSOR_QUANT8_SYMM_PER_CHANNEL", 1, true},
    [SCHEMA_TENSOR_QUANT16_ASYMM] = {"TENSOR_QUANT16_ASYMM", 2, true},
    [SCHEMA_TENSOR_QUANT8_SYMM] = {"TENSOR_QUANT8_SYMM", 1, true},
    [SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED] = {"TENSOR_QUANT8_ASYMM_SIGNED", 1, true},
    [SCHEMA_SUBGRAPH_TYPE] = {"SUBGRAPH", 0, false},
};
#define N_TYPES (sizeof types / sizeof types[0])

static const type_info *info(int32_t type) {
    if (type >= 0 && (size_t)type < N_TYPES && types[type].name) return &types[type];
    return NULL;
}

/* Extension types (nonzero high bits) are answered from their installed rows. */
size_t schema_type_size(int32_t type) {
    const type_info *t = info(type);
    if (t) return t->size;
    const schema_type_row *x = ext_type(type);
    if (x) return x->size;
    return type == SCHEMA_TENSOR_OEM_BYTE ? 1 : 0;
}

bool schema_type_is_tensor(int32_t type) {
    const type_info *t = info(type);
    if (t) return t->tensor;
    const schema_type_row *x = ext_type(type);
    if (x) return x->tensor;
    return type == SCHEMA_TENSOR_OEM_BYTE;
}

const char *schema_type_name(int32_t type) {
    const type_info *t = info(type);
    if (t) return t->name;
    if (type == SCHEMA_OEM_SCALAR) return "OEM";
    if (type == SCHEMA_TENSOR_OEM_BYTE) return "TENSOR_OEM_BYTE";
    const schema_type_row *x = ext_type(type);
    return x ? x->name : "UNKNOWN_TYPE";
}

uint64_t schema_shape_bytes(int32_t type, uint32_t rank, const uint32_t *dims) {
    /* The product of the nonzero dimensions is bounded too: a tensor with one zero
     * dimension holds nothing, but kernels still step through the others, and steps
     * computed from dimensions that claim more than SCHEMA_MAX_TENSOR_BYTES would overflow. */
    uint64_t n = schema_type_size(type), claimed = n;
    for (uint32_t i = 0; i < rank; i++) {
        if (!dims[i]) {
            n = 0;
            continue;
        }
        if (claimed > SCHEMA_MAX_TENSOR_BYTES / dims[i]) return UINT64_MAX;
        claimed *= dims[i];
        n *= dims[i];
    }
    return n;
}

/* types.c: operand type and operation tables, names, status names. */
#include <string.h>

#include "engine.h"
#include <stdatomic.h>

#include "internal.h"
#include "op.h"

typedef struct type_info {
    const char *name;
    size_t size;
    bool tensor;
} type_info;

/* Plugins' operand types by plugin id, installed by the extension loader (op.h). */
static _Atomic(const nnd_type_rows *) ext_types[NND_EXT_MAX_ID + 1];

void nnd_types_install(uint16_t id, const nnd_type_rows *rows) {
    if (id && id <= NND_EXT_MAX_ID) atomic_store(&ext_types[id], rows);
}

/* The installed row of an extension type code, or NULL. */
static const nnd_type_row *ext_type(int32_t type) {
    uint32_t id = (uint32_t)type >> 16;
    const nnd_type_rows *r = id && id <= NND_EXT_MAX_ID ? atomic_load(&ext_types[id]) : NULL;
    for (uint32_t i = 0; r && i < r->n; i++)
        if (r->rows[i].code == (uint16_t)type) return &r->rows[i];
    return NULL;
}

static const type_info types[] = {
    [NND_FLOAT32] = {"FLOAT32", 4, false},
    [NND_INT32] = {"INT32", 4, false},
    [NND_UINT32] = {"UINT32", 4, false},
    [NND_TENSOR_FLOAT32] = {"TENSOR_FLOAT32", 4, true},
    [NND_TENSOR_INT32] = {"TENSOR_INT32", 4, true},
    [NND_TENSOR_QUANT8_ASYMM] = {"TENSOR_QUANT8_ASYMM", 1, true},
    [NND_BOOL] = {"BOOL", 1, false},
    [NND_TENSOR_QUANT16_SYMM] = {"TENSOR_QUANT16_SYMM", 2, true},
    [NND_TENSOR_FLOAT16] = {"TENSOR_FLOAT16", 2, true},
    [NND_TENSOR_BOOL8] = {"TENSOR_BOOL8", 1, true},
    [NND_FLOAT16] = {"FLOAT16", 2, false},
    [NND_TENSOR_QUANT8_SYMM_PER_CHANNEL] = {"TENSOR_QUANT8_SYMM_PER_CHANNEL", 1, true},
    [NND_TENSOR_QUANT16_ASYMM] = {"TENSOR_QUANT16_ASYMM", 2, true},
    [NND_TENSOR_QUANT8_SYMM] = {"TENSOR_QUANT8_SYMM", 1, true},
    [NND_TENSOR_QUANT8_ASYMM_SIGNED] = {"TENSOR_QUANT8_ASYMM_SIGNED", 1, true},
    [NND_SUBGRAPH_TYPE] = {"SUBGRAPH", 0, false},
};
#define N_TYPES (sizeof types / sizeof types[0])

static const char *const op_names[NND_OP_COUNT] = {
#define NND_OP_NAME(name, code) [code] = #name,
    NND_OPERATIONS(NND_OP_NAME)
#undef NND_OP_NAME
};

static const type_info *info(int32_t type) {
    if (type >= 0 && (size_t)type < N_TYPES && types[type].name) return &types[type];
    return NULL;
}

/* Extension types (nonzero high bits) are answered from their installed rows. */
size_t nnd_type_size(int32_t type) {
    const type_info *t = info(type);
    if (t) return t->size;
    const nnd_type_row *x = ext_type(type);
    if (x) return x->size;
    return type == NND_TENSOR_OEM_BYTE ? 1 : 0;
}

bool nnd_type_is_tensor(int32_t type) {
    const type_info *t = info(type);
    if (t) return t->tensor;
    const nnd_type_row *x = ext_type(type);
    if (x) return x->tensor;
    return type == NND_TENSOR_OEM_BYTE;
}

const char *nnd_type_name(int32_t type) {
    const type_info *t = info(type);
    if (t) return t->name;
    if (type == NND_OEM_SCALAR) return "OEM";
    if (type == NND_TENSOR_OEM_BYTE) return "TENSOR_OEM_BYTE";
    const nnd_type_row *x = ext_type(type);
    return x ? x->name : "UNKNOWN_TYPE";
}

const char *nnd_operation_name(int32_t type) {
    if (type >= 0 && type < NND_OP_COUNT) return op_names[type];
    if (type == NND_OP_OEM_OPERATION) return "OEM_OPERATION";
    const nnd_op_def *def = nnd_op_lookup(type);
    return def ? def->name : "UNKNOWN_OPERATION";
}

const char *nnd_status_name(nnd_status s) {
    switch (s) {
    case NND_OK: return "NONE";
    case NND_DEVICE_UNAVAILABLE: return "DEVICE_UNAVAILABLE";
    case NND_GENERAL_FAILURE: return "GENERAL_FAILURE";
    case NND_OUTPUT_INSUFFICIENT_SIZE: return "OUTPUT_INSUFFICIENT_SIZE";
    case NND_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case NND_MISSED_DEADLINE_TRANSIENT: return "MISSED_DEADLINE_TRANSIENT";
    case NND_MISSED_DEADLINE_PERSISTENT: return "MISSED_DEADLINE_PERSISTENT";
    case NND_RESOURCE_EXHAUSTED_TRANSIENT: return "RESOURCE_EXHAUSTED_TRANSIENT";
    case NND_RESOURCE_EXHAUSTED_PERSISTENT: return "RESOURCE_EXHAUSTED_PERSISTENT";
    case NND_UNSUPPORTED: return "UNSUPPORTED";
    }
    return "UNKNOWN_STATUS";
}

uint32_t nnd_supported_operation_count(void) {
    uint32_t n = 0;
    for (int32_t i = 0; i < NND_OP_COUNT; i++)
        if (nnd_op_lookup(i)) n++;
    return n;
}

uint64_t nnd_shape_bytes(int32_t type, uint32_t rank, const uint32_t *dims) {
    /* The product of the nonzero dimensions is bounded too: a tensor with one zero
     * dimension holds nothing, but kernels still step through the others, and steps
     * computed from dimensions that claim more than NND_MAX_TENSOR_BYTES would overflow. */
    uint64_t n = nnd_type_size(type), claimed = n;
    for (uint32_t i = 0; i < rank; i++) {
        if (!dims[i]) {
            n = 0;
            continue;
        }
        if (claimed > NND_MAX_TENSOR_BYTES / dims[i]) return UINT64_MAX;
        claimed *= dims[i];
        n *= dims[i];
    }
    return n;
}

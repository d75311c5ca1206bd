/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_types.c: operand type sizes (the schema's, operand_type.h), the NDK's argument checks on
 * operand types, and shapes merged. See ndk_types.h. */
#include "client/ndk_types.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schema/operand_type.h"

_Static_assert(NDK_NUM_OPERAND_TYPES == (int)SCHEMA_SUBGRAPH_TYPE + 1 &&
                   (int)ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED ==
                       (int)SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED &&
                   (int)NDK_OEM_SCALAR == (int)SCHEMA_OEM_SCALAR &&
                   (int)NDK_TENSOR_OEM_BYTE == (int)SCHEMA_TENSOR_OEM_BYTE,
               "the NDK's operand type codes are the schema's");

bool ndk_type_info(int32_t type, uint32_t *elem_size, bool *is_tensor) {
    if ((uint32_t)type >> 16) return ndk_extension_operand_info(type, is_tensor, elem_size);
    /* The NDK's type codes are the schema's (codes.h): sizes and kinds are its table's.
     * OEM types are deprecated, still valid. MODEL (SUBGRAPH) has no size. */
    if ((type < 0 || type >= NDK_NUM_OPERAND_TYPES) && type != NDK_OEM_SCALAR &&
        type != NDK_TENSOR_OEM_BYTE)
        return false;
    *elem_size = (uint32_t)schema_type_size(type);
    *is_tensor = schema_type_is_tensor(type);
    return true;
}

uint64_t ndk_type_bytes(int32_t type, uint32_t rank, const uint32_t *dims) {
    uint32_t size;
    bool tensor;
    if (!ndk_type_info(type, &size, &tensor)) return 0;
    if (!tensor) return size;
    if (rank == 0) return 0;
    uint64_t n = size;
    for (uint32_t i = 0; i < rank; i++) {
        if (dims[i] == 0) return 0;
        if (n > UINT64_MAX / dims[i]) return UINT64_MAX;
        n *= dims[i];
    }
    return n;
}

static bool no_quant(const ANeuralNetworksOperandType *t) {
    return t->scale == 0.f && t->zeroPoint == 0;
}

static bool quant(const ANeuralNetworksOperandType *t, int32_t zp_min, int32_t zp_max) {
    return t->scale > 0.f && isfinite(t->scale) && t->zeroPoint >= zp_min && t->zeroPoint <= zp_max;
}

int ndk_check_operand_type(const ANeuralNetworksOperandType *t, bool allow_partial) {
    if ((t->dimensionCount == 0) != (t->dimensions == NULL)) return ANEURALNETWORKS_BAD_DATA;
    uint32_t size;
    bool tensor;
    if (!ndk_type_info(t->type, &size, &tensor)) return ANEURALNETWORKS_BAD_DATA;
    if (!tensor) {
        if (t->dimensionCount) return ANEURALNETWORKS_BAD_DATA;
        /* OEM scalars historically carry quantization parameters. */
        return t->type == NDK_OEM_SCALAR || no_quant(t) ? ANEURALNETWORKS_NO_ERROR
                                                        : ANEURALNETWORKS_BAD_DATA;
    }
    if (!allow_partial) {
        if (!t->dimensionCount) return ANEURALNETWORKS_BAD_DATA;
        for (uint32_t i = 0; i < t->dimensionCount; i++)
            if (!t->dimensions[i]) return ANEURALNETWORKS_BAD_DATA;
    }
    /* The bytes of the dimensions known so far must fit 32 bits, as the runtime's
     * validateTensorDimensions has it. */
    uint64_t bytes = size;
    for (uint32_t i = 0; i < t->dimensionCount; i++)
        if (t->dimensions[i] && (bytes *= t->dimensions[i]) > UINT32_MAX)
            return ANEURALNETWORKS_BAD_DATA;
    bool ok;
    switch (t->type) {
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM: ok = quant(t, 0, 255); break;
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED: ok = quant(t, -128, 127); break;
    case ANEURALNETWORKS_TENSOR_QUANT16_ASYMM: ok = quant(t, 0, 65535); break;
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM:
    case ANEURALNETWORKS_TENSOR_QUANT16_SYMM: ok = quant(t, 0, 0); break;
    case ANEURALNETWORKS_TENSOR_INT32: /* the NDK tolerates quantized INT32 (bias) tensors */
    case NDK_TENSOR_OEM_BYTE: ok = true; break;
    default: ok = no_quant(t); break; /* floats, BOOL8, per-channel, extensions */
    }
    return ok ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_BAD_DATA;
}

bool ndk_valid_operation_type(int32_t type) {
    return (type >= 0 && type < NDK_NUM_OPERATION_TYPES) || type == NDK_OEM_OPERATION;
}

bool ndk_dims_combine(uint32_t *a_rank, uint32_t **a_dims, uint32_t b_rank,
                      const uint32_t *b_dims) {
    if (b_rank == 0) return true;
    if (*a_rank == 0) {
        uint32_t *d = malloc(sizeof *d * b_rank);
        if (!d) return false;
        memcpy(d, b_dims, sizeof *d * b_rank);
        free(*a_dims);
        *a_dims = d;
        *a_rank = b_rank;
        return true;
    }
    if (*a_rank != b_rank) return false;
    for (uint32_t i = 0; i < b_rank; i++)
        if ((*a_dims)[i] && b_dims[i] && (*a_dims)[i] != b_dims[i]) return false;
    for (uint32_t i = 0; i < b_rank; i++)
        if (!(*a_dims)[i]) (*a_dims)[i] = b_dims[i];
    return true;
}

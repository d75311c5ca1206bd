/* ndk_types.c: operand type sizes, the NDK's argument checks on operand types and
 * operation signatures (operand counts), and shapes merged. See ndk_types.h. */
#include "ndk_types.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct type_row {
    uint8_t size; /* bytes per element; 0 for MODEL */
    bool tensor;
} type_row;

static const type_row k_types[NDK_NUM_OPERAND_TYPES] = {
    [ANEURALNETWORKS_FLOAT32] = {4, false},
    [ANEURALNETWORKS_INT32] = {4, false},
    [ANEURALNETWORKS_UINT32] = {4, false},
    [ANEURALNETWORKS_TENSOR_FLOAT32] = {4, true},
    [ANEURALNETWORKS_TENSOR_INT32] = {4, true},
    [ANEURALNETWORKS_TENSOR_QUANT8_ASYMM] = {1, true},
    [ANEURALNETWORKS_BOOL] = {1, false},
    [ANEURALNETWORKS_TENSOR_QUANT16_SYMM] = {2, true},
    [ANEURALNETWORKS_TENSOR_FLOAT16] = {2, true},
    [ANEURALNETWORKS_TENSOR_BOOL8] = {1, true},
    [ANEURALNETWORKS_FLOAT16] = {2, false},
    [ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL] = {1, true},
    [ANEURALNETWORKS_TENSOR_QUANT16_ASYMM] = {2, true},
    [ANEURALNETWORKS_TENSOR_QUANT8_SYMM] = {1, true},
    [ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED] = {1, true},
    [ANEURALNETWORKS_MODEL] = {0, false},
};

bool ndk_type_info(int32_t type, uint32_t *elem_size, bool *is_tensor) {
    if (type >= 0 && type < NDK_NUM_OPERAND_TYPES) {
        *elem_size = k_types[type].size;
        *is_tensor = k_types[type].tensor;
        return true;
    }
    if (type == NDK_OEM_SCALAR || type == NDK_TENSOR_OEM_BYTE) { /* deprecated, still valid */
        *elem_size = type == NDK_OEM_SCALAR ? 0 : 1;
        *is_tensor = type == NDK_TENSOR_OEM_BYTE;
        return true;
    }
    if ((uint32_t)type >> 16) return ndk_extension_operand_info(type, is_tensor, elem_size);
    return false;
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

/* Operand counts per operation, across HAL versions: the fewest and most inputs and
 * outputs any version accepts. The daemon checks the full signature (types, values) when
 * the model is finished or compiled; this table only lets addOperation refuse counts no
 * version accepts, as the NDK does. ANY: no upper bound. */
#define ANY 0xffff
typedef struct op_counts {
    uint16_t min_in, max_in, min_out, max_out;
} op_counts;

static const op_counts k_ops[NDK_NUM_OPERATION_TYPES] = {
    [ANEURALNETWORKS_ADD] = {3, 3, 1, 1},
    [ANEURALNETWORKS_AVERAGE_POOL_2D] = {7, 11, 1, 1},
    [ANEURALNETWORKS_CONCATENATION] = {2, ANY, 1, 1},
    [ANEURALNETWORKS_CONV_2D] = {7, 13, 1, 1},
    [ANEURALNETWORKS_DEPTHWISE_CONV_2D] = {8, 14, 1, 1},
    [ANEURALNETWORKS_DEPTH_TO_SPACE] = {2, 3, 1, 1},
    [ANEURALNETWORKS_DEQUANTIZE] = {1, 1, 1, 1},
    [ANEURALNETWORKS_EMBEDDING_LOOKUP] = {2, 2, 1, 1},
    [ANEURALNETWORKS_FLOOR] = {1, 1, 1, 1},
    [ANEURALNETWORKS_FULLY_CONNECTED] = {4, 4, 1, 1},
    [ANEURALNETWORKS_HASHTABLE_LOOKUP] = {3, 3, 2, 2},
    [ANEURALNETWORKS_L2_NORMALIZATION] = {1, 2, 1, 1},
    [ANEURALNETWORKS_L2_POOL_2D] = {7, 11, 1, 1},
    [ANEURALNETWORKS_LOCAL_RESPONSE_NORMALIZATION] = {5, 6, 1, 1},
    [ANEURALNETWORKS_LOGISTIC] = {1, 1, 1, 1},
    [ANEURALNETWORKS_LSH_PROJECTION] = {4, 4, 1, 1},
    [ANEURALNETWORKS_LSTM] = {23, 27, 4, 4},
    [ANEURALNETWORKS_MAX_POOL_2D] = {7, 11, 1, 1},
    [ANEURALNETWORKS_MUL] = {3, 3, 1, 1},
    [ANEURALNETWORKS_RELU] = {1, 1, 1, 1},
    [ANEURALNETWORKS_RELU1] = {1, 1, 1, 1},
    [ANEURALNETWORKS_RELU6] = {1, 1, 1, 1},
    [ANEURALNETWORKS_RESHAPE] = {2, 2, 1, 1},
    [ANEURALNETWORKS_RESIZE_BILINEAR] = {3, 6, 1, 1},
    [ANEURALNETWORKS_RNN] = {6, 6, 2, 2},
    [ANEURALNETWORKS_SOFTMAX] = {2, 3, 1, 1},
    [ANEURALNETWORKS_SPACE_TO_DEPTH] = {2, 3, 1, 1},
    [ANEURALNETWORKS_SVDF] = {7, 7, 2, 2},
    [ANEURALNETWORKS_TANH] = {1, 1, 1, 1},
    [ANEURALNETWORKS_BATCH_TO_SPACE_ND] = {2, 3, 1, 1},
    [ANEURALNETWORKS_DIV] = {3, 3, 1, 1},
    [ANEURALNETWORKS_MEAN] = {3, 3, 1, 1},
    [ANEURALNETWORKS_PAD] = {2, 2, 1, 1},
    [ANEURALNETWORKS_SPACE_TO_BATCH_ND] = {3, 4, 1, 1},
    [ANEURALNETWORKS_SQUEEZE] = {2, 2, 1, 1},
    [ANEURALNETWORKS_STRIDED_SLICE] = {7, 7, 1, 1},
    [ANEURALNETWORKS_SUB] = {3, 3, 1, 1},
    [ANEURALNETWORKS_TRANSPOSE] = {2, 2, 1, 1},
    [ANEURALNETWORKS_ABS] = {1, 1, 1, 1},
    [ANEURALNETWORKS_ARGMAX] = {2, 2, 1, 1},
    [ANEURALNETWORKS_ARGMIN] = {2, 2, 1, 1},
    [ANEURALNETWORKS_AXIS_ALIGNED_BBOX_TRANSFORM] = {4, 4, 1, 1},
    [ANEURALNETWORKS_BIDIRECTIONAL_SEQUENCE_LSTM] = {61, 61, 1, 6},
    [ANEURALNETWORKS_BIDIRECTIONAL_SEQUENCE_RNN] = {15, 15, 1, 4},
    [ANEURALNETWORKS_BOX_WITH_NMS_LIMIT] = {9, 9, 4, 4},
    [ANEURALNETWORKS_CAST] = {1, 1, 1, 1},
    [ANEURALNETWORKS_CHANNEL_SHUFFLE] = {3, 3, 1, 1},
    [ANEURALNETWORKS_DETECTION_POSTPROCESSING] = {14, 14, 4, 4},
    [ANEURALNETWORKS_EQUAL] = {2, 2, 1, 1},
    [ANEURALNETWORKS_EXP] = {1, 1, 1, 1},
    [ANEURALNETWORKS_EXPAND_DIMS] = {2, 2, 1, 1},
    [ANEURALNETWORKS_GATHER] = {3, 3, 1, 1},
    [ANEURALNETWORKS_GENERATE_PROPOSALS] = {11, 11, 3, 3},
    [ANEURALNETWORKS_GREATER] = {2, 2, 1, 1},
    [ANEURALNETWORKS_GREATER_EQUAL] = {2, 2, 1, 1},
    [ANEURALNETWORKS_GROUPED_CONV_2D] = {9, 12, 1, 1},
    [ANEURALNETWORKS_HEATMAP_MAX_KEYPOINT] = {3, 3, 2, 2},
    [ANEURALNETWORKS_INSTANCE_NORMALIZATION] = {5, 5, 1, 1},
    [ANEURALNETWORKS_LESS] = {2, 2, 1, 1},
    [ANEURALNETWORKS_LESS_EQUAL] = {2, 2, 1, 1},
    [ANEURALNETWORKS_LOG] = {1, 1, 1, 1},
    [ANEURALNETWORKS_LOGICAL_AND] = {2, 2, 1, 1},
    [ANEURALNETWORKS_LOGICAL_NOT] = {1, 1, 1, 1},
    [ANEURALNETWORKS_LOGICAL_OR] = {2, 2, 1, 1},
    [ANEURALNETWORKS_LOG_SOFTMAX] = {3, 3, 1, 1},
    [ANEURALNETWORKS_MAXIMUM] = {2, 2, 1, 1},
    [ANEURALNETWORKS_MINIMUM] = {2, 2, 1, 1},
    [ANEURALNETWORKS_NEG] = {1, 1, 1, 1},
    [ANEURALNETWORKS_NOT_EQUAL] = {2, 2, 1, 1},
    [ANEURALNETWORKS_PAD_V2] = {3, 3, 1, 1},
    [ANEURALNETWORKS_POW] = {2, 2, 1, 1},
    [ANEURALNETWORKS_PRELU] = {2, 2, 1, 1},
    [ANEURALNETWORKS_QUANTIZE] = {1, 1, 1, 1},
    [ANEURALNETWORKS_QUANTIZED_16BIT_LSTM] = {15, 15, 2, 2},
    [ANEURALNETWORKS_RANDOM_MULTINOMIAL] = {3, 3, 1, 1},
    [ANEURALNETWORKS_REDUCE_ALL] = {3, 3, 1, 1},
    [ANEURALNETWORKS_REDUCE_ANY] = {3, 3, 1, 1},
    [ANEURALNETWORKS_REDUCE_MAX] = {3, 3, 1, 1},
    [ANEURALNETWORKS_REDUCE_MIN] = {3, 3, 1, 1},
    [ANEURALNETWORKS_REDUCE_PROD] = {3, 3, 1, 1},
    [ANEURALNETWORKS_REDUCE_SUM] = {3, 3, 1, 1},
    [ANEURALNETWORKS_ROI_ALIGN] = {10, 10, 1, 1},
    [ANEURALNETWORKS_ROI_POOLING] = {8, 8, 1, 1},
    [ANEURALNETWORKS_RSQRT] = {1, 1, 1, 1},
    [ANEURALNETWORKS_SELECT] = {3, 3, 1, 1},
    [ANEURALNETWORKS_SIN] = {1, 1, 1, 1},
    [ANEURALNETWORKS_SLICE] = {3, 3, 1, 1},
    [ANEURALNETWORKS_SPLIT] = {3, 3, 1, ANY},
    [ANEURALNETWORKS_SQRT] = {1, 1, 1, 1},
    [ANEURALNETWORKS_TILE] = {2, 2, 1, 1},
    [ANEURALNETWORKS_TOPK_V2] = {2, 2, 2, 2},
    [ANEURALNETWORKS_TRANSPOSE_CONV_2D] = {9, 11, 1, 1},
    [ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_LSTM] = {24, 28, 1, 3},
    [ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_RNN] = {7, 7, 1, 2},
    [ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR] = {4, 6, 1, 1},
    [ANEURALNETWORKS_QUANTIZED_LSTM] = {32, 32, 3, 3},
    [ANEURALNETWORKS_IF] = {3, ANY, 1, ANY},
    [ANEURALNETWORKS_WHILE] = {3, ANY, 1, ANY},
    [ANEURALNETWORKS_ELU] = {2, 2, 1, 1},
    [ANEURALNETWORKS_HARD_SWISH] = {1, 1, 1, 1},
    [ANEURALNETWORKS_FILL] = {2, 2, 1, 1},
    [ANEURALNETWORKS_RANK] = {1, 1, 1, 1},
};

int ndk_check_operation_counts(int32_t type, uint32_t n_in, uint32_t n_out) {
    if (type < 0 || type >= NDK_NUM_OPERATION_TYPES) return ANEURALNETWORKS_NO_ERROR;
    const op_counts *c = &k_ops[type];
    bool ok = n_in >= c->min_in && (c->max_in == ANY || n_in <= c->max_in) && n_out >= c->min_out &&
              (c->max_out == ANY || n_out <= c->max_out);
    return ok ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_BAD_DATA;
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

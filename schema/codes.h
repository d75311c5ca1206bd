/* SPDX-License-Identifier: Apache-2.0 */
/* codes: NN HAL operand types, operation types, lifetimes and status codes, with the
 * numeric values of the NNAPI NDK and HAL (they are the wire values too). */
#ifndef SCHEMA_CODES_H
#define SCHEMA_CODES_H

enum schema_operand_type {
    SCHEMA_FLOAT32 = 0,
    SCHEMA_INT32 = 1,
    SCHEMA_UINT32 = 2,
    SCHEMA_TENSOR_FLOAT32 = 3,
    SCHEMA_TENSOR_INT32 = 4,
    SCHEMA_TENSOR_QUANT8_ASYMM = 5,
    SCHEMA_BOOL = 6,
    SCHEMA_TENSOR_QUANT16_SYMM = 7,
    SCHEMA_TENSOR_FLOAT16 = 8,
    SCHEMA_TENSOR_BOOL8 = 9,
    SCHEMA_FLOAT16 = 10,
    SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL = 11,
    SCHEMA_TENSOR_QUANT16_ASYMM = 12,
    SCHEMA_TENSOR_QUANT8_SYMM = 13,
    SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED = 14,
    SCHEMA_SUBGRAPH_TYPE = 15,
    SCHEMA_OEM_SCALAR = 10000,
    SCHEMA_TENSOR_OEM_BYTE = 10001,
};

/* Every base operation as X(name, code), numbered as in NeuralNetworks.h: HAL 1.0 to 1.3
 * (0 to 101) and NNAPI feature levels 6 (102, 103) and 7 (104, 105). */
// clang-format off
#define SCHEMA_OPERATIONS(X) \
    X(ADD, 0) \
    X(AVERAGE_POOL_2D, 1) \
    X(CONCATENATION, 2) \
    X(CONV_2D, 3) \
    X(DEPTHWISE_CONV_2D, 4) \
    X(DEPTH_TO_SPACE, 5) \
    X(DEQUANTIZE, 6) \
    X(EMBEDDING_LOOKUP, 7) \
    X(FLOOR, 8) \
    X(FULLY_CONNECTED, 9) \
    X(HASHTABLE_LOOKUP, 10) \
    X(L2_NORMALIZATION, 11) \
    X(L2_POOL_2D, 12) \
    X(LOCAL_RESPONSE_NORMALIZATION, 13) \
    X(LOGISTIC, 14) \
    X(LSH_PROJECTION, 15) \
    X(LSTM, 16) \
    X(MAX_POOL_2D, 17) \
    X(MUL, 18) \
    X(RELU, 19) \
    X(RELU1, 20) \
    X(RELU6, 21) \
    X(RESHAPE, 22) \
    X(RESIZE_BILINEAR, 23) \
    X(RNN, 24) \
    X(SOFTMAX, 25) \
    X(SPACE_TO_DEPTH, 26) \
    X(SVDF, 27) \
    X(TANH, 28) \
    X(BATCH_TO_SPACE_ND, 29) \
    X(DIV, 30) \
    X(MEAN, 31) \
    X(PAD, 32) \
    X(SPACE_TO_BATCH_ND, 33) \
    X(SQUEEZE, 34) \
    X(STRIDED_SLICE, 35) \
    X(SUB, 36) \
    X(TRANSPOSE, 37) \
    X(ABS, 38) \
    X(ARGMAX, 39) \
    X(ARGMIN, 40) \
    X(AXIS_ALIGNED_BBOX_TRANSFORM, 41) \
    X(BIDIRECTIONAL_SEQUENCE_LSTM, 42) \
    X(BIDIRECTIONAL_SEQUENCE_RNN, 43) \
    X(BOX_WITH_NMS_LIMIT, 44) \
    X(CAST, 45) \
    X(CHANNEL_SHUFFLE, 46) \
    X(DETECTION_POSTPROCESSING, 47) \
    X(EQUAL, 48) \
    X(EXP, 49) \
    X(EXPAND_DIMS, 50) \
    X(GATHER, 51) \
    X(GENERATE_PROPOSALS, 52) \
    X(GREATER, 53) \
    X(GREATER_EQUAL, 54) \
    X(GROUPED_CONV_2D, 55) \
    X(HEATMAP_MAX_KEYPOINT, 56) \
    X(INSTANCE_NORMALIZATION, 57) \
    X(LESS, 58) \
    X(LESS_EQUAL, 59) \
    X(LOG, 60) \
    X(LOGICAL_AND, 61) \
    X(LOGICAL_NOT, 62) \
    X(LOGICAL_OR, 63) \
    X(LOG_SOFTMAX, 64) \
    X(MAXIMUM, 65) \
    X(MINIMUM, 66) \
    X(NEG, 67) \
    X(NOT_EQUAL, 68) \
    X(PAD_V2, 69) \
    X(POW, 70) \
    X(PRELU, 71) \
    X(QUANTIZE, 72) \
    X(QUANTIZED_16BIT_LSTM, 73) \
    X(RANDOM_MULTINOMIAL, 74) \
    X(REDUCE_ALL, 75) \
    X(REDUCE_ANY, 76) \
    X(REDUCE_MAX, 77) \
    X(REDUCE_MIN, 78) \
    X(REDUCE_PROD, 79) \
    X(REDUCE_SUM, 80) \
    X(ROI_ALIGN, 81) \
    X(ROI_POOLING, 82) \
    X(RSQRT, 83) \
    X(SELECT, 84) \
    X(SIN, 85) \
    X(SLICE, 86) \
    X(SPLIT, 87) \
    X(SQRT, 88) \
    X(TILE, 89) \
    X(TOPK_V2, 90) \
    X(TRANSPOSE_CONV_2D, 91) \
    X(UNIDIRECTIONAL_SEQUENCE_LSTM, 92) \
    X(UNIDIRECTIONAL_SEQUENCE_RNN, 93) \
    X(RESIZE_NEAREST_NEIGHBOR, 94) \
    X(QUANTIZED_LSTM, 95) \
    X(IF, 96) \
    X(WHILE, 97) \
    X(ELU, 98) \
    X(HARD_SWISH, 99) \
    X(FILL, 100) \
    X(RANK, 101) \
    X(BATCH_MATMUL, 102) \
    X(PACK, 103) \
    X(MIRROR_PAD, 104) \
    X(REVERSE, 105)
// clang-format on

/* The codes run from 0 without a gap, so the rows' count is one past the last code (the
 * engine's table, indexed by code, fails to compile otherwise). */
enum schema_operation_type {
#define SCHEMA_OP_ENUM(name, code) SCHEMA_OP_##name = code,
    SCHEMA_OPERATIONS(SCHEMA_OP_ENUM)
#undef SCHEMA_OP_ENUM
#define SCHEMA_OP_ONE(name, code) +1
        SCHEMA_OP_COUNT = 0 SCHEMA_OPERATIONS(SCHEMA_OP_ONE),
#undef SCHEMA_OP_ONE
    SCHEMA_OP_OEM_OPERATION = 10000,
};

/* Operand lifetimes, numbered as in HAL 1.3. */
enum schema_lifetime {
    SCHEMA_TEMPORARY = 0,
    SCHEMA_MODEL_INPUT = 1,
    SCHEMA_MODEL_OUTPUT = 2,
    SCHEMA_CONSTANT_COPY = 3,
    SCHEMA_CONSTANT_REFERENCE = 4,
    SCHEMA_NO_VALUE = 5,
    SCHEMA_SUBGRAPH = 6,
};

/* Status codes, numbered as the HAL's ErrorStatus (and the wire's). */
typedef enum schema_status {
    SCHEMA_OK = 0,
    SCHEMA_DEVICE_UNAVAILABLE = 1,
    SCHEMA_GENERAL_FAILURE = 2,
    SCHEMA_OUTPUT_INSUFFICIENT_SIZE = 3,
    SCHEMA_INVALID_ARGUMENT = 4,
    SCHEMA_MISSED_DEADLINE_TRANSIENT = 5,
    SCHEMA_MISSED_DEADLINE_PERSISTENT = 6,
    SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT = 7,
    SCHEMA_RESOURCE_EXHAUSTED_PERSISTENT = 8,
    /* Engine-internal: a valid operation this engine has no kernel for. Reported to
     * clients as INVALID_ARGUMENT with an "unsupported" message. */
    SCHEMA_UNSUPPORTED = 100,
} schema_status;

/* Fused activation codes. */
enum {
    SCHEMA_FUSED_NONE = 0,
    SCHEMA_FUSED_RELU = 1,
    SCHEMA_FUSED_RELU1 = 2,
    SCHEMA_FUSED_RELU6 = 3
};
/* Implicit padding schemes. */
enum { SCHEMA_PADDING_SAME = 1, SCHEMA_PADDING_VALID = 2 };

#endif

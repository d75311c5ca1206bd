/* SPDX-License-Identifier: Apache-2.0 */
/* registry.c: the operation table. Adding an operation is one kernel file defining its
 * eng_op_def and one row here. */
#include <stdatomic.h>

#include "engine/op.h"

extern const eng_op_def eng_op_add, eng_op_mul, eng_op_sub, eng_op_div;
extern const eng_op_def eng_op_abs, eng_op_exp, eng_op_log, eng_op_neg, eng_op_rsqrt, eng_op_sin,
    eng_op_sqrt, eng_op_logical_not, eng_op_cast, eng_op_quantize, eng_op_equal, eng_op_not_equal,
    eng_op_greater, eng_op_greater_equal, eng_op_less, eng_op_less_equal, eng_op_logical_and,
    eng_op_logical_or, eng_op_maximum, eng_op_minimum, eng_op_pow, eng_op_prelu, eng_op_select;
extern const eng_op_def eng_op_conv_2d, eng_op_depthwise_conv_2d, eng_op_fully_connected,
    eng_op_grouped_conv_2d, eng_op_transpose_conv_2d, eng_op_quantized_16bit_lstm;
extern const eng_op_def eng_op_average_pool_2d, eng_op_max_pool_2d, eng_op_l2_pool_2d,
    eng_op_softmax, eng_op_log_softmax, eng_op_l2_normalization,
    eng_op_local_response_normalization, eng_op_instance_normalization;
extern const eng_op_def eng_op_relu, eng_op_relu1, eng_op_relu6, eng_op_logistic, eng_op_tanh,
    eng_op_floor, eng_op_dequantize, eng_op_reshape, eng_op_depth_to_space, eng_op_space_to_depth,
    eng_op_concatenation, eng_op_embedding_lookup, eng_op_hashtable_lookup, eng_op_resize_bilinear,
    eng_op_resize_nearest_neighbor;

extern const eng_op_def eng_op_lstm, eng_op_unidirectional_sequence_lstm,
    eng_op_bidirectional_sequence_lstm, eng_op_rnn, eng_op_unidirectional_sequence_rnn,
    eng_op_bidirectional_sequence_rnn, eng_op_svdf, eng_op_lsh_projection;
extern const eng_op_def eng_op_batch_to_space_nd, eng_op_space_to_batch_nd, eng_op_pad,
    eng_op_pad_v2, eng_op_squeeze, eng_op_expand_dims, eng_op_strided_slice, eng_op_slice,
    eng_op_transpose, eng_op_tile, eng_op_gather, eng_op_split, eng_op_channel_shuffle;
extern const eng_op_def eng_op_mean, eng_op_reduce_sum, eng_op_reduce_prod, eng_op_reduce_max,
    eng_op_reduce_min, eng_op_reduce_all, eng_op_reduce_any, eng_op_argmax, eng_op_argmin,
    eng_op_topk_v2;
extern const eng_op_def eng_op_axis_aligned_bbox_transform, eng_op_box_with_nms_limit,
    eng_op_generate_proposals, eng_op_detection_postprocessing, eng_op_roi_align,
    eng_op_roi_pooling, eng_op_heatmap_max_keypoint, eng_op_random_multinomial;
extern const eng_op_def eng_op_rank, eng_op_fill, eng_op_elu, eng_op_hard_swish;
extern const eng_op_def eng_op_pack, eng_op_mirror_pad, eng_op_reverse, eng_op_batch_matmul;
extern const eng_op_def eng_op_quantized_lstm;

extern const eng_op_def eng_op_if, eng_op_while;

static const eng_op_def *const table[NND_OP_COUNT] = {
    [NND_OP_IF] = &eng_op_if,
    [NND_OP_WHILE] = &eng_op_while,
    [NND_OP_AXIS_ALIGNED_BBOX_TRANSFORM] = &eng_op_axis_aligned_bbox_transform,
    [NND_OP_BOX_WITH_NMS_LIMIT] = &eng_op_box_with_nms_limit,
    [NND_OP_GENERATE_PROPOSALS] = &eng_op_generate_proposals,
    [NND_OP_DETECTION_POSTPROCESSING] = &eng_op_detection_postprocessing,
    [NND_OP_ROI_ALIGN] = &eng_op_roi_align,
    [NND_OP_ROI_POOLING] = &eng_op_roi_pooling,
    [NND_OP_HEATMAP_MAX_KEYPOINT] = &eng_op_heatmap_max_keypoint,
    [NND_OP_RANDOM_MULTINOMIAL] = &eng_op_random_multinomial,
    [NND_OP_BATCH_TO_SPACE_ND] = &eng_op_batch_to_space_nd,
    [NND_OP_SPACE_TO_BATCH_ND] = &eng_op_space_to_batch_nd,
    [NND_OP_PAD] = &eng_op_pad,
    [NND_OP_PAD_V2] = &eng_op_pad_v2,
    [NND_OP_SQUEEZE] = &eng_op_squeeze,
    [NND_OP_EXPAND_DIMS] = &eng_op_expand_dims,
    [NND_OP_STRIDED_SLICE] = &eng_op_strided_slice,
    [NND_OP_SLICE] = &eng_op_slice,
    [NND_OP_TRANSPOSE] = &eng_op_transpose,
    [NND_OP_TILE] = &eng_op_tile,
    [NND_OP_GATHER] = &eng_op_gather,
    [NND_OP_SPLIT] = &eng_op_split,
    [NND_OP_CHANNEL_SHUFFLE] = &eng_op_channel_shuffle,
    [NND_OP_MEAN] = &eng_op_mean,
    [NND_OP_REDUCE_SUM] = &eng_op_reduce_sum,
    [NND_OP_REDUCE_PROD] = &eng_op_reduce_prod,
    [NND_OP_REDUCE_MAX] = &eng_op_reduce_max,
    [NND_OP_REDUCE_MIN] = &eng_op_reduce_min,
    [NND_OP_REDUCE_ALL] = &eng_op_reduce_all,
    [NND_OP_REDUCE_ANY] = &eng_op_reduce_any,
    [NND_OP_ARGMAX] = &eng_op_argmax,
    [NND_OP_ARGMIN] = &eng_op_argmin,
    [NND_OP_TOPK_V2] = &eng_op_topk_v2,
    [NND_OP_LSTM] = &eng_op_lstm,
    [NND_OP_UNIDIRECTIONAL_SEQUENCE_LSTM] = &eng_op_unidirectional_sequence_lstm,
    [NND_OP_BIDIRECTIONAL_SEQUENCE_LSTM] = &eng_op_bidirectional_sequence_lstm,
    [NND_OP_RNN] = &eng_op_rnn,
    [NND_OP_UNIDIRECTIONAL_SEQUENCE_RNN] = &eng_op_unidirectional_sequence_rnn,
    [NND_OP_BIDIRECTIONAL_SEQUENCE_RNN] = &eng_op_bidirectional_sequence_rnn,
    [NND_OP_SVDF] = &eng_op_svdf,
    [NND_OP_LSH_PROJECTION] = &eng_op_lsh_projection,
    [NND_OP_RELU] = &eng_op_relu,
    [NND_OP_RELU1] = &eng_op_relu1,
    [NND_OP_RELU6] = &eng_op_relu6,
    [NND_OP_LOGISTIC] = &eng_op_logistic,
    [NND_OP_TANH] = &eng_op_tanh,
    [NND_OP_FLOOR] = &eng_op_floor,
    [NND_OP_DEQUANTIZE] = &eng_op_dequantize,
    [NND_OP_RESHAPE] = &eng_op_reshape,
    [NND_OP_DEPTH_TO_SPACE] = &eng_op_depth_to_space,
    [NND_OP_SPACE_TO_DEPTH] = &eng_op_space_to_depth,
    [NND_OP_CONCATENATION] = &eng_op_concatenation,
    [NND_OP_EMBEDDING_LOOKUP] = &eng_op_embedding_lookup,
    [NND_OP_HASHTABLE_LOOKUP] = &eng_op_hashtable_lookup,
    [NND_OP_RESIZE_BILINEAR] = &eng_op_resize_bilinear,
    [NND_OP_RESIZE_NEAREST_NEIGHBOR] = &eng_op_resize_nearest_neighbor,
    [NND_OP_ADD] = &eng_op_add,
    [NND_OP_MUL] = &eng_op_mul,
    [NND_OP_SUB] = &eng_op_sub,
    [NND_OP_DIV] = &eng_op_div,
    [NND_OP_ABS] = &eng_op_abs,
    [NND_OP_EXP] = &eng_op_exp,
    [NND_OP_LOG] = &eng_op_log,
    [NND_OP_NEG] = &eng_op_neg,
    [NND_OP_RSQRT] = &eng_op_rsqrt,
    [NND_OP_SIN] = &eng_op_sin,
    [NND_OP_SQRT] = &eng_op_sqrt,
    [NND_OP_LOGICAL_NOT] = &eng_op_logical_not,
    [NND_OP_CAST] = &eng_op_cast,
    [NND_OP_QUANTIZE] = &eng_op_quantize,
    [NND_OP_EQUAL] = &eng_op_equal,
    [NND_OP_NOT_EQUAL] = &eng_op_not_equal,
    [NND_OP_GREATER] = &eng_op_greater,
    [NND_OP_GREATER_EQUAL] = &eng_op_greater_equal,
    [NND_OP_LESS] = &eng_op_less,
    [NND_OP_LESS_EQUAL] = &eng_op_less_equal,
    [NND_OP_LOGICAL_AND] = &eng_op_logical_and,
    [NND_OP_LOGICAL_OR] = &eng_op_logical_or,
    [NND_OP_MAXIMUM] = &eng_op_maximum,
    [NND_OP_MINIMUM] = &eng_op_minimum,
    [NND_OP_POW] = &eng_op_pow,
    [NND_OP_PRELU] = &eng_op_prelu,
    [NND_OP_SELECT] = &eng_op_select,
    [NND_OP_CONV_2D] = &eng_op_conv_2d,
    [NND_OP_DEPTHWISE_CONV_2D] = &eng_op_depthwise_conv_2d,
    [NND_OP_GROUPED_CONV_2D] = &eng_op_grouped_conv_2d,
    [NND_OP_TRANSPOSE_CONV_2D] = &eng_op_transpose_conv_2d,
    [NND_OP_QUANTIZED_16BIT_LSTM] = &eng_op_quantized_16bit_lstm,
    [NND_OP_FULLY_CONNECTED] = &eng_op_fully_connected,
    [NND_OP_AVERAGE_POOL_2D] = &eng_op_average_pool_2d,
    [NND_OP_MAX_POOL_2D] = &eng_op_max_pool_2d,
    [NND_OP_L2_POOL_2D] = &eng_op_l2_pool_2d,
    [NND_OP_SOFTMAX] = &eng_op_softmax,
    [NND_OP_LOG_SOFTMAX] = &eng_op_log_softmax,
    [NND_OP_L2_NORMALIZATION] = &eng_op_l2_normalization,
    [NND_OP_LOCAL_RESPONSE_NORMALIZATION] = &eng_op_local_response_normalization,
    [NND_OP_INSTANCE_NORMALIZATION] = &eng_op_instance_normalization,
    [NND_OP_QUANTIZED_LSTM] = &eng_op_quantized_lstm,
    [NND_OP_RANK] = &eng_op_rank,
    [NND_OP_FILL] = &eng_op_fill,
    [NND_OP_ELU] = &eng_op_elu,
    [NND_OP_HARD_SWISH] = &eng_op_hard_swish,
    [NND_OP_BATCH_MATMUL] = &eng_op_batch_matmul,
    [NND_OP_PACK] = &eng_op_pack,
    [NND_OP_MIRROR_PAD] = &eng_op_mirror_pad,
    [NND_OP_REVERSE] = &eng_op_reverse,
};

/* Plugins' operations by plugin id, and a plugin's OEM_OPERATION, installed by the extension
 * loader (op.h). */
static _Atomic(const eng_op_rows *) ext_ops[NND_EXT_MAX_ID + 1];
static _Atomic(const eng_op_def *) oem_op;

void eng_ops_install(uint16_t id, const eng_op_rows *rows) {
    if (id && id <= NND_EXT_MAX_ID) atomic_store(&ext_ops[id], rows);
}

void eng_ops_install_oem(const eng_op_def *def) {
    atomic_store(&oem_op, def);
}

const eng_op_def *eng_op_lookup(int32_t code) {
    if (code >= 0 && code < NND_OP_COUNT) return table[code];
    if (code == NND_OP_OEM_OPERATION) return atomic_load(&oem_op);
    uint32_t id = (uint32_t)code >> 16;
    const eng_op_rows *r = id && id <= NND_EXT_MAX_ID ? atomic_load(&ext_ops[id]) : NULL;
    for (uint32_t i = 0; r && i < r->n; i++)
        if (r->defs[i]->code == code) return r->defs[i];
    return NULL;
}

uint32_t eng_supported_operation_count(void) {
    uint32_t n = 0;
    for (int32_t i = 0; i < NND_OP_COUNT; i++)
        if (table[i]) n++;
    return n;
}

#define BIT(j)        ((uint64_t)1 << (j))
#define CELL_OPTIONAL (BIT(1) | BIT(5) | BIT(9) | BIT(10) | BIT(11) | BIT(12) | BIT(16) | BIT(17))

/* The optional inputs of each operation, as its kernels take them (eng_has_input()): the
 * engine refuses NO_VALUE everywhere else. Extension operations see omitted inputs
 * themselves (nnd_ext_operand.omitted). */
uint64_t eng_op_optional_inputs(int32_t code) {
    switch (code) {
    case NND_OP_LSTM: /* CIFG, peephole, projection; layer normalization (1.2) */
        return CELL_OPTIONAL | BIT(23) | BIT(24) | BIT(25) | BIT(26);
    case NND_OP_UNIDIRECTIONAL_SEQUENCE_LSTM:
        return CELL_OPTIONAL | BIT(24) | BIT(25) | BIT(26) | BIT(27);
    case NND_OP_BIDIRECTIONAL_SEQUENCE_LSTM: {
        uint64_t m = CELL_OPTIONAL | CELL_OPTIONAL << 17; /* the backward cell is 17 later */
        for (int j = 39; j <= 47; j++)                    /* auxiliary input and its weights */
            m |= BIT(j);
        for (int j = 53; j <= 60; j++) /* layer normalization */
            m |= BIT(j);
        return m;
    }
    case NND_OP_QUANTIZED_LSTM: /* CIFG, peephole, input bias, projection, layer normalization */
        return BIT(1) | BIT(5) | BIT(9) | BIT(10) | BIT(11) | BIT(12) | BIT(16) | BIT(17) |
               BIT(20) | BIT(21) | BIT(22) | BIT(23);
    case NND_OP_BIDIRECTIONAL_SEQUENCE_RNN: return BIT(9) | BIT(10) | BIT(11); /* auxiliary */
    case NND_OP_SVDF: return BIT(3);                                           /* bias */
    case NND_OP_LSH_PROJECTION: return BIT(2);                                 /* weight */
    case NND_OP_SQUEEZE:                                                       /* axes */
    case NND_OP_TRANSPOSE: return BIT(1);                                      /* permutation */
    case NND_OP_BATCH_TO_SPACE_ND:
    case NND_OP_DEPTH_TO_SPACE:
    case NND_OP_SPACE_TO_DEPTH: return BIT(2); /* layout */
    case NND_OP_SPACE_TO_BATCH_ND: return BIT(3);
    case NND_OP_SOFTMAX: return BIT(2);                      /* axis */
    case NND_OP_L2_NORMALIZATION: return BIT(1);             /* axis */
    case NND_OP_LOCAL_RESPONSE_NORMALIZATION: return BIT(5); /* axis */
    case NND_OP_RESIZE_BILINEAR:
    case NND_OP_RESIZE_NEAREST_NEIGHBOR: return BIT(3) | BIT(4) | BIT(5); /* flags */
    default: return code >= 0 && code < NND_OP_COUNT ? 0 : UINT64_MAX;
    }
}

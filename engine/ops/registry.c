/* registry.c: the operation table. Adding an operation is one kernel file defining its
 * nnd_op_def and one row here. */
#include <stdatomic.h>

#include "op.h"

extern const nnd_op_def nnd_op_add, nnd_op_mul, nnd_op_sub, nnd_op_div;
extern const nnd_op_def nnd_op_abs, nnd_op_exp, nnd_op_log, nnd_op_neg, nnd_op_rsqrt, nnd_op_sin,
    nnd_op_sqrt, nnd_op_logical_not, nnd_op_cast, nnd_op_quantize, nnd_op_equal, nnd_op_not_equal,
    nnd_op_greater, nnd_op_greater_equal, nnd_op_less, nnd_op_less_equal, nnd_op_logical_and,
    nnd_op_logical_or, nnd_op_maximum, nnd_op_minimum, nnd_op_pow, nnd_op_prelu, nnd_op_select;
extern const nnd_op_def nnd_op_conv_2d, nnd_op_depthwise_conv_2d, nnd_op_fully_connected,
    nnd_op_grouped_conv_2d, nnd_op_transpose_conv_2d, nnd_op_quantized_16bit_lstm;
extern const nnd_op_def nnd_op_average_pool_2d, nnd_op_max_pool_2d, nnd_op_l2_pool_2d,
    nnd_op_softmax, nnd_op_log_softmax, nnd_op_l2_normalization,
    nnd_op_local_response_normalization, nnd_op_instance_normalization;
extern const nnd_op_def nnd_op_relu, nnd_op_relu1, nnd_op_relu6, nnd_op_logistic, nnd_op_tanh,
    nnd_op_floor, nnd_op_dequantize, nnd_op_reshape, nnd_op_depth_to_space, nnd_op_space_to_depth,
    nnd_op_concatenation, nnd_op_embedding_lookup, nnd_op_hashtable_lookup, nnd_op_resize_bilinear,
    nnd_op_resize_nearest_neighbor;

extern const nnd_op_def nnd_op_lstm, nnd_op_unidirectional_sequence_lstm,
    nnd_op_bidirectional_sequence_lstm, nnd_op_rnn, nnd_op_unidirectional_sequence_rnn,
    nnd_op_bidirectional_sequence_rnn, nnd_op_svdf, nnd_op_lsh_projection;
extern const nnd_op_def nnd_op_batch_to_space_nd, nnd_op_space_to_batch_nd, nnd_op_pad,
    nnd_op_pad_v2, nnd_op_squeeze, nnd_op_expand_dims, nnd_op_strided_slice, nnd_op_slice,
    nnd_op_transpose, nnd_op_tile, nnd_op_gather, nnd_op_split, nnd_op_channel_shuffle;
extern const nnd_op_def nnd_op_mean, nnd_op_reduce_sum, nnd_op_reduce_prod, nnd_op_reduce_max,
    nnd_op_reduce_min, nnd_op_reduce_all, nnd_op_reduce_any, nnd_op_argmax, nnd_op_argmin,
    nnd_op_topk_v2;
extern const nnd_op_def nnd_op_axis_aligned_bbox_transform, nnd_op_box_with_nms_limit,
    nnd_op_generate_proposals, nnd_op_detection_postprocessing, nnd_op_roi_align,
    nnd_op_roi_pooling, nnd_op_heatmap_max_keypoint, nnd_op_random_multinomial;
extern const nnd_op_def nnd_op_rank, nnd_op_fill, nnd_op_elu, nnd_op_hard_swish;
extern const nnd_op_def nnd_op_pack, nnd_op_mirror_pad, nnd_op_reverse, nnd_op_batch_matmul;
extern const nnd_op_def nnd_op_quantized_lstm;

extern const nnd_op_def nnd_op_if, nnd_op_while;

static const nnd_op_def *const table[NND_OP_COUNT] = {
    [NND_OP_IF] = &nnd_op_if,
    [NND_OP_WHILE] = &nnd_op_while,
    [NND_OP_AXIS_ALIGNED_BBOX_TRANSFORM] = &nnd_op_axis_aligned_bbox_transform,
    [NND_OP_BOX_WITH_NMS_LIMIT] = &nnd_op_box_with_nms_limit,
    [NND_OP_GENERATE_PROPOSALS] = &nnd_op_generate_proposals,
    [NND_OP_DETECTION_POSTPROCESSING] = &nnd_op_detection_postprocessing,
    [NND_OP_ROI_ALIGN] = &nnd_op_roi_align,
    [NND_OP_ROI_POOLING] = &nnd_op_roi_pooling,
    [NND_OP_HEATMAP_MAX_KEYPOINT] = &nnd_op_heatmap_max_keypoint,
    [NND_OP_RANDOM_MULTINOMIAL] = &nnd_op_random_multinomial,
    [NND_OP_BATCH_TO_SPACE_ND] = &nnd_op_batch_to_space_nd,
    [NND_OP_SPACE_TO_BATCH_ND] = &nnd_op_space_to_batch_nd,
    [NND_OP_PAD] = &nnd_op_pad,
    [NND_OP_PAD_V2] = &nnd_op_pad_v2,
    [NND_OP_SQUEEZE] = &nnd_op_squeeze,
    [NND_OP_EXPAND_DIMS] = &nnd_op_expand_dims,
    [NND_OP_STRIDED_SLICE] = &nnd_op_strided_slice,
    [NND_OP_SLICE] = &nnd_op_slice,
    [NND_OP_TRANSPOSE] = &nnd_op_transpose,
    [NND_OP_TILE] = &nnd_op_tile,
    [NND_OP_GATHER] = &nnd_op_gather,
    [NND_OP_SPLIT] = &nnd_op_split,
    [NND_OP_CHANNEL_SHUFFLE] = &nnd_op_channel_shuffle,
    [NND_OP_MEAN] = &nnd_op_mean,
    [NND_OP_REDUCE_SUM] = &nnd_op_reduce_sum,
    [NND_OP_REDUCE_PROD] = &nnd_op_reduce_prod,
    [NND_OP_REDUCE_MAX] = &nnd_op_reduce_max,
    [NND_OP_REDUCE_MIN] = &nnd_op_reduce_min,
    [NND_OP_REDUCE_ALL] = &nnd_op_reduce_all,
    [NND_OP_REDUCE_ANY] = &nnd_op_reduce_any,
    [NND_OP_ARGMAX] = &nnd_op_argmax,
    [NND_OP_ARGMIN] = &nnd_op_argmin,
    [NND_OP_TOPK_V2] = &nnd_op_topk_v2,
    [NND_OP_LSTM] = &nnd_op_lstm,
    [NND_OP_UNIDIRECTIONAL_SEQUENCE_LSTM] = &nnd_op_unidirectional_sequence_lstm,
    [NND_OP_BIDIRECTIONAL_SEQUENCE_LSTM] = &nnd_op_bidirectional_sequence_lstm,
    [NND_OP_RNN] = &nnd_op_rnn,
    [NND_OP_UNIDIRECTIONAL_SEQUENCE_RNN] = &nnd_op_unidirectional_sequence_rnn,
    [NND_OP_BIDIRECTIONAL_SEQUENCE_RNN] = &nnd_op_bidirectional_sequence_rnn,
    [NND_OP_SVDF] = &nnd_op_svdf,
    [NND_OP_LSH_PROJECTION] = &nnd_op_lsh_projection,
    [NND_OP_RELU] = &nnd_op_relu,
    [NND_OP_RELU1] = &nnd_op_relu1,
    [NND_OP_RELU6] = &nnd_op_relu6,
    [NND_OP_LOGISTIC] = &nnd_op_logistic,
    [NND_OP_TANH] = &nnd_op_tanh,
    [NND_OP_FLOOR] = &nnd_op_floor,
    [NND_OP_DEQUANTIZE] = &nnd_op_dequantize,
    [NND_OP_RESHAPE] = &nnd_op_reshape,
    [NND_OP_DEPTH_TO_SPACE] = &nnd_op_depth_to_space,
    [NND_OP_SPACE_TO_DEPTH] = &nnd_op_space_to_depth,
    [NND_OP_CONCATENATION] = &nnd_op_concatenation,
    [NND_OP_EMBEDDING_LOOKUP] = &nnd_op_embedding_lookup,
    [NND_OP_HASHTABLE_LOOKUP] = &nnd_op_hashtable_lookup,
    [NND_OP_RESIZE_BILINEAR] = &nnd_op_resize_bilinear,
    [NND_OP_RESIZE_NEAREST_NEIGHBOR] = &nnd_op_resize_nearest_neighbor,
    [NND_OP_ADD] = &nnd_op_add,
    [NND_OP_MUL] = &nnd_op_mul,
    [NND_OP_SUB] = &nnd_op_sub,
    [NND_OP_DIV] = &nnd_op_div,
    [NND_OP_ABS] = &nnd_op_abs,
    [NND_OP_EXP] = &nnd_op_exp,
    [NND_OP_LOG] = &nnd_op_log,
    [NND_OP_NEG] = &nnd_op_neg,
    [NND_OP_RSQRT] = &nnd_op_rsqrt,
    [NND_OP_SIN] = &nnd_op_sin,
    [NND_OP_SQRT] = &nnd_op_sqrt,
    [NND_OP_LOGICAL_NOT] = &nnd_op_logical_not,
    [NND_OP_CAST] = &nnd_op_cast,
    [NND_OP_QUANTIZE] = &nnd_op_quantize,
    [NND_OP_EQUAL] = &nnd_op_equal,
    [NND_OP_NOT_EQUAL] = &nnd_op_not_equal,
    [NND_OP_GREATER] = &nnd_op_greater,
    [NND_OP_GREATER_EQUAL] = &nnd_op_greater_equal,
    [NND_OP_LESS] = &nnd_op_less,
    [NND_OP_LESS_EQUAL] = &nnd_op_less_equal,
    [NND_OP_LOGICAL_AND] = &nnd_op_logical_and,
    [NND_OP_LOGICAL_OR] = &nnd_op_logical_or,
    [NND_OP_MAXIMUM] = &nnd_op_maximum,
    [NND_OP_MINIMUM] = &nnd_op_minimum,
    [NND_OP_POW] = &nnd_op_pow,
    [NND_OP_PRELU] = &nnd_op_prelu,
    [NND_OP_SELECT] = &nnd_op_select,
    [NND_OP_CONV_2D] = &nnd_op_conv_2d,
    [NND_OP_DEPTHWISE_CONV_2D] = &nnd_op_depthwise_conv_2d,
    [NND_OP_GROUPED_CONV_2D] = &nnd_op_grouped_conv_2d,
    [NND_OP_TRANSPOSE_CONV_2D] = &nnd_op_transpose_conv_2d,
    [NND_OP_QUANTIZED_16BIT_LSTM] = &nnd_op_quantized_16bit_lstm,
    [NND_OP_FULLY_CONNECTED] = &nnd_op_fully_connected,
    [NND_OP_AVERAGE_POOL_2D] = &nnd_op_average_pool_2d,
    [NND_OP_MAX_POOL_2D] = &nnd_op_max_pool_2d,
    [NND_OP_L2_POOL_2D] = &nnd_op_l2_pool_2d,
    [NND_OP_SOFTMAX] = &nnd_op_softmax,
    [NND_OP_LOG_SOFTMAX] = &nnd_op_log_softmax,
    [NND_OP_L2_NORMALIZATION] = &nnd_op_l2_normalization,
    [NND_OP_LOCAL_RESPONSE_NORMALIZATION] = &nnd_op_local_response_normalization,
    [NND_OP_INSTANCE_NORMALIZATION] = &nnd_op_instance_normalization,
    [NND_OP_QUANTIZED_LSTM] = &nnd_op_quantized_lstm,
    [NND_OP_RANK] = &nnd_op_rank,
    [NND_OP_FILL] = &nnd_op_fill,
    [NND_OP_ELU] = &nnd_op_elu,
    [NND_OP_HARD_SWISH] = &nnd_op_hard_swish,
    [NND_OP_BATCH_MATMUL] = &nnd_op_batch_matmul,
    [NND_OP_PACK] = &nnd_op_pack,
    [NND_OP_MIRROR_PAD] = &nnd_op_mirror_pad,
    [NND_OP_REVERSE] = &nnd_op_reverse,
};

/* Plugins' operations by plugin id, and a plugin's OEM_OPERATION, installed by the extension
 * loader (op.h). */
static _Atomic(const nnd_op_rows *) ext_ops[NND_EXT_MAX_ID + 1];
static _Atomic(const nnd_op_def *) oem_op;

void nnd_ops_install(uint16_t id, const nnd_op_rows *rows) {
    if (id && id <= NND_EXT_MAX_ID) atomic_store(&ext_ops[id], rows);
}

void nnd_ops_install_oem(const nnd_op_def *def) {
    atomic_store(&oem_op, def);
}

const nnd_op_def *nnd_op_lookup(int32_t code) {
    if (code >= 0 && code < NND_OP_COUNT) return table[code];
    if (code == NND_OP_OEM_OPERATION) return atomic_load(&oem_op);
    uint32_t id = (uint32_t)code >> 16;
    const nnd_op_rows *r = id && id <= NND_EXT_MAX_ID ? atomic_load(&ext_ops[id]) : NULL;
    for (uint32_t i = 0; r && i < r->n; i++)
        if (r->defs[i]->code == code) return r->defs[i];
    return NULL;
}

uint32_t nnd_supported_operation_count(void) {
    uint32_t n = 0;
    for (int32_t i = 0; i < NND_OP_COUNT; i++)
        if (table[i]) n++;
    return n;
}

nnd_op_fn nnd_op_kernel(const nnd_op_def *def, int32_t type) {
    for (int i = 0; i < NND_MAX_KERNELS && def->kernels[i].run; i++)
        if (def->kernels[i].type == type || def->kernels[i].type == NND_KERNEL_ANY_TYPE)
            return def->kernels[i].run;
    return NULL;
}

#define BIT(j)        ((uint64_t)1 << (j))
#define CELL_OPTIONAL (BIT(1) | BIT(5) | BIT(9) | BIT(10) | BIT(11) | BIT(12) | BIT(16) | BIT(17))

/* The optional inputs of each operation, as its kernels take them (nnd_has_input()): the
 * engine refuses NO_VALUE everywhere else. Extension operations see omitted inputs
 * themselves (nnd_ext_operand.omitted). */
uint64_t nnd_op_optional_inputs(int32_t code) {
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

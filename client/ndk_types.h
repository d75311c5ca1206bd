/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_types: operand types of the NDK layer: element sizes, value sizes, the NDK's checks
 * of an ANeuralNetworksOperandType, valid operation codes, and shapes merged from two
 * sources (operation signatures are the engine's: ndk_signature.h).
 *
 * Contract: pure functions of their arguments, except that an extension operand type is
 * looked up in the daemon's extension list (ndk_shared.h). */
#ifndef CLI_NDK_TYPES_H
#define CLI_NDK_TYPES_H

#include "client/ndk_shared.h"

/* Bytes of one element (0: unknown type); *is_tensor tells tensors from scalars. Extension
 * types are looked up through the daemon's extension list. */
NDK_HIDDEN bool ndk_type_info(int32_t type, uint32_t *elem_size, bool *is_tensor);
/* Byte size of a value of this type and shape: 0 when a tensor's shape is not fully
 * known, UINT64_MAX when it overflows. */
NDK_HIDDEN uint64_t ndk_type_bytes(int32_t type, uint32_t rank, const uint32_t *dims);
/* The NDK's checks of an ANeuralNetworksOperandType (dimensions, quantization, and a byte
 * size, over the dimensions known, within 32 bits). */
NDK_HIDDEN int ndk_check_operand_type(const ANeuralNetworksOperandType *t, bool allow_partial);
NDK_HIDDEN bool ndk_valid_operation_type(int32_t type);
/* Merges dimensions b into a (rank 0: unknown; a dimension 0: unknown), a's array
 * replaced when a had none; false when they contradict each other (or memory runs out). */
NDK_HIDDEN bool ndk_dims_combine(uint32_t *a_rank, uint32_t **a_dims, uint32_t b_rank,
                                 const uint32_t *b_dims);

#endif

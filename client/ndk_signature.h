/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_signature: an operation's signature judged as ANeuralNetworksModel_addOperation adds
 * it, by the engine's own rules (engine.h, eng_validate_operation: the check() of the
 * operation's row, engine/ops/op_def.h, linked without its kernels), not by a copy of them.
 *
 * Contract: ndk_signature_check() looks at the operation's operands as the model declares
 * them so far (types, quantization, dimensions; values are not looked at, as the NNAPI
 * runtime does not at this point), and for IF and WHILE at the inputs and outputs of the
 * models their SUBGRAPH operands reference. Only the model's rules apply: what a driver
 * judges (quantization relations, constant values) waits for prepare (docs/nnapi-rules.md).
 * Returns BAD_DATA for a signature the engine calls invalid, NO_ERROR otherwise: also for
 * operations the engine does not judge (extensions, OEM_OPERATION, codes without a registry
 * row) and for valid ones it has no kernel for, which the daemon reports unsupported later.
 * On BAD_DATA, err (may be NULL) says why. */
#ifndef CLI_NDK_SIGNATURE_H
#define CLI_NDK_SIGNATURE_H

#include "client/ndk_shared.h"

NDK_HIDDEN int ndk_signature_check(const ANeuralNetworksModel *m, int32_t type, uint32_t n_in,
                                   const uint32_t *in, uint32_t n_out, const uint32_t *out,
                                   char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_model: ANeuralNetworksModel (struct in ndk_shared.h) as compilations, executions and
 * memory descriptors use it: its inputs and outputs, and its wire form.
 *
 * Contract:
 * - ndk_model_input()/ndk_model_output() are the operand behind input or output i of a
 *   model; i must be in range.
 * - ndk_model_wire() makes the wire form of a model, every model it references as a
 *   further subgraph, with the fds of every memory pool alongside (borrowed from the
 *   memories, which the models keep alive). Returns an NDK code; everything it allocates
 *   is freed by ndk_wire_free(), on failure already.
 */
#ifndef CLI_NDK_MODEL_H
#define CLI_NDK_MODEL_H

#include "client/ndk_shared.h"

/* A model in wire form with its pool fds (borrowed from the memories). */
typedef struct ndk_wire {
    Nnd__Model *model;
    int *fds;
    size_t n_fds;
    bool has_extensions;
    void **allocs; /* everything the wire form owns */
    size_t n_allocs, cap_allocs;
} ndk_wire;

NDK_HIDDEN int ndk_model_wire(const ANeuralNetworksModel *m, ndk_wire *w);
NDK_HIDDEN void ndk_wire_free(ndk_wire *w);
NDK_HIDDEN const ndk_operand *ndk_model_input(const ANeuralNetworksModel *m, uint32_t i);
NDK_HIDDEN const ndk_operand *ndk_model_output(const ANeuralNetworksModel *m, uint32_t i);

#endif
